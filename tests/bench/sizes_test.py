"""One size grammar: tests/corpus/sizes.txt held against bench/lib/units.py
and against the binary (`plan --private` gives the bytes back; `run --check
--size` accepts exactly the non-zero multiples of 4 KiB that fit). The C
parser itself is held to the same file by build/tests/harness/test-parse.
One rendering of a byte count: tests/corpus/bytes.txt held against
units.format_bytes here, against the C format_bytes by test-parse, and against
what the binary prints (`plan`)."""
import json
import os

import tap
import units


def corpus(name):
    """The (LEFT, RIGHT) columns of each case line of tests/corpus/NAME."""
    with open(os.path.join(tap.ROOT, "tests", "corpus", name)) as f:
        return [tuple(line.rstrip("\n").rsplit("\t", 1)) for line in f if not line.startswith("#") and "\t" in line]


# The planner also takes a decimal with a unit (issue 43: a DBA writes
# 255.5G); run and sweep specs do not. Its answers for the corpus's decimals:
PLAN_DECIMALS = {"1.5G": 1610612736}

t = tap.Tap()
cases = [("" if text == '""' else text, None if want == "bad" else int(want)) for text, want in corpus("sizes.txt")]
t.ok(len(cases) > 40, "the corpus has %d cases" % len(cases))

wrong = ["%r: corpus %s, units %s" % (x, w, units.parse_size(x)) for x, w in cases
         if units.parse_size(x) != w]
t.ok(not wrong, "units.parse_size agrees with the corpus on %d of %d cases" % (len(cases) - len(wrong), len(cases)),
     "\n".join(wrong))

rendered = [(int(n), text) for n, text in corpus("bytes.txt")]
wrong = ["%d: corpus %r, units %r" % (n, text, units.format_bytes(n)) for n, text in rendered
         if units.format_bytes(n) != text]
t.ok(len(rendered) > 30 and not wrong, "units.format_bytes agrees with tests/corpus/bytes.txt on %d of %d cases"
     % (len(rendered) - len(wrong), len(rendered)), "\n".join(wrong))
t.ok(units.format_bytes(-1536) == "-1.5 KiB" and units.format_bytes(1536.9) == "1.5 KiB",
     "units.format_bytes keeps a difference's sign and drops a fraction as the C uint64_t does")

why = None if os.access(tap.HARNESS, os.X_OK) else "harness not built (build/mshare-bench)"
if why:
    t.skip("the binary agrees with the corpus", why)
else:
    wrong = []
    for text, want in cases:
        want = PLAN_DECIMALS.get(text, want)
        r = tap.run([tap.HARNESS, "plan", "--sga", "4K", "--processes", "1", "--ram", "1T", "--mode", "4k",
                     "--json", "--private=" + text])
        got = None
        if r.returncode == 0:
            got = json.loads(r.stdout)["inputs"]["private_bytes_per_process"]
        elif r.returncode != 2 or text not in r.stderr:
            got = "exit %d: %s" % (r.returncode, r.stderr.strip())
        if got != want:
            wrong.append("plan --private=%r: corpus %s, binary %s" % (text, want, got))
    t.ok(not wrong, "plan --private reads every corpus size as the corpus says (and 1.5G as 1.5 GiB)",
         "\n".join(wrong))

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
        want = PLAN_DECIMALS.get(text, want)
        r = tap.run([tap.HARNESS, "plan", "--processes", "1", "--ram", "1T", "--mode", "4k", "--sga=" + text])
        accept = want is not None and want > 0 and want <= (1 << 47) - (2 << 40)
        if (r.returncode == 0) != accept:
            wrong.append("plan --sga=%r: corpus %s, exit %d %s" % (text, want, r.returncode, r.stderr.strip()))
    t.ok(not wrong, "plan --sga and run --size take the same sizes (0x1000 in both), plan also 1.5G",
         "\n".join(wrong))

    wrong, seen = [], 0
    for n, text in rendered:
        r = tap.run([tap.HARNESS, "plan", "--sga", "4K", "--processes", "1", "--mode", "4k", "--ram=%d" % n])
        if r.returncode != 0:
            continue
        seen += 1
        if "  RAM %s, " % text not in r.stdout:
            wrong.append("plan --ram=%d: corpus %r, binary: %s" % (n, text, r.stdout.splitlines()[2:3]))
    t.ok(seen > 20 and not wrong, "the binary prints %d corpus byte counts as the corpus says (plan --ram)" % seen,
         "\n".join(wrong))
t.done()
