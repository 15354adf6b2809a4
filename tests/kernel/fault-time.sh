#!/bin/sh
# test-timeout: 900
# The guest kernel's own fault time (harness/ktrace.c, issue 31 item 3):
# boots the patched kernel and runs /guest/tests/harness/ktrace-guest
# (tests/harness/ktrace-guest.c), which arms kprobe events on
# handle_mm_fault with hist triggers over a mapping it makes, touches its
# pages and checks that the kernel's fault count equals the rise of its own
# minflt+majflt (getrusage) exactly for shared anonymous memory, a 4 KiB DAX
# file, hugetlbfs 2 MiB pages and an mshare region (donor and consumer);
# that faults outside the range are not counted; that tracefs holds none of
# its events or instance afterwards (and is unmounted again when it was not
# mounted before); and prints the probes' cost per fault (first-touch median
# with and without probes) as a TAP comment. Its TAP lines are relayed here.
# Fails when the guest cannot run; skips only with MSHARE_SKIP_GUEST=1.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
. tests/kernel/lib/guest.sh
guest_require "kernel fault time (ktrace)"
guest_setup fault-time
echo "# fault-time: booting the patched kernel under QEMU (TCG); about a minute (log $out.vm.log)"
# 4K fsdax alignment: one fault per 4 KiB page of the DAX file.
kernel/vm/run.sh --no-build --align 4K --hugepages 16 --mem 2G --pmem 1 --timeout 600 --fail-on-warning \
	--out "$out" -- sh -c 'KTRACE_GUEST_KEEP=/out /guest/tests/harness/ktrace-guest 1024 >/out/ktrace.tap 2>&1; echo $? >/out/ktrace.rc' \
	>"$out.vm.log" 2>&1 &
guest_wait $!
guest_ran $? "the guest booted, ran ktrace-guest and logged no kernel warning" "$out.vm.log"
if ! guest_relay "ktrace" "$out/ktrace.tap"; then
	not_ok "ktrace-guest printed no TAP line (output $out/ktrace.tap)"
	sed 's/^/# /' "$out/ktrace.tap" 2>/dev/null | tail -20
fi
grep '^#' "$out/ktrace.tap" 2>/dev/null
check "ktrace-guest exited 0 (exit $(cat "$out/ktrace.rc" 2>/dev/null))" test "$(cat "$out/ktrace.rc" 2>/dev/null)" = 0
finish
