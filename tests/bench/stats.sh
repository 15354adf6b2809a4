#!/bin/sh
# Welch's t-test and the t-distribution CDF (regularized incomplete beta)
# against published table values.
exec python3 -B "$(dirname "$0")/stats_test.py"
