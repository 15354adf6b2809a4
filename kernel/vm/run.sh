#!/bin/bash
# Boot the patched kernel under QEMU on an emulated NVDIMM and run one
# command in the guest.  --clock picks how QEMU runs the vCPUs (TCG, TCG with
# QEMU's instruction counter, or KVM) and so what the guest's clock measures.
#
#   kernel/vm/run.sh [options] -- COMMAND [ARG...]
#
# One COMMAND word is run by the guest shell (sh -c WORD); several words are
# run as an argument vector.  The guest sees the results directory as /out
# (virtio-9p): files the command writes there are on the host afterwards.
# The guest init (kernel/vm/init) prepares /mnt/pmem (ext4, DAX), hugetlbfs
# on /dev/hugepages and msharefs on /sys/fs/mshare before the command runs.
#
# Exit status: the command's own, or
#   124  the guest did not finish within --timeout (hang) and its kernel
#        reported nothing of the kinds below
#   125  the kernel crashed: panic, BUG (including "BUG: KASAN", "BUG: soft
#        lockup", "BUG: Bad page state"), Oops, general protection fault,
#        whenever it happened (also when the command passed or the guest
#        then hung); with --fail-on-warning also any WARNING (lockdep's
#        "WARNING: possible circular locking ..." included), KASAN, SLUB
#        ("BUG <cache> (...)", "Poison overwritten", ...), list corruption,
#        hung-task ("blocked for more than") or RCU-stall report
#   126  the guest never reported an exit status (boot failure, launcher error)
# The kernel log is read from the guest's /dev/kmsg (all levels, captured from
# boot: /out/kmsg.txt), its dmesg at the end (/out/dmesg.txt) and the serial
# console (levels 0-3 only, but survives a guest that never finishes).
# Failures are reported on stderr with the tail of the console log.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
usage() {
	cat <<USAGE
usage: kernel/vm/run.sh [options] -- COMMAND [ARG...]
  --kernel FILE      kernel image (default build/kernel/bzImage)
  --initrd FILE      initramfs (default build/vm/initramfs.cpio, rebuilt by make)
  --no-build         do not run 'make initramfs' first
  --mem SIZE         guest RAM, e.g. 2G or 3072M (default 2G)
  --pmem GIB         emulated persistent memory in whole GiB (default 4)
  --pmem-image FILE  back the NVDIMM with FILE and keep it: created (sparse)
                     when missing, its size must be --pmem's when present;
                     the guest then mounts the ext4 it finds on the fsdax
                     namespace instead of making a new one, so a file
                     written by one boot is there for the next (a reboot)
  --cpus N           vCPUs (default 2; 1 with --clock instructions, which
                     refuses more)
  --clock MODE       how QEMU runs the guest, and so what its clock counts;
                     the kernel command line gets mshare_bench.clock=NAME and
                     the guest's init writes NAME to /etc/mshare-bench-clock:
                       tcg           (default) -accel tcg,thread=multi, one
                                     host thread per vCPU: emulated wall time,
                                     NAME guest-tcg-ns; for contention
                                     studies with several vCPUs; times vary
                                     with the host's load
                       instructions  -accel tcg,thread=single -icount
                                     shift=0,align=off,sleep=off, exactly 1
                                     vCPU: the guest's clock advances 1 ns per
                                     guest instruction (TSC ~1000 MHz), NAME
                                     guest-instructions; deterministic, but
                                     shows no contention between CPUs and no
                                     cache or TLB effects. QEMU 7.2 hangs
                                     bringing up a 2nd vCPU under -icount, so
                                     --cpus N>1 is refused
                       kvm           -accel kvm: hardware time, NAME
                                     guest-kvm-ns; only when the KVM device
                                     exists and a test guest really boots
                                     under it (probed once per run), else an
                                     error
                       auto          kvm when that probe passes, else
                                     instructions (and says so on stderr)
                     MSHARE_KVM_DEV (default /dev/kvm): the device the probe
                     checks first (QEMU 7.2 itself always opens /dev/kvm;
                     another path can only make the probe fail)
  --numa N           N NUMA nodes (QEMU -numa node, ACPI SRAT): each node is
                     one socket with --cpus/N vCPUs (node k: vCPUs k*C/N ..
                     (k+1)*C/N-1) and 1/N of the guest RAM; --cpus must be a
                     multiple of N; default 1 (no NUMA topology given to QEMU).
                     Under TCG a remote access costs what a local one does:
                     where the kernel allocates memory is real, latency is not
  --pmem-node K      the node the NVDIMM belongs to (default 0; --numa only)
  --align 2M|4K      fsdax namespace alignment: 2M allows PMD mappings,
                     4K gives only PTEs (default 2M)
  --devdax ALIGNS    also device-DAX namespaces, one per alignment of the
                     comma list ALIGNS (2M, 1G or 2M,1G), each on its own
                     emulated NVDIMM of --devdax-gib GiB after the fsdax
                     one; in the guest /dev/dax-2m and /dev/dax-1g link to
                     them (/etc/mshare-bench-devdax lists them); the fsdax
                     block device is then not always /dev/pmem0; needs
                     the NVDIMM (not --legacy-pmem or --no-pmem)
  --devdax-gib N     size of each devdax NVDIMM in whole GiB (default 2,
                     at least 2: a 1G-aligned namespace gives its first
                     GiB to the info block, so 2 GiB leaves 1 GiB of data)
  --legacy-pmem      legacy e820 pmem (memmap=...!...) instead of an NVDIMM
  --no-pmem          no persistent memory at all
  --no-nvdimm        a machine without NVDIMM support (no nvdimm=on, so no
                     ACPI NFIT at all), as a machine without pmem hardware
                     is; needs --legacy-pmem or --no-pmem
  --hugepages N      reserve N 2 MiB huge pages in the guest
  --swap MIB         a swap disk of MIB MiB (a sparse file on the host, a
                     virtio-blk disk in the guest), which the guest init
                     mkswap's and swapon's (needs VIRTIO_BLK and SWAP in the
                     guest kernel, the mshare-2025 flavours; vm-env.txt says
                     swap_kb=0 when it could not); default 0, none
  --timeout SECONDS  kill the guest after this long (default 900)
  --out DIR          host results directory, /out in the guest
                     (default build/vm/out; emptied first unless --keep-out)
  --keep-out         do not empty --out before the run
  --append ARGS      extra kernel command-line arguments
  --stream MODE      console to stdout (default), stderr, comment (stdout,
                     each line prefixed '# ') or none
  --check-logs DIR   boot nothing: judge the logs of an earlier run's --out DIR
                     (console.log, kmsg.txt, dmesg.txt) as a run would: 125 for
                     a crash (or a warning with --fail-on-warning), else 0
  --crash-grace S    after a crash report on the console, let the guest run
                     at most S seconds more (default 30; a fuzz run raises it
                     to keep its summary)
  --fail-on-warning  a kernel WARNING, KASAN, lockdep, SLUB, list-corruption,
                     hung-task or RCU-stall report fails the run (status 125)
USAGE
}

# Kernel reports.  crash_re: always a failure.
crash_re='Kernel panic|BUG:|Oops|general protection fault|kernel BUG at|Unable to handle kernel'
# Reports that --fail-on-warning turns into failures.  In the kernel-only logs
# (kmsg.txt, dmesg.txt) any "WARNING:"; on the console, which also carries the
# command's output, only a WARNING at the start of a line.
warn_common='---\[ end trace|KASAN:|BUG [^ ]+ \((Not tainted|Tainted)|Poison overwritten|Redzone overwritten|Object already free|Freepointer corrupt|list_(add|del) corruption|blocked for more than [0-9]+ seconds|detected (expedited )?stalls?|self-detected stall|soft lockup|Bad rss-counter|Bad page state'
warn_re="WARNING:|$warn_common"
warn_console_re="^WARNING: |$warn_common"

# scan_logs CONSOLE_TEXT DIR: sets crash_lines and warn_lines from the console
# text (\r removed) and DIR/kmsg.txt, DIR/dmesg.txt when present.
scan_logs() {
	local f
	klogs=()
	for f in "$2/kmsg.txt" "$2/dmesg.txt"; do [ -f "$f" ] && klogs+=("$f"); done
	crash_lines=$(grep -hE "$crash_re" "$1" "${klogs[@]}" 2>/dev/null | awk '!seen[$0]++' | head -20 || true)
	warn_lines=$( { grep -hE "$warn_re" "${klogs[@]}" /dev/null 2>/dev/null; grep -hE "$warn_console_re" "$1"; } |
		awk '!seen[$0]++' | head -20 || true)
}

kernel=$root/build/kernel/bzImage
initrd=$root/build/vm/initramfs.cpio
build=1 mem=2G pmem=4 cpus=2 align=2M pmem_mode=nvdimm hugepages=0 numa=1 pmem_node=
swap_mib=0
devdax= devdax_gib=2 pmem_image=
machine_nvdimm=1 timeout=900 out=$root/build/vm/out keep_out=0 extra_append= stream=stdout
clock=tcg cpus_given=
fail_on_warning=0 check_logs= crash_grace=30

die() { echo "run.sh: $*" >&2; exit 126; }
need_arg() { [ $# -ge 2 ] || die "$1 needs a value"; }

while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) need_arg "$@"; kernel=$2; shift 2 ;;
	--initrd) need_arg "$@"; initrd=$2; build=0; shift 2 ;;
	--no-build) build=0; shift ;;
	--mem) need_arg "$@"; mem=$2; shift 2 ;;
	--pmem) need_arg "$@"; pmem=$2; shift 2 ;;
	--pmem-image) need_arg "$@"; pmem_image=$2; shift 2 ;;
	--cpus) need_arg "$@"; cpus=$2; cpus_given=1; shift 2 ;;
	--clock) need_arg "$@"; clock=$2; shift 2 ;;
	--numa) need_arg "$@"; numa=$2; shift 2 ;;
	--pmem-node) need_arg "$@"; pmem_node=$2; shift 2 ;;
	--align) need_arg "$@"; align=$2; shift 2 ;;
	--devdax) need_arg "$@"; devdax=$2; shift 2 ;;
	--devdax-gib) need_arg "$@"; devdax_gib=$2; shift 2 ;;
	--legacy-pmem) pmem_mode=legacy; shift ;;
	--no-pmem) pmem_mode=none; shift ;;
	--no-nvdimm) machine_nvdimm=0; shift ;;
	--hugepages) need_arg "$@"; hugepages=$2; shift 2 ;;
	--swap) need_arg "$@"; swap_mib=$2; shift 2 ;;
	--timeout) need_arg "$@"; timeout=$2; shift 2 ;;
	--out) need_arg "$@"; out=$2; shift 2 ;;
	--keep-out) keep_out=1; shift ;;
	--append) need_arg "$@"; extra_append=$2; shift 2 ;;
	--stream) need_arg "$@"; stream=$2; shift 2 ;;
	--fail-on-warning) fail_on_warning=1; shift ;;
	--check-logs) need_arg "$@"; check_logs=$2; shift 2 ;;
	--crash-grace) need_arg "$@"; crash_grace=$2; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	--) shift; break ;;
	*) usage >&2; die "unknown option '$1' (the command goes after --)" ;;
	esac
done
# --check-logs: judge the logs of an earlier run, boot nothing.
if [ -n "$check_logs" ]; then
	[ -f "$check_logs/console.log" ] || die "--check-logs $check_logs: no console.log there (not a run.sh --out directory)"
	tmp_console=$(mktemp)
	tr -d '\r' <"$check_logs/console.log" >"$tmp_console"
	scan_logs "$tmp_console" "$check_logs"
	rm -f "$tmp_console"
	if [ -n "$crash_lines" ]; then
		printf 'run.sh: kernel crash in %s:\n%s\n' "$check_logs" "$crash_lines" >&2
		exit 125
	fi
	if [ -n "$warn_lines" ]; then
		printf 'run.sh: kernel warnings in %s:\n%s\n' "$check_logs" "$warn_lines" >&2
		[ "$fail_on_warning" = 1 ] && exit 125
	fi
	exit 0
fi
[ $# -gt 0 ] || { usage >&2; die "no command given (put it after --)"; }

# Validate before anything is created.
case "$mem" in
*[Gg]) mem_mib=${mem%[Gg]}; [[ "$mem_mib" =~ ^[0-9]+$ ]] || die "bad --mem '$mem'"; mem_mib=$((mem_mib * 1024)) ;;
*[Mm]) mem_mib=${mem%[Mm]}; [[ "$mem_mib" =~ ^[0-9]+$ ]] || die "bad --mem '$mem'" ;;
*) die "bad --mem '$mem' (want e.g. 2G or 3072M)" ;;
esac
[ "$mem_mib" -ge 256 ] || die "--mem '$mem' is too small (at least 256M)"
[[ "$pmem" =~ ^[0-9]+$ ]] && [ "$pmem" -ge 1 ] || die "bad --pmem '$pmem' (whole GiB, at least 1)"
[[ "$cpus" =~ ^[0-9]+$ ]] && [ "$cpus" -ge 1 ] || die "bad --cpus '$cpus'"
case "$clock" in
instructions|tcg|kvm|auto) ;;
*) die "bad --clock '$clock' (instructions, tcg, kvm or auto)" ;;
esac
# QEMU 7.2 (Debian 12) under -icount runs the vCPUs round-robin on one host
# thread, and a guest with 2 vCPUs never gets past "x86: Booting SMP
# configuration:" (the second vCPU spins with interrupts off, the boot vCPU
# never sees it up; shift 0, 3 and auto, sleep on and off, -cpu max, qemu64
# and Haswell alike): refuse before anything boots.
icount_refusal() {
	echo "${1:-}--clock instructions runs QEMU's instruction counter (-icount), which needs exactly 1 vCPU, but --cpus $cpus was given: under -icount QEMU 7.2 hangs bringing up a second vCPU. Use --cpus 1 (or leave --cpus out), or --clock tcg for several vCPUs"
}
if [ "$clock" = instructions ]; then
	if [ -n "$cpus_given" ] && [ "$cpus" != 1 ]; then die "$(icount_refusal)"; fi
	cpus=1
fi
[[ "$numa" =~ ^[0-9]+$ ]] && [ "$numa" -ge 1 ] && [ "$numa" -le 8 ] || die "bad --numa '$numa' (1 to 8 nodes)"
[ "$clock" = instructions ] && [ "$numa" -gt 1 ] &&
	die "--clock instructions runs exactly 1 vCPU, but --numa $numa needs a vCPU per node: use --clock tcg for a NUMA guest"
[ $((cpus % numa)) = 0 ] || die "--numa $numa needs --cpus a multiple of $numa (got --cpus $cpus): each node is one socket of --cpus/--numa cores"
if [ -n "$pmem_node" ]; then
	[[ "$pmem_node" =~ ^[0-9]+$ ]] && [ "$pmem_node" -lt "$numa" ] ||
		die "bad --pmem-node '$pmem_node' (a node from 0 to $((numa - 1)) of --numa $numa)"
	[ "$pmem_mode" = nvdimm ] || die "--pmem-node $pmem_node needs the NVDIMM (not --legacy-pmem or --no-pmem)"
fi
pmem_node=${pmem_node:-0}
if [ -n "$pmem_image" ]; then
	[ "$pmem_mode" = nvdimm ] || die "--pmem-image $pmem_image needs the NVDIMM (not --legacy-pmem or --no-pmem)"
	[ -d "$(dirname -- "$pmem_image")" ] || die "--pmem-image $pmem_image: its directory does not exist"
	[ -z "$devdax" ] || die "--pmem-image $pmem_image with --devdax $devdax: not supported (the namespaces are made anew at every boot)"
fi
[[ "$timeout" =~ ^[0-9]+$ ]] && [ "$timeout" -ge 1 ] || die "bad --timeout '$timeout' (seconds)"
[[ "$crash_grace" =~ ^[0-9]+$ ]] || die "bad --crash-grace '$crash_grace' (seconds)"
[[ "$hugepages" =~ ^[0-9]+$ ]] || die "bad --hugepages '$hugepages'"
[[ "$swap_mib" =~ ^[0-9]+$ ]] && { [ "$swap_mib" = 0 ] || [ "$swap_mib" -ge 1 ]; } ||
	die "bad --swap '$swap_mib' (whole MiB)"
case "$align" in 2M|4K) ;; 2m) align=2M ;; 4k) align=4K ;; *) die "bad --align '$align' (2M or 4K)" ;; esac
case "$stream" in stdout|stderr|comment|none) ;; *) die "bad --stream '$stream'" ;; esac
devdax_aligns=()
if [ -n "$devdax" ]; then
	IFS=, read -r -a devdax_aligns <<<"$devdax"
	for a in "${devdax_aligns[@]}"; do
		case "$a" in 2M|1G) ;; *) die "bad --devdax '$devdax': '$a' is not an alignment (2M or 1G, comma-separated)" ;; esac
	done
	[ "${#devdax_aligns[@]}" -le 2 ] || die "bad --devdax '$devdax': at most two namespaces (2M,1G)"
	[ "${#devdax_aligns[@]}" -lt 2 ] || [ "${devdax_aligns[0]}" != "${devdax_aligns[1]}" ] ||
		die "bad --devdax '$devdax': one namespace per alignment (/dev/dax-${devdax_aligns[0],,} names it)"
	[ "$pmem_mode" = nvdimm ] || die "--devdax $devdax needs the NVDIMM (not --legacy-pmem or --no-pmem)"
fi
[ "$machine_nvdimm" = 1 ] || [ "$pmem_mode" != nvdimm ] ||
	die "--no-nvdimm leaves the machine without the NVDIMM that is the default pmem: add --legacy-pmem (memmap=) or --no-pmem"
[[ "$devdax_gib" =~ ^[0-9]+$ ]] && [ "$devdax_gib" -ge 2 ] || die "bad --devdax-gib '$devdax_gib' (whole GiB, at least 2)"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 not installed (apt-get install qemu-system-x86)"
[ -f "$kernel" ] || die "no kernel image at $kernel (run: make kernel)"

# KVM: detect, never guess.  The device must exist and be usable, and a test
# guest (this kernel, no initramfs: it prints its banner, panics for want of a
# root file system and, with -no-reboot, QEMU exits) must really start under
# -accel kvm.  Probed once per run; kvm_why says why not.
kvm_dev=${MSHARE_KVM_DEV:-/dev/kvm}
kvm_why=
kvm_probe() {
	if [ ! -e "$kvm_dev" ]; then kvm_why="$kvm_dev does not exist"; return 1; fi
	if [ ! -c "$kvm_dev" ]; then kvm_why="$kvm_dev is not a character device"; return 1; fi
	if [ ! -r "$kvm_dev" ] || [ ! -w "$kvm_dev" ]; then
		kvm_why="$kvm_dev is not readable and writable by $(id -un)"; return 1
	fi
	local d rc=0
	d=$(mktemp -d "${TMPDIR:-/tmp}/mshare-kvm-probe.XXXXXX")
	timeout 60 qemu-system-x86_64 -machine pc -accel kvm -cpu max -smp 1 -m 256M \
		-kernel "$kernel" -append "console=ttyS0 loglevel=8 panic=-1 no5lvl" \
		-nodefaults -display none -monitor none -serial "file:$d/console" -no-reboot \
		</dev/null >"$d/qemu.log" 2>&1 || rc=$?
	if grep -q 'Linux version' "$d/console" 2>/dev/null; then
		rm -rf "$d"; return 0
	fi
	kvm_why="a test guest did not start under -accel kvm (qemu status $rc: $(tr '\n' ' ' <"$d/qemu.log" | head -c 300))"
	rm -rf "$d"
	return 1
}
case "$clock" in
kvm)
	kvm_probe || die "--clock kvm: KVM is not usable here: $kvm_why (--clock auto falls back to --clock instructions; --clock tcg runs plain TCG)"
	;;
auto)
	if kvm_probe; then
		clock=kvm
		echo "run.sh: --clock auto: KVM works ($kvm_dev): --clock kvm" >&2
	else
		[ -n "$cpus_given" ] && [ "$cpus" != 1 ] &&
			die "$(icount_refusal "--clock auto: KVM is not usable ($kvm_why), so auto falls back to instructions; ")"
		[ "$numa" -gt 1 ] &&
			die "--clock auto: KVM is not usable ($kvm_why), and the fallback, --clock instructions, runs exactly 1 vCPU, but --numa $numa needs a vCPU per node: use --clock tcg for a NUMA guest"
		clock=instructions cpus=1
		echo "run.sh: --clock auto: KVM not usable ($kvm_why): --clock instructions (1 vCPU)" >&2
	fi
	;;
esac
case "$clock" in
instructions)
	accel_args=(-accel tcg,thread=single -icount shift=0,align=off,sleep=off)
	clock_name=guest-instructions
	;;
tcg)
	accel_args=(-accel tcg,thread=multi)
	clock_name=guest-tcg-ns
	;;
kvm)
	accel_args=(-accel kvm)
	clock_name=guest-kvm-ns
	;;
esac

if [ "$build" = 1 ]; then
	make -s -C "$root" --no-print-directory initramfs >&2 || die "building the initramfs failed"
fi
[ -f "$initrd" ] || die "no initramfs at $initrd (run: make initramfs)"

mkdir -p "$out" || die "cannot create $out"
out=$(cd "$out" && pwd)
if [ "$keep_out" = 0 ]; then
	# Only ever empty a directory that is empty or holds a previous run.
	if [ -n "$(ls -A "$out")" ] && [ ! -f "$out/vm-timing.txt" ] && [ ! -f "$out/console.log" ]; then
		die "--out $out is not empty and holds no previous run: pick an empty directory or add --keep-out"
	fi
	find "$out" -mindepth 1 -delete
else
	rm -f "$out"/exit-code "$out"/vm-env.txt "$out"/dmesg.txt "$out"/kmsg.txt "$out"/console.log
fi
log=$out/console.log
work=$(mktemp -d "$root/build/vm/run.XXXXXX")
qpid= tpid=
cleanup() {
	[ -n "$qpid" ] && kill "$qpid" 2>/dev/null
	[ -n "$tpid" ] && kill "$tpid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The command and the settings travel in a second cpio archive appended to the
# initramfs (the kernel unpacks concatenated archives in order).
quote() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
mkdir -p "$work/extra"
if [ $# -eq 1 ]; then
	printf '%s\n' "$1" >"$work/extra/vm-cmd"
else
	line=
	for a in "$@"; do line="$line $(quote "$a")"; done
	printf '%s\n' "$line" >"$work/extra/vm-cmd"
fi
cat >"$work/extra/vm.conf" <<CONF
VM_ACCEL='${accel_args[*]:1}'
VM_PMEM=$pmem_mode
VM_ALIGN=$align
VM_DEVDAX='${devdax_aligns[*]:-}'
VM_HUGEPAGES=$hugepages
VM_PMEM_KEEP=$([ -n "$pmem_image" ] && echo 1 || echo 0)
VM_SWAP=$swap_mib
CONF
(cd "$work/extra" && printf 'vm-cmd\nvm.conf\n' | cpio -o -H newc -R 0:0 --quiet) >"$work/extra.cpio"
cat "$initrd" "$work/extra.cpio" >"$work/initrd.cpio"

# no_timer_check: under TCG on a loaded host the kernel's boot-time check of
# the IO-APIC timer interrupt can miss its window and panic ("IO-APIC + timer
# doesn't work!", seen with a host load average of 20); KVM guests skip it too.
# watchdog_thresh=60 (the maximum): a soft lockup is reported after 120 s
# instead of 20 (kernels with SOFTLOCKUP_DETECTOR, the debug flavour): a TCG
# vCPU starved by a loaded host looked like one during boot ("soft lockup -
# CPU#1 stuck for 23s! [swapper/0:1]", load average 40); a real one still shows.
# mshare_bench.clock: what the guest's times are in (the init script writes it
# to /etc/mshare-bench-clock; the last one given counts, so --append can
# override it in a test).
append="console=ttyS0 no5lvl loglevel=4 panic=-1 no_timer_check watchdog_thresh=60 mshare_bench.clock=$clock_name $extra_append"
pmem_args=()
ram_mib=$mem_mib
case "$pmem_mode" in
nvdimm)
	# The label area comes on top of whole GiB: a region of exactly N GiB
	# keeps the fsdax namespace aligned.
	img=$work/pmem.img
	img_bytes=$((pmem * 1024 * 1024 * 1024 + 128 * 1024))
	if [ -n "$pmem_image" ]; then
		img=$pmem_image
		if [ -e "$img" ]; then
			have=$(stat -c %s "$img") || die "--pmem-image $img: cannot stat it"
			[ "$have" = "$img_bytes" ] ||
				die "--pmem-image $img is $have bytes; --pmem $pmem needs $img_bytes (it was made with another --pmem)"
		fi
	fi
	[ -e "$img" ] || truncate -s "$img_bytes" "$img" || die "cannot create the pmem image $img"
	if [ -n "$pmem_image" ]; then
		# One guest at a time on a kept image: a second would write the
		# same ext4 from another kernel.
		exec 8<>"$img" && flock -n 8 || die "--pmem-image $img is in use by another run.sh"
	fi
	pmem_args=(-object "memory-backend-file,id=mem1,share=on,mem-path=$img,size=$((pmem * 1024 * 1024 * 1024 + 128 * 1024))"
		-device "nvdimm,id=nvdimm1,memdev=mem1,label-size=128K")
	# A devdax NVDIMM each: its backend aligned to 1 GiB, so that its
	# region (hence a 1G-aligned namespace's data) starts on a 1 GiB
	# guest-physical boundary, which PUD mappings need.
	k=2
	for a in "${devdax_aligns[@]}"; do
		dimg=$work/devdax$k.img
		dsz=$((devdax_gib * 1024 * 1024 * 1024 + 128 * 1024))
		truncate -s "$dsz" "$dimg"
		pmem_args+=(-object "memory-backend-file,id=mem$k,share=on,mem-path=$dimg,size=$dsz,align=1G"
			-device "nvdimm,id=nvdimm$k,memdev=mem$k,label-size=128K")
		k=$((k + 1))
	done
	mem_arg="${mem_mib}M,slots=$((2 + ${#devdax_aligns[@]})),maxmem=$((mem_mib + pmem * 1024 + 1024 + ${#devdax_aligns[@]} * (devdax_gib + 1) * 1024))M"
	;;
legacy)
	# memmap=SIZE!START turns guest RAM into a legacy pmem range, so the
	# VM gets RAM + pmem.  QEMU's pc machine puts at most 3 GiB below 4 GiB
	# once RAM reaches 3.5 GiB: a guest of 3 GiB or more gets its pmem at
	# 4 GiB; a small one gets it right after its RAM, all below 3 GiB, with
	# one 128 MiB memory section of RAM above it: the firmware reserves the
	# last 128 KiB below the top of low RAM, and a range running into them
	# ended unaligned (0x40000000-0xbffdffff for --mem 1G --pmem 2) and
	# split in two, which the kernel refused ("misaligned, unable to map",
	# no /dev/pmem0).
	if [ "$mem_mib" -ge 3072 ]; then
		start_mib=4096 top_mib=0
	elif [ $((mem_mib + pmem * 1024 + 128)) -le 3072 ]; then
		start_mib=$mem_mib top_mib=128
	else
		echo "run.sh: --legacy-pmem with --mem $mem and --pmem $pmem: guest RAM becomes 3 GiB" >&2
		mem_mib=3072 start_mib=4096 top_mib=0
	fi
	ram_mib=$((mem_mib + pmem * 1024 + top_mib))
	mem_arg="${ram_mib}M"
	append="$append memmap=${pmem}G!${start_mib}M"
	;;
none)
	mem_arg="${mem_mib}M"
	;;
esac

# NUMA: one RAM backend per node, the vCPUs and RAM in contiguous parts;
# the NVDIMM is given its node on the device.
numa_args=()
if [ "$numa" -gt 1 ]; then
	# RAM per node in whole 2 MiB; the last node takes the rest.
	per_mib=$(((ram_mib / numa) / 2 * 2))
	for ((k = 0; k < numa; k++)); do
		sz=$per_mib
		[ "$k" = $((numa - 1)) ] && sz=$((ram_mib - per_mib * (numa - 1)))
		c0=$((k * cpus / numa)) c1=$(((k + 1) * cpus / numa - 1))
		numa_args+=(-object "memory-backend-ram,id=ram$k,size=${sz}M"
			-numa "node,nodeid=$k,cpus=$c0-$c1,memdev=ram$k")
	done
	[ "$pmem_mode" = nvdimm ] && pmem_args[3]="${pmem_args[3]},node=$pmem_node"
fi
# One socket per node: QEMU would otherwise put every vCPU in one socket
# (one last-level cache) across the nodes, which the guest kernel warns about.
smp="$cpus"
[ "$numa" -gt 1 ] && smp="$cpus,sockets=$numa,cores=$((cpus / numa)),threads=1"

# --swap: a sparse raw file as a virtio-blk disk (/dev/vda in the guest,
# whose init makes it swap).
swap_args=()
if [ "$swap_mib" -gt 0 ]; then
	truncate -s "${swap_mib}M" "$work/swap.img"
	swap_args=(-drive "file=$work/swap.img,if=none,id=swap0,format=raw,cache=unsafe"
		-device virtio-blk-pci,drive=swap0)
fi

now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }
: >"$log"
start_ms=$(now_ms)
qemu-system-x86_64 \
	-machine "pc$([ "$machine_nvdimm" = 1 ] && echo ,nvdimm=on)" "${accel_args[@]}" -cpu max -smp "$smp" \
	-m "$mem_arg" "${numa_args[@]}" "${pmem_args[@]}" "${swap_args[@]}" \
	-kernel "$kernel" -initrd "$work/initrd.cpio" -append "$append" \
	-nodefaults -display none -monitor none -serial "file:$log" -no-reboot \
	-virtfs "local,path=$out,mount_tag=out,security_model=none,id=out" \
	</dev/null >"$work/qemu.log" 2>&1 &
qpid=$!

case "$stream" in
# sed -u, not tr: the console must reach a pipe line by line (tr would
# hold it back in 4 KiB blocks, and a test would look silent for minutes).
stdout) tail -n +1 -f --pid="$qpid" "$log" | sed -u 's/\r//g' & tpid=$! ;;
stderr) tail -n +1 -f --pid="$qpid" "$log" | sed -u 's/\r//g' >&2 & tpid=$! ;;
comment) tail -n +1 -f --pid="$qpid" "$log" | sed -u 's/\r//g; s/^/# /' & tpid=$! ;;
none) ;;
esac

deadline_ms=$((start_ms + timeout * 1000))
shell_ms= ready_ms= timed_out=0 crash_seen=0 polls=0 cut_short=0
while kill -0 "$qpid" 2>/dev/null; do
	sleep 0.2
	t=$(now_ms)
	if [ -z "$shell_ms" ] && grep -q '@@MSHARE-VM-SHELL' "$log"; then shell_ms=$t; fi
	if [ -z "$ready_ms" ] && grep -q '@@MSHARE-VM-READY' "$log"; then ready_ms=$t; fi
	polls=$((polls + 1))
	# A crashed kernel may never finish the command: give it --crash-grace more.
	if [ "$crash_seen" = 0 ] && [ $((polls % 10)) = 0 ] && grep -Eq "$crash_re" "$log"; then
		crash_seen=1
		if [ $((t + crash_grace * 1000)) -lt "$deadline_ms" ]; then
			deadline_ms=$((t + crash_grace * 1000))
			cut_short=1
		fi
	fi
	if [ "$t" -ge "$deadline_ms" ]; then
		timed_out=1
		kill "$qpid" 2>/dev/null
		break
	fi
done
wait "$qpid" 2>/dev/null && qemu_rc=0 || qemu_rc=$?
qpid=
[ -n "$tpid" ] && { wait "$tpid" 2>/dev/null || true; tpid=; }
end_ms=$(now_ms)
tr -d '\r' <"$log" >"$work/console.txt"

# Results sent over the console when the guest had no 9p.
if grep -q '^@@MSHARE-VM-OUT-BEGIN' "$work/console.txt"; then
	sed -n '/^@@MSHARE-VM-OUT-BEGIN/,/^@@MSHARE-VM-OUT-END/p' "$work/console.txt" |
		sed '1d;$d' | base64 -d | tar -x -C "$out" 2>/dev/null ||
		echo "run.sh: could not unpack the results sent over the console" >&2
fi

secs() { printf '%d.%01d' $(($1 / 1000)) $((($1 % 1000) / 100)); }
guest_shell=$(sed -n 's/.*@@MSHARE-VM-SHELL uptime=\([0-9.]*\).*/\1/p' "$work/console.txt" | head -1)
guest_ready=$(sed -n 's/.*@@MSHARE-VM-READY uptime=\([0-9.]*\).*/\1/p' "$work/console.txt" | head -1)
{
	echo "boot_to_shell_s=${shell_ms:+$(secs $((shell_ms - start_ms)))}"
	echo "boot_to_ready_s=${ready_ms:+$(secs $((ready_ms - start_ms)))}"
	echo "guest_uptime_at_shell_s=$guest_shell"
	echo "guest_uptime_at_ready_s=$guest_ready"
	echo "total_s=$(secs $((end_ms - start_ms)))"
	echo "vcpus=$cpus"
	echo "ram_mib=$ram_mib"
	echo "pmem_gib=$pmem"
	echo "pmem_mode=$pmem_mode"
	echo "numa_nodes=$numa"
	echo "pmem_node=$( [ "$pmem_mode" = nvdimm ] && echo "$pmem_node" )"
	echo "fsdax_align=$align"
	echo "devdax_aligns=${devdax_aligns[*]:-}"
	echo "devdax_gib=$( [ -n "$devdax" ] && echo "$devdax_gib" )"
	echo "swap_mib=$swap_mib"
	echo "clock=$clock_name"
	echo "accel=${accel_args[*]:1}"
} >"$out/vm-timing.txt"
echo "run.sh: clock $clock_name (${accel_args[*]:1}, $cpus vCPU), boot-to-shell ${shell_ms:+$(secs $((shell_ms - start_ms)))}s, set-up done ${ready_ms:+$(secs $((ready_ms - start_ms)))}s, total $(secs $((end_ms - start_ms)))s" >&2

report_tail() {
	echo "run.sh: --- last 40 console lines ($log) ---" >&2
	tail -n 40 "$work/console.txt" >&2
	if [ -s "$work/qemu.log" ]; then
		echo "run.sh: --- qemu stderr ---" >&2
		tail -n 20 "$work/qemu.log" >&2
	fi
}

rc=
if [ -f "$out/exit-code" ]; then
	rc=$(cat "$out/exit-code")
else
	rc=$(sed -n 's/.*@@MSHARE-VM-EXIT rc=\([0-9]*\).*/\1/p' "$work/console.txt" | tail -1)
fi

scan_logs "$work/console.txt" "$out"

# A kernel crash decides the status whatever else happened: a guest that hung
# after a BUG reports the BUG (125), not a hang.
hang_note=
if [ "$timed_out" = 1 ] && [ "$cut_short" = 1 ]; then
	hang_note=", and the guest did not finish within ${crash_grace}s of the report"
elif [ "$timed_out" = 1 ]; then
	hang_note=", and the guest did not finish within ${timeout}s"
fi
if [ -n "$crash_lines" ]; then
	printf 'run.sh: FAIL: the guest kernel crashed (command status %s%s):\n%s\n' "${rc:-none}" "$hang_note" "$crash_lines" >&2
	[ -n "$warn_lines" ] && printf 'run.sh: kernel warnings:\n%s\n' "$warn_lines" >&2
	report_tail
	exit 125
fi
if [ -n "$warn_lines" ]; then
	printf 'run.sh: kernel warnings in the guest kernel log (%s):\n%s\n' "${klogs[*]:-console only}" "$warn_lines" >&2
	if [ "$fail_on_warning" = 1 ]; then
		echo "run.sh: FAIL: --fail-on-warning$hang_note" >&2
		[ "$timed_out" = 1 ] && report_tail
		exit 125
	fi
fi
if [ "$timed_out" = 1 ]; then
	echo "run.sh: FAIL: guest did not finish within ${timeout}s (hang?)" >&2
	report_tail
	exit 124
fi
if [ -z "$rc" ]; then
	echo "run.sh: FAIL: the guest never reported the command's exit status (qemu status $qemu_rc)" >&2
	report_tail
	exit 126
fi
[ "$rc" = 0 ] || echo "run.sh: the command exited with status $rc" >&2
exit "$rc"
