import glob
import json
import os

import tap

t = tap.harness_test("guest hook")

SPEC = """name = %s
backends = shm, anon
workers = 2
sizes = 16M
workloads = pt-footprint
page = 4k
repeats = 1
platform = host, guest
vm-args = --mem 1G --pmem 1 --timeout 600
"""

d = tap.tempdir("guest")
try:
    # 1. No kernel image: every guest point is skipped, with the reason.
    spec = tap.write_spec(d, "nokernel", text=SPEC % "nokernel")
    env = dict(os.environ, MSHARE_VM_KERNEL=os.path.join(d, "no-such-bzImage"))
    r = tap.run([os.path.join(tap.ROOT, "bench", "sweep"), spec, "--results", os.path.join(d, "r1")], env=env)
    run = r.stdout.strip()
    t.ok(r.returncode == 0 and os.path.isdir(run), "sweep without a kernel image finishes (exit %d)" % r.returncode,
         r.stderr)
    with open(os.path.join(run, "skipped.txt")) as f:
        skipped = f.read().splitlines()
    t.ok(len(skipped) == 2 and all(s.startswith("guest-") and "no patched kernel built" in s for s in skipped),
         "both guest points skipped: no patched kernel built", "\n".join(skipped))
    recs = sorted(os.path.basename(p) for p in glob.glob(os.path.join(run, "records", "*.json")))
    t.ok(recs == ["anon-4k-w2-s16M-pt-footprint.r1.json", "shm-4k-w2-s16M-pt-footprint.r1.json"],
         "host points still run", recs)

    # 1b. clock[...]: one boot per clock (a stand-in VM runner that only
    # logs its arguments: no guest needed to see the boots asked for).
    fake = os.path.join(d, "fake-run.sh")
    log = os.path.join(d, "fake-run.log")
    with open(fake, "w") as f:
        f.write("#!/bin/sh\necho \"$*\" >> %s\nexit 0\n" % log)
    os.chmod(fake, 0o755)
    kernel = os.path.join(d, "fake-bzImage")
    open(kernel, "w").close()
    text = (SPEC % "clocks").replace("platform = host, guest", "platform = guest").replace(
        "backends = shm, anon", "backends = shm").replace("workloads = pt-footprint", "workloads = pt-footprint, touch") \
        + "clock = tcg\nclock[workload=touch] = instructions\n"
    spec = tap.write_spec(d, "clocks", text=text)
    env = dict(os.environ, MSHARE_VM_RUN=fake, MSHARE_VM_KERNEL=kernel)
    r = tap.run([os.path.join(tap.ROOT, "bench", "sweep"), spec, "--results", os.path.join(d, "r1b")], env=env)
    run = r.stdout.strip() or (sorted(glob.glob(os.path.join(d, "r1b", "*"))) or [""])[-1]
    calls = open(log).read().splitlines() if os.path.exists(log) else []
    scripts = [open(p).read() if os.path.exists(p) else "" for p in
               (os.path.join(run, "guest", "boot-%d" % n, "points.sh") for n in (1, 2))]
    t.ok(len(calls) == 2 and calls[0].startswith("--kernel %s --clock tcg " % kernel)
         and calls[1].startswith("--kernel %s --clock instructions " % kernel)
         and "guest-shm-4k-w2-s16M-pt-footprint" in scripts[0] and "guest-shm-4k-w2-s16M-touch" not in scripts[0]
         and "guest-shm-4k-w2-s16M-touch" in scripts[1] and "pt-footprint" not in scripts[1],
         "clock[workload=touch] = instructions: two boots, --clock tcg for pt-footprint, --clock instructions "
         "for touch", "\n".join(calls) + "\n" + r.stderr[-2000:])
    with open(os.path.join(run, "manifest.json")) as f:
        pts = {p["id"]: p.get("clock") for p in json.load(f)["points"]}
    t.ok(pts == {"guest-shm-4k-w2-s16M-pt-footprint": "tcg", "guest-shm-4k-w2-s16M-touch": "instructions"},
         "the manifest gives each guest point its clock", pts)

    # 2. With the patched kernel: one boot runs both guest points.
    why, skip = tap.guest_blocker()
    if why:
        if skip:
            t.skip("guest points in one VM boot", why)
        else:
            t.ok(False, "guest points in one VM boot: cannot boot the guest: " + why)
        t.done()
    # A third point overruns the spec's per-run timeout: the guest stops it
    # (SIGINT through busybox timeout) and the next points still run.
    text = (SPEC % "vm").replace("platform = host, guest", "platform = guest").replace(
        "workloads = pt-footprint", "workloads = sga-read, pt-footprint")
    text += ("exclude = workload=sga-read backend=anon\n"
             "args[workload=sga-read] = --duration 100000s\n"
             "timeout = 60s\n")
    spec = tap.write_spec(d, "vm", text=text)
    r = tap.run([os.path.join(tap.ROOT, "bench", "sweep"), spec, "--results", os.path.join(d, "r2")])
    run = r.stdout.strip()
    t.ok(r.returncode == 1 and os.path.isdir(run), "guest sweep finishes, one run failed (exit %d)" % r.returncode,
         r.stderr)
    failed = open(os.path.join(run, "failed.txt")).read() if os.path.isdir(run) else ""
    t.ok(failed.startswith("guest-shm-4k-w2-s16M-sga-read r1:") and len(failed.splitlines()) == 1,
         "the run past the spec's timeout was stopped in the guest and is the one failed run", failed)
    if not os.path.isdir(run):
        t.done()
    boots = glob.glob(os.path.join(run, "guest", "boot-*"))
    t.ok(len(boots) == 1, "one VM boot for all guest points (%d)" % len(boots))
    recs = sorted(os.path.basename(p) for p in glob.glob(os.path.join(run, "records", "*.json")))
    t.ok(recs == ["guest-anon-4k-w2-s16M-pt-footprint.r1.json", "guest-shm-4k-w2-s16M-pt-footprint.r1.json"],
         "both guest records filed under records/", recs)
    env = {}
    with open(os.path.join(boots[0], "vm-env.txt")) as f:
        for line in f:
            k, _, v = line.strip().partition("=")
            env[k] = v
    kernels, platforms = set(), set()
    for p in glob.glob(os.path.join(run, "records", "*.json")):
        with open(p) as f:
            environment = json.load(f)["environment"]
        kernels.add(environment["kernel"])
        platforms.add(environment.get("platform"))
    t.ok(kernels == {env.get("kernel")} and env.get("kernel") != os.uname().release,
         "records come from the guest kernel (%s), not the host's" % env.get("kernel"), kernels)
    t.ok(platforms == {"guest"}, "records say platform guest", platforms)
    with open(os.path.join(boots[0], "status")) as f:
        status = f.read().split()
    t.ok(status.count("0") == 2, "guest status: two runs, exit 0", status)
    t.ok(os.path.getsize(os.path.join(run, "summary.txt")) > 0 and
         "guest-shm-4k-w2-s16M-pt-footprint" in open(os.path.join(run, "summary.txt")).read(),
         "summary lists the guest points")

    # 3. A spec's clock key: the boot runs kernel/vm/run.sh --clock
    # instructions (1 vCPU), the guest says so, the manifest keeps it.
    text = (SPEC % "clock").replace("platform = host, guest", "platform = guest").replace(
        "backends = shm, anon", "backends = shm") + "clock = instructions\n"
    spec = tap.write_spec(d, "clock", text=text)
    r = tap.run([os.path.join(tap.ROOT, "bench", "sweep"), spec, "--results", os.path.join(d, "r3")])
    run = r.stdout.strip()
    t.ok(r.returncode == 0 and os.path.isdir(run), "guest sweep with clock = instructions (exit %d)" % r.returncode,
         r.stderr)
    if os.path.isdir(run):
        env = {}
        with open(os.path.join(run, "guest", "boot-1", "vm-env.txt")) as f:
            for line in f:
                k, _, v = line.strip().partition("=")
                env[k] = v
        with open(os.path.join(run, "manifest.json")) as f:
            clock = json.load(f).get("clock")
        t.ok(env.get("clock") == "guest-instructions" and env.get("cpus") == "1" and clock == "instructions",
             "clock = instructions: the guest ran with guest-instructions on 1 vCPU, the manifest says instructions",
             (env.get("clock"), env.get("cpus"), clock))
finally:
    tap.cleanup(d)
t.done()
