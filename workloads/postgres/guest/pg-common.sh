# Sourced by the in-guest PostgreSQL scripts (installed as /guest/pg/ by
# workloads/postgres/initramfs-extra.sh). Runs in the benchmark guest as
# root: PostgreSQL itself runs as the `postgres` user.
#
# Layout: the cluster on the fsdax mount (/mnt/pmem/pg/data), the mshare
# backing files next to it (/mnt/pmem/pg/shm), the socket and server logs on
# the guest's tmpfs (/tmp/pg).
PGBIN=/usr/lib/postgresql/15/bin
PGROOT=${PGROOT:-/mnt/pmem/pg}
PGDATA=$PGROOT/data
PGSHM=$PGROOT/shm
PGRUN=/tmp/pg
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
# there), mshare-dax / mshare-shmem (the preload library, huge_pages=off).
# The server log is $PGRUN/server-MODE.log. Sets pg_pid.
pg_start() {
	mode=$1 sb=$2 maxc=$3
	shift 3
	hp=off env=""
	case "$mode" in
	4k) ;;
	hugetlb-2m) hp=on ;;
	mshare-dax) env="LD_PRELOAD=$PG_MSHARE_SO PGMSHARE_BACKING=dax PGMSHARE_DIR=$PGSHM" ;;
	mshare-shmem) env="LD_PRELOAD=$PG_MSHARE_SO PGMSHARE_BACKING=shmem PGMSHARE_DIR=$PGSHM" ;;
	*) pg_log "unknown mode '$mode' (4k, hugetlb-2m, mshare-dax, mshare-shmem)"; return 2 ;;
	esac
	pg_logfile=$PGRUN/server-$mode.log
	: >"$pg_logfile"; chown postgres "$pg_logfile"
	# shellcheck disable=SC2086
	as_pg env $env "$PGBIN/pg_ctl" -D "$PGDATA" -l "$pg_logfile" -w -t 600 -o "-c shared_buffers=$sb \
-c huge_pages=$hp -c max_connections=$maxc -c listen_addresses='' -c unix_socket_directories='$PGRUN' \
-c autovacuum=off -c jit=off -c max_parallel_workers_per_gather=0 -c dynamic_shared_memory_type=posix \
-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_wal_size=4GB $*" \
		start >"$PGRUN/pg_ctl.log" 2>&1 || { cat "$PGRUN/pg_ctl.log" "$pg_logfile"; return 1; }
	pg_pid=$(head -1 "$PGDATA/postmaster.pid")
}

pg_stop() {
	as_pg "$PGBIN/pg_ctl" -D "$PGDATA" -m fast -w -t 600 stop >/dev/null 2>&1
}

# Kernel figures.
meminfo_kb() { awk -v k="$1:" '$1 == k {print $2}' /proc/meminfo; }
vmpte_kb() { awk '/^VmPTE:/ {print $2}' "/proc/$1/status" 2>/dev/null; }
# minflt of a process (field 10 of /proc/PID/stat; the comm may hold spaces).
minflt() { sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | awk '{print $8}'; }
