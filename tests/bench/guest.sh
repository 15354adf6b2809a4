#!/bin/sh
# The guest hook: a sweep told of no kernel image skips its guest points
# with the reason; with build/kernel/bzImage, a tiny guest sweep runs in one
# VM boot and its records are filed like host records. That second part
# fails when the guest cannot run, and skips only with MSHARE_SKIP_GUEST=1.
PYTHONPATH="$(dirname "$0")/../lib" exec python3 -B "$(dirname "$0")/guest_test.py"
