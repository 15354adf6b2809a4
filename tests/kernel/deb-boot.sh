#!/bin/sh
# test-timeout: 2400
# The packaged mshare kernel (kernel flavour mshare-deb, `make kernel-deb`;
# issue 28 item 4): the linux-image .deb that a user installs on a real
# machine, unpacked here with dpkg-deb -x, its vmlinuz booted under QEMU with
# the suite's initramfs, twice:
#   1. through the emulated NVDIMM (ACPI NFIT), as the other guest tests do
#   2. on a machine without NVDIMM support (run.sh --no-nvdimm: no ACPI NFIT),
#      through legacy e820 pmem: memmap=2G!4096M on the kernel command line
#      (run.sh --legacy-pmem with --mem 3G: 3 GiB of RAM below 4 GiB, the
#      2 GiB above it pmem), the route of a machine without pmem hardware. The guest init turns the raw legacy
#      namespace into fsdax (ndctl create-namespace -f -e namespace0.0
#      -m fsdax: a raw namespace cannot do DAX on 6.1), makes ext4 and mounts
#      it -o dax.
# In each: the booted kernel is the packaged one (uname -r is the package's
# release, <version>-mshare-deb-<key>, and uname -v names the key), mshare is
# there (vm.mshare_size, msharefs mounted, the harness's record says
# mshare_available), vm-smoke passes (it fails unless /mnt/pmem is DAX by
# statx), and a short head-to-head (10 workers over 64 MiB: mshare against
# MAP_SHARED of a file on the DAX ext4, 4 KiB pages; the verify workload)
# shows mshare's smaller page tables (tests/kernel/lib/h2h-figures.py).
#
# Gated like the mshare-2025 tier: `make test` runs it only when the kernel
# cache holds the mshare-deb image (it copies it, never builds it, and sets
# MSHARE_DEB_TESTS=1); `make test-deb` builds (or copies) it, then runs this.
# Without MSHARE_DEB_TESTS=1 it is one skip saying so. Results:
# build/vm/deb-boot-*.XXXXXX/ (console.log, kmsg.txt, vm-env.txt, records).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1

. tests/kernel/lib/guest.sh

if [ "${MSHARE_SKIP_GUEST:-0}" != 1 ] && [ "${MSHARE_DEB_TESTS:-0}" != 1 ]; then
	skip "packaged mshare kernel (mshare-deb) boots with NVDIMM and memmap= pmem" \
		"the mshare-deb kernel is not in the kernel cache (make kernel-deb builds it, about 32 min cold on 2 cores; make test runs this test when it is cached; make test-deb builds it and runs this test)"
	finish
fi
dir=build/kernel-deb
KERNEL_TEST_IMAGE=$dir/bzImage
guest_require "packaged mshare kernel (mshare-deb)"

# ---- the package ----
key=$(cat "$dir/key" 2>/dev/null)
[ -n "$key" ] || bail "no $dir/key: make kernel-deb did not publish the mshare-deb kernel"
set -- "$dir"/linux-image-*-mshare-deb-"$key"_*.deb
case "$1" in *-dbg_*) shift ;; esac
if [ $# -ne 1 ] || [ ! -f "$1" ]; then
	bail "one linux-image-*-mshare-deb-${key}_*.deb in $dir (found: $(ls "$dir" | tr '\n' ' '))"
fi
deb=$1
pkg=$(dpkg-deb -f "$deb" Package)
rel=${pkg#linux-image-}
ok "package $pkg ($(dpkg-deb -f "$deb" Version), $(($(stat -c %s "$deb") / 1024)) KiB) names mshare-deb and the key $key"

unpacked=$(mktemp -d "${TMPDIR:-/tmp}/deb-boot.XXXXXX") || bail "cannot make a temporary directory"
trap 'rm -rf "$unpacked"' EXIT
dpkg-deb -x "$deb" "$unpacked" || bail "dpkg-deb -x $deb failed"
vmlinuz=$unpacked/boot/vmlinuz-$rel
config=$unpacked/boot/config-$rel
if [ -f "$vmlinuz" ] && [ -f "$config" ]; then
	ok "the package holds boot/vmlinuz-$rel and boot/config-$rel"
else
	bail "the package holds boot/vmlinuz-$rel and boot/config-$rel (it has: $(cd "$unpacked" && find boot | tr '\n' ' '))"
fi

# Built in (=y): what mshare needs, what pmem/DAX/NUMA need on a real machine
# and what the guest init uses (it loads no modules).
missing=
for opt in X86_INTEL_MEMORY_PROTECTION_KEYS ARCH_USES_HIGH_VMA_FLAGS NUMA HUGETLBFS TRANSPARENT_HUGEPAGE \
	ZONE_DEVICE ACPI_NFIT LIBNVDIMM BLK_DEV_PMEM ND_PFN X86_PMEM_LEGACY FS_DAX DAX DEV_DAX DEV_DAX_PMEM \
	EXT4_FS DEVTMPFS VIRTIO_PCI NET_9P_VIRTIO 9P_FS SERIAL_8250_CONSOLE BLK_DEV_INITRD; do
	grep -qx "CONFIG_$opt=y" "$config" || missing="$missing $opt"
done
for opt in X86_5LEVEL NUMA_BALANCING KSM USERFAULTFD; do
	grep -qx "# CONFIG_$opt is not set" "$config" || missing="$missing $opt(must be off)"
done
if [ -z "$missing" ]; then
	ok "the packaged config builds in mshare's, pmem/DAX's, NUMA's and the guest's options; 5-level paging, NUMA balancing, KSM and userfaultfd off"
else
	not_ok "the packaged config ($config):$missing"
fi

if ! make -s --no-print-directory build/mshare-bench guest-tests initramfs >build/vm/deb-boot-make.log 2>&1; then
	not_ok "building mshare-bench, the guest programs and the initramfs (build/vm/deb-boot-make.log)"
	sed 's/^/# /' build/vm/deb-boot-make.log | tail -n 20
	finish
fi

# The guest command: the smoke test (uname, mshare, DAX by statx), the
# namespace as ndctl lists it, then the short head-to-head.
common="--workers 10 --size 64M --page 4k --workload pt-footprint --quiet"
guest_cmd="
vm-smoke >/out/smoke.txt 2>&1; s=\$?; cat /out/smoke.txt; [ \$s = 0 ] || exit 10
ndctl list -N >/out/ndctl.json 2>&1
uname -r >/out/uname-r.txt; uname -v >/out/uname-v.txt
mshare-bench run --backend mshare $common --out /out/mshare.json &&
mshare-bench run --backend file --path /mnt/pmem $common --out /out/dax4k.json &&
mshare-bench run --backend mshare --workers 4 --size 64M --workload verify --quiet --out /out/verify.json &&
ls -A /sys/fs/mshare >/out/leftover.txt"

# boot ROUTE RUN.SH-ARGS...: one boot of the packaged vmlinuz and its checks.
boot() {
	route=$1; shift
	out=$(mktemp -d "build/vm/deb-boot-$route.XXXXXX") || bail "cannot create a results directory in build/vm"
	chmod 755 "$out"
	t0=$(date +%s)
	kernel/vm/run.sh --no-build --kernel "$vmlinuz" --pmem 2 --align 4K --timeout 1200 \
		--stream none --keep-out --out "$out" "$@" -- "$guest_cmd" >"$out/run.log" 2>&1 &
	guest_wait $!
	rc=$?
	if [ "$rc" != 0 ]; then
		not_ok "$route: the packaged kernel boots and runs the smoke test (run.sh exit $rc, $out)"
		grep -E '^run.sh: |^vm-init: |^(BUG|Oops|Kernel panic)' "$out/run.log" "$out/console.log" 2>/dev/null |
			head -n 30 | sed 's/^/# /'
		tail -n 15 "$out/console.log" 2>/dev/null | tr -d '\r' | sed 's/^/# /'
		return
	fi
	ok "$route: the packaged kernel boots and runs the smoke test ($(($(date +%s) - t0)) s, boot-to-shell $(sed -n 's/^boot_to_shell_s=//p' "$out/vm-timing.txt") s; $out)"
	got_r=$(cat "$out/uname-r.txt" 2>/dev/null)
	got_v=$(cat "$out/uname-v.txt" 2>/dev/null)
	case "$got_v" in
	*"-$key") [ "$got_r" = "$rel" ] && v_ok=1 || v_ok=0 ;;
	*) v_ok=0 ;;
	esac
	if [ "$v_ok" = 1 ]; then
		ok "$route: the booted kernel is the packaged one (uname -r $got_r, uname -v '$got_v')"
	else
		not_ok "$route: the booted kernel is the packaged one: uname -r '$got_r' (want $rel), uname -v '$got_v' (want ...-$key)"
	fi
	env=$out/vm-env.txt
	ms=$(sed -n 's/^mshare_size=//p' "$env")
	avail=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["environment"]["mshare_available"])' \
		"$out/mshare.json" 2>/dev/null)
	if [ -n "$ms" ] && [ "$ms" != none ] && grep -qx 'msharefs=mounted' "$env" && [ "$avail" = True ]; then
		ok "$route: mshare detected (vm.mshare_size $ms, msharefs mounted, the record's mshare_available true)"
	else
		not_ok "$route: mshare detected: mshare_size '${ms:-?}', $(grep '^msharefs=' "$env"), mshare_available '${avail:-no record}'"
	fi
	# statx's DAX attribute on a file of /mnt/pmem (vm-smoke), the mount's
	# dax option, and the init's own probe
	if grep -qx 'DAX on /mnt/pmem/smoke: dax=1' "$out/smoke.txt" && grep -q ' /mnt/pmem ext4 [^ ]*dax' "$out/smoke.txt" &&
		grep -qx 'dax=1' "$env"; then
		ok "$route: /mnt/pmem is ext4 -o dax on $(sed -n 's/^pmem_dev=//p' "$env") and a file on it is DAX (statx)"
	else
		not_ok "$route: /mnt/pmem is DAX: smoke '$(grep -E '^DAX|/mnt/pmem' "$out/smoke.txt" | tr '\n' ' ')', vm-env $(grep -E '^(dax|pmem_dev)=' "$env" | tr '\n' ' ')"
	fi
	figures=$(python3 tests/kernel/lib/h2h-figures.py "$out" "$route: head-to-head" mshare dax4k 2>&1)
	check_status $? "${figures:-$route: head-to-head figures could not be read from $out}"
}

# ---- 1. through the emulated NVDIMM ----
boot nvdimm --mem 2G
if grep -q 'ACPI: NFIT ' "$out/kmsg.txt" 2>/dev/null && grep -qx 'pmem_mode=nvdimm' "$out/vm-env.txt" 2>/dev/null; then
	ok "nvdimm: the pmem came through the ACPI NFIT"
else
	not_ok "nvdimm: the pmem came through the ACPI NFIT (no 'ACPI: NFIT' table in $out/kmsg.txt, or pmem_mode not nvdimm)"
fi

# ---- 2. legacy e820 pmem from memmap= ----
# run.sh --legacy-pmem --mem 3G: QEMU gets 5 GiB, 3 below 4 GiB and 2 above,
# and memmap=2G!4096M makes those 2 GiB pmem; --no-nvdimm: no NVDIMM support.
boot legacy --mem 3G --legacy-pmem --no-nvdimm
cmdline=$(sed -n 's/^cmdline=//p' "$out/vm-env.txt" 2>/dev/null)
case "$cmdline" in
*'memmap=2G!4096M'*)
	if grep -q 'persistent (type 12)' "$out/kmsg.txt" && ! grep -q 'ACPI: NFIT ' "$out/kmsg.txt" &&
		tr -d ' \n\t' <"$out/ndctl.json" | grep -q '"mode":"fsdax"' && grep -qx 'pmem_dev=/dev/pmem0' "$out/vm-env.txt"; then
		ok "legacy: memmap=2G!4096M made e820 type-12 pmem (no ACPI NFIT), the init made it fsdax: /dev/pmem0"
	else
		not_ok "legacy: e820 type-12 pmem made fsdax /dev/pmem0 (kmsg: '$(grep -m1 'type 12' "$out/kmsg.txt")', ndctl: '$(tr -d ' \n' <"$out/ndctl.json" | head -c 200)', $(grep '^pmem_dev=' "$out/vm-env.txt"))"
	fi
	;;
*) not_ok "legacy: the kernel command line has memmap=2G!4096M (it is '$cmdline')" ;;
esac
finish
