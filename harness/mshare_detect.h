/* mshare_detect.h - does the running kernel have mshare?
 *
 * Decided only from /proc/sys/vm/mshare_size and "msharefs" in
 * /proc/filesystems. The mshare syscall numbers (451, 452) belong to other
 * system calls on kernels without the patch series (cachestat, fchmodat2),
 * so nothing here, or anywhere, may probe them.
 */
#ifndef MSHARE_BENCH_MSHARE_DETECT_H
#define MSHARE_BENCH_MSHARE_DETECT_H

#include <stdbool.h>
#include <stddef.h>

#define MSHARE_SIZE_PATH "/proc/sys/vm/mshare_size"

struct mshare_support {
	bool available;
	long size;       /* alignment and size unit, from MSHARE_SIZE_PATH; -1 if missing */
	bool msharefs;   /* registered in /proc/filesystems */
	char why[320];   /* when not available */
};

/* The running kernel's. Nothing here depends on the platform: a host
 * booted with the patched kernel (a real machine) is detected like the
 * guest. */
void mshare_detect(struct mshare_support *out);
/* The same from other files (tests: a /proc of another kernel). */
void mshare_detect_at(const char *size_path, const char *filesystems_path, struct mshare_support *out);

#endif
