#!/bin/sh
# In-guest runner of bench/pg-sweep (one VM boot for every point):
#   pg-bench.sh OUTDIR SHARED_BUFFERS SCALE DURATION_S MODES CONNECTIONS
# MODES and CONNECTIONS are comma-separated (4k, hugetlb-2m, mshare-dax,
# mshare-shmem; 10,100,...). One cluster on the DAX mount, `pgbench -i -s
# SCALE` once; then per mode: start, pg_prewarm every pgbench relation
# (the buffers hold the data before the first point), and per N:
#   - PageTables before; `pgbench -n -S -M prepared -c N -j 2 -T T -l`,
#     T = DURATION + N/4 + 10 s (its -T clock includes connecting);
#   - when all N are connected: the backends' minor faults and the
#     database's commits (pg_stat_database.xact_commit);
#   - halfway through the rest of pgbench's -T, all N connected: PageTables, every backend's
#     VmPTE, minflt and RssShmem, commits again;
#   - pgbench's TPS, latency average and initial connection time; p99 from
#     its per-transaction log.
# Writes OUTDIR/MODE-cN.facts (key=value) per point and OUTDIR/status.
# Progress on the console: "pg-bench: ..." lines.
. /guest/pg/pg-common.sh
out=$1 sb=$2 scale=$3 dur=$4 modes=$5 conns=$6
[ -n "$conns" ] || { echo "usage: pg-bench.sh OUTDIR SHARED_BUFFERS SCALE DURATION_S MODES CONNECTIONS" >&2; exit 2; }
mkdir -p "$out"
say() { echo "pg-bench: $*"; echo "$*" >>"$out/status"; }
maxn=0
for n in $(echo "$conns" | tr ',' ' '); do [ "$n" -gt "$maxn" ] && maxn=$n; done
maxc=$((maxn + 10))
HP=/proc/sys/vm/nr_hugepages

# Figures of many processes at once, one awk each (a process per backend
# would take seconds under TCG): PIDS are the arguments.
files() { suffix=$1; shift; for p in "$@"; do printf '/proc/%s/%s\n' "$p" "$suffix"; done; }
# minflt is field 10 of /proc/PID/stat (the comm, "postgres", has no space).
# shellcheck disable=SC2046
minflt_sum() { [ $# -gt 0 ] || { echo 0; return; }; cat $(files stat "$@") 2>/dev/null | awk '{s += $10} END {print s + 0}'; }
# TLB shootdown interrupts received, all CPUs (/proc/interrupts "TLB").
tlb_shootdowns() { awk '$1 == "TLB:" {for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) s += $i} END {print s + 0}' /proc/interrupts; }
commits() { psqlc -c "SELECT sum(xact_commit) FROM pg_stat_database"; }
# The client backends of the server: children of the postmaster whose
# process title is "postgres: postgres postgres [local] ..." (from /proc,
# no query: a psql round trip takes about a second under TCG).
backend_pids() { ps -o pid,ppid,args | awk -v pm="$pg_pid" '$2 == pm && $3 == "postgres:" && $4 == "postgres" && $6 == "[local]" {printf "%s ", $1}'; }

say "init: initdb, then pgbench -i -s $scale (4k mode)"
pg_init || { say "FAILED initdb"; exit 1; }
pg_start 4k "$sb" "$maxc" || { say "FAILED start for pgbench -i"; exit 1; }
t0=$(date +%s)
"$PGBIN/pgbench" -h "$PGRUN" -U postgres -i -s "$scale" -q postgres >"$out/pgbench-init.log" 2>&1 ||
	{ say "FAILED pgbench -i"; cat "$out/pgbench-init.log"; exit 1; }
say "init: pgbench -i -s $scale took $(($(date +%s) - t0)) s; data $(psqlc -c "SELECT pg_size_pretty(pg_database_size('postgres'))")"
psqlc -c "CREATE EXTENSION pg_prewarm" >/dev/null
pg_stop

for mode in $(echo "$modes" | tr ',' ' '); do
	hp_added=0
	if [ "$mode" = hugetlb-2m ]; then
		need=$(as_pg "$PGBIN/postgres" -D "$PGDATA" -C shared_memory_size_in_huge_pages \
			-c shared_buffers="$sb" -c max_connections="$maxc" -c huge_pages=on 2>/dev/null)
		before=$(cat $HP)
		echo $((before + need)) >$HP
		hp_added=$(($(cat $HP) - before))
		say "$mode: 2 MiB pool $before -> $(cat $HP) (server needs $need)"
	fi
	if ! pg_start "$mode" "$sb" "$maxc"; then
		say "FAILED start $mode"
		cp "$pg_logfile" "$out/server-$mode.log"
		[ "$hp_added" -gt 0 ] && echo $(($(cat $HP) - hp_added)) >$HP
		continue
	fi
	seg=$(grep -h '^pg-mshare\[' "$pg_logfile" | head -1)
	psqlc -c "SELECT sum(pg_prewarm(c.oid)) FROM pg_class c WHERE c.relname LIKE 'pgbench_%' AND c.relkind IN ('r', 'i')" \
		>"$out/prewarm-$mode.txt" 2>&1
	say "$mode: started (pid $pg_pid), prewarmed $(cat "$out/prewarm-$mode.txt") blocks${seg:+; $seg}"
	for n in $(echo "$conns" | tr ',' ' '); do
		f=$out/$mode-c$n.facts
		: >"$f"
		fact() { echo "$1=$2" >>"$f"; }
		fact mode "$mode"; fact connections "$n"; fact shared_buffers "$sb"; fact scale "$scale"; fact duration_s "$dur"
		fact segment_bytes "$(psqlc -c "SELECT setting FROM pg_settings WHERE name = 'shared_memory_size'")"
		fact segment_line "$seg"
		fact mem_total_kb "$(meminfo_kb MemTotal)"
		fact mem_available_kb_before "$(meminfo_kb MemAvailable)"
		pt0=$(meminfo_kb PageTables)
		fact pagetables_before_kb "$pt0"
		rm -rf "$PGRUN/pgb"; mkdir -p "$PGRUN/pgb"
		# pgbench's -T clock runs from before its connections (PostgreSQL
		# 15): give it time to connect on top (TCG opens about 6 a second).
		T=$((dur + n / 4 + 10))
		fact pgbench_T_s "$T"
		say "$mode c=$n: pgbench -S -M prepared -c $n -j 2 -T $T"
		ts=$(date +%s)
		(cd "$PGRUN/pgb" && "$PGBIN/pgbench" -h "$PGRUN" -U postgres -n -S -M prepared -c "$n" -j 2 -T "$T" -l \
			postgres >"$PGRUN/pgb/out.txt" 2>&1) &
		bpid=$!
		i=0
		while [ "$(backend_pids | wc -w)" -lt "$n" ] && kill -0 $bpid 2>/dev/null; do
			i=$((i + 1)); sleep 0.5
			[ $((i % 60)) = 0 ] && say "$mode c=$n: $(backend_pids | wc -w) of $n connected after $(($(date +%s) - ts)) s"
		done
		tc=$(date +%s)
		pids=$(backend_pids)
		fact connected_after_s $((tc - ts))
		fact backends_connected "$(echo $pids | wc -w)"
		# shellcheck disable=SC2086
		m0=$(minflt_sum $pids); tlb0=$(tlb_shootdowns); x0=$(commits)
		# Halfway through what is left of pgbench's -T once all are connected
		# (a slow guest needs the margin: the sample itself takes seconds).
		left=$((T - (tc - ts)))
		while [ $(($(date +%s) - tc)) -lt $((left / 2)) ] && kill -0 $bpid 2>/dev/null; do sleep 1; done
		pids=$(backend_pids)
		# One snapshot of every backend's status and stat files (two
		# processes: a process per figure took over 10 s under load), then
		# PageTables and the TLB count; every figure below is read from it.
		# pgbench holds all its connections until its end: when it still
		# runs after the snapshot and the snapshot holds N backends, they
		# were all connected at that moment.
		snap=$PGRUN/snap
		# shellcheck disable=SC2046,SC2086
		cat $(files status $pids) >"$snap.status" 2>/dev/null
		# shellcheck disable=SC2046,SC2086
		cat $(files stat $pids) >"$snap.stat" 2>/dev/null
		pt1=$(meminfo_kb PageTables); tlb1=$(tlb_shootdowns)
		running=$(kill -0 $bpid 2>/dev/null && echo yes || echo no)
		fact sampled_after_s $(($(date +%s) - tc))
		# shellcheck disable=SC2086
		{
			fact pgbench_still_running "$running"
			fact backends_measured "$(echo $pids | wc -w)"
			fact backends_in_snapshot "$(grep -c '^VmPTE:' "$snap.status")"
			fact pagetables_end_kb "$pt1"
			fact vmpte_sum_kb "$(awk '$1 == "VmPTE:" {s += $2} END {print s + 0}' "$snap.status")"
			fact minflt_delta $(($(awk '{s += $10} END {print s + 0}' "$snap.stat") - m0))
			fact tlb_shootdowns_delta $((tlb1 - tlb0))
			fact rss_shmem_sum_kb "$(awk '$1 == "RssShmem:" {s += $2} END {print s + 0}' "$snap.status")"
			fact rss_anon_sum_kb "$(awk '$1 == "RssAnon:" {s += $2} END {print s + 0}' "$snap.status")"
			set -- $(awk '$1 == "VmPTE:" {if (n++ == 0 || $2 < lo) lo = $2; if ($2 > hi) hi = $2} END {print lo + 0, hi + 0}' "$snap.status")
			fact vmpte_min_kb "${1:-}"; fact vmpte_max_kb "${2:-}"
			fact mem_available_kb_end "$(meminfo_kb MemAvailable)"
			# Last: a query takes seconds with N busy clients under TCG.
			# Both counts are taken the same way (faults, then commits),
			# so the two windows have the same length; backends flush
			# their commit counts at most once a second.
			fact commits_delta $(($(commits) - x0))
		}
		wait $bpid
		fact pgbench_rc $?
		sed 's/^/pgbench: /' "$PGRUN/pgb/out.txt" >>"$f"
		# Per-transaction log: client, tx, latency_us, script, epoch, us.
		cat "$PGRUN"/pgb/pgbench_log.* 2>/dev/null | awk '{print $3}' | sort -n >"$PGRUN/pgb/lat"
		cnt=$(wc -l <"$PGRUN/pgb/lat")
		fact latency_samples "$cnt"
		if [ "$cnt" -gt 0 ]; then
			fact latency_p50_us "$(sed -n "$(((cnt * 50 + 99) / 100))p" "$PGRUN/pgb/lat")"
			fact latency_p99_us "$(sed -n "$(((cnt * 99 + 99) / 100))p" "$PGRUN/pgb/lat")"
			fact latency_max_us "$(tail -1 "$PGRUN/pgb/lat")"
			fact latency_mean_us "$(awk '{s += $1} END {printf "%.0f", s / NR}' "$PGRUN/pgb/lat")"
		fi
		say "$mode c=$n: done: $(grep -h '^tps' "$PGRUN/pgb/out.txt" | head -1)"
	done
	pg_stop
	cp "$pg_logfile" "$out/server-$mode.log"
	if [ "$hp_added" -gt 0 ]; then echo $(($(cat $HP) - hp_added)) >$HP; say "$mode: pool back to $(cat $HP)"; fi
	left=$(ls -A /sys/fs/mshare "$PGSHM" 2>/dev/null | grep -v ':$' | grep -v '^$' | tr '\n' ' ')
	[ -n "$left" ] && say "$mode: LEFT BEHIND after stop: $left"
done
say "all done"
