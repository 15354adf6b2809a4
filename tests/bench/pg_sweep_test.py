import json
import re
import os
import subprocess
import tempfile

import tap

t = tap.Tap()
TOOL = os.path.join(tap.ROOT, "bench", "pg-sweep")


def run(*args):
    return subprocess.run([TOOL] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)


SPEC = """name = pgt
modes = 4k, mshare-dax
connections = 10, 20
shared_buffers = 64MB
scale = 2
duration = 10
vm-args = --mem 2G
"""

PGBENCH = """pgbench: pgbench (15.18 (Debian 15.18-0+deb12u1))
pgbench: number of transactions actually processed: 5000
pgbench: latency average = 20.000 ms
pgbench: initial connection time = 400.000 ms
pgbench: tps = 500.000000 (without initial connection time)
"""


def facts(mode, n, **over):
    f = {"mode": mode, "connections": n, "shared_buffers": "64MB", "scale": 2, "duration_s": 10,
         "segment_bytes": 75, "segment_line": "", "mem_total_kb": 2000000, "pagetables_before_kb": 1000,
         "connected_after_s": 2, "backends_connected": n, "backends_measured": n, "pagetables_end_kb": 3048,
         "vmpte_sum_kb": 2000, "minflt_delta": 9000, "rss_shmem_sum_kb": 81920, "rss_anon_sum_kb": 1000,
         "vmpte_min_kb": 96, "vmpte_max_kb": 104, "mem_available_kb_end": 1000000, "commits_delta": 4500,
         "pgbench_still_running": "yes", "backends_in_snapshot": n, "pgbench_rc": 0, "latency_samples": 5000, "latency_p50_us": 9000,
         "latency_p99_us": 150000, "latency_max_us": 400000, "latency_mean_us": 19000}
    f.update(over)
    return "".join("%s=%s\n" % kv for kv in f.items()) + PGBENCH


def facts_now(mode, n, **over):
    """Guest output of the current pg-bench.sh: both stat reads, the same
    backends, transactions counted in pgbench's log (commits_delta gone)."""
    f = {"backends_in_stat_snapshot0": n, "backends_in_stat_snapshot": n, "same_backends": "yes",
         "transactions_in_window": 3000, "fault_window_cs": 1500, "mem_available_kb_before": 1500000,
         "mem_free_kb_before": 1400000, "mem_free_kb_end": 1300000, "commits_delta": None}
    f.update(over)
    return facts(mode, n, **f).replace("commits_delta=None\n", "")


with tempfile.TemporaryDirectory() as d:
    spec = os.path.join(d, "pgt.sweep")
    open(spec, "w").write(SPEC)
    r = run(spec, "--dry-run")
    t.ok(r.returncode == 0 and r.stdout.split() == [
        "guest-4k-c10-s64MB-pgbench-select", "guest-4k-c20-s64MB-pgbench-select",
        "guest-mshare-dax-c10-s64MB-pgbench-select", "guest-mshare-dax-c20-s64MB-pgbench-select"],
        "--dry-run lists one point per mode and connection count", r.stdout + r.stderr)
    for bad, want in [("modes = 4k, 8k", "pgt.sweep:1: mode '8k'"),
                      ("connections = 10, x", "connection count 'x'"),
                      ("shared_buffers = 64", "shared_buffers '64'"),
                      ("duration = 2", "duration '2'"),
                      ("colour = red", "unknown key 'colour'")]:
        key = bad.split(" =")[0]
        lines = [bad if l.startswith(key + " ") else l for l in SPEC.splitlines()]
        if not any(l == bad for l in lines):
            lines = [bad] + lines
        # The bad line first, so the message names line 1.
        lines = [bad] + [l for l in lines if l != bad and not l.startswith(key + " ")]
        open(spec, "w").write("\n".join(lines) + "\n")
        r = run(spec, "--dry-run", "--results", d)
        t.ok(r.returncode == 2 and want in r.stderr and "pgt.sweep:1" in r.stderr and not r.stdout,
             "refused, naming line and value: %s" % bad, r.stderr)
    open(spec, "w").write(SPEC + "duration = 20\n")
    r = run(spec, "--dry-run")
    t.ok(r.returncode == 2 and "duration set twice" in r.stderr, "a key set twice is refused", r.stderr)
    open(spec, "w").write(SPEC)

    boot = os.path.join(d, "boot")
    os.makedirs(os.path.join(boot, "pg"))
    open(os.path.join(boot, "vm-env.txt"), "w").write(
        "kernel=6.1.192\nkernel_version=#1 SMP mshare-bench-28patches\ncpus=2\nmem_total_kb=2000000\nmshare_size=549755813888\n")
    open(os.path.join(boot, "pg", "4k-c10.facts"), "w").write(facts("4k", 10))
    open(os.path.join(boot, "pg", "4k-c20.facts"), "w").write(facts("4k", 20, backends_measured=12, backends_in_snapshot=12))
    open(os.path.join(boot, "pg", "mshare-dax-c10.facts"), "w").write(facts("mshare-dax", 10, vmpte_sum_kb=1000))
    results = os.path.join(d, "results")
    r = run(spec, "--facts", boot, "--results", results)
    rundir = r.stdout.strip()
    t.ok(r.returncode == 1 and os.path.isdir(rundir), "--facts: a run directory; exit 1 as points are missing", r.stderr)
    failed = open(os.path.join(rundir, "failed.txt")).read() if os.path.isdir(rundir) else ""
    t.ok("guest-4k-c20-s64MB-pgbench-select: page tables and faults not measured: the snapshot held 12 of 20" in failed and
         "guest-mshare-dax-c20-s64MB-pgbench-select: no facts" in failed,
         "a point whose snapshot missed backends, and one never reached, are listed", failed)
    recs = sorted(os.listdir(os.path.join(rundir, "records"))) if os.path.isdir(rundir) else []
    t.ok(recs == ["guest-4k-c10-s64MB-pgbench-select.r1.json", "guest-4k-c20-s64MB-pgbench-select.r1.json",
                  "guest-mshare-dax-c10-s64MB-pgbench-select.r1.json"], "records for the points reached", recs)
    part = json.load(open(os.path.join(rundir, "records", recs[1]))) if len(recs) > 1 else {}
    pr = part.get("results", {})
    t.ok(pr.get("snapshot_valid") is False and pr["pagetables"]["vmpte_sum_bytes"] is None and
         pr["pagetables"]["meminfo_delta_bytes"] is None and pr["faults"]["minflt"] is None and
         pr["workload"]["ops_per_s"] == 500.0, "a missed snapshot: pgbench's figures kept, page tables and faults null",
         json.dumps(pr.get("pagetables")))
    rec = json.load(open(os.path.join(rundir, "records", recs[0]))) if recs else {}
    res = rec.get("results", {})
    t.ok(rec.get("config", {}).get("backend") == "4k" and rec["config"]["workload"] == "pgbench-select" and
         rec["config"]["workers"] == 10 and rec["config"]["size_bytes"] == 75 << 20 and
         rec["environment"]["platform"] == "guest", "config and environment: backend = mode, workload, N, segment size, guest",
         json.dumps(rec.get("config")))
    def prose_keys(v, path=""):
        if isinstance(v, dict):
            return [path + k for k in v if k in ("views", "scope", "meaning")] + \
                [x for k, w in v.items() for x in prose_keys(w, path + k + ".")]
        return []
    t.ok(rec.get("schema_version") == 3 and rec and not prose_keys(rec),
         "schema_version 3: no explanation repeated in the record (results/README.md has them)",
         "schema_version %s, prose keys %s" % (rec.get("schema_version"), prose_keys(rec)))
    pt = res.get("pagetables", {})
    t.ok(pt.get("meminfo_delta_bytes") == 2048 * 1024 and pt.get("vmpte_sum_bytes") == 2000 * 1024 and
         pt.get("vmpte_per_worker_bytes") == 2000 * 1024 // 10,
         "page tables: PageTables delta, sum of VmPTE and per backend from the facts", json.dumps(pt))
    t.ok(res.get("faults", {}).get("minflt_per_transaction") == 2.0 and res["workload"]["ops_per_s"] == 500.0 and
         res["workload"]["op_latency_ns"]["p99"] == 150000 * 1000 and res["time_s"]["connect_all"] == 0.4 and
         res["time_s"]["attach"] == 0.04, "minor faults per transaction, TPS, p99, connection set-up", json.dumps(res.get("faults")))
    summary = open(os.path.join(rundir, "summary.txt")).read() if os.path.isdir(rundir) else ""
    t.ok("MODELLED" in summary and re.search(r"^4k +10 +0\.40 s +500 +19\.00 ms +150\.0 ms +2 MiB", summary, re.M) and
         re.search(r"^mshare-dax +20 +\(no record\)", summary, re.M),
         "summary.txt: the table, the planner's 4k figures marked MODELLED", summary[-1500:])
    for tool in (["bench/compare", rundir, rundir], ["bench/side-by-side", rundir]):
        r = subprocess.run(tool, cwd=tap.ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
        t.ok(r.returncode == 0 and "pgbench-select" in r.stdout,
             "%s runs on the run directory" % tool[0], r.stdout[-800:] + r.stderr)
    if os.path.exists(tap.HARNESS):
        r = subprocess.run([tap.HARNESS, "plan", "--calibrate", rundir], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=60)
        t.ok(r.returncode == 2 and "3 record(s), 3 skipped" in r.stdout and
             "workload 'pgbench-select': the part of the region it touches is not modelled" in r.stdout,
             "plan --calibrate reads the records and says why it does not model them (exit %d)" % r.returncode,
             r.stdout[-800:] + r.stderr)
    else:
        t.skip("plan --calibrate on the run directory", "build/mshare-bench not built")

# The current guest output: transactions from pgbench's log, a figure that
# could not be read reported as not measured (never 0), a snapshot whose
# backends changed or whose stat read missed some is not valid; --host.
SPEC2 = SPEC.replace("name = pgt", "name = pgt2").replace("modes = 4k, mshare-dax", "modes = 4k, hugetlb-2m, mshare-shmem") \
    .replace("connections = 10, 20", "connections = 10, 30")
with tempfile.TemporaryDirectory() as d:
    spec = os.path.join(d, "pgt2.sweep")
    open(spec, "w").write(SPEC2)
    boot = os.path.join(d, "boot")
    os.makedirs(os.path.join(boot, "pg"))
    open(os.path.join(boot, "vm-env.txt"), "w").write("kernel=6.1.192\ncpus=2\nmem_total_kb=2000000\nmshare_size=549755813888\n")
    pts = {"4k-c10": facts_now("4k", 10),
           "4k-c30": facts_now("4k", 30, pagetables_end_kb="", transactions_in_window=""),
           "hugetlb-2m-c10": facts_now("hugetlb-2m", 10, same_backends="no"),
           "hugetlb-2m-c30": facts_now("hugetlb-2m", 30, backends_in_stat_snapshot=29),
           "mshare-shmem-c10": facts_now("mshare-shmem", 10, pgbench_still_running="no", pgbench_T_s=27),
           "mshare-shmem-c30": facts_now("mshare-shmem", 30, minflt_delta="")}
    for k, v in pts.items():
        open(os.path.join(boot, "pg", k + ".facts"), "w").write(v)
    results = os.path.join(d, "results")
    r = run(spec, "--facts", boot, "--results", results)
    rundir = r.stdout.strip()
    failed = open(os.path.join(rundir, "failed.txt")).read() if os.path.isdir(rundir) else ""
    recs = {}
    for k in pts:
        mode, n = k.rsplit("-c", 1)
        path = os.path.join(rundir, "records", "guest-%s-c%s-s64MB-pgbench-select.r1.json" % (mode, n)) if rundir else ""
        recs[k] = json.load(open(path))["results"] if os.path.exists(path) else {}
    t.ok(r.returncode == 1 and len([x for x in recs.values() if x]) == 6, "--facts: every point recorded, exit 1 (some not measured)",
         r.stderr[-600:])
    good = recs["4k-c10"]
    t.ok(good.get("snapshot_valid") is True and good["faults"]["transactions"] == 3000 and
         good["faults"]["minflt_per_transaction"] == 3.0 and good["faults"]["window_s"] == 15.0 and
         "pgbench's per-transaction log" in good["faults"]["transactions_source"] and good.get("missing") == [] and
         "guest-4k-c10" not in failed,
         "minor faults per transaction over the transactions pgbench logged in the fault window", json.dumps(good.get("faults")))
    part = recs["4k-c30"]
    t.ok(part.get("snapshot_valid") is True and part["pagetables"]["meminfo_delta_bytes"] is None and
         part["faults"]["minflt_per_transaction"] is None and part["pagetables"]["vmpte_sum_bytes"] == 2000 * 1024 and
         "PageTables delta" in part.get("missing", []) and
         re.search(r"guest-4k-c30-s64MB-pgbench-select: not measured although the snapshot is valid: PageTables delta.*"
                   r"transactions in the fault window", failed),
         "a figure the guest could not read is null and listed as not measured, not 0", failed)
    t.ok("guest-hugetlb-2m-c10-s64MB-pgbench-select: page tables and faults not measured: the backends at the snapshot "
         "were not those connected" in failed and recs["hugetlb-2m-c10"].get("snapshot_valid") is False and
         recs["hugetlb-2m-c10"]["faults"]["minflt"] is None,
         "a snapshot of other backends than the window's start is not valid", failed)
    t.ok("guest-hugetlb-2m-c30-s64MB-pgbench-select: page tables and faults not measured: the stat snapshot held 29 of 30"
         in failed and recs["hugetlb-2m-c30"]["pagetables"]["vmpte_sum_bytes"] is None,
         "a stat snapshot that missed a backend is not valid", failed)
    t.ok("guest-mshare-shmem-c10-s64MB-pgbench-select: page tables and faults not measured: pgbench had ended by the "
         "snapshot (its -T of 27 s was too short)" in failed, "a snapshot after pgbench ended is not valid", failed)
    t.ok("minor faults" in recs["mshare-shmem-c30"].get("missing", []) and
         recs["mshare-shmem-c30"]["faults"]["minflt_per_transaction"] is None, "empty minflt: not measured", failed)
    summary = open(os.path.join(rundir, "summary.txt")).read() if os.path.isdir(rundir) else ""
    t.ok(re.search(r"^4k +30 +0\.40 s +500 +19\.00 ms +150\.0 ms +- ", summary, re.M) and "never 0" in summary,
         "summary.txt: a figure not measured is '-'", summary[-1500:])

    r = run(spec, "--host", "--dry-run")
    t.ok(r.returncode == 2 and "mshare-shmem need mshare" in r.stderr and "--host runs 4k and hugetlb-2m" in r.stderr,
         "--host refuses the mshare modes, naming them", r.stderr)
    open(spec, "w").write(SPEC2.replace("4k, hugetlb-2m, mshare-shmem", "4k, hugetlb-2m"))
    r = run(spec, "--host", "--dry-run")
    t.ok(r.returncode == 0 and r.stdout.split() == ["host-4k-c10-s64MB-pgbench-select", "host-4k-c30-s64MB-pgbench-select",
                                                    "host-hugetlb-2m-c10-s64MB-pgbench-select",
                                                    "host-hugetlb-2m-c30-s64MB-pgbench-select"],
         "--host --dry-run: points with the host- prefix", r.stdout + r.stderr)
    hboot = os.path.join(d, "hboot")
    os.makedirs(os.path.join(hboot, "pg"))
    open(os.path.join(hboot, "pg", "4k-c10.facts"), "w").write(facts_now("4k", 10))
    r = run(spec, "--host", "--facts", hboot, "--results", results)
    hdir = r.stdout.strip()
    hp = os.path.join(hdir, "records", "host-4k-c10-s64MB-pgbench-select.r1.json") if hdir else ""
    hrec = json.load(open(hp)) if hp and os.path.exists(hp) else {}
    t.ok(os.path.basename(hdir).startswith("pgt2-host-") and hrec.get("environment", {}).get("platform") == "host" and
         hrec["config"]["addr"] is None and hrec["results"]["faults"]["minflt_per_transaction"] == 3.0 and
         os.path.isdir(os.path.join(hdir, "host", "pg")),
         "--host --facts: records say platform host, run directory <name>-host-*", r.stderr[-600:])
t.done()
