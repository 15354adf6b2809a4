#!/bin/sh
# Data written by one worker is read by the others, on every backend that
# can run here (the verify workload: worker 0 writes a pattern into every
# page, the other workers check it after worker 0 publishes a flag).
. "$(dirname "$0")/lib/common.sh"

verify() { # backend size extra-args...
	b=$1 size=$2; shift 2
	out=$WORK/verify-$b.json err=$WORK/verify-$b.err
	if ! "$BIN" run --backend "$b" --workers 8 --size "$size" --workload verify --quiet --out "$out" "$@" 2>"$err"; then
		if grep -q "could supply only\|no pool\|cannot raise\|cannot allocate\|not usable here" "$err"; then
			skip "verify on $b" "$(cat "$err")"
		else
			cat "$err"
			not_ok "verify on $b runs"
		fi
		return
	fi
	pages=$(($(jget "$out" config.size_bytes) / $(jget "$out" results.backend_page_bytes)))
	check "$b: 7 workers read back worker 0's pattern in all $pages pages, no mismatch" \
		jtest "$out" "(lambda c: c['pages_written'] == $pages and c['pages_checked'] == 7 * $pages and c['mismatches'] == 0)(r['results']['workload']['counters'])"
}

verify shm 16M --page 4k
verify anon 16M
verify file 16M --path "$WORK"
verify hugetlb-2m 16M

# The file backend records what it mapped and whether it is DAX.
out=$WORK/verify-file.json
if [ -f "$out" ]; then
	check "file backend records its filesystem and DAX state" \
		jtest "$out" 'r["results"]["fs_type"] != "" and r["results"]["dax"] in (True, False) and r["config"]["path"] is not None'
fi
finish
