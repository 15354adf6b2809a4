import json
import os
import shutil

import tap
import runrecords  # noqa: E402 (bench/lib: on the path once tap is imported)



def planner_series(run_dir):
    """`plan --calibrate RUN --series`: (panel lines' fields after the number,
    record rows, model line rows)."""
    r = tap.run([tap.HARNESS, "plan", "--calibrate", run_dir, "--series"])
    panels, points, lines = [], [], []
    for line in r.stdout.splitlines():
        f = line.split()
        if f[:2] == ["#", "panel"] and f[2].isdigit():
            panels.append(f[3:])
        elif f and not f[0].startswith("#") and len(f) in (5, 10):
            (points if len(f) == 10 else lines).append(f)
    return panels, points, lines


def panels_size(panels, number):
    return int(panels[int(number) - 1][1])


def planner_lines_meet_points(points, lines):
    """Every record's PageTables model is on a line of its panel and mode at
    its worker count."""
    at = {}
    for panel, mode, n, meminfo, _ in lines:
        at.setdefault((panel, mode, n), set()).add(meminfo)
    return bool(points) and all(p[4] in at.get((p[9], p[0], p[1]), ()) for p in points)


def edit_records(run_dir, change):
    recdir = os.path.join(run_dir, "records")
    for name in os.listdir(recdir):
        if name.endswith(".json"):
            path = os.path.join(recdir, name)
            with open(path) as f:
                rec = json.load(f)
            change(rec)
            with open(path, "w") as f:
                json.dump(rec, f)


t = tap.harness_test("plots from a small real run")
if not shutil.which("gnuplot"):
    t.skip("plots from a small real run", "gnuplot not installed (make deps)")
    t.done()

d = tap.tempdir("plots")
try:
    spec = tap.write_spec(d, "plots", workers="1, 2, 4")
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
    # Figure 3: first-touch latency, and beside it the mean time per real
    # fault and pages per fault, the records' own (medians over repeats).
    ok = True
    for backend in ("shm", "anon"):
        with open(os.path.join(run, "plots", "data", "host-pt-footprint-%s-4k-16M-read.dat" % backend)) as f:
            rows = [ln.split() for ln in f.read().splitlines()]
        col = {name: i for i, name in enumerate(rows[0])}
        if not {"ns_per_fault_med", "pages_per_fault_med"} <= set(col):
            ok = False
            print("#   %s: no ns_per_fault/pages_per_fault columns in %s" % (backend, rows[0]))
            continue
        for row in rows[1:]:
            recs = [json.load(open(os.path.join(run, "records", "%s-4k-w%s-s16M-pt-footprint.r%d.json"
                                                % (backend, row[0], k))))["results"]["faults"] for k in (1, 2)]
            for name, key in (("ns_per_fault", "mean_ns_per_fault"), ("pages_per_fault", "pages_per_fault")):
                want = runrecords.spread([x[key] for x in recs])
                got = [float(row[col["%s_%s" % (name, s_)]]) for s_ in ("med", "min", "max")]
                if got != [want["median"], want["min"], want["max"]] or not all(x["minflt"] > 0 for x in recs):
                    ok = False
                    print("#   %s w%s %s: table %s, records %s" % (backend, row[0], name, got, want))
    t.ok(ok, "data tables: ns_per_fault and pages_per_fault med/min/max are the records' mean_ns_per_fault "
         "and pages_per_fault over the repeats")
    # Figure 3 per real fault from results.fault_cost, in the records' unit
    # and clock: the tables hold the records' own percentiles (medians over
    # repeats); no panel of the workers' time divided by their faults.
    ok = True
    for backend in ("shm", "anon"):
        with open(os.path.join(run, "plots", "data", "host-pt-footprint-%s-4k-16M-read.dat" % backend)) as f:
            rows = [ln.split() for ln in f.read().splitlines()]
        col = {name: i for i, name in enumerate(rows[0])}
        for row in rows[1:]:
            fcs = [json.load(open(os.path.join(run, "records", "%s-4k-w%s-s16M-pt-footprint.r%d.json"
                                               % (backend, row[0], k))))["results"]["fault_cost"] for k in (1, 2)]
            for name, get in (("fc_p50", lambda f: f["faults"]["p50"]), ("fc_p999", lambda f: f["faults"]["p999"]),
                              ("fpw_max", lambda f: f["faults_per_worker"]["max"])):
                want = runrecords.spread([get(x) for x in fcs])
                got = [float(row[col["%s_%s" % (name, s_)]]) for s_ in ("med", "min", "max")] if name + "_med" in col \
                    else None
                if got != [want["median"], want["min"], want["max"]]:
                    ok = False
                    print("#   %s w%s %s: table %s, records %s" % (backend, row[0], name, got, want))
    t.ok(ok, "data tables: fc_p50, fc_p999, fpw_max med/min/max are the records' fault_cost over the repeats")
    with open(os.path.join(run, "plots", "3-fault-latency-host.svg")) as f:
        svg = f.read()
    t.ok("cost per fault, p50 (ns)" in svg and "clock: host-ns" in svg and "faults per worker" in svg
         and "a touch without a fault" in svg and "mean time per real fault" not in svg
         and "workers' time" not in svg,
         "3-fault-latency: per-fault percentiles in ns under host-ns, no-fault touch, faults per worker; "
         "no workers'-time-per-fault panel")
    # The same records under the instruction clock: the unit follows them.
    icl = os.path.join(d, "icount-records")
    shutil.copytree(run, icl)
    shutil.rmtree(os.path.join(icl, "plots"))

    def to_instructions(rec):
        rec["environment"]["clock"], rec["environment"]["time_unit"] = "guest-instructions", "instructions"
        rec["results"]["fault_cost"]["unit"] = "instructions"
    edit_records(icl, to_instructions)
    r = tap.run([os.path.join(tap.ROOT, "plots", "plot-run"), icl])
    svg = open(os.path.join(icl, "plots", "3-fault-latency-host.svg")).read() if r.returncode == 0 else ""
    t.ok("cost per fault, p50 (instructions)" in svg and "clock: guest-instructions" in svg
         and "(ns)" not in svg, "instruction-clock records: figure 3 in instructions, clock named", r.stderr)
    # Two clocks in one run: one figure 3 per clock.
    two = os.path.join(d, "two-clocks")
    shutil.copytree(icl, two)
    shutil.rmtree(os.path.join(two, "plots"))
    for name in os.listdir(os.path.join(run, "records")):
        if name.startswith("anon-"):
            shutil.copy(os.path.join(run, "records", name), os.path.join(two, "records", name))
    r = tap.run([os.path.join(tap.ROOT, "plots", "plot-run"), two])
    figs = sorted(os.path.basename(p) for p in r.stdout.split() if "3-fault-latency" in p and p.endswith(".svg"))
    t.ok(r.returncode == 0 and figs == ["3-fault-latency-host-guest-instructions.svg", "3-fault-latency-host-host-ns.svg"],
         "records of two clocks: one figure 3 per clock", r.stdout + r.stderr)
    # Records without fault_cost (schema < 5): figure 3 not drawn, said why.
    old = os.path.join(d, "old-records")
    shutil.copytree(run, old)
    shutil.rmtree(os.path.join(old, "plots"))

    def make_old(rec):
        rec["results"].pop("fault_cost")
        rec["schema_version"] = 4
    edit_records(old, make_old)
    r = tap.run([os.path.join(tap.ROOT, "plots", "plot-run"), old])
    t.ok(r.returncode == 0 and not os.path.exists(os.path.join(old, "plots", "3-fault-latency-host.svg"))
         and "3-fault-latency-host not drawn: no record has results.fault_cost (schema 4" in r.stderr
         and os.path.exists(os.path.join(old, "plots", "1-pagetables-host.svg")),
         "records without fault_cost: the other figures drawn, figure 3 not, the note names the schema", r.stderr)
    # 6-planner: a panel per platform, kernel and region size, the model
    # lines those records are compared with.
    panels, points, lines = planner_series(run)
    t.ok(len(panels) == 1 and panels[0][:2] == ["host", str(16 << 20)] and len(points) == 12,
         "planner series: one panel, platform host, 16 MiB, 12 records", panels)
    t.ok(planner_lines_meet_points(points, lines),
         "planner series: each record's model lies on its panel's model line", (points, lines))
    t.ok(os.path.join(run, "plots", "6-planner.png") in listed, "6-planner drawn", r.stdout + r.stderr)
    # Page tables per NUMA node: not drawn for one-node records; drawn, with
    # the nodes' own figures in its table, when the records have two nodes.
    t.ok(not any("8-pagetables-per-node" in p for p in listed), "one-node run: no per-node figure")
    two = os.path.join(d, "two-nodes")
    shutil.copytree(run, two)
    shutil.rmtree(os.path.join(two, "plots"))
    recdir = os.path.join(two, "records")
    for name in os.listdir(recdir):
        if not name.endswith(".json"):
            continue
        path = os.path.join(recdir, name)
        with open(path) as f:
            rec = json.load(f)
        w = rec["config"]["workers"]
        # shm: all on node 0 (a shared set); anon: 1 page per worker on node 1.
        rec["results"]["pagetables"]["nodes"] = (
            [{"node": 0, "delta_bytes": 4096 * 8}, {"node": 1, "delta_bytes": 0}] if rec["config"]["backend"] == "shm"
            else [{"node": 0, "delta_bytes": 4096 * w}, {"node": 1, "delta_bytes": 4096 * 3 * w}])
        with open(path, "w") as f:
            json.dump(rec, f)
    r = tap.run([os.path.join(tap.ROOT, "plots", "plot-run"), two])
    png = os.path.join(two, "plots", "8-pagetables-per-node-host.png")
    t.ok(r.returncode == 0 and png in r.stdout.split() and os.path.getsize(png) > 10000,
         "two-node records: 8-pagetables-per-node drawn", r.stdout + r.stderr)
    with open(os.path.join(two, "plots", "data", "host-pt-footprint-anon-4k-16M-read.dat")) as f:
        rows = [ln.split() for ln in f.read().splitlines()]
    col = {name: i for i, name in enumerate(rows[0])}
    t.ok([float(r_[col["pt_node1_med"]]) for r_ in rows[1:]] == [4096 * 3 * w for w in (1, 2, 4)]
         and all(float(r_[col["pt_node0_pct_med"]]) == 25.0 for r_ in rows[1:]),
         "per-node figure data: node 1 bytes and node 0 share (25%) from the records", "\n".join(map(str, rows)))

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
    # Three region sizes: three run panels, each with its own model lines.
    panels, points, lines = planner_series(many)
    t.ok([p[1] for p in panels] == [str(s << 20) for s in (4, 8, 16)]
         and all(p[0] == "host" and p[3] == "8" for p in panels)
         and all(int(p[2]) == panels_size(panels, p[-1]) for p in points),
         "planner series of three sizes: a panel each, its records only", panels)
    t.ok(planner_lines_meet_points(points, lines) and {x[0] for x in lines} == {"1", "2", "3"},
         "planner series of three sizes: each panel's model lines meet its records' models", lines)
    with open(os.path.join(many, "plots", "6-planner.svg")) as f:
        svg = f.read()
    t.ok(all("MEASURED on the host vs MODEL: %d MiB region, 8 records" % s in svg for s in (4, 8, 16)),
         "6-planner: a titled panel per region size, platform in the title")
    # Platform from the records: guest records get their own panel.
    mixed = os.path.join(d, "mixed")
    shutil.copytree(run, mixed)
    shutil.rmtree(os.path.join(mixed, "plots"))
    edit_records(mixed, lambda rec: rec["environment"].update(platform="guest")
                 if rec["config"]["backend"] == "anon" else None)
    panels, points, lines = planner_series(mixed)
    t.ok([p[0] for p in panels] == ["guest", "host"] and all(p[3] == "6" for p in panels),
         "planner series: guest and host records in panels of their own", panels)
    r = tap.run([os.path.join(tap.ROOT, "plots", "plot-run"), mixed])
    with open(os.path.join(mixed, "plots", "6-planner.svg")) as f:
        svg = f.read()
    t.ok(r.returncode == 0 and "MEASURED on the guest vs MODEL: 16 MiB region" in svg
         and "MEASURED on the host vs MODEL: 16 MiB region" in svg and "this host" not in svg,
         "6-planner: the guest panel says guest", r.stderr)
    # A run the planner models nothing of: no 6-planner, and a note why.
    # (name and facts: since schema 6 the planner reads config.workload_facts, the workload's own
    # description, and names only in records without them)
    edit_records(mixed, lambda rec: rec["config"].update(
        workload="scan", workload_facts={"touch_stride_bytes": 0, "touches_whole_region": False}))
    shutil.rmtree(os.path.join(mixed, "plots"))
    r = tap.run([os.path.join(tap.ROOT, "plots", "plot-run"), mixed])
    t.ok(r.returncode == 0 and not os.path.exists(os.path.join(mixed, "plots", "6-planner.png"))
         and "6-planner not drawn" in r.stderr, "no modelled record: no 6-planner, a note says why", r.stderr)
    # Several runs (one sweep on two kernels): one figure set in --out, a
    # series per backend and kernel, labelled with the kernel release.
    other = os.path.join(d, "other-kernel")
    shutil.copytree(run, other)
    shutil.rmtree(os.path.join(other, "plots"))
    edit_records(other, lambda rec: rec["environment"].update(kernel="6.12.0-test"))
    both = os.path.join(d, "both")
    r = tap.run([os.path.join(tap.ROOT, "plots", "plot-run"), "--out", both, run, other])
    kernel = json.load(open(os.path.join(run, "records", sorted(os.listdir(os.path.join(run, "records")))[0])))[
        "environment"]["kernel"]
    svg = open(os.path.join(both, "1-pagetables-host.svg")).read() if r.returncode == 0 else ""
    t.ok(r.returncode == 0 and "[6.12.0-test]" in svg and "[%s]" % kernel in svg
         and os.path.exists(os.path.join(both, "data", "host-pt-footprint-shm-4k-16M-read-6.12.0-test.dat"))
         and not os.path.exists(os.path.join(both, "6-planner.png")),
         "two runs with --out: one figure, a series per backend and kernel, labelled with the kernel",
         r.stdout + r.stderr)
    r = tap.run([os.path.join(tap.ROOT, "plots", "plot-run"), run, other])
    t.ok(r.returncode == 2 and "--out" in r.stderr, "two runs without --out: usage (exit %d)" % r.returncode)
    r = tap.run([os.path.join(tap.ROOT, "plots", "plot-run"), os.path.join(d, "empty")])
    t.ok(r.returncode != 0 and "not a run directory" in (r.stderr + r.stdout), "a non-run directory is refused")
finally:
    tap.cleanup(d)
t.done()
