/* mshare_detect.c - mshare support from /proc and sysfs only (see mshare_detect.h). */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "mshare_detect.h"

void mshare_detect(struct mshare_support *out)
{
	mshare_detect_at(MSHARE_SIZE_PATH, "/proc/filesystems", MSHARE_INFO_PATH, out);
}

/* A power of two >= 4096 from the first number in PATH, else -1. */
static long read_pow2(const char *path, bool *present)
{
	struct stat sb;
	FILE *f;
	long v = -1;

	/* Present is whether it exists, not whether this user may read it:
	 * an unreadable 2022 sysctl must not make the kernel look like 2025. */
	*present = stat(path, &sb) == 0;
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1 || v < 4096 || (v & (v - 1)) != 0)
		v = -1;
	fclose(f);
	return v;
}

void mshare_detect_at(const char *size_path, const char *filesystems_path, const char *info_path,
		      struct mshare_support *out)
{
	char line[256];
	bool sysctl, info;
	long unit, align;
	FILE *f;

	memset(out, 0, sizeof(*out));
	out->size = -1;
	/* Every line: a host's list may be long, msharefs anywhere in it. */
	f = fopen(filesystems_path, "r");
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (strcmp(line, "nodev\tmsharefs\n") == 0 || strcmp(line, "\tmsharefs\n") == 0)
				out->msharefs = true;
		fclose(f);
	}
	unit = read_pow2(size_path, &sysctl);
	if (sysctl) {
		/* The 2022 series: its sysctl, a power of two (PGDIR_SIZE). */
		out->size = unit;
		if (unit < 0)
			snprintf(out->why, sizeof(out->why), "mshare not available on this kernel: %s does not hold a power of two",
				 size_path);
		else if (!out->msharefs)
			snprintf(out->why, sizeof(out->why),
				 "mshare not available on this kernel: msharefs not registered in %s", filesystems_path);
		else {
			out->available = true;
			out->design = "2022";
		}
		return;
	}
	if (!out->msharefs) {
		snprintf(out->why, sizeof(out->why), "mshare not available on this kernel: %s missing and msharefs not registered in %s",
			 size_path, filesystems_path);
		return;
	}
	/* msharefs without the sysctl: the 2025 series. Its alignment is
	 * readable once msharefs is mounted. */
	out->available = true;
	out->design = "2025";
	align = read_pow2(info_path, &info);
	if (align > 0)
		out->size = align;
	else if (info)
		snprintf(out->why, sizeof(out->why), "%s does not hold a power of two >= 4096", info_path);
	else
		snprintf(out->why, sizeof(out->why), "msharefs is not mounted (%s missing: mount -t msharefs msharefs /sys/fs/mshare)",
			 info_path);
}

int mshare_2025_ready(unsigned long *align, char *why, size_t why_len)
{
	struct mshare_support ms;

	mshare_detect(&ms);
	if (ms.design && strcmp(ms.design, "2022") == 0) {
		snprintf(why, why_len, "this kernel has the 2022 mshare series (%s exists), not the 2025 design",
			 MSHARE_SIZE_PATH);
		return -1;
	}
	if (!ms.available) {
		if (!ms.msharefs)
			snprintf(why, why_len,
				 "mshare (2025 design) not available on this kernel: msharefs not registered in /proc/filesystems");
		else
			snprintf(why, why_len, "%s", ms.why);
		return -1;
	}
	if (ms.size < 0) {
		snprintf(why, why_len, "%s", ms.why);
		return -1;
	}
	*align = (unsigned long)ms.size;
	return 0;
}

/* The design version the running kernel carries, as this suite's kernels
 * name it in uname -v (kernel/build.sh: "...-2025v3-<key>"; the v2 port's
 * images said "...-2025-<key>"). */
void mshare_2025_version(char *out, size_t len)
{
	struct utsname u;
	const char *t = NULL;

	if (uname(&u) == 0)
		t = strstr(u.version, "patches-2025");
	else
		snprintf(u.version, sizeof(u.version), "?");
	if (!t) {
		snprintf(out, len, "mshare-2025 (version unknown: uname -v \"%.64s\" is not a kernel/build.sh name)",
			 u.version);
		return;
	}
	t += strlen("patches-2025");
	if (t[0] == 'v' && t[1] >= '0' && t[1] <= '9')
		snprintf(out, len, "mshare-2025 v%c", t[1]);
	else
		snprintf(out, len, "mshare-2025 v2");
}
