/* persist.h - making writes to the region durable, the way a database on
 * persistent memory would.
 *
 * When libpmem says the whole region is persistent memory (pmem_is_pmem:
 * a DAX mapping whose CPU stores reach the media with cache flushes, e.g.
 * MAP_SYNC), writes are made durable from user space with cache-line
 * flushes and a fence (pmem_persist, pmem_memcpy_persist). Otherwise the
 * page-aligned range is written back with msync(MS_SYNC). The path taken is
 * recorded, never assumed: the same workload gives very different figures
 * on the two.
 */
#ifndef MSHARE_BENCH_PERSIST_H
#define MSHARE_BENCH_PERSIST_H

#include <stdbool.h>
#include <stddef.h>

struct persist {
	bool pmem;        /* pmem_is_pmem(base, size) was true */
	size_t sys_page;  /* msync works on whole base pages */
};

/* Decide the path for the region [base, base + size). */
void persist_init(struct persist *p, void *base, size_t size);
/* Make [addr, addr + len) durable. 0, or -1 with errno when msync fails. */
int persist_range(const struct persist *p, const void *addr, size_t len);
/* Copy len bytes to dst and make them durable. 0 or -1 as above. */
int persist_memcpy(const struct persist *p, void *dst, const void *src, size_t len);
/* "pmem" or "msync". */
const char *persist_path_name(const struct persist *p);

#endif
