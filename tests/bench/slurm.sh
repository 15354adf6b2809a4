#!/bin/sh
# test-timeout: 900
# bench/sweep --slurm against a real one-node Slurm cluster that the test
# starts (munge, slurmctld, slurmd in a temp dir, own ports and key) and
# stops: local and Slurm runs of one spec compared, a task killed and
# resumed, --status, refusals. Skipped, saying why, where Slurm is not
# installed (scripts/deps.sh --tests installs it).
PYTHONPATH="$(dirname "$0")/../lib" exec python3 -B "$(dirname "$0")/slurm_test.py"
