/* persist_mode.h - how writes to a region are made durable: a fact the
 * backend states (struct region) and the workloads that persist act on
 * (struct workload_ctx). Never guessed from the mapping: an mshare
 * consumer's VMA is a placeholder that libpmem cannot inspect.
 */
#ifndef MSHARE_BENCH_PERSIST_MODE_H
#define MSHARE_BENCH_PERSIST_MODE_H

enum persist_mode {
	/* The backend said nothing: workloads that persist refuse. */
	PERSIST_UNSTATED = 0,
	/* A DAX file mapped MAP_SHARED_VALIDATE|MAP_SYNC: CPU cache flushes
	 * and a fence from user space (libpmem's pmem_persist) are durable,
	 * by virtual address, whichever process maps the same pages. */
	PERSIST_PMEM,
	/* msync(MS_SYNC) writes the data back: page-cache files, DAX without
	 * MAP_SYNC, mshare on a kernel that carries msync to the host mm. */
	PERSIST_MSYNC,
	/* RAM (tmpfs, shared anonymous memory, hugetlbfs): nothing outlives a
	 * reboot; msync(MS_SYNC) has nothing to write back and is still
	 * called, as a database on such memory would. */
	PERSIST_VOLATILE,
	/* msync() would return 0 and write nothing back although the data is
	 * on a persistent medium: workloads that persist refuse to run. */
	PERSIST_NONE,
};

/* "unstated", "pmem", "msync", "volatile", "none" */
static inline const char *persist_mode_name(enum persist_mode m)
{
	switch (m) {
	case PERSIST_PMEM: return "pmem";
	case PERSIST_MSYNC: return "msync";
	case PERSIST_VOLATILE: return "volatile";
	case PERSIST_NONE: return "none";
	case PERSIST_UNSTATED: break;
	}
	return "unstated";
}

#endif
