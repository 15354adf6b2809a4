#!/bin/sh
# Machine-wide state is root's alone (issue 44, item 4): the hugepage pool
# lock /run/mshare-bench/hugepool.lock could be opened, hence flock()ed, by
# any local user (`setpriv --reuid=65534 ... flock LOCK sleep 600`), and
# every hugetlb run then waited 300 s and failed. Here `nobody` tries to
# hold it, before and after a root run has been through the lock: a root
# hugetlb run still starts (bounded by timeout, so a wait fails the test),
# nobody cannot open the lock any more, and nobody can write nothing under
# /run/mshare-bench.
. "$(dirname "$0")/lib/common.sh"

STATE=/run/mshare-bench
LOCK=$STATE/hugepool.lock
HP=/sys/kernel/mm/hugepages/hugepages-2048kB
if [ "$(id -u)" -ne 0 ] || [ ! -w "$HP/nr_hugepages" ] || ! command -v setpriv >/dev/null; then
	skip "hugepage pool lock as nobody" "needs root, setpriv and a writable $HP/nr_hugepages"
	finish
fi
if ! "$BIN" backends | grep -q '^hugetlb-2m *yes'; then
	skip "hugepage pool lock as nobody" "hugetlb-2m not usable here"
	finish
fi
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
HOLDER=""
trap '[ -n "$HOLDER" ] && kill -KILL $HOLDER 2>/dev/null; wait 2>/dev/null; "$BIN" cleanup >/dev/null 2>&1; rm -rf "$WORK"' EXIT

# The state as an earlier version left it: a lock file other users can open.
mkdir -p "$STATE" && touch "$LOCK" && chmod 0644 "$LOCK"
# One process (flock(1) would leave its child holding the lock when killed),
# its output away from the test's.
setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 -c 'import fcntl, sys, time
f = open(sys.argv[1])
fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
time.sleep(600)' "$LOCK" >/dev/null 2>&1 &
HOLDER=$!
sleep 0.5
kill -0 $HOLDER 2>/dev/null && ok "nobody holds the lock file an earlier version left readable (the attack is set up)" ||
	skip "nobody holds the old lock file" "flock as nobody did not start"

run() { timeout -s KILL 60 "$BIN" run --backend hugetlb-2m --workers 2 --size 4M --workload touch --quiet "$@"; }
run --out "$WORK/a.json" 2>"$WORK/a.err"
rc=$?
check "a root hugetlb run is not held up by nobody's lock: it ends, exit 0 (got $rc)" [ "$rc" = 0 ]
check "and does not say it waits for the pool lock" ev '! grep -q "waiting for the hugepage pool lock" "$WORK/a.err"'
sed 's/^/# /' "$WORK/a.err"
mode=$(stat -c %a "$LOCK")
check "the lock is root's, mode 600 (got $(stat -c '%U %a' "$LOCK"))" ev '[ "$mode" = 600 ] && [ "$(stat -c %u "$LOCK")" = 0 ]'
as_nobody sh -c ': <"$1"' _ "$LOCK" 2>"$WORK/n.err"
rc=$?
check "nobody cannot open the lock any more (exit $rc: $(head -c 120 "$WORK/n.err"))" \
	ev '[ "$rc" != 0 ] && grep -q "Permission denied" "$WORK/n.err"'
check "nobody cannot create files in $STATE or its ledger" \
	ev '! as_nobody touch "$STATE/x" 2>/dev/null && ! as_nobody touch "$STATE/hugepool/x" 2>/dev/null'
# A run as nobody still works (it uses the free pool, takes no lock).
chmod 711 "$WORK" && mkdir "$WORK/nb" && chmod 777 "$WORK/nb"
as_nobody timeout -s KILL 60 "$BIN" run --backend shm --workers 1 --size 1M --workload touch --quiet \
	--out "$WORK/nb/nobody.json" 2>"$WORK/nb.err"
check "a run as nobody still runs (exit $?)" [ -s "$WORK/nb/nobody.json" ]
finish
