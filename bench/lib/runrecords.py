"""Reading a run directory: its manifest, its records, and the figures
that summaries, comparisons and plots are made of.

A record file is records/<point-id>.r<k>.json, one harness run each.
"""

import csv
import errno
import io
import json
import math
import os
import re
import stat
import tempfile

import units
import clocks
import welch

def open_regular(path, **kw):
    """open(path) for reading, refusing what is not a regular file (a FIFO
    named like a record would hang the read for ever, a device would be
    read without end): OSError naming it, as an unreadable file gives."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a directory" if stat.S_ISDIR(st.st_mode) else \
                "a socket" if stat.S_ISSOCK(st.st_mode) else "a device or other special file"
            raise OSError(errno.EINVAL, "not a regular file (%s); not read" % kind, path)
        os.set_blocking(fd, True)
        return os.fdopen(fd, **kw)
    except BaseException:
        os.close(fd)
        raise


RECORD_RE = re.compile(r"^(?P<point>.+)\.r(?P<repeat>[0-9]+)\.json$")

# The main figures: (short name, dotted key in the record, unit, label).
# Units: "bytes", "ns", "s", "1/s", and "time": a time in the record's own
# unit under its own clock (results.fault_cost.unit / environment.time_unit:
# instructions under the guest's instruction clock, ns otherwise; clocks.py).
# A record without a key simply has no value for that figure (e.g.
# ops_per_s without a workload; fc_* in records older than schema 5).
METRICS = [
    ("pt_meminfo", "results.pagetables.meminfo_delta_bytes", "bytes", "page tables, PageTables delta (meminfo)"),
    ("pt_vmpte", "results.pagetables.vmpte_sum_bytes", "bytes", "page tables, sum of VmPTE"),
    ("pt_per_worker", "results.pagetables.region_bytes_per_worker", "bytes", "region page tables per worker"),
    ("fc_p50", "results.fault_cost.faults.p50", "time", "cost of one real fault p50"),
    ("fc_p99", "results.fault_cost.faults.p99", "time", "cost of one real fault p99"),
    ("fc_p999", "results.fault_cost.faults.p999", "time", "cost of one real fault p99.9"),
    ("nf_p50", "results.fault_cost.no_fault_touches.p50", "time", "a touch without a fault p50"),
    ("fault_p50", "results.fault_latency_ns.p50", "time", "first-touch latency p50"),
    ("fault_p99", "results.fault_latency_ns.p99", "time", "first-touch latency p99"),
    ("fault_p999", "results.fault_latency_ns.p999", "time", "first-touch latency p99.9"),
    ("attach_s", "results.time_s.attach", "s", "attach time per worker (mean)"),
    ("touch_s", "results.time_s.touch", "s", "touch time"),
    ("total_s", "results.time_s.total", "s", "total wall time"),
    ("ops_per_s", "results.workload.ops_per_s", "1/s", "workload operations per second"),
]
METRIC_BY_NAME = {m[0]: m for m in METRICS}

# Figures compared between runs by bench/compare.
COMPARE_METRICS = ["pt_meminfo", "pt_vmpte", "fc_p50", "fc_p99", "fc_p999", "fault_p50", "fault_p99", "fault_p999"]


lookup = clocks.lookup  # record['a']['b'] for 'a.b'; None when any part is missing


def number(value):
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return value
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def per_fault(record, key):
    """A per-fault figure of a record (results.faults.mean_ns_per_fault,
    pages_per_fault), None when the record has none or took no fault (it
    then says 0, which is no time per fault). fault_latency_ns is a
    first-touch latency, not this: a touch of a page an earlier fault
    mapped (a large folio of the page cache) takes no fault."""
    faults = (number(lookup(record, "results.faults.minflt")) or 0) + \
        (number(lookup(record, "results.faults.majflt")) or 0)
    v = number(lookup(record, key))
    # A time or page count per fault is above zero and finite; anything else
    # is no figure (a hand-edited or damaged record).
    return v if faults > 0 and v is not None and math.isfinite(v) and v > 0 else None


def flatten(record, prefix=""):
    """{'a': {'b': 1}} -> {'a.b': 1}; lists become JSON text."""
    out = {}
    for key, value in record.items():
        name = prefix + key
        if isinstance(value, dict):
            out.update(flatten(value, name + "."))
        elif isinstance(value, list):
            out[name] = json.dumps(value, separators=(",", ":"))
        else:
            out[name] = value
    return out


def write_atomic(path, text):
    """path holds text, whole or as before: written to a new temporary file
    (made with O_EXCL: never a file or link someone put there) and renamed."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".", prefix=os.path.basename(path) + ".tmp.")
    try:
        os.fchmod(fd, 0o644)
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.rename(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def append_regular(path, text):
    """Append text to the regular file path (created if missing), never
    through a symbolic link and never blocking on a FIFO: OSError naming
    what is there instead."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        kind = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode) else \
            "a directory" if stat.S_ISDIR(st.st_mode) else "a special file"
        raise OSError(errno.EINVAL, "%s, not a regular file; not written" % kind, path)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file; not written", path)
        os.set_blocking(fd, True)
        os.write(fd, text.encode())
    finally:
        os.close(fd)


_CONTROL = {c: "\\x%02x" % c for c in list(range(0x20)) + [0x7f] if c not in (0x0a, 0x09)}


def printable(text):
    """text without a terminal's control sequences: bytes below 0x20 (but
    newline and tab) and 0x7f as \\xNN. Records, specs and arguments are
    anyone's; what they say must not drive the reader's terminal."""
    return str(text).translate(_CONTROL)


class _Printable:
    def __init__(self, stream):
        self._stream = stream

    def write(self, text):
        return self._stream.write(printable(text))

    def __getattr__(self, name):
        return getattr(self._stream, name)


def safe_stdio():
    """sys.stdout and sys.stderr through printable() from here on."""
    import sys
    if not isinstance(sys.stdout, _Printable):
        sys.stdout = _Printable(sys.stdout)
    if not isinstance(sys.stderr, _Printable):
        sys.stderr = _Printable(sys.stderr)


def oom_shield():
    """The runner (root only) out of the OOM killer's reach, as the harness
    parent is: killed, it would leave a run directory half done and its
    harness orphaned. Its children start back at 0 (oom_unshield, before
    exec): the harness lowers itself again; QEMU and the workers are the
    OOM killer's to choose from. True when it took."""
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("-1000")
        return True
    except OSError:
        return False


def oom_unshield():
    """In a child before exec (preexec_fn): back to the default 0."""
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("0")
    except OSError:
        pass


def run_failure(record):
    """Why a record's run measured nothing (results.run_failed, schema 8;
    before it, no worker measured), else None."""
    res = record.get("results")
    if not isinstance(res, dict):
        return None
    if res.get("run_failed") is True:
        return str(res.get("failure") or "the run failed (results.run_failed)")
    if res.get("workers_measured") == 0:
        return "no worker was measured (results.workers_measured 0)"
    return None


class Run:
    """A run directory read back: manifest, points, and records."""

    def __init__(self, path):
        self.path = path
        manifest_path = os.path.join(path, "manifest.json")
        try:
            with open_regular(manifest_path) as f:
                self.manifest = json.load(f)
        except OSError as e:
            raise SystemExit("%s: not a run directory (no readable manifest.json: %s)" % (path, e.strerror))
        except ValueError as e:
            raise SystemExit("%s: manifest.json is not valid JSON: %s" % (path, e))
        if not isinstance(self.manifest, dict) or not isinstance(self.manifest.get("points", []), list) or \
                not all(isinstance(p, dict) and isinstance(p.get("id"), str) for p in self.manifest.get("points", [])):
            raise SystemExit("%s: manifest.json is not a sweep manifest (no list of points with ids)" % path)
        self.points = self.manifest.get("points", [])
        self.point_by_id = {p["id"]: p for p in self.points}
        self.records = {}  # point id -> list of (repeat, record)
        self.failed_records = {}  # point id -> list of (repeat, why): records of runs that measured nothing
        rec_dir = os.path.join(path, "records")
        for name in sorted(os.listdir(rec_dir)) if os.path.isdir(rec_dir) else []:
            m = RECORD_RE.match(name)
            if not m:
                continue
            try:
                with open_regular(os.path.join(rec_dir, name)) as f:
                    record = json.load(f)
            except (OSError, ValueError) as e:
                why = e.strerror if isinstance(e, OSError) and e.strerror else e
                raise SystemExit("%s: unreadable record: %s" % (os.path.join(rec_dir, name), why))
            if not isinstance(record, dict):
                raise SystemExit("%s: not a run record (a JSON object)" % os.path.join(rec_dir, name))
            why = run_failure(record)
            if why:
                # Measured nothing: listed as failed, never in a figure.
                self.failed_records.setdefault(m.group("point"), []).append((int(m.group("repeat")), why))
                continue
            self.records.setdefault(m.group("point"), []).append((int(m.group("repeat")), record))
        for reps in self.records.values():
            reps.sort(key=lambda r: r[0])

    @property
    def name(self):
        return os.path.basename(os.path.normpath(self.path))

    def point_ids(self):
        """Points in manifest order, then any record-only ones."""
        ids = [p["id"] for p in self.points]
        return ids + sorted(set(self.records) - set(ids))

    def values(self, point_id, metric):
        key = METRIC_BY_NAME[metric][1]
        out = []
        for _, record in self.records.get(point_id, []):
            if key.startswith("results.fault_cost.") and \
                    not number(lookup(record, key.rsplit(".", 1)[0] + ".count")):
                continue  # an empty histogram (no fault, or no touch without one) has no percentile
            v = number(lookup(record, key))
            if v is not None:
                out.append(v)
        return out

    def clock(self, point_id):
        """(clock, unit) of a point's records (clocks.py); mixed clocks
        joined with '+'."""
        recs = [r for _, r in self.records.get(point_id, [])]
        cl = sorted({clocks.clock(r) for r in recs}) or ["?"]
        un = sorted({clocks.unit(r) for r in recs}) or ["?"]
        return "+".join(cl), "+".join(un)

    def environment(self):
        """Environment of the first record (kernel, platform, cpu...)."""
        for reps in self.records.values():
            for _, record in reps:
                env = record.get("environment")
                if isinstance(env, dict):
                    return env
        return {}


def records_csv(run):
    """All records flattened, one row each, with point id and repeat first."""
    rows, keys = [], set()
    for pid in run.point_ids():
        for repeat, record in run.records.get(pid, []):
            flat = flatten(record)
            keys.update(flat)
            rows.append((pid, repeat, flat))
    header = ["point_id", "repeat"] + sorted(keys)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for pid, repeat, flat in rows:
        w.writerow([pid, repeat] + ["" if flat.get(k) is None else flat.get(k) for k in header[2:]])
    return buf.getvalue()


def spread(values):
    """median, min, max, q1, q3 of a list (None for an empty list)."""
    if not values:
        return None
    s = sorted(values)
    half = len(s) // 2
    lower, upper = s[:half], s[half + (len(s) % 2):]
    return {
        "n": len(s),
        "median": welch.median(s),
        "min": s[0],
        "max": s[-1],
        "q1": welch.median(lower) if lower else s[0],
        "q3": welch.median(upper) if upper else s[-1],
    }


def human_time(value, tunit):
    """A time in a record's unit: 4,383 instr (instructions) or 830 ns."""
    if value is None:
        return "-"
    if tunit == "instructions":
        v = float(value)
        if abs(v) < 1e7:
            return "{:,.0f} instr".format(v)
        if abs(v) < 1e9:
            return "%.4g M instr" % (v / 1e6)
        return "%.4g G instr" % (v / 1e9)
    if tunit == "ns":
        return human(value, "ns")
    return "%g %s" % (value, tunit)


def human(value, unit):
    """A figure with a readable unit: 1.5 MiB, 830 ns, 2.31 s (bytes as
    the binary prints them: units.format_bytes)."""
    if value is None:
        return "-"
    if unit == "bytes":
        return units.format_bytes(value)
    if unit == "ns":
        v = float(value)
        if abs(v) < 1e3:
            return "%.0f ns" % v
        if abs(v) < 1e6:
            return "%.4g us" % (v / 1e3)
        return "%.4g ms" % (v / 1e6)
    if unit == "s":
        return "%.3g s" % value
    if unit == "1/s":
        return "%.4g/s" % value
    return "%g" % value


def human_range(lo, hi, like, unit):
    """'2.1-3.9' in the unit human() picks for `like` (no unit repeated)."""
    text = human(like, unit)
    number, _, suffix = text.partition(" ")
    if not suffix or unit == "1/s":
        return "%s-%s" % (human(lo, unit), human(hi, unit))
    scale = float(like) / float(number) if float(number) else 1.0

    def short(v):
        return "%.0f" % v if abs(v) >= 100 else "%.3g" % v
    return "%s-%s" % (short(lo / scale), short(hi / scale))


SUMMARY_TEXT_METRICS = ["pt_meminfo", "pt_vmpte", "pt_per_worker", "fc_p50", "fc_p99", "fc_p999", "nf_p50",
                        "fault_p50", "fault_p99", "total_s"]


def summary_csv(run):
    header = ["point_id", "platform", "backend", "page", "workers", "size_bytes", "workload", "write",
              "repeats", "clock", "time_unit"]
    for name, _, unit, _ in METRICS:
        header += ["%s_median" % name, "%s_min" % name, "%s_max" % name, "%s_q1" % name, "%s_q3" % name]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for pid in run.point_ids():
        if pid not in run.records:
            continue
        p = run.point_by_id.get(pid, {})
        row = [pid, p.get("platform", ""), p.get("backend", ""), p.get("page", ""), p.get("workers", ""),
               p.get("size_bytes", ""), p.get("workload", ""), p.get("write", ""), len(run.records[pid])]
        row += list(run.clock(pid))
        for name, _, _, _ in METRICS:
            s = spread(run.values(pid, name))
            row += ["", "", "", "", ""] if s is None else [s["median"], s["min"], s["max"], s["q1"], s["q3"]]
        w.writerow(row)
    return buf.getvalue()


SHORT_TEXT_METRICS = ["pt_meminfo", "pt_vmpte", "pt_per_worker", "fc_p50", "fc_p99", "nf_p50"]


def summary_text(run, short=False):
    """A fixed-width table: per point the median of each main figure,
    with [min-max] over repeats when they differ (not when short)."""
    metrics = SHORT_TEXT_METRICS if short else SUMMARY_TEXT_METRICS
    cols = ["point", "n", "clock"] + [METRIC_BY_NAME[m][0] for m in metrics]
    rows = []
    seen = {}
    for pid in run.point_ids():
        if pid not in run.records:
            continue
        clock, tunit = run.clock(pid)
        seen.setdefault((clock, tunit), 0)
        seen[(clock, tunit)] += 1
        row = [pid, str(len(run.records[pid])), clock]
        for m in metrics:
            unit = METRIC_BY_NAME[m][2]
            if unit == "time":
                unit = tunit if tunit in ("ns", "instructions") else "?"
            s = spread(run.values(pid, m))
            if s is not None and unit == "s" and tunit == "instructions":
                # time_s under the instruction clock: a guest second is 10^9 instructions.
                row.append("%.3g G instr" % s["median"])
            elif s is None:
                row.append("-")
            elif unit == "instructions":
                spread_text = "" if short or s["n"] < 2 or s["min"] == s["max"] else \
                    " [{:,.0f}-{:,.0f}]".format(s["min"], s["max"])
                row.append(human_time(s["median"], unit) + spread_text)
            elif not short and s["n"] > 1 and s["median"] and (s["max"] - s["min"]) / abs(s["median"]) >= 0.01:
                row.append("%s [%s]" % (human(s["median"], unit), human_range(s["min"], s["max"], s["median"],
                                                                              unit)))
            else:
                row.append(human(s["median"], unit))
        rows.append(row)
    env = run.environment()
    head = ["run %s" % run.name,
            "platform %s, kernel %s, cpu %s" % (env.get("platform", "?"), env.get("kernel", "?"),
                                                env.get("cpu", "?")),
            ("median over n repeats (summary.txt adds the spread)" if short else
             "median over n repeats, [min-max] over the repeats in the median's unit when they differ by 1% "
             "or more (summary.csv: min, max, quartiles)"),
            "pt_meminfo = PageTables delta (/proc/meminfo, each page-table page once) from all workers attached "
            "with the region untouched to all parked after the workload",
            "pt_vmpte = sum of VmPTE over the parked workers (whole processes, so their own page tables too; "
            "a shared page counted once per sharer)",
            "pt_per_worker = the region's page tables per worker (VmPTE minus the worker's untouched baseline); "
            "fc_* = the cost of one real fault (results.fault_cost, schema 5 and up), nf_p50 = a touch without a "
            "fault; fault_* = first-touch latency (one touch, not a fault: a touch of a page an earlier fault mapped "
            "takes none); total_s = run wall time",
            "times are in each point's unit under its clock (column clock, environment.clock): "
            + "; ".join("%s: %s (%d point%s)" % (c, "instr = guest instructions" if u == "instructions" else u, n,
                                                  "" if n == 1 else "s") for (c, u), n in sorted(seen.items()))
            + ("; total_s under the instruction clock: G instr (10^9 guest instructions, a guest second)"
               if any(u == "instructions" for _, u in seen) else ""),
            ]
    if rows and not any(run.values(pid, "fc_p50") or run.values(pid, "nf_p50") for pid in run.records):
        schemas = sorted({str(lookup(r, "schema_version")) for reps in run.records.values() for _, r in reps})
        head.append("fc_*, nf_p50: no fault_cost in these records (schema %s; records of schema 5 and up have it)"
                    % ", ".join(schemas))
    head.append("")
    failed = ["failed runs (their records say the run measured nothing; in no figure):"] + \
        ["  %s r%d: %s" % (pid, rep, why) for pid in sorted(run.failed_records)
         for rep, why in sorted(run.failed_records[pid])] if run.failed_records else []
    if not rows:
        return "\n".join(head + ["(no records)"] + failed) + "\n"
    widths = [max(len(r[i]) for r in rows + [cols]) for i in range(len(cols))]
    lines = ["  ".join(c.ljust(widths[i]) for i, c in enumerate(cols)).rstrip()]
    for r in rows:
        lines.append("  ".join(c.ljust(widths[i]) for i, c in enumerate(r)).rstrip())
    return "\n".join(head + lines + ([""] + failed if failed else [])) + "\n"


def write_summaries(run):
    import pgpoint  # the PostgreSQL points' table (pgpoint imports nothing of this module)
    write_atomic(os.path.join(run.path, "records.csv"), records_csv(run))
    write_atomic(os.path.join(run.path, "summary.csv"), summary_csv(run))
    write_atomic(os.path.join(run.path, "summary.txt"), summary_text(run) + pgpoint.tables(run))
