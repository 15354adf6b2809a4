#!/bin/sh
# bench/headline: the sentence make bench ends with is computed from the
# records (the reference head-to-head, then the same records altered), and
# a run without the guest comparison gets no headline, exit 1, with why.
PYTHONPATH="$(dirname "$0")/../lib" exec python3 -B "$(dirname "$0")/headline_test.py"
