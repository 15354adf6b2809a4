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
# Usage: kernel/build.sh            build (or reuse) and print the image path
#        kernel/build.sh --clean    remove build/kernel (the cache stays)
#        kernel/build.sh --purge    also remove the whole cache directory
# Environment: MSHARE_KERNEL_CACHE  cache directory
#              MSHARE_KERNEL_JOBS   make -j value (default 2)
set -euo pipefail

die() { echo "kernel/build.sh: error: $*" >&2; exit 1; }
note() { echo "kernel/build.sh: $*" >&2; }

KERNEL_DIR=$(cd "$(dirname "$0")" && pwd)
REPO=$(dirname "$KERNEL_DIR")
OUT=$REPO/build/kernel
CACHE=${MSHARE_KERNEL_CACHE:-/var/cache/mshare-bench/kernel}
JOBS=${MSHARE_KERNEL_JOBS:-2}
TARBALL=/usr/src/linux-source-6.1.tar.xz
SRC_PKG=linux-source-6.1
TOPDIR=linux-source-6.1            # top directory inside the tarball
PATCHES=$KERNEL_DIR/patches
SERIES=$PATCHES/series
FRAGMENT=$KERNEL_DIR/config/mshare.config
KMAKE=(make -s ARCH=x86_64)

case "${1:-}" in
--clean) rm -rf "$OUT"; echo "removed $OUT"; exit 0 ;;
--purge) rm -rf "$OUT" "$CACHE"; echo "removed $OUT and $CACHE"; exit 0 ;;
"") ;;
*) die "unknown argument '$1' (expected --clean or --purge)" ;;
esac

[[ $JOBS =~ ^[1-9][0-9]*$ ]] || die "MSHARE_KERNEL_JOBS='$JOBS' is not a positive integer"
[[ -f $FRAGMENT ]] || die "config fragment $FRAGMENT is missing"

# ---- build dependencies (installed with apt only when missing) ----
need_pkgs=()
for p in $SRC_PKG bc flex bison libelf-dev libssl-dev ccache dwarves gcc make xz-utils patch; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || need_pkgs+=("$p")
done
if ((${#need_pkgs[@]})); then
	note "installing ${need_pkgs[*]}"
	apt-get install -y "${need_pkgs[@]}" >&2 || die "apt-get install ${need_pkgs[*]} failed"
fi
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
key=$( {
	echo "source $SRC_PKG $src_version $(stat -c %s "$TARBALL")"
	sha256sum "$FRAGMENT" "$0" | cut -d' ' -f1
	for p in "${series[@]}"; do echo "$p"; sha256sum <"$PATCHES/$p"; done
} | sha256sum | cut -c1-16)

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

if [[ -f $IMAGES/$key/bzImage && -f $IMAGES/$key/config ]]; then
	note "up to date (key $key, ${#series[@]} patches, cached in $IMAGES/$key)"
	publish
	exit 0
fi

mkdir -p "$CACHE" || die "cannot create cache directory $CACHE (set MSHARE_KERNEL_CACHE)"
exec 9>"$CACHE/lock"
flock 9
# Another build may have produced this key while we waited for the lock.
if [[ -f $IMAGES/$key/bzImage && -f $IMAGES/$key/config ]]; then
	publish
	exit 0
fi

t_start=$(date +%s)
PRISTINE=$CACHE/pristine/$TOPDIR
TREE=$CACHE/tree/$TOPDIR
STAGE=$CACHE/stage

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
[[ "$(cat "$PRISTINE/.mshare-source-version" 2>/dev/null)" == "$src_version" ]] || unpack "$CACHE/pristine"
[[ "$(cat "$TREE/.mshare-source-version" 2>/dev/null)" == "$src_version" ]] || unpack "$CACHE/tree"

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
cfg_key=$(cat "$FRAGMENT" | sha256sum | cut -c1-16)
if [[ "$(cat "$TREE/.mshare-config-key" 2>/dev/null)" != "$cfg_key" || ! -f $TREE/.config ]]; then
	note "configuring: tinyconfig + $(basename "$FRAGMENT")"
	(
		cd "$TREE"
		"${KMAKE[@]}" tinyconfig >/dev/null
		KCONFIG_CONFIG=.config scripts/kconfig/merge_config.sh -m -O . .config "$FRAGMENT" >/dev/null
		"${KMAKE[@]}" olddefconfig >/dev/null
	) || die "configuration failed"
	echo "$cfg_key" >"$TREE/.mshare-config-key"
fi

# Every option of the fragment must have kept its value; the first two are
# the ones that silently disable page-table sharing.
check_config() {
	local cfg=$TREE/.config bad=0 line name want got
	grep -qx 'CONFIG_X86_INTEL_MEMORY_PROTECTION_KEYS=y' "$cfg" ||
		{ echo "  CONFIG_X86_INTEL_MEMORY_PROTECTION_KEYS must be y (else VM_SHARED_PT is 0)" >&2; bad=1; }
	grep -qx 'CONFIG_ARCH_USES_HIGH_VMA_FLAGS=y' "$cfg" ||
		{ echo "  CONFIG_ARCH_USES_HIGH_VMA_FLAGS must be y (high VMA flag bits)" >&2; bad=1; }
	if grep -qx 'CONFIG_X86_5LEVEL=y' "$cfg"; then
		echo "  CONFIG_X86_5LEVEL must be off (else PGDIR_SIZE is 256 TiB under -cpu max)" >&2; bad=1
	fi
	while read -r line; do
		if [[ $line =~ ^(CONFIG_[A-Za-z0-9_]+)=(.*)$ ]]; then
			name=${BASH_REMATCH[1]} want=${BASH_REMATCH[2]}
		elif [[ $line =~ ^#\ (CONFIG_[A-Za-z0-9_]+)\ is\ not\ set$ ]]; then
			name=${BASH_REMATCH[1]} want=n
		else
			continue
		fi
		got=$(sed -n "s/^$name=//p" "$cfg")
		[[ -n $got ]] || got=n
		if [[ $got != "$want" ]]; then
			echo "  $name: fragment wants $want, olddefconfig gave $got" >&2
			bad=1
		fi
	done <"$FRAGMENT"
	return $bad
}
check_config || die "configuration in $TREE/.config does not match $FRAGMENT (see the lines above)"

# ---- build ----
export CCACHE_DIR=$CACHE/ccache CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}
# `uname -v` names the series and the cache key (source, fragment, this script
# and every patch), so each harness record says exactly which kernel it ran on.
export KBUILD_BUILD_TIMESTAMP="mshare-bench-${#series[@]}patches-$key" KBUILD_BUILD_USER=mshare \
	KBUILD_BUILD_HOST=bench KBUILD_BUILD_VERSION=1
note "building bzImage (-j$JOBS, ccache in $CCACHE_DIR)"
if ! (cd "$TREE" && "${KMAKE[@]}" -j"$JOBS" CC="ccache gcc" bzImage >"$TREE/.mshare-build.log" 2>&1); then
	grep -E -m 40 'error|Error' "$TREE/.mshare-build.log" >&2 || tail -n 40 "$TREE/.mshare-build.log" >&2
	die "kernel build failed; full log: $TREE/.mshare-build.log"
fi
grep -E 'warning:' "$TREE/.mshare-build.log" | grep -E 'mm/|mshare' >&2 || true

mkdir -p "$IMAGES/$key.tmp"
cp "$TREE/arch/x86/boot/bzImage" "$IMAGES/$key.tmp/bzImage"
cp "$TREE/.config" "$IMAGES/$key.tmp/config"
secs=$(($(date +%s) - t_start))
printf 'source %s %s\npatches %s\nbuild_seconds %s\njobs %s\nbuilt %s\n' "$SRC_PKG" "$src_version" \
	"${series[*]:-none}" "$secs" "$JOBS" "$(date -u +%FT%TZ)" >"$IMAGES/$key.tmp/info"
rm -rf "${IMAGES:?}/$key"
mv "$IMAGES/$key.tmp" "$IMAGES/$key"
# Keep the eight most recent images.
ls -1td "$IMAGES"/*/ 2>/dev/null | tail -n +9 | xargs -r rm -rf
note "built in ${secs}s (key $key)"
publish
