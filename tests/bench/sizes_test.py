"""One size grammar: tests/corpus/sizes.txt held against bench/lib/sweepspec.py
and against the binary (`plan --private` gives the bytes back; `run --check
--size` accepts exactly the non-zero multiples of 4 KiB that fit). The C
parser itself is held to the same file by build/tests/harness/test-parse."""
import json
import os

import tap
import sweepspec

t = tap.Tap()
cases = []
with open(os.path.join(tap.ROOT, "tests", "corpus", "sizes.txt")) as f:
    for line in f:
        line = line.rstrip("\n")
        if line.startswith("#") or "\t" not in line:
            continue
        text, want = line.rsplit("\t", 1)
        cases.append(("" if text == '""' else text, None if want == "bad" else int(want)))
t.ok(len(cases) > 40, "the corpus has %d cases" % len(cases))

wrong = ["%r: corpus %s, sweepspec %s" % (x, w, sweepspec.parse_size(x)) for x, w in cases
         if sweepspec.parse_size(x) != w]
t.ok(not wrong, "sweepspec.parse_size agrees with the corpus on %d of %d cases" % (len(cases) - len(wrong), len(cases)),
     "\n".join(wrong))

why = None if os.access(tap.HARNESS, os.X_OK) else "harness not built (build/mshare-bench)"
if why:
    t.skip("the binary agrees with the corpus", why)
else:
    wrong = []
    for text, want in cases:
        r = tap.run([tap.HARNESS, "plan", "--sga", "4K", "--processes", "1", "--ram", "1T", "--mode", "4k",
                     "--json", "--private=" + text])
        got = None
        if r.returncode == 0:
            got = json.loads(r.stdout)["inputs"]["private_bytes_per_process"]
        elif r.returncode != 2 or text not in r.stderr:
            got = "exit %d: %s" % (r.returncode, r.stderr.strip())
        if got != want:
            wrong.append("plan --private=%r: corpus %s, binary %s" % (text, want, got))
    t.ok(not wrong, "plan --private reads every corpus size as the corpus says", "\n".join(wrong))

    wrong = []
    for text, want in cases:
        r = tap.run([tap.HARNESS, "run", "--check", "--backend", "shm", "--workers", "1", "--workload", "touch",
                     "--size=" + text])
        accept = want is not None and want > 0 and want % 4096 == 0 and want <= (1 << 47) - (2 << 40)
        if (r.returncode == 0) != accept or (not accept and (r.returncode != 2 or text not in r.stderr)):
            wrong.append("run --check --size=%r: corpus %s, exit %d %s" % (text, want, r.returncode, r.stderr.strip()))
    t.ok(not wrong, "run --check --size accepts exactly the corpus sizes a run can take, naming the others",
         "\n".join(wrong))

    wrong = []
    for text, want in cases:
        r = tap.run([tap.HARNESS, "plan", "--processes", "1", "--ram", "1T", "--mode", "4k", "--sga=" + text])
        accept = want is not None and want > 0 and want <= (1 << 47) - (2 << 40)
        if (r.returncode == 0) != accept:
            wrong.append("plan --sga=%r: corpus %s, exit %d %s" % (text, want, r.returncode, r.stderr.strip()))
    t.ok(not wrong, "plan --sga and run --size take the same sizes (0x1000 in both)", "\n".join(wrong))
t.done()
