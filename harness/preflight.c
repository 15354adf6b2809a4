/* preflight.c - refuse a run that would hit a system limit, before
 * anything is started, with a message naming the limit and its value. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "parse.h"
#include "procfs.h"
#include "run.h"

/* Kernel memory of one more process beyond its page tables for the region:
 * task and mm structures, kernel stack, its own page tables (PGD and the
 * tables for its stack, heap and libraries) and the pages it dirties.
 * An estimate for this check only; the record reports measured figures. */
#define OVERHEAD_PER_WORKER (256u << 10)
#define SPARE_TASKS 256
#define SPARE_MAPS 64

static long tasks_now(void)
{
	char buf[128];
	/* "0.00 0.01 0.05 1/123 4567": runnable/total scheduling entities. */
	if (procfs_read("/proc/loadavg", buf, sizeof(buf)) < 0)
		return -1;
	char *slash = strchr(buf, '/');
	return slash ? strtol(slash + 1, NULL, 10) : -1;
}

static long count_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	long n = 0;
	int c;
	if (!f)
		return -1;
	while ((c = getc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

int preflight_check(struct run_state *rs, char *err, size_t err_len)
{
	struct preflight_figures *pf = &rs->preflight;
	const struct run_config *cfg = &rs->cfg;
	long workers = (long)cfg->workers;
	char a[32], b[32];

	pf->tasks_now = tasks_now();
	if (procfs_read_long("/proc/sys/kernel/pid_max", &pf->pid_max) == 0 &&
	    pf->tasks_now + workers + SPARE_TASKS > pf->pid_max) {
		snprintf(err, err_len,
			 "%u workers do not fit under kernel.pid_max = %ld (%ld tasks already running, %d kept spare); "
			 "raise /proc/sys/kernel/pid_max",
			 cfg->workers, pf->pid_max, pf->tasks_now, SPARE_TASKS);
		return -1;
	}
	if (procfs_read_long("/proc/sys/kernel/threads-max", &pf->threads_max) == 0 &&
	    pf->tasks_now + workers + SPARE_TASKS > pf->threads_max) {
		snprintf(err, err_len,
			 "%u workers do not fit under kernel.threads-max = %ld (%ld tasks already running); "
			 "raise /proc/sys/kernel/threads-max",
			 cfg->workers, pf->threads_max, pf->tasks_now);
		return -1;
	}
	struct rlimit rl;
	if (getrlimit(RLIMIT_NPROC, &rl) == 0) {
		rlim_t need = (rlim_t)(pf->tasks_now + workers + SPARE_TASKS);
		/* Root (and CAP_SYS_RESOURCE) is not held to RLIMIT_NPROC by fork. */
		if (geteuid() != 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
			if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= need) {
				rl.rlim_cur = rl.rlim_max;
				if (setrlimit(RLIMIT_NPROC, &rl) == 0)
					pf->nproc_raised = true;
			}
			if (!pf->nproc_raised) {
				snprintf(err, err_len,
					 "%u workers exceed RLIMIT_NPROC (soft %llu, hard %llu, ~%ld tasks running); "
					 "raise it with ulimit -u",
					 cfg->workers, (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max,
					 pf->tasks_now);
				return -1;
			}
		}
		pf->nproc_soft = rl.rlim_cur == RLIM_INFINITY ? -1 : (long long)rl.rlim_cur;
		pf->nproc_hard = rl.rlim_max == RLIM_INFINITY ? -1 : (long long)rl.rlim_max;
	}
	long maps = count_maps();
	if (procfs_read_long("/proc/sys/vm/max_map_count", &pf->max_map_count) == 0 && maps >= 0 &&
	    maps + SPARE_MAPS > pf->max_map_count) {
		snprintf(err, err_len, "vm.max_map_count = %ld leaves no room for the region (%ld maps already)",
			 pf->max_map_count, maps);
		return -1;
	}

	/* Page tables: one 8-byte entry per page of the region, per worker,
	 * or once in all when the backend shares them. Without forced base
	 * pages, assume the worst (4 KiB) anyway. */
	uint64_t page = 4096;
	if (strncmp(cfg->backend->name, "hugetlb-1g", 10) == 0)
		page = 1ull << 30;
	else if (strncmp(cfg->backend->name, "hugetlb", 7) == 0)
		page = 2ull << 20;
	uint64_t one_set = cfg->size / page * 8;
	pf->expected_pt_bytes_per_worker = cfg->backend->page_tables_shared ? 0 : one_set;
	pf->expected_overhead_bytes_per_worker = OVERHEAD_PER_WORKER;
	pf->expected_total_bytes =
		(pf->expected_pt_bytes_per_worker + OVERHEAD_PER_WORKER) * (uint64_t)cfg->workers;
	if (cfg->backend->page_tables_shared)
		pf->expected_total_bytes += one_set;
	pf->mem_available_bytes = procfs_meminfo_bytes("MemAvailable");
	if (!cfg->skip_memory_check && pf->mem_available_bytes > 0 &&
	    pf->expected_total_bytes > (uint64_t)pf->mem_available_bytes / 10 * 9) {
		snprintf(err, err_len,
			 "%u workers need about %s of page tables and process memory (%s per worker), more than "
			 "90%% of MemAvailable = %s; use fewer workers or a smaller --size "
			 "(or --skip-memory-check to provoke the OOM killer on purpose)",
			 cfg->workers, format_bytes(pf->expected_total_bytes, a, sizeof(a)),
			 format_bytes(pf->expected_pt_bytes_per_worker + OVERHEAD_PER_WORKER, b, sizeof(b)),
			 format_bytes((uint64_t)pf->mem_available_bytes, (char[32]){ 0 }, 32));
		return -1;
	}
	return 0;
}
