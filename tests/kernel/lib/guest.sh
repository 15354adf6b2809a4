# Sourced by the tests that boot the patched kernel in the VM: decides
# whether they may run. They FAIL when the guest cannot run (no kernel
# image, no QEMU): `make test` builds the kernel first, so a missing image
# is a broken set-up, not a reason to pass. MSHARE_SKIP_GUEST=1 is the
# explicit opt-out: the guest tests are then reported as skipped, saying so.
# The tests cd to the top of the tree before sourcing this; it brings the
# TAP functions of tests/lib/tap.sh.
#
#   guest_blocker   prints why the guest tests cannot run (empty: they can);
#                   the image is $KERNEL_TEST_IMAGE when set (the debug and
#                   mshare-2025 tiers boot their own), else build/kernel/bzImage
#   guest_verdict   "skip" with MSHARE_SKIP_GUEST=1, else "fail"
. tests/lib/tap.sh

guest_blocker() {
	if [ "${MSHARE_SKIP_GUEST:-0}" = 1 ]; then
		echo "MSHARE_SKIP_GUEST=1: guest tests not run"
	elif [ ! -f "${KERNEL_TEST_IMAGE:-build/kernel/bzImage}" ]; then
		echo "no patched kernel at ${KERNEL_TEST_IMAGE:-build/kernel/bzImage} (make kernel builds it; MSHARE_SKIP_GUEST=1 skips the guest tests)"
	elif ! command -v qemu-system-x86_64 >/dev/null 2>&1; then
		echo "qemu-system-x86_64 not installed (scripts/deps.sh installs it; MSHARE_SKIP_GUEST=1 skips the guest tests)"
	fi
}
guest_verdict() {
	if [ "${MSHARE_SKIP_GUEST:-0}" = 1 ]; then echo skip; else echo fail; fi
}
# guest_tap DESCRIPTION REASON: the TAP line for a guest test that cannot run.
guest_tap() {
	if [ "$(guest_verdict)" = skip ]; then
		skip "$1" "$2"
	else
		not_ok "$1: cannot boot the guest: $2"
	fi
}
# guest_setup NAME: out=build/vm/NAME.XXXXXX, a new results directory the
# guest may write, and the initramfs built (log $out.build.log); when either
# fails, that is the test's last TAP line.
guest_setup() {
	_gs_name=$1
	mkdir -p build/vm
	out=$(mktemp -d "build/vm/$1.XXXXXX") || bail "$1: cannot create a results directory in build/vm"
	chmod 755 "$out"
	make -s --no-print-directory initramfs >"$out.build.log" 2>&1 ||
		bail "$1: building the initramfs failed (log $out.build.log)"
}
# guest_wait PID [PROGRESS]: waits for PID, a kernel/vm/run.sh (or a test
# that runs one) started in the background, so that a TERM or INT to this
# script reaches it and it stops QEMU; runs the command PROGRESS every 2 s
# meanwhile (guest_heartbeat: a line a minute).  Its status is PID's;
# _gw_secs is how long it ran.
guest_wait() {
	_gw_pid=$1 _gw_t0=$(date +%s)
	_gw_beat=$_gw_t0
	trap 'kill -TERM $_gw_pid 2>/dev/null; wait $_gw_pid; exit 143' TERM INT
	if [ -n "${2:-}" ]; then
		while kill -0 "$_gw_pid" 2>/dev/null; do
			sleep 2
			$2
		done
	fi
	wait "$_gw_pid"
	_gw_rc=$?
	_gw_secs=$(($(date +%s) - _gw_t0))
	trap - TERM INT
	return $_gw_rc
}
# guest_heartbeat: PROGRESS for guest_wait, "# NAME: still running (N s)" a
# minute (NAME of guest_setup), in place of an estimate of how long it takes.
guest_heartbeat() {
	if [ $(($(date +%s) - _gw_beat)) -ge 60 ]; then
		_gw_beat=$(date +%s)
		echo "# ${_gs_name:-guest}: still running ($((_gw_beat - _gw_t0)) s)"
	fi
}
# guest_progress: for guest_wait's PROGRESS while a test's guest runs: says
# "# NAME: guest up after N s" once $out/console.log shows the guest ready,
# then a line a minute. Set progress_name, progress_up (what the guest does
# once up) and t0 (the start, date +%s) first.
guest_progress() {
	_gp_now=$(date +%s)
	if [ "${_gp_up:-0}" = 0 ] && grep -q '@@MSHARE-VM-READY' "$out/console.log" 2>/dev/null; then
		_gp_up=1 _gp_beat=$_gp_now
		echo "# $progress_name: guest up after $((_gp_now - t0)) s${progress_up:+; $progress_up}"
	elif [ $((_gp_now - ${_gp_beat:-$t0})) -ge 60 ]; then
		_gp_beat=$_gp_now
		echo "# $progress_name: still running ($((_gp_now - t0)) s)"
	fi
}
# guest_ran RC DESCRIPTION LOG: the TAP line for a guest run that returned
# RC (kernel/vm/run.sh's status); when it failed, LOG's tail and the end of
# the calling script.
guest_ran() {
	if [ "$1" -ne 0 ]; then
		not_ok "$2 (run.sh exit $1, log $3)"
		tail -20 "$3" | sed 's/^/# /'
		finish
	fi
	ok "$2"
}
# guest_require DESCRIPTION: when the guest cannot run, print the one TAP line
# for it (SKIP with MSHARE_SKIP_GUEST=1, else not ok) and end the calling script.
guest_require() {
	_why=$(guest_blocker)
	[ -z "$_why" ] && return 0
	guest_tap "$1" "$_why"
	finish
}
# guest_relay PREFIX LOG: relays LOG's "ok"/"not ok" lines (another test's
# TAP, e.g. tests/kernel/conformance.sh run on another image) as this test's
# own, each prefixed "PREFIX: ", and its "# kernel conformance:" summary
# lines; returns 0 when it relayed any line.
guest_relay() {
	_gr_n=0
	while IFS= read -r _gr_line; do
		case "$_gr_line" in
		"ok "*|"not ok "*)
			case "$_gr_line" in
			"not ok "*) _gr_v=not-ok _gr_rest=${_gr_line#not ok } ;;
			*) _gr_v=ok _gr_rest=${_gr_line#ok } ;;
			esac
			_gr_rest=${_gr_rest#* }
			_gr_rest=${_gr_rest#- }
			result "$_gr_v" "$1: $_gr_rest"
			_gr_n=$((_gr_n + 1))
			;;
		"# kernel conformance:"*) echo "# $1 $_gr_line" ;;
		esac
	done <"$2"
	[ "$_gr_n" -gt 0 ]
}
# tier_2025_require DESCRIPTION: the mshare-2025 tier runs only when make
# test set MSHARE_2025_TESTS=1 (the flavour's image is in the kernel cache;
# make test-2025 builds it); otherwise one skip line says why and the
# calling script ends.
tier_2025_require() {
	[ "${MSHARE_2025_TESTS:-0}" = 1 ] && return 0
	skip "$1" "the mshare-2025 kernel is not in the kernel cache (make test runs this tier when it is; make test-2025 builds it, see kernel/README.md)"
	finish
}
