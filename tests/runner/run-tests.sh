#!/bin/sh
# tests/run-tests.sh, the runner itself, on a tree of made-up tests: it
# totals the TAP lines, counts a test that dies or times out without a
# "not ok" line as one failure, exits non-zero when anything failed, and
# repeats every failed line with its "#" lines at the end of its output.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"

tmp=$(mktemp -d) || bail "mktemp -d"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/tests/x"
cp "$root/tests/run-tests.sh" "$tmp/tests/"
mk() { printf '#!/bin/sh\n%s\n' "$2" >"$tmp/tests/x/$1.sh"; chmod +x "$tmp/tests/x/$1.sh"; }
mk a-pass 'echo "ok 1 - one"; echo "ok 2 - two # SKIP no reason"; echo "1..2"'
mk b-fail 'echo "ok 1 - fine"; echo "not ok 2 - broken thing"; echo "# because X was 3"; echo "# and Y"; echo "ok 3 - after"; echo "1..3"; exit 1'
mk c-crash 'echo "ok 1 - before the crash"; echo "last words"; kill -SEGV $$'
mk d-slow '# test-timeout: 1
echo "ok 1 - started"; sleep 30'

out=$(cd "$tmp" && env -u TEST_FILTER TEST_TIMEOUT=1 sh tests/run-tests.sh 2>&1)
rc=$?
last=$(printf '%s\n' "$out" | tail -n 1)
# pass: one, two(skip), fine, after, before the crash, started = 5 passed, 1 skipped;
# failed: broken thing, the crash, the timeout = 3
if [ "$last" = "5 passed, 3 failed, 1 skipped" ]; then
	ok "totals from the TAP lines, a crash and a timeout count as failures: $last"
else
	not_ok "totals: got '$last', want '5 passed, 3 failed, 1 skipped'"
fi
if [ "$rc" != 0 ]; then ok "exit status $rc when something failed"; else not_ok "exit status 0 although tests failed"; fi
tailtxt=$(printf '%s\n' "$out" | sed -n '/^# what failed, again:$/,$p')
case "$tailtxt" in
*"#   not ok 2 - broken thing"*"#   # because X was 3"*"#   # and Y"*) ok "the failed line and its '#' lines are repeated at the end" ;;
*) not_ok "the failed line and its '#' lines are repeated at the end (got: $tailtxt)" ;;
esac
case "$tailtxt" in
*"#   last words"*) ok "a test that died without a 'not ok' line: its last output is repeated at the end" ;;
*) not_ok "a test that died without a 'not ok' line: its last output is repeated at the end (got: $tailtxt)" ;;
esac
case "$tailtxt" in
*"ok 3 - after"*|*"#   ok 1 - one"*) not_ok "the summary repeats only failures and their comments (got: $tailtxt)" ;;
*) ok "the summary repeats only failures and their comments" ;;
esac
case "$(printf '%s\n' "$out" | grep '^# failed:')" in
"# failed: tests/x/b-fail.sh tests/x/c-crash.sh tests/x/d-slow.sh") ok "'# failed:' names the three failed tests" ;;
*) not_ok "'# failed:' names the three failed tests (got: $(printf '%s\n' "$out" | grep '^# failed:'))" ;;
esac
out=$(cd "$tmp" && TEST_FILTER=a-pass sh tests/run-tests.sh 2>&1)
rc=$?
if [ "$rc" = 0 ] && [ "$(printf '%s\n' "$out" | tail -n 1)" = "1 passed, 0 failed, 1 skipped" ] &&
	! printf '%s\n' "$out" | grep -q 'what failed'; then
	ok "all passed: exit 0, no failure summary"
else
	not_ok "all passed: exit 0, no failure summary (rc $rc: $out)"
fi
finish
