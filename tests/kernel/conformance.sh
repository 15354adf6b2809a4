#!/bin/sh
# Kernel conformance: boots the patched kernel (build/kernel/bzImage) under
# QEMU with an emulated NVDIMM, runs the tests/kernel/test-* binaries inside
# the guest and relays their TAP lines here, renumbered.  A guest that
# panics, oopses, warns or hangs fails the run.  Fails when the guest
# cannot run (no kernel built, no QEMU); skips only with MSHARE_SKIP_GUEST=1.
#
# Environment: KERNEL_TEST_VM_OPTS  extra options for kernel/vm/run.sh
#              KERNEL_TEST_FILTER   run only tests whose name contains this
#              KERNEL_TEST_IMAGE    kernel image to boot (default
#                                   build/kernel/bzImage; tests/kernel/debug-kernel.sh
#                                   passes the debug flavour, build/kernel-debug/bzImage)
#              KERNEL_TEST_OUT      results directory prefix (default build/vm/conformance)
#              KERNEL_TEST_DIR      guest directory of the test binaries (default
#                                   /guest/tests/kernel; tests/kernel-2025/conformance.sh
#                                   passes /guest/tests/kernel-2025)
#              KERNEL_TEST_GUEST_ENV  NAME=VALUE words exported to the test
#                                   binaries in the guest (e.g. KT_SHARERS=20 KT_SHARED_MB=256)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1

. tests/kernel/lib/guest.sh
guest_require "kernel conformance"

image=${KERNEL_TEST_IMAGE:-build/kernel/bzImage}
if [ ! -f "$image" ]; then
	bail "kernel conformance: no kernel image at $image (KERNEL_TEST_IMAGE)"
fi
prefix=${KERNEL_TEST_OUT:-build/vm/conformance}
mkdir -p "$(dirname "$prefix")"
# One results directory per run (two runs may overlap, e.g. make test while
# make test-kernel runs); PREFIX-latest points at the newest.
out=$(mktemp -d "$prefix.XXXXXX") || exit 1
chmod 755 "$out"
ln -sfn "${out##*/}" "$prefix-latest"
if ! make -s --no-print-directory guest-tests initramfs >"$out/build.log" 2>&1; then
	sed 's/^/# /' "$out/build.log"
	bail "kernel conformance: building the guest tests or the initramfs failed"
fi

filter=${KERNEL_TEST_FILTER:-}
guest_env=
for kv in ${KERNEL_TEST_GUEST_ENV:-}; do
	case "$kv" in
	[A-Za-z_]*=*) case "${kv%%=*}${kv#*=}" in *[!A-Za-z0-9_.,:/-]*) bad=1 ;; *) bad=0 ;; esac ;;
	*) bad=1 ;;
	esac
	if [ "$bad" = 1 ]; then
		bail "kernel conformance: KERNEL_TEST_GUEST_ENV word '$kv' is not NAME=VALUE (letters, digits, _.,:/-)"
	fi
	guest_env="$guest_env export $kv;"
done
# In the guest: every test binary, its TAP output kept in /out for the relay.
guest_cmd=$guest_env'rc=0
for t in '"${KERNEL_TEST_DIR:-/guest/tests/kernel}"'/test-*; do
	echo "# binary ${t##*/}" >>/out/kernel-tests.tap
	"$t" '"${filter:+\"$filter\"}"' >>/out/kernel-tests.tap 2>&1 || rc=1
	tail -n 1 /out/kernel-tests.tap | sed "s|^|# ${t##*/}: |"
done
exit $rc'

# The guest must finish inside the test runner's per-test limit (TEST_TIMEOUT,
# default 900 s), with a minute left to report.
vm_timeout=$(( ${TEST_TIMEOUT:-900} - 60 ))
[ "$vm_timeout" -ge 120 ] || vm_timeout=120

# SLUB poisoning of the numa_policy cache makes a mempolicy put after its
# free show up as "Poison overwritten" (test-mshare-adversarial's mbind test
# skips without it); it costs nothing elsewhere.
# 4K fsdax alignment: the page-table comparison needs 4 KiB PTEs.  run.sh
# runs in the background so that a TERM from the runner reaches it (and it
# stops QEMU) instead of leaving the guest running.
echo "# kernel conformance: results in $out"
echo "# kernel conformance: booting the patched kernel under QEMU (TCG); its console follows"
# shellcheck disable=SC2086
kernel/vm/run.sh --no-build --kernel "$image" --mem 2G --pmem 4 --cpus 2 --align 4K --timeout "$vm_timeout" \
	--append "slub_debug=FZPU,numa_policy" \
	--fail-on-warning --stream comment --keep-out --out "$out" ${KERNEL_TEST_VM_OPTS:-} -- "$guest_cmd" &
guest_wait $!
vm_rc=$?

timing=$(sed -n 's/^boot_to_shell_s=//p' "$out/vm-timing.txt" 2>/dev/null)
case $vm_rc in
124) not_ok "kernel: guest finished in time (it hung; console log in $out/console.log)" ;;
125) not_ok "kernel: guest kernel log free of panic, BUG, Oops and WARNING (see $out/console.log, $out/dmesg.txt)" ;;
126) not_ok "kernel: guest booted and reported a result (see $out/console.log)" ;;
*) ok "kernel: guest booted (boot-to-shell ${timing:-?} s), ran the tests, kernel log clean" ;;
esac

if grep -q '^dax=1' "$out/vm-env.txt" 2>/dev/null; then
	ok "kernel: /mnt/pmem is ext4 on an fsdax namespace and its files are DAX"
else
	not_ok "kernel: /mnt/pmem is ext4 on an fsdax namespace and its files are DAX ($(grep -E '^(pmem_dev|dax)=' "$out/vm-env.txt" 2>/dev/null | tr '\n' ' '))"
fi

# The binaries' TAP (the kernel's kselftest_harness.h): "ok N fixture.test",
# "not ok N fixture.test", and "ok N # SKIP reason", which does not name the
# test: its name comes from the "#  RUN  fixture.test ..." line before it.
planned=0 seen=0 started=
if [ -f "$out/kernel-tests.tap" ]; then
	while IFS= read -r line; do
		case "$line" in
		"1.."*) planned=$((planned + ${line#1..})) ;;
		"ok "*|"not ok "*)
			seen=$((seen + 1))
			case "$line" in "not ok "*) verdict=not-ok; rest=${line#not ok } ;; *) verdict=ok; rest=${line#ok } ;; esac
			rest=${rest#* }		# drop the number
			case "$rest" in "# SKIP"*) rest="$started $rest" ;; esac
			result "$verdict" "kernel: $rest"
			;;
		"#  RUN "*)
			started=$(echo "${line#\#  RUN}" | sed 's/^ *//; s/ \.\.\.$//')
			echo "$line"
			;;
		"#"*) echo "$line" ;;
		esac
	done <"$out/kernel-tests.tap"
fi
if [ "$seen" -lt "$planned" ] || [ "$seen" = 0 ]; then
	not_ok "kernel: every planned test reported ($seen of $planned)"
fi

echo "# kernel conformance: $TAP_PASSED passed, $TAP_FAILED failed, $TAP_SKIPPED skipped (boot-to-shell ${timing:-?} s)"
finish
