#!/bin/sh
# The layout a run's workers inherit (harness/layout.h): `run` re-executes
# itself without address-space randomization, says so in environment.aslr,
# keeps it when MSHARE_BENCH_ASLR=on, and a worker's own page tables are
# then no more than with randomization.
. "$(dirname "$0")/lib/common.sh"

r() { # out env-assignments...
	out=$1; shift
	env "$@" "$BIN" run --backend shm --workers 4 --size 8M --workload touch --quiet --out "$out" 2>"$out.err" ||
		{ cat "$out.err"; not_ok "run $*"; }
}

r "$WORK/off.json"
r "$WORK/on.json" MSHARE_BENCH_ASLR=on
if [ "$(cat /proc/sys/kernel/randomize_va_space 2>/dev/null)" = 0 ]; then
	check "randomization off system-wide: both runs say so" \
		jtest "$WORK/off.json" 'r["environment"]["aslr"] == "off (kernel.randomize_va_space=0)"'
	skip "a run with randomization" "kernel.randomize_va_space is 0 on this machine"
else
	check "a run re-executes itself without randomization and says so" \
		jtest "$WORK/off.json" 'r["environment"]["aslr"] == "off (ADDR_NO_RANDOMIZE)"'
	check "MSHARE_BENCH_ASLR=on keeps randomization and says so" \
		jtest "$WORK/on.json" 'r["environment"]["aslr"] == "on"'
	off=$(jget "$WORK/off.json" results.worker_memory.pagetables_baseline_bytes)
	on=$(jget "$WORK/on.json" results.worker_memory.pagetables_baseline_bytes)
	echo "# a worker's own page tables: $off bytes without randomization, $on with"
	check "a worker's own page tables without randomization are no more than with it" \
		test "${off%.*}" -le "${on%.*}"
fi
# Already without randomization (setarch -R): no second exec, same answer.
if command -v setarch >/dev/null 2>&1; then
	setarch "$(uname -m)" -R "$BIN" run --backend shm --workers 2 --size 8M --workload touch --quiet \
		--out "$WORK/setarch.json" 2>"$WORK/setarch.err" || { cat "$WORK/setarch.err"; not_ok "run under setarch -R"; }
	check "under setarch -R the run says ADDR_NO_RANDOMIZE" \
		jtest "$WORK/setarch.json" 'r["environment"]["aslr"].startswith("off")'
fi
# The re-exec keeps the arguments: a bad one is still named, exit 2.
"$BIN" run --backend shm --workers 2 --size 12XB --workload touch >/dev/null 2>"$WORK/bad.err"
check "the re-executed run still refuses a bad size with exit 2" test $? -eq 2
check "and names it" grep -q "12XB" "$WORK/bad.err"
finish
