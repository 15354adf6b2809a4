#!/bin/sh
# kernel/quiet-build.sh [ARG...] - kernel/build.sh as `make kernel` and
# `make bench` run it: quiet. Same arguments and environment as
# kernel/build.sh (--clean, --purge and --help go straight to it).
#
# Everything kernel/build.sh prints goes to build/logs/kernel-FLAVOUR.log
# (apt's and dpkg's progress, merge_config's override notes, patch's output);
# on the terminal, one line per step from its "kernel/build.sh: ..." notes,
# each ended with how long it took, its progress lines while it compiles,
# the compiler warnings it passes on (mm/ and mshare files), and at the end a
# labelled image line:
#   kernel image: build/kernel/bzImage (patched mshare kernel, normal flavour,
#   build key 7f529c9f412d4afe; copied from the kernel cache)
# On failure: the log's last 30 lines and its path, and kernel/build.sh's
# exit status (3 with MSHARE_KERNEL_CACHED_ONLY=1 when the image is not cached).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../scripts/lib/step.sh"
flavour=${MSHARE_KERNEL_FLAVOUR:-normal}
for a in "$@"; do
	case "$a" in
	--debug) flavour=debug ;;
	--clean|--purge|-h|--help) exec "$here/build.sh" "$@" ;;
	esac
done
case "$flavour" in
''|*/*|.*) echo "kernel/quiet-build.sh: MSHARE_KERNEL_FLAVOUR='$flavour' is not a flavour name" >&2; exit 2 ;;
esac
log=$(step_log "kernel-$flavour") || exit 1
: >"$log"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/quiet-build.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

# relay: reads kernel/build.sh's stderr; a step line stays open until the
# next line comes, which ends it with the step's time.
relay() {
	open=0 t=$(date +%s)
	while IFS= read -r line; do
		case "$line" in
		"kernel/build.sh: up to date "*) continue ;;	# the image line says "copied from the kernel cache"
		"kernel/build.sh: building ("*) kind=progress ;;
		"kernel/build.sh: not in the cache "*|"kernel/build.sh: built in "*|"kernel/build.sh: error: "*|\
		"kernel/build.sh: series: "*) kind=note ;;	# results, not the start of a step
		"kernel/build.sh: "*) kind=step ;;
		.config:*) continue ;;	# kconfig's override notes: build.sh checks every fragment's value
		# the compiler's warnings build.sh passes on (its filter: mm/ or mshare);
		# its config check's lines
		*warning:*mm/*|*mm/*warning:*|*warning:*mshare*|*mshare*warning:*|"  CONFIG_"*) kind=line ;;
		*) continue ;;
		esac
		now=$(date +%s)
		if [ "$open" = 1 ]; then
			if [ "$kind" = progress ]; then echo >&2; else echo " done in $((now - t)) s" >&2; fi
		fi
		t=$now open=0
		line=${line#kernel/build.sh: }
		line=${line#"building ($flavour): "}
		case "$kind" in
		step) printf 'kernel (%s): %s ...' "$flavour" "$line" >&2; open=1 ;;
		progress|note) echo "kernel ($flavour): $line" >&2 ;;
		line) echo "$line" >&2 ;;
		esac
	done
	if [ "$open" = 1 ]; then
		if [ "$(cat "$tmp/rc")" = 0 ]; then echo " done in $(($(date +%s) - t)) s" >&2; else echo " failed" >&2; fi
	fi
}

{ "$here/build.sh" "$@" 2>&1 >"$tmp/out"; echo $? >"$tmp/rc"; } | tee -a "$log" | relay
rc=$(cat "$tmp/rc")
cat "$tmp/out" >>"$log"
if [ "$rc" = 3 ] && [ "${MSHARE_KERNEL_CACHED_ONLY:-0}" = 1 ]; then
	exit 3	# the "not in the cache" line was relayed
elif [ "$rc" != 0 ]; then
	echo "kernel ($flavour): kernel/build.sh failed (exit $rc)" >&2
	step_fail "$log"
	exit "$rc"
fi
image=$(tail -n 1 "$tmp/out")
key=$(cat "$(dirname "$image")/key" 2>/dev/null)
secs=$(sed -n 's/^kernel\/build\.sh: built in \([0-9]*\)s .*/\1/p' "$log")
# mshare-deb: build.sh names the packages before the image.
if [ "$flavour" = mshare-deb ]; then
	grep '\.deb$' "$tmp/out" | while read -r deb; do
		echo "kernel package: $(step_show "$deb") ($(($(stat -c %s "$deb") / 1048576)) MiB)"
	done
fi
echo "kernel image: $(step_show "$image") (patched mshare kernel, $flavour flavour, build key ${key:-unknown};" \
	"$(if [ -n "$secs" ]; then echo "built in $secs s"; else echo "copied from the kernel cache"; fi))"
