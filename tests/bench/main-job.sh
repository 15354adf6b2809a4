#!/bin/sh
# bench/main-job (make bench) on a tiny spec with HOST_ONLY=1: the host
# points run, the guest part is named loudly as not run at the end, exit 0;
# a bad HOST_ONLY value is refused.
PYTHONPATH="$(dirname "$0")/../lib" exec python3 -B "$(dirname "$0")/main_job_test.py"
