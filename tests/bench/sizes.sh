#!/bin/sh
# One size grammar for run, plan and sweep specs (tests/corpus/sizes.txt).
PYTHONPATH="$(dirname "$0")/../lib" exec python3 -B "$(dirname "$0")/sizes_test.py"
