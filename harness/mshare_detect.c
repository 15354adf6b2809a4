/* mshare_detect.c - mshare support from /proc only (see mshare_detect.h). */
#include <stdio.h>
#include <string.h>

#include "mshare_detect.h"

void mshare_detect(struct mshare_support *out)
{
	mshare_detect_at(MSHARE_SIZE_PATH, "/proc/filesystems", out);
}

void mshare_detect_at(const char *size_path, const char *filesystems_path, struct mshare_support *out)
{
	char line[256];
	long v = -1;
	bool present = false;
	FILE *f;

	memset(out, 0, sizeof(*out));
	out->size = -1;
	f = fopen(size_path, "r");
	if (f) {
		present = true;
		/* The series' unit: a power of two (PGDIR_SIZE). */
		if (fscanf(f, "%ld", &v) == 1 && v > 0 && (v & (v - 1)) == 0)
			out->size = v;
		fclose(f);
	}
	/* Every line: a host's list may be long, msharefs anywhere in it. */
	f = fopen(filesystems_path, "r");
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (strcmp(line, "nodev\tmsharefs\n") == 0 || strcmp(line, "\tmsharefs\n") == 0)
				out->msharefs = true;
		fclose(f);
	}
	if (out->size < 0)
		snprintf(out->why, sizeof(out->why), "mshare not available on this kernel: %s %s", size_path,
			 present ? "does not hold a power of two" : "missing");
	else if (!out->msharefs)
		snprintf(out->why, sizeof(out->why),
			 "mshare not available on this kernel: msharefs not registered in %s", filesystems_path);
	else
		out->available = true;
}
