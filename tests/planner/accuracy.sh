#!/bin/sh
# The accuracy every plan prints (planner/accuracy_table.inc) is what `plan
# --calibrate` gives for the reference runs under results/ now (TAP): a run
# added or a model changed without regenerating the table fails here.
cd "$(dirname "$0")/../.." || exit 2
. tests/lib/tap.sh
[ -x build/mshare-bench ] || bail "build/mshare-bench is not built (run make)"
out=$(python3 planner/gen-accuracy.py build/mshare-bench --check 2>&1)
check_status $? "planner/accuracy_table.inc matches plan --calibrate of results/ (planner/gen-accuracy.py rewrites it)$(
	[ -n "$out" ] && printf '\n%s' "$out" | sed 's/^/# now: /')"
rows=$(grep -c '^{ "' planner/accuracy_table.inc)
[ "$rows" -ge 5 ]
check_status $? "the table covers $rows shape/platform pairs"
finish
