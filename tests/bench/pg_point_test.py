"""PostgreSQL points through the one sweep pipeline (issue 45), no guest: a
stand-in VM runner plays the guest (it writes what pg-bench.sh and the
guest's harness would: pg/<tag>.facts, pg/<tag>.frame.json, status), so
that bench/sweep's own code turns the output into records, resumes, reports
its status, and the tools read the run."""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

import tap
import pgpoint

t = tap.Tap()
SWEEP = os.path.join(tap.ROOT, "bench", "sweep")

SPEC = """name = pgt
platform = guest
workloads = postgres
backends = anon, mshare
workers = 10, 20
sizes = 64M
args = --preset select --scale 2 --window 10
vm-args = --mem 2G --pmem 2 --align 2M
clock = instructions
"""

# The stand-in VM runner: reads points.sh as the guest would run it, and
# for every PostgreSQL point writes the guest harness's frame (its clock
# from the boot's --clock, the Slurm ids points.sh exports) and the facts
# of pg-bench.sh. A point listed in BAD (a file beside it) gets a snapshot
# that missed backends.
FAKE = r'''#!/usr/bin/env python3
import json, os, re, shlex, sys
a = sys.argv[1:]
out = a[a.index("--out") + 1]
clock = a[a.index("--clock") + 1] if "--clock" in a else "tcg"
open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "calls.log"), "a").write(" ".join(a) + "\n")
script = open(os.path.join(out, "points.sh")).read()
slurm = dict(re.findall(r"^export (SLURM\w+)=(\S+)$", script, re.M))
bad = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "BAD")).read().split() \
    if os.path.exists(os.path.join(os.path.dirname(os.path.abspath(__file__)), "BAD")) else []
os.makedirs(os.path.join(out, "pg"), exist_ok=True)
backends = json.loads(os.popen(os.environ["HARNESS"] + " backends --json").read())
for b in backends:
    if b["name"] in ("mshare", "anon"):
        b["usable"], b["why_not"] = True, None
json.dump(backends, open(os.path.join(out, "backends.json"), "w"))
for line in script.splitlines():
    m = re.search(r"pg-bench\.sh (\S+) (\S+) (\S+) (\d+) (\S+) (\d+) (\d+) (\S+) (\d+)", line)
    if not m:
        continue
    tag, mode, n, maxc = m.group(2), m.group(3), int(m.group(4)), m.group(9)
    pid, k = tag.rsplit(".r", 1)
    frame = {"schema_version": 8, "tool": "mshare-bench", "environment": {
        "kernel": "6.1.192", "kernel_version": "#1 SMP mshare-bench-30patches", "machine": "x86_64",
        "platform": "guest", "clock": {"instructions": "guest-instructions", "tcg": "guest-tcg-ns"}[clock],
        "time_unit": "instructions" if clock == "instructions" else "ns", "mshare_available": True,
        "slurm": {"node": slurm.get("SLURMD_NODENAME"), "job_id": slurm.get("SLURM_JOB_ID")}}}
    json.dump(frame, open(os.path.join(out, "pg", tag + ".frame.json"), "w"))
    held = n - 2 if pid in bad else n
    f = {"mode": mode, "connections": n, "segment_bytes": 75, "max_connections": maxc, "mem_total_kb": 2000000,
         "pagetables_before_kb": 1000, "pagetables_end_kb": 3048, "vmpte_sum_kb": 2000 if mode == "4k" else 1000,
         "minflt_delta": 9000, "rss_shmem_sum_kb": 81920, "vmpte_min_kb": 96, "vmpte_max_kb": 104,
         "backends_measured": held, "backends_in_snapshot": held, "backends_in_stat_snapshot0": n,
         "backends_in_stat_snapshot": held, "same_backends": "yes", "pgbench_still_running": "yes",
         "transactions_in_window": 3000, "fault_window_cs": 1500, "pgbench_T_s": 40, "pgbench_rc": 0,
         "latency_samples": 5000, "latency_p50_us": 9000, "latency_p99_us": 150000, "latency_max_us": 400000,
         "latency_mean_us": 19000}
    with open(os.path.join(out, "pg", tag + ".facts"), "w") as fh:
        fh.write("".join("%s=%s\n" % kv for kv in f.items()))
        fh.write("pgbench: initial connection time = 400.000 ms\npgbench: tps = 500.000000 (without initial "
                 "connection time)\npgbench: number of transactions actually processed: 5000\n")
    open(os.path.join(out, "status"), "a").write("%s r%s 0\n" % (pid, k))
'''

with tempfile.TemporaryDirectory() as d:
    spec = os.path.join(d, "pgt.sweep")
    open(spec, "w").write(SPEC)
    r = tap.run([SWEEP, spec, "--dry-run"])
    ids = [line.split()[0] for line in r.stdout.splitlines()]
    t.ok(r.returncode == 0 and ids == ["guest-anon-4k-w10-s64M-postgres", "guest-anon-4k-w20-s64M-postgres",
                                       "guest-mshare-4k-w10-s64M-postgres", "guest-mshare-4k-w20-s64M-postgres"],
         "a PostgreSQL spec is an ordinary spec: backends x workers x sizes, ids of the common form",
         r.stdout + r.stderr)
    for bad, want in [("backends = shm", "backend 'shm' is not one PostgreSQL runs on"),
                      ("args = --preset oltp", "--preset 'oltp'"),
                      ("args = --window 2", "--window '2'"),
                      ("args = --colour red", "option '--colour' is not a PostgreSQL point's"),
                      ("page = any", "page 'any'"),
                      ("write = yes", "write = yes"),
                      ("sizes = 1000", "whole 8 KiB buffers")]:
        key = bad.split(" =")[0]
        text = bad + "\n" + "".join(line + "\n" for line in SPEC.splitlines() if not line.startswith(key + " "))
        open(spec, "w").write(text)
        r = tap.run([SWEEP, spec, "--dry-run"])
        t.ok(r.returncode != 0 and want in r.stderr and "pgt.sweep:1:" in r.stderr,
             "refused before anything runs, naming the line: %s" % bad, r.stderr)
    open(spec, "w").write(SPEC.replace("platform = guest", "platform = host").replace("clock = instructions\n", ""))
    r = tap.run([SWEEP, spec, "--dry-run"])
    t.ok(r.returncode != 0 and "the host kernel has no mshare" in r.stderr, "mshare on the host is refused", r.stderr)
    open(spec, "w").write(SPEC)

    if tap.harness_missing():
        t.skip("the stand-in guest run", "build/mshare-bench missing")
        t.done()
        sys.exit(0)
    fake = os.path.join(d, "fake-run")
    open(fake, "w").write(FAKE)
    os.chmod(fake, 0o755)
    kernel = os.path.join(d, "bzImage")
    initrd = os.path.join(d, "initramfs-pg.cpio")
    open(kernel, "w").close()
    open(initrd, "w").close()
    open(os.path.join(d, "BAD"), "w").write("guest-mshare-4k-w20-s64M-postgres\n")
    env = dict(os.environ, MSHARE_VM_RUN=fake, MSHARE_VM_KERNEL=kernel, MSHARE_VM_INITRD_PG=initrd,
               HARNESS=tap.HARNESS, SLURMD_NODENAME="node7", SLURM_JOB_ID="4242")
    r = tap.run([SWEEP, spec, "--results", os.path.join(d, "res")], env=env)
    runs = glob.glob(os.path.join(d, "res", "pgt-*"))
    run = runs[0] if runs else ""
    recs = sorted(os.path.basename(p) for p in glob.glob(os.path.join(run, "records", "*.json")))
    t.ok(r.returncode == 1 and recs == ["guest-anon-4k-w10-s64M-postgres.r1.json", "guest-anon-4k-w20-s64M-postgres.r1.json",
                                       "guest-mshare-4k-w10-s64M-postgres.r1.json"],
         "one boot, a record per measured point; exit 1: one point's snapshot missed backends", r.stderr[-1500:])
    calls = open(os.path.join(d, "calls.log")).read().splitlines() if os.path.exists(os.path.join(d, "calls.log")) else []
    t.ok(len(calls) == 1 and "--initrd %s" % initrd in calls[0] and "--clock instructions" in calls[0],
         "the boot has the PostgreSQL initramfs and the spec's clock", calls)
    failed = open(os.path.join(run, "failed.txt")).read() if run else ""
    t.ok(re.search(r"guest-mshare-4k-w20-s64M-postgres r1: page tables and faults not measured: the snapshot held 18 "
                   r"of 20", failed), "the point is failed with the reason, no record (its facts stay)", failed)
    rec = json.load(open(os.path.join(run, "records", recs[0]))) if recs else {}
    c, env_ = rec.get("config", {}), rec.get("environment", {})
    t.ok(rec.get("schema_version") == 8 and env_.get("clock") == "guest-instructions" and
         env_.get("time_unit") == "instructions", "schema version and clock from the harness's frame in the guest",
         json.dumps(env_))
    t.ok(env_.get("slurm", {}).get("node") == "node7" and env_["slurm"].get("job_id") == "4242",
         "the Slurm ids of the task that booted the VM reach the guest's records", env_.get("slurm"))
    t.ok(c.get("backend") == "anon" and c["postgres"]["mode"] == "4k" and c["workload"] == "postgres" and
         c["params"] == {"preset": "select", "scale": "2", "window": "10"} and c["workers"] == 10 and
         c["size_bytes"] == 75 << 20 and c["postgres"]["max_connections"] == 30 and
         (c.get("backend_facts") or {}).get("planner_mode") == "by-page",
         "config: the harness's backend and facts, pg-common.sh's mode, connections, the segment, the options",
         json.dumps(c)[:800])
    res = rec.get("results", {})
    t.ok(res.get("pagetables", {}).get("meminfo_delta_bytes") == 2048 * 1024 and
         res["faults"]["minflt_per_transaction"] == 3.0 and res["workload"]["ops_per_s"] == 200.0 and res["workload"]["pgbench_tps"] == 500.0 and
         res["time_s"]["connect_all"] == 0.4 and res.get("missing") == [],
         "figures from the facts: PageTables delta, minor faults per transaction, TPS (the window's: 3,000 "
         "transactions in 15 s; pgbench's own 500 beside it), connection set-up",
         json.dumps(res.get("faults")))
    script = open(os.path.join(run, "guest", "boot-1", "points.sh")).read() if run else ""
    t.ok("export SLURMD_NODENAME=node7" in script and "environment --json >pg/guest-anon-4k-w10-s64M-postgres.r1.frame.json"
         in script, "points.sh exports the Slurm ids and has the harness print each PostgreSQL point's frame", script[-600:])
    summary = open(os.path.join(run, "summary.txt")).read() if run else ""
    t.ok("PostgreSQL points" in summary and re.search(r"^guest-anon-4k-w10-s64M-postgres r1 .* 200 ", summary, re.M),
         "summary.txt has the PostgreSQL table", summary[-1200:])

    # --status and --resume: the failed point again, in a second boot.
    r = tap.run([SWEEP, "--status", run], env=env)
    t.ok(r.returncode == 1 and re.search(r"done: 3 on node7", r.stdout), "--status counts the done runs per node",
         r.stdout[-800:] + r.stderr)
    os.unlink(os.path.join(d, "BAD"))
    r = tap.run([SWEEP, "--resume", run], env=env)
    script2 = open(os.path.join(run, "guest", "boot-2", "points.sh")).read() if os.path.exists(
        os.path.join(run, "guest", "boot-2", "points.sh")) else ""
    t.ok(r.returncode == 0 and os.path.exists(os.path.join(run, "records", "guest-mshare-4k-w20-s64M-postgres.r1.json"))
         and "guest-mshare-4k-w20" in script2 and "guest-anon-4k-w10" not in script2,
         "--resume runs only the failed point, in a new boot", r.stderr[-800:])
    r = tap.run([SWEEP, "--status", run], env=env)
    t.ok(r.returncode == 0 and "done: 4 on node7" in r.stdout, "--status: all done", r.stdout[-600:])

    for tool in (["bench/compare", run, run], ["bench/side-by-side", run], ["bench/summary", run]):
        r = subprocess.run(tool, cwd=tap.ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
        t.ok(r.returncode == 0 and "postgres" in r.stdout, "%s reads the run" % tool[0], r.stdout[-600:] + r.stderr)
    r = subprocess.run([tap.HARNESS, "plan", "--calibrate", run], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=60)
    t.ok("4 record(s), 4 skipped" in r.stdout and "workload 'postgres': the part of the region it touches is not "
         "modelled" in r.stdout, "plan --calibrate reads the records and says why it models none", r.stdout[-600:])

# The runs bench/pg-sweep wrote (schema 3; kept as they are, read as they are).
old = sorted(glob.glob(os.path.join(tap.ROOT, "results", "postgres-dba-ref3-*")))
if not old:
    t.skip("a committed bench/pg-sweep run is read", "no results/postgres-dba-ref3-* here")
else:
    recs = [json.load(open(p)) for p in glob.glob(os.path.join(old[0], "records", "*.json"))]
    t.ok(recs and all(r["schema_version"] == 3 and pgpoint.is_pg_record(r) for r in recs) and
         {pgpoint.mode_of(r) for r in recs} == {"4k", "mshare-dax", "hugetlb-2m"},
         "old records: kept at schema 3, their mode read from config.backend", {pgpoint.mode_of(r) for r in recs})
    for tool in (["bench/compare", old[0], old[0]], ["bench/pg-dba-project", old[0]]):
        r = subprocess.run(tool, cwd=tap.ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
        t.ok(r.returncode == 0 and r.stdout.strip(), "%s reads %s" % (tool[0], os.path.basename(old[0])),
             r.stdout[-400:] + r.stderr[-400:])
t.done()
