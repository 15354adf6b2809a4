#!/bin/sh
# bench/compare on two small real runs: every point compared, means match
# the records, a run compared with itself shows no significant change.
PYTHONPATH="$(dirname "$0")/../lib" exec python3 -B "$(dirname "$0")/compare_test.py"
