#!/bin/bash
# Build the mshare benchmark kernel: Debian's linux-source-6.1 + kernel/patches
# (in the order of kernel/patches/series) + kernel/config/mshare.config merged
# onto tinyconfig.  Leaves the image at build/kernel/bzImage and prints its path.
#
# The kernel tree, its objects and ccache live in a cache directory outside the
# repository (MSHARE_KERNEL_CACHE, default /var/cache/mshare-bench/kernel), so a
# fresh clone on the same machine reuses them.  Every finished image is kept
# under images/<key>/, where <key> hashes the source version, the series, the
# config fragment and this script: when nothing changed, `make kernel` only
# copies the image (seconds).  When something changed, only the files whose
# patched content differs are rewritten in the tree, so make rebuilds just
# what depends on them.
#
# Two flavours, each with its own build tree in the cache (so building one
# never forces a rebuild of the other) and one shared ccache:
#   normal  mshare.config                 -> build/kernel/bzImage,       $CACHE/tree
#   debug   mshare.config + debug.config  -> build/kernel-debug/bzImage, $CACHE/tree-debug
#           (KASAN, lockdep, DEBUG_VM, SLUB debug, PAGE_TABLE_CHECK, hung tasks)
#
# Usage: kernel/build.sh [--debug]          build (or reuse) and print the image path
#        kernel/build.sh [--debug] --clean  remove build/kernel[-debug] (the cache stays)
#        kernel/build.sh --purge            also remove the whole cache directory
# Environment: MSHARE_KERNEL_CACHE  cache directory
#              MSHARE_KERNEL_JOBS   make -j value (default 2)
#              MSHARE_KERNEL_FLAVOUR  normal or debug (--debug wins)
#              (make kernel DEBUG=1 or FLAVOUR=debug sets it)
#              MSHARE_KERNEL_PROGRESS  seconds between progress lines (default 30)
# >>> mshare-2025
#              MSHARE_KERNEL_CACHED_ONLY=1  only copy a cached image; exit 3 if none
# Opt-in third flavour (issue 17): the 2025 mshare series on linux-source-6.12
#   mshare-2025  config/mshare-2025.config + config/mshare-2025-memcg.config (memory
#                cgroups, swap, the virtio swap disk), patches-2025/ -> build/kernel-2025/bzImage,
#                $CACHE/tree-2025 (its own pristine source in $CACHE/pristine-2025)
#   (make kernel FLAVOUR=mshare-2025 or make kernel-2025)
#   mshare-2025-debug  the same (both fragments) with config/debug.config and config/mshare-2025-debug.config
#                on top -> build/kernel-2025-debug
#   (make kernel FLAVOUR=mshare-2025-debug or make kernel-2025-debug)
#   The series' version is v3 (2025-08-20); `uname -v` names it ("-2025v3-").
#   mshare-2025-v2  the v2 port (patches-2025-v2/, which made the Dec 3
#                reference results) -> build/kernel-2025-v2; it shares the
#                mshare-2025 tree and lock (switching rebuilds only what differs)
#   (make kernel FLAVOUR=mshare-2025-v2)
# The cache key of the normal and debug flavours hashes this script without the
# lines between the mshare-2025 markers, so adding this flavour changed neither.
# <<< mshare-2025
# >>> mshare-deb
# Opt-in flavour for a real machine (issue 28): mshare-deb, the normal flavour's
#   source and series (linux-source-6.1 + patches/) on x86_64_defconfig +
#   config/mshare-deb.config, built as Debian packages (make bindeb-pkg):
#   images/<key>/ holds the .debs, bzImage and config; build/kernel-deb/ gets
#   them. Its own tree $CACHE/tree-deb (the 6.1 pristine source shared); the
#   release (uname -r) is <version>-mshare-deb-<key>, the package
#   linux-image-<version>-mshare-deb-<key>.
#   (make kernel FLAVOUR=mshare-deb or make kernel-deb)
# Its code sits between mshare-deb markers: the keys of all the other
# flavours hash this script without those lines, so adding it changed none.
# <<< mshare-deb
# >>> mshare-counters
# Opt-in counters flavours (issue 42): config/mshare-counters.config (VM event
#   counters, DEBUG_TLBFLUSH's vmstat TLB counts, LOCK_STAT) on top of
#   mshare-counters       the normal flavour (6.1 + v1)  -> build/kernel-counters, $CACHE/tree-counters
#   mshare-2025-counters  the mshare-2025 flavour (6.12 + v3), + config/mshare-2025-counters.config
#                         (kprobe events) -> build/kernel-2025-counters,
#                         $CACHE/tree-2025-counters (the 6.12 pristine source shared)
#   (make kernel-counters, make kernel-2025-counters)
# Their code sits between mshare-counters markers: the keys of all the other
# flavours hash this script without those lines, so adding them changed none.
# <<< mshare-counters
set -euo pipefail

die() { echo "kernel/build.sh: error: $*" >&2; exit 1; }
note() { echo "kernel/build.sh: $*" >&2; }

KERNEL_DIR=$(cd "$(dirname "$0")" && pwd)
REPO=$(dirname "$KERNEL_DIR")
CACHE=${MSHARE_KERNEL_CACHE:-/var/cache/mshare-bench/kernel}
JOBS=${MSHARE_KERNEL_JOBS:-2}
TARBALL=/usr/src/linux-source-6.1.tar.xz
SRC_PKG=linux-source-6.1
TOPDIR=linux-source-6.1            # top directory inside the tarball
PATCHES=$KERNEL_DIR/patches
SERIES=$PATCHES/series
KMAKE=(make -s ARCH=x86_64)
PROGRESS=${MSHARE_KERNEL_PROGRESS:-30}

flavour=${MSHARE_KERNEL_FLAVOUR:-}
action=build
for arg in "$@"; do
	case "$arg" in
	--debug) flavour=debug ;;
	--clean) action=clean ;;
	--purge) action=purge ;;
	-h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown argument '$arg' (expected --debug, --clean or --purge)" ;;
	esac
done
case "${flavour:-normal}" in
# >>> mshare-2025
mshare-2025)
	OUT=$REPO/build/kernel-2025
	FRAGMENTS=("$KERNEL_DIR/config/mshare-2025.config" "$KERNEL_DIR/config/mshare-2025-memcg.config")
	TARBALL=/usr/src/linux-source-6.12.tar.xz SRC_PKG=linux-source-6.12 TOPDIR=linux-source-6.12
	PATCHES=$KERNEL_DIR/patches-2025 SERIES=$KERNEL_DIR/patches-2025/series
	TREE_BASE=$CACHE/tree-2025 LOCK=$CACHE/lock-2025 STAGE=$CACHE/stage-2025 tag=-2025v3 ;;
mshare-2025-v2)
	OUT=$REPO/build/kernel-2025-v2
	FRAGMENTS=("$KERNEL_DIR/config/mshare-2025.config")
	TARBALL=/usr/src/linux-source-6.12.tar.xz SRC_PKG=linux-source-6.12 TOPDIR=linux-source-6.12
	PATCHES=$KERNEL_DIR/patches-2025-v2 SERIES=$KERNEL_DIR/patches-2025-v2/series
	TREE_BASE=$CACHE/tree-2025 LOCK=$CACHE/lock-2025 STAGE=$CACHE/stage-2025 tag=-2025 ;;
mshare-2025-debug)
	# the 2025 series under the debug options of config/debug.config (KASAN,
	# lockdep, DEBUG_VM, ...); its own tree, the 6.12 pristine source shared
	OUT=$REPO/build/kernel-2025-debug
	FRAGMENTS=("$KERNEL_DIR/config/mshare-2025.config" "$KERNEL_DIR/config/mshare-2025-memcg.config"
		"$KERNEL_DIR/config/debug.config" "$KERNEL_DIR/config/mshare-2025-debug.config")
	TARBALL=/usr/src/linux-source-6.12.tar.xz SRC_PKG=linux-source-6.12 TOPDIR=linux-source-6.12
	PATCHES=$KERNEL_DIR/patches-2025 SERIES=$KERNEL_DIR/patches-2025/series
	TREE_BASE=$CACHE/tree-2025-debug LOCK=$CACHE/lock-2025-debug STAGE=$CACHE/stage-2025-debug tag=-2025v3-debug ;;
# <<< mshare-2025
# >>> mshare-deb
mshare-deb)
	# no tag in uname -v: "#1 SMP PREEMPT_DYNAMIC mshare-bench-29patches-<key>"
	# is 62 of its 64 characters; uname -r names the flavour and the key
	OUT=$REPO/build/kernel-deb
	FRAGMENTS=("$KERNEL_DIR/config/mshare-deb.config")
	TREE_BASE=$CACHE/tree-deb LOCK=$CACHE/lock-deb STAGE=$CACHE/stage-deb tag= ;;
# <<< mshare-deb
# >>> mshare-counters
mshare-counters)
	OUT=$REPO/build/kernel-counters
	FRAGMENTS=("$KERNEL_DIR/config/mshare.config" "$KERNEL_DIR/config/mshare-counters.config")
	TREE_BASE=$CACHE/tree-counters LOCK=$CACHE/lock-counters STAGE=$CACHE/stage-counters tag=-counters ;;
mshare-2025-counters)
	OUT=$REPO/build/kernel-2025-counters
	FRAGMENTS=("$KERNEL_DIR/config/mshare-2025.config" "$KERNEL_DIR/config/mshare-2025-memcg.config"
		"$KERNEL_DIR/config/mshare-counters.config" "$KERNEL_DIR/config/mshare-2025-counters.config")
	TARBALL=/usr/src/linux-source-6.12.tar.xz SRC_PKG=linux-source-6.12 TOPDIR=linux-source-6.12
	PATCHES=$KERNEL_DIR/patches-2025 SERIES=$KERNEL_DIR/patches-2025/series
	TREE_BASE=$CACHE/tree-2025-counters LOCK=$CACHE/lock-2025-counters STAGE=$CACHE/stage-2025-counters
	tag=-2025v3-counters ;;
# <<< mshare-counters
normal)
	flavour=normal
	OUT=$REPO/build/kernel
	FRAGMENTS=("$KERNEL_DIR/config/mshare.config")
	TREE_BASE=$CACHE/tree LOCK=$CACHE/lock STAGE=$CACHE/stage tag= ;;
debug)
	OUT=$REPO/build/kernel-debug
	FRAGMENTS=("$KERNEL_DIR/config/mshare.config" "$KERNEL_DIR/config/debug.config")
	TREE_BASE=$CACHE/tree-debug LOCK=$CACHE/lock-debug STAGE=$CACHE/stage-debug tag=-debug ;;
*) die "MSHARE_KERNEL_FLAVOUR='$flavour' (expected normal or debug)" ;;
esac
case "$action" in
clean) rm -rf "$OUT"; echo "removed $OUT"; exit 0 ;;
purge) rm -rf "$REPO/build/kernel" "$REPO/build/kernel-debug" "$CACHE"
	echo "removed $REPO/build/kernel, $REPO/build/kernel-debug and $CACHE"; exit 0 ;;
esac

[[ $JOBS =~ ^[1-9][0-9]*$ ]] || die "MSHARE_KERNEL_JOBS='$JOBS' is not a positive integer"
[[ $PROGRESS =~ ^[1-9][0-9]*$ ]] || die "MSHARE_KERNEL_PROGRESS='$PROGRESS' is not a positive number of seconds"
for f in "${FRAGMENTS[@]}"; do
	[[ -f $f ]] || die "config fragment $f is missing"
done

# ---- build dependencies (installed with apt only when missing) ----
need_pkgs=()
for p in $SRC_PKG bc flex bison libelf-dev libssl-dev ccache dwarves gcc make xz-utils patch; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || need_pkgs+=("$p")
done
if ((${#need_pkgs[@]})); then
	# Another apt/dpkg (an other clone's build, unattended-upgrades) may hold
	# the dpkg lock: wait for it instead of failing at once.
	note "installing ${need_pkgs[*]} (waiting up to 10 min if another apt/dpkg holds the dpkg lock)"
	apt-get -o DPkg::Lock::Timeout=600 install -y "${need_pkgs[@]}" >&2 ||
		die "apt-get install ${need_pkgs[*]} failed"
fi
# >>> mshare-deb
# mshare-deb: what make bindeb-pkg runs (dpkg-buildpackage, fakeroot) and its
# debian/control's Build-Depends (bc, rsync, kmod, cpio, bison, flex,
# libelf-dev, libssl-dev).
if [[ $flavour == mshare-deb ]]; then
	need_pkgs=()
	for p in dpkg-dev fakeroot rsync kmod cpio; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || need_pkgs+=("$p")
	done
	if ((${#need_pkgs[@]})); then
		note "installing ${need_pkgs[*]} (waiting up to 10 min if another apt/dpkg holds the dpkg lock)"
		apt-get -o DPkg::Lock::Timeout=600 install -y "${need_pkgs[@]}" >&2 ||
			die "apt-get install ${need_pkgs[*]} failed"
	fi
fi
# <<< mshare-deb
[[ -f $TARBALL ]] || die "$TARBALL is missing after installing $SRC_PKG"

# ---- the patch series, in order ----
series=()
if [[ -f $SERIES ]]; then
	while read -r line; do
		line=${line%%#*}
		line=${line//[[:space:]]/}
		[[ -n $line ]] || continue
		[[ -f $PATCHES/$line ]] || die "patch '$line' named in $SERIES does not exist"
		series+=("$line")
	done <"$SERIES"
fi

# ---- cache key ----
src_version=$(dpkg-query -W -f='${Version}' $SRC_PKG)
# >>> mshare-2025
# normal and debug: hash this script as it is without the mshare-2025 blocks
# ($0 is what the key line below hashes).
if [[ $flavour != mshare-2025* ]]; then
	script_for_key=$(mktemp)
	sed '/^# >>> mshare-2025$/,/^# <<< mshare-2025$/d' "$0" >"$script_for_key"
	BASH_ARGV0=$script_for_key
fi
# <<< mshare-2025
# >>> mshare-deb
# The other flavours' keys hash this script without the mshare-deb blocks;
# mshare-deb's hashes it without the mshare-2025 blocks (as normal's did).
case $flavour in
mshare-deb) ;;
mshare-2025*)
	script_for_key=$(mktemp)
	sed '/^# >>> mshare-deb$/,/^# <<< mshare-deb$/d' "$0" >"$script_for_key"
	BASH_ARGV0=$script_for_key ;;
*) sed -i '/^# >>> mshare-deb$/,/^# <<< mshare-deb$/d' "$script_for_key" ;;
esac
# <<< mshare-deb
# >>> mshare-counters
# Every flavour but the counters ones hashes this script without the
# mshare-counters blocks; theirs keep them.
case $flavour in
*-counters) ;;
*) sed -i '/^# >>> mshare-counters$/,/^# <<< mshare-counters$/d' "$script_for_key" ;;
esac
# <<< mshare-counters
key=$( {
	echo "source $SRC_PKG $src_version $(stat -c %s "$TARBALL")"
	sha256sum "${FRAGMENTS[@]}" "$0" | cut -d' ' -f1
	for p in "${series[@]}"; do echo "$p"; sha256sum <"$PATCHES/$p"; done
} | sha256sum | cut -c1-16)

# >>> mshare-2025
if [[ $flavour != mshare-2025* ]]; then
	BASH_ARGV0=$KERNEL_DIR/build.sh
	rm -f "$script_for_key"
fi
# <<< mshare-2025
# >>> mshare-deb
if [[ $flavour == mshare-2025* ]]; then
	BASH_ARGV0=$KERNEL_DIR/build.sh
	rm -f "$script_for_key"
fi
# <<< mshare-deb
IMAGES=$CACHE/images
publish() {
	mkdir -p "$OUT"
	local f
	for f in bzImage config info; do
		if ! cmp -s "$IMAGES/$key/$f" "$OUT/$f"; then
			cp "$IMAGES/$key/$f" "$OUT/.$f.tmp" && mv "$OUT/.$f.tmp" "$OUT/$f"
		fi
	done
	echo "$key" >"$OUT/key"
	echo "$OUT/bzImage"
}
# >>> mshare-deb
# mshare-deb: the packages too (the old ones of an other key removed), named
# before the image line.
if [[ $flavour == mshare-deb ]]; then
	publish() {
		mkdir -p "$OUT"
		local f
		for f in "$OUT"/*.deb; do
			[[ -e $f ]] || continue
			[[ -f $IMAGES/$key/$(basename "$f") ]] || rm -f "$f"
		done
		for f in bzImage config info "$IMAGES/$key"/*.deb; do
			f=$(basename "$f")
			if ! cmp -s "$IMAGES/$key/$f" "$OUT/$f"; then
				cp "$IMAGES/$key/$f" "$OUT/.$f.tmp" && mv "$OUT/.$f.tmp" "$OUT/$f"
			fi
		done
		echo "$key" >"$OUT/key"
		for f in "$OUT"/*.deb; do echo "$f"; done
		echo "$OUT/bzImage"
	}
fi
# <<< mshare-deb

if [[ -f $IMAGES/$key/bzImage && -f $IMAGES/$key/config ]]; then
	note "up to date ($flavour flavour, key $key, ${#series[@]} patches, cached in $IMAGES/$key)"
	publish
	exit 0
fi
# >>> mshare-2025
# MSHARE_KERNEL_CACHED_ONLY=1: publish the image if the cache has it, else
# exit 3 without building (make test runs the mshare-2025 tier only when its
# kernel is cached, so that a cold CI run stays within its time).
if [[ ${MSHARE_KERNEL_CACHED_ONLY:-0} == 1 ]]; then
	note "not in the cache ($flavour flavour, key $key): not built (MSHARE_KERNEL_CACHED_ONLY=1)"
	exit 3
fi
# <<< mshare-2025

mkdir -p "$CACHE" || die "cannot create cache directory $CACHE (set MSHARE_KERNEL_CACHE)"
# One lock per flavour (its tree and staging area): the normal and the debug
# build may run at the same time; ccache and images/ are safe to share.
exec 9>"$LOCK"
if ! flock -n 9; then
	note "waiting for another $flavour kernel build (lock $LOCK)"
	flock 9
fi
# Another build may have produced this key while we waited for the lock.
if [[ -f $IMAGES/$key/bzImage && -f $IMAGES/$key/config ]]; then
	publish
	exit 0
fi

t_start=$(date +%s)
PRISTINE=$CACHE/pristine/$TOPDIR
TREE=$TREE_BASE/$TOPDIR

# ---- pristine source and the build tree (unpacked once per source version) ----
unpack() {   # unpack <dir>
	local dir=$1
	rm -rf "$dir" "$dir.tmp"
	mkdir -p "$dir.tmp"
	note "unpacking $TARBALL into $dir"
	tar -xf "$TARBALL" -C "$dir.tmp"
	[[ -d $dir.tmp/$TOPDIR ]] || die "$TARBALL has no $TOPDIR/ directory"
	echo "$src_version" >"$dir.tmp/$TOPDIR/.mshare-source-version"
	mv "$dir.tmp" "$dir"
}
# >>> mshare-2025
# 6.12 has its own pristine tree: unpack() of $CACHE/pristine would remove 6.1's.
if [[ $flavour == mshare-2025* ]]; then
	PRISTINE=$CACHE/pristine-2025/$TOPDIR
	(
		flock 8
		[[ "$(cat "$PRISTINE/.mshare-source-version" 2>/dev/null)" == "$src_version" ]] || unpack "$CACHE/pristine-2025"
	) 8>"$CACHE/pristine-2025.lock"
fi
# <<< mshare-2025
# The pristine tree is shared by both flavours: its own lock, held briefly.
(
	flock 8
	[[ "$(cat "$PRISTINE/.mshare-source-version" 2>/dev/null)" == "$src_version" ]] || unpack "$CACHE/pristine"
) 8>"$CACHE/pristine.lock"
[[ "$(cat "$TREE/.mshare-source-version" 2>/dev/null)" == "$src_version" ]] || unpack "$TREE_BASE"

# ---- apply the series ----
# The series is applied to a staging copy of just the files it touches, taken
# from the pristine tree; then only files whose content differs are copied
# into the build tree, and files a previous series touched but this one does
# not are restored.  Unchanged files keep their mtimes, so make stays
# incremental.
APPLIED_LIST=$TREE/.mshare-applied-files
rm -rf "$STAGE"
mkdir -p "$STAGE"
{
	for p in "${series[@]}"; do
		sed -n -e 's#^--- a/\([^[:space:]]*\).*#\1#p' -e 's#^+++ b/\([^[:space:]]*\).*#\1#p' "$PATCHES/$p"
	done
	if [[ -f $APPLIED_LIST ]]; then cat "$APPLIED_LIST"; fi
} | sort -u >"$STAGE/.files"
while read -r f; do
	if [[ -f $PRISTINE/$f ]]; then
		mkdir -p "$STAGE/$(dirname "$f")"
		cp -p "$PRISTINE/$f" "$STAGE/$f"
	fi
done <"$STAGE/.files"
for p in "${series[@]}"; do
	if ! out=$(patch -p1 -d "$STAGE" --forward --batch --fuzz=0 --no-backup-if-mismatch -r - <"$PATCHES/$p" 2>&1); then
		echo "$out" >&2
		die "patch $p does not apply to $SRC_PKG $src_version (applied so far: the patches before it in $SERIES)"
	fi
done
# Record the union first, so an interrupted sync is repaired next time.
cp "$STAGE/.files" "$APPLIED_LIST"
changed=0
while read -r f; do
	if [[ -f $STAGE/$f ]]; then
		if ! cmp -s "$STAGE/$f" "$TREE/$f"; then
			mkdir -p "$TREE/$(dirname "$f")"
			cp "$STAGE/$f" "$TREE/$f"
			changed=$((changed + 1))
		fi
	elif [[ -e $TREE/$f ]]; then
		rm -f "$TREE/$f"       # created by an earlier series, not by this one
		changed=$((changed + 1))
	fi
done <"$STAGE/.files"
note "series: ${#series[@]} patches applied, $changed files changed in the build tree"

# ---- configuration ----
cfg_key=$(cat "${FRAGMENTS[@]}" | sha256sum | cut -c1-16)
# >>> mshare-deb
# mshare-deb: x86_64_defconfig, not tinyconfig, under the fragment (the
# check below then skips the tinyconfig step).
if [[ $flavour == mshare-deb ]] &&
	[[ "$(cat "$TREE/.mshare-config-key" 2>/dev/null)" != "deb-$cfg_key" || ! -f $TREE/.config ]]; then
	note "configuring: x86_64_defconfig + $(for f in "${FRAGMENTS[@]}"; do printf '%s ' "$(basename "$f")"; done)"
	(
		cd "$TREE"
		"${KMAKE[@]}" x86_64_defconfig >/dev/null
		KCONFIG_CONFIG=.config scripts/kconfig/merge_config.sh -m -O . .config "${FRAGMENTS[@]}" >/dev/null
		"${KMAKE[@]}" olddefconfig >/dev/null
	) || die "configuration failed"
	echo "deb-$cfg_key" >"$TREE/.mshare-config-key"
fi
[[ $flavour == mshare-deb ]] && cfg_key=deb-$cfg_key
# <<< mshare-deb
if [[ "$(cat "$TREE/.mshare-config-key" 2>/dev/null)" != "$cfg_key" || ! -f $TREE/.config ]]; then
	note "configuring: tinyconfig + $(for f in "${FRAGMENTS[@]}"; do printf '%s ' "$(basename "$f")"; done)"
	(
		cd "$TREE"
		"${KMAKE[@]}" tinyconfig >/dev/null
		KCONFIG_CONFIG=.config scripts/kconfig/merge_config.sh -m -O . .config "${FRAGMENTS[@]}" >/dev/null
		"${KMAKE[@]}" olddefconfig >/dev/null
	) || die "configuration failed"
	echo "$cfg_key" >"$TREE/.mshare-config-key"
fi

# Every option of the fragments must have kept its value (for the debug
# flavour, of both: tinyconfig switches much off and olddefconfig silently
# drops an option whose dependencies are missing); the first two are the ones
# that silently disable page-table sharing.
check_config() {
	local cfg=$TREE/.config bad=0 line name want got frag
	local -A wants=() from=()
	grep -qx 'CONFIG_X86_INTEL_MEMORY_PROTECTION_KEYS=y' "$cfg" ||
		{ echo "  CONFIG_X86_INTEL_MEMORY_PROTECTION_KEYS must be y (else VM_SHARED_PT is 0)" >&2; bad=1; }
	grep -qx 'CONFIG_ARCH_USES_HIGH_VMA_FLAGS=y' "$cfg" ||
		{ echo "  CONFIG_ARCH_USES_HIGH_VMA_FLAGS must be y (high VMA flag bits)" >&2; bad=1; }
	if grep -qx 'CONFIG_X86_5LEVEL=y' "$cfg"; then
		echo "  CONFIG_X86_5LEVEL must be off (else PGDIR_SIZE is 256 TiB under -cpu max)" >&2; bad=1
	fi
	# A later fragment overrides an earlier one, as merge_config.sh does.
	for frag in "${FRAGMENTS[@]}"; do
		while read -r line; do
			if [[ $line =~ ^(CONFIG_[A-Za-z0-9_]+)=(.*)$ ]]; then
				name=${BASH_REMATCH[1]} want=${BASH_REMATCH[2]}
			elif [[ $line =~ ^#\ (CONFIG_[A-Za-z0-9_]+)\ is\ not\ set$ ]]; then
				name=${BASH_REMATCH[1]} want=n
			else
				continue
			fi
			wants[$name]=$want from[$name]=$(basename "$frag")
		done <"$frag"
	done
	for name in "${!wants[@]}"; do
		want=${wants[$name]}
		got=$(sed -n "s/^$name=//p" "$cfg")
		[[ -n $got ]] || got=n
		if [[ $got != "$want" ]]; then
			echo "  $name: ${from[$name]} wants $want, olddefconfig gave $got" >&2
			bad=1
		fi
	done
	return $bad
}
check_config || die "configuration in $TREE/.config does not match ${FRAGMENTS[*]} (see the lines above)"
# >>> mshare-deb
# mshare-deb: make bindeb-pkg (linux-image, linux-headers, linux-libc-dev),
# then the .debs, bzImage and config into images/<key>/.
if [[ $flavour == mshare-deb ]]; then
	export CCACHE_DIR=$CACHE/ccache CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}
	# CC= on make's command line does not reach the make that debian/rules
	# runs: ccache's gcc link comes first in PATH instead.
	[[ -x /usr/lib/ccache/gcc ]] || die "/usr/lib/ccache/gcc is missing (package ccache)"
	export PATH=/usr/lib/ccache:$PATH
	kver=$(cd "$TREE" && make -s kernelversion) || die "make kernelversion failed in $TREE"
	# uname -r: <version>-mshare-deb-<key>; the package version <version>-1
	# (bindeb-pkg makes its revision, 1, the #1 of uname -v).
	export LOCALVERSION=-mshare-deb-$key KDEB_PKGVERSION=$kver-1 KDEB_SOURCENAME=linux-mshare-deb \
		KBUILD_BUILD_TIMESTAMP="mshare-bench-${#series[@]}patches$tag-$key" KBUILD_BUILD_USER=mshare \
		KBUILD_BUILD_HOST=bench
	BUILD_LOG=$TREE/.mshare-build.log
	CC_TOTAL_FILE=$TREE_BASE/.mshare-cc-total
	cc_total=$(cat "$CC_TOTAL_FILE" 2>/dev/null || true)
	[[ $cc_total =~ ^[0-9]+$ ]] || cc_total=
	rm -f "$TREE_BASE"/*.deb "$TREE_BASE"/*.buildinfo "$TREE_BASE"/*.changes
	note "building Debian packages ($flavour flavour, make bindeb-pkg, -j$JOBS, ccache in $CCACHE_DIR, log $BUILD_LOG)"
	(cd "$TREE" && exec make ARCH=x86_64 -j"$JOBS" DPKG_FLAGS="-j$JOBS" bindeb-pkg) >"$BUILD_LOG" 2>&1 &
	make_pid=$!
	trap 'kill -- "$make_pid" 2>/dev/null; exit 130' INT TERM
	b_start=$(date +%s)
	while true; do
		for ((i = 0; i < PROGRESS; i++)); do
			kill -0 "$make_pid" 2>/dev/null || break 2
			sleep 1
		done
		kill -0 "$make_pid" 2>/dev/null || break
		ncc=$(grep -cE '^  (CC|AS) ' "$BUILD_LOG" || true)
		el=$(($(date +%s) - b_start))
		msg="building ($flavour): $((el / 60))m$(printf %02d $((el % 60)))s elapsed, $ncc files compiled"
		if [[ -n $cc_total ]]; then
			msg+=" (a full build of this flavour compiles about $cc_total)"
		else
			msg+=" (total unknown: first build of this flavour)"
		fi
		note "$msg; last: $(grep -E '^  [A-Z]+ |^dpkg-deb: ' "$BUILD_LOG" | tail -n 1 | sed 's/^ *//; s/  */ /g')"
	done
	build_rc=0
	wait "$make_pid" || build_rc=$?
	trap - INT TERM
	if [[ $build_rc != 0 ]]; then
		grep -E -m 40 'error|Error' "$BUILD_LOG" >&2 || tail -n 40 "$BUILD_LOG" >&2
		die "make bindeb-pkg failed; full log: $BUILD_LOG"
	fi
	grep -E 'warning:' "$BUILD_LOG" | grep -E 'mm/|mshare' >&2 || true
	ncc=$(grep -cE '^  (CC|AS) ' "$BUILD_LOG" || true)
	if [[ -z $cc_total || $ncc -gt $cc_total ]]; then echo "$ncc" >"$CC_TOTAL_FILE"; fi
	debs=("$TREE_BASE"/linux-image-"$kver$LOCALVERSION"_*.deb)
	[[ -f ${debs[0]} ]] || die "make bindeb-pkg left no linux-image-$kver${LOCALVERSION}_*.deb in $TREE_BASE"
	rm -rf "$IMAGES/$key.tmp"
	mkdir -p "$IMAGES/$key.tmp"
	cp "$TREE_BASE"/*.deb "$IMAGES/$key.tmp/"
	cp "$TREE/arch/x86/boot/bzImage" "$IMAGES/$key.tmp/bzImage"
	cp "$TREE/.config" "$IMAGES/$key.tmp/config"
	secs=$(($(date +%s) - t_start))
	printf 'source %s %s\nflavour %s\nfragments %s\nbase x86_64_defconfig\nrelease %s\npackages %s\npatches %s\nbuild_seconds %s\ncompiled_files %s\njobs %s\nbuilt %s\n' \
		"$SRC_PKG" "$src_version" "$flavour" \
		"$(for f in "${FRAGMENTS[@]}"; do printf '%s ' "$(basename "$f")"; done)" \
		"$kver$LOCALVERSION" "$(cd "$IMAGES/$key.tmp" && echo *.deb)" \
		"${series[*]:-none}" "$secs" "$ncc" "$JOBS" "$(date -u +%FT%TZ)" >"$IMAGES/$key.tmp/info"
	rm -rf "${IMAGES:?}/$key"
	mv "$IMAGES/$key.tmp" "$IMAGES/$key"
	# Keep the two most recent images of this flavour (each holds ~ the packages).
	n=0
	for d in $(ls -1td "$IMAGES"/*/ 2>/dev/null); do
		d=${d%/}
		[[ $d == *.tmp ]] && continue
		[[ "$(sed -n 's/^flavour //p' "$d/info" 2>/dev/null)" == "$flavour" ]] || continue
		n=$((n + 1))
		[[ $n -le 2 ]] || rm -rf "$d"
	done
	note "built in ${secs}s ($flavour flavour, key $key, $ncc files compiled)"
	publish
	exit 0
fi
# <<< mshare-deb

# ---- build ----
export CCACHE_DIR=$CACHE/ccache CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}
# `uname -v` names the series, the flavour and the cache key (source,
# fragments, this script and every patch), so each harness record says exactly
# which kernel it ran on.
export KBUILD_BUILD_TIMESTAMP="mshare-bench-${#series[@]}patches$tag-$key" KBUILD_BUILD_USER=mshare \
	KBUILD_BUILD_HOST=bench KBUILD_BUILD_VERSION=1
# The number of compile steps of the last full build of this flavour, for an
# approximate total in the progress lines.
CC_TOTAL_FILE=$TREE_BASE/.mshare-cc-total
cc_total=$(cat "$CC_TOTAL_FILE" 2>/dev/null || true)
[[ $cc_total =~ ^[0-9]+$ ]] || cc_total=
note "building bzImage ($flavour flavour, -j$JOBS, ccache in $CCACHE_DIR, log $TREE/.mshare-build.log)"
BUILD_LOG=$TREE/.mshare-build.log
# Not -s: kbuild's "  CC      mm/mshare.o" lines go to the log and are counted
# for the progress lines (a cold debug build takes many minutes).
(cd "$TREE" && exec make ARCH=x86_64 -j"$JOBS" CC="ccache gcc" bzImage) >"$BUILD_LOG" 2>&1 &
make_pid=$!
# Do not leave make running when this script is interrupted.
trap 'kill -- "$make_pid" 2>/dev/null; exit 130' INT TERM
b_start=$(date +%s)
while true; do
	for ((i = 0; i < PROGRESS; i++)); do
		kill -0 "$make_pid" 2>/dev/null || break 2
		sleep 1
	done
	kill -0 "$make_pid" 2>/dev/null || break
	ncc=$(grep -cE '^  (CC|AS) ' "$BUILD_LOG" || true)
	el=$(($(date +%s) - b_start))
	msg="building ($flavour): $((el / 60))m$(printf %02d $((el % 60)))s elapsed, $ncc files compiled"
	if [[ -n $cc_total ]]; then
		msg+=" (a full build of this flavour compiles about $cc_total)"
	else
		msg+=" (total unknown: first build of this flavour)"
	fi
	note "$msg; last: $(grep -E '^  [A-Z]+ ' "$BUILD_LOG" | tail -n 1 | sed 's/^ *//; s/  */ /g')"
done
build_rc=0
wait "$make_pid" || build_rc=$?
trap - INT TERM
if [[ $build_rc != 0 ]]; then
	grep -E -m 40 'error|Error' "$BUILD_LOG" >&2 || tail -n 40 "$BUILD_LOG" >&2
	die "kernel build failed; full log: $BUILD_LOG"
fi
grep -E 'warning:' "$BUILD_LOG" | grep -E 'mm/|mshare' >&2 || true
ncc=$(grep -cE '^  (CC|AS) ' "$BUILD_LOG" || true)
# Remember the largest count as the flavour's full-build size.
if [[ -z $cc_total || $ncc -gt $cc_total ]]; then echo "$ncc" >"$CC_TOTAL_FILE"; fi

mkdir -p "$IMAGES/$key.tmp"
cp "$TREE/arch/x86/boot/bzImage" "$IMAGES/$key.tmp/bzImage"
cp "$TREE/.config" "$IMAGES/$key.tmp/config"
secs=$(($(date +%s) - t_start))
printf 'source %s %s\nflavour %s\nfragments %s\npatches %s\nbuild_seconds %s\ncompiled_files %s\njobs %s\nbuilt %s\n' \
	"$SRC_PKG" "$src_version" "$flavour" \
	"$(for f in "${FRAGMENTS[@]}"; do printf '%s ' "$(basename "$f")"; done)" \
	"${series[*]:-none}" "$secs" "$ncc" "$JOBS" "$(date -u +%FT%TZ)" >"$IMAGES/$key.tmp/info"
rm -rf "${IMAGES:?}/$key"
mv "$IMAGES/$key.tmp" "$IMAGES/$key"
# Keep the eight most recent images of this flavour (an image without a
# flavour line was built by the single-flavour script: normal).
n=0
for d in $(ls -1td "$IMAGES"/*/ 2>/dev/null); do
	d=${d%/}
	[[ $d == *.tmp ]] && continue
	f=$(sed -n 's/^flavour //p' "$d/info" 2>/dev/null)
	[[ ${f:-normal} == "$flavour" ]] || continue
	n=$((n + 1))
	[[ $n -le 8 ]] || rm -rf "$d"
done
note "built in ${secs}s ($flavour flavour, key $key, $ncc files compiled)"
publish
