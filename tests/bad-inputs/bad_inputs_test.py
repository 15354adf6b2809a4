"""Every front end fed the bad-input corpus of this directory (TAP).

run.txt, plan.txt, compare.txt, side-by-side.txt, sweep.txt and report.txt hold command
lines (NEEDLE<TAB>ARGS), specs.txt bad sweep specs (see README.md). An input
is handled when the tool exits non-zero (and not with a "record written"
status), prints nothing on stdout and ONE line on stderr that contains
NEEDLE (the bad value), writes nothing (its working directory, the results
directory and the fixtures are unchanged) and leaves no process behind (its
session is empty afterwards). The last line counts tried and handled.
"""
import ast
import hashlib
import json
import os
import shlex
import shutil
import stat
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
import tap

HARNESS = tap.HARNESS
PY = sys.executable
TOOLS = {
    "run": [HARNESS, "run"],
    "plan": [HARNESS, "plan"],
    "compare": [PY, os.path.join(ROOT, "bench", "compare")],
    "side-by-side": [PY, os.path.join(ROOT, "bench", "side-by-side")],
    "report": [PY, os.path.join(ROOT, "bench", "report")],
    "sweep": [PY, os.path.join(ROOT, "bench", "sweep")],
}
TIMEOUT = 120

t = tap.Tap()
if not os.access(HARNESS, os.X_OK):
    t.ok(False, "build/mshare-bench is built (run make)")
    t.done()


def sh(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, **kw)


# --- fixtures ---------------------------------------------------------------
FIX = tempfile.mkdtemp(prefix="mshare-bench-bad-inputs.")
WORKROOT = tempfile.mkdtemp(prefix="mshare-bench-bad-cases.")


def write(path, data, mode="w"):
    with open(path, mode) as f:
        f.write(data)
    return path


def tiny_run(name, backend):
    spec = write(os.path.join(WORKROOT, name + ".sweep"),
                 "name = %s\nbackends = %s\nworkers = 1\nsizes = 4M\nworkloads = pt-footprint\npage = 4k\n"
                 "repeats = 2\n" % (name, backend))
    r = sh([PY, TOOLS["sweep"][1], spec, "--results", FIX])
    os.unlink(spec)
    if r.returncode != 0:
        t.ok(False, "fixture sweep %s runs" % name, r.stderr)
        t.done()
    return r.stdout.strip()


P = {}
P["@RUN@"] = tiny_run("bad-inputs-a", "shm")
P["@RUN2@"] = tiny_run("bad-inputs-b", "anon")
P["@EMPTY@"] = os.path.join(FIX, "empty-run")
os.mkdir(P["@EMPTY@"])
shutil.copy(os.path.join(P["@RUN@"], "manifest.json"), P["@EMPTY@"])
P["@NOMANIFEST@"] = os.path.join(FIX, "no-manifest")
os.mkdir(P["@NOMANIFEST@"])
P["@BADJSON@"] = os.path.join(FIX, "bad-json")
os.mkdir(P["@BADJSON@"])
write(os.path.join(P["@BADJSON@"], "manifest.json"), "{not json")
P["@LISTMANIFEST@"] = os.path.join(FIX, "list-manifest")
os.mkdir(P["@LISTMANIFEST@"])
write(os.path.join(P["@LISTMANIFEST@"], "manifest.json"), "[1, 2]\n")
P["@BADRECORD@"] = os.path.join(FIX, "bad-record")
shutil.copytree(P["@RUN@"], P["@BADRECORD@"])
first = sorted(os.listdir(os.path.join(P["@BADRECORD@"], "records")))[0]
write(os.path.join(P["@BADRECORD@"], "records", first), "[]\n")
P["@FILE@"] = write(os.path.join(FIX, "a-file"), "not a directory\n")
P["@EXISTS@"] = write(os.path.join(FIX, "exists.json"), "{}\n")
P["@CSVOTHER@"] = write(os.path.join(FIX, "other.csv"), "name,value\nx,1\n")
P["@CSVCUT@"] = write(os.path.join(FIX, "cut.csv"), "schema_version,tool\n1,mshare-be")
P["@SPEC@"] = write(os.path.join(FIX, "good.sweep"), "backends = shm\nworkers = 1\nsizes = 4M\nworkloads = touch\n")
# Issue 44: a symbolic link (to @FILE@); a run directory with a FIFO named
# like a record; an oltp file with a latch an earlier run left set (block 5).
P["@LINK@"] = os.path.join(FIX, "a-link")
os.symlink(P["@FILE@"], P["@LINK@"])
P["@FIFORUN@"] = os.path.join(FIX, "fifo-run")
shutil.copytree(P["@RUN@"], P["@FIFORUN@"])
os.mkfifo(os.path.join(P["@FIFORUN@"], "records", first.replace(".r1.json", ".r9.json")))
P["@LATCHED@"] = os.path.join(FIX, "latched.db")
with open(P["@LATCHED@"], "wb") as f:
    f.write(b"\0" * 40960 + b"\1" + b"\0" * (65536 - 40961))
P["@FIXTURES@"] = FIX


def snapshot(top):
    out = {}
    for d, _, files in os.walk(top):
        out[d] = None
        for f in files:
            p = os.path.join(d, f)
            st = os.lstat(p)
            if not stat.S_ISREG(st.st_mode):  # a link or a FIFO of the fixtures: what it is, never read
                out[p] = "link to %s" % os.readlink(p) if stat.S_ISLNK(st.st_mode) else "mode %o" % st.st_mode
                continue
            with open(p, "rb") as fh:
                out[p] = hashlib.sha1(fh.read()).hexdigest()
    return out


def subst(text, extra):
    for k, v in list(extra.items()) + list(P.items()):
        text = text.replace(k, v)
    return text


def session_members(sid):
    def in_session(stat):
        fields = stat.rsplit(")", 1)[-1].split()
        return len(fields) > 3 and int(fields[3]) == sid
    return tap.procs("stat", in_session)


# --- the cases ----------------------------------------------------------------
def cli_cases(tool):
    with open(os.path.join(HERE, tool + ".txt")) as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            needle, _, args = line.partition("\t")
            yield "%s.txt:%d" % (tool, lineno), tool, needle, args, None


def spec_cases():
    with open(os.path.join(HERE, "specs.txt")) as f:
        lines = f.read().split("\n")
    case = None
    for lineno, line in enumerate(lines, 1):
        if line.startswith("=== "):
            if case:
                yield case
            case = ["specs.txt:%d" % lineno, "spec", line[4:], "", []]
        elif case is not None:
            case[4].append(line)
    if case:
        yield case


baseline = snapshot(FIX)
tried = handled = 0
mishandled = []
cases = [c for tool in ("run", "plan", "compare", "side-by-side", "sweep", "report") for c in cli_cases(tool)]
cases += list(spec_cases())
for where, tool, needle, args, spec in cases:
    d = tempfile.mkdtemp(dir=WORKROOT)
    extra = {"@DIR@": d}
    argv = [subst(a, extra) for a in shlex.split(args)]
    needle = subst(needle, extra)
    if tool == "spec":
        path = os.path.join(d, "case.sweep")
        if spec and spec[0].startswith("!bytes "):
            write(path, ast.literal_eval(spec[0][len("!bytes "):]), "wb")
        else:
            write(path, "\n".join(spec).strip("\n") + "\n" if any(s.strip() for s in spec) else "")
        cmd = TOOLS["sweep"] + [path, "--results", os.path.join(d, "results")]
    else:
        cmd = TOOLS[tool] + argv
        if tool == "run" and not any(a.startswith("--out") for a in argv):
            cmd += ["--out", os.path.join(d, "rec.json")]
        if tool == "sweep" and "--results" not in argv:
            cmd += ["--results", os.path.join(d, "results")]
    before = set(os.listdir(d))
    shown = " ".join(shlex.quote(a) for a in ([tool] + argv if tool != "spec" else ["sweep", where]))
    problems = []
    p = subprocess.Popen(cmd, cwd=d, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace",
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        problems.append("still running after %d s" % TIMEOUT)
    left = session_members(p.pid)
    if left:
        problems.append("left %d process(es) behind: %s" % (len(left), left))
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    rc = p.returncode
    lines = [ln for ln in err.splitlines() if ln.strip()]
    if rc <= 0 or (tool == "run" and rc in (3, 4)):
        problems.append("exit status %d" % rc)
    if out:
        problems.append("printed on stdout: %r" % out[:120])
    if len(lines) != 1:
        problems.append("%d lines on stderr, not one" % len(lines))
    if needle not in err:
        problems.append("the message does not name %r" % needle)
    if "Traceback" in err:
        problems.append("a Python traceback")
    if set(os.listdir(d)) != before:
        problems.append("wrote %s" % sorted(set(os.listdir(d)) - before))
    now = snapshot(FIX)
    if now != baseline:
        problems.append("changed the fixtures: %s" % sorted(k for k in set(now) | set(baseline)
                                                             if now.get(k) != baseline.get(k))[:3])
        baseline = now
    tried += 1
    msg = lines[0] if len(lines) == 1 else " | ".join(lines)[:300]
    if problems:
        mishandled.append(where)
        t.ok(False, "%s: %s -> %s" % (where, shown, "; ".join(problems)), "stderr: " + err[-600:])
    else:
        handled += 1
        t.ok(True, "%s: %s -> exit %d: %s" % (where, shown, rc, msg))
    shutil.rmtree(d, ignore_errors=True)

print("# bad inputs: %d tried, %d handled, %d mishandled%s" % (tried, handled, len(mishandled),
      (": " + " ".join(mishandled)) if mishandled else ""))
shutil.rmtree(FIX, ignore_errors=True)
shutil.rmtree(WORKROOT, ignore_errors=True)
t.done()
