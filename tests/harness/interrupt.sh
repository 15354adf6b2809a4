#!/bin/sh
# Interrupting a run leaves nothing behind: no worker process, no record or
# temporary file, no huge page added to the pool, no file in /dev/shm.
. "$(dirname "$0")/lib/common.sh"

# PID exists and is not a zombie.
running() { grep -q '^State:[[:space:]]*[^Z]' "/proc/$1/status" 2>/dev/null; }

# Workers of the run with parent pid $1.
children() { pgrep -P "$1"; }

# freeze_at PID N SECONDS: as soon as PID has N children, stop it
# (SIGSTOP) so that the signal sent next lands in the middle of the run
# however short the run is.
freeze_at() {
	i=0
	while [ $i -lt $(($3 * 20)) ] && running "$1"; do
		if [ "$(children "$1" | wc -l)" -ge "$2" ]; then
			kill -STOP "$1"
			return 0
		fi
		sleep 0.05; i=$((i + 1))
	done
	return 1
}

# gone_within MARKER SECONDS PIDS...: none of PIDS is still a process of
# this run (its command line carries MARKER).
gone_within() {
	marker=$1 secs=$2; shift 2
	i=0
	while [ $i -le $((secs * 2)) ]; do
		left=0
		for p in "$@"; do
			grep -qF -- "$marker" "/proc/$p/cmdline" 2>/dev/null && left=$((left + 1))
		done
		[ $left -eq 0 ] && return 0
		sleep 0.5; i=$((i + 1))
	done
	echo "# $left workers still alive"
	return 1
}

interrupt_case() { # name workers signal expected-exit backend size workload extra...
	name=$1 workers=$2 sig=$3 want=$4 backend=$5 size=$6 workload=$7; shift 7
	marker="$WORK/int-$name-$$.json"
	pool_before=$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages)
	shm_before=$(ls /dev/shm | wc -l)
	"$BIN" run --backend "$backend" --workers "$workers" --size "$size" --workload "$workload" --quiet \
		--out "$marker" "$@" 2>"$WORK/$name.err" &
	pid=$!
	if ! freeze_at $pid $((workers * 3 / 10)) 120; then
		kill -KILL $pid 2>/dev/null
		wait $pid
		if grep -q "could supply only\|no pool\|cannot raise\|cannot allocate" "$WORK/$name.err"; then
			skip "$name" "huge pages cannot be had now: $(cat "$WORK/$name.err")"
		else
			not_ok "$name: $((workers * 3 / 10)) of $workers workers never appeared: $(cat "$WORK/$name.err")"
		fi
		return
	fi
	pids=$(children $pid)
	kill -s "$sig" $pid
	kill -CONT $pid
	wait $pid
	rc=$?
	check "$name: $sig in the middle of a $workers-worker $backend run exits $want (got $rc)" [ $rc -eq "$want" ]
	check "$name: no worker process left" gone_within "$marker" 10 $pids
	check "$name: no record and no temporary file" [ -z "$(ls "$WORK" | grep "int-$name")" ]
	check "$name: says that no record was written" grep -q "no record written" "$WORK/$name.err"
	check_pool "$name: hugepage pool back to $pool_before" "$pool_before"
	check "$name: no file left in /dev/shm" [ "$(ls /dev/shm | wc -l)" -le "$shm_before" ]
}

# Touching 1 GiB page by page in 1000 workers takes far longer than the
# test waits, so the signal lands mid-run.
interrupt_case shm-int 1000 INT 130 shm 1G touch --page 4k
interrupt_case shm-term 200 TERM 143 shm 1G touch --page 4k
if "$BIN" backends | grep -q '^hugetlb-2m *yes'; then
	# 2 MiB- but not 1 GiB-aligned: no PMD sharing, so every worker faults
	# every huge page and the run lasts long enough to be interrupted.
	interrupt_case hugetlb-int 1000 INT 130 hugetlb-2m 2G touch --addr 0x20000200000
else
	skip "hugetlb-2m interrupted run" "hugetlb-2m not usable here"
fi

# The parent killed outright: workers die with it (PR_SET_PDEATHSIG).
marker="$WORK/int-kill-$$.json"
"$BIN" run --backend shm --workers 200 --size 1G --workload touch --page 4k --quiet --out "$marker" 2>/dev/null &
pid=$!
if freeze_at $pid 60 120; then
	pids=$(children $pid)
	kill -KILL $pid
	wait $pid 2>/dev/null
	check "parent SIGKILLed: every worker dies with it" gone_within "$marker" 10 $pids
else
	not_ok "parent SIGKILLed: workers never appeared"
	kill -KILL $pid 2>/dev/null
fi
finish
