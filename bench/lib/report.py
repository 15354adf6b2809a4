"""One HTML page for a run directory (bench/report): the headline, the
conditions, per question its figures and a table of the numbers behind
them, the failed and skipped points, and links to every record.

The page is rendered from bench/templates/report.html.j2 by Jinja2 with
autoescape on: every value read from a record, the manifest or a log is
escaped. Nothing in it depends on when it was made (no generation time),
so making it again from the same run gives the same bytes.
"""

import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import runrecords
import sharing

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TEMPLATES = os.path.join(ROOT, "bench", "templates")

# A point's repeats are flagged when max - min exceeds this share of the
# median (the report's own rule; summary.txt shows a range from 1 %).
SPREAD_FLAG = 0.20


def jinja():
    """jinja2: Debian's python3-jinja2 (scripts/deps.sh), also when the
    running Python is not /usr/bin/python3 and does not look there; any
    other Jinja2 on the path only when Debian's is not installed."""
    debian = "/usr/lib/python3/dist-packages"
    added = os.path.isdir(os.path.join(debian, "jinja2")) and debian not in sys.path
    if added:
        sys.path.insert(0, debian)
    try:
        import jinja2
    except ImportError:
        raise SystemExit("needs Jinja2: Debian's python3-jinja2 (scripts/deps.sh installs it)")
    finally:
        if added:
            sys.path.remove(debian)
    return jinja2


def _records_value(record, key):
    return runrecords.number(runrecords.lookup(record, key))


def _faults_per_worker(record):
    faults = (_records_value(record, "results.faults.minflt") or 0) + \
        (_records_value(record, "results.faults.majflt") or 0)
    workers = _records_value(record, "results.workers_measured") or _records_value(record, "config.workers")
    if not workers or runrecords.lookup(record, "results.faults.minflt") is None:
        return None
    return faults / workers


# Extra per-record figures beside runrecords.METRICS: name -> (function, unit, label)
EXTRA = {
    "pages_per_fault": (lambda r: runrecords.per_fault(r, "results.faults.pages_per_fault"), "count",
                        "pages touched per fault"),
    "faults_per_worker": (_faults_per_worker, "count", "faults per worker"),
}

# The questions a run answers, in page order: (anchor, figure file prefix,
# title, caption, metrics of its table).
QUESTIONS = [
    ("pagetables", "1-pagetables", "How much page-table memory does sharing cost as workers grow?",
     "Page-table memory of the whole run against the number of workers sharing one region, log-log. "
     "pt_meminfo is the growth of PageTables in /proc/meminfo from every worker attached with the region "
     "untouched to every worker parked after the workload (each page-table page counted once); pt_vmpte is "
     "the sum of the workers' VmPTE (whole processes; a page-table page shared by N processes counted N "
     "times).",
     ["pt_meminfo", "pt_vmpte"]),
    ("per-worker", "2-pt-per-worker-gib", "How many page-table bytes does each worker add?",
     "The region's own page tables per worker (the worker's VmPTE at the parked point minus its VmPTE with "
     "the region mapped but untouched); the figure divides by the GiB mapped.",
     ["pt_per_worker"]),
    ("fault-cost", "3-fault-latency", "What does a fault cost?",
     "The cost of one real fault (results.fault_cost: every timed touch classified by the worker's own "
     "fault count around it; touches during which the worker was switched out are left out) at p50, p99 "
     "and p99.9, the cost of a touch that found its page mapped, and the faults per worker; in the "
     "records' unit (instructions under the guest's instruction clock). Records older than schema 5 have "
     "only first-touch latency (a touch, not a fault), shown last.",
     ["fc_p50", "fc_p99", "fc_p999", "nf_p50", "faults_per_worker", "fault_p50", "fault_p99"]),
    ("attach", "4-attach-touch", "How long do attaching and the first touch take?",
     "Attach time per worker (mean over workers) and the first-touch phase of the run (release to every "
     "worker parked).",
     ["attach_s", "touch_s"]),
    ("throughput", "5-throughput", "What throughput does the workload reach?",
     "Workload operations per second, summed over the workers.",
     ["ops_per_s"]),
    ("connection", "7-connection-cost", "What does one connection (attach, touch, detach) cost?",
     "connect-storm: attach, first touch and detach per connection, p50 and p99 (numbers: records.csv, "
     "results.workload.*).",
     []),
    ("per-node", "8-pagetables-per-node", "Where do the page tables live on a NUMA machine?",
     "Page-table memory on NUMA node 0 and node 1 against workers, and the share on node 0.",
     []),
    ("planner", "6-planner", "Does the planner's model match what was measured?",
     "The planner's model (the cover letter's and one panel per platform, kernel and region size of the "
     "records it models) against the measured page-table memory.",
     []),
]


def clock_table(readme=None):
    """kernel/vm/README.md's clock table: NAME -> what the guest's times
    are; and what the instruction clock cannot show."""
    readme = readme or os.path.join(ROOT, "kernel", "vm", "README.md")
    try:
        with runrecords.open_regular(readme) as f:
            text = f.read()
    except OSError:
        return {}, ""
    table = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[2].startswith("`guest-"):
            table[cells[2].strip("`")] = cells[3]
    m = re.search(r"What it cannot show:(.*?extra\.)", text, re.S)
    cannot = " ".join(m.group(1).split()) if m else ""
    return table, cannot


def _size(v):
    return runrecords.human(v, "bytes") if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def read_kv(path):
    out = {}
    try:
        with runrecords.open_regular(path) as f:
            for line in f:
                k, sep, v = line.rstrip("\n").partition("=")
                if sep:
                    out[k] = v
    except OSError:
        pass
    return out


FIELDS = ("kernel", "build", "cpu", "cpus", "memory", "numa_nodes", "hostname", "tool_version", "clock", "unit", "timer",
          "schema", "backing", "slurm_cluster", "slurm_partition", "slurm_array_job")


def conditions(run):
    """One dict per platform of the records: kernel, build key, clock,
    CPU, memory, pmem..., with every distinct value the records hold."""
    table, cannot = clock_table()
    by_platform = {}
    for pid in run.point_ids():
        point = run.point_by_id.get(pid, {})
        for _, r in run.records.get(pid, []):
            env = r.get("environment") if isinstance(r.get("environment"), dict) else {}
            platform = str(point.get("platform") or env.get("platform") or "host")
            c = by_platform.get(platform)
            if c is None:
                c = by_platform[platform] = {"platform": platform, "records": 0}
                for key in FIELDS:
                    c[key] = []
                c["slurm_count"], c["slurm_none"] = {}, 0
            c["records"] += 1
            slurm = env.get("slurm") if isinstance(env.get("slurm"), dict) else {}
            if slurm.get("node"):
                c["slurm_count"][str(slurm["node"])] = c["slurm_count"].get(str(slurm["node"]), 0) + 1
            else:
                c["slurm_none"] += 1
            for key, value in (("kernel", env.get("kernel")), ("build", env.get("kernel_version")),
                               ("cpu", env.get("cpu")), ("cpus", env.get("cpus")),
                               ("memory", _size(env.get("mem_total_bytes"))),
                               ("numa_nodes", env.get("numa_nodes")), ("hostname", env.get("hostname")),
                               ("tool_version", env.get("tool_version")), ("clock", env.get("clock")),
                               ("unit", env.get("time_unit")),
                               ("timer", runrecords.lookup(r, "results.clock")),
                               ("schema", r.get("schema_version")),
                               ("backing", runrecords.lookup(r, "results.fs_type")),
                               ("slurm_cluster", slurm.get("cluster")), ("slurm_partition", slurm.get("partition")),
                               ("slurm_array_job", slurm.get("array_job_id"))):
                if value is not None and value != "" and str(value) not in c[key]:
                    c[key].append(str(value))
    out = []
    for platform in sorted(by_platform):
        c = by_platform[platform]
        clocks = c["clock"]
        notes = []
        for name in clocks:
            what = table.get(name)
            if what:
                notes.append("%s: %s" % (name, what))
            elif name == "host-ns":
                notes.append("host-ns: hardware nanoseconds of the host's clock (%s), on the CPU named below."
                             % (" / ".join(c["timer"]) or "CLOCK_MONOTONIC"))
            elif name == "guest-unknown":
                notes.append("guest-unknown: the guest did not say how QEMU ran it (no /etc/mshare-bench-clock);"
                             " its times are emulated or hardware, the record cannot tell.")
            if name == "guest-instructions" and cannot:
                notes.append("What it cannot show: " + cannot)
        if not clocks:
            if platform == "guest":
                tcg = any("TCG" in x for x in c.get("cpu", []))
                notes.append("The records do not name their clock (environment.clock is newer than them). "
                             + ("Their CPU is QEMU TCG: times are emulated, not hardware time; compare "
                                "backends within this run, not absolute times." if tcg else
                                "Times are the guest's, not the host's."))
            else:
                notes.append("Host times: hardware nanoseconds of %s on the CPU named below (the records' "
                             "results.clock; environment.clock is newer than them)."
                             % (" / ".join(c["timer"]) or "the host's monotonic clock"))
        c["clock_notes"] = notes
        # Where the records ran when a Slurm task ran them (environment.slurm;
        # a guest's own host name is the VM's, "(none)"): None for a run
        # that never went through Slurm, so its page has no such row.
        c["slurm_nodes"] = sorted(c["slurm_count"])
        c["slurm"] = None
        if c["slurm_count"]:
            parts = ["node%s %s" % ("s" if len(c["slurm_count"]) > 1 else "", ", ".join(
                "%s (%d record%s)" % (n, k, "" if k == 1 else "s") for n, k in sorted(c["slurm_count"].items())))]
            for key, label in (("slurm_cluster", "cluster"), ("slurm_partition", "partition"),
                               ("slurm_array_job", "array job")):
                if c[key]:
                    parts.append("%s%s %s" % (label, "s" if len(c[key]) > 1 else "", ", ".join(c[key])))
            if c["slurm_none"]:
                parts.append("%d record%s without Slurm ids (run outside Slurm)" % (
                    c["slurm_none"], "" if c["slurm_none"] == 1 else "s"))
            c["slurm"] = "; ".join(parts)
        c["clock_shown"] = clocks or (["%s (results.clock)" % t for t in c["timer"]] if platform == "host" else []) \
            or ["not recorded"]
        if c["unit"]:
            c["time_unit"] = ", ".join(c["unit"]) + (
                " (the records' _ns fields count guest instructions)" if "instructions" in c["unit"] else "")
        else:
            c["time_unit"] = ("guest instructions (the records' _ns fields count instructions)"
                              if clocks == ["guest-instructions"] else "ns" if clocks or platform == "host"
                              else "ns (emulated)")
        out.append(c)
    return out


def vm_envs(run):
    """guest/boot-*/vm-env.txt of the run: the VM's pmem and set-up."""
    out = []
    for path in sorted(glob.glob(os.path.join(run.path, "guest", "boot-*", "vm-env.txt"))):
        kv = read_kv(path)
        boot = os.path.basename(os.path.dirname(path))
        pmem = None
        if kv.get("pmem_mode") or kv.get("pmem_bytes"):
            pmem = "%s %s, %s, fsdax align %s, DAX %s" % (
                kv.get("pmem_dev", "?"), _size(runrecords.number(kv.get("pmem_bytes"))) or "?",
                kv.get("pmem_mode", "?"), kv.get("fsdax_align", "?"),
                {"1": "on", "0": "off"}.get(kv.get("dax"), kv.get("dax", "?")))
        out.append({"boot": boot, "pmem": pmem, "kernel": kv.get("kernel"), "clock": kv.get("clock"),
                    "accel": kv.get("accel"), "cpus": kv.get("cpus"),
                    "memory": _size((runrecords.number(kv.get("mem_total_kb")) or 0) * 1024) if kv.get(
                        "mem_total_kb") else None,
                    "link": os.path.relpath(path, run.path)})
    return out


# Figures whose 0 means "none" (a pt-footprint run does no operations).
ZERO_IS_NONE = {"ops_per_s"}


def point_values(run, pid, metric):
    if metric in ZERO_IS_NONE:
        return [v for v in run.values(pid, metric) if v]
    if metric in EXTRA:
        fn = EXTRA[metric][0]
        vals = [fn(r) for _, r in run.records.get(pid, [])]
        return [v for v in vals if v is not None]
    return run.values(pid, metric)


def metric_unit_label(metric):
    if metric in EXTRA:
        return EXTRA[metric][1], EXTRA[metric][2]
    m = runrecords.METRIC_BY_NAME[metric]
    return m[2], m[3]


def fmt(value, unit):
    if value is None:
        return "-"
    if unit == "instructions":
        return "{:,.0f} instructions".format(value)
    if unit == "count":
        return "%.3g" % value if abs(value) < 1000 else "{:,.0f}".format(value)
    return runrecords.human(value, unit)


def question_table(run, metrics):
    """Rows of (point, its numbers) for the points with any of metrics."""
    cols = []
    for m in metrics:
        unit, label = metric_unit_label(m)
        cols.append({"name": m, "label": label,
                     "unit": {"count": "", "1/s": "per s", "ns": "time: the platform's clock",
                              "time": "time: the record's clock"}.get(unit, unit)})
    rows = []
    for pid in run.point_ids():
        if pid not in run.records:
            continue
        p = run.point_by_id.get(pid, {})
        # Under the instruction clock a guest's "ns" are instructions.
        instructions = all(runrecords.lookup(r, "environment.clock") == "guest-instructions"
                           for _, r in run.records[pid])
        cells, any_value = [], False
        for m in metrics:
            unit, _ = metric_unit_label(m)
            if unit in ("ns", "time"):
                unit = "instructions" if instructions else "ns"
            s = runrecords.spread(point_values(run, pid, m))
            if s is None:
                cells.append({"median": "-", "range": "", "wide": False, "raw": ""})
                continue
            any_value = True
            wide = s["n"] > 1 and s["median"] not in (0, None) and \
                (s["max"] - s["min"]) / abs(s["median"]) > SPREAD_FLAG
            cells.append({"median": fmt(s["median"], unit),
                          "range": "" if s["n"] < 2 else "%s to %s" % (fmt(s["min"], unit), fmt(s["max"], unit)),
                          "wide": wide, "raw": repr(s["median"])})
        if any_value:
            rows.append({"id": pid, "platform": p.get("platform", ""), "backend": p.get("backend", ""),
                         "page": p.get("page", ""), "workers": p.get("workers", ""), "size": p.get("size", ""),
                         "workload": p.get("workload", ""), "n": len(run.records[pid]), "cells": cells})
    return cols, rows


def lines_of(path):
    try:
        with runrecords.open_regular(path) as f:
            return [line.rstrip("\n") for line in f if line.strip()]
    except OSError:
        return []


def problems(run):
    """Failed runs, skipped points, and records that say workers failed."""
    failed = [{"id": line.split(":", 1)[0], "why": line.split(":", 1)[1].strip() if ":" in line else ""}
              for line in lines_of(os.path.join(run.path, "failed.txt"))]
    skipped = [{"id": line.split(":", 1)[0], "why": line.split(":", 1)[1].strip() if ":" in line else ""}
               for line in lines_of(os.path.join(run.path, "skipped.txt"))]
    for pid in sorted(run.failed_records):
        for rep, why in sorted(run.failed_records[pid]):
            failed.append({"id": "%s r%d" % (pid, rep), "why": "measured nothing: %s (records/%s.r%d.json)"
                           % (why, pid, rep)})
    troubled = []
    for pid in run.point_ids():
        for rep, r in run.records.get(pid, []):
            why = []
            for key, label in (("results.workers_failed", "workers failed"),
                               ("results.workers_crashed", "workers crashed"),
                               ("results.oom_killed", "OOM-killed"),
                               ("results.sigkilled_not_oom", "SIGKILLed (not OOM)")):
                v = runrecords.number(runrecords.lookup(r, key))
                if v:
                    why.append("%s %g" % (label, v))
            for key in ("results.fork_error", "results.first_worker_error"):
                v = runrecords.lookup(r, key)
                if v:
                    why.append(str(v))
            if why:
                troubled.append({"id": pid, "repeat": rep, "why": "; ".join(why),
                                 "link": "records/%s.r%d.json" % (pid, rep)})
    listed = {p["id"] for p in run.points}
    missing = [pid for pid in listed if pid not in run.records and pid not in run.failed_records
               and pid not in {x["id"] for x in failed + skipped}]
    return failed, skipped, troubled, sorted(missing)


def figures(run, report_tmp):
    """SVG figures: the run's plots/ when it has them (linked as
    ../plots/NAME.svg), else drawn by plots/plot-run into the report."""
    plots = os.path.join(run.path, "plots")
    # An empty file is a figure gnuplot did not draw (plot-run says so).
    svgs = sorted(os.path.basename(p) for p in glob.glob(os.path.join(plots, "*.svg")) if os.path.getsize(p) > 0)
    if svgs:
        return ["../plots/" + s for s in svgs], None
    if not run.records:
        return [], "no records: nothing to draw"
    # plot-run draws into <run>/plots; draw a copy of the run's manifest
    # and records in a scratch directory so that the run itself is not
    # touched, then keep the SVGs in the report.
    scratch = tempfile.mkdtemp(prefix="report-plots-", dir=report_tmp)
    try:
        work = os.path.join(scratch, os.path.basename(os.path.normpath(run.path)))
        os.makedirs(work)
        shutil.copy(os.path.join(run.path, "manifest.json"), work)
        shutil.copytree(os.path.join(run.path, "records"), os.path.join(work, "records"))
        r = subprocess.run([os.path.join(ROOT, "plots", "plot-run"), work], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, cwd=ROOT)
        out = os.path.join(report_tmp, "figures")
        os.makedirs(out, exist_ok=True)
        # The figures it drew are the ones it prints; its warnings (a
        # figure not drawn, and why) go on the page with the paths made
        # the run's own.
        names = sorted(os.path.basename(p) for p in r.stdout.splitlines()
                       if p.endswith(".svg") and os.path.isfile(p) and os.path.getsize(p) > 0)
        for n in names:
            shutil.copy(os.path.join(work, "plots", n), os.path.join(out, n))
        warnings = [line for line in r.stderr.splitlines() if line.startswith("plot-run:")]
        note = "; ".join(w.replace(work, run.name) for w in warnings) or None
        if r.returncode != 0:
            note = "plots/plot-run exited %d%s" % (r.returncode, ": " + note if note else "")
        return ["figures/" + n for n in names], note
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def lead_table(run_arg):
    """The lead comparison as table rows (bench/headline --json): setup, page
    size, bytes per process, in all, saving against mshare's best; [] when
    the run has none."""
    r = subprocess.run([os.path.join(ROOT, "bench", "headline"), "--json", run_arg], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        setups = json.loads(r.stdout)["setups"] if r.returncode == 0 else []
    except (ValueError, KeyError):
        return []
    rows = []
    for x in setups:
        page = x.get("page")
        rows.append({"setup": x["label"], "mshare": x["mshare"],
                     "page": _size(page) if page else "not known",
                     "per_process": ("%.1f B" % x["per_process"]) if x["per_process"] < 100 else _size(x["per_process"]),
                     "total": _size(x["total"]),
                     "saving": "-" if x["mshare"] else _size(x["saving_vs_mshare"]) if x["saving_vs_mshare"] >= 0
                     else "-" + _size(-x["saving_vs_mshare"]),
                     "levels": {"pte+pmd+pud": "PTE, PMD, PUD", "pte+pmd": "PTE, PMD (no PUD)"}.get(
                         x["levels"], "not recorded (records before schema 8)")})
    return rows


def headline(run_arg):
    r = subprocess.run([os.path.join(ROOT, "bench", "headline"), run_arg], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, cwd=ROOT)
    # On no headline it says why, on stdout or stderr: both are shown.
    why = "\n".join(x.strip() for x in (r.stdout, r.stderr) if x.strip())
    lines = r.stdout.splitlines()
    return {"ok": r.returncode == 0, "text": r.stdout.rstrip("\n"),
            "lead": lines[0] if r.returncode == 0 and lines and lines[0].startswith("at ") else "",
            "table": lead_table(run_arg) if r.returncode == 0 else [],
            "error": (why or "bench/headline exited %d" % r.returncode) if r.returncode else ""}


def sharing_section(run, figs):
    """What sharing costs (issue 42), when the run has lifecycle or
    fault-locks records: the headline's block (the same lines), the
    figure of counts against sharers, and a table per operation, backend
    and sharer count (time and counts from the records); None otherwise."""
    lines = sharing.lifecycle_lines(run) + sharing.fault_locks_lines(run)
    if not lines:
        return None
    rows = []
    for backend, page_mode, workers, size, r in sorted(sharing.lifecycle_records(run),
                                                        key=lambda x: (sharing._order(x[:2]), x[2])):
        for op, _ in sharing.OPS:
            o = runrecords.lookup(r, "results.workload.ops.%s" % op)
            if not isinstance(o, dict):
                continue
            cells = [runrecords.human_time(sharing.op_time(r, op), "ns") if o.get("rounds") else
                     "refused (%s)" % o.get("errno", "?")]
            cells += [sharing.count(sharing.op_count(r, op, k)) if o.get("rounds") and
                      sharing.op_count(r, op, k) is not None else "-" for k in SHARING_COUNTS]
            rows.append({"op": op, "backend": sharing.label(backend, page_mode), "workers": sharing.count(workers),
                         "size": _size(size), "cells": cells,
                         "raw": [sharing.op_count(r, op, k) for k in SHARING_COUNTS]})
    return {"text": "\n".join(lines), "rows": rows, "cols": SHARING_COLS,
            "figures": [{"src": f, "name": os.path.basename(f)} for f in figs
                        if os.path.basename(f).startswith("9-sharing-costs")]}


SHARING_COUNTS = ["kprobe_flush_tlb_mm_range", "nr_tlb_remote_flush", "irq_tlb_shootdowns", "kprobe_do_flush_tlb_all",
                  "ptl_acquisitions", "i_mmap_rwsem_acquisitions", "mmap_lock_contentions", "ptl_contentions"]
SHARING_COLS = ["time (min over rounds; the records' clock)", "flush_tlb_mm_range calls", "remote flushes",
                "TLB shootdown IPIs", "CPUs' full flushes", "page-table lock acquisitions",
                "i_mmap_rwsem acquisitions", "mmap_lock contentions", "page-table lock contentions"]


def page(run, run_arg, report_tmp):
    figs, fig_note = figures(run, report_tmp)
    sections, used = [], set()
    shared = sharing_section(run, figs)
    if shared:
        used.update(f["src"] for f in shared["figures"])
    for anchor, prefix, title, caption, metrics in QUESTIONS:
        mine = [f for f in figs if os.path.basename(f).startswith(prefix)]
        used.update(mine)
        cols, rows = question_table(run, metrics) if metrics else ([], [])
        if not mine and not rows:
            continue
        sections.append({"anchor": anchor, "title": title, "caption": caption,
                         "figures": [{"src": f, "name": os.path.basename(f)} for f in mine],
                         "cols": cols, "rows": rows})
    other = [{"src": f, "name": os.path.basename(f)} for f in figs if f not in used]
    failed, skipped, troubled, missing = problems(run)
    m = run.manifest
    menv = m.get("environment") if isinstance(m.get("environment"), dict) else {}
    records = [{"href": "../records/%s.r%d.json" % (pid, rep), "name": "%s.r%d.json" % (pid, rep)}
               for pid in run.point_ids() for rep, _ in run.records.get(pid, [])]
    data_files = [n for n in ("records.csv", "summary.csv", "summary.txt", "failed.txt", "skipped.txt",
                              "runs.log") if os.path.exists(os.path.join(run.path, n))]
    created = m.get("created")
    if not created:
        stamp = re.search(r"-(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$", run.name)
        if stamp:
            created = "%s-%s-%sT%s:%s:%sZ (from the directory's name; the manifest has no date)" % stamp.groups()
    return {
        "name": run.name,
        "created": created,
        "manifest": {k: m.get(k) for k in ("sweep", "description", "spec_path", "command", "created",
                                           "repeats", "timeout", "vm_args")},
        "spec_text": m.get("spec_text") or "",
        "runner": {"kernel": menv.get("kernel"), "build": menv.get("kernel_version"), "cpu": menv.get("cpu"),
                   "cpus": menv.get("cpus_online"),
                   "memory": _size((runrecords.number(menv.get("mem_total_kib")) or 0) * 1024)
                   if menv.get("mem_total_kib") else None,
                   "hostname": menv.get("hostname"), "tool_version": menv.get("tool_version"),
                   "harness_version": menv.get("harness_version")},
        "headline": headline(run_arg),
        "sharing": shared,
        "platforms": conditions(run),
        "vms": vm_envs(run),
        "sections": sections,
        "other_figures": other,
        "figure_note": fig_note,
        "failed": failed, "skipped": skipped, "troubled": troubled, "missing": missing,
        "records": records, "data_files": data_files,
        "npoints": len(run.points), "nrecords": len(records),
        "spread_flag": int(SPREAD_FLAG * 100),
    }


def render(context):
    j = jinja()
    env = j.Environment(loader=j.FileSystemLoader(TEMPLATES), autoescape=True,
                        undefined=j.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                        keep_trailing_newline=True)
    return env.get_template("report.html.j2").render(**context)


def publish(final, build):
    """Make directory FINAL holding index.html = build(scratch): built in a
    scratch directory beside FINAL (build may put figures there too), then
    swapped in, so a reader sees the old page or the new one, never half of
    one. Returns the path of index.html."""
    parent = os.path.dirname(final)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".report-tmp-", dir=parent)
    try:
        html = build(tmp)
        with open(os.path.join(tmp, "index.html"), "w") as f:
            f.write(html)
        os.chmod(tmp, 0o755)
        old = None
        if os.path.exists(final):
            old = tempfile.mkdtemp(prefix=".report-old-", dir=parent)
            os.rename(final, os.path.join(old, "report"))
        os.rename(tmp, final)
        tmp = None
        if old:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    return os.path.join(final, "index.html")


def write_report(run_dir, run_arg):
    """Write RUN_DIR/report/index.html and its figures (see publish)."""
    run = runrecords.Run(run_dir)
    return publish(os.path.join(run_dir, "report"),
                   lambda tmp: render(page(run, run_arg, tmp)))
