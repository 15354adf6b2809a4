/* persist.c - libpmem when the backend maps DAX MAP_SYNC, msync(MS_SYNC) otherwise.
 * libpmem is not linked: the harness loads it before fork for the runs that
 * need it (harness/pmem_lib.h). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "persist.h"
#include "pmem_lib.h"

int persist_init(struct persist *p, const struct workload_ctx *ctx, char *err, size_t err_len)
{
	p->sys_page = (size_t)sysconf(_SC_PAGESIZE);
	switch (ctx->persist) {
	case PERSIST_PMEM:
		p->pmem = pmem_lib();
		if (!p->pmem) {
			snprintf(err, err_len, "the region persists with libpmem, which the harness has not loaded");
			return -1;
		}
		return 0;
	case PERSIST_MSYNC:
	case PERSIST_VOLATILE:
		p->pmem = NULL;
		return 0;
	case PERSIST_NONE:
	case PERSIST_UNSTATED:
		break;
	}
	snprintf(err, err_len, "no durability path for this region (the backend stated %s)",
		 persist_mode_name(ctx->persist));
	return -1;
}

static int msync_range(const struct persist *p, const void *addr, size_t len)
{
	uintptr_t start = (uintptr_t)addr & ~(uintptr_t)(p->sys_page - 1);
	uintptr_t end = ((uintptr_t)addr + len + p->sys_page - 1) & ~(uintptr_t)(p->sys_page - 1);

	return msync((void *)start, end - start, MS_SYNC);
}

int persist_range(const struct persist *p, const void *addr, size_t len)
{
	if (p->pmem) {
		p->pmem->persist(addr, len);
		return 0;
	}
	return msync_range(p, addr, len);
}

int persist_memcpy(const struct persist *p, void *dst, const void *src, size_t len)
{
	if (p->pmem) {
		p->pmem->memcpy_persist(dst, src, len);
		return 0;
	}
	memcpy(dst, src, len);
	return msync_range(p, dst, len);
}

const char *persist_merged_path(uint64_t pmem_workers, uint64_t msync_workers)
{
	return pmem_workers && msync_workers ? "mixed" : pmem_workers ? "pmem" : "msync";
}
