# Shared helpers of the harness integration tests (sourced, not run), with
# the TAP functions of tests/lib/tap.sh (ok, not_ok, skip, check, finish...).
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/lib/tap.sh"
BIN="$ROOT/build/mshare-bench"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/mshare-bench-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# jget FILE dotted.key -> the value (JSON null -> "null").
jget() {
	python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    v = v[k]
print("null" if v is None else (str(v).lower() if isinstance(v, bool) else v))' "$1" "$2"
}

# Python expression over the record r (e.g. 'r["results"]["oom_killed"] == 0').
jtest() {
	python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if eval(" ".join(sys.argv[2].split())) else 1)' "$1" "$2"
}

# Wait up to $2 seconds for the 2 MiB pool to be back at $1 (another
# process may be using the pool for a moment).
pool_back_to() {
	i=0
	while [ "$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages)" != "$1" ] && [ "$i" -lt "$2" ]; do
		sleep 1; i=$((i + 1))
	done
	[ "$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages)" = "$1" ]
}

# Largest change of /proc/meminfo PageTables (bytes) between samples over
# about a second: how much other processes move the system-wide view.
pagetables_drift() {
	python3 -c '
import time
def pt():
    for l in open("/proc/meminfo"):
        if l.startswith("PageTables:"):
            return int(l.split()[1]) * 1024
s = [pt()]
for _ in range(10):
    time.sleep(0.1); s.append(pt())
print(max(s) - min(s))'
}

# check_pool WHAT BEFORE: the 2 MiB pool is back at BEFORE. When another
# process was already using the pool (BEFORE > 0) and it moved, the change
# cannot be told apart from ours: skip with that reason.
check_pool() {
	if pool_back_to "$2" 10; then
		ok "$1"
	elif [ "$2" != 0 ]; then
		skip "$1" "another process is using the pool (was $2, now $(cat /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages))"
	else
		not_ok "$1 (now $(cat /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages))"
	fi
}

[ -x "$BIN" ] || bail "$BIN is not built (run make)"
