#!/bin/sh
# The hugepage pool survives runs at once and runs that die: two hugetlb
# runs at once add no more than they need and leave the pool as it was; a
# parent SIGKILLed at any step of the pool's set-up or give-back, or with
# its workers up, leaves a ledger entry that `mshare-bench cleanup` (or the
# next run) settles, back to the pool's value exactly; a reused pid is not
# taken for the run; a user who is not root uses the free pool but never
# changes it. nr_hugepages is put back whatever happens: every page this
# test adds, by a run or by hand, is in the ledger first, and the trap
# kills the test's runs and settles the ledger with `cleanup` (never an
# absolute write of nr_hugepages, which would undo other jobs' changes).
. "$(dirname "$0")/lib/common.sh"

HP=/sys/kernel/mm/hugepages/hugepages-2048kB
LEDGER=/run/mshare-bench/hugepool
pool() { cat "$HP/nr_hugepages"; }
surplus() { cat "$HP/surplus_hugepages"; }
avail() { echo $(($(cat "$HP/free_hugepages") - $(cat "$HP/resv_hugepages"))); }
# Ledger entries of run PID (named PID-STARTTIME-2048kB); other runs on
# the machine may have entries of their own at the same time.
entries_of() { ls "$LEDGER" 2>/dev/null | grep -c "^$1-"; }

if [ "$(id -u)" -ne 0 ] || [ ! -w "$HP/nr_hugepages" ]; then
	skip "hugepage pool tests" "need root and a writable $HP/nr_hugepages"
	finish; exit
fi
if ! "$BIN" backends | grep -q '^hugetlb-2m *yes'; then
	skip "hugepage pool tests" "hugetlb-2m not usable here: $("$BIN" backends | grep '^hugetlb-2m')"
	finish; exit
fi

orig=$(pool)
BG=""
restore() {
	for p in $BG; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	# Hand-made entries of this (live) shell: dead now, so cleanup settles them.
	for f in $FAKES; do [ -f "$LEDGER/$f" ] && sed -i 's/ start=[0-9]* / start=1 /' "$LEDGER/$f"; done
	"$BIN" cleanup >/dev/null 2>&1
	for f in $FAKES; do rm -f "$LEDGER/$f"; done
	rm -rf "$WORK"
}
FAKES=""
trap restore EXIT
trap 'exit 1' INT TERM HUP PIPE

# Another process using the pool at the same moment makes "back to its
# value" unprovable: skip then, as check_pool does.
# Sets UNDISTURBED=yes when the pool is back, else the checks that need a
# quiet pool skip (another helper or tool raised it meanwhile).
pool_is() { # what want
	if pool_back_to "$2" 20; then
		ok "$1"
		UNDISTURBED=yes
	else
		UNDISTURBED="no: another process is using the pool (was $orig, now $(pool))"
		if [ "$orig" != 0 ]; then
			skip "$1" "$UNDISTURBED"
		else
			not_ok "$1 (now $(pool), want $2)"
		fi
	fi
}
pool_same() { # what before: unchanged (or skip: others changed it)
	if [ "$(pool)" = "$2" ]; then ok "$1"
	elif [ "$orig" != 0 ]; then skip "$1" "another process is using the pool (was $2, now $(pool))"
	else not_ok "$1 (now $(pool))"; fi
}
quiet_check() { # what command...: check, or skip when the pool was disturbed
	if [ "$UNDISTURBED" = yes ]; then check "$@"; else skip "$1" "$UNDISTURBED"; fi
}

# --- two runs at once ------------------------------------------------------
# Each needs 512 pages; the pool may grow by at most what the two need
# beyond what was free, and must come back to its value.
pair() { # round
	for k in a b; do
		"$BIN" run --backend hugetlb-2m --workers 100 --size 1G --workload pt-footprint --quiet \
			--out "$WORK/pair$1$k.json" 2>"$WORK/pair$1$k.err" &
		eval "pid_$k=\$!"
	done
	BG="$pid_a $pid_b"
	peak=$(pool)
	while kill -0 "$pid_a" 2>/dev/null || kill -0 "$pid_b" 2>/dev/null; do
		p=$(pool); [ "$p" -gt "$peak" ] && peak=$p
	done
	wait "$pid_a"; rc_a=$?
	wait "$pid_b"; rc_b=$?
	BG=""
	clean=yes
	for k in a b; do
		eval "rc=\$rc_$k"
		if [ "$rc" -ne 0 ] && { [ "$rc" -ne 1 ] || [ -e "$WORK/pair$1$k.json" ] || [ ! -s "$WORK/pair$1$k.err" ]; }; then
			clean="no: run $k exit $rc: $(cat "$WORK/pair$1$k.err")"
		fi
	done
	check "round $1: both runs succeed or one fails cleanly (exits $rc_a, $rc_b) $clean" [ "$clean" = yes ]
	added=0
	pool_is "round $1: pool back to $orig" "$orig"
	# Others may take free pages meanwhile (then a run adds more), but no
	# run may add more than its own 512 pages (the old bug: 776 + 980).
	max=0
	for k in a b; do
		[ -e "$WORK/pair$1$k.json" ] || continue
		n=$(jget "$WORK/pair$1$k.json" results.hugepages_added_to_pool)
		added=$((added + n)); [ "$n" -gt "$max" ] && max=$n
	done
	check "round $1: no run added more than the 512 pages it needs (largest $max, both $added)" \
		ev '[ "$max" -le 512 ] && [ "$added" -le 1024 ]'
	quiet_check "round $1: the pool grew by at most 1024 pages (peak $peak from $orig)" [ "$peak" -le $((orig + 1024)) ]
	quiet_check "round $1: no surplus pages left ($(surplus))" [ "$(surplus)" -eq 0 ]
	quiet_check "round $1: no ledger entry of either run left" [ "$(entries_of $pid_a)$(entries_of $pid_b)" = 00 ]
}
pair 1
pair 2
pair 3

# --- SIGKILL at each step of the pool's set-up and give-back ---------------
# A region larger than what is free, so the run must raise the pool.
kill_case() { # point what-to-expect-before-cleanup
	point=$1
	a0=$(avail); [ "$a0" -lt 0 ] && a0=0
	pages=$((a0 + 64))
	MSHARE_BENCH_KILL_AT=$1 "$BIN" run --backend hugetlb-2m --workers 4 --size $((pages * 2))M \
		--workload pt-footprint --quiet --out "$WORK/kill-$1.json" 2>"$WORK/kill-$1.err" &
	pid=$!
	BG=$pid
	# 2>/dev/null: the shell's "Killed" for the expected SIGKILL (the check
	# below reads the status)
	wait $pid 2>/dev/null
	rc=$?
	check "SIGKILL at $1: the run died by SIGKILL (exit $rc)" [ "$rc" -eq 137 ]
	check "SIGKILL at $1: it left a ledger entry" [ "$(entries_of $pid)" -eq 1 ]
	left=$(pool)
	if [ "$2" = cleanup ]; then
		"$BIN" cleanup >"$WORK/cleanup-$1.out" 2>&1
		crc=$?
		check "SIGKILL at $1: cleanup exits 0 ($crc): $(tr '\n' ' ' <"$WORK/cleanup-$1.out")" [ "$crc" -eq 0 ]
	else
		# The next run, of another backend, settles it first.
		"$BIN" run --backend shm --workers 2 --size 4M --workload touch --quiet --out "$WORK/next-$1.json" \
			2>"$WORK/next-$1.err"
		crc=$?
		check "SIGKILL at $1: the next run succeeds ($crc) and says what it gave back: $(cat "$WORK/next-$1.err")" \
			ev '[ "$crc" -eq 0 ] && grep -q "gave back" "$WORK/next-$point.err"'
	fi
	pool_is "SIGKILL at $1: pool back from $left to $orig" "$orig"
	quiet_check "SIGKILL at $1: its ledger entry is gone" [ "$(entries_of $pid)" -eq 0 ]
}
kill_case hugepool-ledger cleanup
kill_case hugepool-raised cleanup
kill_case hugepool-added cleanup
kill_case hugepool-release next-run
kill_case hugepool-given cleanup

# SIGKILL of cleanup itself while it gives back a dead run's pages: the
# next cleanup still gives back exactly what is owed, no more.
for point in hugepool-giving hugepool-given; do
	a0=$(avail); [ "$a0" -lt 0 ] && a0=0
	MSHARE_BENCH_KILL_AT=hugepool-added "$BIN" run --backend hugetlb-2m --workers 2 --size $(((a0 + 64) * 2))M \
		--workload pt-footprint --quiet --out "$WORK/kc-$point.json" 2>/dev/null &
	pid=$!
	BG=$pid
	wait $pid 2>/dev/null	# killed, as it should be: not the shell's "Killed"
	left=$(pool)
	MSHARE_BENCH_KILL_AT=$point "$BIN" cleanup >/dev/null 2>&1
	rc=$?
	check "cleanup SIGKILLed at $point (exit $rc) leaves the entry" ev '[ $rc -eq 137 ] && [ "$(entries_of $pid)" -eq 1 ]'
	"$BIN" cleanup >"$WORK/kc-$point.out" 2>&1
	rc=$?
	check "... the next cleanup exits 0: $(tr '\n' ' ' <"$WORK/kc-$point.out")" [ $rc -eq 0 ]
	pool_is "... pool back from $left to $orig" "$orig"
	quiet_check "... its ledger entry is gone" [ "$(entries_of $pid)" -eq 0 ]
done

# SIGKILL by timing: as soon as the pool has grown (set-up under way).
# (Background runs are not wrapped in timeout: the pid must be the run's.)
a0=$(avail); [ "$a0" -lt 0 ] && a0=0
"$BIN" run --backend hugetlb-2m --workers 4 --size $(((a0 + 1024) * 2))M --workload pt-footprint --quiet \
	--out "$WORK/kill-setup.json" 2>/dev/null &
pid=$!
BG=$pid
i=0
while [ "$(pool)" -le "$orig" ] && [ $i -lt 20000 ] && kill -0 $pid 2>/dev/null; do i=$((i + 1)); done
kill -KILL $pid 2>/dev/null
wait $pid 2>/dev/null
rc=$?
BG=""
grown=$(pool)
check "SIGKILL during set-up: killed (exit $rc) with the pool grown ($orig -> $grown)" ev '[ $rc -eq 137 ] && [ "$grown" -gt "$orig" ]'
check "SIGKILL during set-up: a ledger entry is left" [ "$(entries_of $pid)" -eq 1 ]
"$BIN" cleanup >"$WORK/cleanup-setup.out" 2>&1
check "SIGKILL during set-up: cleanup exits 0: $(tr '\n' ' ' <"$WORK/cleanup-setup.out")" [ $? -eq 0 ]
pool_is "SIGKILL during set-up: pool back from $grown to $orig" "$orig"
quiet_check "SIGKILL during set-up: its ledger entry is gone" [ "$(entries_of $pid)" -eq 0 ]

# SIGKILL with workers up: the parent is stopped as soon as 60 of its 200
# workers exist, then killed (the workload lasts 120 s: the kill lands
# mid-run however slow the set-up is).
children() { pgrep -P "$1"; }
a0=$(avail); [ "$a0" -lt 0 ] && a0=0
"$BIN" run --backend hugetlb-2m --workers 200 --size $(((a0 + 64) * 2))M --workload sga-read --duration 120s --quiet \
	--out "$WORK/kill-workers.json" 2>"$WORK/kill-workers.err" &
pid=$!
BG=$pid
i=0
while [ "$(children $pid | wc -l)" -lt 60 ] && [ $i -lt 6000 ] && kill -0 $pid 2>/dev/null; do i=$((i + 1)); done
kill -STOP $pid
up=$(children $pid | wc -l)
kill -KILL $pid
wait $pid 2>/dev/null
rc=$?
BG=""
grown=$(pool)
check "SIGKILL with workers up: killed (exit $rc) with $up workers up, pool $orig -> $grown" ev '[ $rc -eq 137 ] && [ "$up" -ge 60 ]'
check "SIGKILL with workers up: a ledger entry is left" [ "$(entries_of $pid)" -eq 1 ]
i=0
while [ -n "$(pgrep -f "$WORK/kill-workers.json")" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
check "SIGKILL with workers up: every worker died with the parent" [ -z "$(pgrep -f "$WORK/kill-workers.json")" ]
"$BIN" cleanup >"$WORK/cleanup-workers.out" 2>&1
check "SIGKILL with workers up: cleanup exits 0: $(tr '\n' ' ' <"$WORK/cleanup-workers.out")" [ $? -eq 0 ]
pool_is "SIGKILL with workers up: pool back from $grown to $orig" "$orig"
quiet_check "SIGKILL with workers up: its ledger entry is gone" [ "$(entries_of $pid)" -eq 0 ]

# --- the ledger's own edge cases -------------------------------------------
mkdir -p "$LEDGER"
boot=$(cat /proc/sys/kernel/random/boot_id)
start_of() { awk '{ sub(/.*\) /, ""); print $20 }' "/proc/$1/stat"; }
entry() { # name pid start added [boot [pending from]]
	FAKES="$FAKES $1"
	echo "mshare-bench-hugepool 1 boot=${5:-$boot} pid=$2 start=$3 page_kb=2048 added=$4 pending=${6:-0} from=${7:-0}" \
		>"$LEDGER/$1"
}
# raise_by NAME PID START N: raise the pool by N pages by hand, as a run
# does: the entry says what is about to change before it changes.
raise_by() {
	p0=$(($(pool) - $(surplus)))
	entry "$1" "$2" "$3" 0 "$boot" "$4" "$p0"
	echo $((p0 + $4)) >"$HP/nr_hugepages"
}
# A live pid with another start time: the pid was reused, the run is dead.
raise_by fake-reused $$ 1 3
"$BIN" cleanup >"$WORK/reused.out" 2>&1
check "a reused pid (live pid, other start time) counts as dead: cleanup exits 0" [ $? -eq 0 ]
pool_is "... and its 3 pages go back (pool $orig)" "$orig"
# A dead run that claims more pages than the pool now holds (someone shrank
# the pool by hand after it died): settled at once, not kept for ever.
if [ "$(pool)" -eq 0 ]; then
	entry fake-shrunk 1 1 66
	"$BIN" cleanup >"$WORK/shrunk.out" 2>&1
	rc=$?
	check "a dead run's 66 pages with the pool at 0: cleanup exits 0 and drops the entry (exit $rc)" \
		ev '[ $rc -eq 0 ] && [ ! -e "$LEDGER/fake-shrunk" ] && grep -q "the pool holds only 0" "$WORK/shrunk.out"'
	pool_same "... and the pool stays at 0" 0
else
	skip "a dead run's claim above the pool" "the pool holds $(pool) pages: the case needs it at 0"
fi
# A live run (this shell, its real start time) is left alone.
entry fake-live $$ "$(start_of $$)" 0
before=$(pool)
"$BIN" cleanup >"$WORK/live.out" 2>&1
check "a live run's entry is left alone" [ -e "$LEDGER/fake-live" ]
pool_same "... and the pool untouched" "$before"
rm -f "$LEDGER/fake-live"
# An entry of an earlier boot: dropped, the pool untouched.
entry fake-boot 1 1 3 00000000-0000-0000-0000-000000000000
before=$(pool)
"$BIN" cleanup >/dev/null 2>&1
check "an entry of an earlier boot is dropped" [ ! -e "$LEDGER/fake-boot" ]
pool_same "... without touching the pool" "$before"
# An unreadable entry: named, left alone, exit 1.
FAKES="$FAKES fake-garbage"
printf 'garbage\n' >"$LEDGER/fake-garbage"
"$BIN" cleanup >"$WORK/garbage.out" 2>&1
rc=$?
check "an unreadable entry: cleanup exits 1 and names it (exit $rc)" ev '[ $rc -eq 1 ] && grep -q fake-garbage "$WORK/garbage.out"'
rm -f "$LEDGER/fake-garbage"
msg=$("$BIN" cleanup --bogus 2>&1)
rc=$?
check "cleanup --bogus exits 2 naming it: $msg" ev '[ $rc -eq 2 ] && printf "%s" "$msg" | grep -q -- --bogus'

# --- a user who is not root ------------------------------------------------
if ! command -v setpriv >/dev/null 2>&1; then
	skip "non-root hugetlb runs" "setpriv is not installed"
else
	nobody() { setpriv --reuid 65534 --regid 65534 --clear-groups "$@"; }
	chmod 711 "$WORK"
	mkdir "$WORK/nobody" && chmod 777 "$WORK/nobody"
	# Room for 2 pages in the free pool, made by root.
	a0=$(avail); [ "$a0" -lt 0 ] && a0=0
	grow=0; [ "$a0" -lt 2 ] && grow=$((2 - a0))
	raise_by fake-grow $$ "$(start_of $$)" "$grow" # this shell's: left alone while it lives
	before=$(pool)
	nobody "$BIN" run --backend hugetlb-2m --workers 2 --size 4M --workload touch --quiet \
		--out "$WORK/nobody/ok.json" 2>"$WORK/nobody.err" &
	pid=$! # setpriv execs the run: same pid
	wait $pid
	rc=$?
	check "uid 65534: a hugetlb-2m run from the free pool succeeds (exit $rc): $(cat "$WORK/nobody.err")" [ $rc -eq 0 ]
	pool_same "uid 65534: ... and the pool is unchanged ($before)" "$before"
	check "uid 65534: ... and no ledger entry" [ "$(entries_of $pid)" -eq 0 ]
	a1=$(avail)
	nobody "$BIN" run --backend hugetlb-2m --workers 2 --size $(((a1 + 8) * 2))M --workload touch --quiet \
		--out "$WORK/nobody/no.json" 2>"$WORK/nobody2.err"
	rc=$?
	check "uid 65534: more than the free pool is refused (exit $rc): $(cat "$WORK/nobody2.err")" \
		ev '[ $rc -eq 1 ] && grep -q "not writable (needs root)" "$WORK/nobody2.err" && [ ! -e "$WORK/nobody/no.json" ]'
	pool_same "uid 65534: ... and the pool is unchanged" "$before"
	sed -i 's/ start=[0-9]* / start=1 /' "$LEDGER/fake-grow" # now dead: cleanup gives the pages back
	"$BIN" cleanup >/dev/null 2>&1
	# Dead run's entry: a user who is not root is told to ask root.
	raise_by fake-nobody 999999999 1 1
	nobody "$BIN" cleanup >"$WORK/nobody3.out" 2>&1
	rc=$?
	check "uid 65534: cleanup with a dead run's entry exits 1 and says root is needed (exit $rc)" \
		ev '[ $rc -eq 1 ] && grep -q "as root" "$WORK/nobody3.out"'
	"$BIN" cleanup >/dev/null 2>&1
	pool_is "root's cleanup then gives the page back" "$orig"
fi
finish
