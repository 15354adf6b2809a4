/* preflight.c - refuse a run that would hit a system limit, before
 * anything is started, with a message naming the limit and its value. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "backend_map.h"
#include "hugepool.h"
#include "parse.h"
#include "procfs.h"
#include "run.h"

/* Kernel memory of one more process beyond its page tables for the region:
 * task and mm structures, kernel stack, its own page tables (PGD and the
 * tables for its stack, heap and libraries) and the pages it dirties.
 * An estimate for this check only; the record reports measured figures. */
#define OVERHEAD_PER_WORKER (256u << 10)
#define SPARE_TASKS 256
#define NPROC_SPARE_TASKS 16 /* a user's own tasks besides the workers */
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

/* Tasks (threads) of this real user: what RLIMIT_NPROC counts, unlike
 * tasks_now (every task on the host). Those /proc hides are not counted. */
static long user_tasks_now(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	long n = 0;
	uid_t me = getuid();

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char path[64], buf[2048];
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%.20s/status", e->d_name);
		if (procfs_read(path, buf, sizeof(buf)) < 0)
			continue;
		const char *uid = strstr(buf, "\nUid:"), *threads = strstr(buf, "\nThreads:");
		if (uid && threads && strtoul(uid + 5, NULL, 10) == me)
			n += strtol(threads + 9, NULL, 10);
	}
	closedir(d);
	return n;
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

/* Bytes of region data the run faults in, at most: hugetlb allocates the
 * whole region in setup; otherwise the workload's touches, each bringing
 * in a base page with --page 4k on shared memory, or up to a PMD-sized
 * 2 MiB (a transparent huge page, or file read-around) otherwise. */
static uint64_t data_bytes(const struct run_config *cfg, bool shmem)
{
	size_t stride = cfg->workload->touch_stride;

	if (cfg->backend->data == BACKEND_DATA_HUGETLB || stride == 0)
		return cfg->size;
	uint64_t touches = (cfg->addr + cfg->size - 1) / stride - cfg->addr / stride + 1;
	uint64_t per_touch = shmem && cfg->page == PAGE_MODE_4K ? 4096 : 2ull << 20;
	return touches * per_touch < cfg->size ? touches * per_touch : cfg->size;
}

/* Where the data lives; 0, or -1 with a message when the path cannot be
 * looked at (setup would fail on it too). */
static int data_home(struct run_state *rs, bool *in_memory, bool *shmem, char *err, size_t err_len)
{
	const struct backend_ops *b = rs->cfg.backend;
	struct preflight_figures *pf = &rs->preflight;
	char fs[32];
	bool dax = false, ram = false;

	*in_memory = true;
	*shmem = false;
	switch (b->data) {
	case BACKEND_DATA_SHMEM:
		*shmem = true;
		snprintf(pf->data_home, sizeof(pf->data_home), "shared memory");
		return 0;
	case BACKEND_DATA_HUGETLB:
		*in_memory = false;
		snprintf(pf->data_home, sizeof(pf->data_home), "the %zu kB huge page pool", b->page_bytes / 1024);
		return 0;
	case BACKEND_DATA_FILE:
		break;
	}
	const char *path = rs->region.path ? rs->region.path : b->default_path;
	if (!path || backend_path_data(path, fs, sizeof(fs), &dax, &ram) != 0) {
		snprintf(err, err_len, "cannot look at --path %s: %s", path ? path : "(none)", strerror(errno));
		return -1;
	}
	if (dax) {
		*in_memory = false;
		snprintf(pf->data_home, sizeof(pf->data_home), "the DAX device under %s (%s)", path, fs);
	} else if (ram) {
		*shmem = true;
		snprintf(pf->data_home, sizeof(pf->data_home), "shared memory (%s %s)", fs, path);
	} else {
		snprintf(pf->data_home, sizeof(pf->data_home), "page cache (%s %s)", fs, path);
	}
	return 0;
}

/* Memory: the region's data, the page tables and the workers' own memory
 * against MemAvailable; for hugetlb the pool instead of the data, and
 * what the pool must grow by (which comes out of MemAvailable). */
static int memory_check(struct run_state *rs, char *err, size_t err_len)
{
	struct preflight_figures *pf = &rs->preflight;
	const struct run_config *cfg = &rs->cfg;
	const struct backend_ops *b = cfg->backend;
	bool in_memory, shmem;
	char a[32], c[32], d[32], e[32], f[32];

	if (data_home(rs, &in_memory, &shmem, err, err_len) != 0)
		return -1;
	pf->expected_data_bytes = data_bytes(cfg, shmem);
	rs->region.data_bytes = pf->expected_data_bytes; /* shm: the room its tmpfs needs */
	pf->expected_data_in_memory_bytes = in_memory ? pf->expected_data_bytes : 0;
	if (b->data == BACKEND_DATA_HUGETLB) {
		char dir[128], path[192];
		pf->pool_pages_needed = (long)(cfg->size / b->page_bytes);
		pf->pool_pages_available = hugepool_available(b->page_bytes);
		long short_by = pf->pool_pages_needed - (pf->pool_pages_available > 0 ? pf->pool_pages_available : 0);
		hugepool_dir(b->page_bytes, dir, sizeof(dir));
		snprintf(path, sizeof(path), "%s/nr_hugepages", dir);
		if (short_by > 0 && access(path, W_OK) != 0) {
			snprintf(err, err_len,
				 "--size %s needs %ld huge pages of %zu kB, the pool has %ld free and %s is not "
				 "writable (needs root)",
				 format_bytes(cfg->size, a, sizeof(a)), pf->pool_pages_needed, b->page_bytes / 1024,
				 pf->pool_pages_available, path);
			return -1;
		}
		pf->pool_growth_bytes = short_by > 0 ? (uint64_t)short_by * b->page_bytes : 0;
	}

	/* Page tables: one 8-byte entry per page of the region, per worker,
	 * or once in all when the backend shares them. Without forced huge
	 * pages, assume the worst (4 KiB) anyway; a device-DAX device maps
	 * only in entries of its alignment (it refuses smaller faults). */
	uint64_t page = b->page_bytes ? b->page_bytes : 4096;
	struct pmem_namespace ns;
	char why[256];
	const char *path = rs->region.path ? rs->region.path : b->default_path;
	if (!b->page_bytes && b->data == BACKEND_DATA_FILE && pmem_path_is_chardev(path) &&
	    pmem_ns_of_devdax(path, &ns, why, sizeof(why)) == 0)
		page = ns.align;
	uint64_t one_set = cfg->size / page * 8;
	uint64_t workers = cfg->workers;
	pf->expected_pt_bytes_per_worker = b->page_tables_shared ? 0 : one_set;
	pf->expected_overhead_bytes_per_worker = OVERHEAD_PER_WORKER;
	uint64_t pt_total = b->page_tables_shared ? one_set : one_set * workers;
	pf->expected_total_bytes = pf->expected_data_in_memory_bytes + pf->pool_growth_bytes + pt_total +
				   OVERHEAD_PER_WORKER * workers;
	pf->mem_available_bytes = procfs_meminfo_bytes("MemAvailable");
	if (cfg->skip_memory_check || pf->mem_available_bytes <= 0 ||
	    pf->expected_total_bytes <= (uint64_t)pf->mem_available_bytes / 10 * 9)
		return 0;

	char data[200];
	if (b->data == BACKEND_DATA_HUGETLB)
		snprintf(data, sizeof(data), "%s the %zu kB huge page pool must grow by (%ld pages needed, %ld free)",
			 format_bytes(pf->pool_growth_bytes, a, sizeof(a)), b->page_bytes / 1024,
			 pf->pool_pages_needed, pf->pool_pages_available);
	else if (!in_memory)
		snprintf(data, sizeof(data), "no region data in memory (it stays on %s)", pf->data_home);
	else
		snprintf(data, sizeof(data), "%s of region data in %s, shared by all workers",
			 format_bytes(pf->expected_data_in_memory_bytes, a, sizeof(a)), pf->data_home);
	char pt_each[48], g[32];
	if (b->page_tables_shared)
		snprintf(pt_each, sizeof(pt_each), "one set, shared");
	else
		snprintf(pt_each, sizeof(pt_each), "%s per worker", format_bytes(one_set, g, sizeof(g)));
	snprintf(err, err_len,
		 "%u workers over --size %s need about %s, more than 90%% of MemAvailable = %s: %s; "
		 "%s of page tables (%s); %s of process memory (256 KiB per worker). Use a smaller --size or "
		 "fewer workers (or --skip-memory-check to provoke the OOM killer on purpose)",
		 cfg->workers, format_bytes(cfg->size, c, sizeof(c)),
		 format_bytes(pf->expected_total_bytes, d, sizeof(d)),
		 format_bytes((uint64_t)pf->mem_available_bytes, e, sizeof(e)), data,
		 format_bytes(pt_total, f, sizeof(f)), pt_each,
		 format_bytes(OVERHEAD_PER_WORKER * workers, g, sizeof(g)));
	return -1;
}

int preflight_check(struct run_state *rs, char *err, size_t err_len)
{
	struct preflight_figures *pf = &rs->preflight;
	const struct run_config *cfg = &rs->cfg;
	long workers = (long)cfg->workers;

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
		/* RLIMIT_NPROC counts this real user's tasks, not the host's. */
		long mine = geteuid() != 0 && rl.rlim_cur != RLIM_INFINITY ? user_tasks_now() : 0;
		if (mine < 0)
			mine = pf->tasks_now;
		rlim_t need = (rlim_t)(mine + workers + NPROC_SPARE_TASKS);
		/* Root (and CAP_SYS_RESOURCE) is not held to RLIMIT_NPROC by fork. */
		if (geteuid() != 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
			if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= need) {
				rl.rlim_cur = rl.rlim_max;
				if (setrlimit(RLIMIT_NPROC, &rl) == 0)
					pf->nproc_raised = true;
			}
			if (!pf->nproc_raised) {
				snprintf(err, err_len,
					 "%u workers exceed RLIMIT_NPROC (soft %llu, hard %llu, %ld tasks of this user "
					 "running, %d kept spare); raise it with ulimit -u",
					 cfg->workers, (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max,
					 mine, NPROC_SPARE_TASKS);
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

	if (memory_check(rs, err, err_len) != 0)
		return -1;
	return 0;
}

void preflight_estimate_text(const struct run_state *rs, char *out, size_t len)
{
	const struct preflight_figures *pf = &rs->preflight;
	char a[32];

	snprintf(out, len,
		 "region data faulted in (at most %s, in %s%s%s) + region pages x 8 B%s + 256 KiB per worker "
		 "(an estimate for the check, not a measurement)",
		 format_bytes(pf->expected_data_bytes, a, sizeof(a)), pf->data_home,
		 rs->cfg.backend->data != BACKEND_DATA_HUGETLB && pf->expected_data_in_memory_bytes == 0 &&
				 pf->expected_data_bytes > 0
			 ? ", not memory"
			 : "",
		 rs->cfg.backend->data == BACKEND_DATA_HUGETLB ? ": only what the pool must grow by counts" : "",
		 rs->cfg.backend->page_tables_shared ? " once (shared page tables)" : " per worker");
}
