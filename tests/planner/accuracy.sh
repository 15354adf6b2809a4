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
# A run of the user's own under results/ (make bench writes one there; git
# ignores results/) is not reference data: the table still matches. (Before
# gen-accuracy.py read only the committed runs, `make bench` then `make
# test` failed here.)
own=results/zz-own-run-accuracy-test.$$
trap 'rm -rf "$own"' EXIT
if git ls-files --error-unmatch results/head-to-head-oom-20261203T090104Z/manifest.json >/dev/null 2>&1; then
	cp -r results/head-to-head-oom-20261203T090104Z "$own"
	out=$(python3 planner/gen-accuracy.py build/mshare-bench --check 2>&1)
	check_status $? "a run of the user's own under results/ leaves the table as it is$(
		[ -n "$out" ] && printf '\n%s' "$out" | sed 's/^/# now: /')"
	rm -rf "$own"
else
	skip "a run of the user's own under results/ leaves the table as it is" "not a git work tree with the committed runs"
fi
rows=$(grep -c '^{ "' planner/accuracy_table.inc)
[ "$rows" -ge 5 ]
check_status $? "the table covers $rows shape/platform pairs"
finish
