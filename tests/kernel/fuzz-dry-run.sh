#!/bin/sh
# The mshare fuzzer itself, on the host (no mshare here: --dry-run, where
# every mshare call fails with ENOSYS): bad options are refused with status 2
# naming the value, a bounded run ends by itself with status 0, counts at
# least the calls asked for, and its histogram covers every kind of
# operation; no worker dies of a fault outside the guarded accesses.
# The real runs are in the guest: tests/kernel/debug-kernel.sh, make fuzz.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
fuzz=build/guest/bin/fuzz-mshare
. tests/lib/tap.sh
if ! make -s --no-print-directory "$fuzz" >/dev/null 2>&1 || [ ! -x "$fuzz" ]; then
	bail "building $fuzz"
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fuzz-dry.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

refused() {	# refused VALUE ARGS...: status 2 and VALUE named on stderr
	value=$1; shift
	"$fuzz" "$@" >/dev/null 2>"$tmp/err"
	[ $? = 2 ] && grep -qF -- "$value" "$tmp/err"
}
check "refuses --procs 0" refused "--procs 0" --procs 0
check "refuses --seed -1" refused "'-1'" --seed -1
check "refuses --calls 12x" refused "'12x'" --calls 12x
check "refuses --seconds 0 without --calls" refused "--seconds 0" --seconds 0
check "refuses an unknown option" refused "--bogus" --bogus
check "refuses --avoid with an unknown bug name" refused "'nosuch'" --avoid private,nosuch
help_ok() { "$fuzz" --help | grep -q -- '--seed N' && "$fuzz" --help | grep -q -- '--dry-run'; }
check "--help names the options" help_ok
no_mshare() {
	"$fuzz" --calls 10 >/dev/null 2>"$tmp/err"
	[ $? = 1 ] && grep -q 'no mshare' "$tmp/err"
}
check "without --dry-run, a kernel without mshare is refused (status 1)" no_mshare

(cd "$tmp" && "$root/$fuzz" --dry-run --calls 4000 --procs 4 --seed 3 --seconds 120 >"$tmp/out" 2>&1)
rc=$?
calls=$(sed -n 's/^fuzz-mshare: \([0-9]*\) calls in .*/\1/p' "$tmp/out")
check "a --calls 4000 dry run ends with status 0 (got $rc)" [ "$rc" = 0 ]
check "it counts at least 4000 calls (${calls:-none})" [ "${calls:-0}" -ge 4000 ]
missing=
for op in map mshare_donate mshare_attach mshare_random mshare_unlink load store procmem_write \
	odirect_read munmap mremap mprotect madvise mlock mbind truncate fs_read fs_modify fork exit kill_child; do
	grep -qE "^fuzz-mshare: +$op +[0-9]+:" "$tmp/out" || missing="$missing $op"
done
check "its histogram has every operation${missing:+ (missing:$missing)}" [ -z "$missing" ]
check "every mshare call failed with ENOSYS in the dry run" \
	grep -qE '^fuzz-mshare: +mshare_random +([0-9]+): ENOSYS=\1$' "$tmp/out"
faults=$(sed -n 's/^fuzz-mshare: worker ends:.*\(Segmentation fault\|Bus error\)=\([0-9]*\).*/\2/p' "$tmp/out")
check "no worker died of an unguarded fault (${faults:-0})" [ -z "$faults" ]
[ "$TAP_FAILED" = 0 ] || sed 's/^/# /' "$tmp/out" | tail -n 30
finish
