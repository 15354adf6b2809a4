#!/bin/sh
# bench/pg-sweep without a guest: bad specs are refused naming the line and
# value; guest output (facts files) becomes records in the harness's schema
# with the figures computed as documented; incomplete points are not
# recorded; bench/compare, bench/side-by-side and plan --calibrate run on
# the run directory.
PYTHONPATH="$(dirname "$0")/../lib" exec python3 -B "$(dirname "$0")/pg_sweep_test.py"
