import os
import shutil

import tap

t = tap.Tap()
why = tap.harness_missing()
if why:
    t.skip("plots from a small real run", why)
    t.done()
if not shutil.which("gnuplot"):
    t.skip("plots from a small real run", "gnuplot not installed (make deps)")
    t.done()

d = tap.tempdir("plots")
try:
    spec = tap.write_spec(d, "plots", text="""name = plots
backends = shm, anon
workers = 1, 2, 4
sizes = 16M
workloads = pt-footprint
page = 4k
repeats = 2
""")
    r = tap.sweep(spec, os.path.join(d, "results"))
    run = r.stdout.strip()
    t.ok(r.returncode == 0 and os.path.isdir(run), "small real sweep (exit %d)" % r.returncode, r.stderr)
    r = tap.run([os.path.join(tap.ROOT, "plots", "plot-run"), run])
    t.ok(r.returncode == 0, "plot-run exits 0", r.stderr)
    listed = r.stdout.split()
    for fig in ("1-pagetables", "2-pt-per-worker-gib", "3-fault-latency", "4-attach-touch"):
        png = os.path.join(run, "plots", fig + "-host.png")
        svg = os.path.join(run, "plots", fig + "-host.svg")
        with open(png, "rb") if os.path.exists(png) else open(os.devnull, "rb") as f:
            head = f.read(8)
        t.ok(head == b"\x89PNG\r\n\x1a\n" and os.path.getsize(png) > 10000 and png in listed,
             "%s: PNG, %d bytes" % (os.path.basename(png), os.path.getsize(png) if os.path.exists(png) else 0))
        with open(svg) if os.path.exists(svg) else open(os.devnull) as f:
            text = f.read()
        t.ok("<svg" in text and "workers" in text, "%s: SVG with labelled axes" % os.path.basename(svg))
    for backend in ("shm", "anon"):
        table = os.path.join(run, "plots", "data", "host-pt-footprint-%s-4k-16M-read.dat" % backend)
        with open(table) if os.path.exists(table) else open(os.devnull) as f:
            lines = f.read().splitlines()
        t.ok(len(lines) == 4 and [ln.split()[0] for ln in lines[1:]] == ["1", "2", "4"]
             and all("?" not in ln.split()[1:4] for ln in lines[1:]),
             "data table for %s: one row per worker count with page-table figures" % backend, "\n".join(lines))
    # More than 8 series on a platform: one figure set per workload and size.
    spec = tap.write_spec(d, "many", text="""name = many
backends = shm, anon
workers = 1, 2
sizes = 4M, 8M, 16M
workloads = pt-footprint, touch
page = 4k
repeats = 1
""")
    r = tap.sweep(spec, os.path.join(d, "results"))
    many = r.stdout.strip()
    r = tap.run([os.path.join(tap.ROOT, "plots", "plot-run"), many])
    listed = [os.path.basename(p) for p in r.stdout.split()]
    want = ["1-pagetables-host-%s-%s.png" % (w, s) for w in ("pt-footprint", "touch") for s in ("4M", "8M", "16M")]
    t.ok(r.returncode == 0 and all(w in listed for w in want) and "1-pagetables-host.png" not in listed,
         "12 series: figures split per workload and region size (%d files)" % len(listed), r.stdout + r.stderr)
    r = tap.run([os.path.join(tap.ROOT, "plots", "plot-run"), os.path.join(d, "empty")])
    t.ok(r.returncode != 0 and "not a run directory" in (r.stderr + r.stdout), "a non-run directory is refused")
finally:
    tap.cleanup(d)
t.done()
