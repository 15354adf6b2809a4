import os

import tap

t = tap.harness_test("main job, host only")

SPEC = """name = mj
backends = shm, mshare, file
workers = 1, 2
sizes = 16M
workloads = pt-footprint
platform = host, guest
repeats = 1
exclude = platform=host backend=file
args[platform=guest backend=file|mshare] = --path /mnt/pmem
"""
JOB = os.path.join(tap.ROOT, "bench", "main-job")
d = tap.tempdir("main-job")
try:
    spec = tap.write_spec(d, "mj", text=SPEC)
    env = dict(os.environ, HOST_ONLY="1", SWEEP=spec, RESULTS=os.path.join(d, "results"))
    r = tap.run([JOB], env=env)
    out = r.stdout
    t.ok(r.returncode == 0, "HOST_ONLY=1 main job finishes (exit %d)" % r.returncode, out + r.stderr)
    runs = os.listdir(os.path.join(d, "results")) if os.path.isdir(os.path.join(d, "results")) else []
    recs = sorted(os.listdir(os.path.join(d, "results", runs[0], "records"))) if len(runs) == 1 else []
    t.ok(recs == ["shm-4k-w1-s16M-pt-footprint.r1.json", "shm-4k-w2-s16M-pt-footprint.r1.json"],
         "host points ran into RESULTS, no guest record", recs)
    tail = out.rstrip().splitlines()[-14:]
    t.ok(any("GUEST PART NOT RUN (HOST_ONLY=1)" in l for l in tail) and tail[-1].startswith("#####"),
         "the end of the output names the skipped guest part", "\n".join(tail))
    page = os.path.join(d, "results", runs[0], "report", "index.html") if len(runs) == 1 else ""
    t.ok(any(l.startswith("#  report (open in a browser): ") and l.endswith("report/index.html") for l in tail)
         and os.path.isfile(page), "the run's page (bench/report) is written and named beside the headline",
         "\n".join(tail))
    kernel_lines = [l for l in (out + r.stderr).splitlines() if l.startswith(("kernel image:", "kernel ("))]
    t.ok(not kernel_lines, "HOST_ONLY=1 does not build or copy the kernel (no kernel/quiet-build.sh line)",
         "\n".join(kernel_lines))
    r = tap.run([JOB], env=dict(env, HOST_ONLY="yes"))
    t.ok(r.returncode == 2 and "HOST_ONLY='yes'" in r.stderr, "HOST_ONLY=yes refused, named (exit %d)" % r.returncode,
         r.stderr)
finally:
    tap.cleanup(d)
t.done()
