/* worker.c - what one worker process does between fork and exit.
 *
 * attach (timed) -> ready barrier -> workload -> publish figures ->
 * parked until the parent has measured -> detach (timed) -> exit.
 * Everything it reports goes into its own worker_area of the shared
 * results area; it allocates nothing, so its private memory stays small.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "clock.h"
#include "futex.h"
#include "run.h"

static uint64_t splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static void arrive(uint32_t *counter, unsigned workers)
{
	if (__atomic_add_fetch(counter, 1, __ATOMIC_ACQ_REL) == workers)
		futex_wake_all(counter);
}

static void wait_release(uint32_t *word)
{
	while (__atomic_load_n(word, __ATOMIC_ACQUIRE) == 0)
		futex_wait_u32(word, 0, 0);
}

static int ctx_attach(struct workload_ctx *ctx, char *err, size_t err_len)
{
	struct region *r = ctx->harness_private;
	if (r->base)
		return 0;
	const struct backend_ops *b = backend_find(r->backend_name);
	if (!b || b->attach(r, err, err_len) != 0)
		return -1;
	ctx->base = r->base;
	return 0;
}

static int ctx_detach(struct workload_ctx *ctx, char *err, size_t err_len)
{
	struct region *r = ctx->harness_private;
	const struct backend_ops *b = backend_find(r->backend_name);
	if (!b || b->detach(r, err, err_len) != 0)
		return -1;
	ctx->base = NULL;
	return 0;
}

static void fail(struct worker_figures *fig, int code, const char *what, const char *err)
	__attribute__((noreturn));
static void fail(struct worker_figures *fig, int code, const char *what, const char *err)
{
	snprintf(fig->error, sizeof(fig->error), "%s: %s", what, err);
	__atomic_store_n(&fig->phase, PHASE_FAILED, __ATOMIC_RELEASE);
	_exit(code);
}

/* --hw-instructions: this worker's counter, and the fixed cost of what
 * workload_touch_page does around a touch besides the touch (two counter
 * reads, two getrusage, two clock reads): the least of a few empty rounds.
 * Without a counter (it was there in the parent: should not happen) the
 * worker's touches are simply not counted. */
static void hw_counter_start(struct workload_slot *slot)
{
	char why[300];
	int fd = hw_counter_open(why, sizeof(why));
	uint64_t least = UINT64_MAX;

	if (fd < 0)
		return;
	for (unsigned i = 0; i < HW_COUNTER_BASELINE_REPEATS; i++) {
		uint64_t i0 = hw_counter_read(fd);
		getrusage(RUSAGE_THREAD, &slot->touch_ru[0]);
		uint64_t t0 = clock_now_ns();
		__asm__ __volatile__("" ::: "memory");
		uint64_t t1 = clock_now_ns();
		getrusage(RUSAGE_THREAD, &slot->touch_ru[1]);
		uint64_t i1 = hw_counter_read(fd);
		(void)t0;
		(void)t1;
		if (i0 && i1 > i0 && i1 - i0 < least)
			least = i1 - i0;
	}
	slot->fault_cost.hw_baseline = least == UINT64_MAX ? 0 : least;
	slot->hw_fd = fd;
}

void worker_main(struct run_state *rs, unsigned index)
{
	struct results_control *ctl = rs->area.control;
	struct worker_area *wa = results_area_own(&rs->area, index);
	if (!wa) {
		/* The table is unmapped: stderr and the exit status are all
		 * that is left to say it with. */
		fprintf(stderr, "mshare-bench: worker %u: cannot map its entry of the results area: %s\n", index,
			strerror(errno));
		_exit(WORKER_EXIT_ATTACH);
	}
	struct worker_figures *fig = &wa->fig;
	struct region *r = &rs->region;
	const struct run_config *cfg = &rs->cfg;
	char err[160];

	/* Die with the parent: no straggler outlives an interrupted run. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != rs->parent_pid)
		_exit(WORKER_EXIT_ORPHAN);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	if (rs->oom_protected)
		procfs_write_long("/proc/self/oom_score_adj", 0);

	/* Map the pages of this worker's area now (the parent initialised
	 * them), so that no fault on them counts in the workload. Reads:
	 * one fault maps several pages already in the page cache. */
	for (const volatile char *p = (const char *)wa; p < (const char *)(wa + 1); p += 4096)
		(void)*p;
	(void)*((const volatile char *)(wa + 1) - 1);
	/* And the run's shared fault-cost histograms, written once per touch. */
	for (const volatile char *p = (const char *)rs->area.fault_cost; p < (const char *)(rs->area.fault_cost + 1);
	     p += 4096)
		(void)*p;
	(void)*((const volatile char *)(rs->area.fault_cost + 1) - 1);
	/* And the run's page map (a bit per page of the region). */
	for (size_t o = 0; o < rs->area.populated_bytes; o += 4096)
		(void)*((const volatile char *)rs->area.populated + o);

	/* --cpus: its own CPU before it maps or faults anything. */
	if (place_bind_worker(&rs->numa, index, err, sizeof(err)) != 0)
		fail(fig, WORKER_EXIT_ATTACH, "--cpus", err);

	uint64_t t0 = clock_now_ns();
	if (cfg->backend->attach(r, err, sizeof(err)) != 0)
		fail(fig, WORKER_EXIT_ATTACH, "attach", err);
	fig->attach_ns = clock_now_ns() - t0;
	/* A reused file may hold what an earlier run left: worker 0 checks it
	 * before any worker is released. */
	if (index == 0 && r->reused && cfg->workload->check_region &&
	    cfg->workload->check_region(r->base, r->size, cfg->workload_config, err, sizeof(err)) != 0)
		fail(fig, WORKER_EXIT_ATTACH, "--reuse-path", err);

	__atomic_store_n(&fig->phase, PHASE_READY, __ATOMIC_RELEASE);
	t0 = clock_now_ns();
	arrive(&ctl->ready, cfg->workers);
	wait_release(&ctl->start);
	fig->barrier_wait_ns = clock_now_ns() - t0;

	struct workload_ctx ctx = {
		.base = r->base,
		.size = r->size,
		.page_bytes = r->backend_page_bytes,
		.worker = index,
		.workers = cfg->workers,
		.write = cfg->write,
		.seed = splitmix64(cfg->seed ^ splitmix64(index)),
		.duration_ns = cfg->duration_ns,
		.max_ops = cfg->max_ops,
		.params = cfg->params,
		.config = cfg->workload_config,
		.slot = &wa->slot,
		.persist = r->persist,
		.attach = ctx_attach,
		.detach = ctx_detach,
		.harness_private = r,
		.fault_cost = rs->area.fault_cost,
		.populated = rs->area.populated,
		.populated_pages = rs->area.populated_pages,
	};

	if (rs->hw_available)
		hw_counter_start(&wa->slot);

	struct rusage *ru0 = &fig->workload_ru[0], *ru1 = &fig->workload_ru[1];
	getrusage(RUSAGE_SELF, ru0);
	t0 = clock_now_ns();
	char why[sizeof(fig->error)] = "";
	int rc = cfg->workload->run(&ctx, why, sizeof(why));
	wa->slot.run_ns = clock_now_ns() - t0;
	getrusage(RUSAGE_SELF, ru1);
	fig->minflt = (uint64_t)(ru1->ru_minflt - ru0->ru_minflt);
	fig->majflt = (uint64_t)(ru1->ru_majflt - ru0->ru_majflt);
	if (rc != 0)
		snprintf(fig->error, sizeof(fig->error), "workload %s: %s", cfg->workload->name,
			 why[0] ? why : "failed (it gave no reason)");
	unsigned cpu, node;
	if (getcpu(&cpu, &node) == 0) {
		fig->cpu = (int32_t)cpu;
		fig->node = (int32_t)node;
	} else {
		fig->cpu = fig->node = -1;
	}

	__atomic_store_n(&fig->phase, PHASE_DONE, __ATOMIC_RELEASE);
	arrive(&ctl->done, cfg->workers);
	wait_release(&ctl->measured);

	t0 = clock_now_ns();
	if (r->base && cfg->backend->detach(r, err, sizeof(err)) != 0)
		fail(fig, WORKER_EXIT_DETACH, "detach", err);
	fig->detach_ns = clock_now_ns() - t0;
	__atomic_store_n(&fig->phase, PHASE_DETACHED, __ATOMIC_RELEASE);
	_exit(rc != 0 ? WORKER_EXIT_WORKLOAD : WORKER_EXIT_OK);
}
