#!/bin/sh
# Adding a backend is its file and one line in harness/backends.c: the test
# build's harness (build/tests/harness/mshare-bench-dummy) has one more
# backend, tests/harness/backend_dummy.c (a memfd with a made-up fixed
# 64 KiB page), and nothing else of the suite names it. It must appear in
# run --help, backends --json (with its facts), the harness's --check (its
# page size), sweep validation and points (no page axis: its page is fixed),
# a real sweep, side-by-side (labelled without a page mode) and plan
# --calibrate (no planner model: skipped, saying so).
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
finish
