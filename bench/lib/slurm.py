"""Sweeps on a Slurm cluster (issue 30).

    bench/sweep SPEC --slurm [--slurm-opt OPT]... [--slurm-chunk N] [--slurm-cpus N]
    bench/sweep --resume RUN_DIR --slurm [--only ID[.rK],...]    resubmit what has no record
    bench/sweep --status RUN_DIR                                  done / queued / running / failed / missing

A submission sends the run's pending (point, repeat) pairs as ONE job
array (sbatch --array): task i runs the pairs of tasks[i] (`--slurm-chunk`
pairs each, default 1), one after the other, through the same code as a
local sweep (`bench/sweep --slurm-task RUN_DIR N`): the harness writes each
record atomically into RUN_DIR/records/, never over an existing one. The
run directory, this tree and the harness must be on a path every node sees
(the same path on every node).

Files under RUN_DIR/slurm/:
  submit-N.json   submission N: array job id, the sbatch command, the
                  resources asked for, the kernel image of guest points, and
                  `tasks` (task i -> its [point id, repeat] pairs)
  submit-N.sh     the batch script every task of submission N runs
  logs/J_T.out    a task's output (sbatch --output, J = array job id, T = task)
  tasks/J_T.json  written by the task as it goes: node, start, end, and each
                  pair's outcome (done, failed with the reason, skipped with
                  the reason); a task killed mid-run leaves state "running"
  submit.lock     held while a submission is made, so that two at once do not
                  submit the same pairs twice

A pair is submitted again only when it has no record and no task of an
earlier submission still holds it (queued or running, from squeue).
"""

import datetime
import fcntl
import json
import math
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

import backends
import environment
import guest
import runrecords

ACTIVE = {"PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "REQUEUED", "REQUEUE_HOLD",
          "REQUEUE_FED", "RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED", "RESV_DEL_HOLD"}
# Memory a host task asks for beyond the planner's demand of its largest
# point (the harness, python, the shell); a guest task beyond the VM's RAM
# and emulated pmem (QEMU itself).
HOST_MEM_MARGIN = 256 << 20
GUEST_MEM_MARGIN = 1 << 30
# Time a task asks for beyond the sum of its runs' time limits (the spec's
# `timeout`): start-up, the summaries; a guest task also its VM boot.
TASK_TIME_MARGIN_S = 300
GUEST_BOOT_S = 900


class SlurmError(Exception):
    pass


def say(msg):
    print("sweep: " + msg, file=sys.stderr, flush=True)


def utc_stamp():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def slurm_dir(run_dir):
    return os.path.join(run_dir, "slurm")


def job_name(run_dir):
    return "msb-" + os.path.basename(os.path.normpath(run_dir))


def pair_name(pid, k):
    return "%s r%d" % (pid, k)


def need_command(name):
    path = shutil.which(name)
    if not path:
        raise SlurmError("%s not found on PATH: Slurm's client commands are needed (Debian: slurm-client)" % name)
    return path


def _run(cmd, timeout=120):
    try:
        return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace",
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        raise SlurmError("%s did not answer in %d s" % (cmd[0], timeout))
    except OSError as e:
        raise SlurmError("cannot run %s: %s" % (cmd[0], e.strerror))


def read_json(path):
    try:
        with runrecords.open_regular(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def submissions(run_dir):
    """[(n, submission dict)] in order, those with a job id only."""
    out = []
    d = slurm_dir(run_dir)
    try:
        names = os.listdir(d)
    except OSError:
        return out
    for name in names:
        m = re.match(r"^submit-([0-9]+)\.json$", name)
        if not m:
            continue
        sub = read_json(os.path.join(d, name))
        if isinstance(sub, dict) and sub.get("job_id") and isinstance(sub.get("tasks"), list):
            out.append((int(m.group(1)), sub))
    return sorted(out, key=lambda x: x[0])


def queue_states(run_dir):
    """{"J_T": (state, node, reason)} of the run's array tasks that the
    controller still knows (queued, running, or ended a few minutes ago:
    squeue -t all), from squeue by the run's job name."""
    squeue = need_command("squeue")
    r = _run([squeue, "-h", "-r", "-t", "all", "--name", job_name(run_dir), "-o", "%i|%T|%N|%r"])
    if r.returncode != 0:
        raise SlurmError("squeue failed (exit %d): %s" % (r.returncode, (r.stderr.strip() or "no message")[-300:]))
    out = {}
    for line in r.stdout.splitlines():
        parts = line.strip().split("|")
        if len(parts) == 4 and "_" in parts[0]:
            out[parts[0]] = (parts[1], parts[2], parts[3])
    return out


def held_pairs(run_dir, states):
    """{(pid, k): "J_T"} of pairs whose task is still queued or running."""
    held = {}
    for _, sub in submissions(run_dir):
        for i, pairs in enumerate(sub["tasks"]):
            key = "%s_%d" % (sub["job_id"], i)
            st = states.get(key)
            if st and st[0] in ACTIVE:
                for pid, k in pairs:
                    held[(pid, k)] = key
    return held


def parse_only(text, manifest):
    """--only ID[.rK],... -> set of (pid, k); a SlurmError names a bad item."""
    points = {p["id"]: p for p in manifest["points"]}
    out = set()
    for item in [s.strip() for s in text.split(",")]:
        if not item:
            raise SlurmError("--only '%s': an empty item" % text)
        m = re.match(r"^(.+)\.r([0-9]+)$", item)
        pid, k = (m.group(1), int(m.group(2))) if m and m.group(1) in points else (item, None)
        if pid not in points:
            raise SlurmError("--only: '%s' is no point of this run (bench/sweep --status lists them)" % item)
        n = points[pid].get("repeats", manifest.get("repeats", 1))
        if k is not None and not 1 <= k <= n:
            raise SlurmError("--only: '%s': point %s has repeats 1 to %d" % (item, pid, n))
        out.update([(pid, k)] if k is not None else [(pid, j) for j in range(1, n + 1)])
    return out


# -- resources -----------------------------------------------------------------

def _vm_arg(vm_args, name, default):
    args = shlex.split(vm_args or "")
    for i, a in enumerate(args[:-1]):
        if a == name:
            return args[i + 1]
    return default


def run_memory(p, manifest, harness):
    """Bytes a run of point p needs: host, the capacity planner's demand
    (page tables, region data in RAM, 256 KiB per worker) of the point with
    its backend's planner mode (4k for a backend whose page size is the
    kernel's: the upper bound) plus a margin; guest, the VM's RAM and
    emulated pmem plus a margin."""
    if p["platform"] == "guest":
        import units
        mem = units.parse_size(_vm_arg(manifest.get("vm_args"), "--mem", "2G")) or (2 << 30)
        pmem_gib = _vm_arg(manifest.get("vm_args"), "--pmem", "4")
        pmem = int(pmem_gib) << 30 if pmem_gib.isdigit() else 0
        return mem + pmem + GUEST_MEM_MARGIN
    try:
        facts = backends.facts(harness).get(p["backend"]) or {}
    except backends.BackendsError as e:
        raise SlurmError(str(e))
    mode = facts.get("planner_mode") or "4k"
    if mode == "by-page":
        mode = "4k"
    r = _run([harness, "plan", "--sga", str(p["size_bytes"]), "--processes", str(p["workers"]), "--mode", mode,
              "--private", "256K", "--ram", "1P", "--json"])
    try:
        demand = int(json.loads(r.stdout)["modes"][0]["demand_bytes"])
    except (ValueError, KeyError, IndexError, TypeError):
        raise SlurmError("point %s: the planner gives no memory estimate (mshare-bench plan --sga %s --processes %d "
                         "--mode %s: %s); give the tasks' memory with --slurm-opt=--mem=SIZE"
                         % (p["id"], p["size_bytes"], p["workers"], mode, (r.stderr.strip() or "no output")[-200:]))
    return demand + HOST_MEM_MARGIN


def resources(tasks, manifest, harness, cpus):
    """(cpus, mem MiB, time minutes) every task of the array asks for: an
    array has one request for all its tasks, so the largest of any task."""
    points = {p["id"]: p for p in manifest["points"]}
    timeout = float(manifest.get("timeout") or 3600)
    mem = 0
    minutes = 1
    guest_cpus = 0
    memo = {}
    for pairs in tasks:
        secs = TASK_TIME_MARGIN_S + timeout * len(pairs)
        if any(points[pid]["platform"] == "guest" for pid, _ in pairs):
            secs += GUEST_BOOT_S
        minutes = max(minutes, int(math.ceil(secs / 60.0)))
        for pid, _ in pairs:
            p = points[pid]
            if pid not in memo:
                memo[pid] = run_memory(p, manifest, harness)
            mem = max(mem, memo[pid])
            if p["platform"] == "guest":
                c = _vm_arg(manifest.get("vm_args"), "--cpus", "2")
                guest_cpus = max(guest_cpus, int(c) if c.isdigit() else 2)
    return max(cpus, guest_cpus), int(math.ceil(mem / float(1 << 20))), minutes


# sbatch options bench/sweep sets itself: a --slurm-opt may not replace them.
OWN_OPTS = ("-a", "--array", "-J", "--job-name", "-o", "--output", "-e", "--error", "-D", "--chdir", "--parsable",
            "--wrap", "-W", "--wait")


def bad_opt(o):
    """Why a --slurm-opt cannot be passed to sbatch (None when it can)."""
    if not o.startswith("-") or o in ("-", "--"):
        return "not an sbatch option (give each as --slurm-opt=--name=value)"
    for flag in OWN_OPTS:
        if o == flag or o.startswith(flag + "=") or (len(flag) == 2 and o.startswith(flag)):
            return "bench/sweep sets %s itself" % flag
    if "\n" in o or "\0" in o:
        return "contains a newline or NUL"
    return None


USER_OVERRIDES = {"cpus": ("-c", "--cpus-per-task"), "mem": ("--mem", "--mem-per-cpu", "--mem-per-gpu"),
                  "time": ("-t", "--time")}


def overridden(opts, what):
    """True when a --slurm-opt sets what (cpus, mem, time) itself."""
    for o in opts:
        for flag in USER_OVERRIDES[what]:
            if o == flag or o.startswith(flag + "=") or (len(flag) == 2 and o.startswith(flag) and len(o) > 2):
                return True
    return False


# -- the kernel of guest points -----------------------------------------------------

def guest_kernel(root):
    """(image, key) of the patched kernel the guest tasks boot: MSHARE_VM_KERNEL
    when set, else the kernel cache's image for this tree's key
    (kernel/build.sh with MSHARE_KERNEL_CACHED_ONLY=1: copied, never built).
    A SlurmError says what is missing and the one command that builds it."""
    given = os.environ.get("MSHARE_VM_KERNEL")
    if given:
        if not os.path.isfile(given):
            raise SlurmError("MSHARE_VM_KERNEL=%s: no such kernel image" % given)
        return os.path.abspath(given), None
    cache = os.environ.get("MSHARE_KERNEL_CACHE", "/var/cache/mshare-bench/kernel")
    env = dict(os.environ, MSHARE_KERNEL_CACHED_ONLY="1")
    try:
        r = subprocess.run([os.path.join(root, "kernel", "build.sh")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, errors="replace", env=env, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise SlurmError("cannot ask kernel/build.sh for the kernel's cache key: %s" % e)
    m = re.search(r"key ([0-9a-f]{16})", r.stderr)
    key = m.group(1) if m else None
    image = os.path.join(cache, "images", key or "<key>", "bzImage")
    if r.returncode == 3:
        raise SlurmError("the guest points need the patched kernel (key %s), and the kernel cache has no %s: build it "
                         "once, before submitting, with `make kernel` (MSHARE_KERNEL_CACHE=%s; a directory every node "
                         "sees)" % (key or "?", image, cache))
    if r.returncode != 0 or not key:
        raise SlurmError("kernel/build.sh could not name the kernel (exit %d): %s" % (
            r.returncode, (r.stderr.strip() or "no message")[-300:]))
    if not os.path.isfile(image):
        raise SlurmError("kernel image %s (key %s) is missing: build it with `make kernel` (MSHARE_KERNEL_CACHE=%s)"
                         % (image, key, cache))
    return image, key


# -- submitting -----------------------------------------------------------------

def chunked(pairs, points, chunk):
    """Tasks of at most `chunk` pairs; a task holds one platform and one clock
    only (a guest task is one VM boot)."""
    groups = {}
    order = []
    for pid, k in pairs:
        p = points[pid]
        g = (p["platform"], p.get("clock") if p["platform"] == "guest" else None)
        if g not in groups:
            groups[g] = []
            order.append(g)
        groups[g].append([pid, k])
    tasks = []
    for g in order:
        items = groups[g]
        tasks += [items[i:i + chunk] for i in range(0, len(items), chunk)]
    return tasks


def submit(run_dir, manifest, root, harness, pairs, chunk, cpus, opts, sweep_cmd):
    """Submit `pairs` [(pid, k)] (those without a record and not held by a
    queued or running task) as one job array. Returns (job id or None, tasks
    submitted, pairs held by earlier tasks)."""
    sbatch = need_command("sbatch")
    sd = slurm_dir(run_dir)
    for d in (sd, os.path.join(sd, "logs"), os.path.join(sd, "tasks")):
        os.makedirs(d, exist_ok=True)
    lock = os.open(os.path.join(sd, "submit.lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        held = held_pairs(run_dir, queue_states(run_dir))
        rec_dir = os.path.join(run_dir, "records")
        todo = [(pid, k) for pid, k in pairs
                if (pid, k) not in held and not os.path.exists(os.path.join(rec_dir, "%s.r%d.json" % (pid, k)))]
        if not todo:
            return None, [], held
        points = {p["id"]: p for p in manifest["points"]}
        tasks = chunked(todo, points, chunk)
        kernel = None
        if any(points[pid]["platform"] == "guest" for pid, _ in todo):
            image, key = guest_kernel(root)
            kernel = {"image": image, "key": key}
        ncpus, mem_mib, minutes = resources(tasks, manifest, harness, cpus)
        n = 1
        while True:
            script = os.path.join(sd, "submit-%d.sh" % n)
            try:
                fd = os.open(script, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o755)
                break
            except FileExistsError:
                n += 1
        body = ("#!/bin/sh\n"
                "# Generated by bench/sweep --slurm: submission %d of %s, one job array.\n"
                "# Task i runs the pairs tasks[i] of submit-%d.json (bench/sweep --slurm-task).\n"
                "exec %s\n" % (n, os.path.basename(run_dir), n, " ".join(
                    shlex.quote(c) for c in sweep_cmd + ["--slurm-task", run_dir, str(n), "--harness", harness])))
        with os.fdopen(fd, "w") as f:
            f.write(body)
        cmd = [sbatch, "--parsable", "--job-name", job_name(run_dir), "--array", "0-%d" % (len(tasks) - 1),
               "--output", os.path.join(sd, "logs", "%A_%a.out"), "--chdir", root]
        if not overridden(opts, "cpus"):
            cmd += ["--cpus-per-task", str(ncpus)]
        if not overridden(opts, "mem"):
            cmd += ["--mem", "%dM" % mem_mib]
        if not overridden(opts, "time"):
            cmd += ["--time", str(minutes)]
        cmd += list(opts) + [script]
        sub = {"submission": n, "job_id": None, "job_name": job_name(run_dir), "submitted": utc_stamp(),
               "command": " ".join(shlex.quote(c) for c in cmd), "slurm_opts": list(opts), "chunk": chunk,
               "cpus_per_task": ncpus, "mem_mib": mem_mib, "time_minutes": minutes, "kernel": kernel,
               "tasks": tasks}
        path = os.path.join(sd, "submit-%d.json" % n)
        # Written before sbatch (a task may start before sbatch returns) and
        # again with the job id; removed with the script when sbatch refuses.
        runrecords.write_atomic(path, json.dumps(sub, indent=1) + "\n")
        if kernel:
            env = dict(os.environ, MSHARE_VM_KERNEL=kernel["image"])
        else:
            env = None
        try:
            r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace",
                               timeout=120, env=env)
        except (OSError, subprocess.TimeoutExpired) as e:
            r = None
            why = str(e)
        job = r.stdout.strip().split(";")[0] if r is not None and r.returncode == 0 else ""
        if not re.match(r"^[0-9]+$", job):
            for f in (path, script):
                try:
                    os.unlink(f)
                except OSError:
                    pass
            if r is not None:
                why = "exit %d: %s" % (r.returncode, (r.stderr.strip() or r.stdout.strip() or "no message")[-400:])
            raise SlurmError("sbatch refused the job array (%s); command: %s" % (why, sub["command"]))
        sub["job_id"] = job
        runrecords.write_atomic(path, json.dumps(sub, indent=1) + "\n")
        return job, tasks, held
    finally:
        os.close(lock)


# -- a task -----------------------------------------------------------------------

class TaskFile:
    """tasks/J_T.json, rewritten (atomically) after each run."""

    def __init__(self, run_dir, key, sub_n, index, pairs):
        self.path = os.path.join(slurm_dir(run_dir), "tasks", key + ".json")
        self.data = {"task": key, "submission": sub_n, "index": index, "pid": os.getpid(),
                     "node": os.environ.get("SLURMD_NODENAME"), "hostname": os.uname().nodename,
                     "started": utc_stamp(), "ended": None, "state": "running",
                     "runs": [{"point": pid, "repeat": k, "outcome": None, "reason": None} for pid, k in pairs]}
        self.write()

    def outcome(self, pid, k, outcome, reason=None):
        for r in self.data["runs"]:
            if r["point"] == pid and r["repeat"] == k:
                r["outcome"], r["reason"] = outcome, reason
        self.write()

    def end(self, state):
        self.data["state"] = state
        self.data["ended"] = utc_stamp()
        self.write()

    def write(self):
        runrecords.write_atomic(self.path, json.dumps(self.data, indent=1) + "\n")


def latest_outcomes(run_dir):
    """{(pid, k): (outcome, reason, task key, task data)} from the task files,
    the latest submission's (then the latest start's) for each pair."""
    out = {}
    d = os.path.join(slurm_dir(run_dir), "tasks")
    try:
        names = os.listdir(d)
    except OSError:
        return out
    files = [t for t in (read_json(os.path.join(d, n)) for n in names if n.endswith(".json")) if isinstance(t, dict)]
    files.sort(key=lambda t: (t.get("submission") or 0, t.get("started") or ""))
    for t in files:
        for r in t.get("runs") or []:
            if isinstance(r, dict):
                out[(r.get("point"), r.get("repeat"))] = (r.get("outcome"), r.get("reason"), t.get("task"), t)
    return out


def write_lists(run_dir, manifest):
    """failed.txt and skipped.txt of a Slurm run: per pair without a record,
    its latest task's outcome."""
    rec_dir = os.path.join(run_dir, "records")
    failed, skipped = [], {}
    for (pid, k), (outcome, reason, key, t) in sorted(latest_outcomes(run_dir).items(), key=lambda x: str(x[0])):
        if os.path.exists(os.path.join(rec_dir, "%s.r%d.json" % (pid, k))):
            continue
        if outcome == "failed":
            failed.append("%s r%d: %s (task %s on %s)\n" % (pid, k, reason, key, t.get("node")))
        elif outcome == "skipped":
            skipped[pid] = reason
    runrecords.write_atomic(os.path.join(run_dir, "failed.txt"), "".join(failed))
    runrecords.write_atomic(os.path.join(run_dir, "skipped.txt"), "".join("%s: %s\n" % kv for kv in skipped.items()))


def term_with_parent():
    """In a task's harness child: SIGTERM when the task dies (a SIGKILLed
    task), so that the harness cleans up and writes no record, as on Ctrl-C.
    A cluster whose proctrack plugin sees the whole job (cgroup) would end
    it anyway; with proctrack/linuxproc or pgid a child in its own session
    would run on unseen."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_PDEATHSIG = 1
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def run_task(sweep_cls, run_dir, sub_n, harness, log_line):
    """The body of one array task: run its pairs, note each outcome, then
    rewrite the run's summaries. Returns the exit status."""
    idx = os.environ.get("SLURM_ARRAY_TASK_ID")
    job = os.environ.get("SLURM_ARRAY_JOB_ID")
    node = os.environ.get("SLURMD_NODENAME") or os.uname().nodename
    if idx is None or not idx.isdigit() or not job:
        raise SlurmError("--slurm-task runs inside a Slurm array task (SLURM_ARRAY_TASK_ID and SLURM_ARRAY_JOB_ID "
                         "unset): submit with bench/sweep SPEC --slurm")
    manifest = read_json(os.path.join(run_dir, "manifest.json"))
    sub = read_json(os.path.join(slurm_dir(run_dir), "submit-%d.json" % sub_n))
    if not isinstance(manifest, dict) or not isinstance(sub, dict):
        raise SlurmError("node %s cannot read %s/manifest.json or slurm/submit-%d.json: the run directory must be on "
                         "a path every node sees (bench/sweep --results DIR)" % (node, run_dir, sub_n))
    tasks = sub.get("tasks") or []
    if int(idx) >= len(tasks):
        raise SlurmError("task %s: submission %d has only %d tasks" % (idx, sub_n, len(tasks)))
    pairs = [(pid, int(k)) for pid, k in tasks[int(idx)]]
    key = "%s_%s" % (job, idx)
    sweep = sweep_cls(run_dir, manifest, harness, ["host", "guest"])
    sweep.child_setup = term_with_parent
    # A shared lock: tasks run side by side; a local runner (exclusive)
    # waits for them and they for it.
    sweep.lock_fd = os.open(os.path.join(run_dir, ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(sweep.lock_fd, fcntl.LOCK_SH)
    signal.signal(signal.SIGINT, sweep.on_signal)
    signal.signal(signal.SIGTERM, sweep.on_signal)
    tf = TaskFile(run_dir, key, sub_n, int(idx), pairs)
    sweep.log("slurm task %s on node %s (host %s) pid %d: %d runs" % (key, node, os.uname().nodename, os.getpid(),
                                                                       len(pairs)))
    log_line("task %s on node %s: %d runs: %s" % (key, node, len(pairs), ", ".join(pair_name(*p) for p in pairs)))
    failed = 0
    host = [(sweep.point_by_id[pid], k) for pid, k in pairs if sweep.point_by_id[pid]["platform"] == "host"]
    todo_guest = [(sweep.point_by_id[pid], k) for pid, k in pairs if sweep.point_by_id[pid]["platform"] == "guest"]
    listing = backends.host_backends(harness) if host else {}
    for i, (p, k) in enumerate(host, 1):
        if sweep.interrupted:
            break
        if sweep.done(p["id"], k):
            tf.outcome(p["id"], k, "done", "record already there")
            continue
        usable, why = listing.get(p["backend"], (False, "the harness has no backend '%s'" % p["backend"]))
        if not usable and "--path" not in p.get("args", []):
            tf.outcome(p["id"], k, "skipped", "node %s: %s" % (node, why))
            continue
        log_line("[%d/%d] %s r%d" % (i, len(pairs), p["id"], k))
        why = sweep.run_host(p, k)
        if sweep.interrupted and why:
            tf.outcome(p["id"], k, "failed", "interrupted (signal %d) on node %s" % (sweep.interrupted, node))
            failed += 1
        elif why:
            log_line("  failed: %s" % why)
            tf.outcome(p["id"], k, "failed", why)
            failed += 1
        else:
            tf.outcome(p["id"], k, "done")
    todo_guest = [(p, k) for p, k in todo_guest if not sweep.done(p["id"], k)]
    if todo_guest and not sweep.interrupted:
        kernel = (sub.get("kernel") or {})
        image = kernel.get("image")
        if image and not os.path.isfile(image):
            why = "kernel image %s (%s) missing on node %s: build it once with `make kernel` (MSHARE_KERNEL_CACHE " \
                  "on a path every node sees) and resubmit" % (
                      image, "key %s" % kernel["key"] if kernel.get("key") else "MSHARE_VM_KERNEL", node)
            log_line("  " + why)
            for p, k in todo_guest:
                tf.outcome(p["id"], k, "failed", why)
                failed += 1
        else:
            if image:
                os.environ["MSHARE_VM_KERNEL"] = image
            result = guest.run_points(sweep, todo_guest, time.monotonic(), len(host), len(pairs))
            bad = {(pid, k): why for pid, k, why in result.failed}
            for p, k in todo_guest:
                if sweep.done(p["id"], k):
                    tf.outcome(p["id"], k, "done")
                elif p["id"] in result.skipped:
                    tf.outcome(p["id"], k, "skipped", result.skipped[p["id"]])
                else:
                    why = bad.get((p["id"], k), "no record")
                    if sweep.interrupted:
                        # As for a host run: the signal first (scancel, the
                        # time limit), then what the boot left.
                        why = "interrupted (signal %d) on node %s: %s" % (sweep.interrupted, node, why)
                    tf.outcome(p["id"], k, "failed", why)
                    failed += 1
    state = "interrupted" if sweep.interrupted else ("failed" if failed else "finished")
    tf.end(state)
    sweep.log("slurm task %s on node %s %s: %d failed runs" % (key, node, state, failed))
    # The summaries of the whole run, rewritten by each task as it ends
    # (the last one's are complete), one task at a time.
    slock = os.open(os.path.join(slurm_dir(run_dir), "summary.lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(slock, fcntl.LOCK_EX)
        write_lists(run_dir, manifest)
        runrecords.write_summaries(runrecords.Run(run_dir))
    finally:
        os.close(slock)
    log_line("task %s %s: %d runs, %d failed" % (key, state, len(pairs), failed))
    if sweep.interrupted:
        return 128 + sweep.interrupted
    return 1 if failed else 0


# -- status -----------------------------------------------------------------------

def ended_states(run_dir, job_ids):
    """({"J_T": (state, exit code, node)}, source or why none) of ended array
    tasks from Slurm's accounting: sacct where accounting storage works,
    else the job completion log when the cluster keeps one in a text file
    (JobCompType=jobcomp/filetxt)."""
    if not job_ids:
        return {}, "no submission"
    out = {}
    sacct = shutil.which("sacct")
    why = "sacct not installed"
    if sacct:
        r = _run([sacct, "-n", "-P", "-X", "-j", ",".join(job_ids), "-o", "JobID,State,ExitCode,NodeList"])
        if r.returncode == 0:
            for line in r.stdout.splitlines():
                parts = line.split("|")
                if len(parts) == 4 and "_" in parts[0]:
                    out[parts[0]] = (parts[1].split()[0], parts[2], parts[3])
            return out, "sacct"
        why = "sacct: %s" % ((r.stderr.strip() or r.stdout.strip() or "exit %d" % r.returncode).splitlines()[-1])
    scontrol = shutil.which("scontrol")
    if scontrol:
        r = _run([scontrol, "show", "config"])
        conf = dict(re.findall(r"^(\S+)\s+=\s+(.*?)\s*$", r.stdout, re.M)) if r.returncode == 0 else {}
        if conf.get("JobCompType") == "jobcomp/filetxt" and conf.get("JobCompLoc"):
            try:
                with open(conf["JobCompLoc"], errors="replace") as f:
                    for line in f:
                        kv = dict(re.findall(r"(\w+)=(\S*)", line))
                        if kv.get("ArrayJobId") in job_ids and kv.get("ArrayTaskId", "").isdigit():
                            out["%s_%s" % (kv["ArrayJobId"], kv["ArrayTaskId"])] = (
                                kv.get("JobState", "?"), kv.get("ExitCode", "?"), kv.get("NodeList", "?"))
                return out, "the job completion log %s (%s)" % (conf["JobCompLoc"], why)
            except OSError as e:
                why += "; job completion log %s: %s" % (conf["JobCompLoc"], e.strerror)
        else:
            why += "; no job completion log in a text file (JobCompType %s)" % conf.get("JobCompType", "?")
    return None, why


def record_node(env):
    """Where a record says it ran, for --status's count: "on NODE" from
    environment.slurm.node; a record without it (run outside Slurm, or
    written before the guest got the task's ids) says so, naming the host
    it ran on. A guest's own host name is no node (the VM's is "(none)"),
    so a guest record without Slurm ids is "not through Slurm (guest)"."""
    node = (env.get("slurm") or {}).get("node")
    if node:
        return "on %s" % node
    if env.get("platform") == "guest":
        return "not through Slurm (guest)"
    return "not through Slurm (host %s)" % (env.get("hostname") or "?")


def status(run_dir, out=sys.stdout):
    """Print what each (point, repeat) of the run is: done (record), queued
    or running (squeue), failed (with the reason), skipped, missing.
    Returns 0 when every run has its record or is skipped, else 1."""
    run = runrecords.Run(run_dir)
    manifest = run.manifest
    rec_dir = os.path.join(run_dir, "records")
    pairs = [(p["id"], k) for k in range(1, max([p.get("repeats", manifest.get("repeats", 1))
                                                 for p in run.points] + [1]) + 1)
             for p in run.points if k <= p.get("repeats", manifest.get("repeats", 1))]
    subs = submissions(run_dir)
    where = {}
    for n, sub in subs:
        for i, ps in enumerate(sub["tasks"]):
            for pid, k in ps:
                where[(pid, k)] = ("%s_%d" % (sub["job_id"], i), n)
    try:
        queue = queue_states(run_dir) if subs else {}
        qnote = None
    except SlurmError as e:
        queue, qnote = {}, str(e)
    ended, source = ended_states(run_dir, sorted({s["job_id"] for _, s in subs})) if subs else ({}, None)
    outcomes = latest_outcomes(run_dir)
    local_skips = {}
    for line in (environment.read_text(os.path.join(run_dir, "skipped.txt")) or "").splitlines():
        pid, _, why = line.partition(": ")
        local_skips[pid] = why
    rows = {"done": [], "running": [], "queued": [], "failed": [], "skipped": [], "missing": [], "unknown": []}
    nodes = {}
    for pid, k in pairs:
        rec = os.path.join(rec_dir, "%s.r%d.json" % (pid, k))
        if os.path.exists(rec):
            node = record_node((read_json(rec) or {}).get("environment") or {})
            nodes[node] = nodes.get(node, 0) + 1
            rows["done"].append((pid, k, node))
            continue
        key, n = where.get((pid, k), (None, None))
        q = queue.get(key) if key else None
        outcome = outcomes.get((pid, k))
        if q and q[0] in ACTIVE:
            kind = "running" if q[0] in ("RUNNING", "COMPLETING", "CONFIGURING") else "queued"
            rows[kind].append((pid, k, "task %s %s%s%s" % (key, q[0], " on " + q[1] if q[1] else "",
                                                           ", " + q[2] if q[2] and q[2] != "None" else "")))
            continue
        if outcome and outcome[2] == key and outcome[0] == "skipped":
            rows["skipped"].append((pid, k, outcome[1]))
            continue
        if key is None:
            if pid in local_skips:
                rows["skipped"].append((pid, k, local_skips[pid]))
            else:
                rows["missing"].append((pid, k, "never submitted"))
            continue
        if qnote and not (outcome and outcome[2] == key and outcome[0] == "failed"):
            # Without the queue a task that has not reported an end may
            # still be queued or running: not called failed.
            rows["unknown"].append((pid, k, "task %s: the queue cannot be read" % key))
            continue
        # Submitted, ended, no record: why, from the task's own file and
        # from Slurm's account of the task.
        sl = (queue.get(key) if q else None) or ((ended or {}).get(key))
        slurm_text = ("; Slurm: %s, exit %s, node %s" % sl) if sl and len(sl) == 3 and q is None else (
            "; Slurm: %s on %s" % (q[0], q[1] or "?") if q else "")
        if outcome and outcome[2] == key and outcome[0] == "failed":
            rows["failed"].append((pid, k, "%s (task %s)%s" % (outcome[1], key, slurm_text)))
        elif outcome and outcome[2] == key:
            t = outcome[3]
            rows["failed"].append((pid, k, "task %s on node %s started it at %s and ended without a result "
                                            "(killed?)%s" % (key, t.get("node"), t.get("started"), slurm_text)))
        elif sl:
            rows["failed"].append((pid, k, "task %s ended before running it%s" % (key, slurm_text)))
        else:
            rows["missing"].append((pid, k, "task %s is not queued and left no trace in the run directory%s" % (
                key, "" if ended is not None else "; Slurm's record of ended tasks: none here (%s)" % source)))
    total = len(pairs)
    print("run %s: %d runs: %d done, %d running, %d queued, %d failed, %d skipped, %d missing" % (
        run_dir, total, len(rows["done"]), len(rows["running"]), len(rows["queued"]), len(rows["failed"]),
        len(rows["skipped"]), len(rows["missing"])) + (", %d unknown" % len(rows["unknown"]) if rows["unknown"] else ""),
        file=out)
    if rows["done"]:
        print("done: " + ", ".join("%d %s" % (c, n) for n, c in sorted(nodes.items())), file=out)
    if subs:
        print("submissions: " + ", ".join("%d (job %s, %d task%s)" % (n, s["job_id"], len(s["tasks"]), "" if len(s["tasks"]) == 1 else "s") for n, s in subs),
              file=out)
        if qnote:
            print("queue: unknown (%s)" % qnote, file=out)
        print("ended tasks: %s" % ("from " + source if ended is not None else
                                   "no record from Slurm (%s): failures below are from the tasks' own files in "
                                   "slurm/tasks/ and what squeue still shows" % source), file=out)
    for kind in ("running", "queued", "failed", "skipped", "missing", "unknown"):
        for pid, k, what in rows[kind]:
            print("%-8s %s r%d: %s" % (kind, pid, k, what), file=out)
    again = rows["failed"] + rows["missing"]
    if again:
        print("rerun: bench/sweep --resume %s --slurm --only %s" % (
            shlex.quote(run_dir), ",".join("%s.r%d" % (pid, k) for pid, k, _ in again)), file=out)
    return 0 if len(rows["done"]) + len(rows["skipped"]) == total else 1

