import json
import os

import tap
from runrecords import human

t = tap.Tap()
why = tap.harness_missing()
if why:
    t.skip("side-by-side on a small real run", why)
    t.done()

d = tap.tempdir("side-by-side")
try:
    spec = tap.write_spec(d, "sbs", repeats=1)
    r = tap.sweep(spec, os.path.join(d, "results"))
    run_dir = r.stdout.strip()
    t.ok(r.returncode == 0 and os.path.isdir(run_dir), "real sweep ran (exit %d)" % r.returncode, r.stderr)
    tool = os.path.join(tap.ROOT, "bench", "side-by-side")

    r = tap.run([tool, run_dir])
    out = r.stdout
    titles = [l for l in out.splitlines() if l.startswith("host, 16 MiB region, pt-footprint")]
    t.ok(r.returncode == 0 and len(titles) == 2 and any(l.endswith(", 1 workers") for l in titles)
         and any(l.endswith(", 4 workers") for l in titles), "one table per worker count", out + r.stderr)

    def table(text, workers):
        lines = text.splitlines()
        i = lines.index("host, 16 MiB region, pt-footprint, %d workers" % workers)
        header = lines[i + 1]
        rows = {}
        for line in lines[i + 2:]:
            if not line.strip():
                break
            rows[line.split("  ")[0].strip()] = line
        return header, rows

    header, rows = table(out, 4)
    t.ok(header.split()[:3] == ["backend", "page", "dax"] and set(rows) == {"shm 4k", "anon 4k"},
         "rows: one per backend (%s)" % sorted(rows), out)
    # Figures are the records' own: PT sys/w = PageTables delta / workers measured,
    # VmPTE/w = the record's region bytes per worker.
    ok = True
    for backend in ("shm", "anon"):
        with open(os.path.join(run_dir, "records", "%s-4k-w4-s16M-pt-footprint.r1.json" % backend)) as f:
            res = json.load(f)["results"]
        pt = res["pagetables"]
        want = [human(pt["meminfo_delta_bytes"], "bytes"),
                human(pt["meminfo_delta_bytes"] / res["workers_measured"], "bytes"),
                human(pt["region_bytes_per_worker"], "bytes"),
                human(res["fault_latency_ns"]["p99"], "ns")]
        line = rows["%s 4k" % backend]
        ok = ok and all(w in line for w in want)
        if not ok:
            print("#   %s: want %s in %r" % (backend, want, line))
    t.ok(ok, "page-table and latency figures equal the records'")

    r = tap.run([tool, run_dir, "--workers", "4", "--markdown"])
    t.ok(r.returncode == 0 and "| backend | page |" in r.stdout and ", 1 workers" not in r.stdout
         and "**host, 16 MiB region, pt-footprint, 4 workers**" in r.stdout,
         "--workers filters, --markdown gives Markdown tables", r.stdout + r.stderr)
    r = tap.run([tool, run_dir, "--workers", "four"])
    t.ok(r.returncode == 2 and "four" in r.stderr, "bad --workers refused, named (exit %d)" % r.returncode)
    r = tap.run([tool, run_dir, "--size", "huge"])
    t.ok(r.returncode == 2 and "huge" in r.stderr, "bad --size refused, named (exit %d)" % r.returncode)
    r = tap.run([tool, run_dir, "--workers", "7"])
    t.ok(r.returncode == 1 and "no records" in r.stderr, "a filter that matches nothing says so (exit %d)"
         % r.returncode)
    r = tap.run([tool, os.path.join(d, "nope")])
    t.ok(r.returncode == 2 and "nope" in r.stderr, "a missing run directory is refused, named")
finally:
    tap.cleanup(d)
t.done()
