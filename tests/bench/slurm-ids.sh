#!/bin/sh
# Where a run's records say they ran, as --status and the report show it:
# environment.slurm's node per record, a record outside Slurm named as such
# (a guest's own host name, "(none)", is no node), the report's Slurm row.
# A tiny real host sweep with its records' Slurm ids rewritten; no cluster.
PYTHONPATH="$(dirname "$0")/../lib" exec python3 -B "$(dirname "$0")/slurm_ids_test.py"
