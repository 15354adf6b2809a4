#!/bin/sh
# Install the Debian packages mshare-bench needs, only those missing.
# Kept in one list so `make deps`, `make` and `.ci/run` agree.
set -eu
PACKAGES="build-essential pkg-config libpmem-dev libpmem2-dev libnuma-dev libhwloc-dev \
ndctl daxctl gnuplot-nox python3 qemu-system-x86 busybox-static e2fsprogs cpio"
missing=""
for p in $PACKAGES; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "deps: installing:$missing" >&2
if [ "$(id -u)" != 0 ]; then
	echo "deps: need root to apt-get install:$missing" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq $missing
