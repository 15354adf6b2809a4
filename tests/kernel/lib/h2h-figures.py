"""h2h-figures.py OUT LABEL SHARED BASELINE: the check of a short guest
head-to-head in OUT (a kernel/vm/run.sh --out directory): the records
OUT/SHARED.json (a backend that shares page tables) and OUT/BASELINE.json
(the same run without sharing), OUT/verify.json and OUT/leftover.txt (the
msharefs files left). Prints one line "LABEL: ..." with the figures; exits
0 when the shared backend's region page tables per worker are below the
baseline's (which is > 0), verify checked pages without a mismatch and no
msharefs file was left, else 1. Used by tests/kernel/debug-kernel.sh and
tests/kernel-2025/debug.sh."""
import json
import os
import sys

out, label, shared, baseline = sys.argv[1:5]


def rec(name):
    with open(os.path.join(out, name + ".json")) as f:
        return json.load(f)


m = rec(shared)["results"]["pagetables"]["region_bytes_per_worker"]
b = rec(baseline)["results"]["pagetables"]["region_bytes_per_worker"]
c = rec("verify")["results"]["workload"]["counters"]
with open(os.path.join(out, "leftover.txt")) as f:
    left = f.read().split()
ok = b > 0 and m < b and c["pages_checked"] > 0 and c["mismatches"] == 0 and not left
print("%s: %s region page tables %d B/worker < %s %d B; verify %d pages, %d mismatches; msharefs left %s"
      % (label, shared, m, baseline, b, c["pages_checked"], c["mismatches"], left))
sys.exit(0 if ok else 1)
