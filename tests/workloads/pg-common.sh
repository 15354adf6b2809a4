#!/bin/sh
# workloads/postgres/guest/pg-common.sh's hugepage-pool helpers, sourced on
# the host with the pool file and lock redirected into a temporary
# directory: giving the pool back must leave the caller's variables alone.
# pg-bench.sh counts connections in n; pool_give_back() set n to the pool's
# free count, so a mode run after hugetlb-2m at the same N ran with that
# count instead (a smoke sweep of 4k, hugetlb-2m, mshare-dax at 4
# connections wrote mshare-dax-c36). TAP.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
echo "1..3"
. "$root/workloads/postgres/guest/pg-common.sh"
HP=$tmp/nr_hugepages
POOL_LOCK=$tmp/hugepool.lock
echo 5 >"$HP"
n=999999
pool_added=1
pool_give_back >"$tmp/log" 2>&1
if [ "$n" = 999999 ]; then echo "ok 1 - pool_give_back leaves the caller's n alone"
else echo "not ok 1 - pool_give_back changed the caller's n to $n"; fi
free=$(pool_free)
want=$((5 - (free < 1 ? free : 1)))
[ "$free" -gt 0 ] || want=5
if [ "$(cat "$HP")" = "$want" ]; then echo "ok 2 - the pool file holds $want after giving back min(free $free, added 1)"
else echo "not ok 2 - the pool file holds $(cat "$HP"), want $want (free $free)"; fi
n=7
pool_release_lock
if [ "$n" = 7 ] && [ "$pool_locked" = 0 ]; then echo "ok 3 - the lock is released, n untouched"
else echo "not ok 3 - after pool_release_lock: n=$n pool_locked=$pool_locked"; fi
