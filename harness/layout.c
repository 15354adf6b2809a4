/* layout.c - see layout.h. */
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <unistd.h>

#include "layout.h"
#include "procfs.h"

static int personality_now(void)
{
	return personality(0xffffffff);
}

static int randomize_va_space(void)
{
	long v;
	return procfs_read_long("/proc/sys/kernel/randomize_va_space", &v) < 0 ? -1 : (int)v;
}

void layout_fix(char **argv)
{
	const char *want = getenv("MSHARE_BENCH_ASLR");
	int p = personality_now();

	if ((want && strcmp(want, "on") == 0) || p < 0 || (p & ADDR_NO_RANDOMIZE) || randomize_va_space() == 0)
		return;
	if (personality((unsigned long)(p | ADDR_NO_RANDOMIZE)) < 0)
		return;
	execv("/proc/self/exe", argv);
	personality((unsigned long)p); /* not re-executed: as it was */
}

const char *layout_aslr(void)
{
	int p = personality_now();

	if (p >= 0 && (p & ADDR_NO_RANDOMIZE))
		return "off (ADDR_NO_RANDOMIZE)";
	if (randomize_va_space() == 0)
		return "off (kernel.randomize_va_space=0)";
	return "on";
}
