import json
import os
import subprocess
import tempfile

import tap
import glob

import pgdba
import pgpoint

t = tap.Tap()
SWEEP = os.path.join(tap.ROOT, "bench", "sweep")
PROJECT = os.path.join(tap.ROOT, "bench", "pg-dba-project")
FIX = os.path.join(tap.ROOT, "tests", "bench", "pg-dba-fixture")


def run(cmd, *args):
    return subprocess.run([cmd] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)


SPEC = """name = dbat
platform = guest
workloads = postgres
backends = anon
workers = 4
sizes = 64M
args = --preset dba --scale 1 --window 5
"""


def point(backend, n=4, platform="guest", args=("--preset", "dba", "--scale", "1", "--window", "5")):
    pid = "%s-%s-w%d-s64M-postgres" % (backend, "4k" if backend != "hugetlb-2m" else "", n)
    pid = pid.replace("--", "-")
    return {"platform": platform, "workload": "postgres", "backend": backend, "page": "any" if backend == "hugetlb-2m" else "4k",
            "size": "64M", "size_bytes": 64 << 20, "write": "no", "workers": n, "args": list(args),
            "id": ("guest-" if platform == "guest" else "") + pid}


def frame(clock, platform):
    return {"schema_version": 8, "tool": "mshare-bench",
            "environment": {"platform": platform, "kernel": "6.1.192", "kernel_version": "#1 SMP", "clock": clock,
                            "time_unit": "instructions" if clock == "guest-instructions" else "ns"}}


def write_record(rec, path, fr):
    """The record through the harness's writer (`mshare-bench record`), the frame fr in a file as the guest leaves it."""
    fp = path + ".frame.json"
    json.dump(fr, open(fp, "w"))
    why = pgpoint.write(rec, path, fp, tap.HARNESS)
    os.unlink(fp)
    return why


def build_from(fixture, stem, p, fr):
    """pgpoint.build on a fixture's pg/STEM.* files, named as a sweep's run names them."""
    d = tempfile.mkdtemp(prefix="pg-dba-test.")
    t_ = pgpoint.tag(p["id"], 1)
    for ext in ("facts", "passes", "pid.json", "pid.err"):
        src = os.path.join(fixture, "pg", "%s.%s" % (stem, ext))
        if os.path.exists(src):
            open(os.path.join(d, "%s.%s" % (t_, ext)), "wb").write(open(src, "rb").read())
    rec, note = pgpoint.build(p, 1, d, fr, {"planner_mode": "by-page"}, tap.HARNESS)
    return rec, note, d


# --- spec parsing and validation ---
r = run(SWEEP, "postgres-dba", "--dry-run")
ids = [line.split()[0] for line in r.stdout.splitlines()]
t.ok(r.returncode == 0 and ids and all(i.endswith("-postgres") for i in ids) and "--preset dba" in r.stdout,
     "postgres-dba --dry-run lists dba points", r.stdout + r.stderr)
spec_backends = [line.split("=", 1)[1] for line in open(os.path.join(tap.ROOT, "bench", "sweeps", "postgres-dba.sweep"))
                 if line.startswith("backends")][0]
t.ok(sorted({i[len("guest-"):].split("-4k-")[0].split("-w")[0] for i in ids}) ==
     sorted(b.strip() for b in spec_backends.split(",")), "the spec's points are its backends", ids)
with tempfile.TemporaryDirectory() as d:
    bad = os.path.join(d, "bad.sweep")
    open(bad, "w").write(SPEC.replace("--preset dba", "--preset scan"))
    r = run(SWEEP, bad, "--dry-run")
    t.ok(r.returncode != 0 and "'scan'" in r.stderr and "bad.sweep:7" in r.stderr,
         "an unknown preset is refused naming the value and line", r.stderr)
    s25 = os.path.join(d, "d25.sweep")
    open(s25, "w").write(SPEC.replace("backends = anon", "backends = mshare-2025-file, anon"))
    r = run(SWEEP, s25, "--dry-run")
    t.ok(r.returncode == 0 and "guest-mshare-2025-file-4k-w4-s64M-postgres" in r.stdout,
         "a 2025 design point is an ordinary point (on a kernel without the series its backend is unusable: "
         "the guest's harness says so and the point is skipped)", r.stdout + r.stderr)

# --- passes and the VmPTE split on the recorded fixture ---
passes_text = open(os.path.join(FIX, "pg", "4k-c4.passes")).read()
rows = pgdba.parse_passes(passes_text)
lines = [line.split("\t") for line in passes_text.splitlines() if line.strip()]
t.ok(len(rows) == len(lines) and rows, "every pass line parsed", rows)
fp = pgdba.first_pass(rows)
want = [int(b) - int(a) for _, a, b, _ in lines]
t.ok(fp["minflt_per_backend"]["sum"] == sum(want) and fp["minflt_per_backend"]["max"] == max(want)
     and fp["kind"] == "measured", "first-pass faults: after minus before, per backend", fp)
for bad, why in (("1\t5\t3\t10", "below"), ("1\tx\t3\t10", "not whole"), ("1\t2\t3", "4 tab-separated")):
    try:
        pgdba.parse_passes(passes_text + bad + "\n", "f")
        t.ok(False, "a bad passes line is refused (%s)" % why)
    except pgdba.DbaError as e:
        t.ok(why in str(e) and "f:%d" % (len(lines) + 1) in str(e), "a bad passes line is refused naming it (%s)" % why, e)

pj = json.load(open(os.path.join(FIX, "pg", "4k-c4.pid.json")))
pids = [int(line[0]) for line in lines]
split = pgdba.vmpte_split(pj, pids)
procs = {p["pid"]: p for p in pj["measured"]["per_process"]}
own = [procs[p]["vmpte_bytes"] - procs[p]["segment_model_bytes"] for p in pids]
t.ok(split["backends"] == len(pids) and split["own_bytes"]["sum"] == sum(own),
     "own page tables = VmPTE minus the segment's part, summed over the backends only", split)
t.ok(split["vmpte_bytes"]["sum"] == split["segment_bytes"]["sum"] + split["own_bytes"]["sum"],
     "the split adds up to VmPTE", split)
t.ok(split["vmpte_bytes"]["kind"] == "measured" and "modelled" in split["segment_bytes"]["kind"],
     "the split says which part is measured and which modelled", split)
others = [p for p in procs if p not in pids]
t.ok(others and pgdba.vmpte_split(pj, others[:1])["backends"] == 1,
     "processes other than the given backends are not counted", others)
ms = pgdba.vmpte_split_mshare(split["vmpte_bytes"]["sum"], split["backends"], split["vmpte_bytes"]["min"],
                              split["vmpte_bytes"]["max"])
t.ok(ms["own_bytes"]["sum"] == split["vmpte_bytes"]["sum"] and ms["segment_bytes"]["sum"] == 0
     and "by construction" in ms["segment_bytes"]["kind"] and ms["vmpte_bytes"]["kind"] == "measured",
     "mshare: all of VmPTE is the backend's own, the segment's 0 said to be by construction", ms)
t.ok(pgdba.vmpte_split_mshare(None, 4, 0, 0) is None, "mshare: no VmPTE read, no split")
ms25 = pgdba.vmpte_split_mshare(4 << 20, 4, 1 << 20, 1 << 20, design=2025)
t.ok(ms25["segment_bytes"]["sum"] == 0 and "2025 design" in ms25["segment_bytes"]["kind"]
     and "2025" not in ms["segment_bytes"]["kind"], "the 2025 design's split says why its segment part is 0", ms25)
t.ok(pgdba.instructions_per_tx("guest-tcg-ns", 10.0, 1000) is None
     and pgdba.instructions_per_tx("guest-instructions", 2.0, 1000) == 2e6,
     "instructions per transaction only under the instruction clock (ns = instructions)")

# --- records from the fixture, and the projection's labels ---
with tempfile.TemporaryDirectory() as d:
    p = point("anon", platform="host")
    fr = frame("host-ns", "host")
    rec, note, pgd = build_from(FIX, "4k-c4", p, fr)
    rundir = os.path.join(d, "dbat-host")
    os.makedirs(os.path.join(rundir, "records"))
    json.dump({"points": [p]}, open(os.path.join(rundir, "manifest.json"), "w"))
    if rec:
        t.ok(write_record(rec, os.path.join(rundir, "records", pgpoint.tag(p["id"], 1) + ".json"), fr) is None,
             "the harness's writer writes the record")
    t.ok(rec is not None and note is None, "pgpoint.build makes the dba record from the fixture", note)
    rec = rec or {}
    res = rec.get("results", {})
    cond = res.get("conditions", {})
    t.ok(all(cond.get(k) is not None for k in ("shared_buffers", "scale", "connections", "mode", "kernel", "clock", "design")),
         "the record states its conditions", cond)
    t.ok(cond.get("design") == "no mshare", "a 4k record's design: no mshare", cond.get("design"))
    env = rec.get("environment", {})
    t.ok(env.get("clock") == "host-ns" and env.get("time_unit") == "ns" and rec.get("schema_version") == 8,
         "the record's clock, unit and schema are the frame's (the harness's, where the point ran)", env)
    dba = res.get("dba") or {}
    t.ok(dba.get("first_pass") == fp and dba.get("vmpte_split") == split, "the record holds the split and faults", dba)
    tx, win = res.get("faults", {}).get("transactions"), res.get("faults", {}).get("window_s")
    t.ok(res.get("workload", {}).get("ops_per_s") == tx / win, "the record's TPS is the window's", (tx, win))
    if tap.harness_missing():
        t.skip("the projection's labels", "build/mshare-bench missing")
    else:
        r = run(PROJECT, rundir, "--json")
        out = json.loads(r.stdout) if r.returncode == 0 else {}
        proj = out.get("projection", [])
        labels = {p[k]["label"] for p in proj for k in ("pagetables_all", "pagetables_per_backend",
                                                         "faults_first_pass_per_backend")}
        t.ok(proj and labels == {"modelled"}, "every projected figure is labelled modelled", r.stderr or labels)
        r = run(PROJECT, rundir)
        quoted = [line for line in r.stdout.splitlines() if line.rstrip().endswith("quoted")]
        t.ok(len(quoted) == len(pgdba.WARTAK["figures"]), "every published figure is printed as quoted", r.stdout)
        r = run(PROJECT, d)
        t.ok(r.returncode == 2 and d in r.stderr, "a directory without records is refused naming it", r.stderr)
# --- the PageTables delta in PageTables' own accounting (a guest point) ---
import importlib.machinery  # noqa: E402
import importlib.util  # noqa: E402

loader = importlib.machinery.SourceFileLoader("pg_dba_project", PROJECT)
spec_ = importlib.util.spec_from_loader("pg_dba_project", loader)
proj_mod = importlib.util.module_from_spec(spec_)
loader.exec_module(proj_mod)
G = 1 << 30
t.ok(proj_mod.shared_pmd_pages("hugetlb-2m", {"start": "0x7f1c42c00000", "size_bytes": 2229272576}) == 1,
     "hugetlb-2m: one 1 GiB range wholly inside the ref2 N = 200 segment: one shared PMD page")
t.ok(proj_mod.shared_pmd_pages("hugetlb-2m", {"start": hex(2 * G), "size_bytes": 2 * G}) == 2
     and proj_mod.shared_pmd_pages("hugetlb-2m", {"start": hex(2 * G + 4096), "size_bytes": 2 * G}) == 1
     and proj_mod.shared_pmd_pages("hugetlb-2m", {"start": hex(2 * G), "size_bytes": G - 4096}) == 0,
     "shared PMD pages: only 1 GiB ranges wholly inside the mapping")
t.ok(proj_mod.shared_pmd_pages("4k", {"start": hex(2 * G), "size_bytes": 2 * G}) == 0
     and proj_mod.shared_pmd_pages("hugetlb-2m", None) == 0, "no shared PMD pages outside hugetlb-2m")
FIXG = os.path.join(tap.ROOT, "tests", "bench", "pg-dba-fixture-guest")
with tempfile.TemporaryDirectory() as d:
    p = point("hugetlb-2m")
    fr = frame("guest-instructions", "guest")
    rec, note, _ = build_from(FIXG, "hugetlb-2m-c4", p, fr)
    rundir = os.path.join(d, "dbag")
    os.makedirs(os.path.join(rundir, "records"))
    json.dump({"points": [p]}, open(os.path.join(rundir, "manifest.json"), "w"))
    if rec:
        t.ok(write_record(rec, os.path.join(rundir, "records", pgpoint.tag(p["id"], 1) + ".json"), fr) is None,
             "the harness's writer writes the record")
    recs = glob.glob(os.path.join(rundir, "records", "*.json"))
    t.ok(rec is not None and note is None and len(recs) == 1, "pgpoint.build makes the guest hugetlb-2m record", note)
    dba = (json.load(open(recs[0])) if recs else {}).get("results", {}).get("dba") or {}
    acc, ap = dba.get("pt_accounting") or {}, dba.get("after_pass") or {}
    t.ok(acc.get("vmpte_pages") == 3 and acc.get("pagetables_pages") == 2 and acc.get("pud_in_pagetables") is False
         and "measured" in acc.get("kind", ""), "the record says Linux 6.1's PageTables leaves PUD pages out", acc)
    t.ok(ap.get("backends") == 4 and ap.get("vmpte_sum_bytes") == 512 * 1024 and ap.get("pud_pages_sum") == 12
         and ap.get("pgbench_vmpte_bytes") == 80 * 1024 and ap.get("pgbench_pud_pages") == 3,
         "the record holds VmPTE and PUD pages right after the passes, backends and pgbench", ap)
    if tap.harness_missing():
        t.skip("the PageTables view of the delta", "build/mshare-bench missing")
    else:
        r = run(PROJECT, rundir, "--json")
        cal = json.loads(r.stdout)["calibration"] if r.returncode == 0 else []
        v = (cal[0].get("pagetables_all_pt_view") or {}) if cal else {}
        # 4 x (0 + 128 KiB - 12 KiB) + (80 - 12) KiB = 532 KiB, the measured
        # delta (1200 - 668 kB)
        t.ok(v.get("measured") == 532 * 1024 and v.get("modelled") == 532 * 1024 and v.get("error_pct") == 0.0,
             "the delta in PageTables' accounting: 4 x (128 - 12) KiB + pgbench's 68 KiB = the measured 532 KiB",
             r.stderr or v)
    # a run recorded before these figures: no PageTables view, no error
    old = {"config": {"backend": "4k"}, "results": {"dba": {"vmpte_split": None, "pagetables_after_pass_delta_bytes": 1}}}
    t.ok(proj_mod.pagetables_view(old, 0) is None, "a record without the figures has no PageTables view")

# --- a plan --pid JSON of another shape (another version of plan, or cut
# and mended): an error in the record, never an exception
pj0 = json.load(open(os.path.join(FIX, "pg", "4k-c4.pid.json")))
no_seg = dict(pj0)
del no_seg["segment"]
row_str = json.loads(json.dumps(pj0))
for row in row_str["measured"]["per_process"]:
    row["vmpte_bytes"] = "x"
no_key = json.loads(json.dumps(pj0))
for row in no_key["measured"]["per_process"]:
    del row["segment_model_bytes"]
for what, obj in (("no segment", no_seg), ("a VmPTE that is a string", row_str),
                  ("rows without segment_model_bytes", no_key)):
    try:
        pgdba.vmpte_split(obj, [r["pid"] for r in pj0["measured"]["per_process"]])
        got = "accepted"
    except pgdba.DbaError as e:
        got = "DbaError: %s" % e
    except Exception as e:  # noqa: BLE001 - what the test is about
        got = "%s: %s" % (type(e).__name__, e)
    t.ok(got.startswith("DbaError") and "plan --pid" in got,
         "plan --pid JSON with %s: refused as the plan's (DbaError), no exception" % what, got)

# --- pg-dba-project on a run with a record whose dba figures are not a
# record's: refused naming the file, exit 1 (it was a Python traceback)
import shutil  # noqa: E402
DBA_RUN = os.path.join(tap.ROOT, "results", "postgres-dba-ref3-20261207T013328Z")
if os.path.isdir(DBA_RUN) and not tap.harness_missing():
    srcs = sorted(glob.glob(os.path.join(DBA_RUN, "records", "*.json")))
    good = json.load(open(srcs[0]))
    no_mean = json.loads(json.dumps(good))
    del no_mean["results"]["dba"]["vmpte_split"]["touched_spans_2m_mean"]
    no_workers = json.loads(json.dumps(good))
    del no_workers["config"]["workers"]
    for what, obj in (("a VmPTE split without touched_spans_2m_mean", no_mean), ("no config.workers", no_workers)):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "records"))
            for f in srcs:
                shutil.copy(f, os.path.join(d, "records"))
            json.dump(obj, open(os.path.join(d, "records", "zz-bad.r1.json"), "w"))
            r = run(PROJECT, d, "--json")
            t.ok(r.returncode == 1 and "zz-bad.r1.json" in r.stderr and "Traceback" not in r.stderr,
                 "pg-dba-project on a run with a record of %s: refused naming it, exit 1" % what, r.stderr[-500:])
else:
    t.skip("pg-dba-project on a run with a bad record", "%s or the harness missing" % DBA_RUN)

# --- bytes that are not UTF-8 in the dba files: an error in the record, never
# an exception (it ended the sweep; a guest boot's other records were not filed)
for what, ext, data, facts_sub in (
        ("the passes file", "passes", b"1234\t10\t\xff\t5\n", None),
        ("plan --pid's stderr", "pid.err", b"plan: \xff\xfe\n", (b"plan_pid_rc=0", b"plan_pid_rc=1"))):
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "pg"))
        for f in glob.glob(os.path.join(FIX, "pg", "4k-c4.*")):
            b = open(f, "rb").read()
            if f.endswith(".facts") and facts_sub:
                b = b.replace(*facts_sub)
            open(os.path.join(d, "pg", os.path.basename(f)), "wb").write(b)
        open(os.path.join(d, "pg", "4k-c4." + ext), "wb").write(data)
        try:
            rec, note, pgd = build_from(d, "4k-c4", point("anon", platform="host"), frame("host-ns", "host"))
            got = (rec or {}).get("results", {}).get("dba", {}).get("errors")
        except Exception as e:  # noqa: BLE001 - what the test is about
            rec, got = None, "%s: %s" % (type(e).__name__, e)
        t.ok(rec is not None and got, "bytes that are not UTF-8 in %s: the record says what it could not read" % what,
             got)
t.done()
