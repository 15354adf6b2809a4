#!/bin/sh
# In-guest part of tests/workloads/postgres-mshare.sh (not TAP: it writes
# key=value facts to /out/pgtest/facts.txt and the host test judges them).
#   pg-test.sh [READERS] [MSHARE_MODE]   (default 20, mshare-dax; mshare-2025-dax
#   on the mshare-2025 kernel: the 2025 design, tests/workloads/postgres-mshare-2025.sh)
# 1. initdb on the DAX mount; four tables that fill most of 64 MiB of
#    shared_buffers (each under a quarter of it, so a scan goes through the
#    shared pool, not a small ring);
# 2. for MODE in 4k mshare-dax: start PostgreSQL, READERS sessions build
#    their catalog caches, then wait on a table lock (a gate) while their
#    VmPTE is read, then, released at once, each read every table and park
#    in pg_sleep while their VmPTE, minor faults and PageTables are read
#    again; a row written through one connection is read through another;
#    stop (pg_ctl -m fast: SIGINT) and list what is left in /sys/fs/mshare
#    and the backing-file directory;
# 3. mshare-dax again: a backend SIGKILLed (the postmaster's crash restart
#    replaces the region with a new one), then the postmaster SIGKILLed:
#    what is left once its children are gone.
. /guest/pg/pg-common.sh
READERS=${1:-20}
MMODE=${2:-mshare-dax}
case $MMODE in mshare-dax) design=2022 ;; mshare-2025-dax) design=2025 ;; *) echo "pg-test.sh: MSHARE_MODE '$MMODE' (mshare-dax or mshare-2025-dax)" >&2; exit 2 ;; esac
out=/out/pgtest
mkdir -p "$out"
facts=$out/facts.txt
: >"$facts"
fact() { echo "$1=$2" >>"$facts"; echo "pg-test: $1=$2"; }
ROWS=65000

# wait_for SQL_COUNT_QUERY WANT SECONDS: poll until the count is WANT.
wait_for() {
	i=0
	while [ "$(psqlc -c "$1" 2>/dev/null)" != "$2" ]; do
		i=$((i + 1))
		[ $i -gt $(($3 * 2)) ] && return 1
		sleep 0.5
	done
}

# Three backends that sleep an hour (application_name victim), in the
# background; returns once the server lists all three.
start_victims() {
	i=0
	while [ $i -lt 3 ]; do
		PGAPPNAME=victim psqlc -c "SELECT pg_sleep(3600)" >/dev/null 2>&1 &
		i=$((i + 1))
	done
	wait_for "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'victim'" 3 300
}

leftovers() {
	for i in $(seq 1 60); do
		[ -z "$(msharefs_names)" ] && [ -z "$(ls -A "$PGSHM")" ] && break
		sleep 0.5
	done
	echo "$(msharefs_names)|$(ls -A "$PGSHM" | tr '\n' ' ')"
}

# The library without PostgreSQL: fork attach, semaphore and futex wake.
LD_PRELOAD=$PG_MSHARE_SO PGMSHARE_PROGRAM=pg-mshare-check PGMSHARE_DESIGN=$design PGMSHARE_BACKING=dax PGMSHARE_DIR=/mnt/pmem \
	pg-mshare-check 8 >"$out/check.txt" 2>&1
fact check.rc $?
sed 's/^/pg-mshare-check: /' "$out/check.txt"
fact check.left "$(msharefs_names)"

pg_init || { fact init failed; exit 1; }
fact init ok
fact mem_total_kb "$(meminfo_kb MemTotal)"

run_mode() {
	mode=$1
	if ! pg_start "$mode" 64MB 40; then
		fact "$mode.start" failed
		cp "$pg_logfile" "$out/server-$mode.log" 2>/dev/null
		return 1
	fi
	fact "$mode.start" ok
	fact "$mode.postmaster_maps_2tib" "$(grep -c '^20000000000-' "/proc/$pg_pid/maps")"
	fact "$mode.msharefs_running" "$(msharefs_names)"
	if [ "$mode" = 4k ]; then
		for t in 1 2 3 4; do
			echo "CREATE TABLE t$t AS SELECT g, repeat('x', 200) AS x FROM generate_series(1, $ROWS) g;"
		done | psqlc >/dev/null
		psqlc -c "CREATE TABLE gate (x int); CREATE TABLE kv (k text, v text);" >/dev/null
		fact blocks "$(psqlc -c "SELECT string_agg(pg_relation_size('t'||i)/8192 || '', ' ') FROM generate_series(1,4) i")"
		fact nbuffers "$(psqlc -c "SELECT setting FROM pg_settings WHERE name = 'shared_buffers'")"
	fi
	PGAPPNAME=gate psqlc -c "BEGIN; LOCK TABLE gate IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(3600);" \
		>/dev/null 2>&1 &
	wait_for "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'gate' AND wait_event = 'PgSleep'" 1 120 ||
		{ fact "$mode.gate" failed; return 1; }
	warm="" scan=""
	for t in 1 2 3 4; do
		warm="$warm SELECT 1 FROM t$t WHERE false;"
		scan="$scan SELECT sum(length(x)) FROM t$t;"
	done
	pt0=$(meminfo_kb PageTables)
	t0=$(date +%s)
	i=0
	while [ $i -lt "$READERS" ]; do
		PGAPPNAME=reader psqlc -c "$warm SELECT count(*) FROM gate; $scan SELECT pg_sleep(3600);" \
			>"$out/$mode.reader$i.out" 2>&1 &
		i=$((i + 1))
	done
	if ! wait_for "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'reader' AND wait_event_type = 'Lock'" \
		"$READERS" 600; then
		fact "$mode.readers_at_gate" failed
		return 1
	fi
	fact "$mode.connect_s" $(($(date +%s) - t0))
	pids=$(psqlc -c "SELECT pid FROM pg_stat_activity WHERE application_name = 'reader'" | tr '\n' ' ')
	pte0=0 flt0=0
	for p in $pids; do
		pte0=$((pte0 + $(vmpte_kb "$p"))); flt0=$((flt0 + $(minflt "$p")))
	done
	pt1=$(meminfo_kb PageTables)
	# Release: cancelling the gate's pg_sleep aborts its transaction.
	psqlc -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'gate'" >/dev/null
	if ! wait_for "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'reader' AND wait_event = 'PgSleep'" \
		"$READERS" 900; then
		fact "$mode.readers_read" "failed: $(psqlc -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'reader' AND wait_event = 'PgSleep'") in pg_sleep"
		psqlc -c "SELECT pid, wait_event_type, wait_event, state FROM pg_stat_activity" >"$out/$mode.activity.txt" 2>&1
		return 1
	fi
	fact "$mode.readers_read" ok
	pte1=0 flt1=0 rss=0
	for p in $pids; do
		pte1=$((pte1 + $(vmpte_kb "$p"))); flt1=$((flt1 + $(minflt "$p")))
		rss=$((rss + $(awk '/^RssShmem:/ {print $2}' "/proc/$p/status")))
	done
	pt2=$(meminfo_kb PageTables)
	fact "$mode.readers" "$(echo $pids | wc -w)"
	fact "$mode.vmpte_gate_kb" "$pte0"
	fact "$mode.vmpte_read_kb" "$pte1"
	fact "$mode.region_pt_kb" $((pte1 - pte0))
	fact "$mode.minflt_read" $((flt1 - flt0))
	fact "$mode.rss_shmem_kb" "$rss"
	fact "$mode.pagetables_kb" "$pt0 $pt1 $pt2"
	# A row written through one connection, read through another.
	token="$mode-$$-$(date +%s)"
	w=$(psqlc -c "INSERT INTO kv VALUES ('$mode', '$token'); SELECT pg_backend_pid();")
	r=$(psqlc -c "SELECT v || ' ' || pg_backend_pid() FROM kv WHERE k = '$mode'")
	fact "$mode.row" "$token|$w|$r"
	psqlc -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'reader'" >/dev/null
	wait
	pg_stop
	fact "$mode.stopped" "$([ -f "$PGDATA/postmaster.pid" ] && echo no || echo yes)"
	fact "$mode.left_after_stop" "$(leftovers)"
	cp "$pg_logfile" "$out/server-$mode.log"
}

fact mshare_mode "$MMODE"
fact kernel "$(uname -r) $(uname -v)"
run_mode 4k
run_mode "$MMODE"

# The postmaster killed outright: the reaper removes the region once every
# process of the server is gone.
if pg_start "$MMODE" 64MB 40; then
	start_victims
	# A backend SIGKILLed: the postmaster resets shared memory (unmaps the
	# segment, i.e. unlinks the region, and maps a new one after its
	# children are gone): the new region replaces the old.
	fact restart.msharefs_before "$(msharefs_names)"
	victim=$(psqlc -c "SELECT pid FROM pg_stat_activity WHERE application_name = 'victim' LIMIT 1")
	kill -9 "$victim"
	wait
	i=0
	until psqlc -c "SELECT 1" >/dev/null 2>&1 && grep -q "^pg-mshare\[$pg_pid\]: main shared memory: .* pg-mshare-$pg_pid-1 " "$pg_logfile"; do
		i=$((i + 1)); [ $i -gt 240 ] && break; sleep 0.5
	done
	fact restart.query "$(psqlc -c "SELECT count(*) FROM kv" 2>&1)"
	fact restart.msharefs_after "$(msharefs_names)"
	fact restart.backing_files "$(ls -A "$PGSHM" | tr '\n' ' ')"
	start_victims
	fact crash.msharefs_before "$(msharefs_names)"
	kill -9 "$pg_pid"
	wait
	fact crash.left_after_kill "$(leftovers)"
	cp "$pg_logfile" "$out/server-crash.log"
	rm -f "$PGDATA/postmaster.pid"
else
	fact crash.start failed
fi
exit 0
