#!/bin/sh
# test-timeout: 1800
# Conformance of the 2025 mshare API on the mshare-2025 kernel flavour
# (Linux 6.12 + kernel/patches-2025): boots build/kernel-2025/bzImage and
# runs the tests/kernel-2025/test-* binaries in the guest, through
# tests/kernel/conformance.sh (same checks: kernel log clean, no hang).
# make test sets MSHARE_2025_TESTS=1 when the kernel cache holds the
# flavour's image (it never builds it: a cold build would push a cold CI run
# past its time); make test-2025 builds it and sets it. With it set, fails
# when the image is missing or the guest cannot run; skips only with
# MSHARE_SKIP_GUEST=1. Without it, one skip line says why.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1

. tests/kernel/lib/guest.sh
tier_2025_require "mshare-2025 conformance"
# --swap 256: a swap disk for test-msharefs-memcg's swap cases (the guest
# init swapon's it and mounts cgroup2 when the kernel has them).
KERNEL_TEST_IMAGE=${KERNEL_TEST_IMAGE:-build/kernel-2025/bzImage} \
KERNEL_TEST_DIR=/guest/tests/kernel-2025 \
KERNEL_TEST_VM_OPTS="--swap 256 ${KERNEL_TEST_VM_OPTS:-}" \
KERNEL_TEST_OUT=${KERNEL_TEST_OUT:-build/vm/conformance-2025} \
	exec tests/kernel/conformance.sh
