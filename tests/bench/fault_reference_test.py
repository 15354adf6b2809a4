import json
import os
import re

import tap

TOOL = os.path.join(tap.ROOT, "bench", "fault-reference")

t = tap.Tap()
d = tap.tempdir("fault-reference")


def record(backend, page, workers, platform, clock, unit, p50, p99, p999, nf_p50, fpw, preempted, phase,
           nf_count=1000, faults_count=5000):
    hist = {"count": faults_count, "mean": p50, "min": p50, "p50": p50, "p90": p50, "p99": p99, "p999": p999,
            "max": p999, "faults_taken": faults_count, "slept": 0}
    return {
        "schema_version": 6,
        "config": {"backend": backend, "workers": workers, "page_mode": page, "size_bytes": 1 << 28},
        "environment": {"platform": platform, "clock": clock, "time_unit": unit, "kernel": "6.1.test",
                        "cpu": "Test <CPU>", "cpu_hypervisor": platform == "host"},
        "results": {
            "time_s": {"touch": phase},
            "fault_cost": {
                "unit": unit, "clock": clock, "touches": 6000, "faults": hist,
                "no_fault_touches": dict(hist, count=nf_count, p50=nf_p50, p90=nf_p50, p99=nf_p50, p999=nf_p50),
                "preempted": {"count": preempted, "faults": 0},
                "faults_per_worker": {"mean": fpw[0], "min": fpw[1], "max": fpw[2]},
                "hw_instructions": {"state": "unavailable", "reason": "no PMU"} if platform == "host" else
                {"state": "not requested", "reason": ""},
            },
        },
    }


def make_run(name, points):
    """points: list of (id, backend, page, workers, [records])."""
    path = os.path.join(d, name)
    os.makedirs(os.path.join(path, "records"))
    manifest = {"points": [{"id": pid, "backend": b, "page": pg, "workers": w} for pid, b, pg, w, _ in points]}
    with open(os.path.join(path, "manifest.json"), "w") as f:
        json.dump(manifest, f)
    for pid, _, _, _, recs in points:
        for k, r in enumerate(recs, 1):
            with open(os.path.join(path, "records", "%s.r%d.json" % (pid, k)), "w") as f:
                json.dump(r, f)
    return path


GI = ("guest", "guest-instructions", "instructions")
HN = ("host", "host-ns", "ns")
try:
    guest = make_run("guest-run", [
        ("g-file-4k-w10", "file", "4k", 10, [
            record("file", "4k", 10, *GI, p50=3919, p99=4100, p999=9000, nf_p50=62, fpw=(65536, 65536, 65536),
                   preempted=12, phase=2.5),
            record("file", "4k", 10, *GI, p50=3919, p99=4100, p999=9000, nf_p50=62, fpw=(65536, 65536, 65536),
                   preempted=14, phase=2.501),
            record("file", "4k", 10, *GI, p50=3951, p99=4100, p999=9000, nf_p50=62, fpw=(65536, 65536, 65536),
                   preempted=13, phase=2.502)]),
        ("g-mshare-w10", "mshare", "4k", 10, [
            record("mshare", "4k", 10, *GI, p50=4383, p99=4511, p999=13823, nf_p50=62, fpw=(6553.6, 6136, 6907),
                   preempted=259, phase=1.195)] * 2),
        ("g-file-any-w10", "file", "any", 10, [
            record("file", "any", 10, *GI, p50=4511, p99=5000, p999=6000, nf_p50=70, fpw=(128, 128, 128),
                   preempted=3, phase=0.5, nf_count=0)]),
    ])
    host = make_run("host-run", [
        ("h-file-4k-w10", "file", "4k", 10, [
            record("file", "4k", 10, *HN, p50=12000, p99=30000, p999=90000, nf_p50=300, fpw=(60000, 59000, 61000),
                   preempted=100, phase=4.0)]),
        ("h-shm-4k-w10", "shm", "4k", 10, [
            record("shm", "4k", 10, *HN, p50=13000, p99=31000, p999=95000, nf_p50=310, fpw=(65536, 65536, 65536),
                   preempted=90, phase=4.2)]),
    ])

    r = tap.run([TOOL, guest])
    out = r.stdout
    t.ok(r.returncode == 0, "a guest run: exit 0", r.stderr)
    t.ok("clock guest-instructions, unit instructions" in out and "in instructions" in out,
         "the clock and the unit come from the records", out)
    row = [ln for ln in out.splitlines() if ln.strip().startswith("file 4k") and " 10 " in ln]
    # p50 over 3 repeats: 3919, 3919, 3951: median 3,919, range 3,919-3,951;
    # preempted 12, 14, 13: median 13 (12-14); phase 2.5..2.502 G instructions.
    t.ok(len(row) == 1 and "3,919 (3,919-3,951)" in row[0] and "13 (12-14)" in row[0] and " 3 " in row[0]
         and "65,536 (65,536..65,536)" in row[0] and "2.501 G instr (2.500-2.502)" in row[0],
         "file 4k: 3 repeats, p50 median and range, preempted, phase in G instructions", out)
    row = [ln for ln in out.splitlines() if ln.strip().startswith("mshare")]
    t.ok(len(row) == 1 and "6,553.6 (6,136..6,907)" in row[0] and "4,383" in row[0] and "4,511" in row[0]
         and "13,823" in row[0], "mshare: faults per worker mean and the least..most one worker took", out)
    row = [ln for ln in out.splitlines() if ln.strip().startswith("file any")]
    t.ok(len(row) == 1 and row[0].split()[9] == "-", "no touch without a fault: '-' rather than a figure", out)

    r = tap.run([TOOL, guest, host])
    out = r.stdout
    t.ok(r.returncode == 0 and "clock host-ns, unit ns" in out and "runs under a hypervisor" in out,
         "with the host run: its clock, unit, and that its CPU is under a hypervisor", out + r.stderr)
    lines = out.split("Per fault, guest against host")[-1].splitlines()
    f = [ln for ln in lines if ln.strip().startswith("file 4k")]
    # guest median p50 3,919 instructions against host 12,000 and 13,000 ns.
    t.ok(len(f) == 2 and "guest 3,919 instructions" in f[0] and "host 12,000 ns" in f[0]
         and "= %.2f instructions per host ns" % (3919 / 12000.0) in f[0]
         and "host 13,000 ns" in f[1] and "= %.2f" % (3919 / 13000.0) in f[1] and "tmpfs" in f[1],
         "file 4k against the host's ext4 file and tmpfs, ratios from the records", "\n".join(lines))
    m = [ln for ln in lines if ln.strip().startswith("mshare")]
    a = [ln for ln in lines if ln.strip().startswith("file any")]
    t.ok(len(m) == 1 and "no host counterpart" in m[0] and not re.search(r"host [0-9]", m[0] + a[0])
         and len(a) == 1 and "persistent memory" in a[0],
         "mshare and DAX 2 MiB: no host counterpart, said why, no host figure", "\n".join(lines))

    r = tap.run([TOOL, "--repeats", guest])
    out = r.stdout
    blk = out.split("g-file-4k-w10")[1].split("g-mshare")[0] if "g-file-4k-w10" in out else ""
    t.ok(r.returncode == 0 and "faults           p50/p90/p99/p99.9 differ" in blk and "(p50 0.82%" in blk,
         "--repeats: file 4k's fault percentiles differ, p50 by (3951-3919)/3919 = 0.82%", out)
    t.ok("no_fault_touches p50/p90/p99/p99.9 identical: 62/62/62/62" in blk
         and "spread 0.080%" in blk and "12 / 12" not in blk and "5,000 / 12, 5,000 / 14, 5,000 / 13" in blk,
         "--repeats: identical no-fault touches, phase spread (2.502-2.5)/2.5 = 0.080%, counts per repeat", blk)
    blk2 = out.split("g-mshare-w10")[1] if "g-mshare-w10" in out else ""
    t.ok("faults           p50/p90/p99/p99.9 identical: 4,383/4,383/4,511/13,823" in blk2 and "spread 0.000%" in blk2,
         "--repeats: mshare's two identical repeats read identical", blk2)
    t.ok("g-file-any-w10" not in out and "identical in all but 1 histogram(s) (g-file-4k-w10 faults)" in out
         and "at most 0.080%" in out, "--repeats: a point with one repeat is left out; the last line sums up", out)

    r = tap.run([TOOL, "--repeats", guest, guest])
    t.ok(r.returncode == 0 and "g-mshare-w10 (4 repeats" in r.stdout,
         "--repeats over two runs pools the same point's repeats", r.stdout + r.stderr)

    old = make_run("old-run", [("o-shm", "shm", "4k", 1, [{"schema_version": 4, "results": {}}])])
    r = tap.run([TOOL, old])
    t.ok(r.returncode == 0 and "no record with results.fault_cost" in r.stdout and "schema 5" in r.stdout,
         "records without fault_cost: said so, no figure invented", r.stdout + r.stderr)
    r = tap.run([TOOL, d])
    t.ok(r.returncode == 2 and "not a run directory" in r.stderr and r.stdout == "",
         "not a run directory: exit 2 with the reason", r.stderr)
    r = tap.run([TOOL, guest, host, old])
    t.ok(r.returncode == 2 and "at most two run directories" in r.stderr, "three runs without --repeats: refused",
         r.stderr)
finally:
    tap.cleanup(d)
t.done()
