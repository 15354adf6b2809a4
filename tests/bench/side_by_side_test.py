import json
import os
import re
import shutil

import tap
from runrecords import human

t = tap.harness_test("side-by-side on a small real run")

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
    t.ok(r.returncode == 0 and len(titles) == 2 and any(", 1 workers; kernel " in l for l in titles)
         and any(", 4 workers; kernel " in l for l in titles), "one table per worker count", out + r.stderr)
    with open(os.path.join(run_dir, "records", "shm-4k-w4-s16M-pt-footprint.r1.json")) as f:
        env = json.load(f)["environment"]
    t.ok(all(("; kernel %s %s; " % (env["kernel"], env["kernel_version"])) in l for l in titles),
         "every table names the records' kernel (uname -r and -v)", out)
    t.ok(all(l.endswith("; clock %s (host, wall clock), times in %s" % (env["clock"], env["time_unit"]))
             for l in titles), "every table names the records' clock and time unit (%s, %s)"
         % (env["clock"], env["time_unit"]), out)

    def table(text, workers):
        lines = text.splitlines()
        i = [n for n, l in enumerate(lines)
             if l.startswith("host, 16 MiB region, pt-footprint, %d workers;" % workers)][0]
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

    def cells(text, workers):
        """{backend: {column: cell}} of a table, cut at the header's columns
        (cells hold single spaces: "12 KiB", "1.2 us / 3 ms")."""
        header, rows = table(text, workers)
        starts = [m.start() for m in re.finditer(r"\S+(?: \S+)*", header)]
        names = [header[a:b].strip() for a, b in zip(starts, starts[1:] + [None])]
        return {k: {n: line[a:b].strip() for n, a, b in zip(names, starts, starts[1:] + [None])}
                for k, line in rows.items()}

    # First-touch latency is named so, and beside it the cost of one real
    # fault and of a touch without one, the record's fault_cost in its unit.
    got = cells(out, 4)
    ok = "touch p50" in header and "touch p99" in header and "ns/fault" not in header
    for backend in ("shm", "anon"):
        with open(os.path.join(run_dir, "records", "%s-4k-w4-s16M-pt-footprint.r1.json" % backend)) as f:
            rec = json.load(f)
        fc = rec["results"]["fault_cost"]
        want = {"fault p50": human(fc["faults"]["p50"], "ns"), "fault p99": human(fc["faults"]["p99"], "ns"),
                "pages/fault": "%.3g" % rec["results"]["faults"]["pages_per_fault"]}
        row = got.get("%s 4k" % backend, {})
        ok = ok and fc["unit"] == "ns" and fc["faults"]["count"] > 0 and all(row.get(k) == v for k, v in want.items())
        if not ok:
            print("#   %s: want %s, got %s" % (backend, want, row))
    t.ok(ok, "fault p50/p99 are the record's fault_cost percentiles in ns; pages/fault the record's")
    edited = os.path.join(d, "per-fault")
    shutil.copytree(run_dir, edited)

    def edit(backend, change):
        path = os.path.join(edited, "records", "%s-4k-w4-s16M-pt-footprint.r1.json" % backend)
        with open(path) as f:
            rec = json.load(f)
        change(rec)
        with open(path, "w") as f:
            json.dump(rec, f)
    edit("shm", lambda r: r["results"]["fault_cost"]["faults"].update(p50=123456, p99=234567))
    edit("anon", lambda r: r["results"].pop("fault_cost"))
    got = cells(tap.run([tool, edited, "--workers", "4"]).stdout, 4)
    shm, anon = got.get("shm 4k", {}), got.get("anon 4k", {})
    t.ok(shm.get("fault p50") == "123.5 us" and shm.get("fault p99") == "234.6 us"
         and anon.get("fault p50") == "-" and anon.get("no-fault p50") == "-",
         "edited records: 123.5 us per fault shown; a record without fault_cost shows '-'", got)

    def no_fault(r):
        r["results"]["fault_cost"]["faults"].update(count=0, p50=0, p99=0)
        r["results"]["fault_cost"]["no_fault_touches"].update(count=32, p50=777, p99=900)
    edit("shm", no_fault)
    got = cells(tap.run([tool, edited, "--workers", "4"]).stdout, 4)
    t.ok(got.get("shm 4k", {}).get("fault p50") == "-" and got.get("shm 4k", {}).get("no-fault p50") == "777 ns",
         "a record without a fault: '-' per fault, not 0 ns; its touches without a fault at 777 ns", got)

    def icount(r):
        r["environment"].update(clock="guest-instructions", time_unit="instructions")
        r["results"]["fault_cost"]["unit"] = "instructions"
        r["results"]["fault_cost"]["faults"].update(count=32, p50=4383, p99=7359)
    edit("shm", icount)
    r = tap.run([tool, edited, "--workers", "4"])
    got = cells(r.stdout, 4)
    t.ok(got.get("shm 4k", {}).get("fault p50") == "4,383 instr" and got.get("shm 4k", {}).get("fault p99") == "7,359 instr"
         and "clock guest-instructions (guest, instruction clock), times in instructions" in r.stdout
         and "clock host-ns (host, wall clock), times in ns" in r.stdout,
         "instruction-clock records: times in instr, both clocks named in the title", r.stdout)

    r = tap.run([tool, run_dir, "--workers", "4", "--markdown"])
    t.ok(r.returncode == 0 and "| backend | page |" in r.stdout and ", 1 workers" not in r.stdout
         and "**host, 16 MiB region, pt-footprint, 4 workers; kernel " in r.stdout,
         "--workers filters, --markdown gives Markdown tables", r.stdout + r.stderr)
    # Page tables per NUMA node: not shown for one-node records unless asked;
    # --per-node shows them, and a run whose records have two nodes gets the
    # table without asking, each node's figure the record's own.
    t.ok("page tables per NUMA node" not in out, "one-node records: no per-node table by default", out)
    r = tap.run([tool, run_dir, "--workers", "4", "--per-node"])
    with open(os.path.join(run_dir, "records", "shm-4k-w4-s16M-pt-footprint.r1.json")) as f:
        rec = json.load(f)
    node0 = human(rec["results"]["pagetables"]["nodes"][0]["delta_bytes"], "bytes")
    shm_node = [l for l in r.stdout.splitlines() if l.startswith("shm 4k") and "not bound" in l]
    t.ok(r.returncode == 0 and "page tables per NUMA node" in r.stdout and len(shm_node) == 1
         and node0 + " (100%)" in shm_node[0], "--per-node: node 0 column is the record's delta (%s)" % node0,
         r.stdout + r.stderr)
    two = os.path.join(d, "two-nodes")
    shutil.copytree(run_dir, two)
    path = os.path.join(two, "records", "shm-4k-w4-s16M-pt-footprint.r1.json")
    with open(path) as f:
        rec = json.load(f)
    rec["results"]["pagetables"]["nodes"] = [
        {"node": 0, "delta_bytes": 3 * 4096}, {"node": 1, "delta_bytes": 9 * 4096}]
    rec["results"]["numa"]["workers_per_node"] = [2, 2]
    rec["results"]["numa"]["cpus_used"] = "0-1"
    rec["results"]["numa"]["data_device_node"] = 1
    with open(path, "w") as f:
        json.dump(rec, f)
    r = tap.run([tool, two, "--workers", "4"])
    line = [l for l in r.stdout.splitlines() if l.startswith("shm 4k") and "2/2" in l]
    t.ok(r.returncode == 0 and "node 0" in r.stdout and "node 1" in r.stdout and len(line) == 1
         and "12 KiB (25%)" in line[0] and "36 KiB (75%)" in line[0] and " 0-1 " in line[0]
         and line[0].rstrip().endswith(" 1"),
         "two-node records: per-node table without asking, each node's delta and share, workers/node, cpus, "
         "data node", r.stdout + r.stderr)

    # Several run directories (the same sweep on two kernels): one table per
    # point, a row per backend and run, each row's kernel in brackets and its
    # figures from its own run's records.
    other = os.path.join(d, "other-kernel")
    shutil.copytree(run_dir, other)
    for name in os.listdir(os.path.join(other, "records")):
        path = os.path.join(other, "records", name)
        with open(path) as f:
            rec = json.load(f)
        rec["environment"]["kernel"] = "6.12.0-test"
        rec["results"]["pagetables"]["meminfo_delta_bytes"] = 77 * 4096
        with open(path, "w") as f:
            json.dump(rec, f)
    r = tap.run([tool, run_dir, other, "--workers", "4"])
    header, rows = table(r.stdout, 4)
    mine = "shm 4k [%s]" % env["kernel"]
    t.ok(r.returncode == 0 and set(rows) == {mine, "shm 4k [6.12.0-test]", "anon 4k [%s]" % env["kernel"],
                                             "anon 4k [6.12.0-test]"}
         and "308 KiB" in rows["shm 4k [6.12.0-test]"] and "308 KiB" not in rows[mine],
         "two run directories: one table, a row per backend and kernel, figures from each run's records",
         r.stdout + r.stderr)

    # The database workloads get their own columns.
    spec = tap.write_spec(d, "sbs-wl", text="""name = sbs-wl
backends = shm, hugetlb-2m
workers = 2
sizes = 16M
workloads = oltp, connect-storm
page = 4k
repeats = 2
args[workload=oltp] = --ops 300
args[workload=connect-storm] = --ops 5 --working-set 64K
""")
    r = tap.sweep(spec, os.path.join(d, "results"))
    wl_dir = r.stdout.strip()
    t.ok(os.path.isdir(wl_dir), "workload sweep ran (exit %d)" % r.returncode, r.stderr)
    r = tap.run([tool, wl_dir])
    lines = r.stdout.splitlines()

    def wl_table(workload):
        i = [n for n, l in enumerate(lines) if l.startswith("host, 16 MiB region, %s, 2 workers;" % workload)]
        if not i:
            return None, {}
        rows = {}
        for line in lines[i[0] + 2:]:
            if not line.strip():
                break
            rows[line.split("  ")[0].strip()] = line
        return lines[i[0] + 1], rows

    header, rows = wl_table("oltp")
    recs = []
    for k in (1, 2):
        with open(os.path.join(wl_dir, "records", "shm-4k-w2-s16M-oltp.r%d.json" % k)) as f:
            recs.append(json.load(f)["results"])
    ops = sorted(x["workload"]["ops_per_s"] for x in recs)
    fpo = sorted(x["faults"]["minflt"] / x["workload"]["ops"] for x in recs)
    want = ["%.4g (%.4g-%.4g)" % ((ops[0] + ops[1]) / 2, ops[0], ops[1]),
            "%.3g" % ((fpo[0] + fpo[1]) / 2),
            recs[0]["workload"]["persist_path"]]
    line = rows.get("shm 4k", "")
    t.ok(header is not None and header.split()[3:5] == ["ops/s", "op"] and "faults/op" in header
         and "persist" in header and all(w in line for w in want),
         "oltp table: ops/s (median, min-max), faults/op and the persist path from the records (want %s)" % want,
         r.stdout + r.stderr)
    header, rows = wl_table("connect-storm")
    with open(os.path.join(wl_dir, "records", "shm-4k-w2-s16M-connect-storm.r1.json")) as f:
        ph = json.load(f)["results"]["workload"]["phase_latency_ns"]
    t.ok(header is not None and "attach p50/p99" in header and "touch p50/p99" in header
         and "detach p50/p99" in header and "persist" not in header and "shm 4k" in rows,
         "connect-storm table: attach, first-touch and detach p50/p99 columns, no persist column", r.stdout)
    import runrecords
    recs2 = []
    for k in (1, 2):
        with open(os.path.join(wl_dir, "records", "shm-4k-w2-s16M-connect-storm.r%d.json" % k)) as f:
            recs2.append(json.load(f)["results"]["workload"]["phase_latency_ns"]["attach"])
    want = human(runrecords.spread([x["p50"] for x in recs2])["median"], "ns")
    t.ok(want in rows.get("shm 4k", ""), "connect-storm attach p50 is the records' median (%s)" % want,
         rows.get("shm 4k", ""))

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
