import glob
import json
import os
import shutil

import tap

t = tap.Tap()
TOOL = os.path.join(tap.ROOT, "bench", "headline")
REF = os.path.join(tap.ROOT, "results", "head-to-head-20261203T074415Z")
MS = "guest-mshare-4k-w10000-s256M-pt-footprint"
DAX = "guest-file-4k-w10000-s256M-pt-footprint"


def copy_run(d, name, keep):
    """A run directory with the reference manifest and the records whose
    point id passes keep(id)."""
    run = os.path.join(d, name)
    os.makedirs(os.path.join(run, "records"))
    shutil.copy(os.path.join(REF, "manifest.json"), run)
    for path in glob.glob(os.path.join(REF, "records", "*.json")):
        if keep(os.path.basename(path).rsplit(".r", 1)[0]):
            shutil.copy(path, os.path.join(run, "records"))
    return run


def fc_record(backend, page, workers, clock, unit, touches, count, pre_faults, pre_count, fpw, p50, p99, p999,
              nf_count, nf_p50, schema=6):
    """A record of a touch --write point with results.fault_cost as schema 6
    writes it (keys as in a real guest record of the fault-reference run)."""
    hist = {"count": count, "mean": p50, "min": p50, "p50": p50, "p90": p50, "p99": p99, "p999": p999,
            "max": p999, "faults_taken": count, "slept": 0}
    nf = {"count": nf_count, "mean": nf_p50, "min": nf_p50, "p50": nf_p50, "p90": nf_p50, "p99": nf_p50,
          "p999": nf_p50, "max": nf_p50}
    return {"schema_version": schema,
            "config": {"backend": backend, "workers": workers, "page_mode": page, "size_bytes": 1 << 28,
                       "workload": "touch", "write": True},
            "environment": {"platform": "guest" if clock.startswith("guest") else "host", "clock": clock,
                            "time_unit": unit, "kernel": "6.1.test"},
            "results": {"workers_measured": workers, "workers_started": workers, "time_s": {"touch": 1.0},
                        "fault_cost": {"unit": unit, "clock": clock, "touches": touches, "faults": hist,
                                       "no_fault_touches": nf, "preempted": {"count": pre_count, "faults": pre_faults},
                                       "faults_per_worker": {"mean": fpw[0], "min": fpw[1], "max": fpw[2]}}}}


def fc_run(name, recs):
    """A run of touch --write points, one per record: (id, record)."""
    run = os.path.join(d, name)
    os.makedirs(os.path.join(run, "records"))
    points = []
    for pid, rec in recs:
        c = rec["config"]
        points.append({"id": pid, "platform": rec["environment"]["platform"], "workload": "touch",
                       "backend": c["backend"], "page": c["page_mode"], "size_bytes": c["size_bytes"],
                       "size": "256M", "write": "yes", "workers": c["workers"]})
        with open(os.path.join(run, "records", pid + ".r1.json"), "w") as f:
            json.dump(rec, f)
    with open(os.path.join(run, "manifest.json"), "w") as f:
        json.dump({"points": points}, f)
    return run


def four_k(out):
    """The 4 KiB comparison line, its label taken off ("" if none)."""
    for line in out.splitlines():
        if line.startswith("against 4 KiB pages: "):
            return line[len("against 4 KiB pages: "):]
    return ""


def pt(point):
    vals = []
    for path in glob.glob(os.path.join(REF, "records", point + ".r*.json")):
        with open(path) as f:
            vals.append(json.load(f)["results"]["pagetables"]["meminfo_delta_bytes"])
    return sorted(vals)[len(vals) // 2]


d = tap.tempdir("headline")
try:
    r = tap.run([TOOL, REF])
    first = four_k(r.stdout)
    ms, dax = pt(MS), pt(DAX)
    t.ok(r.returncode == 0 and first.startswith("10,000 workers over 256 MiB: mshare ")
         and "MAP_SHARED DAX 4K" in first, "reference run: the 4 KiB comparison for 10,000 workers over 256 MiB",
         r.stdout + r.stderr)
    # The lead (issue 46): mshare's best against the best without mshare,
    # at the most workers, at the size least favourable to mshare: in this
    # run (records before schema 8: PageTables' levels only) 1 GiB, where
    # hugetlb-2m's shared PMD page leaves 4 KiB against mshare's 2 MiB.
    lead = r.stdout.splitlines()[0]
    h1g, m1g = pt("guest-hugetlb-2m-w10000-s1G-pt-footprint"), pt("guest-mshare-4k-w10000-s1G-pt-footprint")
    t.ok(lead.startswith("at 1 GiB, 10,000 workers: best without mshare hugetlb-2m %s in all" % tap.human_bytes(h1g))
         and "best mshare mshare, 4 KiB leaves %s in all" % tap.human_bytes(m1g) in lead
         and lead.endswith("needs %s more than hugetlb-2m" % tap.human_bytes(m1g - h1g)),
         "the lead: best without mshare against mshare's best at the least favourable size, from the records", lead)
    t.ok("levels not recorded (records before schema 8, or a run that could not measure them" in r.stdout,
         "records without the all-levels figure: the lead says which levels it holds", r.stdout)
    # The figures are the records' medians, in human units, and their ratio.
    want = "mshare %s of page tables, MAP_SHARED DAX 4K %s (%s)" % (
        tap.human_bytes(ms), tap.human_bytes(dax), "{:,}x".format(int(round(dax / ms, -(len("%d" % (dax // ms)) - 2)))))
    t.ok(want in first, "figures come from the records: %s" % want, first)
    t.ok("MAP_SHARED DAX 2M" in r.stdout and "hugetlb-2m" in r.stdout and "shared anon 4K" in r.stdout,
         "the other backends at the same worker count are named", r.stdout)

    # Change the DAX 4K records: the headline follows them (nothing hard-coded).
    run = copy_run(d, "altered", lambda pid: pid in (MS, DAX))
    for path in glob.glob(os.path.join(run, "records", DAX + ".r*.json")):
        with open(path) as f:
            rec = json.load(f)
        rec["results"]["pagetables"]["meminfo_delta_bytes"] = ms * 3
        with open(path, "w") as f:
            json.dump(rec, f)
    r = tap.run([TOOL, run])
    t.ok(r.returncode == 0 and "MAP_SHARED DAX 4K %s (3.0x)" % tap.human_bytes(ms * 3) in r.stdout,
         "altered records give the altered headline", r.stdout + r.stderr)
    t.ok(r.stdout.startswith("at 256 MiB, 10,000 workers: best without mshare MAP_SHARED DAX 4K %s in all"
                             % tap.human_bytes(ms * 3)) and "saves %s" % tap.human_bytes(ms * 2) in r.stdout,
         "only mshare and DAX 4K: the lead is against DAX 4K, its saving from the records", r.stdout)
    # Schema 8: the all-levels figure wins over PageTables' own.
    for path in glob.glob(os.path.join(run, "records", "*.json")):
        with open(path) as f:
            rec = json.load(f)
        pt_ = rec["results"]["pagetables"]
        pt_["all_levels_delta_bytes"] = pt_["meminfo_delta_bytes"] + (4096 if MS in path else 4096 * 10000)
        pt_["levels"] = {"meminfo": "pte+pmd"}
        with open(path, "w") as f:
            json.dump(rec, f)
    r = tap.run([TOOL, run])
    t.ok("best without mshare MAP_SHARED DAX 4K %s in all" % tap.human_bytes(ms * 3 + 4096 * 10000) in r.stdout
         and "mshare, 4 KiB leaves %s in all" % tap.human_bytes(ms + 4096) in r.stdout
         and "PTE, PMD and PUD pages" in r.stdout,
         "records with all_levels_delta_bytes: the lead quotes it and says every level is in", r.stdout)

    # Only the 1000-worker points: the headline picks the largest pair present.
    run = copy_run(d, "w1000", lambda pid: "-w1000-" in pid)
    r = tap.run([TOOL, run])
    t.ok(r.returncode == 0 and four_k(r.stdout).startswith("1,000 workers over 1 GiB: mshare "),
         "largest worker count with both mshare and DAX 4K records (1,000 over 1 GiB)", r.stdout + r.stderr)

    # The default sweep's shape: DAX 2M, hugetlb-2m and shared anon stop
    # below 10,000 workers. They are named at the most workers measured for
    # them, beside mshare and DAX 4K at that count, with their own figures.
    run = copy_run(d, "trimmed", lambda pid: "-w10000-" not in pid or pid in (MS, DAX))
    r = tap.run([TOOL, run])
    lines = r.stdout.splitlines()
    at = [l for l in lines if l.startswith("  at 1,000 workers, the most this run measured ")]
    dax2m = pt("guest-file-any-w1000-s256M-pt-footprint")
    t.ok(r.returncode == 0 and four_k(r.stdout).startswith("10,000 workers over 256 MiB: mshare ")
         and not any(l.startswith("  the same workers with") for l in lines),
         "10,000-worker headline without the backends that stop at 1000", r.stdout + r.stderr)
    t.ok(len(at) == 1 and "MAP_SHARED DAX 2M, hugetlb-2m and shared anon 4K at:" in at[0]
         and "MAP_SHARED DAX 2M %s" % tap.human_bytes(dax2m) in at[0] and "mshare " in at[0],
         "the others are named at 1,000 workers with their records' figures", r.stdout)


    # Fault cost from touch points with results.fault_cost: the figures of
    # the records, in their unit, under their clock; mshare's faults spread
    # over its workers (1 vCPU interleaves them), said as total and min..max.
    ms = fc_record("mshare", "4k", 100, "guest-instructions", "instructions", 6553600, 64581, 955, 1672,
                   (655.36, 159, 1068), 4383, 7359, 13759, 6487347, 62)
    fk = fc_record("file", "4k", 100, "guest-instructions", "instructions", 6553600, 6546644, 6956, 6956,
                   (65536, 65536, 65536), 3919, 4191, 13247, 0, 0)
    hs = fc_record("file", "4k", 100, "host-ns", "ns", 6553600, 6553000, 600, 600,
                   (65536, 65536, 65536), 1234, 5678, 91011, 0, 0)
    run = fc_run("faults", [("guest-mshare-4k-w100-s256M-touch-write", ms),
                            ("guest-file-4k-w100-s256M-touch-write", fk),
                            ("file-4k-w100-s256M-touch-write", hs)])
    r = tap.run([TOOL, run])
    lines = r.stdout.splitlines()
    total = 64581 + 955
    want_ms = ("  mshare: {:,} faults in all ({:.3g} per touch), {:,}..{:,} per worker, p50 {:,} instructions per fault "
               "(p99 {:,}, p99.9 {:,} instructions); a touch without a fault p50 {:,} instructions; {:,} preempted "
               "touches left out").format(total, total / 6553600, 159, 1068, 4383, 7359, 13759, 62, 1672)
    want_fk = ("  MAP_SHARED DAX 4K: {:,} faults per worker (1 per touch), p50 {:,} instructions per fault "
               "(p99 {:,}, p99.9 {:,} instructions); {:,} preempted touches left out").format(
        65536, 3919, 4191, 13247, 6956)
    t.ok(r.returncode == 1 and lines[0].startswith("headline: no mshare vs MAP_SHARED DAX 4K comparison")
         and "a worker's first write pass over 256 MiB (guest, instruction clock: "
         "guest-instructions; 100 workers; median of 1 run(s)):" in lines,
         "fault cost without page-table records: exit 1 (no page-table headline, said first), the fault block "
         "printed all the same, named by pass, size, clock and workers",
         r.stdout + r.stderr)
    t.ok(want_ms in lines, "mshare: total faults, per touch, per worker min..max, percentiles in instructions",
         "want: %s\n%s" % (want_ms, r.stdout))
    t.ok(want_fk in lines, "DAX 4K: faults per worker and percentiles from the records", "want: %s\n%s" % (want_fk, r.stdout))
    t.ok(not any("0 faults" in l or "after the first worker" in l for l in lines),
         "mshare never reported as no faults after the first worker", r.stdout)
    want_host = "  MAP_SHARED DAX 4K: 65,536 faults per worker (1 per touch), p50 1,234 ns per fault (p99 5,678, p99.9 91.01 us)"
    t.ok("a worker's first write pass over 256 MiB (host, wall clock: host-ns; 100 workers; median of 1 run(s)):"
         in lines and any(l.startswith(want_host) for l in lines),
         "a second clock gets its own block, its times in ns", r.stdout)
    t.ok("  no touch records at 100 workers under this clock for: MAP_SHARED DAX 2M, hugetlb-2m, shared anon 4K"
         in lines, "backends without records are named", r.stdout)
    ms["results"]["fault_cost"]["faults"]["p50"] = 5000
    with open(os.path.join(run, "records", "guest-mshare-4k-w100-s256M-touch-write.r1.json"), "w") as f:
        json.dump(ms, f)
    r = tap.run([TOOL, run])
    t.ok("p50 5,000 instructions per fault" in r.stdout and "p50 4,383" not in r.stdout,
         "altered record, altered figure", r.stdout)

    # Where 2 MiB pages need as little as mshare: from the reference run's
    # pt-footprint records (mshare's one set against 2 MiB pages' per worker).
    r = tap.run([TOOL, REF])
    ms256, h256 = pt("guest-mshare-4k-w10000-s256M-pt-footprint"), pt("guest-hugetlb-2m-w10000-s256M-pt-footprint")
    n = int(round(ms256 / (h256 / 10000)))
    want = "  at 256 MiB, mshare's one shared set of page tables is %s; hugetlb-2m %s per worker (%s at 10,000 workers)" % (
        tap.human_bytes(ms256), tap.human_bytes(h256 / 10000), tap.human_bytes(h256))
    t.ok(any(l.startswith(want) for l in r.stdout.splitlines())
         and "above about {:,} workers mshare needs less; below, 2 MiB pages need less".format(n) in r.stdout,
         "256 MiB: the worker count above which mshare needs less, from the records (%d)" % n, r.stdout)
    h1g = pt("guest-hugetlb-2m-w10000-s1G-pt-footprint")
    t.ok("hugetlb-2m %s in all at 10,000 workers, no more than mshare at every worker count measured (1..10,000)"
         % tap.human_bytes(h1g) in r.stdout, "1 GiB: hugetlb-2m's shared PMD page said as the records show it",
         r.stdout)
    t.ok("fault cost: no fault_cost in this run's touch records (schema 1); records of schema 5 and up have it"
         in r.stdout, "records older than schema 5: said so, no fault figure", r.stdout)
    run = copy_run(d, "no2m", lambda pid: "-any-" not in pid and "hugetlb" not in pid)
    r = tap.run([TOOL, run])
    t.ok(r.returncode == 0 and "no pt-footprint records of hugetlb-2m or MAP_SHARED DAX 2M at this size" in r.stdout,
         "no 2 MiB records: the line says which are missing", r.stdout + r.stderr)

    # No mshare records (guest part skipped): no headline, exit 1, says why.
    run = copy_run(d, "nomshare", lambda pid: "mshare" not in pid)
    r = tap.run([TOOL, run])
    t.ok(r.returncode == 1 and "no mshare vs MAP_SHARED DAX 4K comparison" in r.stdout,
         "no mshare records: exit 1 and the reason (exit %d)" % r.returncode, r.stdout + r.stderr)
    r = tap.run([TOOL, os.path.join(d, "no-such-run")])
    t.ok(r.returncode == 2 and "not a run directory" in r.stderr, "a path that is not a run: exit 2, named",
         r.stderr)
finally:
    tap.cleanup(d)
t.done()
