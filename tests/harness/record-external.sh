#!/bin/sh
# `mshare-bench record`: the harness's writer for the record of a point it
# did not run itself (a PostgreSQL point): the frame printed where the point
# ran and the body of config and results make a record of the harness's
# schema, whose config has the keys of a run's; refusals name the file and
# key; never over an existing record; nothing half-written.
PYTHONPATH="$(dirname "$0")/../lib" exec python3 -B "$(dirname "$0")/record_external_test.py"
