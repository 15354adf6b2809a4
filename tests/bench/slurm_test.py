"""bench/sweep --slurm against a real Slurm (Debian's slurmctld, slurmd and
munge, started here as a one-node cluster in a temp dir: tests/lib/
slurmcluster.py): a small host spec run locally and as a job array, the two
run directories compared; a task SIGKILLed mid-run, --status, and the run
resumed by resubmitting; a resubmission while tasks hold the runs submits
nothing; a failed run rerun alone; refusals (bad --slurm-opt, a guest point
without its kernel image, --status of no run); everything stopped after."""

import glob
import json
import os
import re
import signal
import subprocess
import sys
import time

import slurmcluster
import tap

SWEEP = os.path.join(tap.ROOT, "bench", "sweep")

t = tap.harness_test("bench/sweep --slurm")
d = tap.tempdir("slurm")
cluster = slurmcluster.Cluster(os.path.join(d, "cluster"), cpus=2, mem_mib=2048)
why = cluster.unavailable()
if why:
    t.skip("bench/sweep --slurm on a one-node test cluster", why)
    tap.cleanup(d)
    t.done()


def sweep(*args, env=None):
    return subprocess.run([SWEEP] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          cwd=tap.ROOT, env=env or cluster.env)


def status(run):
    return sweep("--status", run)


def wait_done(run, timeout=240):
    """--status until it exits 0 (every run recorded or skipped)."""
    deadline = time.monotonic() + timeout
    r = status(run)
    while r.returncode != 0 and time.monotonic() < deadline:
        time.sleep(1)
        r = status(run)
    return r


def counts(text):
    """{"done": n, "running": n, ...} from --status's first line."""
    return {k: int(n) for n, k in re.findall(r"(\d+) (done|running|queued|failed|skipped|missing)", text)}


def records(run):
    out = {}
    for p in glob.glob(os.path.join(run, "records", "*.json")):
        with open(p) as f:
            out[os.path.basename(p)] = json.load(f)
    return out


def harness_procs(needle):
    """pids of processes whose command line holds `needle`."""
    def holds(cmdline):
        return needle in cmdline.replace("\0", " ")
    return tap.procs("cmdline", holds)


def calibrate_lines(run):
    """{record: [VmPTE lines' measured and model figures]} of plan --calibrate."""
    r = tap.run([tap.HARNESS, "plan", "--calibrate", run])
    out, cur = {}, None
    for line in r.stdout.splitlines():
        if line.strip().endswith(".json"):
            cur = os.path.basename(line.strip())
            out[cur] = []
        elif cur and line.strip().startswith("VmPTE region/worker"):
            out[cur].append(re.sub(r"\s+", " ", line.strip()))
    return r.returncode, out


def body():
    try:
        cluster.start()
    except slurmcluster.ClusterError as e:
        t.ok(False, "the test cluster starts", str(e))
        return
    t.ok(True, "a one-node cluster (munge, slurmctld, slurmd) is up: node %s, cluster %s" % (
        cluster.node, cluster.cluster))

    spec = tap.write_spec(d, "slurmcmp", text="""name = slurmcmp
backends = shm, anon, mshare
workers = 1, 8
sizes = 16M
workloads = pt-footprint
page = 4k
repeats = 1
""")
    local_res, slurm_res = os.path.join(d, "local"), os.path.join(d, "slurm")
    r = tap.sweep(spec, local_res)
    local = r.stdout.strip()
    t.ok(r.returncode == 0 and os.path.isdir(local), "the spec runs locally (exit %d)" % r.returncode, r.stderr)

    # --- the same spec as one job array (2 runs per task) ----------------------
    r = sweep(spec, "--slurm", "--slurm-chunk", "2", "--results", slurm_res)
    run = r.stdout.strip()
    t.ok(r.returncode == 0 and os.path.isdir(run) and "submitted job array" in r.stderr,
         "--slurm submits the spec and prints the run directory", r.stderr)
    with open(os.path.join(run, "slurm", "submit-1.json")) as f:
        sub = json.load(f)
    t.ok(len(sub["tasks"]) == 3 and all(len(x) == 2 for x in sub["tasks"]) and "--array 0-2" in sub["command"],
         "one array of 3 tasks, 2 runs each (--slurm-chunk 2)", sub["command"])
    t.ok(sub["mem_mib"] > 0 and sub["time_minutes"] > 0 and "--mem %dM" % sub["mem_mib"] in sub["command"]
         and "--time %d" % sub["time_minutes"] in sub["command"] and "--cpus-per-task 1" in sub["command"],
         "the array asks for CPUs, memory (%d MiB) and a time limit (%d min) derived from the spec"
         % (sub["mem_mib"], sub["time_minutes"]), sub["command"])
    r = wait_done(run)
    t.ok(r.returncode == 0 and "6 runs: 4 done" in r.stdout and "2 skipped" in r.stdout,
         "--status: 4 runs done and mshare's 2 skipped (exit 0)", r.stdout + r.stderr)
    loc, sl = records(local), records(run)
    t.ok(sorted(loc) == sorted(sl) and len(sl) == 4, "the same records as the local run: %s" % sorted(sl),
         "local %s" % sorted(loc))
    same = []
    for name in sorted(set(loc) & set(sl)):
        # The region's page tables; not vmpte_sum_bytes, which holds the
        # workers' whole processes (their own page tables vary with what
        # the process was started with, e.g. its environment).
        for key in ("region_bytes_per_worker", "region_bytes_total"):
            a, b = loc[name]["results"]["pagetables"].get(key), sl[name]["results"]["pagetables"].get(key)
            same.append((name, key, a, b))
        same.append((name, "page_size_bytes", loc[name]["results"]["page_size_bytes"],
                     sl[name]["results"]["page_size_bytes"]))
    t.ok(same and all(a == b and a is not None for _, _, a, b in same),
         "exact page-table figures identical to the local run's (the region's per worker and in all, "
         "page size: %d figures)" % len(same), [s for s in same if s[2] != s[3]])
    envs = [r_["environment"]["slurm"] for r_ in sl.values()]
    t.ok(all(e["node"] == cluster.node and e["array_job_id"] == sub["job_id"] and e["array_task_id"] is not None
             and e["cluster"] == cluster.cluster for e in envs),
         "each Slurm record names its node, cluster, array job and task", envs)
    t.ok(all(all(v is None for v in r_["environment"]["slurm"].values()) for r_ in loc.values()),
         "local records have environment.slurm all null")

    def table(path):
        """The column names and the points of a summary.txt."""
        with open(path) as f:
            lines = f.read().splitlines()
        start = next((i for i, ln in enumerate(lines) if ln.startswith("point ")), len(lines))
        return [lines[start].split()] + [ln.split()[0] for ln in lines[start + 1:] if ln.strip()]

    t.ok(table(os.path.join(local, "summary.txt")) == table(os.path.join(run, "summary.txt")),
         "summary.txt: the same columns and points as the local run's", table(os.path.join(run, "summary.txt")))
    with open(os.path.join(local, "summary.csv")) as f1, open(os.path.join(run, "summary.csv")) as f2:
        a, b = f1.read().splitlines(), f2.read().splitlines()
    t.ok(a[0] == b[0] and [x.split(",")[0] for x in a] == [x.split(",")[0] for x in b],
         "summary.csv: the same header and points")
    with open(os.path.join(local, "skipped.txt")) as f1, open(os.path.join(run, "skipped.txt")) as f2:
        a, b = f1.read(), f2.read()
    t.ok(sorted(ln.split(":")[0] for ln in a.splitlines()) == sorted(ln.split(":")[0] for ln in b.splitlines())
         and "mshare" in b, "skipped.txt lists the same points, with the node's reason", b)
    rc1, c1 = calibrate_lines(local)
    rc2, c2 = calibrate_lines(run)
    t.ok(c1 and c1 == c2, "plan --calibrate: the same region VmPTE per worker, model and measured, for every record",
         json.dumps([c1, c2])[:1500])
    r1 = tap.run([os.path.join(tap.ROOT, "bench", "side-by-side"), local])
    r2 = tap.run([os.path.join(tap.ROOT, "bench", "side-by-side"), run])
    t.ok(r1.returncode == 0 and r2.returncode == 0 and
         [ln.split()[0] for ln in r1.stdout.splitlines()[1:] if ln.strip()] ==
         [ln.split()[0] for ln in r2.stdout.splitlines()[1:] if ln.strip()],
         "bench/side-by-side: the same tables", r2.stdout + r2.stderr)
    r2 = tap.run([os.path.join(tap.ROOT, "plots", "plot-run"), run])
    r1 = tap.run([os.path.join(tap.ROOT, "plots", "plot-run"), local])
    figs1 = sorted(os.path.basename(p) for p in glob.glob(os.path.join(local, "plots", "*.png")))
    figs2 = sorted(os.path.basename(p) for p in glob.glob(os.path.join(run, "plots", "*.png")))
    t.ok(r1.returncode == 0 and r2.returncode == 0 and figs1 and figs1 == figs2,
         "plots/plot-run draws the same figures (%d)" % len(figs2), r2.stderr[-800:])

    # --- a task SIGKILLed mid-run, then the run resumed -----------------------
    spec = tap.write_spec(d, "slurmkill", text="""name = slurmkill
backends = shm
workers = 2
sizes = 16M
workloads = connect-storm
page = 4k
repeats = 2
args = --duration 10s
timeout = 5m
""")
    r = sweep(spec, "--slurm", "--results", slurm_res)
    run = r.stdout.strip()
    t.ok(r.returncode == 0 and os.path.isdir(run), "a 2-run spec submitted (connect-storm, 10 s each)", r.stderr)
    task_file = glob.glob(os.path.join(run, "slurm", "tasks", "*_0.json"))
    deadline = time.monotonic() + 120
    victim = []
    while time.monotonic() < deadline:
        task_file = glob.glob(os.path.join(run, "slurm", "tasks", "*_0.json"))
        victim = harness_procs(os.path.join(run, "records", "shm-4k-w2-s16M-connect-storm.r1.json"))
        if task_file and victim:
            break
        time.sleep(0.2)
    with open(task_file[0]) if task_file else open(os.devnull) as f:
        task = json.load(f) if task_file else {}
    killed = bool(task.get("pid")) and bool(victim)
    if killed:
        os.kill(task["pid"], signal.SIGKILL)
    t.ok(killed, "task 0 SIGKILLed mid-run (its runner, pid %s; its harness runs with %d processes)" % (
        task.get("pid"), len(victim)))
    # The harness gets SIGTERM when its task dies (PR_SET_PDEATHSIG): it
    # stops its workers and writes no record, as on Ctrl-C.
    deadline = time.monotonic() + 60
    r1 = os.path.join(run, "records", "shm-4k-w2-s16M-connect-storm.r1.json")
    while time.monotonic() < deadline and harness_procs(r1):
        time.sleep(0.2)
    t.ok(not harness_procs(r1) and
         not os.path.exists(os.path.join(run, "records", "shm-4k-w2-s16M-connect-storm.r1.json")),
         "the killed task's harness stops with it and leaves no record")
    deadline = time.monotonic() + 60
    r = status(run)
    while not counts(r.stdout).get("failed") and time.monotonic() < deadline:
        time.sleep(1)
        r = status(run)
    t.ok(r.returncode == 1 and re.search(r"failed\s+shm-4k-w2-s16M-connect-storm r1: task \S+_0 on node %s started it "
                                         r"at \S+ and ended without a result" % re.escape(cluster.node), r.stdout)
         and "--only shm-4k-w2-s16M-connect-storm.r1" in r.stdout,
         "--status lists the killed run as failed, with its task, node and the rerun command (exit 1)", r.stdout)
    t.ok("Slurm: FAILED" in r.stdout or "Slurm: CANCELLED" in r.stdout,
         "--status gives Slurm's own end state of the task (squeue, sacct or the completion log)", r.stdout)
    # Resubmit: only the killed run goes; a second resubmission while its task
    # is queued or running submits nothing.
    r = sweep("--resume", run, "--slurm")
    r2 = sweep("--resume", run, "--slurm")
    subs = sorted(glob.glob(os.path.join(run, "slurm", "submit-*.json")))
    with open(subs[-1]) as f:
        last = json.load(f)
    t.ok(r.returncode == 0 and len(subs) == 2 and [p for x in last["tasks"] for p in x] ==
         [["shm-4k-w2-s16M-connect-storm", 1]],
         "resubmitting sends only the killed run (%d submissions)" % len(subs), r.stderr)
    t.ok(r2.returncode == 0 and "nothing to submit" in r2.stderr and len(subs) == 2,
         "resubmitting again while its task holds it submits nothing", r2.stderr)
    r = wait_done(run)
    t.ok(r.returncode == 0 and "2 runs: 2 done" in r.stdout, "the resumed run completes: 2 of 2 runs done",
         r.stdout)
    left = [n for n in os.listdir(os.path.join(run, "records")) if not n.endswith(".json")]
    t.ok(not left, "no partial record files", left)

    # --- a failed run rerun alone (--only) -------------------------------------
    spec = tap.write_spec(d, "slurmfail", text="""name = slurmfail
backends = shm
workers = 1, 2
sizes = 16M
workloads = pt-footprint
page = 4k
""")
    bad_harness = os.path.join(d, "failing-harness")
    with open(bad_harness, "w") as f:
        f.write("#!/bin/sh\n# fails the runs of workers 2 while %s/fail exists\n"
                "case \" $* \" in *' --check '*) ;; *' --workers 2 '*) [ -e %s/fail ] && "
                "{ echo 'injected failure' >&2; exit 1; } ;; esac\nexec %s \"$@\"\n" % (d, d, tap.HARNESS))
    os.chmod(bad_harness, 0o755)
    open(os.path.join(d, "fail"), "w").close()
    r = sweep(spec, "--slurm", "--results", slurm_res, "--harness", bad_harness)
    run = r.stdout.strip()
    r = status(run)
    deadline = time.monotonic() + 120
    while (counts(r.stdout).get("running") or counts(r.stdout).get("queued") or not counts(r.stdout).get("failed")) \
            and time.monotonic() < deadline:
        time.sleep(1)
        r = status(run)
    t.ok(re.search(r"failed\s+shm-4k-w2-s16M-pt-footprint r1: exit 1, no record: injected failure", r.stdout) and
         "1 done" in r.stdout, "a failing run is listed with the harness's reason", r.stdout)
    with open(os.path.join(run, "failed.txt")) as f:
        ftxt = f.read()
    t.ok("shm-4k-w2-s16M-pt-footprint r1: exit 1" in ftxt, "failed.txt names it", ftxt)
    os.unlink(os.path.join(d, "fail"))
    r = sweep("--resume", run, "--slurm", "--only", "shm-4k-w2-s16M-pt-footprint.r1")
    with open(sorted(glob.glob(os.path.join(run, "slurm", "submit-*.json")))[-1]) as f:
        last = json.load(f)
    t.ok(r.returncode == 0 and last["tasks"] == [[["shm-4k-w2-s16M-pt-footprint", 1]]],
         "--resume --slurm --only reruns that run alone", r.stderr)
    r = wait_done(run)
    with open(os.path.join(run, "failed.txt")) as f:
        ftxt = f.read()
    t.ok(r.returncode == 0 and ftxt == "", "then every run is done and failed.txt is empty", r.stdout + ftxt)

    # --- refusals: nothing submitted, no run directory left ---------------------
    before = sorted(os.listdir(slurm_res))

    def refused(args, code, needle, what, env=None):
        r = sweep(*args, env=env)
        msg = r.stderr.strip().splitlines()
        ok = r.returncode == code and msg and needle in msg[-1] and sorted(os.listdir(slurm_res)) == before
        t.ok(ok, "%s: exit %d, one line naming it, no run directory" % (what, r.returncode), r.stderr)

    tiny = tap.write_spec(d, "tiny", repeats=1, workers="1")
    refused([tiny, "--slurm", "--results", slurm_res, "--slurm-opt=--frobnicate"], 1, "--frobnicate",
            "an option sbatch does not know")
    refused([tiny, "--slurm", "--results", slurm_res, "--slurm-opt=partition=x"], 2, "partition=x",
            "a --slurm-opt that is no option")
    refused([tiny, "--slurm", "--results", slurm_res, "--slurm-opt=--array=0-9"], 2, "--array",
            "a --slurm-opt setting what bench/sweep sets")
    refused([tiny, "--slurm", "--results", slurm_res, "--slurm-opt=--partition=nosuch"], 1, "nosuch",
            "a partition the cluster does not have")
    refused([tiny, "--slurm", "--results", slurm_res, "--slurm-chunk", "0"], 2, "--slurm-chunk 0",
            "--slurm-chunk 0")
    refused([tiny, "--results", slurm_res, "--slurm-opt=--partition=x"], 2, "--slurm", "--slurm-opt without --slurm")
    bindir = os.path.join(d, "bin-without-slurm")
    os.mkdir(bindir)
    os.symlink(os.path.realpath(sys.executable), os.path.join(bindir, "python3"))
    nosbatch = dict(cluster.env, PATH=bindir)
    refused([tiny, "--slurm", "--results", slurm_res], 1, "sbatch not found", "no sbatch on PATH", env=nosbatch)
    gspec = tap.write_spec(d, "gspec", text="""name = gspec
backends = shm
workers = 1
sizes = 16M
workloads = pt-footprint
platform = guest
""")
    missing = os.path.join(d, "no-such-bzImage")
    refused([gspec, "--slurm", "--results", slurm_res], 1, missing, "guest points with MSHARE_VM_KERNEL missing",
            env=dict(cluster.env, MSHARE_VM_KERNEL=missing))
    if os.path.exists("/usr/src/linux-source-6.1.tar.xz") and os.environ.get("MSHARE_SKIP_GUEST") != "1":
        empty = os.path.join(d, "empty-kernel-cache")
        os.mkdir(empty)
        r = sweep(gspec, "--slurm", "--results", slurm_res, env=dict(cluster.env, MSHARE_KERNEL_CACHE=empty))
        t.ok(r.returncode == 1 and re.search(r"%s/images/[0-9a-f]{16}/bzImage" % re.escape(empty), r.stderr) and
             "make kernel" in r.stderr and sorted(os.listdir(slurm_res)) == before,
             "guest points whose kernel key is not in the cache: refused naming the image and `make kernel`",
             r.stderr)
    else:
        t.skip("guest points whose kernel key is not in the cache are refused",
               "linux-source-6.1 not installed or MSHARE_SKIP_GUEST=1 (kernel/build.sh would install it)")
    # The image gone between the submission and the task: the task fails
    # naming it (the array submitted held, released once it is removed).
    image = os.path.join(d, "bzImage-soon-gone")
    open(image, "w").close()
    r = sweep(gspec, "--slurm", "--results", slurm_res, "--slurm-opt=--hold", "--slurm-opt=--mem=64M",
              env=dict(cluster.env, MSHARE_VM_KERNEL=image))
    grun = r.stdout.strip()
    os.unlink(image)
    with open(os.path.join(grun, "slurm", "submit-1.json")) as f:
        gsub = json.load(f)
    subprocess.run(["scontrol", "release", gsub["job_id"]], env=cluster.env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 90
    r = status(grun)
    while not counts(r.stdout).get("failed") and time.monotonic() < deadline:
        time.sleep(1)
        r = status(grun)
    t.ok(("kernel image %s" % image) in r.stdout and "missing on node %s" % cluster.node in r.stdout and
         "make kernel" in r.stdout, "a guest task whose kernel image is gone fails naming it and the node", r.stdout)
    t.ok("--mem=64M" in gsub["command"] and " --mem " not in gsub["command"],
         "a --slurm-opt for memory replaces the derived one", gsub["command"])
    r = sweep("--status", os.path.join(d, "no-such-run"))
    t.ok(r.returncode == 2 and "no-such-run" in r.stderr, "--status of no run directory: exit %d naming it"
         % r.returncode, r.stderr)
    r = sweep("--status", local)
    t.ok(r.returncode == 0 and "4 done" in r.stdout and "2 skipped" in r.stdout,
         "--status of a local run: done and skipped from its records and skipped.txt", r.stdout)
    r = sweep("--slurm-task", local, "1")
    t.ok(r.returncode != 0 and "SLURM_ARRAY_TASK_ID" in r.stderr, "--slurm-task outside Slurm is refused", r.stderr)
# A test runner's timeout (SIGTERM) or a ^C still stops the cluster: the
# daemons run in sessions of their own, out of reach of a group kill.
signal.signal(signal.SIGTERM, lambda signum, _frame: sys.exit(128 + signum))
try:
    body()
finally:
    left = cluster.stop()
    t.ok(not left and not cluster.alive(), "the cluster's daemons are stopped", left)
    procs = harness_procs(d)
    t.ok(not procs, "no process of the test left (harness, task, daemon)", procs)
    tap.cleanup(d)
t.done()
