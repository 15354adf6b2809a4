#!/bin/sh
# The smaller items of issue 44 (item 8), each refused or handled at once
# with a message naming the value:
#  --csv through a symbolic link (--out never followed one; --csv did);
#  the RLIMIT_NPROC pre-check counted every task on the host against a
#    user's own limit (a run as nobody with a limit of 100 was refused);
#  raw terminal escape sequences from arguments and records echoed by the
#    CLI and bench/compare;
#  shm on a directory that is not tmpfs (recorded as "shm"), and a region
#    larger than the tmpfs (workers died of SIGBUS);
#  a 4,090-character --out that failed only after the whole run;
#  redo --writers 3 with 2 workers (recorded as asked, run as 2);
#  touch --ops (ignored silently);
#  a --csv file another user holds locked (a run waited for it for ever).
. "$(dirname "$0")/lib/common.sh"

run() { timeout -s KILL 120 "$BIN" run "$@"; }
tiny="--backend shm --workers 1 --size 1M --workload touch --quiet"

echo "not a csv" >"$WORK/victim"
ln -s "$WORK/victim" "$WORK/link.csv"
run $tiny --out "$WORK/a.json" --csv "$WORK/link.csv" 2>"$WORK/a.err"
rc=$?
check "--csv through a symbolic link is refused (exit $rc), nothing run or written" \
	ev '[ "$rc" = 2 ] && grep -q -- "--csv $WORK/link.csv is a symbolic link" "$WORK/a.err" && [ ! -e "$WORK/a.json" ] &&
	    [ "$(cat "$WORK/victim")" = "not a csv" ]'

if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && command -v prlimit >/dev/null; then
	mkdir "$WORK/nb" && chmod 777 "$WORK/nb" && chmod 711 "$WORK"
	setpriv --reuid=65534 --regid=65534 --clear-groups prlimit --nproc=100 \
		"$BIN" run --backend shm --workers 4 --size 1M --workload touch --quiet --out "$WORK/nb/n.json" 2>"$WORK/n.err"
	rc=$?
	check "as nobody with RLIMIT_NPROC 100, 4 workers run (exit $rc): nobody's tasks count, not the host's $(cut -d' ' -f4 /proc/loadavg)" \
		ev '[ "$rc" = 0 ] && [ -s "$WORK/nb/n.json" ]'
	sed 's/^/# /' "$WORK/n.err"
	setpriv --reuid=65534 --regid=65534 --clear-groups prlimit --nproc=10 \
		"$BIN" run --backend shm --workers 20 --size 1M --workload touch --quiet --out "$WORK/nb/m.json" 2>"$WORK/m.err"
	rc=$?
	check "with RLIMIT_NPROC 10, 20 workers are refused before anything starts (exit $rc), naming the limit" \
		ev '[ "$rc" = 1 ] && grep -q "20 workers exceed RLIMIT_NPROC (soft 10, hard 10, [0-9]* tasks of this user" "$WORK/m.err"'
else
	skip "RLIMIT_NPROC as nobody" "needs root, setpriv and prlimit"
	skip "RLIMIT_NPROC refusal as nobody" "needs root, setpriv and prlimit"
fi

esc=$(printf '\033')
run --backend "${esc}[2J${esc}]0;title$(printf '\007')" --workers 1 --size 1M --workload touch 2>"$WORK/e.err"
rc=$?
check "a backend name with terminal escapes: refused (exit $rc), the message shows them as \\xNN, none raw" \
	ev '[ "$rc" = 2 ] && grep -qF "\\x1b[2J\\x1b]0;title\\x07" "$WORK/e.err" && ! grep -q "$esc" "$WORK/e.err"'
printf 'name = esc\nbackends = shm\nworkers = 1\nsizes = 4M\nworkloads = pt-footprint\npage = 4k\n' >"$WORK/s.sweep"
R=$(timeout -s KILL 120 python3 "$ROOT/bench/sweep" "$WORK/s.sweep" --results "$WORK/res" 2>/dev/null)
if [ -n "$R" ]; then
	cp -r "$R" "$WORK/hostile"
	rec=$(ls "$WORK/hostile/records/"*.r1.json)
	cp "$rec" "$WORK/hostile/records/${esc}[2Jx${esc}]0;t$(printf '\007').r1.json"
	timeout -s KILL 60 python3 "$ROOT/bench/compare" "$R" "$WORK/hostile" >"$WORK/c.out" 2>&1
	check "bench/compare shows a record's name with escapes as \\xNN, none raw" \
		ev 'grep -qF "\\x1b[2Jx" "$WORK/c.out" && ! grep -q "$esc" "$WORK/c.out"'
else
	skip "bench/compare and escapes" "the fixture sweep did not run"
fi

run --backend shm --path /var/tmp --workers 1 --size 1M --workload touch --out "$WORK/s.json" 2>"$WORK/s.err"
rc=$?
if [ "$(stat -f -c %T /var/tmp)" != tmpfs ]; then
	check "shm on /var/tmp ($(stat -f -c %T /var/tmp)) is refused (exit $rc), naming it not tmpfs" \
		ev '[ "$rc" = 1 ] && grep -q "/var/tmp is not on tmpfs" "$WORK/s.err" && [ ! -e "$WORK/s.json" ]'
else
	skip "shm on a directory not on tmpfs" "/var/tmp is tmpfs here"
fi
if [ "$(id -u)" = 0 ] && mkdir "$WORK/small" && mount -t tmpfs -o size=2M tmpfs "$WORK/small" 2>/dev/null; then
	run --backend shm --path "$WORK/small" --workers 2 --size 8M --workload touch --write --out "$WORK/t.json" 2>"$WORK/t.err"
	rc=$?
	umount "$WORK/small"
	check "shm larger than its 2 MiB tmpfs: refused before any worker (exit $rc), naming the room" \
		ev '[ "$rc" = 1 ] && grep -q "not enough room in tmpfs $WORK/small: 2097152 bytes free, the workload faults in up to 8388608 of --size 8388608" "$WORK/t.err"'
else
	skip "shm larger than its tmpfs" "needs root to mount a small tmpfs"
fi

# An existing directory, and a name that brings --out to 4,090 characters.
long=$(python3 -c '
import os, sys
d = sys.argv[1]
while len(d) < 3800:
    d = os.path.join(d, "d" * 200)
os.makedirs(d)
print(os.path.join(d, "r" * (4090 - len(d) - 6) + ".json"))' "$WORK")
run $tiny --out "$long" 2>"$WORK/l.err"
rc=$?
check "a $(printf %s "$long" | wc -c)-character --out is refused at once (exit $rc), saying how long" \
	ev '[ "$rc" = 2 ] && grep -q -- "--out: the name is too long ([0-9]* characters" "$WORK/l.err"'

run --backend shm --workers 2 --size 1M --workload redo --writers 3 --ops 10 --out "$WORK/r.json" 2>"$WORK/r.err"
rc=$?
check "redo --writers 3 with 2 workers is refused (exit $rc), naming both" \
	ev '[ "$rc" = 2 ] && grep -q -- "--writers 3 is more than --workers 2" "$WORK/r.err" && [ ! -e "$WORK/r.json" ]'
run $tiny --ops 5 --out "$WORK/o.json" 2>"$WORK/o.err"
rc=$?
check "touch --ops 5 is refused (exit $rc), not ignored" \
	ev '[ "$rc" = 2 ] && grep -q -- "--ops 5: workload touch has no operations" "$WORK/o.err" && [ ! -e "$WORK/o.json" ]'

# A --csv file someone else holds locked (anyone who can read it can): the
# run waits for it at most 60 s, then writes its --out record only (exit 4).
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	run $tiny --out "$WORK/first.json" --csv "$WORK/runs.csv" 2>/dev/null
	chmod 644 "$WORK/runs.csv"
	setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 -c 'import fcntl, sys, time
f = open(sys.argv[1])
fcntl.flock(f, fcntl.LOCK_EX)
time.sleep(300)' "$WORK/runs.csv" >/dev/null 2>&1 &
	holder=$!
	sleep 0.5
	run $tiny --out "$WORK/locked.json" --csv "$WORK/runs.csv" 2>"$WORK/k.err"
	rc=$?
	kill -KILL $holder 2>/dev/null; wait $holder 2>/dev/null
	check "a --csv nobody holds locked: the run ends (exit $rc: 4, its --out written), naming the lock" \
		ev '[ "$rc" = 4 ] && [ -s "$WORK/locked.json" ] && grep -q "still locked by another process after 60 s" "$WORK/k.err"'
	check "and the CSV keeps its one row" ev '[ "$(wc -l <"$WORK/runs.csv")" = 2 ]'
else
	skip "--csv held locked by another user" "needs root and setpriv"
fi
finish
