import csv
import io
import glob
import json
import os
import re
import shutil
import sys

import tap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402
import runrecords  # noqa: E402

t = tap.Tap()
TOOL = os.path.join(tap.ROOT, "bench", "report")
REF = os.path.join(tap.ROOT, "results", "head-to-head-20261203T074415Z")
ARTIFACTS = os.path.join(tap.ROOT, "build", "tests", "bench")
SHOT = os.path.join(ARTIFACTS, "report-screenshot.png")
MS = "guest-mshare-4k-w10000-s256M-pt-footprint"
HOSTILE_HOST = '<script>window.__pwned=1</script><b id="pwn">host</b>'
HOSTILE_SPEC = 'h2h <script>window.__pwned2=1</script><img id="pwn2" src=x>'
HOSTILE_WHY = 'timed out <img id="pwn3" src="https://example.invalid/x.png">'
KEEP = ("guest-mshare-4k-", "guest-file-4k-", "guest-file-any-")


def small_run(d):
    """A run of the reference head-to-head's records for three backends at
    100 and 10,000 workers over 256 MiB, with hostile strings in a
    record's host name, the spec's description and failed.txt."""
    run = os.path.join(d, "h2h-small")
    os.makedirs(os.path.join(run, "records"))
    with open(os.path.join(REF, "manifest.json")) as f:
        m = json.load(f)
    keep = [p for p in m["points"] if p["id"].startswith(KEEP) and p["workers"] in (100, 10000)
            and p["size"] == "256M" and p["workload"] == "pt-footprint"]
    failed = dict(keep[0])
    failed["id"] = failed["id"].replace("-w100-", "-w1000-")
    failed["workers"] = 1000
    m["points"] = keep + [failed]
    m["description"] = HOSTILE_SPEC
    with open(os.path.join(run, "manifest.json"), "w") as f:
        json.dump(m, f, indent=2)
    for p in keep:
        for path in glob.glob(os.path.join(REF, "records", p["id"] + ".r*.json")):
            shutil.copy(path, os.path.join(run, "records"))
    # As a guest under the instruction clock would record them (schema 6).
    for path in glob.glob(os.path.join(run, "records", "*.json")):
        with open(path) as f:
            rec = json.load(f)
        rec["environment"]["clock"] = "guest-instructions"
        rec["environment"]["time_unit"] = "instructions"
        if os.path.basename(path) == MS + ".r1.json":
            rec["environment"]["hostname"] = HOSTILE_HOST
        with open(path, "w") as f:
            json.dump(rec, f, indent=2)
    with open(os.path.join(run, "failed.txt"), "w") as f:
        f.write("%s: %s\n" % (failed["id"], HOSTILE_WHY))
    open(os.path.join(run, "skipped.txt"), "w").close()
    return run, [p["id"] for p in keep], failed["id"]


def tree(path):
    out = {}
    for dirpath, _, files in os.walk(path):
        for name in files:
            p = os.path.join(dirpath, name)
            with open(p, "rb") as f:
                out[os.path.relpath(p, path)] = f.read()
    return out


d = tap.tempdir("report")
try:
    r = tap.run([TOOL, "--help"])
    t.ok(r.returncode == 0 and "RUN_DIR/report/index.html" in r.stdout, "--help: usage, exit 0", r.stdout + r.stderr)
    empty = os.path.join(d, "not-a-run")
    os.makedirs(empty)
    r = tap.run([TOOL, empty])
    t.ok(r.returncode == 1 and "not a run directory" in r.stderr and not os.path.exists(os.path.join(empty, "report")),
         "a directory without manifest.json: refused, exit 1, nothing written", r.stdout + r.stderr)
    r = tap.run([TOOL, os.path.join(d, "missing")])
    t.ok(r.returncode == 1 and "not a run directory" in r.stderr, "a missing directory: refused, exit 1",
         r.stdout + r.stderr)

    run, kept, failed_id = small_run(d)
    r = tap.run([TOOL, run])
    index = os.path.join(run, "report", "index.html")
    t.ok(r.returncode == 0 and os.path.isfile(index) and r.stdout.strip().endswith("report/index.html"),
         "report of a small run: exit 0, prints the page's path", r.stdout + r.stderr)
    leftovers = [n for n in os.listdir(run) if n.startswith(".report-")]
    t.ok(not leftovers, "no scratch directory left beside the report", leftovers)
    figs = sorted(glob.glob(os.path.join(run, "report", "figures", "*.svg")))
    t.ok(len(figs) >= 3 and not os.path.exists(os.path.join(run, "plots")),
         "a run without plots/: the report draws its SVG figures into report/figures, the run is untouched",
         "%d figures" % len(figs))
    with open(index) as f:
        html = f.read()
    t.ok("<script" not in html and "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in html
         and '<img id="pwn3"' not in html,
         "hostile strings from a record, the manifest and failed.txt are escaped in the HTML")
    t.ok(all(("../records/%s.r1.json" % pid) in html for pid in kept) and 'href="../records.csv"' not in html,
         "links to every record (relative); no link to a CSV the run does not have")
    t.ok(failed_id in html and "timed out" in html, "the failed point and its reason are on the page")
    clock_row = [c.strip() for c in open(os.path.join(tap.ROOT, "kernel", "vm", "README.md")).read().splitlines()
                 if "`guest-instructions`" in c and c.startswith("|")]
    words = clock_row[0].strip("|").split("|")[-1].strip() if clock_row else None
    t.ok(words and words.replace("'", "&#39;") in html and "What it cannot show: contention between CPUs" in html,
         "the clock: kernel/vm/README.md's words for guest-instructions and what it cannot show", words)
    t.ok(re.search(r'data-metric="fault_p50"[^>]*>[0-9,]+ instructions<', html) is not None,
         "under the instruction clock the fault table says instructions, not ns")

    before = tree(os.path.join(run, "report"))
    r = tap.run([TOOL, run])
    t.ok(r.returncode == 0 and tree(os.path.join(run, "report")) == before,
         "made again: the same files, byte for byte", r.stderr)

    # The records' own numbers for the table check: pt_meminfo of MS.
    vals = sorted(runrecords.number(runrecords.lookup(json.load(open(p)), "results.pagetables.meminfo_delta_bytes"))
                  for p in glob.glob(os.path.join(run, "records", MS + ".r*.json")))
    median = vals[len(vals) // 2]
    hl = tap.run([os.path.join(tap.ROOT, "bench", "headline"), run])

    try:
        browser = cdp.Browser()
    except cdp.Unavailable as e:
        browser = None
        for what in ("chromium: the page loads from file://", "chromium: every image loaded (natural width > 0)",
                     "chromium: headline text equals bench/headline's output",
                     "chromium: the lead's table: a row per setup, its figures from bench/headline --json",
                     "chromium: a table cell equals the record's figure",
                     "chromium: hostile strings shown as text, no element injected, no script ran",
                     "chromium: no request other than file://", "chromium: no console error",
                     "chromium: screenshot saved"):
            t.skip(what, str(e))
    if browser:
        try:
            page = browser.open("file://" + index, 1300, 900)
            t.ok(page.eval("document.title").startswith("mshare-bench run"), "chromium: the page loads from file://")
            imgs = page.eval("Array.from(document.images).map(i => [i.getAttribute('src'), i.complete, i.naturalWidth])")
            t.ok(len(imgs) == len(figs) and all(c and w > 0 for _, c, w in imgs),
                 "chromium: every image loaded (natural width > 0): %d figures" % len(imgs), imgs)
            shown = page.eval("document.getElementById('headline-text') && "
                              "document.getElementById('headline-text').textContent")
            t.ok(hl.returncode == 0 and shown == hl.stdout.rstrip("\n"),
                 "chromium: headline text equals bench/headline's output", "%r\n%r" % (shown, hl.stdout))
            lead = json.loads(tap.run([os.path.join(tap.ROOT, "bench", "headline"), "--json", run]).stdout or "{}")
            rows = page.eval("Array.from(document.querySelectorAll('#headline-table tr')).slice(1).map("
                             "r => Array.from(r.cells).map(c => c.textContent))")
            want_rows = [[x["label"], runrecords.human(x["total"], "bytes")] for x in lead.get("setups", [])]
            t.ok(rows and [[r[0], r[3]] for r in rows] == want_rows
                 and page.eval("document.getElementById('headline-lead').textContent") == hl.stdout.splitlines()[0],
                 "chromium: the lead's table: a row per setup, its figures from bench/headline --json; the lead line "
                 "above it", "%r\n%r" % (rows, want_rows))
            cell = page.eval("(function(){var c = document.querySelector("
                             "'#table-pagetables tr[data-point=\"%s\"] td[data-metric=\"pt_meminfo\"]');"
                             "return c && [c.getAttribute('data-median'), c.textContent];})()" % MS)
            want = runrecords.human(median, "bytes")
            t.ok(cell is not None and float(cell[0]) == median and cell[1].startswith(want),
                 "chromium: a table cell equals the record's figure (%s pt_meminfo median %s)" % (MS, want), cell)
            hostile = page.eval("[!!document.getElementById('pwn'), !!document.getElementById('pwn2'), "
                                "!!document.getElementById('pwn3'), typeof window.__pwned, typeof window.__pwned2, "
                                "document.scripts.length, document.querySelector('td.hostname').textContent, "
                                "document.body.textContent.indexOf(%s) >= 0]" % json.dumps(HOSTILE_SPEC))
            t.ok(hostile[:6] == [False, False, False, "undefined", "undefined", 0] and HOSTILE_HOST in hostile[6]
                 and hostile[7], "chromium: hostile strings shown as text, no element injected, no script ran",
                 hostile)
            urls = [p["request"]["url"] for m, p in page.events if m == "Network.requestWillBeSent"]
            t.ok(urls and all(u.startswith("file://") for u in urls),
                 "chromium: no request other than file:// (%d requests, offline)" % len(urls),
                 [u for u in urls if not u.startswith("file://")])
            errors = [p for m, p in page.events if m == "Runtime.exceptionThrown"
                      or (m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"))
                      or (m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error")]
            t.ok(not errors, "chromium: no console error", json.dumps(errors)[:2000])
            os.makedirs(ARTIFACTS, exist_ok=True)
            page.screenshot(SHOT)
            t.ok(os.path.getsize(SHOT) > 0, "chromium: screenshot saved (%s)" % os.path.relpath(SHOT, tap.ROOT))
        finally:
            browser.close()

    # 500 points: one collapsed table per question, the figures once each.
    big = os.path.join(d, "big")
    os.makedirs(os.path.join(big, "records"))
    os.makedirs(os.path.join(big, "plots"))
    with open(os.path.join(run, "records", MS + ".r1.json")) as f:
        proto = json.load(f)
    with open(os.path.join(run, "manifest.json")) as f:
        m = json.load(f)
    base_point = [p for p in m["points"] if p["id"] == MS][0]
    m["points"] = []
    for i in range(1, 501):
        p = dict(base_point, workers=i, id="guest-mshare-4k-w%d-s256M-pt-footprint" % i)
        m["points"].append(p)
        proto["config"]["workers"] = i
        proto["results"]["pagetables"]["meminfo_delta_bytes"] = 4096 * i
        with open(os.path.join(big, "records", p["id"] + ".r1.json"), "w") as f:
            json.dump(proto, f)
    with open(os.path.join(big, "manifest.json"), "w") as f:
        json.dump(m, f)
    with open(os.path.join(big, "plots", "1-pagetables-guest.svg"), "w") as f:
        f.write('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><rect width="10" height="10"/></svg>\n')
    r = tap.run([TOOL, big])
    with open(os.path.join(big, "report", "index.html")) as f:
        bightml = f.read()
    tables = re.findall(r'<details class="numbers">.*?</details>', bightml, re.S)
    t.ok(r.returncode == 0 and 1 <= len(tables) <= 5 and bightml.count("<table class=\"numbers\"") == len(tables)
         and all(x.count("<tr data-point=") == 500 for x in tables) and bightml.count("<img ") == 1,
         "500 points: %d collapsed tables of 500 rows, one figure, not one per point" % len(tables), r.stderr)

    # The comparison page: the same run again with MS's page tables tripled
    # (a significant difference) on a kernel whose name is hostile.
    other = os.path.join(d, "h2h-other")
    shutil.copytree(run, other, ignore=shutil.ignore_patterns("report"))
    HOSTILE_KERNEL = '6.99<script>window.__pwned4=1</script>'
    for path in glob.glob(os.path.join(other, "records", "*.json")):
        with open(path) as f:
            rec = json.load(f)
        rec["environment"]["kernel"] = HOSTILE_KERNEL
        if os.path.basename(path).startswith(MS + "."):
            rec["results"]["pagetables"]["meminfo_delta_bytes"] *= 3
        with open(path, "w") as f:
            json.dump(rec, f)
    out = os.path.join(d, "cmp")
    r = tap.run([TOOL, run, other, "--out", out])
    cindex = os.path.join(out, "index.html")
    t.ok(r.returncode == 0 and os.path.isfile(cindex), "comparison page: RUN_A RUN_B --out DIR, exit 0",
         r.stdout + r.stderr)
    with open(cindex) as f:
        chtml = f.read()
    before = chtml
    r = tap.run([TOOL, run, other, "--out", out])
    with open(cindex) as f:
        t.ok(r.returncode == 0 and f.read() == before and sorted(os.listdir(out)) == ["index.html"],
             "comparison page made again over itself: the same bytes")
    busy = os.path.join(d, "busy")
    os.makedirs(busy)
    open(os.path.join(busy, "keep.txt"), "w").close()
    r = tap.run([TOOL, run, other, "--out", busy])
    t.ok(r.returncode == 1 and "not replaced" in r.stderr and os.listdir(busy) == ["keep.txt"],
         "an --out directory holding other files is refused, untouched", r.stderr)
    csvr = tap.run([os.path.join(tap.ROOT, "bench", "compare"), "--csv", "--metrics", "pt_meminfo", run, other])
    want_mean = [row["mean"] for row in csv.DictReader(io.StringIO(csvr.stdout)) if row["point_id"] == MS]
    if browser is None:
        t.skip("chromium: comparison page: differing kernel at the top, significant difference listed, "
               "cell = bench/compare, hostile kernel text, no console error", "no browser (above)")
    else:
        browser = cdp.Browser()
        try:
            page = browser.open("file://" + cindex, 1300, 900)
            got = page.eval("(function(){"
                            "var rows = Array.from(document.querySelectorAll('#conditions-differ tr.differ'))"
                            ".map(function(r){return r.textContent;});"
                            "var sig = document.querySelector('#significant-list') ? "
                            "document.querySelector('#significant-list').textContent : '';"
                            "var c = document.querySelector('#table-pt_meminfo tr[data-point=\"%s\"] td[data-mean]:nth-of-type(3)');"
                            "return [rows, sig, c && c.getAttribute('data-mean'), !!document.scripts.length,"
                            " typeof window.__pwned4];})()" % MS)
            errors = [p for m, p in page.events if m == "Runtime.exceptionThrown"
                      or (m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"))
                      or (m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error")]
            urls = [p["request"]["url"] for m, p in page.events if m == "Network.requestWillBeSent"]
            rows, sig, cell, scripts, pwned = got
            t.ok(any("kernel release" in x and HOSTILE_KERNEL in x for x in rows) and MS in sig
                 and want_mean and cell == want_mean[0] and not scripts and pwned == "undefined"
                 and not errors and all(u.startswith("file://") for u in urls),
                 "chromium: comparison page: differing kernel at the top, significant difference listed, "
                 "cell = bench/compare, hostile kernel text, no console error", json.dumps([got, want_mean, errors]))
            page.screenshot(os.path.join(ARTIFACTS, "report-compare-screenshot.png"))
        finally:
            browser.close()
finally:
    tap.cleanup(d)
t.done()
