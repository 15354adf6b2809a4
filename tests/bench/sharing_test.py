import csv
import glob
import io
import json
import os
import shutil
import sys

import tap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402

t = tap.Tap()
ROOT = tap.ROOT
HEADLINE = os.path.join(ROOT, "bench", "headline")
COMPARE = os.path.join(ROOT, "bench", "compare")
REPORT = os.path.join(ROOT, "bench", "report")
PLOT = os.path.join(ROOT, "plots", "plot-run")
LC = os.path.join(ROOT, "results", "lifecycle-20261207T152826Z")
DEFAULT = os.path.join(ROOT, "results", "default-20261207T145351Z")
FL = os.path.join(ROOT, "results", "fault-locks-20261207T174459Z")
FL_MS = "guest-mshare-4k-w1000-s8M-fault-locks-write"
DAX = "guest-file-4k-w1000-s64M-lifecycle-write"
MS = "guest-mshare-4k-w1000-s64M-lifecycle-write"
HEAD = "what sharing costs"


def copy_run(d, name):
    """The reference lifecycle run's manifest and records (nothing else)."""
    run = os.path.join(d, name)
    os.makedirs(os.path.join(run, "records"))
    shutil.copy(os.path.join(LC, "manifest.json"), run)
    for p in glob.glob(os.path.join(LC, "records", "*.json")):
        shutil.copy(p, os.path.join(run, "records"))
    return run


def record(run, pid):
    with open(os.path.join(run, "records", pid + ".r1.json")) as f:
        return json.load(f)


def alter(run, pid, op, key, value):
    r = record(run, pid)
    r["results"]["workload"]["ops"][op]["counts"][key]["min"] = value
    with open(os.path.join(run, "records", pid + ".r1.json"), "w") as f:
        json.dump(r, f)


def block(text):
    """The headline's lines from the 'what sharing costs' line on."""
    lines = text.splitlines()
    at = [i for i, x in enumerate(lines) if x.startswith(HEAD)]
    return lines[at[0]:] if at else []


def line_of(lines, start):
    got = [x for x in lines if x.strip().startswith(start)]
    return got[0] if got else ""


d = tap.tempdir("sharing")
try:
    if not os.path.isdir(LC):
        t.ok(False, "the lifecycle reference run %s is in the tree" % LC)
        t.done()
    ref = json.load(open(os.path.join(LC, "records", DAX + ".r1.json")))
    want_trunc = ref["results"]["workload"]["ops"]["truncate"]["counts"]["kprobe_flush_tlb_mm_range"]["min"]
    ms = json.load(open(os.path.join(LC, "records", MS + ".r1.json")))
    want_msync = ms["results"]["workload"]["ops"]["msync"]["counts"]["kprobe_do_flush_tlb_all"]["min"]

    # --- bench/headline
    r = tap.run([HEADLINE, LC])
    b = block(r.stdout)
    t.ok(b and "1,000 processes map 64 MiB" in b[0] and "guest-tcg-ns" in b[0] and "4371adac3b472e64" in b[0]
         and "times emulated, not hardware time" in b[0],
         "headline of the lifecycle run: the block names the sharers, size, clock (emulated times) and kernel key",
         r.stdout[-3000:] + r.stderr)
    mu = line_of(b, "munmap of 64 MiB mapped by 1,000 processes:")
    t.ok(all(x in mu for x in ("MAP_SHARED DAX 4K", "hugetlb-2m", "mshare")) and "remote flush" in mu,
         "headline: munmap of 64 MiB by 1,000 processes, per backend, with its flushes", mu)
    tr = line_of(b, "truncate of the file to 0")
    ms_ = line_of(b, "msync of 64 MiB")
    t.ok(("MAP_SHARED DAX 4K" in tr and "{:,} flush_tlb_mm_range calls".format(want_trunc) in tr
          and "%d CPUs' full flushes (flush_tlb_all)" % want_msync in ms_),
         "headline: DAX 4K truncate's %d flush_tlb_mm_range calls and mshare msync's %d CPUs' full flushes, as "
         "in the records" % (want_trunc, want_msync), tr + "\n" + ms_)
    t.ok("mshare refused (EINVAL)" in line_of(b, "mprotect RW->RO"),
         "headline: what mshare v1 refuses is said (mprotect: EINVAL)", line_of(b, "mprotect RW->RO"))
    alt = copy_run(d, "lc-altered")
    alter(alt, DAX, "truncate", "kprobe_flush_tlb_mm_range", 777777)
    r2 = tap.run([HEADLINE, alt])
    t.ok("777,777 flush_tlb_mm_range calls" in line_of(block(r2.stdout), "truncate of the file to 0"),
         "headline: a count altered in a record is what the block says (read, not written in)",
         line_of(block(r2.stdout), "truncate of the file to 0"))
    rd = tap.run([HEADLINE, DEFAULT])
    t.ok(rd.stdout and not block(rd.stdout) and "concurrent first touches" not in rd.stdout,
         "headline of the default run (no lifecycle or fault-locks records): no such block", rd.stdout[-500:])

    # --- bench/headline: concurrent first touches (fault-locks)
    r = tap.run([HEADLINE, FL])
    fl = [x for x in r.stdout.splitlines() if x.startswith("concurrent first touches")]
    ms_line = [x for x in r.stdout.splitlines() if x.strip().startswith("mshare over 8 MiB")]
    flr = json.load(open(os.path.join(FL, "records", FL_MS + ".r1.json")))
    nested = flr["results"]["workload"]["lock_stat"]["mmap_lock_nested_acquisitions"]
    slept = flr["results"]["fault_cost"]["slept_faults"]["count"]
    t.ok(fl and "4371adac3b472e64" in fl[0] and "times emulated" in fl[0] and ms_line
         and ("1,000: " in ms_line[0]) and ("nested: {:,} acquisitions".format(nested) in ms_line[0])
         and ("{:,} slept".format(slept) in ms_line[0]),
         "headline of the fault-locks run: per backend and worker count, the slept faults (%d) and the mshare host "
         "mm's nested mmap_lock acquisitions (%d) at 1,000 workers, as in the record" % (slept, nested),
         (fl[:1] + ms_line)[:2])
    flalt = os.path.join(d, "fl-altered")
    os.makedirs(os.path.join(flalt, "records"))
    shutil.copy(os.path.join(FL, "manifest.json"), flalt)
    for p in glob.glob(os.path.join(FL, "records", "*.json")):
        shutil.copy(p, os.path.join(flalt, "records"))
    flr["results"]["workload"]["lock_stat"] = False
    flr["results"]["workload"]["lock_stat_unavailable_why"] = "no lock_stat in this altered record"
    with open(os.path.join(flalt, "records", FL_MS + ".r1.json"), "w") as f:
        json.dump(flr, f)
    r = tap.run([HEADLINE, flalt])
    ms_line = [x for x in r.stdout.splitlines() if x.strip().startswith("mshare over 8 MiB")]
    t.ok(ms_line and "no lock_stat (no lock_stat in this altered record)" in ms_line[0]
         and "nested: {:,}".format(nested) not in ms_line[0],
         "headline: a record without lock_stat says why instead of figures", ms_line[:1])

    # --- bench/compare
    r = tap.run([COMPARE, LC, alt])
    lc = r.stdout[r.stdout.find("lifecycle operations"):] if "lifecycle operations" in r.stdout else ""
    row = [x for x in lc.splitlines() if x.split()[:1] == ["truncate"] and "MAP_SHARED DAX 4K" in x
           and "1,000" in x and "flush_tlb_mm_range calls" in x]
    same = [x for x in lc.splitlines() if x.split()[:1] == ["munmap"] and "mshare" in x and "remote flushes" in x]
    t.ok(r.returncode == 0 and row and "777,777" in row[0] and "{:,}".format(want_trunc) in row[0]
         and same and same[0].rstrip().endswith("="),
         "compare: the lifecycle table, per operation per backend per sharers: the altered count against the "
         "baseline's, and '=' where nothing changed", (row, same, r.stderr[-500:]))
    r = tap.run([COMPARE, "--csv", LC, alt])
    rows = [x for x in csv.reader(io.StringIO(r.stdout)) if len(x) == 9 and x[1] == "truncate"
            and x[2] == "MAP_SHARED DAX 4K" and x[3] == "1000" and x[4] == "kprobe_flush_tlb_mm_range"]
    t.ok(r.returncode == 0 and rows and rows[0][6] == str(want_trunc) and rows[0][7] == "777777",
         "compare --csv: the lifecycle rows with raw values (baseline %d, run 777777)" % want_trunc, rows)
    r = tap.run([COMPARE, DEFAULT, DEFAULT])
    t.ok(r.returncode == 0 and "lifecycle operations" not in r.stdout,
         "compare of two runs without lifecycle records: no lifecycle table", r.stderr[-300:])

    # --- plots/plot-run: figure 9
    r = tap.run([PLOT, alt])
    svg = os.path.join(alt, "plots", "9-sharing-costs.svg")
    dat = os.path.join(alt, "plots", "data", "sharing-file-4k-64M.dat")
    got = {}
    if os.path.exists(dat):
        with open(dat) as f:
            head = f.readline().split()
            for x in f:
                v = x.split()
                got[int(v[0])] = dict(zip(head[1:], v[1:]))
    t.ok(r.returncode == 0 and not glob.glob(os.path.join(alt, "plots", "3-fault-latency*")),
         "plot-run of a lifecycle run: exit 0, no figure 3 (its workers time no touch: faults per worker 0)",
         r.stderr[-800:])
    t.ok(os.path.exists(svg) and os.path.getsize(svg) > 0 and svg in r.stdout.split()
         and got.get(1000, {}).get("c1") == repr(777777.0 + 1),
         "plot-run: figure 9 (what sharing costs) drawn; its table holds the record's count + 1 (DAX 4K truncate "
         "at 1,000 sharers: %s)" % got.get(1000), r.stderr[-800:])
    ms_dat = os.path.join(alt, "plots", "data", "sharing-mshare-4k-64M.dat")
    t.ok(os.path.exists(ms_dat) and len(open(ms_dat).read().splitlines()) == 4,
         "plot-run: a table per backend, a row per sharer count (mshare: 1, 100, 1,000)")
    nolc = os.path.join(d, "nolc")
    os.makedirs(os.path.join(nolc, "records"))
    shutil.copy(os.path.join(DEFAULT, "manifest.json"), nolc)
    for p in sorted(glob.glob(os.path.join(DEFAULT, "records", "*.json")))[:3]:
        shutil.copy(p, os.path.join(nolc, "records"))
    r = tap.run([PLOT, nolc])
    t.ok(not glob.glob(os.path.join(nolc, "plots", "9-sharing-costs*")),
         "plot-run: no figure 9 for a run without lifecycle records")

    # --- bench/report
    rep = copy_run(d, "lc-report")
    r = tap.run([REPORT, rep])
    index = os.path.join(rep, "report", "index.html")
    html = open(index).read() if os.path.exists(index) else ""
    hl = block(tap.run([HEADLINE, rep]).stdout)
    t.ok(r.returncode == 0 and 'id="sharing"' in html and 'id="sharing-table"' in html
         and "9-sharing-costs.svg" in html,
         "report: a 'What sharing costs' section with its figure and table", r.stderr[-800:])
    nrows = html.count("<tr data-op=")
    nops = sum(len(json.load(open(p))["results"]["workload"]["ops"]) for p in glob.glob(os.path.join(rep, "records", "*.json")))
    t.ok(nrows == nops and nrows > 0, "report: a table row per operation of every record (%d rows, %d operations)"
         % (nrows, nops))
    try:
        browser = cdp.Browser()
    except cdp.Unavailable as e:
        browser = None
        t.skip("chromium: the section's text equals bench/headline's block; its figure loads; a table cell equals "
               "the record", str(e))
    if browser:
        try:
            page = browser.open("file://" + index, 1300, 900)
            got = page.eval("(function(){var p = document.getElementById('sharing-text');"
                            "var img = document.querySelector('#sharing ~ .figures img');"
                            "var c = document.querySelector('#sharing-table tr[data-op=\"truncate\"]"
                            "[data-backend=\"MAP_SHARED DAX 4K\"][data-workers=\"1,000\"]');"
                            "return [p && p.textContent, img && img.complete && img.naturalWidth,"
                            " c && c.cells[5].textContent];})()")
            t.ok(got[0] == "\n".join(hl) and got[1] and got[2] == "{:,}".format(want_trunc),
                 "chromium: the section's text equals bench/headline's block; its figure loads; DAX 4K truncate's "
                 "flush_tlb_mm_range cell at 1,000 sharers is the record's %d" % want_trunc, json.dumps(got)[:1500])
        finally:
            browser.close()
finally:
    tap.cleanup(d)
t.done()
