#!/bin/sh
# Sweep spec parser: good specs expand as documented, bad ones are refused
# with file:line and what is wrong, and the runner starts nothing for them.
PYTHONPATH="$(dirname "$0")/../lib" exec python3 -B "$(dirname "$0")/spec_test.py"
