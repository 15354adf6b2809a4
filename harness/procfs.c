/* procfs.c - small readers for /proc and /sys files. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procfs.h"

ssize_t procfs_read(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t got = 0;
	while (got + 1 < len) {
		ssize_t n = read(fd, buf + got, len - 1 - got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	close(fd);
	return (ssize_t)got;
}

/* Find "field:" at the start of a line in text; value in kB * 1024. */
static int64_t field_bytes(const char *text, const char *field)
{
	size_t flen = strlen(field);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, field, flen) == 0 && p[flen] == ':') {
			char *end;
			long long v = strtoll(p + flen + 1, &end, 10);
			while (*end == ' ')
				end++;
			if (strncmp(end, "kB", 2) == 0)
				v *= 1024;
			return v;
		}
	}
	return -1;
}

bool procfs_stat_refresh(void)
{
	int fd = open("/proc/sys/vm/stat_refresh", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	/* Folds every CPU's pending vmstat deltas into the global counters
	 * /proc/meminfo reports; EINVAL only says some counter was negative. */
	bool ok = write(fd, "1\n", 2) == 2 || errno == EINVAL;
	close(fd);
	return ok;
}

int64_t procfs_meminfo_bytes(const char *field)
{
	char buf[8192];
	if (procfs_read("/proc/meminfo", buf, sizeof(buf)) < 0)
		return -1;
	return field_bytes(buf, field);
}

int64_t procfs_status_bytes(pid_t pid, const char *field)
{
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (procfs_read(path, buf, sizeof(buf)) < 0)
		return -1;
	return field_bytes(buf, field);
}

int64_t procfs_vmstat(const char *name)
{
	char buf[16384];
	size_t nlen = strlen(name);
	if (procfs_read("/proc/vmstat", buf, sizeof(buf)) < 0)
		return -1;
	for (const char *p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, name, nlen) == 0 && p[nlen] == ' ')
			return strtoll(p + nlen + 1, NULL, 10);
	return -1;
}

int procfs_read_long(const char *path, long *out)
{
	char buf[64], *end;
	if (procfs_read(path, buf, sizeof(buf)) < 0)
		return -1;
	errno = 0;
	long v = strtol(buf, &end, 10);
	if (end == buf || errno) {
		errno = EINVAL;
		return -1;
	}
	*out = v;
	return 0;
}

int procfs_write_long(const char *path, long value)
{
	char buf[32];
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int n = snprintf(buf, sizeof(buf), "%ld\n", value);
	ssize_t w = write(fd, buf, (size_t)n);
	int e = errno;
	if (close(fd) < 0 && w == n)
		return -1;
	errno = e;
	return w == n ? 0 : -1;
}

static uint64_t kb_value(const char *line, const char *field)
{
	size_t flen = strlen(field);
	if (strncmp(line, field, flen) != 0 || line[flen] != ':')
		return UINT64_MAX;
	return strtoull(line + flen + 1, NULL, 10) * 1024;
}

/* Line-by-line reader over an fd with a fixed buffer. */
struct line_reader {
	int fd;
	char buf[8192];
	size_t start, end;
	bool eof;
};

static const char *next_line(struct line_reader *lr)
{
	for (;;) {
		char *nl = memchr(lr->buf + lr->start, '\n', lr->end - lr->start);
		if (nl) {
			*nl = '\0';
			const char *line = lr->buf + lr->start;
			lr->start = (size_t)(nl - lr->buf) + 1;
			return line;
		}
		if (lr->eof)
			return NULL;
		memmove(lr->buf, lr->buf + lr->start, lr->end - lr->start);
		lr->end -= lr->start;
		lr->start = 0;
		if (lr->end >= sizeof(lr->buf) - 1) /* over-long line: drop it */
			lr->end = 0;
		ssize_t n = read(lr->fd, lr->buf + lr->end, sizeof(lr->buf) - 1 - lr->end);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			lr->eof = true;
			if (lr->end > 0) {
				lr->buf[lr->end] = '\n';
				lr->end++;
			}
			continue;
		}
		lr->end += (size_t)n;
	}
}

static bool is_vma_header(const char *line)
{
	/* "20000000000-20004000000 rw-s ..." */
	const char *p = line;
	while ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))
		p++;
	return p != line && *p == '-';
}

int procfs_smaps_region(pid_t pid, uintptr_t addr, struct smaps_region *out)
{
	char path[64];
	struct line_reader *lr = malloc(sizeof(*lr));
	if (!lr)
		return -1;
	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	lr->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (lr->fd < 0) {
		free(lr);
		return -1;
	}
	lr->start = lr->end = 0;
	lr->eof = false;
	bool inside = false;
	const char *line;
	while ((line = next_line(lr))) {
		if (is_vma_header(line)) {
			if (inside)
				break;
			inside = strtoull(line, NULL, 16) == (unsigned long long)addr;
			out->found = inside;
			continue;
		}
		if (!inside)
			continue;
		uint64_t v;
		if ((v = kb_value(line, "Size")) != UINT64_MAX) out->size_bytes = v;
		else if ((v = kb_value(line, "Rss")) != UINT64_MAX) out->rss_bytes = v;
		else if ((v = kb_value(line, "KernelPageSize")) != UINT64_MAX) out->kernel_page_bytes = v;
		else if ((v = kb_value(line, "MMUPageSize")) != UINT64_MAX) out->mmu_page_bytes = v;
		else if ((v = kb_value(line, "AnonHugePages")) != UINT64_MAX) out->anon_huge_bytes = v;
		else if ((v = kb_value(line, "ShmemPmdMapped")) != UINT64_MAX) out->shmem_pmd_bytes = v;
		else if ((v = kb_value(line, "FilePmdMapped")) != UINT64_MAX) out->file_pmd_bytes = v;
		else if ((v = kb_value(line, "Private_Dirty")) != UINT64_MAX) out->private_dirty_bytes = v;
		else if ((v = kb_value(line, "Shared_Dirty")) != UINT64_MAX) out->shared_dirty_bytes = v;
		else if (strncmp(line, "VmFlags:", 8) == 0)
			snprintf(out->vmflags, sizeof(out->vmflags), "%s", line + 9);
	}
	close(lr->fd);
	free(lr);
	return 0;
}

int64_t procfs_private_dirty_bytes(pid_t pid)
{
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	if (procfs_read(path, buf, sizeof(buf)) < 0)
		return -1;
	const char *p = strstr(buf, "\nPrivate_Dirty:");
	return p ? (int64_t)(strtoull(p + 15, NULL, 10) * 1024) : -1;
}
