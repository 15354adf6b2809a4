#!/bin/sh
# bench/side-by-side on a small real run: one table per worker count, one
# row per backend, figures equal to the records; bad input refused, named.
PYTHONPATH="$(dirname "$0")/../lib" exec python3 -B "$(dirname "$0")/side_by_side_test.py"
