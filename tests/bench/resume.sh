#!/bin/sh
# A real tiny sweep killed mid-way (SIGKILL to the runner) and resumed: no
# run is done twice, every run ends up with its record, nothing overwritten.
PYTHONPATH="$(dirname "$0")/../lib" exec python3 -B "$(dirname "$0")/resume_test.py"
