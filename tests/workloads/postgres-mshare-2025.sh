#!/bin/sh
# test-timeout: 2400
# tests/workloads/postgres-mshare.sh for the 2025 design (issue 27): the
# same checks with workloads/postgres/pg-mshare.so in PGMSHARE_DESIGN=2025
# (mode mshare-2025-dax): on the host without msharefs PostgreSQL refuses
# to start with the library's message; in the guest, on the mshare-2025 v3
# kernel (build/kernel-2025/bzImage), the library creates an msharefs
# region file, sizes it, maps the DAX backing file into it with
# MSHAREFS_CREATE_MAPPING and maps the region in the postmaster, whose
# backends inherit it over fork: pg-mshare-check, 20 readers whose region
# page tables stay under 1% of 4k's, a row across connections, nothing
# left after shutdown, crash restart and postmaster SIGKILL.
# Skipped, saying why, when the mshare-2025 kernel is not in the kernel
# cache (the mshare-2025 tier: make test sets MSHARE_2025_TESTS=1 then).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
. tests/kernel/lib/guest.sh
tier_2025_require "PostgreSQL on the 2025 design (mshare-2025-dax)"
img=${KERNEL_TEST_IMAGE:-build/kernel-2025/bzImage}
if [ ! -f "$img" ]; then
	not_ok "PostgreSQL on the 2025 design: MSHARE_2025_TESTS=1 but no image at $img (make kernel-2025 copies it from the kernel cache)"
	finish
fi
PG_MSHARE_TEST_MODE=mshare-2025-dax KERNEL_TEST_IMAGE=$img \
	exec sh tests/workloads/postgres-mshare.sh
