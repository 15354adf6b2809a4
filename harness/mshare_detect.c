/* mshare_detect.c - mshare support from /proc only (see mshare_detect.h). */
#include <stdio.h>
#include <string.h>

#include "mshare_detect.h"
#include "procfs.h"

void mshare_detect(struct mshare_support *out)
{
	char fs[8192];

	memset(out, 0, sizeof(*out));
	out->size = -1;
	if (procfs_read_long(MSHARE_SIZE_PATH, &out->size) != 0)
		out->size = -1;
	if (procfs_read("/proc/filesystems", fs, sizeof(fs)) >= 0)
		out->msharefs = strstr(fs, "\tmsharefs\n") != NULL;
	if (out->size < 0)
		snprintf(out->why, sizeof(out->why), "mshare not available on this kernel: %s missing", MSHARE_SIZE_PATH);
	else if (!out->msharefs)
		snprintf(out->why, sizeof(out->why),
			 "mshare not available on this kernel: msharefs not registered in /proc/filesystems");
	else
		out->available = true;
}
