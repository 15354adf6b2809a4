/* mshare_detect.h - does the running kernel have mshare, and which design?
 *
 * Decided only from files: /proc/sys/vm/mshare_size, "msharefs" in
 * /proc/filesystems and msharefs' /sys/fs/mshare/mshare_info. The 2022
 * series (v1, syscalls 451/452 on the patched 6.1) has the sysctl; the
 * 2025 series (v2/v3, a file in msharefs and ioctls) has no sysctl and
 * writes its alignment into mshare_info once msharefs is mounted. The
 * mshare syscall numbers (451, 452) belong to other system calls on
 * kernels without the patch series (cachestat, fchmodat2), so nothing here,
 * or anywhere, may probe them.
 */
#ifndef MSHARE_BENCH_MSHARE_DETECT_H
#define MSHARE_BENCH_MSHARE_DETECT_H

#include <stdbool.h>
#include <stddef.h>

#define MSHARE_SIZE_PATH "/proc/sys/vm/mshare_size"
#define MSHARE_INFO_PATH "/sys/fs/mshare/mshare_info"

struct mshare_support {
	bool available;     /* the kernel has an mshare design (msharefs may still need mounting) */
	const char *design; /* "2022" (v1: syscalls + sysctl), "2025" (msharefs ioctls) or NULL */
	long size;          /* 2022: the size unit from MSHARE_SIZE_PATH; 2025: the alignment from
			     * MSHARE_INFO_PATH (known once msharefs is mounted); -1 if unknown */
	bool msharefs;      /* registered in /proc/filesystems */
	char why[320];      /* when not available; for 2025 with msharefs unmounted, what to do */
};

/* The running kernel's. Nothing here depends on the platform: a host
 * booted with the patched kernel (a real machine, `make kernel-deb`) is
 * detected like the guest. */
void mshare_detect(struct mshare_support *out);
/* For the users of the 2025 design (the mshare-2025 backends, pg_mshare's
 * PGMSHARE_DESIGN=2025): 0 with its alignment in *align when the running
 * kernel has it and msharefs is mounted; else -1 and why. */
int mshare_2025_ready(unsigned long *align, char *why, size_t why_len);
/* The 2025 design's version as this suite's kernels name it in uname -v
 * (kernel/build.sh: "...patches-2025v3-<key>"): "mshare-2025 v3", or says
 * it is unknown. */
void mshare_2025_version(char *out, size_t len);
/* The same from other files (tests: a /proc of another kernel). */
void mshare_detect_at(const char *size_path, const char *filesystems_path, const char *info_path,
		      struct mshare_support *out);

#endif
