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
		jtest "$out" 'all((lambda h: h["count"] == 0 or h["min"] <= h["p50"] <= h["p90"] <= h["p99"] <= h["p999"] <= h["max"])(r["results"]["fault_cost"][k]) for k in ("faults", "no_fault_touches", "first_faults", "populated_faults", "slept_faults"))'
	check "$name: first + populated + slept faults = faults (the split covers every fault)" \
		jtest "$out" '(lambda c: c["first_faults"]["count"] + c["populated_faults"]["count"] + c["slept_faults"]["count"] == c["faults"]["count"] and c["slept_faults"]["count"] <= c["faults"]["slept"] + c["slept_faults"]["count"])(r["results"]["fault_cost"])'
	check "$name: fault time per MiB touched = the faults' time over the region's MiB times the workers (each worker's pass covers the region)" \
		jtest "$out" '(lambda c: abs(c["fault_time_per_mib_touched"] - c["faults"]["mean"] * c["faults"]["count"] / (r["config"]["size_bytes"] * r["results"]["workers_measured"] / 1048576.0)) <= 1e-6 * c["fault_time_per_mib_touched"] + 1)(r["results"]["fault_cost"])'
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
	# The file is written once before the workers start (the file-backed
	# rule): its page cache may hold large folios, and a write fault on a
	# shared mapping maps a whole folio (Linux 6.10 and later), so fewer
	# faults than pages; on DAX and tmpfs, one per page.
	fc_checks "file write" "$out" 3072
	check "file write: preparation says the file was written once" \
		jtest "$out" '"written once with zeros" in r["results"]["preparation"]' 
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
# --kernel-fault-time: the kernel's own fault time where the kernel can
# give it (root, tracefs, kprobe events, hist triggers); otherwise refused
# before any worker starts: exit 1, a message naming the reason, no record.
# Without it, results.fault_cost.kernel says "not requested", same keys.
out=$WORK/kft.json
"$BIN" run --backend shm --page 4k --workers 2 --size 4M --workload touch --write --quiet --kernel-fault-time \
	--out "$out" 2>"$WORK/kft.err"
rc=$?
if [ "$(id -u)" = 0 ] && [ -e /sys/kernel/tracing/kprobe_events ] && [ -e /sys/kernel/tracing/synthetic_events ]; then
	check "--kernel-fault-time where the kernel has kprobe events: runs (exit $rc: $(head -c 300 "$WORK/kft.err"))" test "$rc" = 0
	check "--kernel-fault-time: the kernel counted exactly the faults the touches took" \
		jtest "$out" '(lambda f: f["kernel"]["state"] == "measured" and f["kernel"]["count"] == f["faults"]["faults_taken"] + f["preempted"]["faults"] and f["kernel"]["unit"] == "ns")(r["results"]["fault_cost"])'
else
	check "--kernel-fault-time without kprobe events here: exit 1 (got $rc)" test "$rc" = 1
	check "--kernel-fault-time refused: the message names the reason" \
		grep -q -- '--kernel-fault-time: the kernel.s probes cannot be armed here: .*\(kprobe_events\|not root\|tracefs\)' "$WORK/kft.err"
	check "--kernel-fault-time refused: no record written" test ! -e "$out"
fi
out=$WORK/kft-off.json
if "$BIN" run --backend shm --page 4k --workers 1 --size 4M --workload touch --quiet --out "$out"; then
	check "without --kernel-fault-time: fault_cost.kernel is 'not requested' with null figures" \
		jtest "$out" '(lambda k: k["state"].startswith("not requested") and k["count"] is None and k["p50"] is None and k["zero_intervals"] is None and k["error"] == "")(r["results"]["fault_cost"]["kernel"])'
else
	not_ok "shm, 1 worker, 4 MiB runs"
fi
# The split of faults (issue 46): one worker alone takes every fault first
# on its page (or asleep), none on a page another populated; exactly one
# per page of the region.
out=$WORK/split-1.json
if "$BIN" run --backend anon --page 4k --workers 1 --size 8M --workload touch --write --quiet --out "$out"; then
	check "anon, 1 worker: first + slept faults = the 2048 pages less the preempted touches, none populated by another" \
		jtest "$out" '(lambda c: c["first_faults"]["count"] + c["slept_faults"]["count"] == 2048 - c["preempted"]["count"] and c["populated_faults"]["count"] == 0)(r["results"]["fault_cost"])'
	check "anon: preparation says none is possible (pages zeroed at the first fault)" \
		jtest "$out" 'r["results"]["preparation"].startswith("none possible")'
else
	not_ok "anon, 1 worker, 8 MiB, write touches runs"
fi
# Four workers at once: every page has a first toucher (a fault first on
# its page, or asleep, or preempted); touches that race may both count as
# first (neither had finished before the other began).
for b in shm anon; do
	out=$WORK/$b-split-4.json
	"$BIN" run --backend $b --page 4k --workers 4 --size 8M --workload touch --write --quiet --out "$out" &&
		check "$b, 4 workers: first + slept faults + preempted touches >= the 2048 pages" \
			jtest "$out" '(lambda c: c["first_faults"]["count"] + c["slept_faults"]["count"] + c["preempted"]["count"] >= 2048)(r["results"]["fault_cost"])'
done

# --hw-instructions: the CPU's instruction counter around every touch. With
# a real PMU the record has it; without one (this project's VMs) the run
# goes on and the record says why. MSHARE_BENCH_HW_EVENT=task-clock swaps in
# a software event every kernel has, to check everything around the
# counter: every fault touch counted, the record naming the event.
out=$WORK/hw.json
if "$BIN" run --backend shm --page 4k --workers 2 --size 4M --workload touch --write --quiet --hw-instructions \
	--out "$out" 2>"$WORK/hw.err"; then
	ok "--hw-instructions runs whether or not there is a counter"
	if jtest "$out" 'r["results"]["fault_cost"]["hw_instructions"]["state"] == "measured"'; then
		check "--hw-instructions (a PMU here): instructions per fault measured for every fault touch" \
			jtest "$out" '(lambda f: f["hw_instructions"]["event"] == "instructions" and f["hw_instructions"]["faults_counted"] == f["faults"]["count"] and f["hw_instructions"]["per_fault_mean"] > 0)(r["results"]["fault_cost"])'
	else
		check "--hw-instructions (no PMU here): state unavailable, the reason names perf_event_open and errno" \
			jtest "$out" '(lambda h: h["state"] == "unavailable" and h["reason"].startswith("perf_event_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS") and h["per_fault_mean"] is None and h["faults_counted"] is None)(r["results"]["fault_cost"]["hw_instructions"])'
	fi
else
	not_ok "--hw-instructions runs whether or not there is a counter ($(head -c 300 "$WORK/hw.err"))"
fi
out=$WORK/hw-sw.json
if MSHARE_BENCH_HW_EVENT=task-clock "$BIN" run --backend shm --page 4k --workers 2 --size 4M --workload touch --write \
	--quiet --hw-instructions --out "$out"; then
	check "--hw-instructions with the task-clock test event: every fault touch counted once, none failed, the event named" \
		jtest "$out" '(lambda f: f["hw_instructions"]["state"] == "measured" and f["hw_instructions"]["event"] == "task-clock" and f["hw_instructions"]["faults_counted"] == f["faults"]["count"] == 2048 - f["preempted"]["count"] and f["hw_instructions"]["read_failures"] == 0 and f["hw_instructions"]["per_fault_mean"] > 0 and f["hw_instructions"]["no_fault_touches_counted"] == f["no_fault_touches"]["count"])(r["results"]["fault_cost"])'
else
	not_ok "--hw-instructions with the task-clock test event runs"
fi
check "without --hw-instructions: hw_instructions 'not requested', figures null" \
	jtest "$WORK/kft-off.json" '(lambda h: h["state"].startswith("not requested") and h["per_fault_mean"] is None and h["reason"] == "")(r["results"]["fault_cost"]["hw_instructions"])'
finish
