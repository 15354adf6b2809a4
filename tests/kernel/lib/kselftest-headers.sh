#!/bin/sh
# tests/kernel/lib/kselftest-headers.sh DIR: puts the kernel's own test harness,
# tools/testing/selftests/kselftest_harness.h and the kselftest.h it
# includes, in DIR, taken from Debian's linux-source-6.1 tarball (the source
# the guest kernel is built from, /usr/src/linux-source-6.1.tar.xz).  The
# conformance tests under tests/kernel and tests/kernel-2025 are written
# against it (kernel/vm.mk builds them with -IDIR).  Installs linux-source-6.1
# when it is missing, as kernel/build.sh does.  Both files are replaced
# together (from a temporary directory: a failed extraction leaves the old
# ones or none).
set -eu
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
dir=$1
tarball=/usr/src/linux-source-6.1.tar.xz
top=linux-source-6.1/tools/testing/selftests
if [ ! -f "$tarball" ]; then
	echo "kselftest-headers: $tarball is missing: installing linux-source-6.1" >&2
	apt-get -o DPkg::Lock::Timeout=600 install -y linux-source-6.1 >&2 ||
		{ echo "kselftest-headers: apt-get install linux-source-6.1 failed; the guest tests need $tarball" >&2; exit 1; }
fi
mkdir -p "$dir"
tmp=$(mktemp -d "$dir/.kselftest.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# --occurrence: stop reading the (large) archive once both are out; -m:
# the files get the time of extraction, newer than the tarball (make).
if ! tar -xJmf "$tarball" -C "$tmp" --occurrence=1 "$top/kselftest_harness.h" "$top/kselftest.h"; then
	echo "kselftest-headers: $tarball has no $top/kselftest_harness.h and kselftest.h" >&2
	exit 1
fi
mv "$tmp/$top/kselftest.h" "$dir/kselftest.h"
mv "$tmp/$top/kselftest_harness.h" "$dir/kselftest_harness.h"
