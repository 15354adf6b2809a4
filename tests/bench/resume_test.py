import fcntl
import glob
import os
import signal
import subprocess
import time

import tap

t = tap.harness_test("resume after a killed sweep")

d = tap.tempdir("resume")
try:
    spec = tap.write_spec(d, "resume", workers="1, 2, 4")
    results = os.path.join(d, "results")
    runner = subprocess.Popen([os.path.join(tap.ROOT, "bench", "sweep"), spec, "--results", results],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Kill the runner once a few records exist (and the sweep is not done).
    deadline = time.time() + 120
    records = []
    while time.time() < deadline and runner.poll() is None:
        records = glob.glob(os.path.join(results, "*", "records", "*.json"))
        if len(records) >= 3:
            break
        time.sleep(0.02)
    killed = runner.poll() is None
    if killed:
        runner.send_signal(signal.SIGKILL)
    runner.wait()
    runs = glob.glob(os.path.join(results, "resume-*"))
    t.ok(killed, "runner killed mid-sweep after %d records" % len(records))
    t.ok(len(runs) == 1, "one run directory: %s" % runs)
    if not runs:
        t.done()
    run = runs[0]
    # A harness the killed runner had started may still be finishing its
    # run; it holds the run directory's lock until it exits.
    lock = os.open(os.path.join(run, ".lock"), os.O_RDWR)
    fcntl.flock(lock, fcntl.LOCK_EX)
    os.close(lock)
    before = {}
    for path in glob.glob(os.path.join(run, "records", "*.json")):
        st = os.stat(path)
        before[os.path.basename(path)] = (st.st_ino, st.st_mtime_ns)
    t.ok(0 < len(before) < 12, "interrupted run has %d of 12 records" % len(before))

    r = tap.run([os.path.join(tap.ROOT, "bench", "sweep"), "--resume", run])
    t.ok(r.returncode == 0 and r.stdout.strip() == run, "resume finishes (exit %d) and prints the run directory"
         % r.returncode, r.stderr)
    after = sorted(os.path.basename(p) for p in glob.glob(os.path.join(run, "records", "*.json")))
    expect = sorted("%s-4k-w%d-s16M-pt-footprint.r%d.json" % (b, w, k)
                    for b in ("shm", "anon") for w in (1, 2, 4) for k in (1, 2))
    t.ok(after == expect, "all 12 records present after resume", "have: %s" % after)
    unchanged = all((os.stat(os.path.join(run, "records", n)).st_ino,
                     os.stat(os.path.join(run, "records", n)).st_mtime_ns) == v for n, v in before.items())
    t.ok(unchanged, "the %d records from before the kill are untouched (same inode and mtime)" % len(before))
    # Each harness run leaves one '# <time> <command>' line in its log: a
    # point run twice would have two.
    attempts = {}
    for log in glob.glob(os.path.join(run, "logs", "*.log")):
        with open(log) as f:
            attempts[os.path.basename(log)] = sum(1 for line in f if line.startswith("# "))
    t.ok(len(attempts) == 12 and all(v == 1 for v in attempts.values()),
         "every run was started exactly once over both invocations", attempts)
    said = [ln for ln in r.stderr.splitlines() if "done before" in ln]
    t.ok(said and (" %d done before" % len(before)) in said[0], "resume reports the runs already done", r.stderr)
    with open(os.path.join(run, "runs.log")) as f:
        log = f.read()
    t.ok(" start pid " in log and " resume pid " in log and "finished" in log,
         "runs.log records the start, the resume and the end", log)
    t.ok(all(os.path.getsize(os.path.join(run, n)) > 0 for n in ("records.csv", "summary.txt", "summary.csv")),
         "summaries written after the resume")
    with open(os.path.join(run, "records.csv")) as f:
        rows = f.read().splitlines()
    t.ok(len(rows) == 13, "records.csv has a header and 12 rows (%d lines)" % len(rows))
    r = tap.run([os.path.join(tap.ROOT, "bench", "sweep"), "--resume", run])
    t.ok(r.returncode == 0 and "12 done before, 0 to run" in r.stderr, "resuming a finished sweep runs nothing",
         r.stderr)

    # Ctrl-C / SIGTERM: the runner stops the current run cleanly, writes the
    # summaries, says how to resume and exits 128+signal.
    spec = tap.write_spec(d, "term", text="""name = term
backends = shm
workers = 50, 100, 200
sizes = 32M
workloads = pt-footprint
page = 4k
repeats = 3
""")
    runner = subprocess.Popen([os.path.join(tap.ROOT, "bench", "sweep"), spec, "--results", results],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and runner.poll() is None:
        if glob.glob(os.path.join(results, "term-*", "records", "*.json")):
            break
        time.sleep(0.02)
    runner.send_signal(signal.SIGTERM)
    out, err = runner.communicate()
    run = glob.glob(os.path.join(results, "term-*"))[0]
    t.ok(runner.returncode == 128 + signal.SIGTERM and "resume with: bench/sweep --resume " + run in err,
         "SIGTERM: exit %d and the resume command on stderr" % runner.returncode, err)
    t.ok(out == "", "an interrupted sweep prints no run directory on stdout")
    leftovers = [n for n in os.listdir(os.path.join(run, "records")) if not n.endswith(".json")]
    t.ok(not leftovers, "no partial record files", leftovers)
    with open(os.path.join(run, "runs.log")) as f:
        t.ok("interrupted" in f.read(), "runs.log says interrupted")
    r = tap.run([os.path.join(tap.ROOT, "bench", "sweep"), "--resume", run])
    n = len(glob.glob(os.path.join(run, "records", "*.json")))
    t.ok(r.returncode == 0 and n == 9, "resume after SIGTERM completes the sweep (%d of 9 records)" % n, r.stderr)
finally:
    tap.cleanup(d)
t.done()
