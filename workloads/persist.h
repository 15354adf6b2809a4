/* persist.h - making writes to the region durable, the way a database on
 * persistent memory would.
 *
 * The path is the backend's statement (workload_ctx.persist), not a guess
 * from the mapping: when the backend maps a DAX file MAP_SYNC
 * (PERSIST_PMEM), writes are made durable from user space with cache-line
 * flushes and a fence (pmem_persist, pmem_memcpy_persist), which is correct
 * by virtual address in an mshare consumer too (its placeholder VMA, which
 * libpmem's pmem_is_pmem() cannot see as pmem, reaches the same physical
 * pages). Otherwise the page-aligned range is written back with
 * msync(MS_SYNC) (PERSIST_MSYNC, and PERSIST_VOLATILE where there is
 * nothing to write back). The harness never starts a workload that
 * persists where msync() would silently do nothing (PERSIST_NONE). The
 * path taken is recorded per worker: the same workload gives very
 * different figures on the two.
 */
#ifndef MSHARE_BENCH_PERSIST_H
#define MSHARE_BENCH_PERSIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "workload.h"

struct pmem_lib;

struct persist {
	const struct pmem_lib *pmem; /* pmem_persist, else (NULL) msync(MS_SYNC) */
	size_t sys_page;  /* msync works on whole base pages */
};

/* The path for the worker's region, from ctx->persist. 0, or -1 with the
 * reason in err[] when the backend stated no usable path (the harness
 * refuses those runs before any worker starts). */
int persist_init(struct persist *p, const struct workload_ctx *ctx, char *err, size_t err_len);
/* Make [addr, addr + len) durable. 0, or -1 with errno when msync fails. */
int persist_range(const struct persist *p, const void *addr, size_t len);
/* Copy len bytes to dst and make them durable. 0 or -1 as above. */
int persist_memcpy(const struct persist *p, void *dst, const void *src, size_t len);
/* The run's path from the merged per-worker counts of each: "pmem",
 * "msync", or "mixed" when workers differ (results.workload.persist_path). */
const char *persist_merged_path(uint64_t pmem_workers, uint64_t msync_workers);

#endif
