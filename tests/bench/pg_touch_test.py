import mmap
import os
import shutil
import subprocess
import tempfile

import tap

import pgpoint

t = tap.Tap()
ROOT = tap.ROOT
PG_TOUCH = os.path.join(ROOT, "build", "guest", "bin", "pg-touch")
FIX = os.path.join(ROOT, "tests", "bench", "pg-touch-fixture", "pg")
SCRIPT = os.path.join(ROOT, "workloads", "postgres", "guest", "pg-bench.sh")


def run(*cmd):
    return subprocess.run(list(cmd), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)


# --- pg-touch on this process: pages written at known offsets ---------------
if not os.access(PG_TOUCH, os.X_OK):
    t.skip("pg-touch counts", "%s not built (make test-build)" % PG_TOUCH)
else:
    # 8 MiB, 2 MiB aligned inside a larger reservation so the span count is exact
    big = mmap.mmap(-1, 12 << 20, flags=mmap.MAP_SHARED)
    me = str(os.getpid())
    r0 = run(PG_TOUCH, me, me)
    base = None
    for line in r0.stdout.splitlines():
        if line.startswith("segment "):
            base = int(line.split()[1], 16)
    t.ok(r0.returncode == 0 and base is not None, "pg-touch finds this process's largest shared writable mapping",
         r0.stdout + r0.stderr)
    first = [l for l in r0.stdout.splitlines() if l.startswith(me + " ")]
    t.ok(first == [me + " 0 0"], "nothing touched yet: 0 pages, 0 spans", first)
    span = 2 << 20
    a0 = ((base + span - 1) // span) * span - base  # first 2 MiB boundary inside
    offs = [a0, a0 + 4096, a0 + 8192, a0 + span + 4096, a0 + 3 * span]
    for o in offs:
        big[o] = 1
    r = run(PG_TOUCH, me, me, "4194303999")
    lines = r.stdout.splitlines()
    t.ok(me + " 5 3" in lines, "5 pages written in 3 different 2 MiB spans: '5 3'", lines)
    t.ok(any(l.startswith("4194303999 - - ") for l in lines) and r.returncode == 1,
         "a process that is gone is '- -' with the reason, exit 1", r.stdout + r.stderr)
    r = run(PG_TOUCH, me, "12x")
    t.ok(r.returncode == 2 and "'12x'" in r.stderr, "a bad PID is refused naming it, exit 2", r.stderr)
    r = run(PG_TOUCH)
    t.ok(r.returncode == 2 and "usage" in r.stderr, "no argument: usage, exit 2", r.stderr)
    big.close()

# --- the option ------------------------------------------------------------
o = pgpoint.options(["--preset", "select", "--window", "5", "--touch", "0,5,20"])
t.ok(o["touch"] == [0, 5, 20], "--touch 0,5,20 is read as guest seconds", o)
for bad, want in ((["--window", "5", "--touch", "3"], "--touch 3 is inside the window of 5 s"),
                  (["--window", "5", "--touch", "20,5"], "is not increasing"),
                  (["--touch", "5s"], "--touch '5s'"),
                  (["--touch", "10", "--touch", "20"], "given twice"),
                  # digits str.isdigit() takes and int() does not: refused, not a ValueError
                  (["--touch", "\u00b2"], "--touch '\u00b2'"), (["--scale", "\u00b2"], "--scale '\u00b2'")):
    try:
        pgpoint.options(bad)
        got = "accepted"
    except pgpoint.PgError as e:
        got = str(e)
    except ValueError as e:
        got = "ValueError: %s" % e
    t.ok(want in got, "%s is refused: %s" % (" ".join(bad), want), got)


def point(backend, n=10, args=("--preset", "select", "--scale", "1", "--window", "5", "--touch", "0,5,10")):
    return {"platform": "guest", "workload": "postgres", "backend": backend, "page": "4k", "size": "64M",
            "size_bytes": 64 << 20, "write": "no", "workers": n, "args": list(args),
            "id": "guest-%s-4k-w%d-s64M-postgres" % (backend, n)}


why = pgpoint.check(point("mshare"))
t.ok(why and "--touch on backend mshare" in why, "--touch on a backend with shared tables is refused, naming it", why)
t.ok(pgpoint.check(point("anon")) is None, "--touch on anon is accepted", pgpoint.check(point("anon")))
pts = [point("anon", 10), point("anon", 100), point("hugetlb-2m", 100, ("--preset", "select", "--scale", "1", "--window", "5"))]
pts[2]["page"] = "2m"
t.ok(pgpoint.max_connections(pts, pts[2]) == pgpoint.max_connections(pts, pts[0]) == 110,
     "--touch does not change the server's max_connections (the segment is the same for every backend)",
     [pgpoint.max_connections(pts, p) for p in pts])
cmd = pgpoint.command(pts[0], 1, pts, "/out/pg")
t.ok(cmd[-1] == "0,5,10" and pgpoint.command(pts[2], 1, pts, "/out/pg")[-1] == "-",
     "pg-bench.sh gets the snapshot times, or '-' without them", cmd)

# --- pg-bench.sh refuses bad snapshot times before anything runs -----------
for args, want in ((["4k", "10", "64MB", "1", "5", "select", "20", "3"], "inside the window"),
                   (["mshare-dax", "10", "64MB", "1", "5", "select", "20", "5"], "needs mode 4k"),
                   (["4k", "10", "64MB", "1", "5", "select", "20", "5,x"], "comma-separated")):
    d = tempfile.mkdtemp(prefix="pg-touch-test.")
    r = run("sh", SCRIPT, os.path.join(d, "out"), "tag", *args)
    t.ok(r.returncode == 2 and want in r.stderr and not os.path.exists(os.path.join(d, "out")),
         "pg-bench.sh TOUCH_AT %s: exit 2 (%s), nothing made" % (args[-1], want), r.stderr)
    shutil.rmtree(d)

# --- the record's figures from a recorded guest run ------------------------
frame = {"schema_version": 8, "tool": "mshare-bench",
         "environment": {"platform": "guest", "kernel": "6.1.192", "clock": "guest-tcg-ns", "time_unit": "ns"}}


def build(stem, p, touch_text=None):
    d = tempfile.mkdtemp(prefix="pg-touch-test.")
    tg = pgpoint.tag(p["id"], 1)
    shutil.copy(os.path.join(FIX, stem + ".facts"), os.path.join(d, tg + ".facts"))
    if touch_text is None and os.path.exists(os.path.join(FIX, stem + ".touch")):
        touch_text = open(os.path.join(FIX, stem + ".touch")).read()
    if touch_text is not None:
        open(os.path.join(d, tg + ".touch"), "w").write(touch_text)
    rec, note = pgpoint.build(p, 1, d, frame, {}, tap.HARNESS)
    shutil.rmtree(d)
    return rec, note


rec, note = build("anon-c10", point("anon"))
tch = (rec or {}).get("results", {}).get("touch") or {}
sn = tch.get("snapshots") or []
t.ok(rec is not None and [s["after_connected_s"] for s in sn] == [0, 5, 10], "three snapshots in the record", note)
if len(sn) == 3:
    s0, s5 = sn[0], sn[1]
    # the fixture's lines, by hand: 10 backends, pages 1836..3658, 14 spans each at 0 s
    t.ok(s0["backends"] == 10 and s0["pages_4k"]["min"] == 1836 and s0["pages_4k"]["max"] == 3658 and
         s0["pages_4k"]["p50"] == 2555 and s0["spans_2m"]["p50"] == 14, "snapshot 0: the pages and spans of pg-touch's lines",
         s0)
    t.ok(s0["transactions"] == 1307 and s0["transactions_per_backend"] == 130.7 and s5["transactions"] == 6966,
         "transactions by each snapshot from the facts (touch_tx_S), per backend", (s0["transactions"], s5["transactions"]))
    t.ok(tch["segment_bytes"] == 74514432 and tch["spans_2m_in_segment"] == 36 and s0["fraction_of_spans_mean"] == round(14 / 36, 5)
         and s0["pte_pages_bytes_per_backend_mean"] == 14 * 4096,
         "fractions against the segment (74,514,432 bytes, 36 spans of 2 MiB)", tch)
    t.ok(s5["pages_4k"]["mean"] >= s0["pages_4k"]["mean"] and sn[2]["pages_4k"]["mean"] >= s5["pages_4k"]["mean"],
         "a backend's pages grow with the window", [s["pages_4k"]["mean"] for s in sn])
res = (rec or {}).get("results", {})
t.ok("backends_exit_all" in res.get("time_s", {}) and res["time_s"]["backends_exit_all"] is None,
     "facts of before Dec 7 (exit timed from pgbench's exit, when most backends had gone): no exit figure",
     res.get("time_s"))
mem = res.get("memory", {})
t.ok(mem.get("mem_available_lost_per_backend_bytes") == (mem["mem_available_before_bytes"] - mem["mem_available_end_bytes"]) // 10,
     "MemAvailable lost per backend = (before - end) / N", mem)
t.ok(res.get("workload", {}).get("ops_per_s") == res["faults"]["transactions"] / res["faults"]["window_s"],
     "with snapshots the TPS is the window's (pgbench was stopped after them)", res.get("workload", {}).get("ops_per_s"))

d2 = tempfile.mkdtemp(prefix="pg-touch-test.")
shutil.copy(os.path.join(FIX, "anon-c10.facts"), os.path.join(d2, "x.facts"))
open(os.path.join(d2, "x.facts"), "a").write("backends_exit_from=cont\n")
FIX_SAVED, FIX = FIX, d2
shutil.copy(os.path.join(FIX_SAVED, "anon-c10.touch"), os.path.join(d2, "x.touch"))
rec2, _ = build("x", point("anon"))
FIX = FIX_SAVED
shutil.rmtree(d2)
t.ok(rec2 and rec2["results"]["time_s"]["backends_exit_all"] == 0.02 and "SIGCONT" not in str(rec2["results"]["time_s"]) and
     rec2["results"]["time_s"]["backends_exit_from"].startswith("pgbench continued"),
     "the exit of all backends from pgbench's SIGCONT: backends_exit_cs 2 = 0.02 s", rec2 and rec2["results"]["time_s"])
rec, note = build("anon-c10", point("anon"), "snapshot 0 1 2 0\ngarbage line here\n")
t.ok(rec is not None and rec["results"]["touch"]["snapshots"][0].get("missing"),
     "a snapshot without pg-touch's segment line is recorded missing, not as zeros", rec and rec["results"]["touch"])
rec, note = build("anon-c10", point("anon"), "PID 1 2\n")
t.ok(rec is not None and rec["results"]["touch"]["errors"] and not rec["results"]["touch"]["snapshots"],
     "a touch file that does not start with a snapshot line: an error in the record, no figure",
     rec and rec["results"]["touch"])


# Garbage in what the guest left: never an exception (it ended the sweep, and
# a guest boot's other records were not filed), the point recorded with what
# could be read, the rest null or an error in the record.
def build_bytes(facts_extra=b"", touch=None, facts_sub=None):
    d = tempfile.mkdtemp(prefix="pg-touch-test.")
    p = point("anon")
    tg = pgpoint.tag(p["id"], 1)
    facts = open(os.path.join(FIX, "anon-c10.facts"), "rb").read()
    if facts_sub:
        facts = facts.replace(*facts_sub)
    open(os.path.join(d, tg + ".facts"), "wb").write(facts + facts_extra)
    open(os.path.join(d, tg + ".touch"), "wb").write(
        touch if touch is not None else open(os.path.join(FIX, "anon-c10.touch"), "rb").read())
    try:
        rec, note = pgpoint.build(p, 1, d, frame, {}, tap.HARNESS)
        why = None
        if rec is not None:
            json.dump(frame, open(os.path.join(d, "frame.json"), "w"))
            why = pgpoint.write(rec, os.path.join(d, "rec.json"), os.path.join(d, "frame.json"), tap.HARNESS)
        return rec, why
    except Exception as e:  # noqa: BLE001 - what the test is about
        return None, "%s: %s" % (type(e).__name__, e)
    finally:
        shutil.rmtree(d)


import json  # noqa: E402
rec, why = build_bytes(facts_extra=b"pgbench: error: \xff\xfe server said \xc3\n")
t.ok(rec is not None and why is None and any("\ufffd" in x for x in rec["results"]["workload"]["pgbench_output"]),
     "facts with bytes that are not UTF-8: recorded and written, the bytes shown as U+FFFD", why)
seg = open(os.path.join(FIX, "anon-c10.touch")).read().splitlines()[1]
for what, touch in (("bytes that are not UTF-8", open(os.path.join(FIX, "anon-c10.touch"), "rb").read() + b"\xff\xfe\n"),
                    ("a segment line that is not hex", b"snapshot 0 1 2 0\nsegment 0xzz 0xyy 100\n247 10 1\n"),
                    ("a segment of 0 bytes", b"snapshot 0 1 2 0\nsegment 0x0 0x0 0\n247 10 1\n"),
                    ("a row of digits int() does not take", ("snapshot 0 1 2 0\n%s\n\u00b2 10 1\n" % seg).encode())):
    rec, why = build_bytes(touch=touch)
    t.ok(rec is not None and why is None and "touch" in rec["results"],
         "a touch file with %s: the point recorded and written, no exception" % what, why)
rec, why = build_bytes(touch=b"snapshot 0 1 2 0\nsegment 0x0 0x0 0\n247 10 1\n")
t.ok(rec is not None and rec["results"]["touch"]["snapshots"][0].get("missing") and
     rec["results"]["touch"]["segment_bytes"] is None,
     "a segment of 0 bytes is no segment: the snapshot recorded missing, not a fraction", rec and rec["results"]["touch"])
rec, why = build_bytes(facts_sub=(b"pgbench: tps = ", b"pgbench: tps = 1.2.3 was "))
t.ok(rec is not None and why is None and rec["results"]["workload"].get("pgbench_tps", 0) is None,
     "a pgbench line whose figure is not a number: recorded with that figure null, no exception", why)
rec, note = build("mshare-c10", point("mshare", args=("--preset", "select", "--scale", "1", "--window", "5")))
t.ok(rec is not None and "touch" not in rec["results"] and "backends_exit_all" in rec["results"]["time_s"],
     "without --touch: no touch figures (the exit figure's key is there)", rec and rec["results"]["time_s"])

# --- a point whose server ran another mode than its backend's has no record
d = tempfile.mkdtemp(prefix="pg-touch-mode.")
ph = point("hugetlb-2m", args=("--preset", "select", "--scale", "1", "--window", "5"))
shutil.copy(os.path.join(FIX, "mshare-c10.facts"), os.path.join(d, pgpoint.tag(ph["id"], 1) + ".facts"))
with open(os.path.join(d, pgpoint.tag(ph["id"], 1) + ".facts")) as f:
    ran = [x for x in f.read().splitlines() if x.startswith("mode=")]
rec_h, note_h = pgpoint.build(ph, 1, d, frame, {}, tap.HARNESS)
t.ok(rec_h is None and note_h and "mode 'mshare-dax', not 'hugetlb-2m'" in note_h,
     "a hugetlb-2m point whose facts say the server ran %s: no record, and why" % ran, note_h)
shutil.rmtree(d)

# --- the DBA's side-by-side table and the projection with the measured touch
import json  # noqa: E402
import runrecords  # noqa: E402

PROJECT = os.path.join(ROOT, "bench", "pg-dba-project")
DBA_RUN = os.path.join(ROOT, "results", "postgres-dba-ref3-20261207T013328Z")
d = tempfile.mkdtemp(prefix="pg-touch-run.")
os.makedirs(os.path.join(d, "records"))
pa = point("anon")
pm = point("mshare", args=("--preset", "select", "--scale", "1", "--window", "5"))
for stem, p in (("anon-c10", pa), ("mshare-c10", pm)):
    rec, _ = build(stem, p)
    json.dump(frame, open(os.path.join(d, "frame.json"), "w"))
    why = pgpoint.write(rec, os.path.join(d, "records", "%s.r1.json" % p["id"]), os.path.join(d, "frame.json"),
                        tap.HARNESS)
    written = os.path.join(d, "records", "%s.r1.json" % p["id"])
    t.ok(why is None and json.load(open(written)) == json.loads(json.dumps(rec)),
         "the harness's writer writes the %s record, equal to what pgpoint read" % stem, why)
json.dump({"points": [pa, pm], "name": "pg-touch-test"}, open(os.path.join(d, "manifest.json"), "w"))
side = pgpoint.dba_side_by_side(runrecords.Run(d))
rows = {l.split()[0]: l for l in side.splitlines()[2:]}
t.ok(set(rows) == {"4k", "mshare-dax"}, "the side-by-side table has a row per mode", side)
t.ok("4k" in rows and "14 spans [14-14]" in rows["4k"] and "at 10 s" in rows["4k"] and "1718 tx/bk" in rows["4k"],
     "anon's row: each backend's 2 MiB spans at the last snapshot and its transactions", rows.get("4k"))
t.ok("mshare-dax" in rows and rows["mshare-dax"].rstrip().endswith("-"),
     "mshare's row: no touch (its tables are shared), shown '-', never 0", rows.get("mshare-dax"))
tt = pgpoint.touch_table(runrecords.Run(d)).splitlines()[2:]
t.ok(len(tt) == 3 and all(l.split()[0] == "4k" and "14 / 14 / 14" in l for l in tt) and
     "1836 / 2555 / 3611" in tt[0], "the touch table: a row per anon snapshot, spans and pages p10/p50/p90", tt)
if os.path.isdir(DBA_RUN):
    # a second anon point with more connections whose backends reached less
    # (as pgbench's read-write script at 1,000 under its lock queue): the
    # projection plans for the most any point's backends reached
    few = json.load(open(os.path.join(d, "records", "%s.r1.json" % pa["id"])))
    few["config"]["workers"] = 500
    few["config"]["params"]["preset"] = "rw"
    for sn in few["results"]["touch"]["snapshots"]:
        if sn.get("fraction_of_spans_mean") is not None:
            sn["fraction_of_spans_mean"] = 0.05
    json.dump(few, open(os.path.join(d, "records", "guest-anon-4k-w500-s64M-postgres.r1.json"), "w"))
    r = run(PROJECT, DBA_RUN, "--touch-run", d, "--processes", "8000,16000", "--json")
    try:
        js = json.loads(r.stdout)
    except ValueError:
        js = {}
    tf = js.get("touch_measured") or {}
    t.ok(r.returncode == 0 and tf.get("fraction") == round(14 / 36, 5) and tf.get("n") == 10
         and tf.get("workload") == "pgbench -S",
         "pg-dba-project --touch-run takes the highest fraction of 2 MiB spans measured (14 of 36 at 10, not 5% at "
         "500 connections), and names its workload", r.stderr + str(tf))
    pj = {(x["processes"], x["touch"] is not None): x for x in js.get("projections", [])}
    ok = set(pj) == {(8000, False), (16000, False), (8000, True), (16000, True)}
    t.ok(ok, "projections at 8,000 and 16,000, full pass and measured touch", sorted(pj))
    if ok:
        full = [p for p in pj[(16000, False)]["projection"] if p["mode"] == "4k"][0]
        meas = [p for p in pj[(16000, True)]["projection"] if p["mode"] == "4k"][0]
        t.ok(meas["pagetables_all"]["value"] < full["pagetables_all"]["value"] and
             meas["pagetables_all"]["label"] == full["pagetables_all"]["label"] == "modelled",
             "4k with the measured touch needs less than the full pass, both labelled modelled",
             (meas["pagetables_all"], full["pagetables_all"]))
    r = run(PROJECT, DBA_RUN, "--touch-run", d, "--processes", "16000")
    t.ok(r.returncode == 0 and "touching 38.89% of the segment's 2 MiB spans (MEASURED" in r.stdout and
         "10 backends of pgbench -S at scale" in r.stdout and
         "every backend touching all of it (touch fraction 1)" in r.stdout,
         "the text labels the measured fraction and the full pass", r.stdout[-1500:])
    r = run(PROJECT, DBA_RUN, "--touch-run", DBA_RUN)
    t.ok(r.returncode == 1 and "no anon PostgreSQL record with touch snapshots" in r.stderr,
         "a touch run without snapshots is refused, exit 1", r.stderr)
    # A touch run with a file that is not a record beside the good one: left
    # out, as an unreadable one is; an anon PostgreSQL record whose touch
    # figures are not a record's: refused naming the file (both were a
    # Python traceback)
    good = json.load(open(os.path.join(d, "records", "%s.r1.json" % pa["id"])))
    bad_path = os.path.join(d, "records", "zz-bad.r1.json")

    def bad_snaps(key, value):
        b = json.loads(json.dumps(good))
        for sn in b["results"]["touch"]["snapshots"]:
            if sn.get("fraction_of_spans_mean") is not None:
                sn[key] = value
        return b

    def without(path):
        b = json.loads(json.dumps(good))
        o = b
        for k in path[:-1]:
            o = o[k]
        del o[path[-1]]
        return b

    os.unlink(os.path.join(d, "records", "guest-anon-4k-w500-s64M-postgres.r1.json"))
    for what, obj, refused in (("a JSON list", [1, 2], False), ("a record whose config is a list", dict(good, config=[1]), False),
                               ("snapshots that are not objects", json.loads(json.dumps(good).replace(
                                   '"snapshots": [', '"snapshots": [1, "x", null, ')), True),
                               ("a fraction that is a string", bad_snaps("fraction_of_spans_mean", "0.9"), True),
                               ("a fraction above 1", bad_snaps("fraction_of_spans_mean", 5), True),
                               ("spans without a mean", bad_snaps("spans_2m", {"p50": 1}), True),
                               ("no config.workers", without(["config", "workers"]), True),
                               ("no spans_2m_in_segment", without(["results", "touch", "spans_2m_in_segment"]), True)):
        json.dump(obj, open(bad_path, "w"))
        r = run(PROJECT, DBA_RUN, "--touch-run", d, "--processes", "16000", "--json")
        if refused:
            t.ok(r.returncode == 1 and "zz-bad.r1.json" in r.stderr and "Traceback" not in r.stderr,
                 "--touch-run with %s: refused naming the file, exit 1" % what, r.stderr[-600:])
        else:
            t.ok(r.returncode == 0 and "touching 38.89%" not in r.stderr and
                 (json.loads(r.stdout).get("touch_measured") or {}).get("fraction") == round(14 / 36, 5),
                 "--touch-run with %s beside a record: left out, the record's fraction" % what, r.stderr[-600:])
    os.unlink(bad_path)
else:
    t.skip("pg-dba-project --touch-run", "%s is not in this tree" % DBA_RUN)
shutil.rmtree(d)

# --- the 2025 design's point is started where the design is there ---------
# (its own row asks for the harness's --path, which a PostgreSQL point never
# gives: the guest checks the design's row instead)
import guest  # noqa: E402
import types  # noqa: E402

p25 = point("mshare-2025-file", args=("--preset", "select", "--scale", "1", "--window", "5"))
sw = types.SimpleNamespace(points=[p25], timeout=0, manifest={"run_dir": "/tmp/x"})
script = guest.points_script(sw, [(p25, 1)])
line = [l for l in script.splitlines() if "/guest/pg/pg-bench.sh" in l][0]
t.ok("-v b=mshare-2025 " in line, "points.sh checks the row of the 2025 design (mshare-2025), not the file backend's",
     line[:300])
cond = line.split("if ", 1)[1].split("; then", 1)[0]
listing = "mshare-2025      yes      msharefs region\nmshare-2025-file no       needs --path FILE or --path DIR\n"
fake = tempfile.mkdtemp(prefix="pg-touch-test.")
open(os.path.join(fake, "h"), "w").write("#!/bin/sh\nprintf '%s'\n" % listing)
os.chmod(os.path.join(fake, "h"), 0o755)
hq = cond.split(" backends", 1)[0]
r = subprocess.run(["sh", "-c", cond.replace(hq, os.path.join(fake, "h"), 1)])
t.ok(r.returncode == 0, "with the design there and its file row asking for --path, the point starts", cond)
open(os.path.join(fake, "h"), "w").write("#!/bin/sh\nprintf 'mshare-2025      no       msharefs not registered\\n'\n")
r = subprocess.run(["sh", "-c", cond.replace(hq, os.path.join(fake, "h"), 1)])
t.ok(r.returncode != 0, "without the design (6.1 kernel) it is not started", cond)
shutil.rmtree(fake)
t.done()
