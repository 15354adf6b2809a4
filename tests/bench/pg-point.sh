#!/bin/sh
# PostgreSQL points through bench/sweep (issue 45) without a guest: specs
# checked, a stand-in VM runner plays the guest, records from its output
# in the harness's frame, --resume, --status, the tools on the run, and
# the runs bench/pg-sweep left read as they are.
PYTHONPATH="$(dirname "$0")/../lib" exec python3 -B "$(dirname "$0")/pg_point_test.py"
