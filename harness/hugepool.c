/* hugepool.c - per-size huge page pool via /sys/kernel/mm/hugepages. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hugepool.h"
#include "procfs.h"

void hugepool_dir(size_t page_bytes, char *out, size_t len)
{
	snprintf(out, len, "/sys/kernel/mm/hugepages/hugepages-%zukB", page_bytes / 1024);
}

static int pool_read(size_t page_bytes, const char *file, long *v)
{
	char dir[128], path[192];
	hugepool_dir(page_bytes, dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return procfs_read_long(path, v);
}

long hugepool_available(size_t page_bytes)
{
	long free_pages, resv;
	if (pool_read(page_bytes, "free_hugepages", &free_pages) || pool_read(page_bytes, "resv_hugepages", &resv))
		return -1;
	return free_pages - resv;
}

int hugepool_reserve(size_t page_bytes, long pages, long *added, char *err, size_t err_len)
{
	char dir[128], path[192];
	long avail = hugepool_available(page_bytes), total;

	*added = 0;
	hugepool_dir(page_bytes, dir, sizeof(dir));
	if (avail < 0) {
		snprintf(err, err_len, "no pool of %zu kB huge pages on this kernel (%s missing)", page_bytes / 1024, dir);
		return -1;
	}
	if (avail >= pages)
		return 0;
	snprintf(path, sizeof(path), "%s/nr_hugepages", dir);
	if (procfs_read_long(path, &total)) {
		snprintf(err, err_len, "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	long want = pages - avail;
	if (procfs_write_long(path, total + want) != 0) {
		int e = errno;
		procfs_write_long(path, total);
		snprintf(err, err_len, "cannot raise %s from %ld to %ld: %s", path, total, total + want, strerror(e));
		return -1;
	}
	long now = total;
	procfs_read_long(path, &now);
	if (now < total + want) {
		/* Give back the part we got; the run cannot go ahead. */
		if (now > total)
			procfs_write_long(path, total);
		snprintf(err, err_len,
			 "the kernel could supply only %ld of the %ld extra %zu kB huge pages this run needs "
			 "(%ld needed, %ld were free; %s stays at %ld)",
			 now - total, want, page_bytes / 1024, pages, avail, path, total);
		return -1;
	}
	*added = want;
	return 0;
}

void hugepool_release(size_t page_bytes, long added)
{
	char dir[128], path[192];
	long total;

	if (added <= 0)
		return;
	hugepool_dir(page_bytes, dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/nr_hugepages", dir);
	if (procfs_read_long(path, &total) == 0)
		procfs_write_long(path, total >= added ? total - added : 0);
}
