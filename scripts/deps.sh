#!/bin/sh
# Install the Debian packages mshare-bench needs, only those missing.
# Kept in one list so `make deps`, `make`, `make bench`, `make test` and
# `.ci/run` agree.  When another package manager holds the dpkg lock (an
# unattended upgrade, another job), apt-get waits for it (up to
# DEPS_LOCK_TIMEOUT seconds, default 600) and says so, instead of failing.
# Quiet: one line (scripts/lib/step.sh); apt's and dpkg's output goes to
# build/logs/deps.log, whose path and last lines are printed on failure.
set -eu
. "$(dirname "$0")/lib/step.sh"
PACKAGES="build-essential pkg-config libpmem-dev libpmem2-dev libndctl-dev libdaxctl-dev libnuma-dev libhwloc-dev libjansson-dev \
ndctl daxctl gnuplot-nox python3 python3-jinja2 qemu-system-x86 busybox-static e2fsprogs cpio \
dpkg-dev fakeroot rsync kmod"
# dpkg-dev, fakeroot, rsync, kmod (and cpio): `make kernel-deb`'s make
# bindeb-pkg (dpkg-buildpackage under fakeroot; its debian/control's
# Build-Depends); kernel/build.sh installs the rest of a kernel build's
# (bc, flex, bison, libelf-dev, libssl-dev, ...) itself.
# python3-jinja2: bench/report's HTML page. With --tests (make test,
# .ci/run) also what only the tests use: chromium (headless), the report's
# browser test, tests/bench/report.sh; a plain `make` or `make bench` does
# not install a browser. Slurm (slurmctld, slurmd, slurm-client, munge):
# tests/bench/slurm.sh starts its own one-node cluster in a temp dir.
case "${1:-}" in
--tests) PACKAGES="$PACKAGES chromium slurmctld slurmd slurm-client munge" ;;
'') ;;
*) echo "deps: unknown argument '$1' (usage: scripts/deps.sh [--tests])" >&2; exit 2 ;;
esac
lock_timeout=${DEPS_LOCK_TIMEOUT:-600}
case "$lock_timeout" in
''|*[!0-9]*) echo "deps: DEPS_LOCK_TIMEOUT='$lock_timeout' is not a whole number of seconds" >&2; exit 2 ;;
esac
missing=""
for p in $PACKAGES; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -z "$missing" ]; then
	echo "deps: the $(echo $PACKAGES | wc -w) Debian packages it needs are installed already" >&2
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "deps: need root to apt-get install:$missing" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# apt-get waits for the dpkg frontend lock with DPkg::Lock::Timeout, but not
# for the lists lock of `apt-get update`, and it waits silently:
# retry here, saying who holds the lock (on the terminal, step_say), until
# DEPS_LOCK_TIMEOUT. Everything apt-get prints goes to the step's log.
err=$(mktemp "${TMPDIR:-/tmp}/deps.XXXXXX")
trap 'rm -f "$err"' EXIT
apt_get() {	# apt_get ARGS...: apt-get, waiting for a held lock
	t0=$(date +%s) said=""
	while :; do
		if apt-get -o DPkg::Lock::Timeout=5 "$@" 2>"$err"; then
			cat "$err" >&2
			return 0
		fi
		if ! grep -qiE 'could not get lock|unable to acquire the dpkg frontend lock|unable to lock' "$err"; then
			cat "$err" >&2
			return 1
		fi
		waited=$(($(date +%s) - t0))
		if [ "$waited" -ge "$lock_timeout" ]; then
			cat "$err" >&2
			step_say "deps: gave up after waiting ${waited}s for the package lock (DEPS_LOCK_TIMEOUT=$lock_timeout)"
			return 1
		fi
		who=$(grep -o 'held by process [0-9]* ([^)]*)' "$err" | head -1)
		# Say so at first, when the holder changes, and about once a minute.
		if [ "$said" != "holder $who" ] || [ $((waited % 60)) -lt 10 ]; then
			step_say "deps: apt-get $1: the package lock is held${who:+ by ${who#held by }}; waiting (${waited}s of ${lock_timeout}s)"
			said="holder $who"
		fi
		sleep 5
	done
}
install() {
	apt_get update || { echo "deps: apt-get update failed"; return 1; }
	# shellcheck disable=SC2086
	apt_get install -y $missing || { echo "deps: apt-get install$missing failed"; return 1; }
}
log=$(step_log deps) || exit 1
: >"$log"
step_run "$log" "deps: installing$missing" install || exit 1
# apt's warnings (W: lines) are said, not hidden; dpkg's notes stay in the log
nw=$(grep -c '^W: ' "$log" || true)
[ "$nw" = 0 ] || echo "deps: apt-get printed $nw warnings (W: lines of $(step_show "$log"))" >&2
