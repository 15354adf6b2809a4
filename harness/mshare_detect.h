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
	char why[160];   /* when not available */
};

void mshare_detect(struct mshare_support *out);

#endif
