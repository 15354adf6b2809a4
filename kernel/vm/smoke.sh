#!/bin/sh
# Default guest command of `make vm`: what kernel booted, whether it has
# mshare, and whether /mnt/pmem really is DAX.  Fails when the pmem/DAX
# set-up did not work, so a broken VM does not look like a good one.
echo "uname: $(uname -a)"
if [ -r /proc/sys/vm/mshare_size ]; then
	echo "mshare_size: $(cat /proc/sys/vm/mshare_size)"
else
	echo "mshare_size: absent (kernel without mshare)"
fi
grep -qw msharefs /proc/filesystems && echo "msharefs: registered$(grep -q ' /sys/fs/mshare ' /proc/mounts && echo ', mounted on /sys/fs/mshare')" ||
	echo "msharefs: absent"
grep ' /mnt/pmem ' /proc/mounts || echo "/mnt/pmem: not mounted"
rc=0
if grep -q ' /mnt/pmem ' /proc/mounts; then
	dd if=/dev/zero of=/mnt/pmem/smoke bs=4096 count=16 2>/dev/null
	printf 'DAX on /mnt/pmem/smoke: '
	statx-dax /mnt/pmem/smoke || rc=1
	rm -f /mnt/pmem/smoke
else
	rc=1
fi
[ -e /sys/bus/nd/devices/namespace0.0 ] && ndctl list -N 2>/dev/null
df -k /mnt/pmem 2>/dev/null | tail -n 1
exit $rc
