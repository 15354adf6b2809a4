#!/bin/sh
# results.fault_cost (issue 31) on the host: every touch is a fault, a touch
# without a fault, or preempted, and the faults the classification counts
# are exactly the faults the workers took in their workload.
. "$(dirname "$0")/lib/common.sh"

# fc_checks NAME RECORD TOUCHES [EXPECTED_FAULTS]
fc_checks() {
	name=$1 out=$2 touches=$3 want=${4:-}
	check "$name: environment.clock host-ns, fault_cost.unit ns" \
		jtest "$out" 'r["environment"]["clock"] == "host-ns" and r["environment"]["time_unit"] == "ns" and r["results"]["fault_cost"]["unit"] == "ns" and r["results"]["fault_cost"]["clock"] == "host-ns"'
	check "$name: faults + no-fault touches + preempted = $touches touches" \
		jtest "$out" "(lambda f: f['touches'] == $touches and f['faults']['count'] + f['no_fault_touches']['count'] + f['preempted']['count'] == $touches)(r['results']['fault_cost'])"
	got=$(python3 -c 'import json,sys; f=json.load(open(sys.argv[1]))["results"]; print(f["fault_cost"]["faults"]["faults_taken"] + f["fault_cost"]["preempted"]["faults"], f["faults"]["minflt"] + f["faults"]["majflt"])' "$out")
	# The workload's minflt also counts faults outside the touches (a stack
	# page still shared copy-on-write with the parent): at most that many.
	check "$name: faults classified (taken + preempted's) <= the workers' minflt + majflt in the workload ($got)" \
		jtest "$out" '(lambda f, c: 0 < c["faults"]["faults_taken"] + c["preempted"]["faults"] <= f["minflt"] + f["majflt"])(r["results"]["faults"], r["results"]["fault_cost"])'
	if [ -n "$want" ]; then
		check "$name: exactly $want faults (one per page per worker)" \
			jtest "$out" "(lambda c: c['faults']['faults_taken'] + c['preempted']['faults'] == $want)(r['results']['fault_cost'])"
	fi
	check "$name: percentiles ordered within min..max, per kind" \
		jtest "$out" 'all((lambda h: h["count"] == 0 or h["min"] <= h["p50"] <= h["p90"] <= h["p99"] <= h["p999"] <= h["max"])(r["results"]["fault_cost"][k]) for k in ("faults", "no_fault_touches"))'
	check "$name: faults per worker: min <= mean <= max, mean = faults / workers" \
		jtest "$out" '(lambda c, w: c["min"] <= c["mean"] <= c["max"] and abs(c["mean"] * w - (r["results"]["fault_cost"]["faults"]["faults_taken"] + r["results"]["fault_cost"]["preempted"]["faults"])) < 1e-6 * max(1, c["mean"] * w))(r["results"]["fault_cost"]["faults_per_worker"], r["results"]["workers_measured"])'
}

# Writes to 4 KiB shared pages: one fault per page per worker, exactly.
for b in anon shm; do
	out=$WORK/$b-w.json
	if "$BIN" run --backend $b --page 4k --workers 4 --size 8M --workload touch --write --quiet --out "$out"; then
		ok "$b, 4 workers, 8 MiB, write touches runs"
		fc_checks "$b write" "$out" 8192 8192
	else
		not_ok "$b, 4 workers, 8 MiB, write touches runs"
	fi
done
# A file on the file system of $WORK (tmpfs or a disk file system).
out=$WORK/file-w.json
if "$BIN" run --backend file --path "$WORK/region" --page 4k --workers 3 --size 4M --workload touch --write --quiet --out "$out"; then
	ok "file on $(stat -f -c %T "$WORK"), 3 workers, write touches runs"
	fc_checks "file write" "$out" 3072 3072
else
	not_ok "file on $(stat -f -c %T "$WORK"), 3 workers, write touches runs"
fi
rm -f "$WORK/region"

# Reads of shmem: fault-around maps several pages per fault, so some touches
# take none; the classification still accounts for every fault.
out=$WORK/shm-r.json
if "$BIN" run --backend shm --page 4k --workers 2 --size 8M --workload touch --quiet --out "$out"; then
	ok "shm, 2 workers, 8 MiB, read touches runs"
	fc_checks "shm read" "$out" 4096
	check "shm read: fault-around leaves touches without a fault" \
		jtest "$out" 'r["results"]["fault_cost"]["no_fault_touches"]["count"] > 0'
else
	not_ok "shm, 2 workers, 8 MiB, read touches runs"
fi

# hugetlb-2m: one fault per 2 MiB page per worker.
if "$BIN" backends | grep -q '^hugetlb-2m *yes'; then
	out=$WORK/hugetlb.json
	if "$BIN" run --backend hugetlb-2m --workers 2 --size 16M --workload touch --write --quiet --out "$out"; then
		ok "hugetlb-2m, 2 workers, 16 MiB runs"
		fc_checks "hugetlb-2m" "$out" 16 16
	else
		not_ok "hugetlb-2m, 2 workers, 16 MiB runs"
	fi
else
	skip "hugetlb-2m fault cost" "hugetlb-2m not usable here: $("$BIN" backends | grep '^hugetlb-2m')"
fi
finish
