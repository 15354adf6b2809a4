# tests/lib/tap.sh - TAP output for the shell tests (sourced, not run); the
# C unit tests use tests/lib/tap.h, the Python tests tests/lib/tap.py.
#
#   ok WHAT                 "ok N - WHAT" (a "# SKIP" in WHAT counts as a skip)
#   not_ok WHAT             "not ok N - WHAT"
#   skip WHAT WHY           "ok N - WHAT # SKIP WHY"
#   result ok|not-ok WHAT   ok or not_ok (for lines relayed from elsewhere)
#   check WHAT CMD [ARG...] ok when CMD succeeds, else not_ok
#   check_status RC WHAT    ok when RC (e.g. $?) is 0, else not_ok
#   finish                  prints the plan "1..N" and exits: 0 when nothing
#                           failed, else 1 (EXIT traps still run)
#   bail WHAT               not_ok WHAT, then finish: a test that cannot go on
#
# TAP_N, TAP_PASSED, TAP_FAILED and TAP_SKIPPED count the lines so far (a
# second source, e.g. by tests/kernel/lib/guest.sh, keeps them).
if [ -z "${TAP_N:-}" ]; then
	TAP_N=0 TAP_PASSED=0 TAP_FAILED=0 TAP_SKIPPED=0
fi

ok() {
	TAP_N=$((TAP_N + 1))
	case "$*" in *"# SKIP"*) TAP_SKIPPED=$((TAP_SKIPPED + 1)) ;; *) TAP_PASSED=$((TAP_PASSED + 1)) ;; esac
	echo "ok $TAP_N - $*"
}
not_ok() { TAP_N=$((TAP_N + 1)); TAP_FAILED=$((TAP_FAILED + 1)); echo "not ok $TAP_N - $*"; }
skip() { ok "$1 # SKIP $2"; }
result() {
	_tap_v=$1; shift
	if [ "$_tap_v" = ok ]; then ok "$*"; else not_ok "$*"; fi
}
check() {
	_tap_what=$1; shift
	if "$@"; then ok "$_tap_what"; else not_ok "$_tap_what"; fi
}
# ev 'COND': a shell condition as one command, for check: check "what" ev '[ $a = 1 ] && ...'
ev() { eval "$1"; }
check_status() { if [ "$1" = 0 ]; then ok "$2"; else not_ok "$2"; fi; }
finish() { echo "1..$TAP_N"; [ "$TAP_FAILED" -eq 0 ]; exit; }
bail() { not_ok "$*"; finish; }
