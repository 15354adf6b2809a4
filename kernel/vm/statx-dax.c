/*
 * statx-dax FILE: prints "dax=1" and exits 0 when the kernel reports
 * STATX_ATTR_DAX for FILE (its mappings go straight to persistent memory),
 * prints "dax=0" and exits 1 otherwise, exits 2 on error.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>

#ifndef STATX_ATTR_DAX
#define STATX_ATTR_DAX 0x00200000 /* include/uapi/linux/stat.h, Linux 5.8 */
#endif

int main(int argc, char **argv)
{
	struct statx stx;

	if (argc != 2) {
		fprintf(stderr, "usage: statx-dax FILE\n");
		return 2;
	}
	if (statx(AT_FDCWD, argv[1], 0, STATX_BASIC_STATS, &stx) != 0) {
		fprintf(stderr, "statx-dax: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	if (!(stx.stx_attributes_mask & STATX_ATTR_DAX)) {
		printf("dax=0 (kernel does not report the DAX attribute)\n");
		return 1;
	}
	int dax = (stx.stx_attributes & STATX_ATTR_DAX) != 0;
	printf("dax=%d\n", dax);
	return dax ? 0 : 1;
}
