#!/bin/sh
# Database workloads: real runs through build/mshare-bench (see workloads_test.py).
cd "$(dirname "$0")/../.." || exit 2
PYTHONPATH=tests/lib exec python3 -B tests/workloads/workloads_test.py "$@"
