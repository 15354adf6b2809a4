#!/bin/sh
# Every front end (run, plan, sweep, compare, side-by-side) fed the bad-input
# corpus of tests/bad-inputs/: one clear line naming the bad value, non-zero
# exit, nothing written, no process left. Ends with the count tried/handled.
PYTHONPATH="$(dirname "$0")/../lib" exec python3 -B "$(dirname "$0")/bad_inputs_test.py"
