#!/bin/sh
# `plan --pid` on a real PostgreSQL 15 (TAP): a throw-away cluster in a temp
# dir, run as a non-root user, shared_buffers 128 MiB, 20 backends that each
# read every table filling the buffers and stay connected (pg_sleep); then
# `plan --pid <postmaster>` must
#   - choose the main shared memory segment and say why,
#   - project the busy backends' page tables within 1% of their measured
#     mean VmPTE (read here from /proc, not taken from the tool),
#   - model the sum of VmPTE at the real address within 1% of the sum
#     measured here,
# with huge_pages=off (4k) and huge_pages=on (hugetlb-2m, from a 2 MiB pool
# raised by exactly what the server needs and given back). Also a harness
# run (`mshare-bench run` parent pid). The server is stopped and everything
# removed on any exit.
#
# Needs Debian's postgresql-15 (/usr/lib/postgresql/15/bin). When missing
# and running as root, one tests-only install is tried
# (PLANNER_TEST_INSTALL_PG=0 turns that off); if it still is not there
# every check SKIPs with the reason.
cd "$(dirname "$0")/../.." || exit 2
. tests/lib/tap.sh

BIN=build/mshare-bench
[ -x "$BIN" ] || bail "$BIN is not built (run make)"
PGBIN=/usr/lib/postgresql/15/bin
HP=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
BACKENDS=20

tmp=$(mktemp -d "${TMPDIR:-/tmp}/plan-pg.XXXXXX") || exit 2
data="$tmp/data" pg_pid="" hp_added=0 run_pid=""
. tests/lib/postgres.sh
# The suite's hugepage pool lock (harness/hugepool.c, docs/running.md "The hugepage
# pool"): held while counting free pages until they are allocated, and while
# giving pages back.
POOL_LOCK=/run/mshare-bench/hugepool.lock
pool_lock() { mkdir -p /run/mshare-bench && exec 9>>"$POOL_LOCK" && flock -w 300 9; }
pool_unlock() { flock -u 9 2>/dev/null; exec 9>&-; }
pool_available() { awk '/HugePages_Free/ {f = $2} /HugePages_Rsvd/ {r = $2} END {print f - r}' /proc/meminfo; }
# Give back what this test added, never more than is free (the pool does
# not drop below what others hold). 0 when nothing of ours is left.
give_back() {
	[ "$hp_added" -gt 0 ] || return 0
	pool_lock || return 1
	n=$(pool_available)
	[ "$n" -gt "$hp_added" ] && n=$hp_added
	if [ "$n" -gt 0 ] && echo $(($(cat "$HP") - n)) >"$HP" 2>/dev/null; then
		hp_added=$((hp_added - n))
	fi
	pool_unlock
	[ "$hp_added" -eq 0 ]
}
cleanup() {
	if [ -n "$pg_pid" ] && [ -f "$data/postmaster.pid" ]; then
		as_pg "$PGBIN/pg_ctl" -D "$data" -m immediate -w stop >/dev/null 2>&1 ||
			kill -9 "$pg_pid" 2>/dev/null
	fi
	[ -n "$run_pid" ] && kill "$run_pid" 2>/dev/null && wait "$run_pid" 2>/dev/null
	give_back
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- PostgreSQL 15 present, or a tests-only install -------------------------
if [ ! -x "$PGBIN/postgres" ] && [ "$(id -u)" = 0 ] && [ "${PLANNER_TEST_INSTALL_PG:-1}" = 1 ] &&
   command -v apt-get >/dev/null; then
	echo "# installing postgresql-15 for this test (tests only; PLANNER_TEST_INSTALL_PG=0 to skip)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql-15 \
		>"$tmp/apt.log" 2>&1 || sed 's/^/# apt: /' "$tmp/apt.log" | tail -5
fi
if [ ! -x "$PGBIN/postgres" ]; then
	skip "plan --pid on PostgreSQL 15" "postgresql-15 is not installed and could not be installed ($PGBIN/postgres missing)"
	finish
fi

# Not as root: PostgreSQL refuses root; the planner then runs as root, but
# one check runs it as the server's owner too.
pg_owner "$tmp"
echo "# PostgreSQL runs as $pguser in $tmp"

if ! as_pg "$PGBIN/initdb" -D "$data" -A trust -U postgres >"$tmp/initdb.log" 2>&1; then
	sed 's/^/# initdb: /' "$tmp/initdb.log" | tail -5
	not_ok "initdb a throw-away cluster"
	finish
fi
ok "initdb a throw-away cluster as $pguser"
PORT=5432
psqlc() { "$PGBIN/psql" -X -q -A -t -h "$tmp" -p "$PORT" -U postgres -d postgres "$@"; }

# start_pg off|on: start the server; sets pg_pid. 0 on success.
start_pg() {
	as_pg "$PGBIN/pg_ctl" -D "$data" -l "$tmp/server.log" -w -t 120 -o "-c shared_buffers=128MB \
-c huge_pages=$1 -c listen_addresses='' -c unix_socket_directories='$tmp' -c port=$PORT \
-c max_connections=40 -c max_parallel_workers_per_gather=0 -c autovacuum=off -c dynamic_shared_memory_type=posix" \
		start >"$tmp/pg_ctl.log" 2>&1 || { sed 's/^/# server: /' "$tmp/server.log" | tail -5; return 1; }
	pg_pid=$(head -1 "$data/postmaster.pid")
}
stop_pg() {
	as_pg "$PGBIN/pg_ctl" -D "$data" -m fast -w stop >/dev/null 2>&1
	pg_pid=""
}

# Tables filling most of shared_buffers, each under a quarter of it (a
# larger one is scanned through a small ring of buffers, not the pool).
load_data() {
	for t in 1 2 3 4 5; do
		echo "CREATE TABLE t$t AS SELECT g, repeat('x', 200) AS x FROM generate_series(1, 95000) g;"
	done | psqlc >/dev/null
}

# backends_read: 20 sessions each read every table, then stay connected.
backends_read() {
	q=""
	for t in 1 2 3 4 5; do q="$q SELECT sum(length(x)) FROM t$t;"; done
	i=0
	while [ $i -lt $BACKENDS ]; do
		psqlc -c "$q SELECT pg_sleep(3600);" >/dev/null 2>&1 &
		i=$((i + 1))
	done
	# Wait until every session is in pg_sleep (bounded: no hang).
	w=0
	while [ "$(psqlc -c "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep'")" != "$BACKENDS" ]; do
		w=$((w + 1))
		[ $w -gt 600 ] && return 1
		sleep 1
	done
}

# measure_and_check LABEL MODE: plan --pid on the running server.
measure_and_check() {
	label=$1 mode=$2
	backend_pids=$(psqlc -c "SELECT pid FROM pg_stat_activity WHERE wait_event = 'PgSleep'" | tr '\n' ' ')
	if ! "$BIN" plan --pid "$pg_pid" --json >"$tmp/$label.json" 2>"$tmp/$label.err"; then
		sed 's/^/# /' "$tmp/$label.err"
		not_ok "$label: plan --pid $pg_pid runs"
		return
	fi
	ok "$label: plan --pid $pg_pid runs"
	"$BIN" plan --pid "$pg_pid" --processes 200 >"$tmp/$label.txt" 2>&1
	check_status $? "$label: plan --pid $pg_pid --processes 200 (text) runs"
	sed 's/^/# /' "$tmp/$label.txt" | head -60
	# Everything measured here is read from /proc by this script.
	python3 - "$tmp/$label.json" "$mode" "$backend_pids" >"$tmp/$label.check" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
mode, backends = sys.argv[2], [int(p) for p in sys.argv[3].split()]
def vmpte(pid):
    for l in open(f"/proc/{pid}/status"):
        if l.startswith("VmPTE:"):
            return int(l.split()[1]) * 1024
seg = d["segment"]
print(f"segment {seg['start']} {seg['size_bytes']} {seg['name']} mode {seg['mode']}: {seg['why']}")
res = []
res.append((seg["mode"] == mode, f"segment measured in mode {seg['mode']} (want {mode})"))
res.append(((seg["name"].startswith("/dev/zero") if mode == "4k" else "huge" in seg["name"]),
            f"the main shared memory segment chosen: {seg['name']}, {seg['size_bytes']} bytes"))
procs = {p["pid"]: p for p in d["measured"]["per_process"]}
res.append((all(b in procs for b in backends) and len(backends) == 20,
            f"all {len(backends)} backends among the {len(procs)} processes measured"))
busy = [p for p in procs.values() if p["busy"]]
res.append((set(backends) <= {p["pid"] for p in busy}, f"the backends are the busy group ({len(busy)} busy)"))
# Measured here: VmPTE of the backends (idle in pg_sleep: stable).
meas = sum(vmpte(b) for b in backends) / len(backends)
proj = d["model_check"]["per_added_process_model_bytes"]
err = (proj - meas) / meas * 100
res.append((abs(err) <= 1.0, f"projected per-backend page tables {proj} B vs measured mean VmPTE {meas:.0f} B: {err:+.2f}% (within 1%)"))
# The model at the real address against the sum of VmPTE measured here.
total = sum(vmpte(p) for p in procs)
model = d["model_check"]["vmpte_sum_model_bytes"]
err = (model - total) / total * 100
res.append((abs(err) <= 1.0, f"model at the real address {model} B vs measured sum of VmPTE {total} B over {len(procs)} processes: {err:+.2f}% (within 1%)"))
seg_model = [procs[b]["segment_model_bytes"] for b in backends]
print(f"per backend: segment {min(seg_model)}..{max(seg_model)} B modelled, touched 2 MiB spans "
      f"{min(procs[b]['touched_spans_2m'] for b in backends)}..{max(procs[b]['touched_spans_2m'] for b in backends)} "
      f"of {seg['spans_2m']}; left out per process {d['model_check']['left_out_pages_per_process']} pages")
# Projection: every mode present, the measured mode consistent.
modes = {m["mode"]: m for m in d["projection"]["modes"]}
res.append((sorted(modes) == sorted(["4k", "shm-thp", "hugetlb-2m", "hugetlb-1g", "dax-4k", "dax-2m", "devdax-2m",
                                     "devdax-1g", "mshare", "mshare-dax-4k", "mshare-dax-2m", "mshare-devdax-1g",
                                     "mshare-2025", "mshare-2025-dax-4k", "mshare-2025-dax-2m"]),
            "projection in every mode (15 deployments)"))
m = modes[mode]
res.append((m["valid"] and m["pagetable_bytes_total"] >= total * 0.99,
            f"projection in {mode} at the measured count: {m['pagetable_bytes_total']} B total"))
for ok, what in res:
    print(("ok: " if ok else "FAIL: ") + what)
sys.exit(0 if all(ok for ok, _ in res) else 1)
PY
	rc=$?
	sed 's/^/# /' "$tmp/$label.check"
	while IFS= read -r line; do
		case "$line" in
		"ok: "*) ok "$label: ${line#ok: }" ;;
		"FAIL: "*) not_ok "$label: ${line#FAIL: }" ;;
		esac
	done <"$tmp/$label.check"
	[ $rc -eq 0 ] || [ -s "$tmp/$label.check" ] || not_ok "$label: checks ran"
	grep -q "MEASURED" "$tmp/$label.txt" && grep -q "MODELLED" "$tmp/$label.txt"
	check_status $? "$label: the text says what is measured and what modelled"
}

# --- huge_pages=off: 4k ------------------------------------------------------
if start_pg off; then
	ok "server started (huge_pages=off, pid $pg_pid)"
	load_data
	if backends_read; then
		ok "4k: $BACKENDS backends read every table and stay connected"
		measure_and_check 4k 4k
		# As the server's owner, without root: presence bits suffice.
		if [ "$(id -u)" = 0 ]; then
			as_pg "$BIN" plan --pid "$pg_pid" --mode 4k >"$tmp/owner.txt" 2>&1
			rc=$?
			grep -q "access: not root" "$tmp/owner.txt" && [ $rc = 0 ]
			check_status $? "4k: plan --pid as the server's owner ($pguser, not root) works and says so"
		fi
		# Under AddressSanitizer + UBSan (the planner's own driver).
		if [ -x build/tests/planner/plan-driver-asan ]; then
			build/tests/planner/plan-driver-asan --pid "$pg_pid" --processes 100 --json \
				>"$tmp/asan.json" 2>"$tmp/asan.err"
			rc=$?
			[ $rc = 0 ] && ! grep -q "Sanitizer" "$tmp/asan.err" && python3 -m json.tool "$tmp/asan.json" >/dev/null
			check_status $? "4k: plan --pid under ASan/UBSan: clean, valid JSON (rc=$rc)"
		else
			skip "4k: plan --pid under ASan/UBSan" "no sanitizer build here"
		fi
		"$BIN" plan --pid "$pg_pid" --processes 3 >/dev/null 2>"$tmp/few.err"
		[ $? = 2 ] && grep -q "fewer than the 25 processes" "$tmp/few.err"
		check_status $? "4k: --processes below the processes running now is refused, naming both"
		set -- $backend_pids
		"$BIN" plan --pid "$1" --mode 4k >"$tmp/backend.txt" 2>&1 &&
			grep -q "25 process(es) map it, found among all" "$tmp/backend.txt" &&
			grep -q "(1 of them pid $1 or its descendants, 24 not" "$tmp/backend.txt"
		check_status $? "4k: plan --pid <a backend> finds the whole instance: the 25 processes, 24 of them outside the backend's tree"
		# The touch map it saves, modelled with --addr alone: the
		# neighbours are unknown there, so the segment is charged the
		# pages --pid left out.
		seg=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); s=d["segment"]; print(s["start"], s["size_bytes"], d["model_check"]["left_out_pages_per_process"])' "$tmp/4k.json")
		set -- $seg
		"$BIN" plan --pid "$pg_pid" --save-touch-map "$tmp/touch.map" >/dev/null 2>&1 &&
			"$BIN" plan --sga "$2" --addr "$1" --touch-map "$tmp/touch.map" --processes 1 --mode 4k --json \
				>"$tmp/addr.json" 2>"$tmp/addr.err"
		python3 - "$tmp/4k.json" "$tmp/addr.json" "$3" <<'PY'
import json, sys
p, a, left = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
busy = [x for x in p["measured"]["per_process"] if x["busy"]]
seg = max(x["segment_model_bytes"] for x in busy)
addr = a["modes"][0]["vmpte_bytes_per_process"]
sys.exit(0 if addr == seg + left * 4096 else 1)
PY
		check_status $? "4k: --addr with the saved touch map charges exactly the $3 page(s) --pid left out for the neighbours"
		"$BIN" plan --pid "$pg_pid" --save-touch-map "$tmp/touch.map" >/dev/null 2>"$tmp/again.err"
		[ $? = 2 ] && grep -q "exists" "$tmp/again.err"
		check_status $? "4k: --save-touch-map never replaces a file"
	else
		not_ok "4k: $BACKENDS backends read every table (see $tmp/server.log)"
	fi
	stop_pg
else
	not_ok "server started (huge_pages=off)"
fi

# --- huge_pages=on: hugetlb-2m -------------------------------------------------
if [ "$(id -u)" != 0 ]; then
	skip "hugetlb-2m: plan --pid with huge_pages=on" "not root: cannot reserve 2 MiB pages"
else
	need=$(as_pg "$PGBIN/postgres" -D "$data" -C shared_memory_size_in_huge_pages \
		-c shared_buffers=128MB -c max_connections=40 -c huge_pages=on 2>/dev/null)
	case "$need" in ''|*[!0-9]*) need="" ;; esac
	if [ -z "$need" ]; then
		skip "hugetlb-2m: plan --pid with huge_pages=on" "postgres -C shared_memory_size_in_huge_pages gave no count"
	elif ! pool_lock; then
		skip "hugetlb-2m: plan --pid with huge_pages=on" "the hugepage pool lock $POOL_LOCK was held by another job for 5 minutes"
	else
		# Under the suite's pool lock (as `mshare-bench run` takes it),
		# from counting the free pages until the server has its pages:
		# raise the pool by the shortfall only.
		before=$(cat "$HP")
		add=$((need - $(pool_available)))
		[ "$add" -lt 0 ] && add=0
		[ "$add" -gt 0 ] && echo $((before + add)) >"$HP" 2>/dev/null
		hp_added=$(($(cat "$HP") - before))
		[ "$hp_added" -lt 0 ] && hp_added=0
		echo "# 2 MiB pool: $before -> $(cat "$HP") (server needs $need, $hp_added added)"
		if [ "$(pool_available)" -lt "$need" ]; then
			pool_unlock
			skip "hugetlb-2m: plan --pid with huge_pages=on" "could not reserve $need 2 MiB pages (memory)"
		elif ! start_pg on; then
			pool_unlock
			not_ok "server started (huge_pages=on)"
		else
			pool_unlock
			ok "server started (huge_pages=on, pid $pg_pid, $need 2 MiB pages)"
			if backends_read; then
				ok "hugetlb-2m: $BACKENDS backends read every table and stay connected"
				measure_and_check hugetlb-2m hugetlb-2m
			else
				not_ok "hugetlb-2m: $BACKENDS backends read every table"
			fi
			stop_pg
		fi
		added=$hp_added
		if give_back; then
			ok "hugetlb-2m: the $added 2 MiB page(s) added are given back (pool $before before, $(cat "$HP") now)"
		else
			not_ok "hugetlb-2m: the $added 2 MiB page(s) added are given back ($hp_added left: in use)"
		fi
	fi
fi

# --- a harness run ----------------------------------------------------------------
"$BIN" run --backend shm --workers 6 --size 64M --workload scan --dop 1 --page 4k --duration 600s \
	--out "$tmp/run.json" >"$tmp/run.log" 2>&1 &
run_pid=$!
# Wait until the workers have scanned the whole region once (their VmPTE
# stops growing), bounded.
w=0 last="" same=0
while [ $w -lt 120 ] && [ $same -lt 3 ]; do
	sleep 1
	w=$((w + 1))
	cur=$(for p in $(pgrep -P "$run_pid"); do awk '/VmPTE/ {print $2}' "/proc/$p/status"; done 2>/dev/null | sort | tr '\n' ' ')
	if [ -n "$cur" ] && [ "$cur" = "$last" ]; then same=$((same + 1)); else same=0; fi
	last=$cur
done
"$BIN" plan --pid "$run_pid" --json >"$tmp/run-plan.json" 2>"$tmp/run-plan.err"
rc=$?
[ $rc = 0 ] || sed 's/^/# /' "$tmp/run-plan.err"
check_status $rc "harness run: plan --pid <mshare-bench run parent> runs"
[ $rc = 0 ] && python3 - "$tmp/run-plan.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["segment"]
def vmpte(pid):
    try:
        for l in open(f"/proc/{pid}/status"):
            if l.startswith("VmPTE:"):
                return int(l.split()[1]) * 1024
    except OSError:
        return None
# The processes still there (the harness may fork short-lived helpers).
procs = [p for p in d["measured"]["per_process"] if vmpte(p["pid"]) is not None]
total = sum(vmpte(p["pid"]) for p in procs)
model = sum(p["model_vmpte_bytes"] for p in procs)
print(f"# harness run: segment {s['start']} {s['size_bytes']} B ({s['why']}), {len(procs)} processes, "
      f"model {model} B vs measured {total} B")
ok = s["start"] == "0x20000000000" and s["size_bytes"] == 64 << 20 and len(procs) >= 6 and abs(model - total) <= total / 100
sys.exit(0 if ok else 1)
PY
check_status $? "harness run: the region at 2 TiB found, the model within 1% of the sum of VmPTE"
kill "$run_pid" 2>/dev/null
wait "$run_pid" 2>/dev/null
run_pid=""

finish
