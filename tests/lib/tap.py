"""TAP output for the Python tests (python3 standard library only); the C
unit tests use tests/lib/tap.h, the shell tests tests/lib/tap.sh.

    t = tap.Tap()            or tap.Tap(start=N) after N lines printed elsewhere
    t.ok(cond, what[, detail])   "ok N - what" / "not ok N - what" (+ detail)
    t.skip(what, why)            "ok N - what # SKIP why"
    t.done()                     the plan "1..N"; exits 1 when a check failed
    t = tap.harness_test(what)   a Tap, or a skip and the end when the harness
                                 binary cannot run here
    t, out, rec = tap.guest_results(sys.argv)   the Python part of a guest test

Also the bench tests' helpers: the harness binary (HARNESS, harness_missing),
guest_blocker, temporary directories, tiny sweep specs and sweeps. A test's
.sh wrapper puts this directory on PYTHONPATH (PYTHONPATH=tests/lib python3
-B tests/bench/compare_test.py runs one by hand).
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HARNESS = os.path.join(ROOT, "build", "mshare-bench")
sys.path.insert(0, os.path.join(ROOT, "bench", "lib"))


class Tap:
    def __init__(self, start=0):
        self.n = start
        self.failed = 0

    def ok(self, cond, what, detail=None):
        self.n += 1
        print("%s %d - %s" % ("ok" if cond else "not ok", self.n, what), flush=True)
        if not cond:
            self.failed += 1
            if detail:
                for line in str(detail).splitlines()[-15:]:
                    print("#   " + line)
        return cond

    def skip(self, what, why):
        self.n += 1
        print("ok %d - %s # SKIP %s" % (self.n, what, why), flush=True)

    def done(self):
        print("1..%d" % self.n)
        sys.exit(1 if self.failed else 0)


def guest_blocker():
    """Why a guest test cannot boot the VM here (None: it can), and whether
    that is a skip: only with the explicit opt-out MSHARE_SKIP_GUEST=1.
    Otherwise the test fails (make test builds the kernel first; a missing
    one is a broken set-up). Same rules as tests/kernel/lib/guest.sh."""
    if os.environ.get("MSHARE_SKIP_GUEST", "0") == "1":
        return "MSHARE_SKIP_GUEST=1: guest tests not run", True
    if not os.path.exists(os.path.join(ROOT, "build", "kernel", "bzImage")):
        return ("no patched kernel at build/kernel/bzImage (make kernel builds it; "
                "MSHARE_SKIP_GUEST=1 skips the guest tests)"), False
    if not shutil.which("qemu-system-x86_64"):
        return ("qemu-system-x86_64 not installed (scripts/deps.sh installs it; "
                "MSHARE_SKIP_GUEST=1 skips the guest tests)"), False
    return None, False


def procs(what, match):
    """pids of the live processes (this one left out) whose /proc/PID/WHAT
    ("stat", "cmdline", ...) as text satisfies match(text); a process that
    ends meanwhile is skipped."""
    pids = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open("/proc/%s/%s" % (name, what), "rb") as f:
                text = f.read().decode(errors="replace")
        except OSError:
            continue
        if match(text):
            pids.append(int(name))
    return pids


def human_bytes(n):
    """The bench tools' own rendering of a byte count (runrecords.human)."""
    import runrecords
    return runrecords.human(n, "bytes")


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, **kw)


def harness_missing():
    """Why real runs cannot happen here, or None."""
    if not os.access(HARNESS, os.X_OK):
        return "harness not built (build/mshare-bench)"
    r = run([HARNESS, "backends"])
    if r.returncode != 0 or "shm" not in r.stdout:
        return "`mshare-bench backends` does not list shm: %s" % (r.stdout + r.stderr).strip()[:200]
    return None


def guest_results(argv):
    """For the Python part of a guest test, run as python3 - DIR N: a Tap that
    goes on after the shell's N lines, DIR (the guest's /out) and rec(name),
    which reads the JSON record DIR/name."""
    out = argv[1]

    def rec(name):
        with open(os.path.join(out, name)) as f:
            return json.load(f)
    return Tap(start=int(argv[2])), out, rec


def guest_commands_ok(t, out, what, err_names=None):
    """A guest test's check that every command of its guest script ran: the
    script writes the name of each one that failed to DIR/failed.txt and its
    stderr to DIR/NAME.err (err_names maps a name to another .err stem)."""
    path = os.path.join(out, "failed.txt")
    failed = open(path).read().split() if os.path.exists(path) else []
    errs = ""
    for n in failed:
        e = os.path.join(out, (err_names or {}).get(n, n) + ".err")
        if os.path.exists(e):
            errs += open(e).read()
    t.ok(not failed, "%s (failed: %s)" % (what, failed), errs[-2000:] or None)


def guest_had(t, out, cpus, clock):
    """A guest test's check of the guest it got: vCPUs and clock (vm-env.txt)."""
    env = dict(l.strip().split("=", 1) for l in open(os.path.join(out, "vm-env.txt")) if "=" in l)
    t.ok(env.get("cpus") == str(cpus) and env.get("clock") == clock,
         "the guest had %s vCPUs under plain TCG (cpus=%s, clock=%s)" % (cpus, env.get("cpus"), env.get("clock")))


def tlb_counter_lines(out):
    """DIR/tlb.txt of the guest tool tlb-counters: {first word: {key: int}}."""
    lines = {}
    path = os.path.join(out, "tlb.txt")
    if os.path.exists(path):
        for l in open(path):
            w = l.split()
            if w:
                lines[w[0]] = {k: int(v) for k, v in (x.split("=") for x in w[1:])}
    return lines


def harness_test(what):
    """The Tap of a test of real runs. When the harness cannot run here, the
    test is the one line "ok 1 - WHAT # SKIP why" and ends."""
    t = Tap()
    why = harness_missing()
    if why:
        t.skip(what, why)
        t.done()
    return t


def tempdir(name):
    d = tempfile.mkdtemp(prefix="mshare-bench-%s." % name)
    return d


def cleanup(d):
    shutil.rmtree(d, ignore_errors=True)


def tiny_spec(name, repeats=2, workers="1, 4"):
    """A tiny real sweep spec: shm and anon, pt-footprint over 16 MiB, 4k pages."""
    return """# tiny real sweep for the tests
name = %s
backends = shm, anon
workers = %s
sizes = 16M
workloads = pt-footprint
page = 4k
repeats = %d
""" % (name, workers, repeats)


def write_spec(d, name, repeats=2, text=None, workers="1, 4"):
    path = os.path.join(d, name + ".sweep")
    with open(path, "w") as f:
        f.write(text if text is not None else tiny_spec(name, repeats, workers))
    return path


def sweep(spec, results, *extra):
    return run([os.path.join(ROOT, "bench", "sweep"), spec, "--results", results] + list(extra))
