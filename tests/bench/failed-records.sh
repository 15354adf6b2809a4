#!/bin/sh
# Records of runs that measured nothing (issue 44, item 7): every worker
# killed (the OOM killer's way), so 0 ns, 0 B and negative page tables
# (schema 7 and before: results.workers_measured 0), or the harness's
# results.run_failed (schema 8: null figures). bench/summary printed them as
# a point like any other and the figures failed ("gnuplot failed:"). Now
# summary lists them as failed runs and in no row, the report lists them
# among the failed, the figures draw the rest, and the runner counts such a
# run as failed (its record kept).
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/lib/tap.sh"
BIN="$ROOT/build/mshare-bench"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/mshare-bench-failed.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
bound() { timeout -s KILL 120 "$@"; }

printf 'name = failed\nbackends = shm\nworkers = 1, 2, 3\nsizes = 4M\nworkloads = pt-footprint\npage = 4k\n' >"$WORK/s.sweep"
R=$(bound python3 "$ROOT/bench/sweep" "$WORK/s.sweep" --results "$WORK/res" 2>"$WORK/sweep.err") ||
	bail "the fixture sweep runs: $(tail -3 "$WORK/sweep.err")"
rec=$R/records
# w2: as an all-OOM-killed run of schema 7 wrote it; w3: the harness's own
# failed record (every worker SIGKILLed in the workload).
python3 - "$rec/shm-4k-w2-s4M-pt-footprint.r1.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
res = r["results"]
res.pop("run_failed", None); res.pop("failure", None); res.pop("workers_stopped", None)
r["schema_version"] = 7
res["workers_measured"] = 0
res["oom_killed"] = 2
res["pagetables"]["meminfo_delta_bytes"] = -40960
res["pagetables"]["vmpte_sum_bytes"] = 0
res["pagetables"]["region_bytes_per_worker"] = 0
for k in ("p50", "p90", "p99", "max", "mean"):
    if k in res["fault_latency_ns"]:
        res["fault_latency_ns"][k] = 0
for k in ("p50", "p99", "p999", "mean", "min", "max"):
    if k in res["fault_cost"]["faults"]:
        res["fault_cost"]["faults"][k] = 0
json.dump(r, open(sys.argv[1], "w"))
PY
w3="$rec/shm-4k-w3-s4M-pt-footprint.r1.json"
rm "$w3"
timeout -s KILL 90 "$BIN" run --backend shm --workers 3 --size 4M --workload oltp --duration 5s --quiet \
	--out "$WORK/w3.json" 2>/dev/null &
pid=$!
i=0 runner= workers=
while [ $i -lt 100 ] && [ "$(echo "$workers" | grep -c .)" -lt 3 ]; do
	sleep 0.1; i=$((i + 1))
	runner=$(pgrep -P $pid | head -1)
	[ -n "$runner" ] && workers=$(pgrep -P "$runner")
done
sleep 1
kill -KILL $workers
wait $pid
cp "$WORK/w3.json" "$w3" 2>/dev/null
check "the fixture: a failed run of 3 workers recorded by the harness" [ -s "$w3" ]

bound python3 "$ROOT/bench/summary" "$R" >"$WORK/summary.out" 2>"$WORK/summary.err"
rc=$?
check "bench/summary runs (exit $rc)" [ "$rc" = 0 ]
check "no row of the table for the failed points (w2, w3), one for w1" \
	ev '! grep -q "^shm-4k-w[23]-s4M-pt-footprint  " "$WORK/summary.out" && grep -q "^shm-4k-w1-s4M-pt-footprint  " "$WORK/summary.out"'
check "the failed runs listed with their reasons" \
	ev 'grep -q "^  shm-4k-w2-s4M-pt-footprint r1: no worker was measured" "$WORK/summary.out" &&
	    grep -q "^  shm-4k-w3-s4M-pt-footprint r1: no worker was measured: of 3 started, 3 SIGKILLed" "$WORK/summary.out"'
sed 's/^/# /' "$WORK/summary.out" | tail -4

bound python3 "$ROOT/plots/plot-run" "$R" >"$WORK/plots.out" 2>&1
rc=$?
check "the figures are drawn from the rest (exit $rc, no 'gnuplot failed')" \
	ev '[ "$rc" = 0 ] && ! grep -q "gnuplot failed" "$WORK/plots.out"'
grep "gnuplot failed" "$WORK/plots.out" | head -3 | sed 's/^/# /'

# A run whose every record is such: no figure can be drawn, and the tool
# says why instead of running gnuplot on zeros ("gnuplot failed:").
cp -r "$R" "$WORK/allfailed"
rm -rf "$WORK/allfailed/plots"
cp "$rec/shm-4k-w2-s4M-pt-footprint.r1.json" "$WORK/allfailed/records/shm-4k-w1-s4M-pt-footprint.r1.json"
bound python3 "$ROOT/plots/plot-run" "$WORK/allfailed" >"$WORK/plots2.out" 2>&1
rc=$?
check "every record failed: plot-run says so (exit $rc), runs no gnuplot on them" \
	ev '! grep -q "gnuplot failed" "$WORK/plots2.out" && grep -q "no records to plot (its 3 records: runs that measured nothing" "$WORK/plots2.out"'
sed 's/^/# /' "$WORK/plots2.out" | head -3

bound python3 "$ROOT/bench/report" "$R" >"$WORK/report.out" 2>&1
rc=$?
check "the report lists both as failed (measured nothing) (exit $rc)" \
	ev '[ "$rc" = 0 ] && [ "$(grep -o "measured nothing" "$R/report/index.html" | wc -l)" -ge 2 ]'

# The runner counts a run whose record says it measured nothing as failed,
# and keeps the record: a harness wrapper turns each record it writes into
# such a record (as a run whose workers were all killed writes it).
cat >"$WORK/harness" <<EOS
#!/bin/sh
[ "\$1" = run ] && ! printf '%s\n' "\$@" | grep -qx -- --check || exec "$BIN" "\$@"
"$BIN" "\$@" || exit
for a in "\$@"; do out=\$a; done
python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
r["results"]["run_failed"] = True
r["results"]["failure"] = "no worker was measured (the test harness says so)"
json.dump(r, open(sys.argv[1], "w"))' "\$out"
exit 3
EOS
chmod +x "$WORK/harness"
printf 'name = counted\nbackends = shm\nworkers = 1\nsizes = 4M\nworkloads = pt-footprint\npage = 4k\n' >"$WORK/c.sweep"
timeout -s KILL 120 python3 "$ROOT/bench/sweep" "$WORK/c.sweep" --results "$WORK/res-c" --harness "$WORK/harness" \
	>"$WORK/c.out" 2>"$WORK/c.err"
rc=$?
C=$(ls -d "$WORK"/res-c/counted-* 2>/dev/null | head -1)
check "the runner counts a run that measured nothing as failed (exit $rc), its record kept" \
	ev '[ "$rc" = 1 ] && grep -q "1 failed runs" "$WORK/c.err" && grep -q "measured nothing: no worker was measured" "$C/failed.txt" &&
	    [ -s "$C/records/shm-4k-w1-s4M-pt-footprint.r1.json" ]'
check "... and does not retry it (its record stays; a retry could only fail on it)" \
	ev '! grep -q "retrying" "$WORK/c.err" && grep -q "exit 3, measured nothing" "$C/failed.txt"'
sed 's/^/# /' "$C/failed.txt" 2>/dev/null

# Inside a memory cgroup the OOM killer took the runner (the harness parent
# is shielded, the runner was not): the runner is shielded too (root), and
# its harness child starts from 0 (the harness shields itself; its workers
# stay the OOM killer's).
if [ "$(id -u)" = 0 ] && sh -c 'echo -1 >/proc/self/oom_score_adj' 2>/dev/null; then
	printf 'name = oom\nbackends = shm\nworkers = 2\nsizes = 4M\nworkloads = oltp\nargs = --duration 4s\n' >"$WORK/o.sweep"
	timeout -s KILL 120 python3 "$ROOT/bench/sweep" "$WORK/o.sweep" --results "$WORK/res-oom" >/dev/null 2>&1 &
	sweeper=$!
	i=0 harness= workers=
	while [ $i -lt 200 ] && [ "$(echo "$workers" | grep -c .)" -lt 2 ]; do
		sleep 0.1; i=$((i + 1))
		runner=$(pgrep -f "bench/sweep $WORK/o.sweep" | tail -1) # under timeout (and a pyenv shim)
		[ -n "$runner" ] && harness=$(pgrep -P "$runner" | head -1)
		[ -n "$harness" ] && workers=$(pgrep -P "$harness")
	done
	adj() { cat "/proc/$1/oom_score_adj" 2>/dev/null; }
	r=$(adj "$runner") h=$(adj "$harness") w=$(adj "$(echo "$workers" | head -1)")
	check "oom_score_adj: runner -1000, harness parent -1000, a worker 0 (got $r, $h, $w)" \
		ev '[ "$r" = -1000 ] && [ "$h" = -1000 ] && [ "$w" = 0 ]'
	wait $sweeper
else
	skip "the runner is shielded from the OOM killer" "needs root and an oom_score_adj that can be lowered (not here)"
fi
finish
