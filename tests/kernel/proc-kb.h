/* SPDX-License-Identifier: GPL-2.0 */
/* "Field: value kB" lines of /proc files, for the guest tests
 * (mshare-test.h) and the guest tools (kernel/vm/pt-accounting.c). */
#ifndef PROC_KB_H
#define PROC_KB_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
