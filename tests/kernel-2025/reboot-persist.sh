#!/bin/sh
# test-timeout: 1800
# tests/kernel/reboot-persist.sh on the mshare-2025 kernel (series v3): a
# file object in an msharefs region over a DAX file, written through the
# region by a second process, read back with read(2) after a reboot. Runs
# when make test sets MSHARE_2025_TESTS=1 (the flavour's image is cached;
# see tests/kernel-2025/conformance.sh), else one skip line says why.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1

. tests/kernel/lib/guest.sh
tier_2025_require "mshare-2025 reboot persistence"
KERNEL_TEST_IMAGE=${KERNEL_TEST_IMAGE:-build/kernel-2025/bzImage} exec tests/kernel/reboot-persist.sh
