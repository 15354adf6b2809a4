/* persist.c - libpmem when the region is pmem, msync(MS_SYNC) otherwise. */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <libpmem.h>

#include "persist.h"

void persist_init(struct persist *p, void *base, size_t size)
{
	p->pmem = pmem_is_pmem(base, size) != 0;
	p->sys_page = (size_t)sysconf(_SC_PAGESIZE);
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
		pmem_persist(addr, len);
		return 0;
	}
	return msync_range(p, addr, len);
}

int persist_memcpy(const struct persist *p, void *dst, const void *src, size_t len)
{
	if (p->pmem) {
		pmem_memcpy_persist(dst, src, len);
		return 0;
	}
	memcpy(dst, src, len);
	return msync_range(p, dst, len);
}

const char *persist_path_name(const struct persist *p)
{
	return p->pmem ? "pmem" : "msync";
}
