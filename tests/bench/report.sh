#!/bin/sh
# bench/report: the page of a small run (reference records, a hostile host
# name, spec description and failure reason) is built atomically and
# deterministically, and loaded from file:// in headless Chromium over the
# DevTools protocol: every figure loads, the headline equals bench/headline,
# a table cell equals its record, the hostile strings stay text, nothing
# but file:// is requested, no console error; screenshot in
# build/tests/bench/report-screenshot.png. Skips the browser checks, saying
# why, only when Chromium cannot run.
PYTHONPATH="$(dirname "$0")/../lib" exec python3 -B "$(dirname "$0")/report_test.py"
