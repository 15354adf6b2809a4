// SPDX-License-Identifier: MIT
/*
 * pg-touch - how much of PostgreSQL's shared memory segment each backend
 * maps (issue 45): for every PID, the 4 KiB pages of the segment present in
 * its own page tables (/proc/PID/pagemap) and the 2 MiB spans holding at
 * least one of them (the PTE pages its page tables need for the segment).
 *
 *   pg-touch POSTMASTER_PID PID...
 *
 * The segment is the largest shared writable mapping (rw-s) of 1 MiB or more
 * in the postmaster's /proc/PID/maps (the backends inherit it at the same
 * address). Prints one line
 *   segment START END BYTES NAME
 * then one line per PID
 *   PID PAGES SPANS          (or "PID - - reason" when it could not be read)
 * Meaningful only where every process has page tables of its own for the
 * segment (PostgreSQL's 4 KiB shared anonymous mapping): under mshare or
 * hugetlbfs's shared PMDs they are the region's, not the backend's.
 * Presence bits need no root for processes of one's own user.
 * Exit 0 when every PID was read, 1 when one was not, 2 on bad usage or
 * when the segment cannot be found.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PAGE 4096ULL
#define SPAN (2ULL << 20)
#define BATCH 65536 /* pagemap entries per read: 512 KiB */

static int find_segment(const char *pid, uint64_t *start, uint64_t *end, char *name, size_t len)
{
	char path[64], line[4096];
	FILE *f;
	uint64_t best = 0;

	snprintf(path, sizeof(path), "/proc/%s/maps", pid);
	if (!(f = fopen(path, "re"))) {
		fprintf(stderr, "pg-touch: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e;
		char perms[8] = "";
		int off = 0;

		if (sscanf(line, "%llx-%llx %7s %*s %*s %*s%n", &s, &e, perms, &off) < 3)
			continue;
		if (strcmp(perms, "rw-s") != 0 || e - s < (1ULL << 20) || e - s <= best)
			continue;
		best = e - s;
		*start = s;
		*end = e;
		const char *n = line + off;
		while (*n == ' ')
			n++;
		snprintf(name, len, "%s", n);
		name[strcspn(name, "\n")] = '\0';
	}
	fclose(f);
	if (!best) {
		fprintf(stderr, "pg-touch: no shared writable mapping of 1 MiB or more in %s\n", path);
		return -1;
	}
	return 0;
}

/* Pages present in [start, end) of pid's pagemap and the 2 MiB spans that
 * hold them; -1 with errno. */
static int count(const char *pid, uint64_t start, uint64_t end, uint64_t *buf, uint64_t *pages, uint64_t *spans)
{
	char path[64];
	int fd;
	uint64_t last_span = UINT64_MAX;

	snprintf(path, sizeof(path), "/proc/%s/pagemap", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	*pages = *spans = 0;
	for (uint64_t a = start; a < end;) {
		uint64_t n = (end - a) / PAGE;
		ssize_t got;

		if (n > BATCH)
			n = BATCH;
		got = pread(fd, buf, n * 8, (off_t)(a / PAGE * 8));
		if (got <= 0) {
			int e = got < 0 ? errno : EIO;

			close(fd);
			errno = e;
			return -1;
		}
		n = (uint64_t)got / 8;
		for (uint64_t i = 0; i < n; i++) {
			if (!(buf[i] >> 63)) /* bit 63: present */
				continue;
			uint64_t span = (a + i * PAGE) / SPAN;

			(*pages)++;
			if (span != last_span) {
				(*spans)++;
				last_span = span;
			}
		}
		a += n * PAGE;
	}
	close(fd);
	return 0;
}

static int number(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

int main(int argc, char **argv)
{
	uint64_t start = 0, end = 0, *buf;
	char name[1024] = "";
	int rc = 0;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fprintf(argc < 2 ? stderr : stdout, "usage: pg-touch POSTMASTER_PID [PID...]\n"
			"  per PID: pages of the postmaster's largest shared writable mapping present in its\n"
			"  page tables, and the 2 MiB spans holding them (/proc/PID/pagemap)\n");
		return argc < 2 ? 2 : 0;
	}
	for (int i = 1; i < argc; i++)
		if (!number(argv[i])) {
			fprintf(stderr, "pg-touch: '%s' is not a process id\n", argv[i]);
			return 2;
		}
	if (find_segment(argv[1], &start, &end, name, sizeof(name)) < 0)
		return 2;
	if (!(buf = malloc(BATCH * 8))) {
		perror("pg-touch: malloc");
		return 2;
	}
	printf("segment %#" PRIx64 " %#" PRIx64 " %" PRIu64 " %s\n", start, end, end - start, name);
	for (int i = 2; i < argc; i++) {
		uint64_t pages, spans;

		if (count(argv[i], start, end, buf, &pages, &spans) < 0) {
			printf("%s - - %s\n", argv[i], strerror(errno));
			rc = 1;
		} else {
			printf("%s %" PRIu64 " %" PRIu64 "\n", argv[i], pages, spans);
		}
	}
	free(buf);
	return rc;
}
