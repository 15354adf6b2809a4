/* test-mshare-detect.c - mshare is detected from /proc files alone,
 * whatever the platform (TAP): files as a patched kernel, an unpatched
 * 6.18 host and broken ones write them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mshare_detect.h"
#include "../lib/tap.h"

static char dir[] = "/tmp/mshare-detect.XXXXXX";

static const char *put(const char *name, const char *text)
{
	static char path[2][256];
	static int k;
	char *p = path[k++ % 2];
	FILE *f;

	snprintf(p, sizeof(path[0]), "%s/%s", dir, name);
	f = fopen(p, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		printf("Bail out! cannot write %s\n", p);
		exit(1);
	}
	return p;
}

/* /proc/filesystems of a kernel with msharefs: the entry past 8 KiB of
 * other names, as on a host with many modules loaded. */
static char *long_filesystems(const char *last)
{
	size_t len = 0, cap = 16384;
	char *s = malloc(cap);

	s[0] = '\0';
	for (int i = 0; len < 9000; i++)
		len += (size_t)snprintf(s + len, cap - len, "nodev\tfs%04d\n", i);
	snprintf(s + len, cap - len, "%s", last);
	return s;
}

int main(void)
{
	struct mshare_support ms;
	const char *fs_with = "nodev\tsysfs\nnodev\tproc\n\text4\nnodev\tmsharefs\n";
	const char *fs_without = "nodev\tsysfs\nnodev\tproc\n\text4\nnodev\ttmpfs\n";

	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp\n");
		return 1;
	}
	mshare_detect_at(put("size", "549755813888\n"), put("fs", fs_with), &ms);
	TAP_OK(ms.available && ms.size == 549755813888L && ms.msharefs && !ms.why[0],
	       "patched kernel: available, unit 512 GiB (%ld)", ms.size);

	char *big = long_filesystems("nodev\tmsharefs\n");
	mshare_detect_at(put("size", "549755813888\n"), put("fs", big), &ms);
	TAP_OK(ms.available, "msharefs registered after 9000 bytes of other filesystems is found");
	free(big);

	mshare_detect_at("/nonexistent/mshare_size", put("fs", fs_without), &ms);
	TAP_OK(!ms.available && ms.size == -1 && strstr(ms.why, "/nonexistent/mshare_size missing"),
	       "unpatched kernel (6.18 host): absent, why names the missing file (%s)", ms.why);

	mshare_detect_at(put("size", "549755813888\n"), put("fs", fs_without), &ms);
	TAP_OK(!ms.available && ms.size == 549755813888L && strstr(ms.why, "msharefs not registered"),
	       "size file but no msharefs: absent (%s)", ms.why);

	mshare_detect_at(put("size", "3000\n"), put("fs", fs_with), &ms);
	TAP_OK(!ms.available && strstr(ms.why, "power of two"), "unit not a power of two: absent (%s)", ms.why);

	mshare_detect_at(put("size", "garbage\n"), put("fs", fs_with), &ms);
	TAP_OK(!ms.available && strstr(ms.why, "power of two"), "unreadable unit: absent, not called missing (%s)",
	       ms.why);

	mshare_detect_at(put("size", "549755813888\n"), put("fs", "nodev\tmsharefs2\nnodev\txmsharefs\n"), &ms);
	TAP_OK(!ms.available, "a filesystem whose name only contains msharefs is not msharefs");

	/* The running kernel: the same answer as its /proc says. */
	mshare_detect(&ms);
	TAP_OK(ms.available == (access("/proc/sys/vm/mshare_size", F_OK) == 0 && ms.msharefs),
	       "this kernel: available=%d agrees with /proc (%s)", ms.available, ms.why[0] ? ms.why : "available");

	unlink(put("size", ""));
	unlink(put("fs", ""));
	rmdir(dir);
	return tap_done();
}
