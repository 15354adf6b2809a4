#!/bin/sh
# plan --pid/--shmid/--file on an Oracle-like process tree (real processes; see oracle_tree_test.py).
PYTHONPATH="$(dirname "$0")/../lib" exec python3 -B "$(dirname "$0")/oracle_tree_test.py"
