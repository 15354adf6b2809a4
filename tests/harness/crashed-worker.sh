#!/bin/sh
# A worker that dies of a signal in the middle of a run: the run ends with
# status 3 and still writes its record, which counts the crash
# (results.workers_crashed) and names the signal (results.worker_signals.SEGV);
# the record's columns are the same as a clean run's, so its row is appended
# to the same --csv file. The other workers may wait for ever on a latch the
# dead one held (oltp): the run kills them (results.workers_killed_stuck)
# instead of hanging, and those kills are not counted as deaths.
. "$(dirname "$0")/lib/common.sh"

csv="$WORK/runs.csv"
opts="--backend shm --size 16M --workload oltp --page 4k --quiet --csv $csv"
"$BIN" run $opts --workers 2 --duration 200ms --out "$WORK/clean.json" 2>"$WORK/clean.err" ||
	bail "a clean 2-worker oltp run failed: $(cat "$WORK/clean.err")"

# 3 workers for 5 s; as soon as they run, SIGSEGV to one of them.
"$BIN" run $opts --workers 3 --duration 5s --out "$WORK/crash.json" 2>"$WORK/crash.err" &
pid=$!
victim=
i=0
while [ $i -lt 200 ] && [ -z "$victim" ]; do
	if [ "$(pgrep -P $pid | wc -l)" -ge 3 ]; then
		sleep 1	# past the start barrier: the workers are in the workload
		victim=$(pgrep -P $pid | head -n 1)
	fi
	sleep 0.1; i=$((i + 1))
done
[ -n "$victim" ] || { kill -KILL $pid; wait $pid; bail "the 3 workers never appeared: $(cat "$WORK/crash.err")"; }
kill -SEGV "$victim"
wait $pid
rc=$?
check "a run with a crashed worker exits 3 (got $rc)" [ "$rc" = 3 ]
check "it writes its record all the same" [ -s "$WORK/crash.json" ]
check "the record counts the crash and names the signal: workers_crashed 1, worker_signals.SEGV 1" \
	jtest "$WORK/crash.json" 'r["results"]["workers_crashed"] == 1 and r["results"]["worker_signals"]["SEGV"] == 1 and r["results"]["worker_signals"]["KILL"] == 0'
check "a clean run's record has the same worker_signals keys, all 0" \
	python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))["results"]["worker_signals"]
b = json.load(open(sys.argv[2]))["results"]["worker_signals"]
sys.exit(0 if sorted(a) == sorted(b) and not any(a.values()) and "other" in a else 1)' "$WORK/clean.json" "$WORK/crash.json"
check "the crashed run's row is appended to the clean run's --csv file (same columns)" \
	python3 -c '
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
sys.exit(0 if len(rows) == 3 and len(rows[1]) == len(rows[0]) == len(rows[2]) else 1)' "$csv"
stuck=$(jget "$WORK/crash.json" results.workers_killed_stuck 2>/dev/null)
if [ "${stuck:-0}" -gt 0 ]; then
	check "the $stuck workers stuck behind the dead one were killed and said so" \
		grep -q "killing them; the record counts them as workers_killed_stuck" "$WORK/crash.err"
else
	ok "no worker was stuck behind the dead one (it held no latch when it died)"
fi
sed 's/^/# /' "$WORK/crash.err"

# Deterministic: the test build's dummy workload with --hold-and-die on,
# worker 0 dies holding a latch the other two wait for.
DUMMY="$ROOT/build/tests/harness/mshare-bench-dummy"
"$DUMMY" run --backend shm --size 1M --workers 3 --workload dummy-poke --hold-and-die on --ops 10 \
	--out "$WORK/stuck.json" --csv "$WORK/stuck.csv" 2>"$WORK/stuck.err"
rc=$?
check "worker 0 dies holding a latch: the run ends, exit 3 (got $rc)" [ "$rc" = 3 ]
check "the two workers stuck behind it are killed and said so" \
	grep -q "2 others have not finished it .* killing them; the record counts them as workers_killed_stuck" "$WORK/stuck.err"
check "the record: 1 crashed (SEGV), 2 killed as stuck, none counted as SIGKILLed or OOM-killed" \
	jtest "$WORK/stuck.json" 'r["results"]["workers_crashed"] == 1 and r["results"]["workers_killed_stuck"] == 2
	 and r["results"]["worker_signals"]["SEGV"] == 1 and r["results"]["worker_signals"]["KILL"] == 0
	 and r["results"]["sigkilled_not_oom"] == 0 and r["results"]["oom_killed"] == 0'
sed 's/^/# /' "$WORK/stuck.err"
finish
