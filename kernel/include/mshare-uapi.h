/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User-space interface of the mshare patch series (kernel/patches/).
 *
 *   int mshare(const char *name, unsigned long addr, unsigned long len,
 *              int oflags, mode_t mode);
 *   int mshare_unlink(const char *name);
 *
 * addr and len must be multiples of the value in /proc/sys/vm/mshare_size
 * (PGDIR_SIZE: 512 GiB on x86-64 with 4-level paging).  The donor maps the
 * region and calls mshare(name, addr, len, O_CREAT|O_RDWR[|O_EXCL], mode); a
 * consumer reads struct mshare_info from MSHARE_FS_DIR/<name> and calls
 * mshare(name, info.start, info.size, O_RDWR or O_RDONLY, 0).  Every process
 * that called mshare() calls mshare_unlink(name) when done; the last one
 * tears the region down and removes the file.
 *
 * The syscall numbers 451/452 belong to mshare only on the patched 6.1
 * kernel: on Linux >= 6.5 451 is cachestat and on >= 6.6 452 is fchmodat2.
 * The wrappers below therefore issue them only once mshare_kernel_supported()
 * has confirmed that the running kernel is the patched one (they run the
 * check themselves the first time, per translation unit); otherwise they
 * return -1 with errno = ENOSYS.
 */
#ifndef MSHARE_UAPI_H
#define MSHARE_UAPI_H

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/vfs.h>
#include <unistd.h>

/* x86-64 numbers used by the series; not to be used before detection. */
#ifndef __NR_mshare
#define __NR_mshare		451
#endif
#ifndef __NR_mshare_unlink
#define __NR_mshare_unlink	452
#endif

/* What a read of MSHARE_FS_DIR/<name> returns. */
struct mshare_info {
	unsigned long start;	/* first address of the region */
	unsigned long size;	/* length of the region in bytes */
};

#define MSHARE_FS_TYPE		"msharefs"
#define MSHARE_FS_DIR		"/sys/fs/mshare"
#define MSHARE_FS_MAGIC		0x4d534852	/* "MSHR", statfs f_type */
#define MSHARE_SIZE_SYSCTL	"/proc/sys/vm/mshare_size"

/* Set by mshare_kernel_supported() once the running kernel proved it. */
static bool mshare_detected __attribute__((unused));

/*
 * Reads the alignment/size unit from /proc/sys/vm/mshare_size.  Returns 0 and
 * stores it in *unit, or -1 with errno set (ENOENT: kernel without mshare).
 */
static inline int mshare_read_size_unit(unsigned long *unit)
{
	FILE *f = fopen(MSHARE_SIZE_SYSCTL, "r");
	unsigned long v = 0;
	int ok;

	if (!f)
		return -1;
	ok = fscanf(f, "%lu", &v) == 1 && v != 0 && (v & (v - 1)) == 0;
	fclose(f);
	if (!ok) {
		errno = EINVAL;
		return -1;
	}
	*unit = v;
	return 0;
}

/*
 * True when the running kernel carries the mshare series: the sysctl exists
 * and msharefs is registered (listed in /proc/filesystems).  Only after this
 * returned true do the wrappers below issue syscalls 451/452.
 */
static inline bool mshare_kernel_supported(void)
{
	unsigned long unit;
	char line[128];
	bool fs = false;
	FILE *f;

	if (mshare_read_size_unit(&unit) != 0)
		return false;
	f = fopen("/proc/filesystems", "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "\t" MSHARE_FS_TYPE "\n")) {
			fs = true;
			break;
		}
	}
	fclose(f);
	mshare_detected = fs;
	return fs;
}

/* True when msharefs is mounted at MSHARE_FS_DIR. */
static inline bool mshare_fs_mounted(void)
{
	struct statfs st;

	return statfs(MSHARE_FS_DIR, &st) == 0 && st.f_type == MSHARE_FS_MAGIC;
}

static inline int mshare(const char *name, unsigned long addr,
			 unsigned long len, int oflags, mode_t mode)
{
	if (!mshare_detected && !mshare_kernel_supported()) {
		errno = ENOSYS;
		return -1;
	}
	return (int)syscall(__NR_mshare, name, addr, len, oflags, mode);
}

static inline int mshare_unlink(const char *name)
{
	if (!mshare_detected && !mshare_kernel_supported()) {
		errno = ENOSYS;
		return -1;
	}
	return (int)syscall(__NR_mshare_unlink, name);
}

#endif /* MSHARE_UAPI_H */
