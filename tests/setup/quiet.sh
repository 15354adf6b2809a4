#!/bin/sh
# The quiet set-up of make bench and make test (scripts/lib/step.sh), TAP.
# Without network or a kernel build: apt-get, dpkg-query and id are stand-ins
# on PATH for scripts/deps.sh, and kernel/quiet-build.sh and the Makefile's
# cached-tier check run in a copy of the tree whose kernel/build.sh is a
# stand-in.
#   scripts/step: one line, the output only in build/logs/NAME.log; on
#     failure the status, the log's last 30 lines and its path; a bad NAME
#     refused, named
#   scripts/deps.sh: apt's output (and dpkg's "policy-rc.d denied") only in
#     its log, one line on the terminal; a failing apt-get: the log's path and
#     tail, exit non-zero; a held dpkg lock said on the terminal, the step's
#     line said again when it ends
#   kernel/quiet-build.sh: a labelled image line (flavour, build key; cached
#     or built in N s), the step notes and compiler warnings that matter shown,
#     merge_config's override notes and apt's output only in the log; a
#     failure's status, tail and log path
#   the test recipe's cached-tier check: not cached is one plain skip line
#     (no make "*** ... Error"), exit 0; cached runs the tier; another
#     failure is said with its status
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/lib/tap.sh"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/quiet-setup.XXXXXX") || exit 2
trap 'rm -rf "$WORK"' EXIT
# show FILE: its last 40 lines as TAP comments (for a failed check)
show() { tail -n 40 "$1" | sed 's/^/#   /'; }
# expect WHAT FILE CMD...: ok when CMD succeeds, else not ok and FILE shown
expect() {
	_what=$1 _file=$2
	shift 2
	if "$@"; then ok "$_what"; else not_ok "$_what"; show "$_file"; fi
}
lines() { wc -l <"$1" | tr -d ' '; }
has() { grep -qF -- "$2" "$1"; }
lacks() { ! grep -qF -- "$2" "$1"; }

# --- scripts/step ----------------------------------------------------------
export STEP_LOG_DIR="$WORK/logs"
"$ROOT/scripts/step" ok-step "compiling something" sh -c 'echo noise-out; echo noise-err >&2' >"$WORK/o" 2>"$WORK/e"
rc=$?
expect "scripts/step: exit 0, one line 'compiling something ... done in N s (log ...)'" "$WORK/e" \
	sh -c '[ $0 = 0 ] && [ "$(wc -l <"$1")" = 1 ] && grep -qE "^compiling something \.\.\. done in [0-9]+ s \(log .*/ok-step\.log\)$" "$1"' "$rc" "$WORK/e"
expect "scripts/step: the command's stdout and stderr are in the log, not on the terminal" "$WORK/e" \
	sh -c 'grep -qx noise-out "$1" && grep -qx noise-err "$1" && ! grep -q noise "$2" "$3"' _ "$WORK/logs/ok-step.log" "$WORK/o" "$WORK/e"

"$ROOT/scripts/step" bad-step "a failing step" sh -c 'seq 1 40; exit 4' >"$WORK/o" 2>"$WORK/e"
rc=$?
check "scripts/step: a failing command's status comes back (4, got $rc)" [ "$rc" = 4 ]
expect "scripts/step: on failure, 'FAILED after N s (exit 4)', the log's last 30 lines (11-40) and its path" "$WORK/e" \
	sh -c 'grep -qE "^a failing step \.\.\. FAILED after [0-9]+ s \(exit 4\)$" "$1" && grep -qx 11 "$1" && grep -qx 40 "$1" &&
		! grep -qx 10 "$1" && grep -qF "full log: $2" "$1"' _ "$WORK/e" "$WORK/logs/bad-step.log"
"$ROOT/scripts/step" ../x "what" true 2>"$WORK/e"
rc=$?
expect "scripts/step: NAME '../x' refused, named (exit 2, got $rc)" "$WORK/e" \
	sh -c '[ $0 = 2 ] && grep -qF "'\''../x'\''" "$1"' "$rc" "$WORK/e"

# --- scripts/deps.sh with stand-ins for apt-get, dpkg-query and id ---------
fake=$WORK/bin
mkdir -p "$fake"
printf '#!/bin/sh\nexit 1\n' >"$fake/dpkg-query"	# every package missing
printf '#!/bin/sh\necho 0\n' >"$fake/id"
cat >"$fake/apt-get" <<'EOF'
#!/bin/sh
# FAKE_APT: ok (a thousand lines of progress), fail (ditto, then an error),
# lock (the lock is held on the first call, then ok)
case "$*" in *update*) echo "Hit:1 http://deb.example stable InRelease"; exit 0 ;; esac
if [ "$FAKE_APT" = lock ] && [ ! -f "$FAKE_STATE" ]; then
	: >"$FAKE_STATE"
	echo "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 (apt-get)" >&2
	exit 100
fi
i=0
while [ $i -lt 1000 ]; do echo "Unpacking fake-package-$i ..."; i=$((i + 1)); done
echo "invoke-rc.d: policy-rc.d denied execution of start." >&2
if [ "$FAKE_APT" = fail ]; then
	echo "E: Sub-process /usr/bin/dpkg returned an error code (1)" >&2
	exit 100
fi
exit 0
EOF
chmod +x "$fake/dpkg-query" "$fake/id" "$fake/apt-get"
deps() { # deps MODE: scripts/deps.sh with FAKE_APT=MODE; stderr in $WORK/e, status in rc
	PATH="$fake:$PATH" FAKE_APT=$1 FAKE_STATE="$WORK/lock-state" "$ROOT/scripts/deps.sh" >"$WORK/o" 2>"$WORK/e"
	rc=$?
}
dlog=$WORK/logs/deps.log

deps ok
expect "deps.sh: apt's thousand lines give one line on the terminal (exit $rc)" "$WORK/e" \
	sh -c '[ $0 = 0 ] && [ "$(cat "$1" "$2" | wc -l)" = 1 ] && grep -qE "^deps: installing .* \.\.\. done in [0-9]+ s \(log .*/deps\.log\)$" "$2"' \
	"$rc" "$WORK/o" "$WORK/e"
expect "deps.sh: the log holds apt's output, dpkg's policy-rc.d note too ($(lines "$dlog") lines)" "$dlog" \
	sh -c 'grep -q "fake-package-999" "$1" && grep -q "policy-rc.d denied" "$1" && ! grep -q "policy-rc.d" "$2"' _ "$dlog" "$WORK/e"

deps fail
expect "deps.sh: a failing apt-get: exit non-zero ($rc), its error, the log's tail and path on the terminal" "$WORK/e" \
	sh -c '[ $0 != 0 ] && grep -q "FAILED after" "$1" && grep -qF "returned an error code" "$1" &&
		grep -qF "full log: $2" "$1" && [ "$(wc -l <"$1")" -le 40 ]' "$rc" "$WORK/e" "$dlog"
expect "deps.sh: ... and the whole of apt's output in the log" "$dlog" \
	sh -c 'grep -q "fake-package-0 " "$1" && grep -q "fake-package-999" "$1"' _ "$dlog"

rm -f "$WORK/lock-state"
deps lock
expect "deps.sh: a held dpkg lock is said on the terminal (holder named), then the step's line again, done (exit $rc)" "$WORK/e" \
	sh -c '[ $0 = 0 ] && grep -qF "the package lock is held by process 4242 (apt-get)" "$1" &&
		tail -n 1 "$1" | grep -qE "^deps: installing .*: done in [0-9]+ s"' "$rc" "$WORK/e"

# --- kernel/quiet-build.sh in a copy with a stand-in kernel/build.sh -------
tree=$WORK/tree
mkdir -p "$tree/kernel" "$tree/scripts/lib"
cp "$ROOT/kernel/quiet-build.sh" "$tree/kernel/"
cp "$ROOT/scripts/lib/step.sh" "$tree/scripts/lib/"
cat >"$tree/kernel/build.sh" <<'EOF'
#!/bin/sh
# stand-in: FAKE_KERNEL = cached, built, fail or error; notes as kernel/build.sh's
out=$(cd "$(dirname "$0")/.." && pwd)/build/kernel
n() { echo "kernel/build.sh: $*" >&2; }
if [ "${MSHARE_KERNEL_CACHED_ONLY:-0}" = 1 ] && [ "$FAKE_KERNEL" != cached ] && [ "$FAKE_KERNEL" != error ]; then
	n "not in the cache (${MSHARE_KERNEL_FLAVOUR:-normal} flavour, key 00112233aabbccdd): not built (MSHARE_KERNEL_CACHED_ONLY=1)"
	exit 3
fi
mkdir -p "$out" && echo 00112233aabbccdd >"$out/key" && : >"$out/bzImage"
case "$FAKE_KERNEL" in
cached) n "up to date (normal flavour, key 00112233aabbccdd, 29 patches, cached in /cache)" ;;
built|fail)
	n "installing bc (waiting up to 10 min if another apt/dpkg holds the dpkg lock)"
	i=0; while [ $i -lt 300 ]; do echo "Setting up fake-$i ..." >&2; i=$((i + 1)); done
	n "unpacking /usr/src/linux-source-6.1.tar.xz into /cache/tree"
	n "series: 29 patches applied, 3 files changed in the build tree"
	echo ".config:41:warning: override: reassigning to symbol SLUB_DEBUG" >&2
	echo ".config:52:warning: override: reassigning to symbol MSHARE" >&2
	n "building bzImage (normal flavour, -j2, log /cache/tree/.mshare-build.log)"
	n "building (normal): 0m30s elapsed, 100 files compiled; last: CC mm/mshare.o"
	echo "mm/mshare.c:12:5: warning: unused variable 'x' [-Wunused-variable]" >&2
	echo "vmlinux.o: warning: objtool: mm/mshare.o: unreachable instruction" >&2
	if [ "$FAKE_KERNEL" = fail ]; then
		echo "mm/mshare.c:99:1: error: expected ';' before '}' token" >&2
		n "error: kernel build failed; full log: /cache/tree/.mshare-build.log"
		exit 1
	fi
	n "built in 375s (normal flavour, key 00112233aabbccdd, 1330 files compiled)" ;;
error) n "error: MSHARE_KERNEL_JOBS='x' is not a positive integer"; exit 1 ;;
esac
echo "$out/bzImage"
EOF
chmod +x "$tree/kernel/build.sh"
klog=$WORK/logs/kernel-normal.log
qb() { (cd "$tree" && FAKE_KERNEL=$1 kernel/quiet-build.sh >"$WORK/o" 2>"$WORK/e"); rc=$?; cat "$WORK/o" "$WORK/e" >"$WORK/oe"; }

qb cached
expect "quiet-build: cached: one labelled line (flavour, build key, copied from the cache) (exit $rc)" "$WORK/oe" \
	sh -c '[ $0 = 0 ] && [ "$(wc -l <"$1")" = 1 ] &&
		grep -qx "kernel image: build/kernel/bzImage (patched mshare kernel, normal flavour, build key 00112233aabbccdd; copied from the kernel cache)" "$1"' \
	"$rc" "$WORK/oe"
qb built
expect "quiet-build: built: step lines with their times, the series and progress lines, the mm/ warning, the label 'built in 375 s' (exit $rc)" "$WORK/oe" \
	sh -c '[ $0 = 0 ] && grep -qE "^kernel \(normal\): installing bc .* \.\.\. done in [0-9]+ s$" "$1" &&
		grep -qx "kernel (normal): 0m30s elapsed, 100 files compiled; last: CC mm/mshare.o" "$1" &&
		grep -qx "kernel (normal): series: 29 patches applied, 3 files changed in the build tree" "$1" &&
		grep -qF "mm/mshare.c:12:5: warning: unused variable" "$1" && grep -qF "objtool: mm/mshare.o: unreachable" "$1" &&
		grep -qx "kernel image: build/kernel/bzImage (patched mshare kernel, normal flavour, build key 00112233aabbccdd; built in 375 s)" "$1"' \
	"$rc" "$WORK/oe"
expect "quiet-build: built: apt's lines and merge_config's override note only in the log ($(lines "$WORK/oe") lines on the terminal)" "$WORK/oe" \
	sh -c 'grep -q "fake-299" "$2" && grep -q "warning: override" "$2" && ! grep -q "fake-\|override" "$1" && [ "$(wc -l <"$1")" -le 10 ]' \
	_ "$WORK/oe" "$klog"
qb fail
expect "quiet-build: a failed build: its status (1, got $rc), the error, the log's tail and path" "$WORK/oe" \
	sh -c '[ $0 = 1 ] && grep -qF "error: expected" "$1" && grep -qF "kernel (normal): kernel/build.sh failed (exit 1)" "$1" &&
		grep -qF "full log: $2" "$1" && ! grep -q "^kernel image:" "$1"' "$rc" "$WORK/oe" "$klog"

# --- the test recipe's cached-tier check (Makefile, cached_tier) -----------
tier() { # tier MODE: the check of the mshare-2025 tier in the copy, FAKE_KERNEL=MODE
	# Without the variables an outer make test may have set (it exports
	# MSHARE_2025_TESTS=1 when the cache holds that kernel).
	(cd "$tree" && FAKE_KERNEL=$1 env -u MSHARE_2025_TESTS -u MSHARE_2025_DEBUG_TESTS -u MSHARE_SKIP_GUEST \
		make --no-print-directory -f "$ROOT/Makefile" \
		--eval 'tier-probe: ; @$(call cached_tier,mshare-2025,MSHARE_2025_TESTS,test-2025) echo "tier runs: $${MSHARE_2025_TESTS:-no}"' \
		tier-probe) >"$WORK/oe" 2>&1
	rc=$?
}
tier miss
expect "cached tier, not cached: exit 0, one skip line naming make test-2025, no make error (exit $rc)" "$WORK/oe" \
	sh -c '[ $0 = 0 ] && grep -qx "make test: the mshare-2025 tier is skipped: its kernel is not in the kernel cache (make test-2025 builds it, then runs the tier)" "$1" &&
		! grep -q "Error\|\*\*\*\|not in the cache (" "$1" && grep -qx "tier runs: no" "$1" && [ "$(wc -l <"$1")" = 2 ]' "$rc" "$WORK/oe"
tier cached
expect "cached tier, cached: the labelled image line, the tier runs (exit $rc)" "$WORK/oe" \
	sh -c '[ $0 = 0 ] && grep -q "^kernel image: build/kernel-2025/bzImage\|^kernel image: build/kernel/bzImage" "$1" && grep -qx "tier runs: 1" "$1"' "$rc" "$WORK/oe"
tier error
expect "cached tier, another failure: its message and status said, the tier skipped (exit $rc)" "$WORK/oe" \
	sh -c '[ $0 = 0 ] && grep -qF "MSHARE_KERNEL_JOBS='\''x'\''" "$1" && grep -qF "copying its kernel from the cache failed (exit 1" "$1" &&
		grep -qx "tier runs: no" "$1"' "$rc" "$WORK/oe"
finish
