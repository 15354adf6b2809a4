"""PostgreSQL points of a sweep (issues 15, 27, 45): a point whose workload
is `postgres` is PostgreSQL 15 under pgbench, run by
workloads/postgres/guest/pg-bench.sh (one point per call) instead of the
harness, in the same sweep, run directory and guest boot as harness points.

The spec's axes mean for it (bench/README.md, "PostgreSQL points"):
  backends  how the main shared memory segment is made (MODE below):
            anon (PostgreSQL's own MAP_SHARED|MAP_ANONYMOUS, 4 KiB pages),
            hugetlb-2m (huge_pages=on), mshare (the 2022 series over a DAX
            file, pg-mshare.so), mshare-anon (the 2022 series over shared
            anonymous memory), mshare-2025-file (the 2025 design over a DAX
            file; the mshare-2025 kernel)
  workers   connections (pgbench -c)
  sizes     shared_buffers
  page      4k (hugetlb-2m has its own)
  args      --preset select|rw|dba
                                 pgbench -S; pgbench's default read-write
                                 script (tpcb-like: three UPDATEs, a SELECT
                                 and an INSERT per transaction, issue 45);
                                 or every backend's full pass over 7/8 of
                                 shared_buffers first, then -S (issue 27)
            --scale N            pgbench -i -s N (default 10)
            --window S           guest seconds of the measured window (default 10, at least 5)
            --touch S[,S...]     backend anon only (each backend's own page tables):
                                 how much of the segment every backend maps (4 KiB pages
                                 and 2 MiB spans, /proc/PID/pagemap) at these guest
                                 seconds after all connected, each 0 or at least the
                                 window, increasing (issue 45)

The figures are read here, on the host, from what the script left
(TAG.facts and, for dba, TAG.passes and TAG.pid.json; TAG = <point id>.r<k>):
this module is the point's stats parser. The record is written by the
harness's record writer, as a harness run's (`mshare-bench record`,
harness/record_external.c; write() below), inside the frame the harness
printed where the point ran (TAG.frame.json, `mshare-bench environment
--json`: schema_version and the environment block, with the clock and the
Slurm ids read there): the harness's schema version and clock, never a
guess; a frame of another schema is refused. Its config has the harness's keys
(backend and backend_facts, workers, size_bytes = the segment PostgreSQL
made, workload, workload_facts, page_mode, params) and config.postgres.mode,
pg-common.sh's name of the mode.

Records of bench/pg-sweep (schema 3, until issue 45; the committed
results/postgres-* runs) are read as they are: their config.backend is the
mode (4k, mshare-dax...), their workload pgbench-select or pgbench-dba. The
functions mode_of() and is_pg_record() read both.
"""

import json
import os
import re
import subprocess

import pgdba
import units

WORKLOAD = "postgres"
# The sweep's backend -> pg-common.sh's mode.
MODE = {"anon": "4k", "hugetlb-2m": "hugetlb-2m", "mshare": "mshare-dax", "mshare-anon": "mshare-shmem",
        "mshare-2025-file": "mshare-2025-dax"}
# Which row of the guest's `mshare-bench backends` says whether a point's
# backend can run there: the backend's own, except where that row asks for
# the harness's --path (mshare-2025-file: "needs --path FILE"), which a
# PostgreSQL point never gives (pg-mshare.so makes its file on /mnt/pmem):
# then the design's row without a file.
USABLE_ROW = {"mshare-2025-file": "mshare-2025"}


def usable_row(backend):
    return USABLE_ROW.get(backend, backend)


# ... and back, for records of bench/pg-sweep.
BACKEND_OF_MODE = {m: b for b, m in MODE.items()}
OLD_WORKLOADS = ("pgbench-select", "pgbench-dba")
PRESETS = {"select": "pgbench-select", "rw": "pgbench-tpcb-like", "dba": "pgbench-dba"}
# pgbench's script option per preset (the record's config.postgres.pgbench)
SCRIPTS = {"select": "-S", "rw": "-b tpcb-like", "dba": "-f dba.sql -D scale=%(scale)d -D passed=0"}
DEFAULTS = {"preset": "select", "scale": 10, "window": 10, "touch": []}
DESIGN = {"mshare-dax": "mshare 2022 series (v1): mshare()/mshare_unlink() system calls",
          "mshare-shmem": "mshare 2022 series (v1): mshare()/mshare_unlink() system calls",
          "mshare-2025-dax": "mshare 2025 design (series v3): msharefs region file, the DAX file mapped into it by "
                             "ioctl(MSHAREFS_CREATE_MAPPING), the region mmap()ed by the postmaster, inherited over fork"}
BACKING = {"4k": "PostgreSQL's shared anonymous mapping (shmem)",
           "hugetlb-2m": "PostgreSQL's MAP_HUGETLB mapping",
           "mshare-dax": "mshare region over a DAX file on /mnt/pmem (pg-mshare.so)",
           "mshare-shmem": "mshare region over shared anonymous memory (pg-mshare.so)",
           "mshare-2025-dax": "msharefs region (2025 design, v3) holding a DAX file on /mnt/pmem (pg-mshare.so)"}
SCRIPT = "workloads/postgres/guest/pg-bench.sh"
GUEST_SCRIPT = "/guest/pg/pg-bench.sh"
INITRAMFS = "build/vm/initramfs-pg.cpio"
# Figures a point must have once its snapshot is valid; a missing one is
# null in the record and listed in results.missing (never a 0).
NEEDED = [("pagetables.meminfo_delta_bytes", "PageTables delta"), ("pagetables.vmpte_sum_bytes", "VmPTE sum"),
          ("faults.minflt", "minor faults"), ("faults.transactions", "transactions in the fault window"),
          ("faults.minflt_per_transaction", "minor faults per transaction"),
          ("buffers.rss_shmem_sum_bytes", "RssShmem"), ("workload.ops_per_s", "TPS"),
          ("workload.op_latency_ns.p99", "p99"), ("time_s.connect_all", "connection set-up")]
DBA_NEEDED = [("dba.first_pass.minflt_per_backend.mean", "first-pass minor faults"),
              ("dba.vmpte_split.own_bytes.mean", "VmPTE split"),
              ("dba.pagetables_after_pass_delta_bytes", "PageTables delta after the passes")]


class PgError(ValueError):
    pass


def is_pg(point):
    return point.get("workload") == WORKLOAD


def is_pg_record(rec):
    c = rec.get("config") or {}
    return c.get("workload") == WORKLOAD or c.get("workload") in OLD_WORKLOADS


def mode_of(rec):
    """pg-common.sh's mode of a record, new or from bench/pg-sweep."""
    c = rec.get("config") or {}
    return (c.get("postgres") or {}).get("mode") or MODE.get(c.get("backend"), c.get("backend"))


def options(args):
    """The point's --preset, --scale, --window -> {preset, scale, window};
    PgError naming what is wrong."""
    out = dict(DEFAULTS)
    seen = set()
    i = 0
    while i < len(args):
        a = args[i]
        name, eq, value = a.partition("=")
        if name not in ("--preset", "--scale", "--window", "--touch"):
            raise PgError("option '%s' is not a PostgreSQL point's (--preset select|rw|dba, --scale N, --window S, "
                          "--touch S[,S...])" % a)
        if not eq:
            if i + 1 >= len(args):
                raise PgError("option %s needs a value" % name)
            value = args[i + 1]
            i += 1
        i += 1
        key = name[2:]
        if key in seen:
            raise PgError("option %s given twice" % name)
        seen.add(key)
        if key == "preset":
            if value not in PRESETS:
                raise PgError("--preset '%s' (select, rw or dba)" % value)
            out[key] = value
        elif key == "touch":
            parts = value.split(",")
            if not all(_digits(x) for x in parts):
                raise PgError("--touch '%s' (guest seconds after all connected, comma-separated)" % value)
            ts = [int(x) for x in parts]
            if any(b <= a for a, b in zip(ts, ts[1:])):
                raise PgError("--touch '%s' is not increasing" % value)
            out[key] = ts
        else:
            if not _digits(value) or int(value) < (1 if key == "scale" else 5):
                raise PgError("--%s '%s' (a whole number%s)" % (key, value, ", at least 5 guest s" if key == "window" else
                                                                  " of 1 or more"))
            out[key] = int(value)
    inside = [t for t in out["touch"] if 0 < t < out["window"]]
    if inside:
        raise PgError("--touch %d is inside the window of %d s (0, or at least the window: a snapshot must not "
                      "stop the measured transactions)" % (inside[0], out["window"]))
    return out


def shared_buffers(size_bytes):
    """The size as PostgreSQL's setting: MB when whole, else kB."""
    if size_bytes % (1 << 20) == 0:
        return "%dMB" % (size_bytes >> 20)
    return "%dkB" % (size_bytes >> 10)


def check(p):
    """Why a PostgreSQL point cannot run (None: it can), before anything
    runs: the backend, page, write and size axes and the args."""
    if p["backend"] not in MODE:
        return "backend '%s' is not one PostgreSQL runs on (%s)" % (p["backend"], ", ".join(
            "%s = mode %s" % kv for kv in MODE.items()))
    if p["page"] != "4k" and p["backend"] != "hugetlb-2m":
        return "page '%s': PostgreSQL runs with huge_pages=off and 4 KiB pages on backend %s (page = 4k)" % (
            p["page"], p["backend"])
    if p["write"] != "no":
        return "write = yes: pgbench's transactions decide what is written (write = no)"
    if p["size_bytes"] % 8192 or p["size_bytes"] < 128 << 10:
        return "size %s: shared_buffers must be whole 8 KiB buffers, 128 KiB or more" % p["size"]
    if p["platform"] == "host" and p["backend"] not in ("anon", "hugetlb-2m"):
        return "backend %s on the host: the host kernel has no mshare (host points: anon, hugetlb-2m)" % p["backend"]
    try:
        o = options(p.get("args", []))
    except PgError as e:
        return str(e)
    if o["touch"] and p["backend"] != "anon":
        return ("--touch on backend %s: a backend's touch is read from its own page tables, which only backend anon "
                "(4 KiB pages, no sharing) gives it" % p["backend"])
    return None


def tag(point_id, k):
    return "%s.r%d" % (point_id, k)


def max_connections(points, p):
    """max_connections of the point's server: the most connections of the
    PostgreSQL points of its run with the same platform, shared_buffers and
    options, plus 10 (so the segment is the same at every N of a series,
    and the same after a resume)."""
    def server(q):  # what decides the segment (not --touch: a reading)
        return {k: v for k, v in options(q.get("args", [])).items() if k != "touch"}
    o = server(p)
    most = max(q["workers"] for q in points if is_pg(q) and q["platform"] == p["platform"]
               and q["size_bytes"] == p["size_bytes"] and server(q) == o)
    return most + 10


def command(p, k, points, outdir, script=GUEST_SCRIPT):
    """The pg-bench.sh command of run k of point p."""
    o = options(p.get("args", []))
    return ["sh", script, outdir, tag(p["id"], k), MODE[p["backend"]], str(p["workers"]),
            shared_buffers(p["size_bytes"]), str(o["scale"]), str(o["window"]), o["preset"],
            str(max_connections(points, p)), ",".join(map(str, o["touch"])) or "-"]


# ---- the record ----------------------------------------------------------

def read_facts(path):
    # errors="replace": a byte that is not UTF-8 (a server message, a file
    # name in the segment line, a line cut off) is U+FFFD, never an exception
    facts, pgbench = {}, []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("pgbench: "):
                pgbench.append(line[len("pgbench: "):])
                continue
            k, _, v = line.partition("=")
            facts[k] = v
    return facts, pgbench


def pgbench_figure(lines, pattern):
    for line in lines:
        m = re.search(pattern, line)
        if m:
            try:
                return float(m.group(1))
            except ValueError:  # "1.2.3": not a figure
                return None
    return None


def num(facts, key):
    try:
        return int(facts[key])
    except (KeyError, ValueError):
        return None


def kb(facts, key):
    v = num(facts, key)
    return v * 1024 if v is not None else None


def dotted(obj, path):
    for k in path.split("."):
        obj = obj.get(k) if isinstance(obj, dict) else None
    return obj


def planner_4k(harness, segment, n):
    """The planner's 4k model for the segment touched by n processes."""
    try:
        out = subprocess.run([harness, "plan", "--sga", str(segment), "--processes", str(n), "--mode", "4k", "--json"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
        m = json.loads(out.stdout)["modes"][0]
        return {"pagetable_bytes_total": m["pagetable_bytes_total"],
                "vmpte_bytes_per_process": m["vmpte_bytes_per_process"],
                "inputs": "plan --sga %d --processes %d --mode 4k (touch fraction 1, address 2 TiB)" % (segment, n)}
    except (OSError, ValueError, KeyError, IndexError, subprocess.TimeoutExpired):
        return None


def snapshot_check(n, facts):
    """(valid snapshot?, why not) for a point's facts."""
    n = str(n)
    held = facts.get("backends_in_snapshot", facts.get("backends_after_sample"))
    why = []
    if held != n:
        why.append("%s %s of %s backends" % ("the snapshot held" if "backends_in_snapshot" in facts else
                                             "after the reads (one process per figure) there were", held or "none", n))
    if facts.get("backends_measured") != n:
        why.append("%s of %s backends found at the snapshot" % (facts.get("backends_measured") or "none", n))
    if facts.get("pgbench_still_running") != "yes":
        why.append("pgbench had ended by the snapshot (its -T of %s s was too short)" % facts.get("pgbench_T_s", "?"))
    for key, what in (("backends_in_stat_snapshot0", "the first stat read"), ("backends_in_stat_snapshot", "the stat snapshot")):
        if key in facts and facts[key] != n:
            why.append("%s held %s of %s" % (what, facts[key] or "none", n))
    if facts.get("same_backends", "yes") != "yes":
        why.append("the backends at the snapshot were not those connected at the window's start")
    return not why, "; ".join(why)


def dba_results(facts, pgdir, t, rec, mode):
    """The dba preset's figures (issue 27) from the point's output."""
    stem = os.path.join(pgdir, t)
    out = {"big_table_bytes": num(facts, "big_bytes"), "passes_done": num(facts, "passes_done"),
           "passes_done_after_s": num(facts, "passes_done_after_s"), "first_pass": None, "vmpte_split": None,
           "plan_pid_s": num(facts, "plan_pid_s"), "errors": []}
    def text(path):  # a byte that is not UTF-8 is U+FFFD, never an exception
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    try:
        rows = pgdba.parse_passes(text(stem + ".passes"), stem + ".passes")
        out["first_pass"] = pgdba.first_pass(rows)
        if facts.get("plan_pid_rc") != "0":
            out["errors"].append("plan --pid exit %s: %s" % (facts.get("plan_pid_rc"), text(stem + ".pid.err").strip()[-300:]))
        else:
            out["vmpte_split"] = pgdba.vmpte_split(pgdba.load_json(stem + ".pid.json"), pgdba.backend_pids_from(rows))
    except (OSError, pgdba.DbaError) as e:
        out["errors"].append(str(e))
    # mshare: the backends' VmPTE holds none of the segment's tables (the
    # 2025 design: its backends map the whole region, whose tables are the
    # region's): the split by construction, VmPTE from the window.
    if (out["vmpte_split"] is None or not out["vmpte_split"]["backends"] or mode == "mshare-2025-dax") and mode.startswith("mshare"):
        pt = rec["results"]["pagetables"]
        out["vmpte_split"] = pgdba.vmpte_split_mshare(pt["vmpte_sum_bytes"], pt["vmpte_workers"],
                                                      pt["vmpte_per_worker_min_bytes"], pt["vmpte_per_worker_max_bytes"],
                                                      design=2025 if mode == "mshare-2025-dax" else 2022)
        out["errors"] = [e for e in out["errors"] if not e.startswith("plan --pid")]
    pt0, ptp = num(facts, "pagetables_before_kb"), num(facts, "pagetables_after_pass_kb")
    out["pagetables_after_pass_delta_bytes"] = (ptp - pt0) * 1024 if None not in (pt0, ptp) else None
    vp, pp = num(facts, "pt_accounting_vmpte_pages"), num(facts, "pt_accounting_pagetables_pages")
    out["pt_accounting"] = None if None in (vp, pp) else {
        "vmpte_pages": vp, "pagetables_pages": pp, "pud_in_pagetables": pp == vp,
        "kind": "measured: VmPTE and PageTables increments for one page mapped in an empty 512 GiB slot "
                "(kernel/vm/pt-accounting)"}
    ap = {"backends": num(facts, "after_pass_backends"), "vmpte_sum_bytes": kb(facts, "after_pass_vmpte_sum_kb"),
          "pud_pages_sum": num(facts, "after_pass_slots_sum"), "pgbench_vmpte_bytes": kb(facts, "pgbench_vmpte_kb"),
          "pgbench_pud_pages": num(facts, "pgbench_slots"),
          "kind": "measured right after the PageTables reading: VmPTE from /proc/PID/status; PUD pages = the "
                  "512 GiB slots the process's mappings with access touch (/proc/PID/maps; an mshare region's "
                  "slot is the region's)"}
    out["after_pass"] = ap if None not in (ap["backends"], ap["vmpte_sum_bytes"], ap["pud_pages_sum"]) else None
    f = rec["results"]["faults"]
    out["window_tps"] = pgdba.window_tps(f["transactions"], f["window_s"])
    out["instructions_per_transaction"] = pgdba.instructions_per_tx(rec["environment"].get("clock"), f["window_s"],
                                                                    f["transactions"])
    out["pgbench_tps_including_passes"] = rec["results"]["workload"]["ops_per_s"]
    out["pgbench_stopped_after_window_s"] = num(facts, "pgbench_stopped_s")
    if out["pgbench_stopped_after_window_s"] is not None:
        out["pgbench_own_figures"] = ("pgbench's tps and latency average include the %d guest s it was stopped after "
                                      "the window (and the passes): not the workload's; the window's TPS, p50 and p99 "
                                      "are" % out["pgbench_stopped_after_window_s"])
    out["window_planned_s"] = num(facts, "window_planned_s")
    rec["results"]["workload"]["ops_per_s"] = out["window_tps"]
    return out


def quantiles(values):
    """min, p10, p50, p90, max and mean of a list (nearest rank)."""
    v = sorted(values)
    if not v:
        return None
    at = lambda q: v[max(0, -(-len(v) * q // 100) - 1)]  # noqa: E731
    return {"min": v[0], "p10": at(10), "p50": at(50), "p90": at(90), "max": v[-1],
            "mean": round(sum(v) / len(v), 1), "count": len(v)}


def _digits(s):
    """Whether s is a whole number int() takes (str.isdigit() is also true
    of '\u00b2', which int() refuses)."""
    return s.isascii() and s.isdigit()


def _segment(f):
    """pg-touch's 'segment START END BYTES' -> (start, end, bytes), or None
    when that is not a segment of at least one page."""
    try:
        start, end, size = int(f[1], 16), int(f[2], 16), int(f[3]) if _digits(f[3]) else -1
    except ValueError:
        return None
    return (start, end, size) if start >= 0 and end > start and size >= 4096 else None


def parse_touch(text, where):
    """TAG.touch (pg-bench.sh's touch snapshots, pg-touch's lines) ->
    [{after_connected_s, at_cs, rc, segment: (start, end, bytes), rows: [(pid, pages, spans)], unreadable}]."""
    snaps = []
    for i, line in enumerate(text.splitlines(), 1):
        f = line.split()
        if not f:
            continue
        if f[0] == "snapshot":
            if len(f) != 5 or not _digits(f[1]):
                raise PgError("%s:%d: a bad snapshot line %r" % (where, i, line))
            ok = _digits(f[2]) and _digits(f[3])
            snaps.append({"after_connected_s": int(f[1]), "at_cs": (int(f[2]) + int(f[3])) // 2 if ok else None,
                          "took_s": (int(f[3]) - int(f[2])) / 100.0 if ok else None,
                          "rc": f[4], "segment": None, "rows": [], "unreadable": 0})
        elif not snaps:
            raise PgError("%s:%d: %r before any snapshot line" % (where, i, line))
        elif f[0] == "segment" and len(f) >= 4 and _segment(f):
            snaps[-1]["segment"] = _segment(f)
        elif _digits(f[0]) and len(f) >= 3 and _digits(f[1]) and _digits(f[2]):
            snaps[-1]["rows"].append((int(f[0]), int(f[1]), int(f[2])))
        elif _digits(f[0]) and f[1:3] == ["-", "-"]:
            snaps[-1]["unreadable"] += 1
        else:
            snaps[-1].setdefault("errors", []).append(line)
    return snaps


SPAN = 2 << 20


def touch_results(facts, path, n):
    """results.touch: how much of the segment each backend maps, per snapshot."""
    out = {"kind": "measured: every backend's own page tables (PostgreSQL's 4 KiB shared anonymous segment), "
                   "pages present in /proc/PID/pagemap (pg-touch) at guest seconds after all backends connected; "
                   "fault-around counts: it maps pages a backend did not read",
           "segment_bytes": None, "spans_2m_in_segment": None, "snapshots": [], "errors": []}
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            snaps = parse_touch(fh.read(), path)
    except (OSError, PgError) as e:
        out["errors"].append(str(e))
        return out
    c0 = num(facts, "connected_cs")
    for sn in snaps:
        row = {"after_connected_s": sn["after_connected_s"], "took_s": sn["took_s"]}
        # when it was taken (its middle), measured: a snapshot waits for the
        # window and for the one before it
        row["taken_after_connected_s"] = (sn["at_cs"] - c0) / 100.0 if c0 is not None and sn["at_cs"] is not None else None
        if sn["segment"] is None or sn["rc"] == "missing":
            row["missing"] = "not taken: pgbench had ended or the backends changed" if sn["rc"] == "missing" else \
                "pg-touch found no segment: %s" % " / ".join(sn.get("errors", []))[:200]
            out["snapshots"].append(row)
            continue
        start, end, size = sn["segment"]
        spans = (-(-end // SPAN)) - start // SPAN
        out["segment_bytes"], out["spans_2m_in_segment"] = size, spans
        pages = [r[1] for r in sn["rows"]]
        sp = [r[2] for r in sn["rows"]]
        tx = num(facts, "touch_tx_%d" % sn["after_connected_s"])
        row.update({
            "backends": len(sn["rows"]), "unreadable": sn["unreadable"],
            "transactions": tx, "transactions_per_backend": round(tx / n, 1) if tx is not None and n else None,
            "pages_4k": quantiles(pages), "spans_2m": quantiles(sp),
            "fraction_of_pages_mean": round(sum(pages) / len(pages) / (size // 4096), 5) if pages else None,
            "fraction_of_spans_mean": round(sum(sp) / len(sp) / spans, 5) if sp else None,
            "pte_pages_bytes_per_backend_mean": round(sum(sp) / len(sp) * 4096) if sp else None})
        out["snapshots"].append(row)
    return out


def build(p, k, pgdir, frame, backend_facts, harness, manifest=None):
    """The record of run k of PostgreSQL point p from its output in pgdir
    (TAG.facts...) and the harness's frame ({schema_version, tool,
    environment}, read where the point ran).

    Returns (record or None, reason): no record when the point was not
    measured (no facts, pgbench failed, or the snapshot missed backends:
    the run failed and --resume runs it again; the facts stay); a record
    with figures the guest could not read null and listed in
    results.missing, the reason then naming them."""
    t = tag(p["id"], k)
    path = os.path.join(pgdir, t + ".facts")
    if not os.path.exists(path):
        return None, "no facts (%s): the server did not start or the run stopped first; pg/status says" % path
    facts, pgbench = read_facts(path)
    if "pgbench_rc" not in facts:
        return None, "not measured: the run stopped while the point ran (its facts end at %r)" % (
            list(facts)[-1] if facts else "nothing")
    if facts.get("pgbench_rc") != "0":
        return None, "pgbench exit %s: %s" % (facts.get("pgbench_rc"), " / ".join(pgbench[-3:]))
    if facts.get("mode") != MODE[p["backend"]]:
        # the guest says which mode its server ran (until Dec 7 the first
        # point of a boot ran 4k whatever its backend): never a record
        # under another backend's name
        return None, "the server ran mode %r, not %r (backend %s): not recorded; --resume runs it again" % (
            facts.get("mode"), MODE[p["backend"]], p["backend"])
    ok, why = snapshot_check(p["workers"], facts)
    if not ok:
        return None, "page tables and faults not measured: %s (pgbench's own figures in %s)" % (why, path)
    if not isinstance(frame, dict) or not isinstance(frame.get("environment"), dict) or \
            not isinstance(frame.get("schema_version"), int):
        return None, "no frame from the harness where the point ran (mshare-bench environment --json)"
    o = options(p.get("args", []))
    mode, n = MODE[p["backend"]], p["workers"]
    sb = shared_buffers(p["size_bytes"])
    env = dict(frame["environment"])
    seg = num(facts, "segment_bytes")
    seg = seg * (1 << 20) if seg is not None else p["size_bytes"]
    measured = num(facts, "backends_measured") or 0
    pt0, pt1 = num(facts, "pagetables_before_kb"), num(facts, "pagetables_end_kb")
    vmpte = num(facts, "vmpte_sum_kb")
    minflt = num(facts, "minflt_delta")
    commits = num(facts, "transactions_in_window")
    window = num(facts, "fault_window_cs")
    tps = pgbench_figure(pgbench, r"^tps = ([0-9.]+)")
    lat_avg_ms = pgbench_figure(pgbench, r"^latency average = ([0-9.]+) ms")
    conn_ms = pgbench_figure(pgbench, r"^initial connection time = ([0-9.]+) ms")
    txns = pgbench_figure(pgbench, r"^number of transactions actually processed: ([0-9]+)")
    rss = num(facts, "rss_shmem_sum_kb")
    lat = {x: num(facts, "latency_%s_us" % x) for x in ("p50", "p99", "max", "mean")}
    maxc = num(facts, "max_connections")
    host = env.get("platform") == "host"
    settings = ("shared_buffers=%s huge_pages=%s max_connections=%s listen_addresses='' autovacuum=off jit=off "
                "max_parallel_workers_per_gather=0 dynamic_shared_memory_type=posix fsync=off synchronous_commit=off "
                "full_page_writes=off max_wal_size=4GB" % (sb, "on" if mode == "hugetlb-2m" else "off", maxc))
    bf = {key: v for key, v in (backend_facts or {}).items() if key not in ("usable", "why_not")} or None
    rec = {
        "schema_version": frame["schema_version"],
        "tool": frame.get("tool", "mshare-bench"),
        "config": {
            "backend": p["backend"], "backend_facts": bf, "workers": n, "size_bytes": seg, "workload": WORKLOAD,
            # what a backend reaches: pgbench -S's random keys, or (dba) a
            # table of 7/8 of the buffers; neither is every 2 MiB range
            "workload_facts": {"touch_stride_bytes": 0, "touches_whole_region": False},
            # rw (tpcb-like) writes to the segment; select and dba only read
            "page_mode": p["page"], "write": o["preset"] == "rw",
            "addr": None if host or not mode.startswith("mshare") else "0x20000000000",
            "path": "/mnt/pmem/pg/shm" if mode in ("mshare-dax", "mshare-2025-dax") and not host else None,
            "seed": 0, "duration_s": o["window"], "ops": 0, "cpus": None, "mem_policy": None,
            "params": dict({"preset": o["preset"], "scale": str(o["scale"]), "window": str(o["window"])},
                           **({"touch": ",".join(map(str, o["touch"]))} if o["touch"] else {})),
            "postgres": {
                "mode": mode,
                "version": "PostgreSQL 15 (Debian postgresql-15)",
                "shared_buffers": sb, "pgbench_scale": o["scale"], "max_connections": maxc,
                "settings": settings,
                "pgbench": "pgbench -n %s -M prepared -c %d -j 2 -T %s -l" % (
                    SCRIPTS[o["preset"]] % {"scale": o["scale"]},
                    n, facts.get("pgbench_T_s", "?")),
                "preload": "LD_PRELOAD=/usr/lib/pg-mshare.so %sPGMSHARE_BACKING=%s" % (
                    "PGMSHARE_DESIGN=2025 " if mode == "mshare-2025-dax" else "", mode.split("-")[-1])
                if mode.startswith("mshare") else None,
                "design": DESIGN.get(mode),
                "segment_line": facts.get("segment_line") or None,
                "data_directory": "host temporary directory (PGROOT), socket in PGRUN" if host else "/mnt/pmem/pg/data",
            },
        },
        "environment": env,
        "results": {
            "page_size_bytes": 2 << 20 if mode == "hugetlb-2m" else 4096,
            "page_size_source": "the mode (hugetlb-2m: huge_pages=on; else 4 KiB pages), not probed",
            "page_size_mixed": False,
            "dax": mode in ("mshare-dax", "mshare-2025-dax") and not host,
            "backing": BACKING[mode],
            "snapshot_valid": True,
            "pagetables": {
                "meminfo_before_bytes": pt0 * 1024 if pt0 is not None else None,
                "meminfo_parked_bytes": pt1 * 1024 if pt1 is not None else None,
                "meminfo_delta_bytes": (pt1 - pt0) * 1024 if None not in (pt0, pt1) else None,
                "vmpte_sum_bytes": vmpte * 1024 if vmpte is not None else None,
                "vmpte_workers": measured,
                "snapshot_s": num(facts, "snapshot_cs") / 100.0 if num(facts, "snapshot_cs") is not None else None,
                "vmpte_per_worker_bytes": vmpte * 1024 // measured if vmpte is not None and measured else None,
                "vmpte_per_worker_min_bytes": kb(facts, "vmpte_min_kb"),
                "vmpte_per_worker_max_bytes": kb(facts, "vmpte_max_kb"),
            },
            "faults": {
                "minflt": minflt,
                "minflt_per_transaction": round(minflt / commits, 3) if minflt is not None and commits else None,
                "transactions": commits,
                "transactions_source": "pgbench's per-transaction log, ended in the window",
                "window_s": window / 100.0 if window is not None else None,
                "tlb_shootdowns": num(facts, "tlb_shootdowns_delta"),
            },
            "buffers": {
                "rss_shmem_sum_bytes": rss * 1024 if rss is not None else None,
                "touched_per_backend_8k_buffers": round(rss * 1024 / measured / 8192) if rss is not None and measured else None,
            },
            "memory": {
                "mem_total_bytes": kb(facts, "mem_total_kb"),
                "mem_available_before_bytes": kb(facts, "mem_available_kb_before"),
                "mem_available_end_bytes": kb(facts, "mem_available_kb_end"),
                "mem_free_before_bytes": kb(facts, "mem_free_kb_before"),
                "mem_free_end_bytes": kb(facts, "mem_free_kb_end"),
                "rss_anon_sum_bytes": kb(facts, "rss_anon_sum_kb"),
                "mem_available_lost_per_backend_bytes":
                    (kb(facts, "mem_available_kb_before") - kb(facts, "mem_available_kb_end")) // n
                    if None not in (kb(facts, "mem_available_kb_before"), kb(facts, "mem_available_kb_end")) and n else None,
            },
            "workers_started": n,
            "workers_measured": measured if vmpte is not None else 0,
            "time_s": {
                "attach": conn_ms / 1000.0 / n if conn_ms is not None else None,
                "connect_all": conn_ms / 1000.0 if conn_ms is not None else None,
                "connected_after": num(facts, "connected_after_s"),
                # pgbench, continued after its -T, closes every connection:
                # from that SIGCONT until no backend is left (earlier
                # records, no "backends_exit_from": from pgbench's exit,
                # by when most backends had gone: not the exit's cost)
                "backends_exit_all": num(facts, "backends_exit_cs") / 100.0
                if num(facts, "backends_exit_cs") is not None and facts.get("backends_exit_from") == "cont" else None,
                "backends_exit_from": "pgbench continued after its -T (it then closes every connection) to the last "
                                      "backend gone" if facts.get("backends_exit_from") == "cont" else None,
                "total": o["window"],
            },
            "workload": {
                "name": PRESETS[o["preset"]],
                "ops": int(txns) if txns is not None else None,
                "ops_per_s": tps,
                "op_latency_ns": {
                    "count": num(facts, "latency_samples"),
                    "mean": lat["mean"] * 1000 if lat["mean"] is not None else None,
                    "p50": lat["p50"] * 1000 if lat["p50"] is not None else None,
                    "p99": lat["p99"] * 1000 if lat["p99"] is not None else None,
                    "max": lat["max"] * 1000 if lat["max"] is not None else None,
                },
                "pgbench_latency_average_ms": lat_avg_ms,
                "pgbench_output": pgbench,
            },
            "planner_4k_model": planner_4k(harness, seg, n),
            "conditions": {"shared_buffers": sb, "shared_buffers_bytes": p["size_bytes"],
                           "scale": o["scale"], "connections": n, "mode": mode, "backend": p["backend"],
                           "preset": o["preset"], "window_s": o["window"],
                           "kernel": env.get("kernel"), "kernel_version": env.get("kernel_version"),
                           "clock": env.get("clock"),
                           "vm_args": None if host else (manifest or {}).get("vm_args"),
                           "design": DESIGN.get(mode, "no mshare")},
        },
    }
    if o["preset"] == "dba":
        rec["results"]["dba"] = dba_results(facts, pgdir, t, rec, mode)
    if o["touch"]:
        rec["results"]["touch"] = touch_results(facts, os.path.join(pgdir, t + ".touch"), n)
    if o["preset"] != "dba" and pgdba.window_tps(commits, rec["results"]["faults"]["window_s"]) is not None:
        # pgbench's own figure spans its whole -T: the snapshots (at nice
        # -20) and, since Dec 7, its stop after the window
        rec["results"]["workload"]["pgbench_tps"] = tps
        rec["results"]["workload"]["ops_per_s"] = pgdba.window_tps(commits, rec["results"]["faults"]["window_s"])
        rec["results"]["workload"]["ops_per_s_source"] = ("the window's transactions per second of the clock (pgbench's "
                                                          "own figure, pgbench_tps, spans its -T with the snapshots and "
                                                          "its stop)")
    missing = [what for key, what in NEEDED if dotted(rec["results"], key) is None]
    if o["preset"] == "dba":
        missing += [what for key, what in DBA_NEEDED if dotted(rec["results"], key) is None]
    rec["results"]["missing"] = missing
    notes = list(missing and ["not measured although the snapshot is valid: %s" % ", ".join(missing)])
    if o["preset"] == "dba":
        notes += rec["results"]["dba"]["errors"]
    return rec, "; ".join(notes) or None


def write(rec, path, frame_path, harness):
    """Record rec (build()'s) at path, written by the harness's writer
    (`mshare-bench record`, harness/record_external.c): the frame is the
    file the harness printed where the point ran, the body rec's config
    and results; atomic, never over an existing record, refused when the
    frame's schema is not this harness's. None, or why nothing was
    written."""
    body = json.dumps({"config": rec["config"], "results": rec["results"]})
    try:
        # errors="replace": the writer's message names the paths, whose
        # bytes need not be UTF-8
        r = subprocess.run([harness, "record", "--frame", frame_path, "--body", "-", "--out", path], input=body,
                           capture_output=True, encoding="utf-8", errors="replace", check=False)
    except OSError as e:
        return "the harness's record writer (%s record): %s" % (harness, e)
    if r.returncode != 0:
        return (r.stderr.strip() or "%s record: exit %d" % (harness, r.returncode)).splitlines()[-1]
    return None


def read_frame(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


# ---- tables for summary.txt ----------------------------------------------

def in_unit(ns, r, digits=2):
    """A time kept in ns in the record, in its clock's unit (under the
    instruction clock one ns is one guest instruction)."""
    if ns is None:
        return "-"
    if (r.get("environment") or {}).get("clock") == "guest-instructions":
        return "%.*f M instr" % (digits, ns / 1e6)
    return "%.*f ms" % (digits, ns / 1e6)


def in_unit_s(sec, r, digits=2):
    if sec is None:
        return "-"
    if (r.get("environment") or {}).get("clock") == "guest-instructions":
        return "%.*f G instr" % (digits, sec)
    return "%.*f s" % (digits, sec)


def fmt_bytes(v):
    return "-" if v is None else units.format_bytes(v)


def tables(run):
    """The PostgreSQL points of a run (runrecords.Run) as pg-sweep printed
    them: one row per point and repeat, measured left of '|', the planner's
    4k figures (MODELLED) right of it; the dba preset's per-backend figures
    below. '' when the run has no PostgreSQL record."""
    rows, dba = [], []
    for pid in run.point_ids():
        for k, r in run.records.get(pid, []):
            if not is_pg_record(r):
                continue
            res = r.get("results") or {}
            pt, w, p4 = res.get("pagetables") or {}, res.get("workload") or {}, res.get("planner_4k_model") or {}
            lat = w.get("op_latency_ns") or {}
            f = res.get("faults") or {}
            sd, tx = f.get("tlb_shootdowns"), f.get("transactions")
            name = "%s r%d" % (pid, k)
            rows.append("%-52s %9s %8s %8s %7s %10s %10s %10s %8s %8s | %10s %10s" % (
                name, in_unit_s((res.get("time_s") or {}).get("connect_all"), r),
                "-" if w.get("ops_per_s") is None else "%.0f" % w["ops_per_s"],
                in_unit(lat.get("mean"), r), in_unit(lat.get("p99"), r, 1),
                fmt_bytes(pt.get("meminfo_delta_bytes")), fmt_bytes(pt.get("vmpte_sum_bytes")),
                fmt_bytes(pt.get("vmpte_per_worker_bytes")),
                "-" if f.get("minflt_per_transaction") is None else "%.2f" % f["minflt_per_transaction"],
                "-" if sd is None or not tx else "%.2f" % (sd / tx),
                fmt_bytes(p4.get("pagetable_bytes_total")), fmt_bytes(p4.get("vmpte_bytes_per_process"))))
            d = res.get("dba")
            if d:
                sp, fp = d.get("vmpte_split") or {}, d.get("first_pass") or {}
                g = lambda o, key: (o.get(key) or {}).get("mean")  # noqa: E731
                dba.append("%-52s %9s %8s %8s %10s %11s %8s %8s %8s %8s %10s" % (
                    name, fmt_bytes(g(sp, "vmpte_bytes")), fmt_bytes(g(sp, "segment_bytes")), fmt_bytes(g(sp, "own_bytes")),
                    fmt_bytes(d.get("pagetables_after_pass_delta_bytes")),
                    "-" if g(fp, "minflt_per_backend") is None else "%.0f" % g(fp, "minflt_per_backend"),
                    "-" if g(fp, "ms_per_backend") is None else in_unit_s(g(fp, "ms_per_backend") / 1000, r, 1),
                    "-" if d.get("window_tps") is None else "%.0f" % d["window_tps"],
                    in_unit(lat.get("p50"), r), in_unit(lat.get("p99"), r),
                    "-" if d.get("instructions_per_transaction") is None else "%.0f" % d["instructions_per_transaction"]))
    if not rows:
        return ""
    side = dba_side_by_side(run)
    touch = touch_table(run)
    out = ["", "PostgreSQL points (pgbench; measured left of '|', '-' = not measured, never 0; the planner's 4k "
           "figures right of it are MODELLED, whole segment touched). Times in each record's clock unit: ms and s, "
           "or M and G guest instructions under the instruction clock; TPS per second of that clock",
           "%-52s %9s %8s %8s %7s %10s %10s %10s %8s %8s | %10s %10s" % (
               "point", "conn", "TPS", "lat avg", "p99", "PT delta", "VmPTE sum", "VmPTE/bk", "minflt/tx",
               "TLBsd/tx", "4k total", "4k per bk")] + rows
    if dba:
        out += ["", "dba preset: per backend after its first full pass (MEASURED; seg = the segment's part of VmPTE "
                "from its pages present, own = VmPTE - seg)",
                "%-52s %9s %8s %8s %10s %11s %8s %8s %8s %8s %10s" % (
                    "point", "VmPTE/bk", "seg/bk", "own/bk", "PT delta", "faults/pass", "pass", "TPS(win)", "p50",
                    "p99", "instr/tx")] + dba
    if side:
        out += ["", side]
    if touch:
        out += ["", touch]
    return "\n".join(out) + "\n"


def touch_table(run):
    """How much of the segment each backend maps, per point and snapshot
    (results.touch): '' when no record has touch snapshots."""
    out = []
    for x in sorted(side_rows(run), key=lambda x: (x["n"] or 0, x["mode"] or "")):
        t = (x["record"].get("results") or {}).get("touch")
        if not t:
            continue
        for sn in t.get("snapshots") or []:
            if sn.get("missing") or not sn.get("spans_2m"):
                out.append("%-12s %5s %5s  not measured: %s" % (x["mode"], x["n"], sn.get("after_connected_s"),
                                                                sn.get("missing") or "no figures"))
                continue
            sp, pg = sn["spans_2m"], sn["pages_4k"]
            out.append("%-12s %5s %5s %7s %9s %8s %16s %16s %8s %9s %9s" % (
                x["mode"], x["n"], sn["after_connected_s"],
                "-" if sn.get("taken_after_connected_s") is None else "%.1f" % sn["taken_after_connected_s"],
                "-" if sn.get("transactions_per_backend") is None else "%.0f" % sn["transactions_per_backend"],
                sn["backends"], "%d / %d / %d" % (sp["p10"], sp["p50"], sp["p90"]),
                "%d / %d / %d" % (pg["p10"], pg["p50"], pg["p90"]), "%.1f" % sp["mean"],
                "%.2f%%" % (100 * sn["fraction_of_spans_mean"]), "%.2f%%" % (100 * sn["fraction_of_pages_mean"])))
    if not out:
        return ""
    return "\n".join(["How much of the segment each backend maps (MEASURED: its own page tables, /proc/PID/pagemap; "
                      "anon only; S = the snapshot's guest s after all connected, taken = when it was taken; tx/bk = "
                      "transactions ended by then per backend; spans = 2 MiB spans with a page present (= PTE pages), "
                      "pages = 4 KiB pages present, p10 / p50 / p90 over the backends; fractions = means / the "
                      "segment's)",
                      "%-12s %5s %5s %7s %9s %8s %16s %16s %8s %9s %9s" % (
                          "mode", "N", "S", "taken", "tx/bk", "backends", "spans p10/50/90", "pages p10/50/90",
                          "spans", "of spans", "of pages")] + out)


def _touch_last(res):
    """The last snapshot of results.touch with figures, or None."""
    for sn in reversed((res.get("touch") or {}).get("snapshots") or []):
        if sn.get("spans_2m"):
            return sn
    return None


def side_rows(run):
    """What a DBA compares besides memory (issue 45), one row per PostgreSQL
    record, from the record: dicts with the figures (None: not measured)."""
    out = []
    for pid in run.point_ids():
        for k, r in run.records.get(pid, []):
            if not is_pg_record(r):
                continue
            res = r.get("results") or {}
            n = (r.get("config") or {}).get("workers")
            f, pt, mem = res.get("faults") or {}, res.get("pagetables") or {}, res.get("memory") or {}
            lat = (res.get("workload") or {}).get("op_latency_ns") or {}
            ts = res.get("time_s") or {}
            tx, win = f.get("transactions"), f.get("window_s")
            lost = mem.get("mem_available_lost_per_backend_bytes")
            if lost is None and None not in (mem.get("mem_available_before_bytes"), mem.get("mem_available_end_bytes")) and n:
                lost = (mem["mem_available_before_bytes"] - mem["mem_available_end_bytes"]) // n
            last = _touch_last(res)
            out.append({"record": r, "point": "%s r%d" % (pid, k), "mode": mode_of(r), "n": n,
                        "preset": ((r.get("config") or {}).get("params") or {}).get("preset"),
                        "connect_s": ts.get("connect_all"),
                        "tps_window": tx / win if tx is not None and win else None,
                        "p50_ns": lat.get("p50"), "p99_ns": lat.get("p99"),
                        "faults_per_backend": f["minflt"] / n if f.get("minflt") is not None and n else None,
                        "first_pass_faults": ((((res.get("dba") or {}).get("first_pass") or {})
                                               .get("minflt_per_backend")) or {}).get("mean"),
                        "mem_available_lost_per_backend": lost,
                        "exit_all_s": ts.get("backends_exit_all"),
                        "pt_delta": pt.get("meminfo_delta_bytes"), "vmpte_per_backend": pt.get("vmpte_per_worker_bytes"),
                        "touch": last})
    return out


def dba_side_by_side(run):
    """The DBA's table: per N, the modes side by side."""
    rows = side_rows(run)
    if not rows:
        return ""
    rows.sort(key=lambda x: (x["n"] or 0, x["mode"] or ""))
    fmt_f = lambda v, spec: "-" if v is None else spec % v  # noqa: E731
    hdr = "%-12s %5s %13s %7s %13s %13s %9s %8s %11s %13s %10s %9s  %s"
    out = ["What a DBA compares besides memory, per connection count (MEASURED in the window of each point; "
           "times in the record's clock unit; TPS per second of that clock; faults = minor faults of all backends "
           "in the window / N; 1st pass = a backend's faults in its full pass (dba preset); MemAvail lost = MemAvailable before the run minus at the snapshot, / N; exit all = "
           "from pgbench continued after its -T (it closes every connection) to the last backend gone, recorded since Dec 7; touch = each backend's own 2 MiB spans and 4 KiB pages of "
           "the segment at the last snapshot (anon only: shared tables hide it), p50 [p10-p90])",
           hdr % ("mode", "N", "connect", "TPS", "p50", "p99", "faults/bk", "1st pass", "MemAvail/bk", "exit all",
                  "PT delta", "VmPTE/bk", "touch per backend")]
    for x in rows:
        r = x["record"]
        tc = x["touch"]
        touch = "-"
        if tc:
            touch = "%d spans [%d-%d], %s [%s-%s] at %d s, %.0f tx/bk" % (
                tc["spans_2m"]["p50"], tc["spans_2m"]["p10"], tc["spans_2m"]["p90"],
                fmt_bytes(tc["pages_4k"]["p50"] * 4096), fmt_bytes(tc["pages_4k"]["p10"] * 4096),
                fmt_bytes(tc["pages_4k"]["p90"] * 4096), tc["after_connected_s"], tc.get("transactions_per_backend") or 0)
        out.append(hdr % (
            x["mode"], x["n"], in_unit_s(x["connect_s"], r), fmt_f(x["tps_window"], "%.0f"),
            in_unit(x["p50_ns"], r), in_unit(x["p99_ns"], r), fmt_f(x["faults_per_backend"], "%.1f"),
            fmt_f(x["first_pass_faults"], "%.0f"),
            fmt_bytes(x["mem_available_lost_per_backend"]), in_unit_s(x["exit_all_s"], r),
            fmt_bytes(x["pt_delta"]), fmt_bytes(x["vmpte_per_backend"]), touch))
    return "\n".join(out)
