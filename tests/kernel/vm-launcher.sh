#!/bin/sh
# kernel/vm/run.sh itself: bad options are refused with a message naming the
# value; its kernel-log judge (--check-logs) tells crashes, warnings and clean
# logs apart on sample reports of every kind; and - with a built kernel - the
# guest command's exit status comes back, a kernel panic or a hang fails the
# run instead of passing, a BUG followed by a hang is a crash (125, not 124),
# and a WARNING that only reaches /dev/kmsg fails a --fail-on-warning run.
# The guest checks fail when the guest cannot run (no kernel built, no
# QEMU); they skip only with MSHARE_SKIP_GUEST=1.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
run=kernel/vm/run.sh
. tests/lib/tap.sh

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
check "run.sh refuses --numa 0" refused "'0'" --numa 0
check "run.sh refuses --numa two" refused two --numa two
check "run.sh refuses --numa 2 with --cpus 3 (not one socket per node)" refused "--cpus 3" --numa 2 --cpus 3
check "run.sh refuses --pmem-node 2 on 2 nodes" refused "'2'" --numa 2 --pmem-node 2
check "run.sh refuses --pmem-node with --no-pmem" refused "--pmem-node 0" --numa 2 --no-pmem --pmem-node 0
check "run.sh refuses --no-nvdimm with the NVDIMM pmem" refused "--no-nvdimm" --no-nvdimm
no_command() {
	err=$("$run" --no-build --cpus 1 -- 2>&1 >/dev/null)
	[ $? = 126 ] && printf '%s' "$err" | grep -q "no command"
}
check "run.sh refuses a run without a command" no_command
check "run.sh names a missing kernel image" refused /nonexistent/bzImage --kernel /nonexistent/bzImage

# The judge on sample logs: judged CONSOLE-LINE KMSG-LINE STATUS STATUS-WITH-FAIL-ON-WARNING
logs=$(mktemp -d "${TMPDIR:-/tmp}/vm-launcher-logs.XXXXXX") || exit 1
judged() {
	printf 'vm-init: fsdax namespace created\r\n%s\r\n' "$1" >"$logs/console.log"
	printf 'Linux version 6.1.0\n%s\n' "$2" >"$logs/kmsg.txt"
	"$run" --check-logs "$logs" 2>/dev/null
	a=$?
	"$run" --check-logs "$logs" --fail-on-warning 2>/dev/null
	b=$?
	[ "$a" = "$3" ] && [ "$b" = "$4" ] || { echo "# judged '$1' / '$2': $a and $b, want $3 and $4"; return 1; }
}
check "judge: a clean log passes" judged "@@MSHARE-VM-EXIT rc=0" "mshare: ok" 0 0
check "judge: user output with WARNING inside a line is not a kernel warning" \
	judged "vm-init: WARNING: no /dev/pmem0" "" 0 0
check "judge: kernel BUG on the console is a crash" judged "kernel BUG at mm/mmap.c:3361!" "" 125 125
check "judge: Oops in the kernel log is a crash" judged "" "Oops: 0000 [#1] SMP KASAN" 125 125
check "judge: panic is a crash" judged "Kernel panic - not syncing: Attempted to kill init!" "" 125 125
check "judge: KASAN report is a crash" \
	judged "" "BUG: KASAN: slab-use-after-free in mpol_put+0x1/0x2" 125 125
check "judge: WARN_ON report fails only with --fail-on-warning" \
	judged "" "WARNING: CPU: 1 PID: 77 at mm/mshare.c:100 f+0x1/0x2" 0 125
check "judge: lockdep circular locking report" \
	judged "" "WARNING: possible circular locking dependency detected" 0 125
check "judge: SLUB 'BUG <cache>' report" \
	judged "" "BUG numa_policy (Not tainted): Poison overwritten" 0 125
check "judge: SLUB report on a tainted kernel" \
	judged "" "BUG kmalloc-64 (Tainted: G    B             ): Redzone overwritten" 0 125
check "judge: hung task report (console only)" \
	judged "INFO: task fuzz-mshare:123 blocked for more than 30 seconds." "" 0 125
check "judge: RCU stall report" judged "" "rcu: INFO: rcu_sched self-detected stall on CPU" 0 125
check "judge: RCU stall on other CPUs" judged "" "rcu: INFO: rcu_sched detected stalls on CPUs/tasks:" 0 125
check "judge: list corruption report" \
	judged "" "list_add corruption. prev->next should be next (ffff888), but was 0000." 0 125
no_logs() {
	rm -f "$logs/console.log"
	"$run" --check-logs "$logs" 2>/dev/null
	[ $? = 126 ]
}
check "judge: a directory without console.log is refused (126)" no_logs
rm -rf "$logs"

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
		"guest hang fails the run (124)" "a BUG followed by a hang is a crash (125), not a hang" \
		"a WARNING only in /dev/kmsg fails a --fail-on-warning run (125)" \
		"the same run passes without --fail-on-warning (the warning is reported)"; do
		guest_tap "$d" "$why"
	done
else
	mkdir -p build/vm
	out=$(mktemp -d "$root/build/vm/launcher-test.XXXXXX") || exit 1
	check "guest command's exit status is returned" status_of 3 -- 'exit 3'
	# init exiting makes the kernel panic ("Attempted to kill init").
	check "guest kernel panic fails the run (125)" status_of 125 --append rdinit=/bin/false -- true
	check "guest hang fails the run (124)" status_of 124 --timeout 45 -- 'sleep 1000'
	# A level-2 record reaches the console; the guest then never finishes.
	check "a BUG followed by a hang is a crash (125), not a hang" status_of 125 --timeout 60 -- \
		'echo "<2>kernel BUG at mm/launcher-test.c:1!" >/dev/kmsg; sleep 1000'
	# Level 4 (the default for /dev/kmsg writes) is below the console's
	# loglevel: only the guest's kernel log capture (kmsg.txt) sees it.
	check "a WARNING only in /dev/kmsg fails a --fail-on-warning run (125)" status_of 125 --fail-on-warning -- \
		'echo "WARNING: CPU: 0 PID: 1 at mm/launcher-test.c:2 test+0x0/0x1" >/dev/kmsg'
	reported_not_failed() {
		"$run" --check-logs "$out" 2>"$out.err"
		[ $? = 0 ] && grep -q 'WARNING: CPU: 0 PID: 1 at mm/launcher-test.c:2' "$out.err" &&
			! grep -q 'launcher-test' "$out/console.log"
	}
	check "the same run passes without --fail-on-warning (the warning is reported)" reported_not_failed
	rm -rf "$out" "$out.err"
fi
finish
