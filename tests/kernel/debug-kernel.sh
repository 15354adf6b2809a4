#!/bin/sh
# test-timeout: 3600
# The debug kernel flavour (kernel/config/debug.config: KASAN, lockdep,
# DEBUG_VM, DEBUG_VM_PGTABLE, SLUB debugging on every cache, DEBUG_LIST,
# PAGE_TABLE_CHECK, hung-task detection) under the project's kernel tests.
# Every guest run uses kernel/vm/run.sh --fail-on-warning, so any KASAN,
# lockdep, SLUB, BUG, WARNING, list-corruption, hung-task or RCU-stall report
# in the kernel log fails the step that produced it.
#
#   1. the image: build/kernel-debug/bzImage (make test builds it or copies it
#      from the cache first; this test does the same if it is missing) and its
#      configuration holds every debug option
#   2. the detectors are live: the boot log shows KASAN and lockdep; a real
#      hung task (a write to a frozen ext4) is reported by the kernel and fails
#      a --fail-on-warning run (125); a real crash (sysrq c) fails a run (125)
#   3. the conformance tests (tests/kernel/conformance.sh on this image; the
#      page-table comparison with 20 sharers of 256 MiB instead of 100 of
#      1 GiB: under KASAN and lockdep in TCG the full size takes several times
#      its 3 minutes; DEBUG_KT_ENV overrides, e.g. DEBUG_KT_ENV=' ' for full size)
#   4. the syscall fuzzer, fixed seed: fuzz-mshare --seed $FUZZ_SEED (1)
#      --seconds $FUZZ_SECONDS (120) [--avoid $FUZZ_AVOID] (see below)
#   5. a short head-to-head: 10 workers over 64 MiB through mshare and as
#      MAP_SHARED on DAX with 4 KiB pages, and the verify workload
# Results: build/vm/debug-*.XXXXXX/ (console.log, kmsg.txt, records).
# DEBUG_KERNEL_IMAGE=FILE boots FILE instead (its config: FILE's directory/config),
# without building: for a hand-built image.
# Part of the default `make test`. Fails when the guest cannot run; skips only
# with MSHARE_SKIP_GUEST=1 or MSHARE_SKIP_DEBUG=1 (the opt-out of this tier).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1

. tests/kernel/lib/guest.sh

# Part of the default `make test`; MSHARE_SKIP_DEBUG=1 is the explicit
# opt-out (tests/README.md: what a cold build of the debug flavour costs).
if [ "${MSHARE_SKIP_DEBUG:-0}" = 1 ]; then
	skip "debug kernel tier" "MSHARE_SKIP_DEBUG=1 (make test-debug runs it)"
	finish
fi
guest_require "debug kernel"

fuzz_seconds=${FUZZ_SECONDS:-120}
fuzz_seed=${FUZZ_SEED:-1}
# FUZZ_AVOID leaves out set-ups that hit known issue-14 bugs while their fixes
# are not on main (fuzz-mshare --help): private (item 1), mbind (item 2),
# readonly (item 6).  Patches 0015-0026 fixed all three: nothing is left out.
fuzz_avoid=${FUZZ_AVOID:-}
case "$fuzz_seconds$fuzz_seed" in *[!0-9]*|"") bail "FUZZ_SECONDS='$fuzz_seconds' FUZZ_SEED='$fuzz_seed' must be integers" ;; esac

mkdir -p build/vm
image=${DEBUG_KERNEL_IMAGE:-build/kernel-debug/bzImage}
config=$(dirname "$image")/config

# ---- 1. the image ----
blog=$(mktemp build/vm/debug-kernel-build.XXXXXX.log) || exit 1
if [ -n "${DEBUG_KERNEL_IMAGE:-}" ] && [ -f "$image" ]; then
	ok "debug kernel image $image (DEBUG_KERNEL_IMAGE, not built here)"
	rm -f "$blog"
elif kernel/build.sh --debug >"$blog" 2>&1 && [ -f "$image" ]; then
	ok "debug kernel image $image ($(sed -n 's/^build_seconds //p' build/kernel-debug/info) s to build, key $(cat build/kernel-debug/key))"
	rm -f "$blog"
else
	not_ok "debug kernel image: kernel/build.sh --debug failed (log $blog)"
	tail -n 20 "$blog" | sed 's/^/# /'
	finish
fi
missing=
for opt in KASAN KASAN_GENERIC PROVE_LOCKING DEBUG_VM DEBUG_VM_PGTABLE SLUB_DEBUG_ON DEBUG_LIST \
	PAGE_TABLE_CHECK PAGE_TABLE_CHECK_ENFORCED DETECT_HUNG_TASK MAGIC_SYSRQ; do
	grep -qx "CONFIG_$opt=y" "$config" || missing="$missing $opt"
done
if [ -z "$missing" ]; then
	ok "debug kernel config has KASAN, PROVE_LOCKING, DEBUG_VM(_PGTABLE), SLUB_DEBUG_ON, DEBUG_LIST, PAGE_TABLE_CHECK(_ENFORCED), DETECT_HUNG_TASK ($(sed -n 's/^CONFIG_DEFAULT_HUNG_TASK_TIMEOUT=//p' "$config") s)"
else
	not_ok "debug kernel config lacks:$missing"
fi

# vm OUTVAR BUDGET_SECONDS RUN.SH-ARGS...: one guest run on the debug image;
# sets OUTVAR to its results directory and returns run.sh's status.  run.sh
# runs in the background so that a TERM from the test runner stops QEMU.
vm() {
	_var=$1 _budget=$2
	shift 2
	_out=$(mktemp -d "build/vm/debug-$_var.XXXXXX") || return 126
	chmod 755 "$_out"
	eval "$_var=\$_out"
	kernel/vm/run.sh --no-build --kernel "$image" --timeout "$_budget" --stream none \
		--keep-out --out "$_out" "$@" >"$_out/run.log" 2>&1 &
	guest_wait $!
}
show_failure() {	# show_failure DIR: run.sh's verdict, as TAP comments
	grep -E '^run.sh: (FAIL|kernel)|^(BUG|WARNING|INFO|Oops|kernel BUG)' "$1/run.log" | head -n 30 | sed 's/^/# /'
}

if ! make -s --no-print-directory guest-tests initramfs >build/vm/debug-kernel-make.log 2>&1; then
	not_ok "building the guest programs and the initramfs (build/vm/debug-kernel-make.log)"
	sed 's/^/# /' build/vm/debug-kernel-make.log | tail -n 20
	finish
fi

# ---- 2. the detectors are live ----
# Writers to a frozen filesystem wait in D state: with the hung-task timeout
# at 5 s, khungtaskd reports the writer; the guest then thaws and exits 0.
vm hung 600 --mem 2G --fail-on-warning -- '
echo 5 >/proc/sys/kernel/hung_task_timeout_secs
fsfreeze --freeze /mnt/pmem || exit 3
(echo data >/mnt/pmem/frozen-write) &
sleep 20
fsfreeze --unfreeze /mnt/pmem
wait'
rc=$?
if grep -q 'KernelAddressSanitizer initialized' "$hung/kmsg.txt" 2>/dev/null &&
	grep -q 'Lock dependency validator' "$hung/kmsg.txt" 2>/dev/null; then
	ok "debug kernel boots with KASAN and lockdep active (boot-to-shell $(sed -n 's/^boot_to_shell_s=//p' "$hung/vm-timing.txt") s)"
else
	not_ok "debug kernel boots with KASAN and lockdep active (no 'KernelAddressSanitizer initialized' / 'Lock dependency validator' in $hung/kmsg.txt; run.sh $rc)"
fi
if [ "$rc" = 125 ] && grep -q 'blocked for more than 5 seconds' "$hung/kmsg.txt" &&
	kernel/vm/run.sh --check-logs "$hung" 2>/dev/null; then
	ok "a real hung task (write to a frozen ext4) is reported and fails a --fail-on-warning run (125), not a run without it"
else
	not_ok "a real hung task (write to a frozen ext4) is reported and fails a --fail-on-warning run (run.sh $rc, $hung)"
	show_failure "$hung"
fi
# 600 s: under heavy host load the debug guest took 187 s to boot (kernel/README.md)
vm crash 600 --mem 1G --no-pmem -- 'echo c >/proc/sysrq-trigger || exit 3; sleep 600'
rc=$?
if [ "$rc" = 125 ] && grep -q 'sysrq triggered crash' "$crash/console.log"; then
	ok "a real kernel crash (echo c >/proc/sysrq-trigger) fails the run (125)"
else
	not_ok "a real kernel crash (echo c >/proc/sysrq-trigger) fails the run (run.sh $rc, $crash)"
	show_failure "$crash"
fi

# ---- 3. conformance tests on the debug kernel ----
conf_log=$(mktemp build/vm/debug-conformance.XXXXXX.log) || exit 1
KERNEL_TEST_IMAGE=$image KERNEL_TEST_OUT=build/vm/debug-conformance TEST_TIMEOUT=1500 \
	KERNEL_TEST_GUEST_ENV=${DEBUG_KT_ENV:-KT_SHARERS=20 KT_SHARED_MB=256} \
	tests/kernel/conformance.sh >"$conf_log" 2>&1 &
guest_wait $!
conf_rc=$?
guest_relay debug "$conf_log"
relayed=$?
if [ "$relayed" != 0 ] || { [ "$conf_rc" != 0 ] && ! grep -q '^not ok' "$conf_log"; }; then
	not_ok "debug: conformance tests ran and reported (status $conf_rc, log $conf_log)"
fi

# ---- 4. the fuzzer, fixed seed ----
vm fuzz $((fuzz_seconds + 600)) --mem 2G --fail-on-warning --crash-grace 60 -- \
	fuzz-mshare --seed "$fuzz_seed" --seconds "$fuzz_seconds" --procs 4 ${fuzz_avoid:+--avoid "$fuzz_avoid"}
rc=$?
calls=$(sed -n 's/^fuzz-mshare: \([0-9]*\) calls in .*/\1/p' "$fuzz/console.log" | tr -d '\r' | tail -n 1)
tr -d '\r' <"$fuzz/console.log" | grep -E '^fuzz-mshare: ( +[a-z_]+ +[0-9]+:|worker ends|[0-9]+ msharefs|FAIL)' |
	sed 's/^/# /'
if [ "$rc" = 0 ] && [ -n "$calls" ] && [ "$calls" -gt 0 ]; then
	ok "fuzz-mshare --seed $fuzz_seed --seconds $fuzz_seconds${fuzz_avoid:+ --avoid $fuzz_avoid}: $calls calls, kernel log clean ($fuzz)"
else
	not_ok "fuzz-mshare --seed $fuzz_seed --seconds $fuzz_seconds${fuzz_avoid:+ --avoid $fuzz_avoid}: ${calls:-no} calls, run.sh $rc (124 hang, 125 kernel report, 1 a worker stalled; $fuzz)"
	show_failure "$fuzz"
fi

# ---- 5. a short head-to-head ----
common="--workers 10 --size 64M --page 4k --workload pt-footprint --quiet"
vm h2h 900 --mem 2G --align 4K --fail-on-warning -- sh -c "
mshare-bench run --backend mshare $common --out /out/mshare.json &&
mshare-bench run --backend file --path /mnt/pmem $common --out /out/dax4k.json &&
mshare-bench run --backend mshare --workers 4 --size 64M --workload verify --quiet --out /out/verify.json &&
ls -A /sys/fs/mshare >/out/leftover.txt"
rc=$?
if [ "$rc" = 0 ]; then
	ok "debug: short head-to-head (mshare and MAP_SHARED DAX 4K, 10 workers; verify, 4 workers) runs with a clean kernel log"
	figures=$(python3 tests/kernel/lib/h2h-figures.py "$h2h" "debug: head-to-head figures" mshare dax4k)
	check_status $? "${figures:-debug: head-to-head figures could not be read from $h2h}"
else
	not_ok "debug: short head-to-head runs with a clean kernel log (run.sh $rc, $h2h)"
	show_failure "$h2h"
fi
finish
