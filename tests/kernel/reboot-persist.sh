#!/bin/sh
# test-timeout: 1800
# Data written through an mshare region over a DAX file outlives a reboot
# (issue 32 item 3). Two boots of the guest on one pmem image
# (kernel/vm/run.sh --pmem-image, kept between them): the first makes the
# ext4 on the fsdax namespace and runs `persist-guest write` (a second
# process writes a pattern into 8 MiB of /mnt/pmem/persist.dat through the
# region's shared page tables; the region goes, the file is fsync'ed) and
# powers off; the second mounts the ext4 it finds, without mkfs, and
# `persist-guest check` reads the file with read(2): every page must hold
# its pattern. A control: the same check on a fresh image finds no file.
# Runs on the v1 kernel (build/kernel/bzImage, or KERNEL_TEST_IMAGE; the
# 2025 tier sets it to the v3 kernel). About 2 min under TCG on a quiet
# machine (three boots). Fails when the guest cannot run; skips only with
# MSHARE_SKIP_GUEST=1.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
. tests/kernel/lib/guest.sh
guest_require "reboot persistence through an mshare region"
guest_setup reboot-persist
image=${KERNEL_TEST_IMAGE:-build/kernel/bzImage}
img=$out/pmem.img
t0=$(date +%s)
boot() { # NAME CMD
	kernel/vm/run.sh --no-build --kernel "$image" --mem 1G --pmem 1 --align 4K --cpus 2 --timeout 600 \
		--pmem-image "$img" --fail-on-warning --keep-out --out "$out/$1" -- sh -c "$2" >"$out/$1.log" 2>&1 &
	progress_name="reboot-persist ($1)"
	guest_wait $! guest_progress
}
echo "# reboot-persist: kernel $image; boot 1 writes (log $out/write.log)"
boot write 'persist-guest write /mnt/pmem/persist.dat >/out/write.txt 2>&1; echo $? >/out/write.rc'
guest_ran $? "boot 1 ran ($(($(date +%s) - t0)) s)" "$out/write.log"
w=$(cat "$out/write/write.txt" 2>/dev/null)
echo "$w" | sed 's/^/# boot 1: /'
check "boot 1: persist-guest write exits 0 and says so: $(echo "$w" | grep '^result')" \
	ev '[ "$(cat "$out/write/write.rc" 2>/dev/null)" = 0 ] && echo "$w" | grep -q "^result written 2048 pages"'
check "boot 1 named the kernel's design" ev 'echo "$w" | grep -q "^design mshare-"'
check "boot 1 made the ext4 (no earlier one on a new image)" grep -q 'no ext4 on it yet, making one' "$out/write.log"
echo "# reboot-persist: boot 2 reads the file back (log $out/check.log)"
boot check 'persist-guest check /mnt/pmem/persist.dat >/out/check.txt 2>&1; echo $? >/out/check.rc'
guest_ran $? "boot 2 ran" "$out/check.log"
c=$(cat "$out/check/check.txt" 2>/dev/null)
check "boot 2 mounted the ext4 of boot 1 instead of making one" grep -q 'ext4 of an earlier boot mounted' "$out/check.log"
check "boot 2: every page of the file holds the pattern written through the region: $c" \
	ev '[ "$(cat "$out/check/check.rc" 2>/dev/null)" = 0 ] && [ "$c" = "result intact 2048 pages" ]'
# The control: on a fresh image the same check must fail (the check can fail).
rm -f "$img"
boot control 'persist-guest check /mnt/pmem/persist.dat >/out/check.txt 2>&1; echo $? >/out/check.rc'
guest_ran $? "control boot ran (a fresh image)" "$out/control.log"
check "control: on a fresh image the check fails: $(cat "$out/control/check.txt" 2>/dev/null)" \
	ev '[ "$(cat "$out/control/check.rc" 2>/dev/null)" = 1 ]'
rm -f "$img"
echo "# reboot-persist: $(($(date +%s) - t0)) s in all"
finish
