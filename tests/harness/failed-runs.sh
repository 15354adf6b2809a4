#!/bin/sh
# A run that measured nothing says so (issue 44, items 6 and 7): a worker
# stopped by SIGSTOP hung the run with no message and, once continued, the
# run exited 0 with its stop counted as fault time; a run whose workers were
# all killed (the OOM killer's way: SIGKILL from outside) exited 0 with 0 ns,
# 0 B and negative page tables. Now such a run ends (a stop is waited for
# at most 10 s), exits 3, and its record says results.run_failed true, why
# (results.failure), with every figure null and the workers' fates counted.
# Every run is bounded (timeout -s KILL 90): a hang fails the test.
. "$(dirname "$0")/lib/common.sh"

opts="--backend shm --workers 2 --size 16M --workload oltp --quiet"
# start NAME: a run in the background; its pid in $pid, once both workers are up.
start() {
	timeout -s KILL 90 "$BIN" run $opts --duration 4s --out "$WORK/$1.json" 2>"$WORK/$1.err" &
	pid=$!
	i=0 runner= workers=
	while [ $i -lt 100 ] && [ "$(echo "$workers" | grep -c .)" -lt 2 ]; do
		sleep 0.1; i=$((i + 1))
		runner=$(pgrep -P $pid | head -1) # timeout's child: the harness
		[ -n "$runner" ] && workers=$(pgrep -P "$runner")
	done
	sleep 1 # in the workload
}
# nulls NAME: the record's figures are null, its counts are not.
nulls() {
	jtest "$WORK/$1.json" 'r["results"]["run_failed"] is True and r["results"]["failure"]
	 and r["results"]["time_s"]["touch"] is None and r["results"]["fault_latency_ns"]["p50"] is None
	 and r["results"]["workload"]["ops"] is None and r["results"]["pagetables"]["meminfo_delta_bytes"] is None
	 and r["results"]["workers_started"] == 2'
}

start stopcont
w=$(echo "$workers" | head -1)
kill -STOP "$w"; sleep 2; kill -CONT "$w"
wait $pid; rc=$?
check "a worker stopped for 2 s then continued: the run exits 3 (got $rc)" [ "$rc" = 3 ]
check "it says at once that the worker is stopped" grep -q "worker [01] (pid $w) is stopped (SIGSTOP)" "$WORK/stopcont.err"
check "the record: run_failed, the stop named, workers_stopped 1, figures null" \
	ev 'nulls stopcont && jtest "$WORK/stopcont.json" "r[\"results\"][\"workers_stopped\"] == 1 and \"stopped by STOP\" in r[\"results\"][\"failure\"]"'
sed 's/^/# /' "$WORK/stopcont.err"

start stopped
w=$(echo "$workers" | head -1)
kill -STOP "$w"
wait $pid; rc=$?
check "a worker stopped for good: the run ends by itself, exit 3 (got $rc; 137 is the test's bound)" [ "$rc" = 3 ]
check "it says the workers were killed after the bound" grep -q "stopped for 10 s: killing every worker" "$WORK/stopped.err"
check "the record says so, with null figures" \
	ev 'nulls stopped && jtest "$WORK/stopped.json" "\"still stopped after 10 s\" in r[\"results\"][\"failure\"]"'
left=0
for p in $workers; do kill -0 "$p" 2>/dev/null && left=$((left + 1)); done
check "no worker is left behind ($left)" [ "$left" = 0 ]

start allkilled
kill -KILL $workers
wait $pid; rc=$?
check "every worker SIGKILLed in the workload (as the OOM killer does): exit 3 (got $rc), not 0" [ "$rc" = 3 ]
check "the record: run_failed, 'no worker was measured', figures null, the 2 kills counted" \
	ev 'nulls allkilled && jtest "$WORK/allkilled.json" "\"no worker was measured\" in r[\"results\"][\"failure\"]
	 and r[\"results\"][\"oom_killed\"] + r[\"results\"][\"sigkilled_not_oom\"] == 2 and r[\"results\"][\"workers_measured\"] == 0"'
sed 's/^/# /' "$WORK/allkilled.err"

# The human summary (without --quiet) gives no figure for such a run.
opts="--backend shm --workers 2 --size 16M --workload oltp"
start loud
kill -KILL $workers
wait $pid; rc=$?
check "without --quiet the summary says FAILED, nothing measured, and shows no figure (exit $rc)" \
	ev '[ "$rc" = 3 ] && grep -q "oltp: FAILED, nothing measured: no worker was measured" "$WORK/loud.err" &&
	    ! grep -q "first-touch latency\|page tables for the region" "$WORK/loud.err"'
opts="$opts --quiet"

# A clean run is not failed: run_failed false, failure null, figures numbers.
timeout -s KILL 90 "$BIN" run $opts --duration 300ms --out "$WORK/clean.json" 2>"$WORK/clean.err"
rc=$?
check "a clean run: exit 0 (got $rc), run_failed false, failure null, figures present" \
	ev '[ "$rc" = 0 ] && jtest "$WORK/clean.json" "r[\"results\"][\"run_failed\"] is False and r[\"results\"][\"failure\"] is None
	 and r[\"results\"][\"workers_stopped\"] == 0 and r[\"results\"][\"time_s\"][\"touch\"] > 0"'
finish
