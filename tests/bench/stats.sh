#!/bin/sh
# Welch's t-test and the t-distribution CDF (regularized incomplete beta)
# against published table values.
PYTHONPATH="$(dirname "$0")/../lib" exec python3 -B "$(dirname "$0")/stats_test.py"
