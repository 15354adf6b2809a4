#!/bin/sh
# --path and what a file left behind holds (issue 44, items 1 and 2):
#  - an existing --path FILE is refused unless --reuse-path names the intent,
#    and is then left byte for byte as it was by the refusal;
#  - a --path that is a symbolic link is refused, with or without
#    --reuse-path, and the file it names is unchanged;
#  - with --reuse-path, a latch an earlier run left set in an oltp file, or
#    a redo log an earlier run left, is refused before the run starts with
#    a message naming it (before: every later run spun for ever); every run
#    below has a bound (timeout), so a hang fails the test instead of it.
. "$(dirname "$0")/lib/common.sh"

run() { timeout -s KILL 60 "$BIN" run "$@"; }
opts="--backend file --workers 2 --size 64K --quiet"

# Item 2: an existing file, a symlink.
head -c 65536 /dev/urandom >"$WORK/victim"
sum=$(sha256sum <"$WORK/victim")
run $opts --path "$WORK/victim" --workload touch --write --out "$WORK/a.json" 2>"$WORK/a.err"
rc=$?
check "an existing --path FILE without --reuse-path is refused (exit $rc)" [ "$rc" = 1 ]
check "the message names the file and --reuse-path" \
	grep -q -- "--path $WORK/victim already exists.*--reuse-path" "$WORK/a.err"
check "the refused file is unchanged and no record was written" \
	ev '[ "$(sha256sum <"$WORK/victim")" = "$sum" ] && [ ! -e "$WORK/a.json" ]'
sed 's/^/# /' "$WORK/a.err"

ln -s "$WORK/victim" "$WORK/link"
for reuse in "" --reuse-path; do
	run $opts --path "$WORK/link" $reuse --workload touch --write --out "$WORK/b.json" 2>"$WORK/b.err"
	rc=$?
	check "a --path that is a symbolic link is refused${reuse:+ even with $reuse} (exit $rc)" \
		ev '[ "$rc" = 1 ] && grep -q -- "--path $WORK/link is a symbolic link (to $WORK/victim)" "$WORK/b.err"'
	check "the file the link names is unchanged${reuse:+ ($reuse)}" ev '[ "$(sha256sum <"$WORK/victim")" = "$sum" ]'
done
sed 's/^/# /' "$WORK/b.err"
mkdir "$WORK/dir" && ln -s "$WORK/dir" "$WORK/dirlink"
run $opts --path "$WORK/dirlink" --workload touch --write --out "$WORK/c.json" 2>"$WORK/c.err"
rc=$?
check "a --path that is a symbolic link to a directory is refused (exit $rc)" \
	ev '[ "$rc" = 1 ] && grep -q "is a symbolic link" "$WORK/c.err" && [ -z "$(ls "$WORK/dir")" ]'

# --reuse-path: the file is used (and written) as asked.
run $opts --path "$WORK/victim" --reuse-path --workload touch --write --out "$WORK/d.json" 2>"$WORK/d.err"
check "with --reuse-path the existing file is used (exit $?)" [ -s "$WORK/d.json" ]
check "and it is still there after the run (the run did not create it)" [ -f "$WORK/victim" ]

# Item 1: the issue's reproduction, a latch left set in block 10 of an oltp file.
fallocate -l 64K "$WORK/db"
printf '\001' | dd of="$WORK/db" bs=1 seek=40960 conv=notrunc 2>/dev/null
for reuse in "" --reuse-path; do
	run $opts --path "$WORK/db" $reuse --workload oltp --duration 2s --out "$WORK/e.json" 2>"$WORK/e.err"
	rc=$?
	check "oltp on a file with a latch left set${reuse:+ ($reuse)} ends with exit 1, no hang (got $rc)" [ "$rc" = 1 ]
	check "no record is written for it${reuse:+ ($reuse)}" [ ! -e "$WORK/e.json" ]
done
check "the message names the latched block, its offset and version" \
	grep -q "oltp block 5 (offset 40960) is latched (version 1)" "$WORK/e.err"
sed 's/^/# /' "$WORK/e.err"
# A clean file reused works, and its second use as well (no stale latch).
fallocate -l 64K "$WORK/db2"
run $opts --path "$WORK/db2" --reuse-path --workload oltp --duration 300ms --out "$WORK/f1.json" 2>"$WORK/f.err" &&
	run $opts --path "$WORK/db2" --reuse-path --workload oltp --duration 300ms --out "$WORK/f2.json" 2>>"$WORK/f.err"
check "oltp on a clean reused file runs, twice (exit $?)" ev '[ -s "$WORK/f1.json" ] && [ -s "$WORK/f2.json" ]'

# A real SIGKILL of a run over a --path FILE it created: the file stays;
# the next run on it is refused (it is not this run's) instead of hanging.
"$BIN" run $opts --path "$WORK/db3" --workload oltp --duration 20s --out "$WORK/g.json" 2>/dev/null &
pid=$!
i=0
while [ $i -lt 100 ] && [ "$(pgrep -P $pid | wc -l)" -lt 2 ]; do sleep 0.1; i=$((i + 1)); done
sleep 0.5
kill -KILL $pid; wait $pid 2>/dev/null
sleep 0.2
run $opts --path "$WORK/db3" --workload oltp --duration 1s --out "$WORK/h.json" 2>"$WORK/h.err"
rc=$?
check "after a SIGKILLed oltp run, the next run on its file ends at once with exit 1 (got $rc)" [ "$rc" = 1 ]

# redo: a log an earlier run left.
fallocate -l 64K "$WORK/log"
run $opts --path "$WORK/log" --reuse-path --workload redo --ops 50 --out "$WORK/r1.json" 2>"$WORK/r1.err"
check "redo on a clean reused file runs (exit $?)" [ -s "$WORK/r1.json" ]
run $opts --path "$WORK/log" --reuse-path --workload redo --ops 50 --out "$WORK/r2.json" 2>"$WORK/r2.err"
rc=$?
check "redo again on the log it left is refused with exit 1, no hang (got $rc)" [ "$rc" = 1 ]
check "the message names the log's state" grep -q "holds a redo log (reserve_lsn [1-9]" "$WORK/r2.err"
sed 's/^/# /' "$WORK/r2.err"
finish
