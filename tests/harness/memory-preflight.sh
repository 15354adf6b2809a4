#!/bin/sh
# The memory pre-flight counts the region's data, not only page tables: a
# run whose data cannot fit in memory is refused before anything is set up
# or forked, with a message naming the figures; nothing is written.
. "$(dirname "$0")/lib/common.sh"

HP=/sys/kernel/mm/hugepages/hugepages-2048kB
mem_total_kb=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
# Twice the host's memory, in GiB (200G on a host of 100 GiB or less):
# the region's data alone cannot fit, its page tables would.
big_g=$((mem_total_kb * 2 / 1048576 + 1))
[ "$big_g" -lt 200 ] && big_g=200

# refuse WHAT NEEDLE... -- ARGS: exit 1, the message names the region size
# and MemAvailable and each NEEDLE, no record, no process forked.
refuse() {
	case_name=$1; shift
	needles=""
	while [ "$1" != "--" ]; do needles="$needles|$1"; shift; done
	shift
	out=$WORK/refused.json
	if command -v strace >/dev/null 2>&1; then
		strace -f -qq -e trace=fork,vfork,clone,clone3 -o "$WORK/trace" \
			"$BIN" run "$@" --out "$out" 2>"$WORK/err" >/dev/null
		rc=$?
		forks=$(grep -c 'clone\|fork' "$WORK/trace")
	else
		"$BIN" run "$@" --out "$out" 2>"$WORK/err" >/dev/null
		rc=$?
		forks=unknown
	fi
	msg=$(cat "$WORK/err")
	echo "# $msg"
	check "$case_name: refused with exit 1 (got $rc)" [ "$rc" -eq 1 ]
	missing=""
	for n in "--size ${big_g} GiB" MemAvailable --skip-memory-check $(echo "$needles" | tr '|' ' '); do
		printf '%s' "$msg" | grep -qF -- "$n" || missing="$missing '$n'"
	done
	check "$case_name: the message names the figures (missing:${missing:- none})" [ -z "$missing" ]
	check "$case_name: no record and no file left" \
		eval '[ ! -e "$out" ] && [ -z "$(ls "$WORK" | grep refused)" ] && [ -z "$(ls /dev/shm | grep mshare-bench)" ]'
	if [ "$forks" = unknown ]; then
		skip "$case_name: nothing forked" "strace is not installed"
	else
		check "$case_name: nothing forked (strace saw $forks fork/clone calls)" [ "$forks" -eq 0 ]
	fi
}

refuse "shm ${big_g}G touch" "${big_g} GiB of region data in shared memory (tmpfs /dev/shm)" "page tables" -- \
	--backend shm --workers 2 --size "${big_g}G" --workload touch
refuse "anon ${big_g}G touch" "${big_g} GiB of region data in shared memory" -- \
	--backend anon --workers 2 --size "${big_g}G" --workload touch
# A file on a disk filesystem: its data is page cache (on tmpfs: memory).
refuse "file ${big_g}G touch in $WORK" "${big_g} GiB of region data in" "$WORK" -- \
	--backend file --path "$WORK" --workers 2 --size "${big_g}G" --workload touch

# hugetlb: the data comes from the pool; what the pool must grow by comes
# out of MemAvailable. Refused without touching nr_hugepages.
if [ "$(id -u)" -ne 0 ] || [ ! -w "$HP/nr_hugepages" ]; then
	skip "hugetlb-2m ${big_g}G refused, pool unchanged" "needs root and $HP"
else
	pool_before=$(cat "$HP/nr_hugepages")
	refuse "hugetlb-2m ${big_g}G pt-footprint" "${big_g} GiB the 2048 kB huge page pool must grow by" "$((big_g * 512)) pages needed" -- \
		--backend hugetlb-2m --workers 2 --size "${big_g}G" --workload pt-footprint
	check "hugetlb-2m refused: nr_hugepages untouched ($pool_before)" [ "$(cat "$HP/nr_hugepages")" = "$pool_before" ]
fi

# A run that fits: its record's estimate counts the region's data (touch
# faults in every page of the 64 MiB region) and says so.
out=$WORK/fits.json
if "$BIN" run --backend shm --workers 2 --size 64M --workload touch --quiet --out "$out" 2>"$WORK/err"; then
	check "a 64 MiB touch run: estimated_bytes counts the 64 MiB of data" \
		jtest "$out" 'r["preflight"]["estimated_bytes"] >= 64 << 20'
	check "a 64 MiB touch run: the estimate names the data and where it lives" \
		jtest "$out" '"at most 64 MiB, in shared memory (tmpfs /dev/shm)" in r["preflight"]["estimate"]'
else
	not_ok "a 64 MiB shm run that fits was refused: $(cat "$WORK/err")"
fi
# pt-footprint with base pages faults in one 4 KiB page per 2 MiB.
out=$WORK/fits-pt.json
if "$BIN" run --backend shm --workers 2 --size 64M --workload pt-footprint --page 4k --quiet --out "$out" 2>"$WORK/err"; then
	check "pt-footprint --page 4k over 64 MiB: 32 pages of 4 KiB counted as data" \
		jtest "$out" '"at most 128 KiB," in r["preflight"]["estimate"]'
else
	not_ok "a 64 MiB pt-footprint run was refused: $(cat "$WORK/err")"
fi
finish
