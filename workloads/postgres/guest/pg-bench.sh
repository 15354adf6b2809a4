#!/bin/sh
# One PostgreSQL point of a sweep (bench/sweep; bench/lib/pgpoint.py writes
# its record from what this leaves): in the benchmark guest (the points
# script of the boot, bench/lib/guest.py) or, for a host point, on the host
# as root with PGROOT and PGRUN set to a private temporary directory:
#   pg-bench.sh OUTDIR TAG MODE N SHARED_BUFFERS SCALE WINDOW_S PRESET MAX_CONNECTIONS [TOUCH_AT]
# MODE is pg-common.sh's (4k, hugetlb-2m, mshare-dax, mshare-shmem,
# mshare-2025-dax; pgpoint.py maps the sweep's backends to it), N the
# connections, PRESET select (pgbench -S), rw (pgbench's default
# TPC-B-like read-write script: three UPDATEs, a SELECT and an INSERT
# per transaction; issue 45) or dba (issue 27): init also fills
# an unlogged table `big` of one 8 KiB block per row, 7/8 of SHARED_BUFFERS,
# prewarmed with the pgbench relations; every pgbench client's first
# transaction is one full pass over it (dba_pass(): sum of a column at the
# end of each block, so both 4 KiB halves of every block are read), which
# writes the backend's minor faults before/after the pass (its own
# /proc/self/stat) to PGRUN/pass/PID; then pgbench -S transactions. The
# window (faults, TPS, latency) starts when all N passes are done, after
# `mshare-bench plan --pid` has read every backend's VmPTE and pagemap
# (TAG.pid.json; not for mshare-2025-dax, see there), and lasts
# WINDOW_S guest s; then pgbench is stopped (SIGSTOP) until its -T has
# run out and continued, so that it ends with its summary at no host cost.
# The cluster (on the DAX mount) is made once per boot and kept for the next
# point with the same SHARED_BUFFERS, SCALE and PRESET (PGROOT/init.key):
# initdb, `pgbench -i -s SCALE` (and the dba table). What a point learns for
# the next one's pgbench -T (connection rate, plan --pid time, a pass's
# time) is kept in OUTDIR/state. Then, on a freshly started server,
# pg_prewarm of every pgbench relation (the buffers hold the data), and:
#   - PageTables and memory before; `pgbench -n -S -M prepared -c N -j 2
#     -T T -l`. Its -T clock includes connecting (PostgreSQL 15), so T =
#     WINDOW + 10 s + twice the time the N connections are expected to
#     take, from the slowest connection rate seen so far in this boot
#     (0.25 s a connection before the first point);
#   - when all N are connected: the backends' minor faults (one read of
#     their /proc/PID/stat files);
#   - halfway through the rest of pgbench's -T: one snapshot of every
#     backend's /proc/PID/stat and /proc/PID/status, PageTables, memory;
#   - transactions in the fault window: pgbench's per-transaction log lines
#     whose completion time lies between the two /proc/PID/stat reads (no
#     query to the busy server inside the window);
#   - pgbench's TPS, latency average and initial connection time; p50/p99
#     from its per-transaction log; stop the server (hugetlb-2m: give the
#     pool back).
# Writes OUTDIR/TAG.facts (key=value; TAG is the sweep's <point id>.r<k>),
# TAG.server.log, TAG.prewarm.txt, (dba) TAG.passes, TAG.pid.json and
# TAG.pid.err, and one line per step to OUTDIR/status. A figure that could
# not be read is written empty (key=), never as 0; pgpoint.py reports it as
# not measured. Exit 0 when pgbench ran (the facts end with pgbench_rc),
# 1 when the point could not be measured, 2 for bad usage.
# TOUCH_AT (issue 45; mode 4k only, where every backend has page tables of
# its own for the segment): comma-separated guest seconds after all N
# backends connected, each at least WINDOW_S (0 also: right after they
# connected, before the window); at each, after the fault window, the
# 4 KiB pages and 2 MiB spans of the segment present in every backend's
# page tables (pg-touch, /proc/PID/pagemap) go to TAG.touch, and the
# transactions done by then to the facts (touch_tx_<S>). pgbench's -T
# covers the last one; pgbench is then stopped as for dba (below).
# The exit of all N backends: pgbench, stopped after the window (below),
# is continued once its -T has run out; it then closes its N connections
# and ends. backends_exit_cs = from that SIGCONT to the last backend
# gone (1/100 s of the guest's clock).
# Progress on the console: "pg-bench: ..." lines.
. "$(dirname "$0")/pg-common.sh"
out=$1 tag=$2 mode=$3 n=$4 sb=$5 scale=$6 dur=$7 workload=$8 maxc=$9 touch_at=${10:-}
[ -n "$maxc" ] || { echo "usage: pg-bench.sh OUTDIR TAG MODE N SHARED_BUFFERS SCALE WINDOW_S select|rw|dba MAX_CONNECTIONS [TOUCH_AT]" >&2; exit 2; }
[ "$touch_at" = - ] && touch_at=
touch_last=0
for s_ in $(echo "$touch_at" | tr ',' ' '); do
	case $s_ in '' | *[!0-9]*) echo "pg-bench.sh: TOUCH_AT '$touch_at': guest seconds, comma-separated" >&2; exit 2 ;; esac
	[ "$s_" = 0 ] || [ "$s_" -ge "$dur" ] || { echo "pg-bench.sh: TOUCH_AT $s_ is inside the window of $dur s (0 or at least $dur)" >&2; exit 2; }
	[ "$s_" -gt "$touch_last" ] || [ "$s_" = 0 ] || { echo "pg-bench.sh: TOUCH_AT '$touch_at' is not increasing" >&2; exit 2; }
	touch_last=$s_
done
[ -z "$touch_at" ] || [ "$mode" = 4k ] || { echo "pg-bench.sh: TOUCH_AT needs mode 4k (page tables of each backend's own), not $mode" >&2; exit 2; }
case $workload in select | rw | dba) ;; *) echo "pg-bench.sh: preset '$workload' (select, rw or dba)" >&2; exit 2 ;; esac
case $n$maxc in *[!0-9]*) echo "pg-bench.sh: N '$n' and MAX_CONNECTIONS '$maxc' are whole numbers" >&2; exit 2 ;; esac
[ "$maxc" -ge "$n" ] || { echo "pg-bench.sh: MAX_CONNECTIONS $maxc is below N $n" >&2; exit 2; }
mkdir -p "$out"
say() { echo "pg-bench: $*"; echo "$tag: $*" >>"$out/status"; }
maxn=$maxc
# pgbench needs a descriptor per connection (it refuses to start below
# N + 3); the guest's init raised the limit already.
[ "$(ulimit -n)" = unlimited ] || [ "$(ulimit -n)" -ge $((maxn + 64)) ] || ulimit -n $((maxn + 64)) ||
	{ say "FAILED: open-file limit $(ulimit -n) is below $((maxn + 64)) and cannot be raised"; exit 1; }

# A server or pool of ours is never left behind, however the script ends.
running_server=""
cleanup() {
	[ -n "$running_server" ] && as_pg "$PGBIN/pg_ctl" -D "$PGDATA" -m immediate -w -t 120 stop >/dev/null 2>&1
	pool_give_back
}
trap cleanup EXIT
trap 'exit 130' INT TERM

isnum() { case $1 in '' | *[!0-9]*) return 1 ;; esac; }
# minus A B: A - B when both are whole numbers, else nothing (a figure that
# could not be read stays empty; never an arithmetic error that ends the run).
minus() { isnum "$1" && isnum "$2" && echo $(($1 - $2)); }
# Figures of many processes at once, one cat each (a process per backend
# would take seconds under TCG): PIDS are the arguments.
# No PIDS: /dev/null (a bare `cat` would read stdin).
files() { suffix=$1; shift; [ $# -gt 0 ] || echo /dev/null; for p in "$@"; do printf '/proc/%s/%s\n' "$p" "$suffix"; done; }
# The 512 GiB slots (PGD entries: one PUD page each under 4-level paging)
# the mappings of each process touch, summed over the processes (PIDS are
# the arguments), from /proc/PID/maps: mappings with some access (PROT_NONE
# ones have no pages), below the user limit, and not an mshare region
# (512 GiB or more: its slot's PUD page is the region's, not in VmPTE).
# Hex parsed by hand (busybox awk has no strtonum); below 2^53, exact.
upper_slots() {
	# one awk for all the files (a process per backend is dear under
	# TCG); busybox awk stops at a file it cannot open: a process gone
	# meanwhile is left out
	us_f=
	for us_p in $(files maps "$@"); do [ -r "$us_p" ] && us_f="$us_f $us_p"; done
	[ -n "$us_f" ] || { echo 0; return; }
	# shellcheck disable=SC2086
	awk '
	function hex(t,  i, v) { v = 0; t = tolower(t); for (i = 1; i <= length(t); i++) v = v * 16 + index("0123456789abcdef", substr(t, i, 1)) - 1; return v }
	FNR == 1 { for (k in seen) n++; delete seen }
	{ split($1, r, "-"); a = hex(r[1]); b = hex(r[2])
	  if (substr($2, 1, 3) == "---" || a >= 140737488355328 || b - a >= 549755813888) next
	  for (k = int(a / 549755813888); k <= int((b - 1) / 549755813888); k++) seen[k] = 1 }
	END { for (k in seen) n++; print n + 0 }' $us_f 2>/dev/null
}
# TLB shootdown interrupts received, all CPUs (/proc/interrupts "TLB").
tlb_shootdowns() { awk '$1 == "TLB:" {for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) s += $i} END {print s + 0}' /proc/interrupts; }
# The client backends of the server: children of the postmaster whose
# process title is "postgres: postgres postgres [local] ..." (from /proc,
# no query: a psql round trip takes about a second under TCG).
# `ps -e`: procps lists only this terminal's processes without it (busybox,
# in the guest, lists all either way).
backend_pids() { ps -e -o pid,ppid,args | awk -v pm="$pg_pid" '$2 == pm && $3 == "postgres:" && $4 == "postgres" && $5 == "postgres" && $6 == "[local]" {printf "%s ", $1}'; }
sorted() { echo "$@" | tr ' ' '\n' | grep . | sort -n | tr '\n' ' '; }
# The wall clock in 1/100 s (pgbench's log stamps transactions with it;
# busybox's date has whole seconds only): /proc/uptime plus an offset found
# by waiting for the next second of `date +%s` (one busybox exec of error).
uptime_cs() { read -r u _ </proc/uptime; echo "${u%.*}${u#*.}"; }
calibrate_clock() {
	s0=$(date +%s)
	while [ "$(date +%s)" = "$s0" ]; do :; done
	clock_off=$(((s0 + 1) * 100 - $(uptime_cs)))
}
now_cs() { echo $(($(uptime_cs) + clock_off)); }
# The snapshots run at nice -20 (root, guest and host): at nice 0 one `cat`
# of 500 backends' files took about 20 s under TCG, competing with the 500
# busy backends, and the run could end before it did. pgbench and the
# server were started before and keep their nice value.
nice0=$(awk '{print $19}' /proc/$$/stat)
urgent() { renice -20 -p $$ >/dev/null 2>&1; }
calm() { renice "$nice0" -p $$ >/dev/null 2>&1; }
# minflt (field 10 of /proc/PID/stat; the comm, "postgres", has no space)
# summed over a snapshot file.
stat_minflt() { awk '{s += $10; n++} END {if (n) print s}' "$1"; }
# Slowest connection rate seen so far in this run, ms per connection (0:
# none seen yet; 250 ms is assumed until then).
conn_ms_seen=0
# Slowest plan --pid time per backend seen so far in this run at 50 or
# more backends, ms (dba; 250 until then).
plan_ms_seen=250 plan_n_seen=0
# What earlier points of this boot learnt (written at the end of a point).
# shellcheck disable=SC1091
[ -r "$out/state" ] && . "$out/state"
save_state() {
	printf 'conn_ms_seen=%s\nplan_ms_seen=%s\nplan_n_seen=%s\n' "$conn_ms_seen" "$plan_ms_seen" "$plan_n_seen" >"$out/state.tmp" &&
		mv "$out/state.tmp" "$out/state"
}

# The cluster of an earlier point of this boot serves when it was made for
# the same shared_buffers, scale and preset (the table big is 7/8 of
# shared_buffers): initdb and pgbench -i take minutes under TCG.
init_key="$sb $scale $workload"
pass_ms_seen=0
if [ -r "$PGROOT/init.key" ] && [ "$(cat "$PGROOT/init.key")" = "$init_key" ] && [ -d "$PGDATA" ]; then
	# shellcheck disable=SC1091
	. "$PGROOT/init.state"
	say "init: the cluster of an earlier point ($init_key) serves"
else
	say "init: initdb, then pgbench -i -s $scale (4k mode)"
	pg_init || { say "FAILED initdb"; exit 1; }
	pg_start 4k "$sb" "$maxc" || { say "FAILED start for pgbench -i"; exit 1; }
	running_server=yes
	t0=$(date +%s)
	"$PGBIN/pgbench" -h "$PGRUN" -U postgres -i -s "$scale" -q postgres >"$out/pgbench-init.log" 2>&1 ||
		{ say "FAILED pgbench -i"; cat "$out/pgbench-init.log"; exit 1; }
	say "init: pgbench -i -s $scale took $(($(date +%s) - t0)) s; data $(psqlc -c "SELECT pg_size_pretty(pg_database_size('postgres'))")"
	psqlc -c "CREATE EXTENSION pg_prewarm" >/dev/null
	if [ "$workload" = dba ]; then
		# One row per 8 KiB block: a 7000-byte pad stored inline (STORAGE
		# PLAIN: no compression, no TOAST) and `tail` after it, near the
		# block's end. 7/8 of shared_buffers, so it and pgbench's tables fit.
		sbk=$(psqlc -c "SELECT setting::bigint * 8 FROM pg_settings WHERE name = 'shared_buffers'")
		rows=$((sbk / 8 * 7 / 8))
		say "init: table big, $rows rows of one block each (7/8 of shared_buffers $sb)"
		t0=$(date +%s)
		psqlc -v ON_ERROR_STOP=1 >"$out/dba-init.log" 2>&1 <<SQL || { say "FAILED dba init"; cat "$out/dba-init.log"; exit 1; }
CREATE UNLOGGED TABLE big (pad text, tail int) WITH (fillfactor = 100, autovacuum_enabled = off);
ALTER TABLE big ALTER COLUMN pad SET STORAGE PLAIN;
INSERT INTO big SELECT repeat('x', 7000), g FROM generate_series(1, $rows) g;
VACUUM (FREEZE, ANALYZE) big;
CREATE FUNCTION dba_pass() RETURNS bigint LANGUAGE plpgsql AS \$\$
DECLARE a text; b text; t0 timestamptz := clock_timestamp(); s bigint;
BEGIN
	a := pg_read_file('/proc/self/stat', 0, 4096);
	SELECT sum(tail) INTO s FROM big;
	b := pg_read_file('/proc/self/stat', 0, 4096);
	EXECUTE format('COPY (SELECT %s, %s, %s, %s) TO %L', pg_backend_pid(),
		split_part(split_part(a, ') ', 2), ' ', 8), split_part(split_part(b, ') ', 2), ' ', 8),
		round(extract(epoch FROM clock_timestamp() - t0) * 1000), '$PGRUN/pass/' || pg_backend_pid());
	RETURN s;
END \$\$;
SQL
		say "init: big filled in $(($(date +%s) - t0)) s: $(psqlc -c "SELECT pg_size_pretty(pg_relation_size('big'))")"
		cat >"$PGRUN/dba.sql" <<'SQL'
\if :passed = 0
SELECT dba_pass();
\set passed 1
\endif
\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
SQL
		# A first pass, for the time a pass takes (4k, its faults included).
		mkdir -p "$PGRUN/pass"; chown postgres "$PGRUN/pass"
		psqlc -c "SELECT pg_prewarm('big')" >/dev/null
		psqlc -c "SELECT dba_pass()" >/dev/null
		pass_ms_seen=$(awk -F'\t' '{print $4}' "$PGRUN"/pass/* 2>/dev/null | head -1)
		isnum "$pass_ms_seen" || pass_ms_seen=0
		say "init: one pass by one backend took $pass_ms_seen ms"
	fi
	pg_stop
	running_server=""
	echo "pass_ms_seen=$pass_ms_seen" >"$PGROOT/init.state"
	echo "$init_key" >"$PGROOT/init.key"
fi

# The point, on a freshly started, prewarmed server.
if [ "$mode" = hugetlb-2m ]; then
	need=$(as_pg "$PGBIN/postgres" -D "$PGDATA" -C shared_memory_size_in_huge_pages \
		-c shared_buffers="$sb" -c max_connections="$maxc" -c huge_pages=on 2>/dev/null)
	before=$(cat $HP)
	if ! isnum "$need" || ! pool_take "$need"; then
		say "FAILED $mode c=$n: 2 MiB pool for ${need:-?} pages (pool $before -> $(cat $HP))"
		pool_give_back
		exit 1
	fi
	say "$mode c=$n: 2 MiB pool $before -> $(cat $HP) (server needs $need, $pool_added added)"
fi
running_server=yes
if ! pg_start "$mode" "$sb" "$maxc"; then
	say "FAILED start $mode for c=$n"
	cp "$pg_logfile" "$out/$tag.server.log"
	running_server=""
	pool_give_back
	exit 1
fi
# The server has reserved its huge pages: others may count the rest.
pool_release_lock
seg=$(grep -h '^pg-mshare\[' "$pg_logfile" | head -1)
psqlc -c "SELECT sum(pg_prewarm(c.oid)) FROM pg_class c WHERE (c.relname LIKE 'pgbench_%' OR c.relname = 'big') AND c.relkind IN ('r', 'i')" \
	>"$out/$tag.prewarm.txt" 2>&1
say "$mode c=$n: started (pid $pg_pid), prewarmed $(cat "$out/$tag.prewarm.txt") blocks${seg:+; $seg}"
f=$out/$tag.facts
: >"$f"
fact() { echo "$1=$2" >>"$f"; }
fact mode "$mode"; fact connections "$n"; fact shared_buffers "$sb"; fact scale "$scale"; fact duration_s "$dur"
fact workload "$workload"
[ "$workload" = dba ] && fact big_bytes "$(psqlc -c "SELECT pg_relation_size('big')")"
fact segment_bytes "$(psqlc -c "SELECT setting FROM pg_settings WHERE name = 'shared_memory_size'")"
fact segment_line "$seg"
fact max_connections "$maxc"
fact mem_total_kb "$(meminfo_kb MemTotal)"
fact mem_available_kb_before "$(meminfo_kb MemAvailable)"
fact mem_free_kb_before "$(meminfo_kb MemFree)"
fact hugepages_total_before "$(meminfo_kb HugePages_Total)"
calibrate_clock
# which page-table pages PageTables counts (Linux 6.1: not the PUD
# pages, which VmPTE counts): kernel/vm/pt-accounting.c
set -- $(pt-accounting 2>&1 | sed -n 's/^vmpte_pages=\([0-9]*\) pagetables_pages=\([0-9]*\) .*/\1 \2/p')
fact pt_accounting_vmpte_pages "${1:-}"; fact pt_accounting_pagetables_pages "${2:-}"
pt0=$(pagetables_kb)
fact pagetables_before_kb "$pt0"
rm -rf "$PGRUN/pgb"; mkdir -p "$PGRUN/pgb"
# pgbench's -T clock runs from before its connections (PostgreSQL
# 15): give it twice the expected connecting time on top.
conn_ms=$conn_ms_seen
[ "$conn_ms" -gt 0 ] || conn_ms=250
T=$((dur + 10 + (2 * n * conn_ms + 999) / 1000))
# dba: every backend's pass, one per vCPU at a time (at most 2), each
# as long as init's single 4k pass (faults included), times 1.5
# (10 concurrent 4k passes took 1.1 times 10 single ones in the
# reference run: clients whose pass is done take their share of the
# CPU meanwhile; a pass timed under contention is no estimate: it is
# N times longer), plus twice plan --pid's time per backend (the
# slowest seen so far in this run, 250 ms before the first point).
# A generous margin: what is left of -T after the window is spent
# with pgbench stopped (below), at no host cost.
if [ "$workload" = dba ]; then
	cpus=$(grep -c '^processor' /proc/cpuinfo); [ "$cpus" -gt 2 ] && cpus=2
	T=$((T + (3 * n * (pass_ms_seen > 0 ? pass_ms_seen : 30000) / cpus / 2 + 999) / 1000))
	T=$((T + (2 * n * plan_ms_seen + 999) / 1000))
	rm -rf "$PGRUN/pass"; mkdir -p "$PGRUN/pass"; chown postgres "$PGRUN/pass"
	script="-f $PGRUN/dba.sql -D scale=$scale -D passed=0"
elif [ "$workload" = rw ]; then
	script="-b tpcb-like"
else
	script="-S"
fi
# touch snapshots: -T covers the last one (after the window), with the
# connecting margin and 10 s more; what is left then costs nothing
# (pgbench is stopped, below).
# A snapshot reads 4 MiB of pagemap per backend for a 2 GiB segment: 19
# guest ms per backend at 1,000 backends under pgbench -S, 31 under the
# read-write script (instruction clock; postgres-touch-rw's first run,
# whose 40 ms once for all snapshots let -T run out before the last
# one); 100 ms per backend and snapshot allowed, and the window's stat
# snapshot as one more.
if [ -n "$touch_at" ]; then
	nsnap=$(($(echo "$touch_at" | tr ',' ' ' | wc -w) + 1))
	tt=$((touch_last + 10 + (2 * n * conn_ms + 999) / 1000 + (nsnap * n * 100 + 999) / 1000))
	[ "$tt" -gt "$T" ] && T=$tt
	fact touch_at "$touch_at"
fi
fact pgbench_T_s "$T"
fact expected_ms_per_connection "$conn_ms"
say "$mode c=$n: pgbench $script -M prepared -c $n -j 2 -T $T"
ts=$(date +%s)
# shellcheck disable=SC2086
# exec: $bpid is pgbench itself (dba stops and continues it)
(cd "$PGRUN/pgb" && exec "$PGBIN/pgbench" -h "$PGRUN" -U postgres -n $script -M prepared -c "$n" -j 2 -T "$T" -l \
	postgres >"$PGRUN/pgb/out.txt" 2>&1) &
bpid=$!
i=0
while [ "$(backend_pids | wc -w)" -lt "$n" ] && kill -0 $bpid 2>/dev/null; do
	i=$((i + 1)); sleep 0.5
	[ $((i % 60)) = 0 ] && say "$mode c=$n: $(backend_pids | wc -w) of $n connected after $(($(date +%s) - ts)) s"
done
tc=$(date +%s)
pids0=$(sorted $(backend_pids))
fact connected_after_s $((tc - ts))
fact backends_connected "$(echo $pids0 | wc -w)"
snap=$PGRUN/snap
# touch_snapshot S: pg-touch over the backends of the window, at the head
# of the run queue; its start and end (1/100 s of the clock pgbench's log
# uses) head the block in TAG.touch.
touch_snapshot() {
	urgent
	t_a=$(now_cs)
	# shellcheck disable=SC2086
	pg-touch "$pg_pid" $pids0 >"$PGRUN/touch.now" 2>&1
	t_rc=$?
	t_b=$(now_cs)
	calm
	{ echo "snapshot $1 $t_a $t_b $t_rc"; cat "$PGRUN/touch.now"; } >>"$out/$tag.touch"
	touch_cs="$touch_cs $1:$(((t_a + t_b) / 2))"
	say "$mode c=$n: touch snapshot at $1 s: $(awk 'NF == 3 && $2 ~ /^[0-9]+$/ {p += $2; s += $3; k++} END {if (k) printf "%d backends, mean %.0f pages, %.0f 2 MiB spans", k, p / k, s / k}' "$PGRUN/touch.now") (pg-touch exit $t_rc)"
}
touch_cs=
[ -n "$touch_at" ] && : >"$out/$tag.touch"
if [ "$workload" = dba ]; then
	# Wait for every backend's pass; then PageTables and plan --pid
	# (VmPTE and the segment's pages present, per backend).
	i=0
	while [ "$(ls "$PGRUN/pass" | wc -l)" -lt "$n" ] && kill -0 $bpid 2>/dev/null; do
		i=$((i + 1)); sleep 1
		[ $((i % 60)) = 0 ] && say "$mode c=$n: $(ls "$PGRUN/pass" | wc -l) of $n passes done after $(($(date +%s) - ts)) s"
	done
	tp=$(date +%s)
	fact passes_done "$(ls "$PGRUN/pass" | wc -l)"
	fact passes_done_after_s $((tp - ts))
	# (at the head of the run queue: pgbench -S runs in every
	# backend that has done its pass, and under TCG a guest second
	# of that costs about 16 host s)
	urgent
	fact pagetables_after_pass_kb "$(pagetables_kb)"
	# at the same moment: the VmPTE of the backends and of pgbench,
	# and the PUD pages in them (their 512 GiB slots), to hold the
	# delta against (bench/pg-dba-project)
	# shellcheck disable=SC2046
	pa=$(sorted $(backend_pids))
	# shellcheck disable=SC2046,SC2086
	fact after_pass_vmpte_sum_kb "$(cat $(files status $pa) 2>/dev/null | awk '$1 == "VmPTE:" {s += $2} END {print s + 0}')"
	fact after_pass_backends "$(echo $pa | wc -w)"
	# shellcheck disable=SC2086
	fact after_pass_slots_sum "$(upper_slots $pa)"
	fact pgbench_vmpte_kb "$(vmpte_kb $bpid)"
	fact pgbench_slots "$(upper_slots $bpid)"
	cat "$PGRUN"/pass/* >"$out/$tag.passes" 2>/dev/null
	t1=$(date +%s)
	if [ "$mode" = mshare-2025-dax ]; then
		# The 2025 design: every backend maps the whole 512 GiB
		# region (inherited), and plan --pid would read 1 GiB of
		# pagemap per process (minutes each under TCG) to model
		# tables that are the region's, not the backend's: the split
		# is by construction (bench/lib/pgpoint.py), VmPTE from the window.
		echo "plan --pid skipped for $mode: the backends map the whole 512 GiB msharefs region; its page tables are the region's" \
			>"$out/$tag.pid.err"
		: >"$out/$tag.pid.json"
		fact plan_pid_rc skipped
	else
		"${MSHARE_BENCH:-mshare-bench}" plan --pid "$pg_pid" --json >"$out/$tag.pid.json" 2>"$out/$tag.pid.err"
		fact plan_pid_rc $?
	fi
	calm
	fact plan_pid_s $(($(date +%s) - t1))
	# (whole seconds: below 50 backends too coarse to go by)
	pm=$(((($(date +%s) - t1) * 1000 + 999) / n))
	if [ "$n" -ge 50 ]; then
		[ "$plan_n_seen" -lt 50 ] && plan_ms_seen=$pm
		[ "$pm" -gt "$plan_ms_seen" ] && plan_ms_seen=$pm
		plan_n_seen=$n
	fi
	fact pids_at_plan "$(sorted $(backend_pids))"
	say "$mode c=$n: $(ls "$PGRUN/pass" | wc -l) passes done after $((tp - ts)) s; plan --pid took $(($(date +%s) - t1)) s"
	# the window starts now: what is left of -T, from here
	tc=$(date +%s)
fi
# Touch snapshots are timed from here (dba: the passes are done); the
# window starts after the one at 0 (it takes seconds at 500 backends).
[ -n "$touch_at" ] && fact connected_cs "$(now_cs)"
tw=$tc
if [ -n "$touch_at" ] && [ "${touch_at%%,*}" = 0 ]; then
	touch_snapshot 0
	tw=$(date +%s)
fi
# Start of the fault window: one read of every backend's stat.
# shellcheck disable=SC2046,SC2086
urgent
{ a=$(now_cs); cat $(files stat $pids0) >"$snap.stat0" 2>/dev/null; b=$(now_cs); }
calm
w0=$(((a + b) / 2))
m0=$(stat_minflt "$snap.stat0")
fact backends_in_stat_snapshot0 "$(grep -c . "$snap.stat0")"
tlb0=$(tlb_shootdowns)
# Halfway through what is left of pgbench's -T once all are connected
# (a slow guest needs the margin: the snapshot itself takes seconds).
left=$((T - (tw - ts)))
# The window is DURATION s (or half of what is left, if less):
# -T has a generous margin there, which costs no host time (below).
wl=$((left / 2))
# (since Dec 7 for every preset: pgbench is stopped after the window,
# so -T's margin costs no host time; before, a select point's window was
# half of what was left, 130 guest s at a first point of 500 connections)
[ "$dur" -lt "$wl" ] && wl=$dur
fact window_planned_s "$wl"
while [ $(($(date +%s) - tw)) -lt "$wl" ] && kill -0 $bpid 2>/dev/null; do sleep 1; done
urgent
pids=$(sorted $(backend_pids))
# One snapshot of every backend's stat and status files (two
# processes: a process per figure took over 10 s under load), then
# PageTables and the TLB count; every figure below is read from it.
# pgbench holds all its connections until its end: when it still
# runs after the snapshot and the snapshot holds the same N
# backends, they were all connected throughout the window.
# shellcheck disable=SC2046,SC2086
{ a=$(now_cs); cat $(files stat $pids) >"$snap.stat" 2>/dev/null; b=$(now_cs); }
w1=$(((a + b) / 2))
# shellcheck disable=SC2046,SC2086
cat $(files status $pids) >"$snap.status" 2>/dev/null
pt1=$(pagetables_kb); tlb1=$(tlb_shootdowns)
mav1=$(meminfo_kb MemAvailable); mfr1=$(meminfo_kb MemFree)
calm
snapshot_cs=$(($(now_cs) - a))
running=$(kill -0 $bpid 2>/dev/null && echo yes || echo no)
fact sampled_after_s $(($(date +%s) - tc))
# touch snapshots after the window, at their times after all connected
for s_ in $(echo "$touch_at" | tr ',' ' '); do
	[ "$s_" = 0 ] && continue
	while [ $(($(date +%s) - tc)) -lt "$s_" ] && kill -0 $bpid 2>/dev/null; do sleep 1; done
	# shellcheck disable=SC2046
	if kill -0 $bpid 2>/dev/null && [ "$(sorted $(backend_pids))" = "$pids0" ]; then
		touch_snapshot "$s_"
	else
		say "$mode c=$n: no touch snapshot at $s_ s: pgbench had ended or the backends changed"
		echo "snapshot $s_ - - missing" >>"$out/$tag.touch"
	fi
done
# pgbench is stopped here, before the facts below are worked out (under
# 1,000 busy backends that took over 12 guest s, by when a -T of 25 s had
# run out: no exit figure), and continued once its -T is over (below).
stopped=
e_a=
if kill -STOP $bpid 2>/dev/null; then
	stopped=yes
	t1=$(date +%s)
fi
# shellcheck disable=SC2086
{
	fact pgbench_still_running "$running"
	fact backends_measured "$(echo $pids | wc -w)"
	fact same_backends "$([ "$pids" = "$pids0" ] && echo yes || echo no)"
	fact backends_in_snapshot "$(grep -c '^VmPTE:' "$snap.status")"
	fact backends_in_stat_snapshot "$(grep -c . "$snap.stat")"
	fact pagetables_end_kb "$pt1"
	fact vmpte_sum_kb "$(awk '$1 == "VmPTE:" {s += $2; n++} END {if (n) print s}' "$snap.status")"
	fact minflt_delta "$(minus "$(stat_minflt "$snap.stat")" "$m0")"
	fact fault_window_cs "$((w1 - w0))"
	fact tlb_shootdowns_delta "$(minus "$tlb1" "$tlb0")"
	fact rss_shmem_sum_kb "$(awk '$1 == "RssShmem:" {s += $2; n++} END {if (n) print s}' "$snap.status")"
	fact rss_anon_sum_kb "$(awk '$1 == "RssAnon:" {s += $2; n++} END {if (n) print s}' "$snap.status")"
	set -- $(awk '$1 == "VmPTE:" {if (n++ == 0 || $2 < lo) lo = $2; if ($2 > hi) hi = $2} END {if (n) print lo + 0, hi + 0}' "$snap.status")
	fact vmpte_min_kb "${1:-}"; fact vmpte_max_kb "${2:-}"
	fact mem_available_kb_end "$mav1"
	fact mem_free_kb_end "$mfr1"
	fact snapshot_cs "$snapshot_cs"
}
# pgbench, stopped (SIGSTOP) right after the window and the touch
# snapshots (above), stays stopped until its
# -T has run out, then continued: it ends at once, with its summary.
# Meanwhile the guest idles, and an idle guest's clock jumps ahead
# under --clock instructions and tcg (QEMU -icount sleep=off): the
# margin in -T costs no host time, where pgbench -S transactions
# cost about 16 host s per guest s under TCG (context switches).
# Transactions in flight at the stop end after the window: none is
# counted in it. pgbench's own TPS and latency average include the
# stop (the record uses the window's, from its log). (Until Dec 7 the
# select preset without touch snapshots let pgbench run to its end.)
if [ -n "$stopped" ]; then
	while [ $(($(date +%s) - ts)) -le "$T" ]; do sleep 1; done
	urgent
	e_a=$(now_cs)
	kill -CONT $bpid
	calm
	fact pgbench_stopped_s $(($(date +%s) - t1))
fi
wait $bpid
fact pgbench_rc $?
# pgbench has closed its connections: the last backends exit now.
urgent
i=0
while [ -n "$(backend_pids)" ] && [ $i -lt 1200 ]; do i=$((i + 1)); sleep 0.1; done
e_b=$(now_cs)
calm
if [ -n "$e_a" ] && [ -z "$(backend_pids)" ]; then fact backends_exit_cs $((e_b - e_a)); else fact backends_exit_cs ""; fi
fact backends_exit_from cont
sed 's/^/pgbench: /' "$PGRUN/pgb/out.txt" >>"$f"
# Per-transaction log: client, tx, latency_us, script, epoch, us
# (the time the transaction ended). Transactions in the fault window:
# those that ended between the two stat reads.
# dba: one pass over the log (under TCG each pass over it costs
# minutes of host time): the window's latencies, counted and sorted.
# (touch snapshots: pgbench is stopped after them, which a transaction
# in flight would count in its latency: the window's only, as for dba)
if [ "$workload" = dba ] || [ -n "$stopped" ]; then
	# latencies of the transactions in the window only (no pass)
	cat "$PGRUN"/pgb/pgbench_log.* 2>/dev/null |
		awk -v a="$w0" -v b="$w1" '{t = $5 * 100 + int($6 / 10000)} t > a && t <= b {print $3}' >"$PGRUN/pgb/lat.w"
	fact transactions_in_window "$(wc -l <"$PGRUN/pgb/lat.w")"
	sort -n "$PGRUN/pgb/lat.w" >"$PGRUN/pgb/lat"
else
	fact transactions_in_window "$(cat "$PGRUN"/pgb/pgbench_log.* 2>/dev/null |
		awk -v a="$w0" -v b="$w1" '{t = $5 * 100 + int($6 / 10000)} t > a && t <= b {c++} END {print c + 0}')"
fi
# the transactions ended by each touch snapshot (its middle)
if [ -n "$touch_cs" ]; then
	cat "$PGRUN"/pgb/pgbench_log.* 2>/dev/null | awk -v snaps="$touch_cs" '
	BEGIN { k = split(snaps, s, " "); for (i = 1; i <= k; i++) { split(s[i], p, ":"); name[i] = p[1]; at[i] = p[2] } }
	{ t = $5 * 100 + int($6 / 10000); for (i = 1; i <= k; i++) if (t <= at[i]) c[i]++ }
	END { for (i = 1; i <= k; i++) printf "touch_tx_%s=%d\n", name[i], c[i] + 0 }' >>"$f"
fi
if [ "$workload" != dba ] && [ -z "$stopped" ]; then
	cat "$PGRUN"/pgb/pgbench_log.* 2>/dev/null | awk '{print $3}' | sort -n >"$PGRUN/pgb/lat"
fi
cnt=$(wc -l <"$PGRUN/pgb/lat")
fact latency_samples "$cnt"
if [ "$cnt" -gt 0 ]; then
	fact latency_p50_us "$(sed -n "$(((cnt * 50 + 99) / 100))p" "$PGRUN/pgb/lat")"
	fact latency_p99_us "$(sed -n "$(((cnt * 99 + 99) / 100))p" "$PGRUN/pgb/lat")"
	fact latency_max_us "$(tail -1 "$PGRUN/pgb/lat")"
	fact latency_mean_us "$(awk '{s += $1} END {printf "%.0f", s / NR}' "$PGRUN/pgb/lat")"
fi
# The connection rate for the next T: pgbench's initial connection
# time, or our own count when pgbench did not say (whole seconds).
ic=$(sed -n 's/^initial connection time = \([0-9]*\).*/\1/p' "$PGRUN/pgb/out.txt" | head -1)
isnum "$ic" || ic=$(((${tp:-$tc} - ts) * 1000))
[ $((ic / n)) -gt "$conn_ms_seen" ] && conn_ms_seen=$((ic / n))
say "$mode c=$n: done: $(grep -h '^tps' "$PGRUN/pgb/out.txt" | head -1); snapshot of $(echo $pids | wc -w) backends, pgbench running after it: $running"
pg_stop
running_server=""
cp "$pg_logfile" "$out/$tag.server.log"
if [ "$pool_added" -gt 0 ]; then pool_give_back; say "$mode: pool back to $(cat $HP)"; fi
left="$(msharefs_names)$(ls -A "$PGSHM" 2>/dev/null | tr '\n' ' ')"
[ -n "$left" ] && say "$mode: LEFT BEHIND after stop: $left"
save_state
say "done"
