import csv
import io
import json
import glob
import os
import shutil

import tap

t = tap.harness_test("compare on two small real runs")

d = tap.tempdir("compare")
try:
    spec = tap.write_spec(d, "cmp", repeats=3)
    results = os.path.join(d, "results")
    runs = []
    for _ in range(2):
        r = tap.sweep(spec, results)
        t.ok(r.returncode == 0 and os.path.isdir(r.stdout.strip()), "real sweep %d runs (exit %d)"
             % (len(runs) + 1, r.returncode), r.stderr)
        runs.append(r.stdout.strip())
    t.ok(runs[0] != runs[1], "a second sweep gets a new run directory")
    compare = os.path.join(tap.ROOT, "bench", "compare")
    r = tap.run([compare] + runs)
    points = ["%s-4k-w%d-s16M-pt-footprint" % (b, w) for b in ("shm", "anon") for w in (1, 4)]
    t.ok(r.returncode == 0 and all(p in r.stdout for p in points), "text table lists every point", r.stdout + r.stderr)
    t.ok("(clock host-ns, times in ns)" in r.stdout.splitlines()[0] and "fault p50" in r.stdout,
         "the header names each run's clock and unit; per-fault rows", r.stdout)
    t.ok("Welch" in r.stdout and "PT sum VmPTE" in r.stdout and "first-touch p99.9" in r.stdout
         and "first-touch = the latency of one first touch, not of a fault" in r.stdout,
         "text table names the test and the figures")
    r = tap.run([compare, "--csv"] + runs)
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    t.ok(r.returncode == 0 and len(rows) == 4 * 8, "CSV: 4 points x 8 figures = %d rows" % len(rows), r.stderr)
    t.ok(rows and all(row["clock"] == "host-ns" and row["unit"] == "ns" for row in rows if row["metric"].startswith("f"))
         and all(row["clock"] == "" and row["unit"] == "bytes" for row in rows if row["metric"].startswith("pt")),
         "CSV: times name their clock and unit (host-ns, ns), page tables none")
    # The CSV means are the means of the records' figures.
    for metric, key, what in (("fc_p50", ("fault_cost", "faults", "p50"), "fault_cost.faults.p50"),
                              ("pt_vmpte", ("pagetables", "vmpte_sum_bytes"), "sum of VmPTE")):
        ok, n = True, 0
        for row in rows:
            if row["metric"] != metric:
                continue
            n += 1
            vals = []
            for path in glob.glob(os.path.join(runs[1], "records", row["point_id"] + ".r*.json")):
                with open(path) as f:
                    v = json.load(f)["results"]
                for k in key:
                    v = v[k]
                vals.append(v)
            ok = ok and len(vals) == 3 and abs(float(row["mean"]) - sum(vals) / 3.0) < 1e-6 * max(1, abs(sum(vals)))
        t.ok(ok and n > 0, "CSV %s means (%d points) equal the means of the records' %s" % (metric, n, what))
    ps = [float(row["p_welch"]) for row in rows if row["p_welch"]]
    t.ok(ps and all(0.0 <= p <= 1.0 for p in ps), "%d p-values, all in [0, 1]" % len(ps))
    t.ok(all((row["significant"] == "yes") == (row["p_welch"] != "" and float(row["p_welch"]) < 0.05) for row in rows),
         "significance marker set exactly when p < 0.05")
    r = tap.run([compare, "--csv", runs[0], runs[0]])
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    t.ok(rows and all(row["significant"] == "no" and float(row["change_pct"] or 0) == 0.0 for row in rows),
         "a run compared with itself: no change, nothing significant")
    # The same point under another clock: refused, both clocks named.
    other = os.path.join(d, "other-clock")
    shutil.copytree(runs[1], other)
    for path in glob.glob(os.path.join(other, "records", "shm-4k-w4-*.json")):
        with open(path) as f:
            rec = json.load(f)
        rec["environment"].update(clock="guest-instructions", time_unit="instructions")
        rec["results"]["fault_cost"]["unit"] = "instructions"
        with open(path, "w") as f:
            json.dump(rec, f)
    r = tap.run([compare, runs[0], other])
    t.ok(r.returncode == 1 and r.stdout == "" and "shm-4k-w4-s16M-pt-footprint" in r.stderr
         and "clock host-ns" in r.stderr and "clock guest-instructions" in r.stderr,
         "points under different clocks: refused (exit 1), both clocks named", r.stdout + r.stderr)
    # Records older than environment.clock (any schema below 5) compare with
    # each other as before, never with a named clock.
    olds = []
    for n, (src, schema) in enumerate(((runs[0], 1), (runs[1], 3))):
        dst = os.path.join(d, "old-%d" % n)
        shutil.copytree(src, dst)
        for path in glob.glob(os.path.join(dst, "records", "*.json")):
            with open(path) as f:
                rec = json.load(f)
            rec["environment"].pop("clock")
            rec["environment"].pop("time_unit", None)
            rec["results"].pop("fault_cost")
            rec["schema_version"] = schema
            with open(path, "w") as f:
                json.dump(rec, f)
        olds.append(dst)
    r = tap.run([compare] + olds)
    t.ok(r.returncode == 0 and "first-touch p50" in r.stdout and "clock not recorded" not in r.stderr,
         "two runs without a recorded clock (schema 1 and 3) are compared", r.stdout[-500:] + r.stderr)
    r = tap.run([compare, olds[0], runs[1]])
    t.ok(r.returncode == 1 and "clock unrecorded (schema 1)" in r.stderr and "clock host-ns" in r.stderr,
         "no recorded clock against host-ns: refused, both named", r.stderr)
    r = tap.run([compare, "--metrics", "pt_meminfo,pt_vmpte", runs[0], other])
    t.ok(r.returncode == 0 and "shm-4k-w4-s16M-pt-footprint" in r.stdout,
         "page tables alone (no clock) are still compared", r.stderr)
    r = tap.run([compare, runs[0]])
    t.ok(r.returncode == 2 and "at least two" in r.stderr, "one run alone is refused")
    r = tap.run([compare, runs[0], os.path.join(d, "nope")])
    t.ok(r.returncode == 2 and "nope" in r.stderr, "a missing run directory is refused, named")
finally:
    tap.cleanup(d)
t.done()
