#!/bin/sh
# The dba workload of bench/pg-sweep (issue 27) without a guest: spec
# parsing and validation, the first-pass faults and the VmPTE split on a
# recorded fixture (tests/bench/pg-dba-fixture), the record, and the labels
# of bench/pg-dba-project. Seconds; the preset itself is never run here.
PYTHONPATH="$(dirname "$0")/../lib" exec python3 -B "$(dirname "$0")/pg_dba_test.py"
