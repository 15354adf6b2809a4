#!/bin/sh
# test-timeout: 1200
# kernel/vm/run.sh --clock: what the guest's times are in.
# Without booting: --clock instructions (QEMU -icount, 1 vCPU) refuses
# --cpus 2 and --numa 2, naming both values, before anything is created;
# a bad --clock is refused; --clock kvm without a usable KVM device (the
# probe is pointed at a missing one with MSHARE_KVM_DEV) is an error naming
# the device, and so is one that exists but cannot run a test guest.
# With the kernel: a --clock instructions boot and a --clock auto boot that
# falls back to it (MSHARE_KVM_DEV missing; it says so) both write
# guest-instructions to /etc/mshare-bench-clock and vm-env.txt, 1 vCPU, and
# a fixed loop in the guest (tests/kernel/lib/tsc-loop.c, built static into
# the results directory) reads the same TSC count, i.e. the same number of
# guest instructions, in both boots (the minimum over its repeats: a repeat
# that a timer interrupt landed in counts the handler too, and where the
# interrupts land differs from boot to boot); a plain boot (no --clock) says
# guest-tcg-ns with 2 vCPUs. The TSC frequency the guests found and the ns
# readings (which may differ by 1 ns: the clocksource's fixed-point
# conversion) are printed as comments, not asserted.
# The guest checks fail when the guest cannot run; they skip only with
# MSHARE_SKIP_GUEST=1.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
run=kernel/vm/run.sh
. tests/kernel/lib/guest.sh

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vm-clock-test.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
missing_dev=$tmp/no-such-kvm

# refused VALUE... -- OPTION...: run.sh exits 126 before creating --out,
# naming every VALUE on stderr.
refused() {
	values=
	while [ "$1" != -- ]; do values="$values
$1"; shift; done
	shift
	rm -rf "$tmp/out"
	err=$(MSHARE_KVM_DEV=$missing_dev "$run" --no-build --kernel "$0" --out "$tmp/out" "$@" -- true 2>&1 >/dev/null)
	rc=$?
	[ "$rc" = 126 ] || { echo "# run.sh exited $rc, want 126: $err"; return 1; }
	[ ! -e "$tmp/out" ] || { echo "# run.sh created --out $tmp/out: it went on towards a boot"; return 1; }
	printf '%s\n' "$values" | while IFS= read -r v; do
		[ -z "$v" ] && continue
		printf '%s' "$err" | grep -qF -- "$v" || { echo "# stderr does not name '$v': $err"; exit 1; }
	done
}
check "--clock instructions --cpus 2 is refused before booting, naming both" \
	refused "--clock instructions" "--cpus 2" -- --clock instructions --cpus 2
check "--clock instructions --numa 2 is refused before booting, naming both" \
	refused "--clock instructions" "--numa 2" -- --clock instructions --numa 2
check "a bad --clock is refused, naming it" refused "'fast'" -- --clock fast
check "--clock kvm with a missing KVM device is an error naming the device" \
	refused "--clock kvm" "$missing_dev does not exist" -- --clock kvm
check "--clock auto --cpus 2 without KVM is refused (its fallback is instructions), naming both" \
	refused "--clock auto" "KVM is not usable" "--cpus 2" -- --clock auto --cpus 2
# A device that exists and opens but is no KVM: the probe's test boot under
# -accel kvm must fail.  QEMU 7.2 always opens /dev/kvm, so where that works
# the test boot would pass: this check needs a machine without it.
if [ -c /dev/kvm ] && [ -r /dev/kvm ] && [ -w /dev/kvm ]; then
	skip "--clock kvm fails when no test guest starts under -accel kvm" "/dev/kvm is usable here"
else
	check "--clock kvm fails when no test guest starts under -accel kvm (MSHARE_KVM_DEV=/dev/null)" \
		sh -c 'rm -rf "$1/out"; err=$(MSHARE_KVM_DEV=/dev/null "$2" --no-build --kernel "$3" --out "$1/out" --clock kvm -- true 2>&1 >/dev/null)
			rc=$?; [ $rc = 126 ] && printf "%s" "$err" | grep -q "a test guest did not start under -accel kvm" ||
			{ echo "# rc $rc: $err"; exit 1; }' sh "$tmp" "$run" "$0"
fi

why=$(guest_blocker)
if [ -n "$why" ]; then
	for d in "--clock instructions boot" "--clock auto falls back to instructions without KVM" \
		"the same guest loop counts the same instructions in both boots" "a plain boot says guest-tcg-ns"; do
		guest_tap "$d" "$why"
	done
	finish
fi
guest_setup vm-clock
cc -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -static -o "$tmp/tsc-loop" tests/kernel/lib/tsc-loop.c ||
	bail "building tests/kernel/lib/tsc-loop.c (static) failed"
guest_cmd='cat /etc/mshare-bench-clock >/out/clock.txt; /out/tsc-loop 10000 50 >/out/short.txt; /out/tsc-loop 1000000 5 >/out/long.txt'
# boot NAME [ENV=VALUE...] -- OPTIONS...: one guest run into $out/NAME.
boot() {
	name=$1; shift
	mkdir -p "$out/$name" && cp "$tmp/tsc-loop" "$out/$name/"
	env_args=
	while [ "$1" != -- ]; do env_args="$env_args $1"; shift; done
	shift
	echo "# vm-clock: booting ($name: $*$env_args); log $out/$name.log"
	# shellcheck disable=SC2086
	env $env_args "$run" --no-build --stream none --no-pmem --mem 512M --timeout 600 \
		--out "$out/$name" --keep-out "$@" -- "$guest_cmd" >"$out/$name.log" 2>&1
}
key() { sed -n "s/^$2=//p" "$1" 2>/dev/null | head -n 1; }
boot_is() {	# boot_is NAME CLOCK VCPUS
	d=$out/$1
	got=$(cat "$d/clock.txt" 2>/dev/null)
	[ "$got" = "$2" ] || { echo "# $1: /etc/mshare-bench-clock says '$got', want $2"; return 1; }
	[ "$(key "$d/vm-env.txt" clock)" = "$2" ] || { echo "# $1: vm-env.txt clock=$(key "$d/vm-env.txt" clock)"; return 1; }
	[ "$(key "$d/vm-timing.txt" clock)" = "$2" ] || { echo "# $1: vm-timing.txt clock=$(key "$d/vm-timing.txt" clock)"; return 1; }
	[ "$(key "$d/vm-timing.txt" vcpus)" = "$3" ] && [ "$(key "$d/vm-env.txt" cpus)" = "$3" ] ||
		{ echo "# $1: vCPUs $(key "$d/vm-timing.txt" vcpus) (guest saw $(key "$d/vm-env.txt" cpus)), want $3"; return 1; }
	echo "# $1: accel $(key "$d/vm-env.txt" accel); guest TSC $(key "$d/vm-env.txt" tsc_khz) kHz ($(key "$d/vm-env.txt" tsc_calibration)); boot-to-shell $(key "$d/vm-timing.txt" boot_to_shell_s) s host time"
}

boot icount -- --clock instructions
guest_ran $? "--clock instructions boot" "$out/icount.log"
check "--clock instructions: /etc/mshare-bench-clock, vm-env.txt and vm-timing.txt say guest-instructions, 1 vCPU" \
	boot_is icount guest-instructions 1

boot auto MSHARE_KVM_DEV="$missing_dev" -- --clock auto
guest_ran $? "--clock auto falls back to instructions without KVM" "$out/auto.log"
check "--clock auto without KVM says why and that it runs --clock instructions" \
	grep -q "KVM not usable ($missing_dev does not exist): --clock instructions" "$out/auto.log"
check "--clock auto without KVM: the guest says guest-instructions, 1 vCPU" boot_is auto guest-instructions 1

same_count() {	# same_count FILE: the minimum TSC count of the loop, equal in both boots
	a=$(sed -n 's/^min tsc \([0-9]*\) ns \([0-9]*\)$/\1/p' "$out/icount/$1")
	b=$(sed -n 's/^min tsc \([0-9]*\) ns \([0-9]*\)$/\1/p' "$out/auto/$1")
	echo "# $1: min TSC $a and $b; ns $(sed -n 's/^min tsc [0-9]* ns //p' "$out/icount/$1") and $(sed -n 's/^min tsc [0-9]* ns //p' "$out/auto/$1")"
	[ -n "$a" ] && [ "$a" = "$b" ]
}
check "the same guest loop counts the same instructions in both boots (10,000 iterations)" same_count short.txt
check "the same guest loop counts the same instructions in both boots (1,000,000 iterations)" same_count long.txt
same_tsc_khz() {
	a=$(key "$out/icount/vm-env.txt" tsc_khz) b=$(key "$out/auto/vm-env.txt" tsc_khz)
	[ -n "$a" ] && [ "$a" = "$b" ] || { echo "# tsc_khz '$a' and '$b'"; return 1; }
}
check "both instruction-clock guests record the same TSC frequency (vm-env.txt tsc_khz)" same_tsc_khz

boot tcg -- --cpus 2
guest_ran $? "a plain boot (no --clock, 2 vCPUs)" "$out/tcg.log"
check "a plain boot says guest-tcg-ns, 2 vCPUs" boot_is tcg guest-tcg-ns 2
rm -rf "$out" "$out".*.log "$out.build.log"
finish
