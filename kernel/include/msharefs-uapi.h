/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * User-space interface of the 2025 mshare series as ported in
 * kernel/patches-2025/ (the mshare-2025 kernel flavour, Linux 6.12):
 * include/uapi/linux/msharefs.h of the patched kernel, plus the paths.
 *
 * No system call: a region is a file on msharefs (mounted on /sys/fs/mshare).
 *   creator:  fd = open(MSHAREFS_DIR "/name", O_RDWR | O_CREAT | O_EXCL, 0600);
 *             ftruncate(fd, size);     size: a multiple of the alignment in
 *                                      MSHAREFS_INFO, set once
 *             ioctl(fd, MSHAREFS_CREATE_MAPPING, &(struct mshare_create){
 *                   .region_offset = 0, .size = bytes, .offset = 0,
 *                   .prot = PROT_READ | PROT_WRITE,
 *                   .flags = MAP_SHARED | MAP_FIXED | MAP_ANONYMOUS, .fd = -1 });
 *   everyone: mmap(addr, size, prot, MAP_SHARED | MAP_FIXED, fd, 0) with addr
 *             a multiple of the alignment (or 0: the kernel picks one).
 *   removal:  unlink(); the region goes with the last mapping and descriptor.
 * Objects a region can hold: anonymous shared memory (above) and, since the
 * series' v3 (2025-08-20; patches-2025/0006), a regular file (.flags =
 * MAP_SHARED | MAP_FIXED, .fd = the file opened for reading, and writing
 * for PROT_WRITE, .offset = byte offset in it) or anonymous hugetlb memory
 * (MAP_ANONYMOUS | MAP_HUGETLB).  Since v3 the creator owns the region:
 * its exit unmaps the region's objects (patches-2025/0007).
 *
 * Detection: MSHAREFS_INFO exists and holds the alignment as a decimal
 * number; /proc/sys/vm/mshare_size (the 2022 series) does not exist.
 */
#ifndef MSHAREFS_UAPI_H
#define MSHAREFS_UAPI_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define MSHAREFS_DIR	"/sys/fs/mshare"
#define MSHAREFS_INFO	"/sys/fs/mshare/mshare_info"
#define MSHAREFS_TYPE	"msharefs"
#define MSHAREFS_MAGIC	0x4d534852	/* statfs f_type, "MSHR" */
/* Exists only on a kernel with the 2022 series (kernel/patches/). */
#define MSHARE_2022_SYSCTL "/proc/sys/vm/mshare_size"

struct mshare_create {
	__u64 region_offset;
	__u64 size;
	__u64 offset;
	__u32 prot;
	__u32 flags;
	__u32 fd;
};

struct mshare_unmap {
	__u64 region_offset;
	__u64 size;
};

#define MSHAREFS_CREATE_MAPPING	_IOW('x', 0, struct mshare_create)
#define MSHAREFS_UNMAP		_IOW('x', 1, struct mshare_unmap)

#endif
