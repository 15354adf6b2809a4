#!/bin/sh
# The harness measuring its own overhead (benchmarks, not tests):
#  1. fault rate through workload_touch_page vs a bare touch loop, same
#     mapping, same run;
#  2. time for N workers to reach the start barrier: harness vs a bare
#     fork-and-wait loop;
#  3. private memory per worker beyond the region;
#  4. N workers: shm --page 4k 256 MiB and hugetlb-2m 1 GiB pt-footprint,
#     page-table bytes in both views and p50/p99 first-touch latency.
# Usage: bench/harness-overhead.sh [WORKERS]   (default 10000)
# Records go to build/harness-overhead/<timestamp>/; the load average is
# printed with each figure since the host may be shared.
set -u
cd "$(dirname "$0")/.." || exit 2
BIN=build/mshare-bench
N=${1:-10000}
dir=build/harness-overhead/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$dir"
load() { cut -d' ' -f1-3 /proc/loadavg; }
field() { python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    v = v[k]
print(v)' "$1" "$2"; }

echo "== 1. fault rate (load $(load))"
for i in 1 2 3; do "$BIN" selftest-bench fault-rate --size 1G; done | tee "$dir/fault-rate.txt"

echo "== 2. $N workers to the start barrier (load $(load))"
"$BIN" selftest-bench fork-barrier --workers "$N" | tee "$dir/fork-barrier.txt"
bare=$(awk '/barrier_s/ {print $2}' "$dir/fork-barrier.txt")
"$BIN" run --backend shm --workers "$N" --size 2M --workload pt-footprint --quiet --out "$dir/barrier.json"
harness=$(field "$dir/barrier.json" results.time_s.barrier)
echo "harness time_s.barrier $harness s, bare $bare s, ratio $(python3 -c "print(round($harness / $bare, 3))")"

echo "== 3. private memory per worker beyond the region (bare child: $(grep 'bare child memory' "$dir/fork-barrier.txt" | cut -d: -f2))"
PYTHONPATH=bench/lib python3 -c '
import json, sys
import units
m = json.load(open(sys.argv[1]))["results"]["worker_memory"]
print("Private_Dirty %.0f B + page tables baseline %.0f B = %.0f B (%s), %d workers sampled"
      % (m["private_dirty_bytes"], m["pagetables_baseline_bytes"], m["total_bytes"], units.format_bytes(m["total_bytes"]),
         m["sampled_workers"]))' "$dir/barrier.json"

for spec in "shm --page 4k --size 256M" "hugetlb-2m --size 1G"; do
	name=$(echo "$spec" | cut -d' ' -f1)
	echo "== 4. $N workers, $spec, pt-footprint (load $(load))"
	# shellcheck disable=SC2086
	if "$BIN" run --backend $spec --workers "$N" --workload pt-footprint --out "$dir/$name.json"; then
		python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["results"]; p = r["pagetables"]; f = r["fault_latency_ns"]
print("page size %d (%s); meminfo_delta_bytes %d; vmpte_sum_bytes %d; region_bytes_per_worker %.0f; "
      "fault p50 %d ns p99 %d ns (%d touches, %d minflt); total %.1f s"
      % (r["page_size_bytes"], r["page_size_source"], p["meminfo_delta_bytes"], p["vmpte_sum_bytes"],
         p["region_bytes_per_worker"], f["p50"], f["p99"], f["count"], r["faults"]["minflt"], r["time_s"]["total"]))' "$dir/$name.json"
	fi
done
echo "records in $dir"
