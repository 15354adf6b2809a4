#!/bin/sh
# Outputs under faults (issue 13 items 4 and 6): a full filesystem never
# corrupts an earlier --csv row and the exit status and message say what
# happened to each output; a signal at the commit of the record never makes
# the run deny a record that exists; a temporary file left by a SIGKILLed
# run is removed by the next run in that directory, and a live run's is not.
# The moment of the commit is chosen with the test-only hook
# MSHARE_BENCH_TEST_COMMIT_GATE (harness/record.c).
. "$(dirname "$0")/lib/common.sh"

run="--backend shm --workers 1 --size 4M --workload touch --quiet"

# --- a full filesystem (a 32 KiB tmpfs) ----------------------------------
FS=$WORK/full
mkdir -p "$FS"
if [ "$(id -u)" -ne 0 ] || ! mount -t tmpfs -o size=32k tmpfs "$FS" 2>/dev/null; then
	skip "--csv and --out on a full filesystem" "cannot mount a small tmpfs here (needs root)"
else
	trap 'umount "$FS" 2>/dev/null; rm -rf "$WORK"' EXIT
	"$BIN" run $run --csv "$FS/c.csv" >/dev/null
	dd if=/dev/zero of="$FS/fill" bs=4k 2>/dev/null
	# Rows may still fit in the last page of c.csv: append until one does not.
	i=0
	while [ $i -lt 5 ]; do
		cp "$FS/c.csv" "$WORK/c.before"
		"$BIN" run $run --csv "$FS/c.csv" --out "$WORK/n$i.json" 2>"$WORK/err"
		rc=$?
		[ $rc -ne 0 ] && break
		i=$((i + 1))
	done
	msg=$(cat "$WORK/err")
	check "full fs: --csv gets no row, exit 4 (got $rc) with ENOSPC named and the record's place: $msg" \
		sh -c '[ "$1" -eq 4 ] && [ "$(printf "%s\n" "$2" | wc -l)" -eq 1 ] &&
		       printf "%s" "$2" | grep -q "No space left on device" &&
		       printf "%s" "$2" | grep -qF "the record is in $3"' _ "$rc" "$msg" "$WORK/n$i.json"
	check "full fs: the CSV is byte for byte what it was" cmp -s "$FS/c.csv" "$WORK/c.before"
	check "full fs: every CSV row is whole (same field count as the header)" python3 -c '
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
sys.exit(0 if len(rows) >= 2 and all(len(r) == len(rows[0]) for r in rows) else 1)' "$FS/c.csv"
	check "full fs: the JSON record is whole in --out" jtest "$WORK/n$i.json" 'r["config"]["backend"] == "shm"'

	"$BIN" run $run --out "$FS/n.json" 2>"$WORK/err"
	rc=$?
	msg=$(cat "$WORK/err")
	check "full fs: --out cannot be written: exit 1 (got $rc), ENOSPC named, 'no record written': $msg" \
		sh -c '[ "$1" -eq 1 ] && printf "%s" "$2" | grep -q "No space left on device" &&
		       printf "%s" "$2" | grep -q "no record written"' _ "$rc" "$msg"
	check "full fs: nothing left behind (no n.json, no temporary file)" \
		sh -c '[ -z "$(ls "$1" | grep -v -e "^c.csv$" -e "^fill$")" ]' _ "$FS"

	"$BIN" run $run --out "$FS/m.json" --csv "$WORK/ok.csv" 2>"$WORK/err"
	rc=$?
	msg=$(cat "$WORK/err")
	check "full fs: --out fails but --csv elsewhere keeps the record: exit 4 (got $rc): $msg" \
		sh -c '[ "$1" -eq 4 ] && printf "%s" "$2" | grep -q "only in --csv" && [ "$(wc -l <"$3")" -eq 2 ]' \
		_ "$rc" "$msg" "$WORK/ok.csv"
fi

# --- bad --csv files are refused before the run --------------------------
printf 'name,value\nx,1\n' >"$WORK/other.csv"
cp "$WORK/other.csv" "$WORK/other.before"
"$BIN" run $run --csv "$WORK/other.csv" --out "$WORK/o.json" 2>"$WORK/err"
rc=$?
check "--csv of another tool refused before the run (exit $rc): $(cat "$WORK/err")" \
	sh -c '[ "$1" -eq 2 ] && grep -qF "$2" "$3" && [ ! -e "$4" ] && cmp -s "$2" "$5"' _ "$rc" \
	"$WORK/other.csv" "$WORK/err" "$WORK/o.json" "$WORK/other.before"
"$BIN" run $run --csv "$WORK/cut.csv" >/dev/null
head -c 4000 "$WORK/cut.csv" >"$WORK/cut2.csv"
"$BIN" run $run --csv "$WORK/cut2.csv" --out "$WORK/o.json" 2>"$WORK/err"
rc=$?
check "--csv ending in a cut-off row refused before the run (exit $rc): $(cat "$WORK/err")" \
	sh -c '[ "$1" -eq 2 ] && grep -q "cut-off row" "$2" && [ ! -e "$3" ] && [ "$(wc -c <"$4")" -eq 4000 ]' _ \
	"$rc" "$WORK/err" "$WORK/o.json" "$WORK/cut2.csv"

# --- concurrent appends ---------------------------------------------------
# Four runs append to one new CSV at once: one header, four whole rows.
for i in 1 2 3 4; do
	"$BIN" run $run --csv "$WORK/shared.csv" >/dev/null 2>"$WORK/shared$i.err" &
done
wait
check "four runs appending at once: one header and four whole rows" python3 -c '
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
sys.exit(0 if len(rows) == 5 and rows[0][0] == "schema_version" and
         sum(r[0] == "schema_version" for r in rows) == 1 and all(len(r) == len(rows[0]) for r in rows) else 1)' \
	"$WORK/shared.csv"

# --- signals at the commit -----------------------------------------------
# start_gated NAME OUT [args]: a run that waits at its commit for
# $WORK/NAME.go; sets $pid once its temporary file exists.
start_gated() {
	name=$1 out=$2; shift 2
	MSHARE_BENCH_TEST_COMMIT_GATE=$WORK/$name.go "$BIN" run $run --out "$out" "$@" 2>"$WORK/$name.err" &
	pid=$!
	i=0
	while ! grep -q "test hook: at commit" "$WORK/$name.err" 2>/dev/null && [ $i -lt 600 ]; do
		sleep 0.1; i=$((i + 1))
	done
}

D=$WORK/commit
mkdir -p "$D"
start_gated int "$D/int.json"
kill -INT $pid
touch "$WORK/int.go"
wait $pid
rc=$?
check "SIGINT at the rename: exit 0 (got $rc), not 130, and says the record was finished: $(tail -1 "$WORK/int.err")" \
	sh -c '[ "$1" -eq 0 ] && grep -q "arrived while the record was being written" "$2" &&
	       ! grep -q "no record" "$2"' _ "$rc" "$WORK/int.err"
check "SIGINT at the rename: the record exists and is whole" jtest "$D/int.json" 'r["config"]["workers"] == 1'

# A live run waiting at its commit, then one SIGKILLed at its commit.
start_gated live "$D/live.json"
livepid=$pid
live_tmp="live.json.mshare-bench-tmp.$livepid"
start_gated kill "$D/killed.json" --csv "$WORK/k.csv"
kill -KILL $pid
wait $pid 2>/dev/null
orphan=$(ls "$D" | grep '^killed\.json\.mshare-bench-tmp\.')
check "SIGKILL at the rename leaves the temporary file ($orphan) and no record" \
	sh -c '[ -n "$1" ] && [ ! -e "$2" ] && [ ! -e "$3" ]' _ "$orphan" "$D/killed.json" "$WORK/k.csv"

"$BIN" run $run --out "$D/next.json" 2>"$WORK/next.err"
rc=$?
check "the next run in that directory removes the dead run's temporary file and says so: $(head -1 "$WORK/next.err")" \
	sh -c '[ "$1" -eq 0 ] && [ ! -e "$2/$3" ] && grep -qF "$3" "$4"' _ "$rc" "$D" "$orphan" "$WORK/next.err"
check "... and leaves the live run's temporary file alone" [ -e "$D/$live_tmp" ]
touch "$WORK/live.go"
wait $livepid
rc=$?
check "... which then commits its record (exit $rc)" \
	sh -c '[ "$1" -eq 0 ] && [ -s "$2" ] && [ ! -e "$3" ]' _ "$rc" "$D/live.json" "$D/$live_tmp"

# A temporary file whose PID is alive (here: this shell) is never removed.
echo '{}' >"$D/fake.json.mshare-bench-tmp.$$"
"$BIN" run $run --out "$D/next2.json" 2>/dev/null
check "a temporary file of a live PID is kept" [ -e "$D/fake.json.mshare-bench-tmp.$$" ]

# Files that are not this tool's temporaries are never removed (issue 44,
# item 3: any *.json.tmp.N or *.csv.tmp.N of a dead PID N was deleted):
# another program's names, and a file of this tool's name that another
# user owns.
sh -c 'exit 0' & dead=$!; wait $dead
printf 'user data\n' >"$D/notes.json.tmp.$dead"
printf 'a,b\n' >"$D/table.csv.tmp.$dead"
printf 'x\n' >"$D/db.tmp.$dead"
printf '{}' >"$D/other.json.mshare-bench-tmp.$dead"
chown 65534:65534 "$D/other.json.mshare-bench-tmp.$dead"
"$BIN" run $run --out "$D/next3.json" 2>"$WORK/next3.err"
rc=$?
check "a run (exit $rc) leaves notes.json.tmp.$dead, table.csv.tmp.$dead and db.tmp.$dead alone (not its names)" \
	ev '[ -e "$D/notes.json.tmp.$dead" ] && [ -e "$D/table.csv.tmp.$dead" ] && [ -e "$D/db.tmp.$dead" ]'
check "and a file of its temporary name that another user (nobody) owns" [ -e "$D/other.json.mshare-bench-tmp.$dead" ]
check "and says nothing about removing any" ev '! grep -q removed "$WORK/next3.err"'
finish
