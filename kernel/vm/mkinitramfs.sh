#!/bin/sh
# Build the guest initramfs (an uncompressed newc cpio archive, which every
# kernel with BLK_DEV_INITRD unpacks without needing a decompressor).
#
#   kernel/vm/mkinitramfs.sh OUTPUT.cpio [GUEST_DIR] [BENCH_BINARY] [EXTRA_SCRIPT]
#
# Contents: busybox (static) with its applets as links, ndctl/daxctl and
# mkfs.ext4 with the shared libraries ldd reports (plus the dynamic loader and
# the config files they read), the benchmark binary and its libraries (with
# the libpmem it dlopen()s) when it has been built, everything under
# GUEST_DIR (test binaries, helpers) as /guest, and kernel/vm/init as /init.  Dynamic binaries are run in the guest
# with the same loader path as on the host, so libraries keep their paths.
# EXTRA_SCRIPT, when given, is sourced last (before the archive is written)
# with $stage, copy_with_libs, copy_lib, copy_libs_of and die available: it adds what one
# kind of guest needs (workloads/postgres/initramfs-extra.sh adds PostgreSQL).
set -eu

out=${1:?usage: mkinitramfs.sh OUTPUT.cpio [GUEST_DIR] [BENCH_BINARY] [EXTRA_SCRIPT]}
guest_dir=${2:-}
bench=${3:-}
extra=${4:-}
here=$(cd "$(dirname "$0")" && pwd)

die() { echo "mkinitramfs: $*" >&2; exit 1; }
[ -z "$extra" ] || [ -f "$extra" ] || die "no extra script $extra"

busybox=$(command -v busybox) || die "busybox not found (apt-get install busybox-static)"
# ldd fails on a static executable, which is what the initramfs needs.
ldd "$busybox" >/dev/null 2>&1 && die "$busybox is dynamically linked (apt-get install busybox-static)"

stage=$(mktemp -d "${out}.stage.XXXXXX")
chmod 755 "$stage"	# becomes the guest root directory: mktemp makes it 0700
trap 'rm -rf "$stage"' EXIT INT TERM

mkdir -p "$stage"/bin "$stage"/sbin "$stage"/usr/bin "$stage"/usr/sbin \
	"$stage"/etc "$stage"/proc "$stage"/sys "$stage"/dev "$stage"/tmp \
	"$stage"/run "$stage"/var/tmp "$stage"/mnt/pmem "$stage"/out "$stage"/root
chmod 1777 "$stage"/tmp "$stage"/var/tmp

# busybox and one link per applet, at the paths busybox itself reports.
cp "$busybox" "$stage"/bin/busybox
for applet in $("$stage"/bin/busybox --list-full); do
	[ "$applet" = bin/busybox ] && continue
	mkdir -p "$stage/$(dirname "$applet")"
	ln -sf /bin/busybox "$stage/$applet"
done

# copy_with_libs BINARY [DEST]: the binary (replacing any busybox link of the
# same name) and every library ldd resolves for it, at the same path.
copy_lib() {
	[ -e "$stage$1" ] && return 0
	mkdir -p "$stage$(dirname "$1")"
	cp -L "$1" "$stage$1"
}
copy_with_libs() {
	src=$1
	dest=${2:-$1}
	[ -x "$src" ] || die "missing binary $src"
	mkdir -p "$stage$(dirname "$dest")"
	rm -f "$stage$dest"
	cp -L "$src" "$stage$dest"
	copy_libs_of "$src"
}
# copy_libs_of FILE: every library ldd resolves for FILE (an executable or a
# shared object), at the same path.
copy_libs_of() {
	ldd "$1" 2>/dev/null | while read -r first second third _; do
		case "$first" in
		linux-vdso*) ;;
		/*) copy_lib "$first" ;;                       # the loader line
		*) if [ "$second" = "=>" ]; then case "$third" in /*) copy_lib "$third" ;; esac; fi ;;
		esac
	done
	if ldd "$1" 2>&1 | grep -q "not found"; then
		die "$1 needs a library that is not installed: $(ldd "$1" | grep 'not found')"
	fi
}

copy_with_libs "$(command -v ndctl)" /usr/bin/ndctl
copy_with_libs "$(command -v daxctl)" /usr/bin/daxctl
mke2fs=$(command -v mke2fs || echo /sbin/mke2fs)
copy_with_libs "$mke2fs" /sbin/mke2fs
for link in mkfs.ext4 mkfs.ext2; do
	rm -f "$stage/sbin/$link"; ln -s mke2fs "$stage/sbin/$link"
done
# mke2fs takes the ext4 feature set from this file; without it mkfs.ext4
# falls back to built-in defaults that differ from the host's.
[ -f /etc/mke2fs.conf ] && cp /etc/mke2fs.conf "$stage"/etc/
# ndctl reads its configuration directory at start-up and warns when absent.
for d in /etc/ndctl /etc/ndctl.conf.d; do
	[ -d "$d" ] && cp -a "$d" "$stage/etc/"
done
# libkmod (linked by ndctl) looks for the module directory of the running
# kernel; the guest kernel is built without modules, an empty tree is enough.
mkdir -p "$stage"/lib/modules

if [ -n "$bench" ] && [ -x "$bench" ]; then
	copy_with_libs "$bench" /usr/bin/mshare-bench
	# The shared object the benchmark dlopen()s instead of linking it (for
	# the workloads that persist on DAX), named once in harness/pmem_lib.h.
	so=$(sed -n 's/^#define PMEM_LIB_SONAME "\(.*\)"$/\1/p' "$here/../../harness/pmem_lib.h")
	[ -n "$so" ] || die "no PMEM_LIB_SONAME in harness/pmem_lib.h"
	ldconfig=$(command -v ldconfig || echo /sbin/ldconfig)
	lib=$("$ldconfig" -p | awk -v so="$so" '$1 == so && /x86-64/ { print $NF; exit }')
	[ -n "$lib" ] && [ -e "$lib" ] || die "$so is not installed (apt-get install libpmem1): mshare-bench loads it to persist on DAX"
	copy_lib "$lib"
	copy_libs_of "$lib"
fi

if [ -n "$guest_dir" ] && [ -d "$guest_dir" ]; then
	mkdir -p "$stage"/guest
	cp -a "$guest_dir"/. "$stage"/guest/
	# Dynamic helpers under the guest dir get their libraries too.
	find "$stage"/guest -type f -perm -u+x | while read -r f; do
		if ldd "$f" >/dev/null 2>&1; then
			copy_libs_of "$f"
		fi
	done
fi

cp "$here"/init "$stage"/init
chmod 755 "$stage"/init
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$stage"/etc/passwd
printf 'root:x:0:\nnogroup:x:65534:\n' >"$stage"/etc/group
# shellcheck disable=SC1090
[ -z "$extra" ] || . "$extra"

tmp="${out}.tmp"
(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) >"$tmp"
mv "$tmp" "$out"
echo "mkinitramfs: $out ($(du -k "$out" | cut -f1) KiB)" >&2
