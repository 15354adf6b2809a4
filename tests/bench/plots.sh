#!/bin/sh
# plots/plot-run on a small real run: the figures come out as non-empty PNG
# and SVG files, drawn from data tables with one row per worker count.
PYTHONPATH="$(dirname "$0")/../lib" exec python3 -B "$(dirname "$0")/plots_test.py"
