/* test-mshare-detect.c - mshare is detected from /proc files alone,
 * whatever the platform (TAP): files as a patched kernel, an unpatched
 * 6.18 host and broken ones write them. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mshare_detect.h"
#include "../lib/tap.h"

static char dir[] = "/tmp/mshare-detect.XXXXXX";

static const char *put(const char *name, const char *text)
{
	static char path[3][256];
	static int k;
	char *p = path[k++ % 3];
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

/* msharefs in this kernel's /proc/filesystems, read here on its own. */
static bool registered_here(void)
{
	char line[256];
	bool found = false;
	FILE *f = fopen("/proc/filesystems", "r");

	while (f && fgets(line, sizeof(line), f))
		found |= strcmp(line, "nodev\tmsharefs\n") == 0;
	if (f)
		fclose(f);
	return found;
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
	mshare_detect_at(put("size", "549755813888\n"), put("fs", fs_with), "/nonexistent/mshare_info", &ms);
	TAP_OK(ms.available && ms.size == 549755813888L && ms.msharefs && !ms.why[0],
	       "patched kernel: available, unit 512 GiB (%ld)", ms.size);

	char *big = long_filesystems("nodev\tmsharefs\n");
	mshare_detect_at(put("size", "549755813888\n"), put("fs", big), "/nonexistent/mshare_info", &ms);
	TAP_OK(ms.available, "msharefs registered after 9000 bytes of other filesystems is found");
	free(big);

	mshare_detect_at("/nonexistent/mshare_size", put("fs", fs_without), "/nonexistent/mshare_info", &ms);
	TAP_OK(!ms.available && ms.size == -1 && strstr(ms.why, "/nonexistent/mshare_size missing"),
	       "unpatched kernel (6.18 host): absent, why names the missing file (%s)", ms.why);

	mshare_detect_at(put("size", "549755813888\n"), put("fs", fs_without), "/nonexistent/mshare_info", &ms);
	TAP_OK(!ms.available && ms.size == 549755813888L && strstr(ms.why, "msharefs not registered"),
	       "size file but no msharefs: absent (%s)", ms.why);

	mshare_detect_at(put("size", "3000\n"), put("fs", fs_with), "/nonexistent/mshare_info", &ms);
	TAP_OK(!ms.available && strstr(ms.why, "power of two"), "unit not a power of two: absent (%s)", ms.why);

	mshare_detect_at(put("size", "garbage\n"), put("fs", fs_with), "/nonexistent/mshare_info", &ms);
	TAP_OK(!ms.available && strstr(ms.why, "power of two"), "unreadable unit: absent, not called missing (%s)",
	       ms.why);

	mshare_detect_at(put("size", "549755813888\n"), put("fs", "nodev\tmsharefs2\nnodev\txmsharefs\n"), "/nonexistent/mshare_info", &ms);
	TAP_OK(!ms.available, "a filesystem whose name only contains msharefs is not msharefs");

	/* The 2022 design is named as such. */
	mshare_detect_at(put("size", "549755813888\n"), put("fs", fs_with), "/nonexistent/mshare_info", &ms);
	TAP_OK(ms.design && strcmp(ms.design, "2022") == 0, "sysctl and msharefs: design 2022 (%s)",
	       ms.design ? ms.design : "null");

	/* A 2022 sysctl this user cannot read is still the 2022 design, never
	 * taken for the 2025 one. Checked as an unprivileged user: as root, a
	 * child drops to nobody (root reads through any mode). */
	{
		const char *sz = put("size", "549755813888\n"), *fsp = put("fs", fs_with);
		int status = -1;
		pid_t pid;

		chmod(sz, 0);
		chmod(fsp, 0644);
		chmod(dir, 0711);
		pid = fork();
		if (pid == 0) {
			if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
				_exit(3);
			mshare_detect_at(sz, fsp, "/nonexistent/mshare_info", &ms);
			_exit(!ms.available && !ms.design && strstr(ms.why, "power of two") ? 0 : 1);
		}
		if (pid > 0)
			waitpid(pid, &status, 0);
		TAP_OK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		       "an unreadable 2022 sysctl is not taken for the 2025 design (child status %d)", status);
		chmod(sz, 0644);
		chmod(dir, 0700);
	}

	/* The 2025 series (v3 on 6.12): msharefs, no sysctl, the alignment in
	 * mshare_info once msharefs is mounted. */
	mshare_detect_at("/nonexistent/mshare_size", put("fs", fs_with), put("info", "2097152\n"), &ms);
	TAP_OK(ms.available && ms.design && strcmp(ms.design, "2025") == 0 && ms.size == 2097152 && !ms.why[0],
	       "msharefs mounted, no sysctl: design 2025, alignment 2 MiB (%ld)", ms.size);

	mshare_detect_at("/nonexistent/mshare_size", put("fs", fs_with), "/nonexistent/mshare_info", &ms);
	TAP_OK(ms.available && ms.design && strcmp(ms.design, "2025") == 0 && ms.size == -1 &&
		       strstr(ms.why, "not mounted") && strstr(ms.why, "mount -t msharefs"),
	       "msharefs registered but not mounted: design 2025 available, alignment unknown, why says mount (%s)",
	       ms.why);

	mshare_detect_at("/nonexistent/mshare_size", put("fs", fs_with), put("info", "12345\n"), &ms);
	TAP_OK(ms.available && ms.size == -1 && strstr(ms.why, "power of two"),
	       "mshare_info not a power of two: alignment unknown, said so (%s)", ms.why);

	mshare_detect_at("/nonexistent/mshare_size", put("fs", fs_without), put("info", "2097152\n"), &ms);
	TAP_OK(!ms.available && !ms.design, "an mshare_info file without msharefs registered is not mshare");

	/* The running kernel: the same answer as its /proc and sysfs say. */
	mshare_detect(&ms);
	bool v1 = access("/proc/sys/vm/mshare_size", F_OK) == 0, fs = registered_here();
	TAP_OK(ms.available == fs && (!ms.available || strcmp(ms.design, v1 ? "2022" : "2025") == 0),
	       "this kernel: available=%d design %s agrees with /proc (%s)", ms.available,
	       ms.design ? ms.design : "none", ms.why[0] ? ms.why : "available");

	unlink(put("size", ""));
	unlink(put("fs", ""));
	unlink(put("info", ""));
	rmdir(dir);
	return tap_done();
}
