/* SPDX-License-Identifier: GPL-2.0 */
/* "Field: value kB" lines of /proc files, for the guest tests
 * (tests/kernel/mshare-test.h) and the guest tools (kernel/vm/pt-accounting.c). */
#ifndef PROC_KB_H
#define PROC_KB_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Folds the per-CPU parts of the vmstat counters (PageTables and the rest
 * of /proc/meminfo's page counts) into the global ones: without it a
 * reading lags by up to the per-CPU threshold times the CPUs, tens of
 * pages. Root only; 0, or -1 when /proc/sys/vm/stat_refresh cannot be
 * written (the reading then lags). */
static inline int mt_vmstat_refresh(void)
{
	int fd = open("/proc/sys/vm/stat_refresh", O_WRONLY | O_CLOEXEC);
	int ok;

	if (fd < 0)
		return -1;
	ok = write(fd, "1\n", 2) == 2;
	close(fd);
	return ok ? 0 : -1;
}

/* Value in kB of a "Field: value kB" line of a /proc file (/proc/meminfo,
 * /proc/self/status), -1 when absent. */
static inline long mt_proc_kb(const char *file, const char *field)
{
	char line[256];
	size_t flen = strlen(field);
	long v = -1;
	FILE *f = fopen(file, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, field, flen) == 0 && line[flen] == ':') {
			v = strtol(line + flen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

#endif
