# scripts/lib/step.sh - quiet set-up steps (sourced, not run; POSIX sh).
# Used by scripts/deps.sh, kernel/build.sh and scripts/step (the same for
# make recipes): a step prints one line on stderr, what it does and, when
# done, how long it took; all of its own output goes to a log file under
# build/logs/. When it fails, the line says so and the log's last
# STEP_TAIL (default 30) lines follow, then its path.
#
#   step_log NAME          the log path build/logs/NAME.log of this checkout
#                          (STEP_LOG_DIR instead of build/logs; the directory
#                          is created); echoed
#   step_run LOG WHAT CMD [ARG...]
#                          "WHAT ... done in N s (log LOG)": CMD runs in a
#                          subshell (its exit ends only the step) with stdout
#                          and stderr appended to LOG; returns CMD's status
#   step_say MSG           from inside a step: a line on the terminal (e.g.
#                          "waiting for the dpkg lock"); the step's own line
#                          is ended first and said again when the step ends
#   step_fail LOG [N]      the last N (STEP_TAIL) lines of LOG and its path,
#                          on stderr
#   step_show PATH         PATH relative to the current directory when under it

step_show() {
	case "$1" in "$PWD"/*) echo "${1#"$PWD"/}" ;; *) echo "$1" ;; esac
}

# Every script that sources this lives one directory below the top.
step_log() {
	_step_dir=${STEP_LOG_DIR:-$(cd "$(dirname "$0")/.." && pwd)/build/logs}
	mkdir -p "$_step_dir" || return 1
	echo "$_step_dir/$1.log"
}

step_fail() {
	_step_n=${2:-${STEP_TAIL:-30}}
	{
		echo "---- last $_step_n lines of $(step_show "$1"):"
		tail -n "$_step_n" "$1"
		echo "---- full log: $(step_show "$1")"
	} >&2
}

step_say() {
	if [ -n "${_step_mark:-}" ] && [ -f "$_step_mark" ]; then
		rm -f "$_step_mark"
		echo >&3
	fi
	echo "$*" >&3
}

step_run() {
	_step_logf=$1 _step_what=$2
	shift 2
	_step_mark=$_step_logf.line-open
	: >"$_step_mark"
	printf '%s ... ' "$_step_what" >&2
	_step_t0=$(date +%s)
	_step_rc=0
	# fd 3 is the terminal's stderr, for step_say
	( "$@" ) 3>&2 >>"$_step_logf" 2>&1 || _step_rc=$?
	_step_dt=$(($(date +%s) - _step_t0))
	# the line is still open unless step_say ended it: then say what again
	if [ -f "$_step_mark" ]; then rm -f "$_step_mark"; else printf '%s: ' "$_step_what" >&2; fi
	_step_mark=
	if [ "$_step_rc" = 0 ]; then
		echo "done in $_step_dt s (log $(step_show "$_step_logf"))" >&2
		return 0
	fi
	echo "FAILED after $_step_dt s (exit $_step_rc)" >&2
	step_fail "$_step_logf"
	return "$_step_rc"
}
