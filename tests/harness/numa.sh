#!/bin/sh
# --cpus and --mem-policy on this host, and page tables per NUMA node: the
# nodes' PageTables deltas sum to the system-wide delta at the same points.
# (The 2-node case runs in the guest: tests/kernel/numa-guest.sh.)
. "$(dirname "$0")/lib/common.sh"

nodes=$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l)
[ "$nodes" -ge 1 ] || nodes=1

# sums FILE: the per-node view against the system view (exact when the
# nodes were read consistently, which the record says).
sums() {
	jtest "$1" '(lambda p: p["nodes_consistent"] and
		sum(n["delta_bytes"] for n in p["nodes"]) == p["meminfo_delta_bytes"] == p["nodes_delta_sum_bytes"] and
		sum(n["delta_from_before_bytes"] for n in p["nodes"]) == p["meminfo_delta_from_before_bytes"] and
		sum(n["parked_bytes"] for n in p["nodes"]) == p["meminfo_parked_bytes"])(r["results"]["pagetables"])'
}

# The nodes' growth is system-wide like PageTables: other processes exiting
# during the run can hide part of the region's pages, so that size check gets
# three attempts (the sum checks are exact whatever others do).
grown() {
	jtest "$1" 'sum(n["delta_bytes"] for n in r["results"]["pagetables"]["nodes"]) >= 16 * 139264 * 0.9'
}
attempt=1
while :; do
	out=$WORK/spread.$attempt.json
	"$BIN" run --backend shm --page 4k --workers 16 --size 64M --workload pt-footprint --cpus spread \
		--mem-policy local --quiet --out "$out" || break
	grown "$out" && break
	[ $attempt -ge 3 ] && break
	attempt=$((attempt + 1))
done
if [ -f "$out" ]; then
	ok "shm 4k, 16 workers, --cpus spread --mem-policy local runs"
	check "one per-node entry for each of the $nodes node(s) in /sys/devices/system/node" \
		jtest "$out" "len(r['results']['pagetables']['nodes']) == $nodes == r['results']['numa']['nodes']"
	check "per-node PageTables deltas sum to the system delta (before, baseline and parked points)" sums "$out"
	what="the region's page tables show up on the nodes (delta >= 90% of 16 x 34 pages; attempt $attempt)"
	if grown "$out"; then
		ok "$what"
	elif [ "$(pagetables_drift)" -gt $((16 * 139264 / 4)) ]; then
		skip "$what" "other processes move PageTables by more than a quarter of the region's pages a second now"
	else
		not_ok "$what"
	fi
	check "the record names the options and what was applied" \
		jtest "$out" 'r["config"]["cpus"] == "spread" and r["config"]["mem_policy"] == "local" and
			r["results"]["numa"]["cpu_placement"] == "spread" and r["results"]["numa"]["mem_policy"] == "local"'
	check "every worker counted on a node" \
		jtest "$out" 'sum(r["results"]["numa"]["workers_per_node"]) == 16'
	check "the record says what latency means here (the platform's note), not the prose of results/README.md" \
		jtest "$out" '("TCG" if r["environment"]["platform"] == "guest" else "host") in r["results"]["numa"]["latency_note"] and "page_table_placement" not in r["results"]["numa"]'
else
	not_ok "shm 4k, 16 workers, --cpus spread --mem-policy local runs"
fi

# An explicit list: every worker bound to the last CPU this process may use.
last=$(python3 -c 'import os; print(max(os.sched_getaffinity(0)))')
lastnode=$(basename "$(ls -d /sys/devices/system/node/node*/cpu$last 2>/dev/null | head -1 | xargs -r dirname)" 2>/dev/null | sed 's/node//')
out=$WORK/list.json
if "$BIN" run --backend anon --page 4k --workers 8 --size 16M --workload touch --cpus "$last" --mem-policy bind:0 \
	--quiet --out "$out"; then
	ok "--cpus $last --mem-policy bind:0 runs"
	check "every worker ran on CPU $last (hwloc binding held)" \
		jtest "$out" "r['results']['numa']['cpus_seen'] == '$last' and r['results']['numa']['cpus_used'] == '$last'"
	[ -n "$lastnode" ] && check "all 8 workers counted on node $lastnode" \
		jtest "$out" "r['results']['numa']['workers_per_node'][$lastnode] == 8"
	check "policy recorded as bind:0" jtest "$out" 'r["results"]["numa"]["mem_policy"] == "bind:0"'
	check "per-node deltas sum to the system delta" sums "$out"
else
	not_ok "--cpus $last --mem-policy bind:0 runs"
fi

# Without the options: nothing bound, policy unchanged, the per-node view
# still there.
out=$WORK/none.json
if "$BIN" run --backend shm --workers 4 --size 8M --workload touch --mem-policy interleave --quiet --out "$out"; then
	check "without --cpus: not bound; interleave over every node with memory; nodes listed" \
		jtest "$out" 'r["config"]["cpus"] is None and r["results"]["numa"]["cpu_placement"].startswith("none") and
			r["results"]["numa"]["mem_policy"].startswith("interleave:") and len(r["results"]["pagetables"]["nodes"]) >= 1'
	check "per-node deltas sum to the system delta (interleave)" sums "$out"
else
	not_ok "--mem-policy interleave runs"
fi

# --check looks at the syntax only (no host): a CPU this host lacks passes it,
# and the run itself refuses it before forking anything.
check "--check accepts --cpus 4095 (syntax only)" \
	"$BIN" run --backend shm --workers 2 --size 4M --workload touch --cpus 4095 --check
refused() { # refused NEEDLE ARGS...: exit 2, one line naming NEEDLE, no record
	needle=$1; shift
	err=$("$BIN" run --backend shm --workers 2 --size 4M --workload touch --out "$WORK/never.json" "$@" 2>&1)
	[ $? = 2 ] && [ ! -e "$WORK/never.json" ] && printf '%s' "$err" | grep -qF -- "$needle" &&
		[ "$(printf '%s\n' "$err" | wc -l)" = 1 ]
}
check "--cpus 4095 refused naming the CPU, nothing written" refused "CPU 4095" --cpus 4095
check "--mem-policy bind:63 refused naming the node" refused "node 63" --mem-policy bind:63
finish
