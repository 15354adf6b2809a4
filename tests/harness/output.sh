#!/bin/sh
# Records: --out is written whole and never over an existing file; the CSV
# forms (--out x.csv, --csv appending) carry the same fields as the JSON.
. "$(dirname "$0")/lib/common.sh"

run="--backend shm --workers 2 --size 4M --workload pt-footprint --quiet"

out=$WORK/rec.json
"$BIN" run $run --out "$out"
check "--out writes a JSON record" jtest "$out" 'r["config"]["workers"] == 2 and r["schema_version"] == 8'
cp "$out" "$WORK/copy.json"
msg=$("$BIN" run $run --out "$out" 2>&1)
rc=$?
check "--out over an existing file fails (exit $rc) naming it: $msg" \
	sh -c '[ '$rc' -ne 0 ] && printf "%s" "$1" | grep -qF "$2"' _ "$msg" "$out"
check "the existing file is unchanged" cmp -s "$out" "$WORK/copy.json"
check "no temporary file left beside it" [ "$(ls "$WORK" | grep -c tmp)" -eq 0 ]

"$BIN" run $run --out "$WORK/rec.csv"
check "--out x.csv writes a header and one row" [ "$(wc -l <"$WORK/rec.csv")" -eq 2 ]
check "the CSV has the JSON's keys as columns" \
	sh -c 'head -1 "$1" | tr , "\n" | grep -qx results.pagetables.vmpte_sum_bytes && head -1 "$1" | tr , "\n" | grep -qx config.backend' _ "$WORK/rec.csv"

"$BIN" run $run --csv "$WORK/runs.csv" >/dev/null
"$BIN" run $run --csv "$WORK/runs.csv" >/dev/null
check "--csv appends: one header, two rows" [ "$(wc -l <"$WORK/runs.csv")" -eq 3 ]
check "--csv rows parse with the same number of fields as the header" python3 -c '
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
sys.exit(0 if len(rows) == 3 and all(len(r) == len(rows[0]) for r in rows) else 1)' "$WORK/runs.csv"

cp "$WORK/runs.csv" "$WORK/runs.before"
"$BIN" run --backend shm --workers 2 --size 4M --workload verify --quiet --csv "$WORK/runs.csv" \
	--out "$WORK/other.json" 2>"$WORK/csv.err"
rc=$?
check "--csv with other columns gets no row; exit 4 names it and where the record is: $(cat "$WORK/csv.err")" \
	sh -c '[ '$rc' -eq 4 ] && grep -q "other columns" "$1" && grep -qF "the record is in $2" "$1"' _ \
	"$WORK/csv.err" "$WORK/other.json"
check "... the CSV is unchanged and the record is kept in --out" \
	sh -c 'cmp -s "$1" "$2" && [ -s "$3" ]' _ "$WORK/runs.csv" "$WORK/runs.before" "$WORK/other.json"

"$BIN" run $run --out "$WORK/upper.CSV"
check "--out x.CSV (any case) writes CSV, not JSON" \
	sh -c 'head -c 15 "$1" | grep -qx "schema_version,"' _ "$WORK/upper.CSV"

"$BIN" run $run >"$WORK/stdout.json" 2>"$WORK/summary.txt"
check "without --out the JSON goes to stdout" jtest "$WORK/stdout.json" 'r["config"]["backend"] == "shm"'
"$BIN" run --backend shm --workers 2 --size 4M --workload pt-footprint >/dev/null 2>"$WORK/summary.txt"
check "human summary on stderr names both page-table views" \
	sh -c 'grep -q "system view" "$1" && grep -q "sum of VmPTE" "$1"' _ "$WORK/summary.txt"

check "backends lists mshare as unavailable with the reason" \
	sh -c '"$1" backends | grep "^mshare" | grep -q "/proc/sys/vm/mshare_size missing\|available"' _ "$BIN"
# Which design this kernel has, from its files (harness/mshare_detect.h):
# the sysctl means 2022, msharefs alone 2025, neither none.
if grep -q "	msharefs$" /proc/filesystems; then
	if [ -e /proc/sys/vm/mshare_size ]; then design="'2022'"; else design="'2025'"; fi
else
	design=None
fi
check "environment.mshare_available and mshare_design agree with /proc (design $design)" \
	jtest "$out" "r['environment']['mshare_available'] == ($design is not None) and r['environment']['mshare_design'] == $design"
# --help tells the truth about what run accepts.
help=$("$BIN" run --help)
missing=""
for opt in --backend --workers --size --workload --path --addr --page --write --out --csv --seed --duration --ops \
	--skip-memory-check --quiet --check; do
	printf '%s' "$help" | grep -q -- "$opt" || missing="$missing $opt"
done
check "run --help documents every option${missing:+ (missing:$missing)}" [ -z "$missing" ]
finish
