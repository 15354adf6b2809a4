#!/bin/sh
# Run every test of the project and total their TAP lines.
#
# A test is an executable tests/*/*.sh or a binary build/tests/*/test-*.
# Each prints TAP lines ("ok N - what", "not ok N - what",
# "ok N - what # SKIP reason") and exits non-zero on failure. The totals are
# recomputed here from the lines themselves; a test that exits non-zero (or
# is killed, or times out) without printing any "not ok" line counts as one
# failure, so a crash can never pass silently.
# Last line: "N passed, N failed, N skipped". Exit status non-zero if
# anything failed. Before it, every failed line again with the "#" lines
# that follow it (up to 15), so that the end of a long log says what failed
# and why.
#
# Environment: TEST_TIMEOUT (seconds per test, default 900; a script that
#              declares "# test-timeout: N" in its first lines gets N when
#              that is more),
#              TEST_FILTER (only tests whose path contains it).
cd "$(dirname "$0")/.." || exit 2
timeout_s=${TEST_TIMEOUT:-900}
passed=0 failed=0 skipped=0
failed_tests=""
log=$(mktemp "${TMPDIR:-/tmp}/run-tests.XXXXXX") || exit 2
trap 'rm -f "$log" "$log.rc" "$log.failures"' EXIT INT TERM
: >"$log.failures"

for t in tests/*/*.sh build/tests/*/test-*; do
	[ -f "$t" ] && [ -x "$t" ] || continue
	case "$t" in *.d|*.o) continue ;; esac
	if [ -n "${TEST_FILTER:-}" ]; then
		case "$t" in *"$TEST_FILTER"*) ;; *) continue ;; esac
	fi
	echo "# $t"
	t_limit=$timeout_s
	decl=$(head -c 2048 "$t" | sed -n 's/^# test-timeout: *\([0-9][0-9]*\)$/\1/p' | head -n 1)
	[ -n "$decl" ] && [ "$decl" -gt "$t_limit" ] && t_limit=$decl
	# Output shows as it comes (a guest test boots a VM for minutes); the
	# status comes back through a file, the pipe would lose it.
	{ timeout -k 10 "$t_limit" "./$t" 2>&1; echo $? >"$log.rc"; } | tee "$log"
	rc=$(cat "$log.rc" 2>/dev/null || echo 2)
	p=$(grep -cE '^ok [0-9]+' "$log" | tr -d ' ')
	s=$(grep -ciE '^ok [0-9]+.*# *SKIP' "$log" | tr -d ' ')
	f=$(grep -cE '^not ok [0-9]+' "$log" | tr -d ' ')
	p=$((p - s))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
			echo "not ok - $t timed out after ${t_limit}s"
		else
			echo "not ok - $t exited with status $rc without reporting a failure"
		fi
		f=1
	fi
	if [ "$f" -gt 0 ]; then
		failed_tests="$failed_tests $t"
		{
			echo "# --- $t"
			awk '/^not ok [0-9]+/ { print; n = 15; next }
				n > 0 && /^#/ { print; n--; next }
				{ n = 0 }' "$log"
			[ "$rc" -ne 0 ] && ! grep -qE '^not ok [0-9]+' "$log" && tail -n 15 "$log"
		} >>"$log.failures"
	fi
	passed=$((passed + p))
	skipped=$((skipped + s))
	failed=$((failed + f))
done

if [ -n "$failed_tests" ]; then
	echo "# what failed, again:"
	sed 's/^/#   /' "$log.failures"
	echo "# failed:$failed_tests"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
