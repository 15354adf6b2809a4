#!/bin/sh
# What another user (or a mistake) can put in a run directory (issue 44,
# items 5 and 8): a FIFO named like a record hung bench/summary, headline,
# report, compare and `plan --calibrate` for ever, and `bench/sweep
# --resume` then ignored SIGINT and SIGTERM and kept the run's lock; a FIFO
# or a symbolic link as runs.log hung the runner or wrote through the link.
# Every tool here runs under a bound (timeout -s KILL 30): a hang is a
# failure (exit 137), not a stuck test. Each must end non-zero, name the
# file and say what it is, and change nothing it did not make.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/lib/tap.sh"
BIN="$ROOT/build/mshare-bench"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/mshare-bench-special.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
bound() { timeout -s KILL 30 "$@"; }

printf 'name = special\nbackends = shm\nworkers = 1\nsizes = 4M\nworkloads = pt-footprint\npage = 4k\n' >"$WORK/s.sweep"
R=$(bound python3 "$ROOT/bench/sweep" "$WORK/s.sweep" --results "$WORK/res" 2>"$WORK/sweep.err") ||
	bail "the fixture sweep runs: $(tail -3 "$WORK/sweep.err")"
point=$(ls "$R/records" | sed 's/\.r1\.json$//')
fifo="$R/records/$point.r2.json"
mkfifo "$fifo"

for tool in summary headline report compare; do
	out="$WORK/$tool.out"
	case $tool in
	compare) bound python3 "$ROOT/bench/compare" "$R" "$R" >"$out" 2>"$WORK/$tool.err" ;;
	report) bound python3 "$ROOT/bench/report" "$R" >"$out" 2>"$WORK/$tool.err" ;;
	*) bound python3 "$ROOT/bench/$tool" "$R" >"$out" 2>"$WORK/$tool.err" ;;
	esac
	rc=$?
	check "bench/$tool with a FIFO named like a record ends, exit non-zero and not killed (got $rc)" \
		ev '[ "$rc" != 0 ] && [ "$rc" != 137 ]'
	check "bench/$tool names the FIFO and says it is one" \
		grep -qF "$fifo: unreadable record: not a regular file (a FIFO)" "$WORK/$tool.err"
done
check "bench/report wrote no page" [ ! -e "$R/report" ]
bound "$BIN" plan --calibrate "$R" >"$WORK/plan.out" 2>"$WORK/plan.err"
rc=$?
check "plan --calibrate ends (exit $rc, not killed)" [ "$rc" != 137 ]
check "plan --calibrate names the FIFO as not read" \
	grep -qF "$fifo: not a regular file (a FIFO); not read" "$WORK/plan.out" "$WORK/plan.err"

bound python3 "$ROOT/bench/sweep" --resume "$R" >"$WORK/resume.out" 2>"$WORK/resume.err"
rc=$?
check "sweep --resume with the FIFO ends, exit 1 (got $rc)" [ "$rc" = 1 ]
check "... naming it" grep -qF "$fifo: unreadable record: not a regular file (a FIFO)" "$WORK/resume.err"
check "... and leaves the run's lock free" python3 -c '
import fcntl, sys
f = open(sys.argv[1])
fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)' "$R/.lock"
rm -f "$fifo"

# plot-run writes its figures by name (gnuplot too): a link planted among
# them is refused, nothing written through it.
mkdir -p "$R/plots"
echo "not a figure" >"$WORK/figure-victim"
ln -s "$WORK/figure-victim" "$R/plots/1-pagetables-host.png"
bound python3 "$ROOT/plots/plot-run" "$R" >"$WORK/plot.out" 2>&1
rc=$?
check "plot-run with a link planted among its figures refuses (exit $rc), writing nothing through it" \
	ev '[ "$rc" = 1 ] && grep -q "holds symbolic links (1-pagetables-host.png)" "$WORK/plot.out" &&
	    [ "$(cat "$WORK/figure-victim")" = "not a figure" ]'
rm -rf "$R/plots"

# runs.log: a FIFO (the runner blocked opening it, its SIGINT handler
# only setting a flag) and a symbolic link (written through).
mv "$R/runs.log" "$WORK/runs.log.real"
mkfifo "$R/runs.log"
bound python3 "$ROOT/bench/sweep" --resume "$R" >/dev/null 2>"$WORK/log1.err"
rc=$?
check "sweep --resume with a FIFO as runs.log ends, exit 1 (got $rc), naming it" \
	ev '[ "$rc" = 1 ] && grep -qF "$R/runs.log: cannot write the run'"'"'s log: a FIFO, not a regular file" "$WORK/log1.err"'
rm "$R/runs.log"
echo "not the sweep's" >"$WORK/victim"
ln -s "$WORK/victim" "$R/runs.log"
bound python3 "$ROOT/bench/sweep" --resume "$R" >/dev/null 2>"$WORK/log2.err"
rc=$?
check "sweep --resume with a symbolic link as runs.log ends, exit 1 (got $rc), and writes nothing through it" \
	ev '[ "$rc" = 1 ] && grep -q "a symbolic link, not a regular file" "$WORK/log2.err" && [ "$(cat "$WORK/victim")" = "not the sweep'"'"'s" ]'
rm "$R/runs.log"
mv "$WORK/runs.log.real" "$R/runs.log"

bound python3 "$ROOT/bench/sweep" --resume "$R" >/dev/null 2>"$WORK/ok.err"
rc=$?
check "with runs.log back, the resume works (exit $rc)" [ "$rc" = 0 ]
finish
