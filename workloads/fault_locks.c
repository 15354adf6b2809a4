/* fault_locks.c - the lock contention of N workers first-touching one
 * region at the same time (issue 42, item 4).
 *
 * Every worker touches every page of the region (one per --touch-stride),
 * in address order from the start, all at once: each touch is timed and
 * classified by the harness (workload_touch_page: results.fault_cost
 * splits the faults into first ones, ones on a page another worker had
 * populated, and ones that slept, on a lock or on another's fault of the
 * same page). Around the touch, worker 0 clears /proc/lock_stat
 * (CONFIG_LOCK_STAT: the mshare-counters kernel flavours) and reads it
 * once every worker is done, so that the record holds the contentions,
 * wait times and acquisitions of the touch alone:
 *   mmap_lock         every mm's (one lock_stat class): a worker's own, and
 *                     with mshare v1 the host mm's too;
 *   mmap_lock_nested  the class taken nested ("&mm->mmap_lock/1"): with
 *                     mshare v1 the host mm's, which a sharer's fault takes
 *                     inside its own (patch 0027) - one lock for all sharers;
 *   i_mmap_rwsem      the file's (hugetlbfs has its own class, counted too);
 *   ptl               the page-table locks (split ptlock, page_table_lock);
 *   hugetlb_fault_mutex  hugetlb's per-page fault mutexes;
 *   xa_lock           the xarrays' spinlocks (every one class: a DAX file's
 *                     entries are locked through its page cache xarray);
 * and the most contended classes of all. The workers are released by a
 * second barrier of the workload's own (they are all in run() and asleep
 * when worker 0 clears lock_stat), so the harness's start-up is not in it.
 * lock_stat is system-wide: what else the guest does meanwhile counts too.
 * Where lock_stat is missing the record says false and why, never zeros.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "clock.h"
#include "futex.h"
#include "json.h"
#include "lock_stat.h"
#include "workload.h"

enum { P_TOUCH_STRIDE };
enum { C_TOUCHES };

enum fl_group { G_MMAP_LOCK, G_MMAP_LOCK_NESTED, G_I_MMAP, G_PTL, G_HUGETLB_FAULT, G_XA_LOCK, G_COUNT };
static const char *const group_names[G_COUNT] = {
	"mmap_lock", "mmap_lock_nested", "i_mmap_rwsem", "ptl", "hugetlb_fault_mutex", "xa_lock",
};
static const char *const g_mmap[] = { "mmap_lock", NULL };
static const char *const g_nested[] = { "mmap_lock/", NULL };
static const char *const g_i_mmap[] = { "i_mmap_rwsem", NULL };
static const char *const g_ptl[] = { "ptlock", "page_table_lock", NULL };
static const char *const g_hugetlb[] = { "hugetlb_fault_mutex", NULL };
static const char *const g_xa[] = { "xa_lock", NULL };
static const char *const *const group_pats[G_COUNT] = { g_mmap, g_nested, g_i_mmap, g_ptl, g_hugetlb, g_xa };

#define FL_TOP 8
/* A guard against a worker that never comes: ten minutes. */
#define FL_GUARD_NS 600000000000ull

struct fl_shared {
	uint32_t arrived; /* workers in run(), waiting for go */
	uint32_t go;      /* set by worker 0 once lock_stat is cleared */
	uint32_t done;    /* workers that finished their touch */
	uint32_t stop;    /* worker 0 gave up: everybody leaves */
	bool lock_stat;   /* cleared before and read after */
	char why[200];    /* why not */
	int cpus_online;
	uint64_t worker_cpus; /* bit per CPU a worker touched from */
	uint64_t window_ns;   /* worker 0: from go until every worker was done */
	struct lock_stat_figures group[G_COUNT];
	int top_n;
	struct lock_stat_class top[FL_TOP];
};

struct fl_config {
	struct fl_shared *sh;
	uint64_t touch_stride;
};

static int fl_prepare(const union workload_value *v, const char *const *text, size_t region_size, void *config,
		      char *err, size_t err_len)
{
	struct fl_config *c = config;

	(void)text;
	c->touch_stride = v[P_TOUCH_STRIDE].u;
	if (c->touch_stride > region_size) {
		snprintf(err, err_len, "--touch-stride %llu is larger than the region (%zu bytes)",
			 (unsigned long long)c->touch_stride, region_size);
		return -1;
	}
	c->sh = mmap(NULL, sizeof(*c->sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (c->sh == MAP_FAILED) {
		c->sh = NULL;
		snprintf(err, err_len, "fault-locks: cannot map its shared results: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* Read /proc/lock_stat in pieces of whole lines through a buffer on the
 * stack, adding each piece to the groups and the most contended classes.
 * Not one big buffer: touching megabytes of it would give worker 0 page-table
 * pages of its own that the record's page-table figures would count. */
static int lock_stat_read(struct fl_shared *sh)
{
	char buf[16384];
	size_t have = 0;
	int fd = open("/proc/lock_stat", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	memset(sh->group, 0, sizeof(sh->group));
	sh->top_n = 0;
	for (;;) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		have += (size_t)n;
		buf[have] = '\0';
		char *end = n == 0 ? buf + have : strrchr(buf, '\n');
		if (!end) {
			if (have + 1 < sizeof(buf))
				continue;
			end = buf + have; /* a line longer than the buffer: cut */
		}
		char keep = *end;
		*end = '\0';
		for (int g = 0; g < G_COUNT; g++)
			lock_stat_group_add(buf, group_pats[g], NULL, &sh->group[g]);
		sh->top_n = lock_stat_top_more(buf, sh->top, FL_TOP, sh->top_n);
		*end = keep;
		if (n == 0)
			break;
		size_t used = (size_t)(end - buf) + (keep == '\n');
		memmove(buf, buf + used, have - used);
		have -= used;
	}
	close(fd);
	return 0;
}

static int lock_stat_clear(char *why, size_t why_len)
{
	int fd = open("/proc/lock_stat", O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, why_len, "cannot open /proc/lock_stat for writing: %s (a kernel without CONFIG_LOCK_STAT, "
			 "or not root; the mshare-counters flavours have it)", strerror(errno));
		return -1;
	}
	ssize_t n = write(fd, "0", 1);
	int e = errno;
	close(fd);
	if (n != 1) {
		snprintf(why, why_len, "cannot clear /proc/lock_stat: %s", strerror(e));
		return -1;
	}
	return 0;
}

static void touch_all(struct workload_ctx *ctx, const struct fl_config *c)
{
	size_t step = c->touch_stride > ctx->page_bytes ? c->touch_stride : ctx->page_bytes;
	char *base = ctx->base;

	for (size_t off = 0; off < ctx->size; off += step)
		workload_touch_page(ctx, base + off);
	ctx->slot->counters[C_TOUCHES] += (ctx->size + step - 1) / step;
}

static int fl_run(struct workload_ctx *ctx, char *err, size_t err_len)
{
	const struct fl_config *c = ctx->config;
	struct fl_shared *sh = c->sh;

	if (!sh) {
		snprintf(err, err_len, "no shared results (prepare did not run)");
		return -1;
	}
	if (ctx->worker != 0) {
		__atomic_add_fetch(&sh->arrived, 1, __ATOMIC_ACQ_REL);
		uint64_t start = clock_now_ns();
		while (!__atomic_load_n(&sh->go, __ATOMIC_ACQUIRE)) {
			if (__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE) || clock_now_ns() - start > FL_GUARD_NS)
				return 0; /* worker 0 says why */
			futex_wait_u32(&sh->go, 0, 1000000000ull);
		}
		int cpu = sched_getcpu();
		touch_all(ctx, c);
		if (cpu >= 0 && cpu < 64)
			__atomic_fetch_or(&sh->worker_cpus, 1ull << cpu, __ATOMIC_RELAXED);
		__atomic_add_fetch(&sh->done, 1, __ATOMIC_ACQ_REL);
		return 0;
	}

	/* Worker 0: every other worker is in run(), asleep on go. */
	uint64_t start = clock_now_ns();
	while (__atomic_load_n(&sh->arrived, __ATOMIC_ACQUIRE) < ctx->workers - 1) {
		if (clock_now_ns() - start > FL_GUARD_NS) {
			snprintf(err, err_len, "only %u of the %u other workers reached the touch barrier in 10 minutes",
				 __atomic_load_n(&sh->arrived, __ATOMIC_ACQUIRE), ctx->workers - 1);
			__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
			futex_wake_all(&sh->go);
			return -1;
		}
		usleep(1000);
	}
	sh->cpus_online = (int)sysconf(_SC_NPROCESSORS_ONLN);
	sh->lock_stat = lock_stat_clear(sh->why, sizeof(sh->why)) == 0;
	int cpu = sched_getcpu();
	uint64_t t0 = clock_now_ns();
	__atomic_store_n(&sh->go, 1, __ATOMIC_RELEASE);
	futex_wake_all(&sh->go);
	touch_all(ctx, c);
	if (cpu >= 0 && cpu < 64)
		__atomic_fetch_or(&sh->worker_cpus, 1ull << cpu, __ATOMIC_RELAXED);
	__atomic_add_fetch(&sh->done, 1, __ATOMIC_ACQ_REL);
	start = clock_now_ns();
	while (__atomic_load_n(&sh->done, __ATOMIC_ACQUIRE) < ctx->workers) {
		if (clock_now_ns() - start > FL_GUARD_NS) {
			snprintf(err, err_len, "only %u of the %u workers finished their touch in 10 minutes",
				 __atomic_load_n(&sh->done, __ATOMIC_ACQUIRE), ctx->workers);
			return -1;
		}
		usleep(1000);
	}
	sh->window_ns = clock_now_ns() - t0;
	if (!sh->lock_stat)
		return 0;
	if (lock_stat_read(sh) != 0) {
		sh->lock_stat = false;
		snprintf(sh->why, sizeof(sh->why), "cannot read /proc/lock_stat after the touch: %s", strerror(errno));
	}
	return 0;
}

static void figures(struct json_writer *w, const char *prefix, const struct lock_stat_figures *f)
{
	char key[64];
	snprintf(key, sizeof(key), "%s_contentions", prefix);
	json_key_i64(w, key, f->contentions);
	snprintf(key, sizeof(key), "%s_wait_ns", prefix);
	json_key_i64(w, key, f->wait_ns);
	snprintf(key, sizeof(key), "%s_wait_max_ns", prefix);
	json_key_i64(w, key, f->wait_max_ns);
	snprintf(key, sizeof(key), "%s_acquisitions", prefix);
	json_key_i64(w, key, f->acquisitions);
	snprintf(key, sizeof(key), "%s_classes", prefix);
	json_key_i64(w, key, f->lines);
}

static void fl_report(struct json_writer *w, const struct workload_slot *merged, const void *config,
		      unsigned workers, double wall_s)
{
	const struct fl_config *c = config;
	const struct fl_shared *sh = c->sh;

	(void)merged;
	(void)workers;
	(void)wall_s;
	if (!sh)
		return;
	json_key_u64(w, "touch_stride_bytes", c->touch_stride);
	json_key_i64(w, "cpus_online", sh->cpus_online);
	json_key_hex(w, "worker_cpus", sh->worker_cpus);
	json_key_u64(w, "workers_done", sh->done);
	json_key_u64(w, "window_ns", sh->window_ns);
	json_key_string(w, "window_meaning",
			"worker 0's clock from releasing every worker (lock_stat just cleared) until the last one "
			"finished its touch, in ns of environment.clock (under QEMU TCG an emulated time, not hardware time)");
	if (!sh->lock_stat) {
		json_key_bool(w, "lock_stat", false);
		json_key_string(w, "lock_stat_unavailable_why", sh->why[0] ? sh->why : "the touch did not complete");
		return;
	}
	json_begin_object(w, "lock_stat");
	for (int g = 0; g < G_COUNT; g++)
		figures(w, group_names[g], &sh->group[g]);
	json_begin_array(w, "most_contended");
	for (int i = 0; i < sh->top_n; i++) {
		json_begin_object(w, NULL);
		json_key_string(w, "class", sh->top[i].name);
		figures(w, "lock", &sh->top[i].f);
		json_end_object(w);
	}
	json_end_array(w);
	json_end_object(w);
	json_key_string(w, "lock_stat_meaning",
			"/proc/lock_stat cleared just before every worker was released and read once all had "
			"touched the region: per group of lock classes, contentions, total and longest wait (ns; "
			"lock_stat prints us with two decimals), acquisitions and the class lines summed (a rwsem has "
			"a -W and a -R line). lock_stat is per class, not per lock: mmap_lock sums every mm's; "
			"mmap_lock_nested is the class taken nested (mshare v1: the host mm's, one lock for all "
			"sharers); system-wide, so anything else the guest did meanwhile counts too");
}

const struct workload_ops workload_fault_locks = {
	.name = "fault-locks",
	.description = "every worker first-touches every page of the region at the same time; the lock contention "
		       "it meets (lock_stat: mmap_lock, the host mm's for mshare, i_mmap_rwsem, page-table locks), "
		       "cleared before the touch and read after",
	.params = {
		{ .name = "touch-stride", .type = WP_SIZE, .min = 0, .max = UINT64_MAX, .default_value = "0",
		  .help = "each worker touches one page per this many bytes (0: every page)" },
	},
	.counter_names = { "touches", NULL },
	.touches_whole_region = true,
	.config_bytes = sizeof(struct fl_config),
	.prepare = fl_prepare,
	.run = fl_run,
	.report = fl_report,
};
