# Sourced by the in-guest PostgreSQL scripts (installed as /guest/pg/ by
# workloads/postgres/initramfs-extra.sh). Runs in the benchmark guest as
# root: PostgreSQL itself runs as the `postgres` user. a host PostgreSQL point of bench/sweep
# also runs pg-bench.sh on the host, as root, with PGROOT and PGRUN set to
# a private temporary directory.
#
# Layout: the cluster on the fsdax mount (/mnt/pmem/pg/data), the mshare
# backing files next to it (/mnt/pmem/pg/shm), the socket and server logs on
# the guest's tmpfs (/tmp/pg).
PGBIN=/usr/lib/postgresql/15/bin
PGROOT=${PGROOT:-/mnt/pmem/pg}
PGDATA=$PGROOT/data
PGSHM=$PGROOT/shm
PGRUN=${PGRUN:-/tmp/pg}
PG_MSHARE_SO=/usr/lib/pg-mshare.so
export TZ=UTC LC_ALL=C
unset LANG

pg_log() { echo "pg: $*"; }
as_pg() { su -s /bin/sh -c 'exec "$0" "$@"' -- postgres "$@"; }
# psqlc [psql args]: one-shot query as postgres, unaligned, tuples only.
psqlc() { "$PGBIN/psql" -X -q -A -t -h "$PGRUN" -U postgres -d postgres "$@"; }

# pg_init: a fresh cluster on the DAX mount.
pg_init() {
	rm -rf "$PGROOT"
	mkdir -p "$PGROOT" "$PGSHM" "$PGRUN" || return 1
	chown postgres "$PGROOT" "$PGSHM" "$PGRUN"
	chmod 700 "$PGSHM"
	as_pg "$PGBIN/initdb" -D "$PGDATA" -A trust -U postgres --no-locale -E UTF8 \
		>"$PGRUN/initdb.log" 2>&1 || { cat "$PGRUN/initdb.log"; return 1; }
}

# pg_start MODE SHARED_BUFFERS MAX_CONNECTIONS [EXTRA -c SETTINGS]
# MODE: 4k (huge_pages=off), hugetlb-2m (huge_pages=on, pool must be
# there), mshare-dax / mshare-shmem (the preload library, huge_pages=off;
# the 2022 design, v1), mshare-2025-dax (the library, the 2025 design).
# The server log is $PGRUN/server-MODE.log. Sets pg_pid.
pg_start() {
	# pg_-prefixed: the caller's mode, sb and maxc are its own (until
	# Dec 7 this set `mode`, so that the init's 4k start made the first
	# point of a boot run in mode 4k whatever its backend)
	pg_mode=$1 pg_sb=$2 pg_maxc=$3
	shift 3
	hp=off env=""
	case "$pg_mode" in
	4k) ;;
	hugetlb-2m) hp=on ;;
	mshare-dax) env="LD_PRELOAD=$PG_MSHARE_SO PGMSHARE_BACKING=dax PGMSHARE_DIR=$PGSHM" ;;
	mshare-shmem) env="LD_PRELOAD=$PG_MSHARE_SO PGMSHARE_BACKING=shmem PGMSHARE_DIR=$PGSHM" ;;
	# the 2025 design (msharefs region file, series v3): the DAX file
	# mapped into the region by ioctl; needs the mshare-2025 kernel
	mshare-2025-dax) env="LD_PRELOAD=$PG_MSHARE_SO PGMSHARE_DESIGN=2025 PGMSHARE_BACKING=dax PGMSHARE_DIR=$PGSHM" ;;
	*) pg_log "unknown mode '$pg_mode' (4k, hugetlb-2m, mshare-dax, mshare-shmem, mshare-2025-dax)"; return 2 ;;
	esac
	pg_logfile=$PGRUN/server-$pg_mode.log
	: >"$pg_logfile"; chown postgres "$pg_logfile"
	# shellcheck disable=SC2086
	as_pg env $env "$PGBIN/pg_ctl" -D "$PGDATA" -l "$pg_logfile" -w -t 600 -o "-c shared_buffers=$pg_sb \
-c huge_pages=$hp -c max_connections=$pg_maxc -c listen_addresses='' -c unix_socket_directories='$PGRUN' \
-c autovacuum=off -c jit=off -c max_parallel_workers_per_gather=0 -c dynamic_shared_memory_type=posix \
-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_wal_size=4GB $*" \
		start >"$PGRUN/pg_ctl.log" 2>&1 || { cat "$PGRUN/pg_ctl.log" "$pg_logfile"; return 1; }
	pg_pid=$(head -1 "$PGDATA/postmaster.pid")
}

pg_stop() {
	as_pg "$PGBIN/pg_ctl" -D "$PGDATA" -m fast -w -t 600 stop >/dev/null 2>&1
}

# The region names in /sys/fs/mshare, space-separated (the 2025 design's
# msharefs always holds mshare_info, which is no region).
msharefs_names() { ls -A /sys/fs/mshare 2>/dev/null | grep -v '^mshare_info$' | tr '\n' ' '; }

# Kernel figures.
meminfo_kb() { awk -v k="$1:" '$1 == k {print $2}' /proc/meminfo; }
# PageTables (kB) with the per-CPU vmstat counts folded in first
# (/proc/sys/vm/stat_refresh): unfolded, /proc/meminfo lags by up to the
# per-CPU threshold times the CPUs, tens of pages (a fresh-clone CI read
# 80 KiB of it for 20 connections whose region adds none).
pagetables_kb() { echo 1 >/proc/sys/vm/stat_refresh 2>/dev/null; meminfo_kb PageTables; }
vmpte_kb() { awk '/^VmPTE:/ {print $2}' "/proc/$1/status" 2>/dev/null; }
# minflt of a process (field 10 of /proc/PID/stat; the comm may hold spaces).
minflt() { sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | awk '{print $8}'; }

# The 2 MiB pool (/proc/sys/vm/nr_hugepages). pool_take NEED raises it by
# what is missing of NEED free, unreserved pages and adds that to
# pool_added; pool_give_back returns pool_added, never more than is free
# (the pool never drops below what others hold). On the host both run
# under the suite's pool lock (harness/hugepool.c, docs/running.md "The hugepage
# pool"), held by pool_take until pool_release_lock (after the server has
# reserved its pages), so no other run counts our pages as free.
HP=/proc/sys/vm/nr_hugepages
POOL_LOCK=/run/mshare-bench/hugepool.lock
pool_added=0
pool_locked=0
pool_lock() {
	command -v flock >/dev/null || return 0   # the guest's busybox: one user
	mkdir -p "${POOL_LOCK%/*}" && exec 9>>"$POOL_LOCK" && flock -w 600 9 && pool_locked=1
}
pool_release_lock() { [ "$pool_locked" = 1 ] && { flock -u 9; exec 9>&-; pool_locked=0; }; return 0; }
pool_free() { awk '$1 == "HugePages_Free:" {f = $2} $1 == "HugePages_Rsvd:" {r = $2} END {print f - r}' /proc/meminfo; }
pool_take() {
	pool_lock || { pg_log "cannot take the hugepage pool lock $POOL_LOCK"; return 1; }
	short=$(($1 - $(pool_free)))
	[ "$short" -gt 0 ] || return 0
	before=$(cat $HP)
	echo $((before + short)) >$HP 2>/dev/null
	pool_added=$((pool_added + $(cat $HP) - before))
	[ "$(pool_free)" -ge "$1" ] || { pg_log "hugepage pool: $(pool_free) free after raising it by $short, need $1"; return 1; }
}
pool_give_back() {
	pool_release_lock
	[ "$pool_added" -gt 0 ] || return 0
	pool_lock || { pg_log "cannot take the hugepage pool lock; $pool_added pages left in the pool"; return 1; }
	# (pool_n: sh has no local variables, and pg-bench.sh's loop counts
	# connections in n; a mode after hugetlb-2m ran with the pool's count)
	pool_n=$(pool_free)
	[ "$pool_n" -gt "$pool_added" ] && pool_n=$pool_added
	if [ "$pool_n" -gt 0 ] && echo $(($(cat $HP) - pool_n)) >$HP 2>/dev/null; then pool_added=$((pool_added - pool_n)); fi
	pool_release_lock
	[ "$pool_added" -eq 0 ] || { pg_log "hugepage pool: $pool_added pages still in use, not given back"; return 1; }
}
