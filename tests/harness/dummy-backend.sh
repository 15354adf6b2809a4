#!/bin/sh
# Adding a backend is its file and one line in harness/backends.c: the test
# build's harness (build/tests/harness/mshare-bench-dummy) has one more
# backend, tests/harness/backend_dummy.c (a memfd with a made-up fixed
# 64 KiB page), and nothing else of the suite names it. It must appear in
# run --help, backends --json (with its facts), the harness's --check (its
# page size), sweep validation and points (no page axis: its page is fixed),
# a real sweep, side-by-side (labelled without a page mode) and plan
# --calibrate (no planner model: skipped, saying so). Adding a workload is
# its file and one line in cli/workloads.c: the same build has
# tests/harness/workload_dummy.c (dummy-poke: operations, a counter, one
# timed phase), which must appear in run --help, workloads --json, run
# --check (its own parameter checked), sweep validation, a real sweep and
# side-by-side (a table of its operations and its phase, from the records).
. "$(dirname "$0")/lib/common.sh"
DUMMY="$ROOT/build/tests/harness/mshare-bench-dummy"
if [ ! -x "$DUMMY" ]; then
	not_ok "the dummy-backend build exists ($DUMMY: make test-build builds it)"
	finish; exit
fi

"$DUMMY" run --help >"$WORK/help" 2>&1
check "run --help lists the dummy backend" grep -q -- '--backend B .*dummy' "$WORK/help"
"$BIN" run --help >"$WORK/help-main" 2>&1
check "the normal build's run --help does not" sh -c "! grep -q dummy '$WORK/help-main'"

check "run --help lists the dummy workload" grep -q -- '--workload W .*dummy-poke' "$WORK/help"
check "the normal build's run --help does not" sh -c "! grep -q dummy-poke '$WORK/help-main'"

"$DUMMY" workloads --json >"$WORK/workloads.json" 2>&1
check "workloads --json has the dummy workload with its parameter, counter and phase" jtest "$WORK/workloads.json" \
	'[w for w in r if w["name"] == "dummy-poke" and [p["name"] for p in w["params"]] == ["stride", "hold-and-die"]
	  and w["counters"] == ["pokes"] and w["phases"] == ["poke"]]'
"$DUMMY" run --check --backend shm --workers 2 --size 1M --workload dummy-poke --stride 2M >"$WORK/c3" 2>&1
rc=$?
check "run --check runs its prepare(): --stride 2M over 1M refused, named (rc $rc: $(cat "$WORK/c3"))" \
	sh -c "[ $rc -eq 2 ] && grep -q 'stride 2097152 is not below' '$WORK/c3'"

"$DUMMY" backends --json >"$WORK/backends.json" 2>"$WORK/backends.err"
check "backends --json has the dummy with its facts from backend_ops" jtest "$WORK/backends.json" \
	'[b for b in r if b["name"] == "dummy" and b["fixed_page_bytes"] == 65536 and b["usable"]
	  and b["planner_mode"] is None and b["data"] == "shmem" and not b["page_tables_shared"]]'

"$DUMMY" run --check --backend dummy --workers 2 --size 96K --workload touch >"$WORK/c1" 2>&1
rc=$?
check "run --check refuses a size that is not a multiple of its 64 KiB page (rc $rc: $(cat "$WORK/c1"))" \
	sh -c "[ $rc -eq 2 ] && grep -q '64 KiB page of backend dummy' '$WORK/c1'"
"$DUMMY" run --check --backend dummy --workers 2 --size 1M --workload touch >"$WORK/c2" 2>&1
check "run --check accepts 1M ($(cat "$WORK/c2"))" [ $? -eq 0 ]

cat >"$WORK/dummy.sweep" <<'SPEC'
name = dummy
backends = dummy, shm
workers = 2
sizes = 1M
workloads = touch
page = 4k, any
repeats = 1
SPEC
python3 "$ROOT/bench/sweep" --harness "$DUMMY" --dry-run "$WORK/dummy.sweep" >"$WORK/dry" 2>&1
check "sweep validation takes it, one point (no page axis), shm one per page mode: $(tr '\n' ' ' <"$WORK/dry")" \
	sh -c "grep -q 'dummy-w2-s1M-touch' '$WORK/dry' && [ \$(grep -c 'dummy-' '$WORK/dry') -eq 1 ] \
		&& grep -q 'shm-4k-w2-s1M-touch' '$WORK/dry' && grep -q 'shm-any-w2-s1M-touch' '$WORK/dry'"
python3 "$ROOT/bench/sweep" --dry-run "$WORK/dummy.sweep" >"$WORK/dry-main" 2>&1
check "the normal build's harness refuses the spec, naming the backend ($(tail -1 "$WORK/dry-main"))" \
	sh -c "! grep -q 'dummy-w2' '$WORK/dry-main' && grep -q dummy '$WORK/dry-main'"

python3 "$ROOT/bench/sweep" --harness "$DUMMY" --platform host "$WORK/dummy.sweep" --results "$WORK/results" \
	>"$WORK/sweep.out" 2>"$WORK/sweep.err"
run_dir=$(tail -1 "$WORK/sweep.out")
rec="$run_dir/records/dummy-w2-s1M-touch.r1.json"
check "a real sweep runs the dummy point ($(tail -1 "$WORK/sweep.err"))" [ -f "$rec" ]
if [ -f "$rec" ]; then
	check "its record carries the facts (config.backend_facts)" jtest "$rec" \
		'r["config"]["backend_facts"]["fixed_page_bytes"] == 65536 and r["results"]["workers_measured"] == 2'
	MSHARE_BENCH_HARNESS="$DUMMY" python3 "$ROOT/bench/side-by-side" "$run_dir" >"$WORK/sbs" 2>&1
	check "side-by-side has a row for it, labelled without a page mode" \
		sh -c "grep -q '^dummy  ' '$WORK/sbs' && grep -q '^shm 4k' '$WORK/sbs'"
	# The record alone says what the backend is: side-by-side of the normal
	# build (which has no dummy backend) labels it the same.
	python3 "$ROOT/bench/side-by-side" "$run_dir" >"$WORK/sbs-main" 2>&1
	check "side-by-side reads the facts from the record, not the binary" grep -q '^dummy  ' "$WORK/sbs-main"
	"$BIN" plan --calibrate "$run_dir" >"$WORK/cal" 2>&1
	check "plan --calibrate skips it: no planner model ($(grep dummy "$WORK/cal" | head -1))" \
		grep -q "dummy.*no planner mode" "$WORK/cal"
else
	for w in "record facts" "side-by-side row" "side-by-side from the record" "calibrate skip"; do
		not_ok "$w: no record (sweep: $(tail -3 "$WORK/sweep.err" | tr '\n' ' '))"
	done
fi

cat >"$WORK/dummy-wl.sweep" <<'SPEC'
name = dummy-wl
backends = shm
workers = 2
sizes = 1M
workloads = dummy-poke
args[workload=dummy-poke] = --ops 50 --stride 8K
SPEC
python3 "$ROOT/bench/sweep" --harness "$DUMMY" --dry-run "$WORK/dummy-wl.sweep" >"$WORK/dry-wl" 2>&1
check "sweep validation takes the dummy workload: $(tr '\n' ' ' <"$WORK/dry-wl")" grep -q 'shm-4k-w2-s1M-dummy-poke' "$WORK/dry-wl"
python3 "$ROOT/bench/sweep" --dry-run "$WORK/dummy-wl.sweep" >"$WORK/dry-wl-main" 2>&1
check "the normal build's harness refuses it, naming the workload ($(tail -1 "$WORK/dry-wl-main"))" \
	grep -q "unknown workload 'dummy-poke'" "$WORK/dry-wl-main"
python3 "$ROOT/bench/sweep" --harness "$DUMMY" --platform host "$WORK/dummy-wl.sweep" --results "$WORK/results-wl" \
	>"$WORK/sweep-wl.out" 2>"$WORK/sweep-wl.err"
run_dir=$(tail -1 "$WORK/sweep-wl.out")
rec="$run_dir/records/shm-4k-w2-s1M-dummy-poke.r1.json"
check "a real sweep runs the dummy workload's point ($(tail -1 "$WORK/sweep-wl.err"))" jtest "$rec" \
	'r["results"]["workload"]["ops"] == 100 and r["results"]["workload"]["counters"]["pokes"] == 100
	 and r["results"]["workload"]["stride_bytes"] == 8192'
# No list of workload names in side-by-side: the records say it has
# operations and one timed phase; the normal build reads them the same.
python3 "$ROOT/bench/side-by-side" "$run_dir" >"$WORK/sbs-wl" 2>&1
check "side-by-side shows its operations and its phase from the records" \
	sh -c "grep -q 'ops/s' '$WORK/sbs-wl' && grep -q 'poke p50/p99' '$WORK/sbs-wl' && grep -q '^shm 4k' '$WORK/sbs-wl'"
finish
