#!/bin/sh
# One size grammar for run, plan and sweep specs (tests/corpus/sizes.txt).
exec python3 -B "$(dirname "$0")/sizes_test.py"
