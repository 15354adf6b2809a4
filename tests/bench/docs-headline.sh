#!/bin/sh
# What the docs show is what the code prints (issue 46 item 5): the sample
# headline in README.md and docs/headline.md is, line for line, the output
# of bench/headline on the committed reference run of the default sweep
# that each names (a line "<!-- headline: results/RUN -->" before the
# block). Fails when the headline code, the run or the docs change without
# the others.
PYTHONPATH="$(dirname "$0")/../lib" exec python3 -B - "$@" <<'PY'
import os
import re
import subprocess

import tap

t = tap.Tap()
MARK = re.compile(r"^<!-- headline: (results/[^ ]+) -->$")


def blocks(path):
    """(run, [lines]) for every marked block: the indented lines after the
    marker (4 spaces taken off), up to the first line that is not."""
    lines = open(os.path.join(tap.ROOT, path)).read().splitlines()
    out = []
    for i, line in enumerate(lines):
        m = MARK.match(line)
        if not m:
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        got = []
        while j < len(lines) and lines[j].startswith("    "):
            got.append(lines[j][4:])
            j += 1
        out.append((m.group(1), got))
    return out


for doc in ("README.md", "docs/headline.md"):
    found = blocks(doc)
    t.ok(len(found) == 1, "%s has one marked sample headline (%d)" % (doc, len(found)))
    for run, shown in found:
        manifest = os.path.join(tap.ROOT, run, "manifest.json")
        ok = os.path.isfile(manifest)
        t.ok(ok and os.path.basename(run).startswith("default-"),
             "%s: its sample names a committed run of the default sweep (%s)" % (doc, run))
        if not ok:
            continue
        r = subprocess.run([os.path.join(tap.ROOT, "bench", "headline"), os.path.join(tap.ROOT, run)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        printed = ["==== HEADLINE (this run, measured in the guest) ===="] + r.stdout.splitlines()
        diff = [(a, b) for a, b in zip(shown, printed) if a != b][:2]
        t.ok(r.returncode == 0 and shown == printed,
             "%s: the sample is exactly what bench/headline prints for %s (%d lines shown, %d printed; first "
             "difference: %s)" % (doc, run, len(shown), len(printed), diff))
        spec = open(os.path.join(tap.ROOT, "bench", "sweeps", "default.sweep")).read()
        import json
        text = json.load(open(manifest)).get("spec_text", "")
        t.ok(text == spec, "%s: %s was made by today's bench/sweeps/default.sweep" % (doc, run))
t.done()
PY
