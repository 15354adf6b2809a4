#!/bin/sh
# How much of the segment each PostgreSQL backend maps (issue 45) without a
# guest: pg-touch's counts on a host process with known pages, the
# --touch option's checks, and the record's touch figures from a recorded
# guest run (tests/bench/pg-touch-fixture: 10 backends, 64 MB, snapshots
# at 0, 5 and 10 guest s). Seconds.
PYTHONPATH="$(dirname "$0")/../lib" exec python3 -B "$(dirname "$0")/pg_touch_test.py"
