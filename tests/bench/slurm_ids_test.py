"""--status's count of done runs per node and the report's Slurm row, from
environment.slurm of each record (issue 45: a guest spec run through Slurm
had every record's environment.slurm null, and --status said "done: 4 on
(none)", the VM's host name). A tiny real local sweep, then its records'
Slurm ids rewritten as a Slurm task's host and guest records carry them;
and a guest task stopped by SIGTERM (scancel) with a stand-in VM: its
run's reason names the signal and node. The real cluster runs are
tests/bench/slurm.sh and results/README.md."""

import glob
import json
import os
import re

import tap

SLURM_ENV = ("SLURMD_NODENAME", "SLURM_CLUSTER_NAME", "SLURM_JOB_PARTITION", "SLURM_JOB_ID",
             "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID")

t = tap.harness_test("where records ran: --status and the report")
d = tap.tempdir("slurm-ids")
try:
    env = {k: v for k, v in os.environ.items() if k not in SLURM_ENV}
    spec = tap.write_spec(d, "ids", repeats=1, workers="1, 2")
    r = tap.run([os.path.join(tap.ROOT, "bench", "sweep"), spec, "--results", os.path.join(d, "res")], env=env)
    run = r.stdout.strip()
    recs = sorted(glob.glob(os.path.join(run, "records", "*.json"))) if run else []
    t.ok(r.returncode == 0 and len(recs) == 4, "a local sweep of 4 runs", r.stderr[-600:])
    if len(recs) != 4:
        t.done()
    host = json.load(open(recs[0]))["environment"]["hostname"]
    t.ok(all(json.load(open(p))["environment"]["slurm"] == {k: None for k in (
        "node", "cluster", "partition", "job_id", "array_job_id", "array_task_id")} for p in recs),
         "outside Slurm every record has environment.slurm with null ids")

    r = tap.run([os.path.join(tap.ROOT, "bench", "sweep"), "--status", run], env=env)
    t.ok(r.returncode == 0 and "done: 4 not through Slurm (host %s)" % host in r.stdout,
         "--status: a local run's records are named as run outside Slurm, on their host", r.stdout)
    r = tap.run([os.path.join(tap.ROOT, "bench", "report"), run], env=env)
    page = open(os.path.join(run, "report", "index.html")).read() if r.returncode == 0 else ""
    t.ok(r.returncode == 0 and "<th>Slurm</th>" not in page, "the report of a run outside Slurm has no Slurm row",
         r.stderr[-400:])

    # As a Slurm task's records: two on nodes, one from a guest whose ids
    # did not reach it (the VM's host name "(none)"), one left local.
    def rewrite(path, **kw):
        rec = json.load(open(path))
        rec["environment"].update(kw)
        os.unlink(path)
        with open(path, "w") as f:
            json.dump(rec, f)
    ids = lambda node, task: {"node": node, "cluster": "clu", "partition": "part", "job_id": str(80 + task),
                              "array_job_id": "77", "array_task_id": str(task)}
    rewrite(recs[0], slurm=ids("nodeA", 0))
    rewrite(recs[1], slurm=ids("nodeB", 1))
    rewrite(recs[2], platform="guest", hostname="(none)")
    r = tap.run([os.path.join(tap.ROOT, "bench", "sweep"), "--status", run], env=env)
    line = next((l for l in r.stdout.splitlines() if l.startswith("done:")), "")
    t.ok(line == "done: 1 not through Slurm (guest), 1 not through Slurm (host %s), 1 on nodeA, 1 on nodeB" % host,
         "--status counts done runs per Slurm node; a guest record without ids is not 'on (none)'", r.stdout)
    r = tap.run([os.path.join(tap.ROOT, "bench", "report"), run], env=env)
    page = open(os.path.join(run, "report", "index.html")).read() if r.returncode == 0 else ""
    row = re.search(r'<td class="slurm">([^<]*)</td>', page)
    t.ok(row is not None and row.group(1) == "nodes nodeA (1 record), nodeB (1 record); cluster clu; partition part; "
         "array job 77; 2 records without Slurm ids (run outside Slurm)",
         "the report's Slurm row: nodes with their records, cluster, partition, array job, and what ran outside",
         row.group(1) if row else r.stderr[-400:])

    # A guest task stopped by scancel (SIGTERM) while its VM runs: the task's
    # file names the signal and the node, as for a host run, before what the
    # boot left. A stand-in VM runner signals the task that started it.
    fake = os.path.join(d, "fake-vm")
    with open(fake, "w") as f:
        f.write("#!/bin/sh\n[ -e %s ] && kill -TERM $PPID && sleep 5\nexit 1\n" % os.path.join(d, "KILL"))
    os.chmod(fake, 0o755)
    kernel = os.path.join(d, "bzImage")
    open(kernel, "w").close()
    genv = dict(env, MSHARE_VM_RUN=fake, MSHARE_VM_KERNEL=kernel)
    gspec = tap.write_spec(d, "gi", text="name = gi\nplatform = guest\nbackends = anon\nworkers = 1\nsizes = 16M\n"
                           "workloads = pt-footprint\n")
    r = tap.run([os.path.join(tap.ROOT, "bench", "sweep"), gspec, "--results", os.path.join(d, "gres")], env=genv)
    grun = r.stdout.strip()
    pid = "guest-anon-4k-w1-s16M-pt-footprint"
    ok = r.returncode == 1 and os.path.isdir(grun)
    if ok:
        os.makedirs(os.path.join(grun, "slurm", "tasks"), exist_ok=True)
        with open(os.path.join(grun, "slurm", "submit-1.json"), "w") as f:
            json.dump({"submission": 1, "job_id": "5", "tasks": [[[pid, 1]]], "kernel": None}, f)
        open(os.path.join(d, "KILL"), "w").close()
        r = tap.run([os.path.join(tap.ROOT, "bench", "sweep"), "--slurm-task", grun, "1", "--harness", tap.HARNESS],
                    env=dict(genv, SLURM_ARRAY_TASK_ID="0", SLURM_ARRAY_JOB_ID="5", SLURMD_NODENAME="nodeT"))
    task = os.path.join(grun, "slurm", "tasks", "5_0.json") if ok else ""
    tf = json.load(open(task)) if ok and os.path.exists(task) else {}
    run0 = (tf.get("runs") or [{}])[0]
    t.ok(r.returncode == 128 + 15 and tf.get("state") == "interrupted" and run0.get("outcome") == "failed" and
         (run0.get("reason") or "").startswith("interrupted (signal 15) on node nodeT: not run in the guest"),
         "a guest task stopped by SIGTERM: its run failed, the reason naming the signal and the node first",
         json.dumps(tf)[:800] + r.stderr[-400:])
finally:
    tap.cleanup(d)
t.done()
