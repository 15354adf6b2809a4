#!/bin/sh
# kernel/vm/run.sh itself: bad options are refused with a message naming the
# value, and - with a built kernel - the guest command's exit status comes
# back, and a kernel panic or a hang fails the run instead of passing.
# The guest checks fail when the guest cannot run (no kernel built, no
# QEMU); they skip only with MSHARE_SKIP_GUEST=1.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
run=kernel/vm/run.sh
n=0 failed=0
check() {	# check DESCRIPTION COMMAND...: the command must succeed
	desc=$1; shift
	n=$((n + 1))
	if "$@"; then echo "ok $n - $desc"; else echo "not ok $n - $desc"; failed=$((failed + 1)); fi
}

# refused VALUE OPTION...: run.sh exits 126 and names VALUE on stderr.
refused() {
	value=$1; shift
	err=$("$run" --no-build --kernel /dev/null "$@" -- true 2>&1 >/dev/null)
	rc=$?
	[ "$rc" = 126 ] && printf '%s' "$err" | grep -qF -- "$value"
}
check "run.sh refuses --mem 12X" refused 12X --mem 12X
check "run.sh refuses --pmem 0" refused "'0'" --pmem 0
check "run.sh refuses --align 1G" refused 1G --align 1G
check "run.sh refuses --timeout soon" refused soon --timeout soon
no_command() {
	err=$("$run" --no-build --cpus 1 -- 2>&1 >/dev/null)
	[ $? = 126 ] && printf '%s' "$err" | grep -q "no command"
}
check "run.sh refuses a run without a command" no_command
check "run.sh names a missing kernel image" refused /nonexistent/bzImage --kernel /nonexistent/bzImage

out=
status_of() {	# status_of EXPECTED OPTIONS... -- COMMAND
	want=$1; shift
	"$run" --stream none --no-pmem --cpus 1 --mem 512M --out "$out" "$@" >/dev/null 2>"$out.err"
	got=$?
	[ "$got" = "$want" ] || { echo "# run.sh exited $got, want $want"; sed 's/^/# /' "$out.err" | tail -n 5; }
	[ "$got" = "$want" ]
}
. tests/kernel/lib/guest.sh
why=$(guest_blocker)
if [ -n "$why" ]; then
	for d in "guest command's exit status is returned" "guest kernel panic fails the run (125)" \
		"guest hang fails the run (124)"; do
		n=$((n + 1))
		guest_tap "$n" "$d" "$why"
		[ "$(guest_verdict)" = skip ] || failed=$((failed + 1))
	done
else
	mkdir -p build/vm
	out=$(mktemp -d "$root/build/vm/launcher-test.XXXXXX") || exit 1
	check "guest command's exit status is returned" status_of 3 -- 'exit 3'
	# init exiting makes the kernel panic ("Attempted to kill init").
	check "guest kernel panic fails the run (125)" status_of 125 --append rdinit=/bin/false -- true
	check "guest hang fails the run (124)" status_of 124 --timeout 45 -- 'sleep 1000'
	rm -rf "$out" "$out.err"
fi
echo "1..$n"
[ "$failed" = 0 ]
