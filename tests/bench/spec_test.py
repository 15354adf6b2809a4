import glob
import os

import tap
import sweepspec

t = tap.Tap()

# Every shipped spec parses and expands, the PostgreSQL ones (workload
# postgres, issue 45) included: one spec format.
for path in sorted(glob.glob(os.path.join(tap.ROOT, "bench", "sweeps", "*.sweep"))):
    try:
        spec = sweepspec.load(path)
        pts = spec.expand()
        t.ok(len(pts) > 0 and len(set(p["id"] for p in pts)) == len(pts),
             "shipped spec %s parses: %d distinct points" % (os.path.basename(path), len(pts)))
        if os.access(tap.HARNESS, os.X_OK):
            sweepspec.check_with_harness(spec, tap.HARNESS)
            t.ok(True, "the harness accepts every point of shipped spec %s (run --check)" % os.path.basename(path))
        else:
            t.skip("the harness accepts shipped spec %s" % os.path.basename(path), "harness not built")
    except sweepspec.SpecError as e:
        t.ok(False, "shipped spec %s parses" % os.path.basename(path), e)

# The main job's spec: every host backend that can run here, and the
# guest headline points: the lead at 1 GiB and 10,000 workers (mshare with
# 2 MiB leaves, hugetlb-2m, DAX 2M) and the 4 KiB comparison (mshare and
# DAX 4K at 1,000 workers over 256 MiB).
dflt = {p["id"] for p in sweepspec.load(os.path.join(tap.ROOT, "bench", "sweeps", "default.sweep")).expand()}
want = {"shm-4k-w1000-s256M-pt-footprint", "anon-4k-w1000-s256M-pt-footprint", "hugetlb-2m-w1000-s256M-pt-footprint",
        "guest-mshare-any-w10000-s1G-pt-footprint", "guest-hugetlb-2m-w10000-s1G-pt-footprint",
        "guest-file-any-w100-s1G-pt-footprint",
        "guest-mshare-4k-w1000-s256M-pt-footprint", "guest-file-4k-w1000-s256M-pt-footprint"}
t.ok(want <= dflt, "default spec has the host backends and the guest headline points", sorted(want - dflt))

BASE_CLOCK = "backends = shm\nworkers = 1\nsizes = 16M\nworkloads = touch\nplatform = guest\n"
GOOD = """# comment line
name = t1
backends = shm, anon   # trailing comment
workers = 1, 10, 100, 1000
sizes = 64M, 1G
workloads = pt-footprint, touch
page = 4k, any
repeats = 3
args = --seed 7
exclude = workload=touch workers>=1000
exclude = backend=anon size>=1G page=any
args[workload=touch backend=shm] = --write-pct 5
timeout = 10m
"""
spec = sweepspec.parse(GOOD, "good.sweep")
pts = spec.expand()
ids = [p["id"] for p in pts]
# 2 backends x 4 workers x 2 sizes x 2 workloads x 2 pages = 64, minus
# touch with 1000 workers (2x2x2 = 8) and anon/1G/any (4 workers x 2 workloads, of which
# touch-1000 already gone: 7) = 49.
t.ok(len(pts) == 49, "cross product minus excludes: %d points (expect 49)" % len(pts))
t.ok("shm-4k-w100-s64M-pt-footprint" in ids, "point ids read backend-page-wN-sSIZE-workload")
t.ok(not any(p["workload"] == "touch" and p["workers"] >= 1000 for p in pts), "exclude with >= drops its points")
t.ok(not any(p["backend"] == "anon" and p["size"] == "1G" and p["page"] == "any" for p in pts),
     "exclude with three conditions drops only points matching all")
t.ok(any(p["backend"] == "anon" and p["size"] == "1G" and p["page"] == "4k" for p in pts),
     "points matching only some conditions stay")
touch_shm = [p for p in pts if p["workload"] == "touch" and p["backend"] == "shm"][0]
other = [p for p in pts if p["workload"] == "pt-footprint"][0]
t.ok(touch_shm["args"] == ["--seed", "7", "--write-pct", "5"] and other["args"] == ["--seed", "7"],
     "args then matching args[...] in order: %s / %s" % (touch_shm["args"], other["args"]))
t.ok(spec.get("repeats") == 3 and spec.get("timeout") == 600 and spec.name == "t1", "scalars: repeats, timeout, name")
t.ok(sweepspec.parse("backends=shm\nworkers=2\nsizes=4K\nworkloads=touch\n", "d.sweep").get("page") == ["4k"],
     "defaults: page 4k without a page key")
t.ok(sweepspec.parse("backends=shm\nworkers=2\nsizes=4K\nworkloads=touch\nwrite=yes\nplatform=guest\n",
                     "g.sweep").expand()[0]["id"] == "guest-shm-4k-w2-s4K-touch-write",
     "guest points get a guest- prefix, write runs a -write suffix")
t.ok(sweepspec.parse(BASE_CLOCK + "clock = instructions\n", "c.sweep").get("clock") == "instructions"
     and sweepspec.parse(BASE_CLOCK, "c.sweep").get("clock") is None,
     "clock: the guest points' --clock when given, none (the VM runner's default) without")
cs = sweepspec.parse("backends=shm\nworkers=2\nsizes=4K\nworkloads=touch, pt-footprint\nplatform=host, guest\n"
                     "clock = tcg\nclock[workload=touch] = instructions\n", "cc.sweep").expand()
got = {p["id"]: p.get("clock") for p in cs}
t.ok(got == {"shm-4k-w2-s4K-touch": None, "shm-4k-w2-s4K-pt-footprint": None,
             "guest-shm-4k-w2-s4K-touch": "instructions", "guest-shm-4k-w2-s4K-pt-footprint": "tcg"},
     "clock[...]: guest points get the last matching clock, else clock; host points none", got)
try:
    sweepspec.parse(BASE_CLOCK + "clock[platform=host] = instructions\n", "h.sweep")
    t.ok(False, "clock[platform=host] refused")
except sweepspec.SpecError as e:
    t.ok("clock[...] applies to guest points only" in str(e) and "h.sweep:" in str(e), "clock[platform=host] refused, "
         "with file and line", e)
try:
    sweepspec.parse(BASE_CLOCK + "clock[workers=2] = turbo\n", "h.sweep")
    t.ok(False, "clock[...] = turbo refused")
except sweepspec.SpecError as e:
    t.ok("clock: 'turbo' is not one of" in str(e), "an unknown clock in clock[...] refused", e)
dpts = sweepspec.load(os.path.join(tap.ROOT, "bench", "sweeps", "default.sweep")).expand()
touch = [p for p in dpts if p["workload"] == "touch"]
t.ok(touch and all(p["platform"] == "guest" and p["write"] == "yes" and p.get("clock") == "instructions"
                   and p["workers"] <= 100 for p in touch)
     and all(p.get("clock") is None for p in dpts if p["workload"] != "touch")
     and {p["backend"] for p in touch} == {"mshare", "file", "hugetlb-2m", "anon"},
     "default spec: guest touch --write points up to 100 workers under the instruction clock, the rest without "
     "a clock key", [(p["id"], p.get("clock")) for p in touch])
alts = sweepspec.parse("backends=shm,anon,file\nworkers=1\nsizes=1M\nworkloads=touch\nexclude=backend=shm|file\n",
                       "a.sweep").expand()
t.ok([p["backend"] for p in alts] == ["anon"], "= with | alternatives")

# repeats[...]: per-point repeat counts, the last matching line wins.
reps = sweepspec.parse("backends = shm, anon\nworkers = 1, 100, 10000\nsizes = 16M\nworkloads = touch\n"
                       "platform = host, guest\nrepeats = 3\nrepeats[workers>=10000] = 1\n"
                       "repeats[platform=guest backend=anon] = 2\n", "r.sweep")
rp = {p["id"]: p["repeats"] for p in reps.expand()}
t.ok(rp["shm-4k-w100-s16M-touch"] == 3 and rp["shm-4k-w10000-s16M-touch"] == 1
     and rp["guest-anon-4k-w10000-s16M-touch"] == 2 and rp["guest-shm-4k-w10000-s16M-touch"] == 1
     and reps.total_runs() == 7 + 7 + 7 + 6,  # host shm, host anon, guest shm: 3+3+1; guest anon: 2+2+2
     "repeats[...] sets per-point repeats, the last matching line wins (%d runs)" % reps.total_runs(), rp)

BASE = "backends = shm\nworkers = 1\nsizes = 16M\nworkloads = touch\n"
BAD = [
    ("backends = shm\nworkers = 1, x\nsizes = 16M\nworkloads = touch\n", 2, "'x' is not a positive whole number"),
    (BASE + "sizes = 16M\n", 5, "'sizes' is set twice (first on line 3)"),
    (BASE + "color = red\n", 5, "unknown key 'color'"),
    (BASE + "this line has no equals\n", 5, "expected 'key = value'"),
    (BASE + "page = 2m\n", 5, "'2m' is not one of 4k, any"),
    ("backends = shm\nworkers = 1\nsizes = 16Q\nworkloads = touch\n", 3, "'16Q' is not a size"),
    (BASE + "repeats = 0\n", 5, "repeats: '0' is not a positive whole number"),
    (BASE + "exclude = colour=red\n", 5, "unknown field 'colour'"),
    (BASE + "exclude = backend>shm\n", 5, "'backend', which is not a number"),
    (BASE + "exclude = workers>=lots\n", 5, "workers must be a whole number"),
    (BASE + "exclude = workers >= 10\n", 5, "bad condition"),
    (BASE + "backends[workers=1] = shm\n", 5, "only 'args', 'repeats' and 'clock' take [conditions]"),
    (BASE + "repeats[workers=1] = none\n", 5, "repeats: 'none' is not a positive whole number"),
    (BASE + "repeats[colour=red] = 2\n", 5, "unknown field 'colour'"),
    ("backends = shm,,anon\nworkers = 1\nsizes = 16M\nworkloads = touch\n", 1, "empty item"),
    ("backends = shm, shm\nworkers = 1\nsizes = 16M\nworkloads = touch\n", 1, "lists 'shm' twice"),
    (BASE + "timeout = soon\n", 5, "is not a duration"),
    (BASE + "platform = cloud\n", 5, "'cloud' is not one of host, guest"),
    (BASE + "workloads = pt-footprint\n", 5, "'workloads' is set twice (first on line 4)"),
    (BASE + "clock = fast\n", 5, "clock: 'fast' is not one of instructions, tcg, kvm, auto"),
    (BASE + "clock = tcg\nvm-args = --mem 2G --clock instructions\n", 5, "both 'clock' and a --clock in 'vm-args' (line 6)"),
]
for text, line, msg in BAD:
    try:
        sweepspec.parse(text, "bad.sweep")
        t.ok(False, "refused: %s" % msg, "parsed without error")
    except sweepspec.SpecError as e:
        t.ok(str(e).startswith("bad.sweep:%d:" % line) and msg in str(e),
             "line %d refused: %s" % (line, msg), "got: %s" % e)
for text, msg in [("backends = shm\nworkers = 1\nsizes = 16M\n", "missing required key 'workloads'"),
                  (BASE + "exclude = backend=shm\n", "every point is excluded")]:
    try:
        sweepspec.parse(text, "bad.sweep")
        t.ok(False, "refused: %s" % msg)
    except sweepspec.SpecError as e:
        t.ok(str(e).startswith("bad.sweep:") and msg in str(e), "refused: %s" % msg, "got: %s" % e)

# The runner itself: a bad spec gives file:line on stderr, exit non-zero,
# and no run directory.
d = tap.tempdir("spec")
try:
    path = tap.write_spec(d, "broken", text=BASE + "workers = 2\n")
    results = os.path.join(d, "results")
    r = tap.sweep(path, results)
    t.ok(r.returncode != 0 and ("%s:5: 'workers' is set twice" % path) in r.stderr,
         "bench/sweep on a bad spec: exit %d, message names file:line" % r.returncode, r.stderr)
    t.ok(not os.path.exists(results) or not os.listdir(results), "bench/sweep on a bad spec creates no run directory")
    # A real sweep with per-point repeats: 1 worker 2 runs, 4 workers 1 run.
    why = tap.harness_missing()
    if why:
        t.skip("repeats[...] in a real sweep", why)
    else:
        path = tap.write_spec(d, "reps", text=tap.tiny_spec("reps") + "repeats[workers=4] = 1\n"
                              + "exclude = backend=anon\n")
        r = tap.sweep(path, os.path.join(d, "r-reps"))
        recs = sorted(os.listdir(os.path.join(r.stdout.strip(), "records"))) if r.returncode == 0 else []
        t.ok(recs == ["shm-4k-w1-s16M-pt-footprint.r1.json", "shm-4k-w1-s16M-pt-footprint.r2.json",
                      "shm-4k-w4-s16M-pt-footprint.r1.json"] and "3 runs (2 repeats, 1 for 1 points)" in r.stderr,
             "repeats[workers=4] = 1 in a real sweep: 3 records", r.stderr + str(recs))
    r = tap.run([os.path.join(tap.ROOT, "bench", "sweep"), "--dry-run", "default"])
    t.ok(r.returncode == 0 and "shm-4k-w1000-s256M-pt-footprint" in r.stdout, "--dry-run lists a named spec's points",
         r.stderr)
finally:
    tap.cleanup(d)
t.done()
