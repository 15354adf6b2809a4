#!/bin/sh
# test-timeout: 2400
# The 2025 mshare series on Linux 6.12 under the debug options
# (kernel flavour mshare-2025-debug: kernel/config/mshare-2025.config +
# kernel/config/debug.config: KASAN, lockdep, DEBUG_VM, DEBUG_VM_PGTABLE,
# SLUB debugging on every cache, DEBUG_LIST, PAGE_TABLE_CHECK, hung tasks):
#   1. the image's configuration holds every debug option
#   2. the 2025 conformance tests (tests/kernel-2025/test-*) on it, through
#      tests/kernel/conformance.sh, whose guest run uses --fail-on-warning:
#      any KASAN, lockdep, SLUB, BUG, WARNING, list-corruption, hung-task or
#      RCU-stall report in the kernel log fails it
#   3. that guest's boot log shows KASAN and lockdep active
#   4. the harness on it, --fail-on-warning: 100 workers over 64 MiB through
#      mshare-2025 (pt-footprint) and as shared anonymous 4 KiB memory, the
#      verify workload (4 workers), no msharefs file left
# make test sets MSHARE_2025_DEBUG_TESTS=1 when the kernel cache holds the
# flavour's image (it never builds it: a cold build takes about an hour here);
# make test-2025-debug builds it and sets it. With it set, fails when the
# image is missing or the guest cannot run; skips only with MSHARE_SKIP_GUEST=1.
# Without it, one skip line says why.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
. tests/kernel/lib/guest.sh

if [ "${MSHARE_2025_DEBUG_TESTS:-0}" != 1 ]; then
	skip "mshare-2025 debug kernel (KASAN, lockdep)" "its image is not in the kernel cache (make test runs this tier when it is; make test-2025-debug builds it, see kernel/README.md)"
	finish
fi
image=${KERNEL_TEST_IMAGE:-build/kernel-2025-debug/bzImage}
KERNEL_TEST_IMAGE=$image
guest_require "mshare-2025 debug kernel"
config=$(dirname "$image")/config

missing=
for opt in KASAN KASAN_GENERIC PROVE_LOCKING DEBUG_VM DEBUG_VM_PGTABLE SLUB_DEBUG_ON DEBUG_LIST \
	PAGE_TABLE_CHECK PAGE_TABLE_CHECK_ENFORCED DETECT_HUNG_TASK MSHARE; do
	grep -qx "CONFIG_$opt=y" "$config" 2>/dev/null || missing="$missing $opt"
done
if [ -z "$missing" ]; then
	ok "2025-debug: $image ($(cat "$(dirname "$image")/key" 2>/dev/null || echo 'no key')) has MSHARE, KASAN, PROVE_LOCKING, DEBUG_VM(_PGTABLE), SLUB_DEBUG_ON, DEBUG_LIST, PAGE_TABLE_CHECK(_ENFORCED), DETECT_HUNG_TASK"
else
	not_ok "2025-debug: $config lacks:$missing"
fi

mkdir -p build/vm
log=$(mktemp build/vm/conformance-2025-debug.XXXXXX.log) || exit 1
KERNEL_TEST_IMAGE=$image KERNEL_TEST_DIR=/guest/tests/kernel-2025 \
	KERNEL_TEST_VM_OPTS="--swap 256 ${KERNEL_TEST_VM_OPTS:-}" \
	KERNEL_TEST_OUT=build/vm/conformance-2025-debug TEST_TIMEOUT=2300 \
	tests/kernel/conformance.sh >"$log" 2>&1 &
guest_wait $!
rc=$?
if ! guest_relay 2025-debug "$log" || { [ "$rc" != 0 ] && ! grep -q '^not ok' "$log"; }; then
	not_ok "2025-debug: conformance tests ran and reported (status $rc, log $log)"
	tail -n 20 "$log" | sed 's/^/# /'
fi
kmsg=$(sed -n 's/^# kernel conformance: results in //p' "$log" | head -n 1)/kmsg.txt
if grep -q 'KernelAddressSanitizer initialized' "$kmsg" 2>/dev/null &&
	grep -q 'Lock dependency validator' "$kmsg" 2>/dev/null; then
	ok "2025-debug: the guest ran with KASAN and lockdep active ($kmsg)"
else
	not_ok "2025-debug: no 'KernelAddressSanitizer initialized' / 'Lock dependency validator' in $kmsg"
fi

# ---- 4. the harness on the debug kernel ----
h2h=$(mktemp -d build/vm/2025-debug-h2h.XXXXXX) || exit 1
chmod 755 "$h2h"
common="--workers 100 --size 64M --page 4k --workload pt-footprint --quiet"
kernel/vm/run.sh --no-build --kernel "$image" --timeout 900 --mem 2G --stream none --keep-out --out "$h2h" \
	--fail-on-warning -- sh -c "
mshare-bench run --backend mshare-2025 $common --out /out/mshare-2025.json &&
mshare-bench run --backend anon $common --out /out/anon-4k.json &&
mshare-bench run --backend mshare-2025 --workers 4 --size 64M --workload verify --quiet --out /out/verify.json &&
mshare-bench run --backend mshare-2025-file --path /mnt/pmem --workers 100 --size 64M --workload pt-footprint --quiet --out /out/mshare-2025-file-dax.json &&
mshare-bench run --backend mshare-2025-file --path /mnt/pmem --workers 4 --size 64M --workload verify --quiet --out /out/verify-file-dax.json &&
mshare-bench run --backend mshare-2025-file --path /mnt/pmem --workers 4 --size 64M --workload touch --quiet --out /out/touch-file-dax.json &&
ls -A /sys/fs/mshare | grep -v '^mshare_info\$' >/out/leftover.txt; true" >"$h2h/run.log" 2>&1 &
guest_wait $!
rc=$?
if [ "$rc" = 0 ]; then
	figures=$(python3 tests/kernel/lib/h2h-figures.py "$h2h" "2025-debug: harness, 100 workers over 64 MiB, kernel log clean" mshare-2025 anon-4k)
	check_status $? "${figures:-2025-debug: harness figures could not be read from $h2h}"
	# A DAX file in a region (series v3): shared tables, data verified,
	# the record naming the design version and the page size obtained
	# (from a touch run, which touches every 4 KiB page: under shared
	# page tables smaps cannot see DAX PMD mappings, and the harness tells
	# the size from the faults only when every page is touched; the
	# pt-footprint run records it as unknown).
	figures=$(python3 - "$h2h" <<'PY'
import json, os, sys
out = sys.argv[1]
rec = lambda n: json.load(open(os.path.join(out, n + ".json")))["results"]
f, a, v, t = rec("mshare-2025-file-dax"), rec("anon-4k"), rec("verify-file-dax"), rec("touch-file-dax")
m = f["pagetables"]["region_bytes_per_worker"]
b = a["pagetables"]["region_bytes_per_worker"]
c = v["workload"]["counters"]
ok = (0 < b and m < b and f["dax"] and f["design"].startswith("mshare-2025 v3")
      and t["page_size_bytes"] > 0 and c["pages_checked"] > 0 and c["mismatches"] == 0)
print("2025-debug: DAX file in a region (%s, %s): region page tables %d B/worker < anon-4k %d B; "
      "page size %d (%s); verify %d pages, %d mismatches"
      % (f["design"], f["backing"], m, b, t["page_size_bytes"], t["page_size_source"],
         c["pages_checked"], c["mismatches"]))
sys.exit(0 if ok else 1)
PY
)
	check_status $? "${figures:-2025-debug: the DAX-file records could not be read from $h2h}"
else
	not_ok "2025-debug: the harness on the debug kernel (run.sh $rc: 124 hang, 125 kernel report; $h2h)"
	grep -E '^run.sh: (FAIL|kernel)|^(BUG|WARNING|INFO|Oops|kernel BUG)|mshare-bench' "$h2h/run.log" | head -n 30 | sed 's/^/# /'
fi
finish
