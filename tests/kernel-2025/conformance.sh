#!/bin/sh
# test-timeout: 1800
# Conformance of the 2025 mshare API on the mshare-2025 kernel flavour
# (Linux 6.12 + kernel/patches-2025): boots build/kernel-2025/bzImage and
# runs the tests/kernel-2025/test-* binaries in the guest, through
# tests/kernel/conformance.sh (same checks: kernel log clean, no hang).
# Opt-in (make test-2025, or MSHARE_2025_TESTS=1 make test): the flavour is
# not built by the default make test. Fails when the image is missing or the
# guest cannot run; skips only with MSHARE_SKIP_GUEST=1.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1

if [ "${MSHARE_2025_TESTS:-0}" != 1 ]; then
	echo "ok 1 - mshare-2025 conformance # SKIP opt-in: make test-2025 (or MSHARE_2025_TESTS=1 make test after make kernel-2025); not in the default make test, see kernel/README.md"
	echo "1..1"
	exit 0
fi
KERNEL_TEST_IMAGE=${KERNEL_TEST_IMAGE:-build/kernel-2025/bzImage} \
KERNEL_TEST_DIR=/guest/tests/kernel-2025 \
KERNEL_TEST_OUT=${KERNEL_TEST_OUT:-build/vm/conformance-2025} \
	exec tests/kernel/conformance.sh
