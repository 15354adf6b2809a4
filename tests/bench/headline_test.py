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


def pt(point):
    vals = []
    for path in glob.glob(os.path.join(REF, "records", point + ".r*.json")):
        with open(path) as f:
            vals.append(json.load(f)["results"]["pagetables"]["meminfo_delta_bytes"])
    return sorted(vals)[len(vals) // 2]


d = tap.tempdir("headline")
try:
    r = tap.run([TOOL, REF])
    first = r.stdout.splitlines()[0] if r.stdout else ""
    ms, dax = pt(MS), pt(DAX)
    t.ok(r.returncode == 0 and first.startswith("10,000 workers over 256 MiB: mshare ")
         and "MAP_SHARED DAX 4K" in first, "reference run: headline for 10,000 workers over 256 MiB", r.stdout + r.stderr)
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

    # Only the 1000-worker points: the headline picks the largest pair present.
    run = copy_run(d, "w1000", lambda pid: "-w1000-" in pid)
    r = tap.run([TOOL, run])
    t.ok(r.returncode == 0 and r.stdout.startswith("1,000 workers over 1 GiB: mshare "),
         "largest worker count with both mshare and DAX 4K records (1,000 over 1 GiB)", r.stdout + r.stderr)

    # The default sweep's shape: DAX 2M, hugetlb-2m and shared anon stop
    # below 10,000 workers. They are named at the most workers measured for
    # them, beside mshare and DAX 4K at that count, with their own figures.
    run = copy_run(d, "trimmed", lambda pid: "-w10000-" not in pid or pid in (MS, DAX))
    r = tap.run([TOOL, run])
    lines = r.stdout.splitlines()
    at = [l for l in lines if l.startswith("  at 1,000 workers, the most this run measured ")]
    dax2m = pt("guest-file-any-w1000-s256M-pt-footprint")
    t.ok(r.returncode == 0 and lines and lines[0].startswith("10,000 workers over 256 MiB: mshare ")
         and not any(l.startswith("  the same workers with") for l in lines),
         "10,000-worker headline without the backends that stop at 1000", r.stdout + r.stderr)
    t.ok(len(at) == 1 and "MAP_SHARED DAX 2M, hugetlb-2m and shared anon 4K at:" in at[0]
         and "MAP_SHARED DAX 2M %s" % tap.human_bytes(dax2m) in at[0] and "mshare " in at[0],
         "the others are named at 1,000 workers with their records' figures", r.stdout)

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
