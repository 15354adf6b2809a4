#!/bin/sh
# Bad input is rejected before anything starts: non-zero exit, a message
# naming the bad value, and no record written.
. "$(dirname "$0")/lib/common.sh"

base="--backend shm --workers 2 --size 4M --workload touch"
reject() { # "what" "text the message must contain" args...
	what=$1 needle=$2; shift 2
	out=$WORK/never.json
	msg=$("$BIN" run "$@" --out "$out" 2>&1 >/dev/null)
	rc=$?
	if [ $rc -ne 0 ] && [ $rc -ne 3 ] && printf '%s' "$msg" | grep -qF -- "$needle" && [ ! -e "$out" ] &&
		[ -z "$(ls "$WORK" | grep never)" ]; then
		ok "$what rejected (exit $rc): $msg"
	else
		not_ok "$what: exit $rc, message '$msg', record exists: $([ -e "$out" ] && echo yes || echo no)"
	fi
}

reject "garbage size" "12XB" --backend shm --workers 2 --size 12XB --workload touch
reject "zero size" "'0'" --backend shm --workers 2 --size 0 --workload touch
reject "overflowing size" "99999999999999999999T" --backend shm --workers 2 --size 99999999999999999999T --workload touch
reject "size not a multiple of 4 KiB" "5000" --backend shm --workers 2 --size 5000 --workload touch
reject "size not a multiple of the 2 MiB huge page" "4096" --backend hugetlb-2m --workers 2 --size 4096 --workload touch
reject "zero workers" "'0'" --backend shm --workers 0 --size 4M --workload touch
reject "non-numeric workers" "ten" --backend shm --workers ten --size 4M --workload touch
reject "unknown backend" "nosuch" --backend nosuch --workers 2 --size 4M --workload touch
reject "unknown workload" "nosuch" --backend shm --workers 2 --size 4M --workload nosuch
reject "unknown option" "--bogus" $base --bogus 1
reject "bad --page" "2m" $base --page 2m
reject "bad --duration" "10parsecs" $base --duration 10parsecs
reject "misaligned --addr" "0x20000000001" $base --addr 0x20000000001
reject "region beyond the user address space" "0x7ff000000000" --backend shm --workers 2 --workload touch --addr 0x7ff000000000 --size 1T
reject "missing --workers" "--workers" --backend shm --size 4M --workload touch
reject "option without value" "--size" --backend shm --workers 2 --workload touch --size
reject "file backend without --path" "--path" --backend file --workers 2 --size 4M --workload touch
reject "too many workers for pid_max" "pid_max" --backend shm --workers 4000000 --size 4M --workload touch
reject "page tables beyond MemAvailable" "MemAvailable" --backend shm --workers 1000 --size 300G --workload touch

msg=$("$BIN" run $base --out /nonexistent-dir/x.json 2>&1 >/dev/null)
rc=$?
check "--out in a missing directory rejected before the run (exit $rc): $msg" \
	sh -c '[ "$1" -eq 2 ] && printf "%s" "$2" | grep -q /nonexistent-dir' _ "$rc" "$msg"

# --help tells the truth about what run accepts.
help=$("$BIN" run --help)
for opt in --backend --workers --size --workload --path --addr --page --write --out --csv --seed --duration --ops; do
	printf '%s' "$help" | grep -q -- "$opt" || missing="$missing $opt"
done
check "run --help documents every option${missing:+ (missing:$missing)}" [ -z "$missing" ]
finish
