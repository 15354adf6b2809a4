/* run.c - the parent side of `mshare-bench run`.
 *
 * set up the backend -> fork N workers -> wait until all are attached ->
 * measure the baseline -> release them at once -> wait until all are
 * parked -> measure -> let them detach and exit -> reap -> record.
 *
 * The parent never waits on a worker without a timeout: every wait is a
 * futex sleep of at most WAIT_SLICE_NS followed by a non-blocking reap, so
 * a worker that died (crash, OOM kill) is noticed and never waited for.
 * The workers still running after one died may wait for ever on what it
 * held (a latch): when none finishes the workload for STUCK_AFTER_DEATH_NS
 * past the death and the time budget, they are killed (kill_stuck).
 * SIGINT/SIGTERM only set a flag; the loops see it, kill and reap every
 * worker, undo the backend's setup and exit 130/143 without a record.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "futex.h"
#include "hugepool.h"
#include "hw_counter.h"
#include "record_files.h"
#include "run.h"
#include "oom_victims.h"
#include "pmem_lib.h"

/* getppid() calls that measure the kernel probes' own cost. */
#define KERNEL_PROBE_COST_CALLS 1000u
#define WAIT_SLICE_NS (20ull * 1000000ull)
#define EXIT_STALL_NS (120ull * 1000000000ull) /* no worker exits for this long: kill them */
/* A worker died in the workload and no other one has finished it for this
 * long past the workload's time budget: the rest wait on what the dead one
 * held (a latch, a log position) and are killed. */
#define STUCK_AFTER_DEATH_NS (20ull * 1000000000ull)
/* A worker stopped (SIGSTOP) this long: the run is given up. */
#define STOPPED_LIMIT_NS (10ull * 1000000000ull)

static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

static void install_signal_handlers(void)
{
	record_catch_stop_signals(on_stop_signal);
}

/* --- pid -> worker index ------------------------------------------- */

static void pid_table_init(struct run_state *rs, unsigned slots)
{
	memset(rs->pid_slots, 0xff, slots * sizeof(int)); /* -1 = empty */
	rs->pid_slots_mask = slots - 1;
}

static void pid_table_add(struct run_state *rs, pid_t pid, unsigned index)
{
	unsigned h = ((unsigned)pid * 2654435761u) & rs->pid_slots_mask;
	while (rs->pid_slots[h] >= 0)
		h = (h + 1) & rs->pid_slots_mask;
	rs->pid_slots[h] = (int)index;
}

static int pid_table_find(const struct run_state *rs, pid_t pid)
{
	unsigned h = ((unsigned)pid * 2654435761u) & rs->pid_slots_mask;
	while (rs->pid_slots[h] >= 0) {
		if (rs->pids[rs->pid_slots[h]] == pid)
			return rs->pid_slots[h];
		h = (h + 1) & rs->pid_slots_mask;
	}
	return -1;
}

/* --- reaping ---------------------------------------------------------- */

static void note_exit(struct run_state *rs, unsigned i, int status)
{
	rs->reaped[i] = 1;
	rs->wait_status[i] = status;
	rs->reaped_count++;
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		if (rs->killing || (rs->stuck[i] && sig == SIGKILL))
			return;
		if (sig > 0 && sig < 65)
			rs->signal_counts[sig]++;
		if (sig == SIGKILL) {
			if (!rs->oom_suspects)
				rs->first_kill_at = rs->forked;
			rs->oom_suspects++;
		} else {
			rs->crashed++;
		}
	} else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
		rs->failed++;
	}
}

/* A worker stopped or continued (waitpid WUNTRACED | WCONTINUED). */
static void note_stop(struct run_state *rs, unsigned i, int status)
{
	if (WIFSTOPPED(status) && !rs->stopped[i]) {
		rs->stopped[i] = 1;
		if (!rs->stopped_now++)
			rs->stopped_since = clock_now_ns();
		if (!rs->workers_stopped++)
			snprintf(rs->failure, sizeof(rs->failure),
				 "worker %u (pid %d) was stopped by %s during the run: its times include the stop, "
				 "so the run's figures are not measurements", i, (int)rs->pids[i],
				 sigabbrev_np(WSTOPSIG(status)) ? sigabbrev_np(WSTOPSIG(status)) : "a signal");
		fprintf(stderr, "mshare-bench run: worker %u (pid %d) is stopped (SIG%s); the run fails, and "
				"ends if it is still stopped in %llu s\n", i, (int)rs->pids[i],
			sigabbrev_np(WSTOPSIG(status)) ? sigabbrev_np(WSTOPSIG(status)) : "?",
			STOPPED_LIMIT_NS / 1000000000ull);
	} else if (WIFCONTINUED(status) && rs->stopped[i]) {
		rs->stopped[i] = 0;
		if (--rs->stopped_now == 0)
			rs->stopped_since = 0;
	}
}

/* One waitpid result: an exit, a stop or a continue. */
static void note_status(struct run_state *rs, pid_t pid, int status)
{
	int i = pid_table_find(rs, pid);
	if (i < 0 || rs->reaped[i])
		return;
	if (WIFSTOPPED(status) || WIFCONTINUED(status))
		note_stop(rs, (unsigned)i, status);
	else
		note_exit(rs, (unsigned)i, status);
}

static void kill_and_reap_all(struct run_state *rs);

/* A worker stopped for STOPPED_LIMIT_NS: every worker is killed. */
static void check_stopped(struct run_state *rs)
{
	if (!rs->stopped_now || rs->killing || clock_now_ns() - rs->stopped_since < STOPPED_LIMIT_NS)
		return;
	fprintf(stderr, "mshare-bench run: %u worker(s) stopped for %llu s: killing every worker; the record says "
			"the run failed\n", rs->stopped_now, STOPPED_LIMIT_NS / 1000000000ull);
	snprintf(rs->failure + strlen(rs->failure), sizeof(rs->failure) - strlen(rs->failure),
		 "; still stopped after %llu s, every worker was killed", STOPPED_LIMIT_NS / 1000000000ull);
	kill_and_reap_all(rs);
}

/* Collect every worker that has exited, stopped or continued, without
 * blocking. */
static void reap_some(struct run_state *rs)
{
	int status;
	pid_t pid;
	while ((pid = waitpid(-1, &status, WNOHANG | WUNTRACED | WCONTINUED)) > 0)
		note_status(rs, pid, status);
	check_stopped(rs);
}

/* Kill every live worker and wait for all of them. */
static void kill_and_reap_all(struct run_state *rs)
{
	rs->killing = true;
	for (unsigned i = 0; i < rs->forked; i++)
		if (!rs->reaped[i])
			kill(rs->pids[i], SIGKILL);
	for (unsigned i = 0; i < rs->forked; i++) {
		int status;
		if (rs->reaped[i])
			continue;
		pid_t got;
		while ((got = waitpid(rs->pids[i], &status, 0)) < 0 && errno == EINTR)
			;
		if (got < 0)
			continue;
		note_exit(rs, i, status);
	}
}

static void cleanup(struct run_state *rs)
{
	pt_levels_cleanup(&rs->ptl);
	if (rs->kt.armed) {
		/* Never leave the probes in the kernel behind an error. */
		struct ktrace_result unused;
		char e[300];
		if (ktrace_stop(&rs->kt, &unused, e, sizeof(e)) != 0)
			fprintf(stderr, "mshare-bench run: --kernel-fault-time: removing the probes: %s\n", e);
	}
	if (rs->pids)
		kill_and_reap_all(rs);
	if (rs->backend_ready) {
		rs->cfg.backend->teardown(&rs->region);
		rs->backend_ready = false;
	}
	results_area_destroy(&rs->area);
}

static int interrupted_exit(struct run_state *rs) __attribute__((noreturn));
static int interrupted_exit(struct run_state *rs)
{
	int sig = stop_signal;
	cleanup(rs);
	fprintf(stderr, "mshare-bench: interrupted by %s: workers killed and reaped, backend torn down, "
			"no record written\n", strsignal(sig));
	exit(128 + sig);
}

static unsigned deaths(const struct run_state *rs)
{
	return rs->crashed + rs->failed + rs->oom_suspects;
}

/* SIGKILL the workers that have not reached `phase`; they are reaped by
 * the caller's loop and not counted as deaths (rs->stuck). */
static void kill_stuck(struct run_state *rs, uint32_t phase, unsigned pending, double waited_s)
{
	fprintf(stderr, "mshare-bench run: a worker died during the workload and %u others have not finished "
			"it %.0f s after that and after its time budget (waiting on something the dead one held, "
			"e.g. a latch): killing them; the record counts them as workers_killed_stuck\n",
		pending, waited_s);
	for (unsigned i = 0; i < rs->forked; i++) {
		uint32_t p = __atomic_load_n(&rs->area.workers[i].fig.phase, __ATOMIC_ACQUIRE);
		if (!rs->reaped[i] && !rs->stuck[i] && p < phase) {
			rs->stuck[i] = 1;
			rs->stuck_killed++;
			kill(rs->pids[i], SIGKILL);
		}
	}
}

/* Until every forked worker has reached `phase` (or failed, or died).
 * Returns the number that reached it alive. With `budget_end` (the end of
 * the workload's time budget, 0: none) and once a worker has died while
 * the others were still on their way: when none reaches the phase for
 * STUCK_AFTER_DEATH_NS past both the death and the budget, the pending
 * ones are killed (kill_stuck). */
static unsigned wait_for_phase(struct run_state *rs, uint32_t *counter, uint32_t phase, uint64_t budget_end)
{
	unsigned deaths_at_start = deaths(rs), last_reached = 0;
	uint64_t quiet_since = 0; /* a death seen: since then no worker reached the phase */
	for (;;) {
		reap_some(rs);
		if (stop_signal)
			interrupted_exit(rs);
		unsigned reached = 0, pending = 0;
		for (unsigned i = 0; i < rs->forked; i++) {
			uint32_t p = __atomic_load_n(&rs->area.workers[i].fig.phase, __ATOMIC_ACQUIRE);
			if (p >= phase && p != PHASE_FAILED && !rs->reaped[i])
				reached++;
			else if (!rs->reaped[i] && p != PHASE_FAILED)
				pending++;
		}
		if (!pending)
			return reached;
		if (budget_end && deaths(rs) != deaths_at_start) {
			uint64_t now = clock_now_ns();
			if (!quiet_since || reached != last_reached)
				quiet_since = now;
			last_reached = reached;
			uint64_t from = quiet_since > budget_end ? quiet_since : budget_end;
			if (now > from + STUCK_AFTER_DEATH_NS && pending > 0) {
				kill_stuck(rs, phase, pending, (double)(now - quiet_since) / 1e9);
				quiet_since = now;
			}
		}
		uint32_t seen = __atomic_load_n(counter, __ATOMIC_ACQUIRE);
		futex_wait_u32(counter, seen, WAIT_SLICE_NS);
	}
}

/* After the last release: wait for every worker to exit; kill them if
 * none exits for EXIT_STALL_NS. */
static void wait_all_exited(struct run_state *rs)
{
	uint64_t last_progress = clock_now_ns();
	unsigned last_count = rs->reaped_count;
	while (rs->reaped_count < rs->forked) {
		if (stop_signal)
			interrupted_exit(rs);
		int status;
		pid_t pid = waitpid(-1, &status, WNOHANG | WUNTRACED | WCONTINUED);
		if (pid > 0) {
			note_status(rs, pid, status);
			continue;
		}
		check_stopped(rs);
		if (pid < 0 && errno == ECHILD)
			break;
		/* Nothing exited yet: sleep a little, never block for good. */
		struct timespec nap = { 0, 2000000 };
		nanosleep(&nap, NULL);
		if (rs->reaped_count != last_count) {
			last_count = rs->reaped_count;
			last_progress = clock_now_ns();
		} else if (clock_now_ns() - last_progress > EXIT_STALL_NS) {
			fprintf(stderr, "mshare-bench: %u workers did not exit; killing them\n",
				rs->forked - rs->reaped_count);
			kill_and_reap_all(rs);
		}
	}
}

/* Median cost of one clock read, from back-to-back pairs. */
static void measure_timer(struct run_state *rs)
{
	enum { N = 20001 };
	/* Counting sort of small values is enough; outliers go to the tail. */
	uint64_t min = UINT64_MAX;
	unsigned below[1024] = { 0 };
	for (int i = 0; i < N; i++) {
		uint64_t a = clock_now_ns();
		uint64_t d = clock_now_ns() - a;
		if (d < min)
			min = d;
		below[d < 1023 ? d : 1023]++;
	}
	unsigned seen = 0, med = 0;
	for (unsigned v = 0; v < 1024; v++) {
		seen += below[v];
		if (seen > N / 2) {
			med = v;
			break;
		}
	}
	rs->timer_overhead_ns = med;
	rs->timer_overhead_min_ns = min;
}

static void read_vmpte(struct run_state *rs, int64_t *into)
{
	for (unsigned i = 0; i < rs->forked; i++)
		into[i] = rs->reaped[i] ? -1 : procfs_status_bytes(rs->pids[i], "VmPTE");
}

/* Private_Dirty of a few workers, less what of it lies in the region
 * (region pages mapped by one process only count as private). */
#define PRIVATE_SAMPLE 16
static void sample_private_memory(struct run_state *rs)
{
	unsigned step = rs->forked > PRIVATE_SAMPLE ? rs->forked / PRIVATE_SAMPLE : 1;
	for (unsigned i = 0; i < rs->forked && rs->private_sampled < PRIVATE_SAMPLE; i += step) {
		struct smaps_region sr;
		if (rs->reaped[i])
			continue;
		int64_t all = procfs_private_dirty_bytes(rs->pids[i]);
		if (all < 0 || procfs_smaps_region(rs->pids[i], rs->region.addr, &sr) != 0)
			continue;
		rs->private_dirty_sum += (uint64_t)all - (sr.private_dirty_bytes <= (uint64_t)all ? sr.private_dirty_bytes : 0);
		rs->private_sampled++;
	}
}

/* The parent's own per-worker tables: pids, exit statuses, VmPTE readings
 * and the pid hash. The parent writes them while it forks, reaps and
 * measures; on the heap, each such write after a fork would leave every
 * worker forked before it holding its own copy of the page (copy on write),
 * counted in that worker's memory. They live in one mapping that
 * MADV_DONTFORK keeps out of the workers altogether (no page, no page
 * table); mmap gives zeroed memory, as calloc did. */
static int alloc_worker_tables(struct run_state *rs)
{
	unsigned n = rs->cfg.workers, slots = 1;
	while (slots < n * 2u)
		slots <<= 1;
	const size_t sizes[] = { n * sizeof(pid_t), n * sizeof(int), n, n, n * sizeof(int64_t), n * sizeof(int64_t),
				 slots * sizeof(int), n };
	size_t off[sizeof(sizes) / sizeof(sizes[0])], total = 0;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		off[i] = total;
		total += (sizes[i] + 15) & ~(size_t)15;
	}
	char *p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	if (madvise(p, total, MADV_DONTFORK) != 0) {
		munmap(p, total);
		return -1;
	}
	rs->pids = (pid_t *)(p + off[0]);
	rs->wait_status = (int *)(p + off[1]);
	rs->reaped = (uint8_t *)(p + off[2]);
	rs->stuck = (uint8_t *)(p + off[3]);
	rs->vmpte_baseline = (int64_t *)(p + off[4]);
	rs->vmpte_parked = (int64_t *)(p + off[5]);
	rs->pid_slots = (int *)(p + off[6]);
	rs->stopped = (uint8_t *)(p + off[7]);
	pid_table_init(rs, slots);
	return 0;
}

static int fork_workers(struct run_state *rs)
{
	for (unsigned i = 0; i < rs->cfg.workers; i++) {
		if (stop_signal)
			interrupted_exit(rs);
		pid_t pid = fork();
		if (pid == 0)
			worker_main(rs, i);
		if (pid < 0) {
			int e = errno;
			reap_some(rs);
			snprintf(rs->fork_error, sizeof(rs->fork_error), "fork of worker %u failed: %s", i,
				 strerror(e));
			if (rs->oom_suspects || e == ENOMEM)
				return 0; /* out of memory: record how far we got */
			return -1;
		}
		rs->pids[i] = pid;
		rs->area.workers[i].fig.pid = pid;
		pid_table_add(rs, pid, i);
		rs->forked = i + 1;
		if ((i & 255) == 255)
			reap_some(rs);
	}
	return 0;
}

static void release(uint32_t *word)
{
	__atomic_store_n(word, 1, __ATOMIC_RELEASE);
	futex_wake_all(word);
}

/* PMEM_IS_PMEM_FORCE=1 (libpmem's own switch) forces the flush path over
 * what the backend stated, for tests of that path on machines without
 * persistent memory; the record says so. */
static void persist_override(struct region *r)
{
	const char *force = getenv("PMEM_IS_PMEM_FORCE");
	char said[sizeof(r->persist_why)];

	if (!force || strcmp(force, "1") != 0 || r->persist == PERSIST_PMEM)
		return;
	snprintf(said, sizeof(said), "%s", r->persist_why);
	snprintf(r->persist_why, sizeof(r->persist_why),
		 "PMEM_IS_PMEM_FORCE=1 in the environment forces pmem_persist (a test setting: on memory "
		 "that is not persistent it makes nothing durable); the backend said %s: %.300s",
		 persist_mode_name(r->persist), said);
	r->persist = PERSIST_PMEM;
}

int run_main(int argc, char **argv)
{
	static struct run_state rs_storage;
	struct run_state *rs = &rs_storage;
	char err[512];

	int prc = cli_parse_run(argc, argv, &rs->cfg, err, sizeof(err));
	if (prc > 0)
		return 0;
	if (prc < 0) {
		fprintf(stderr, "mshare-bench run: %s\n", err);
		return 2;
	}
	const struct run_config *cfg = &rs->cfg;
	if (workload_prepare(cfg->workload, rs->cfg.param_values, cfg->size, rs->cfg.params, rs->cfg.workload_config, err,
			     sizeof(err)) != 0) {
		fprintf(stderr, "mshare-bench run: workload %s: %s\n", cfg->workload->name, err);
		return 2;
	}
	if (cfg->max_ops && !cfg->workload->has_budget) {
		fprintf(stderr, "mshare-bench run: --ops %llu: workload %s has no operations to count (it runs its "
				"course once); drop --ops\n", (unsigned long long)cfg->max_ops, cfg->workload->name);
		return 2;
	}
	if (cfg->workload->check_workers &&
	    cfg->workload->check_workers(rs->cfg.workload_config, cfg->workers, err, sizeof(err)) != 0) {
		fprintf(stderr, "mshare-bench run: workload %s: %s\n", cfg->workload->name, err);
		return 2;
	}
	if (cfg->check_only)
		return 0; /* --check: the options are good; run nothing */
	/* --cpus and --mem-policy against this host: refused before anything
	 * is set up or forked. */
	if (place_prepare(&cfg->numa, &rs->numa, err, sizeof(err)) != 0) {
		fprintf(stderr, "mshare-bench run: %s\n", err);
		return 2;
	}
	if (cfg->out)
		record_clean_orphans(cfg->out);
	rs->region.backend_name = cfg->backend->name;
	rs->region.size = cfg->size;
	rs->region.addr = cfg->addr;
	rs->region.page = cfg->page;
	rs->region.path = cfg->path;
	rs->region.reuse_path = cfg->reuse_path;
	if (cfg->backend->probe(&rs->region, err, sizeof(err)) != 0) {
		fprintf(stderr, "mshare-bench run: backend %s is not usable here: %s\n", cfg->backend->name, err);
		return 1;
	}
	/* Huge pages that runs killed earlier left in the pool go back first
	 * (they would count as taken memory in the checks below). */
	hugepool_recover(stderr, "mshare-bench run: ");
	if (preflight_check(rs, err, sizeof(err)) != 0) {
		fprintf(stderr, "mshare-bench run: pre-flight: %s\n", err);
		return 1;
	}
	install_signal_handlers();
	hugepool_set_stop_flag(&stop_signal);
	rs->parent_pid = getpid();
	/* If memory runs out, the kernel must kill workers, not the parent
	 * that records how many it killed. Workers set their own back to 0. */
	rs->oom_protected = procfs_write_long("/proc/self/oom_score_adj", -1000) == 0;
	measure_timer(rs);
	rs->oom_kill_before = procfs_vmstat("oom_kill");

	/* The policy is set before the backend's set-up (hugetlb pages are
	 * allocated there) and inherited by every worker. */
	if (place_apply_policy(&cfg->numa, &rs->numa, err, sizeof(err)) != 0) {
		fprintf(stderr, "mshare-bench run: %s\n", err);
		return 1;
	}
	/* Pages the pool must gain come from the policy's nodes. */
	hugepool_obey_mempolicy(cfg->numa.policy == MEMPOL_BIND || cfg->numa.policy == MEMPOL_INTERLEAVE);

	rs->t_start = clock_now_ns();
	rs->backend_ready = true; /* teardown is safe after a partial setup */
	if (cfg->backend->setup(&rs->region, err, sizeof(err)) != 0) {
		if (stop_signal)
			interrupted_exit(rs);
		cleanup(rs);
		fprintf(stderr, "mshare-bench run: backend %s: %s\n", cfg->backend->name, err);
		return 1;
	}
	rs->hugepages_added = rs->region.hugepages_reserved;
	if (stop_signal)
		interrupted_exit(rs);
	if (cfg->size % rs->region.backend_page_bytes) {
		cleanup(rs);
		fprintf(stderr, "mshare-bench run: --size %llu is not a multiple of the %zu-byte page of backend %s\n",
			(unsigned long long)cfg->size, rs->region.backend_page_bytes, cfg->backend->name);
		return 2;
	}
	persist_override(&rs->region);
	if (cfg->workload->persists &&
	    (rs->region.persist == PERSIST_NONE || rs->region.persist == PERSIST_UNSTATED)) {
		cleanup(rs);
		fprintf(stderr, "mshare-bench run: workload %s makes its writes durable, but on backend %s %s\n",
			cfg->workload->name, cfg->backend->name,
			rs->region.persist == PERSIST_NONE ? rs->region.persist_why
			: "the backend does not state how a write is made durable");
		return 1;
	}
	if (cfg->workload->persists && rs->region.persist == PERSIST_PMEM && pmem_lib_load(err, sizeof(err)) != 0) {
		cleanup(rs);
		fprintf(stderr, "mshare-bench run: workload %s makes its writes durable with libpmem on backend %s: %s\n",
			cfg->workload->name, cfg->backend->name, err);
		return 1;
	}
	if (results_area_create(&rs->area, cfg->workers, cfg->size) != 0) {
		cleanup(rs);
		fprintf(stderr, "mshare-bench run: cannot map the shared results area: %s\n", strerror(errno));
		return 1;
	}
	/* Mapped after the results area, below it: a worker keeps the area's
	 * head, and at 10,000 workers these tables (384 KiB) mapped above it
	 * pushed it out of the 2 MiB of the libraries, into a page table of
	 * its own in every worker. */
	if (alloc_worker_tables(rs) != 0) {
		cleanup(rs);
		fprintf(stderr, "mshare-bench run: out of memory for %u workers\n", cfg->workers);
		return 1;
	}
	/* Initialised here, before the clock of the fork phase starts, so
	 * that workers only map pages that exist instead of allocating them. */
	fault_cost_shared_init(rs->area.fault_cost);
	for (unsigned i = 0; i < cfg->workers; i++) {
		histogram_init(&rs->area.workers[i].slot.fault_ns);
		fault_cost_slot_init(&rs->area.workers[i].slot.fault_cost);
		rs->area.workers[i].slot.hw_fd = -1;
		histogram_init(&rs->area.workers[i].slot.op_ns);
		for (unsigned ph = 0; ph < workload_phase_count(cfg->workload); ph++)
			histogram_init(&rs->area.workers[i].slot.phase_ns[ph]);
	}
	/* --kernel-fault-time: arming the same probes on a syscall that does
	 * nothing shows, before any worker exists, that they can be armed
	 * here, and measures what they add to each timed interval. */
	if (cfg->kernel_fault_time &&
	    ktrace_probe_overhead(KERNEL_PROBE_COST_CALLS, &rs->kernel_probe_cost, err, sizeof(err)) != 0) {
		cleanup(rs);
		fprintf(stderr, "mshare-bench run: --kernel-fault-time: the kernel's probes cannot be armed here: %s\n",
			err);
		return 1;
	}
	/* --hw-instructions: one counter opened here tells whether the
	 * workers can have theirs; without it the record says why. */
	if (cfg->hw_instructions) {
		int fd = hw_counter_open(rs->hw_why, sizeof(rs->hw_why));
		rs->hw_available = fd >= 0;
		if (fd >= 0)
			close(fd);
		else if (!cfg->quiet)
			fprintf(stderr, "mshare-bench run: --hw-instructions: no instruction counter here, the run goes on "
					"without it: %s\n", rs->hw_why);
	}
	/* smaps cannot see DAX PMD mappings: probe the page size instead.
	 * Not for shared page tables: a probe would attach as a sharer. */
	if (rs->region.dax && !cfg->backend->page_tables_shared)
		rs->page_probe = page_probe_run(cfg->backend, &rs->region, cfg->write);
	/* Which page-table levels PageTables counts on this kernel. */
	pt_levels_probe(&rs->ptl);
	/* Parked point of the system view; "before" is before any worker. */
	rs->meminfo_refreshed = procfs_stat_refresh();
	if (rs->region.dax)
		rs->numa.data_device_node = place_device_node(cfg->path ? cfg->path : cfg->backend->default_path,
							     rs->numa.data_device, sizeof(rs->numa.data_device));
	place_read_pagetables(&rs->numa, &rs->pt_before);
	rs->meminfo_before = rs->pt_before.system;
	rs->t_setup_done = clock_now_ns();

	if (fork_workers(rs) != 0) {
		cleanup(rs);
		fprintf(stderr, "mshare-bench run: %s (see kernel.pid_max, kernel.threads-max, ulimit -u)\n",
			rs->fork_error);
		return 1;
	}
	rs->t_fork_end = clock_now_ns();

	unsigned ready = wait_for_phase(rs, &rs->area.control->ready, PHASE_READY, 0);
	rs->t_all_ready = clock_now_ns();
	for (unsigned i = 0; i < rs->forked; i++) {
		const struct worker_figures *f = &rs->area.workers[i].fig;
		if (__atomic_load_n(&f->phase, __ATOMIC_ACQUIRE) == PHASE_FAILED) {
			snprintf(err, sizeof(err), "worker %u: %s", i, f->error);
			cleanup(rs);
			fprintf(stderr, "mshare-bench run: %s\n", err);
			return 1;
		}
	}
	if (!ready && !rs->failure[0])
		snprintf(rs->failure, sizeof(rs->failure),
			 "no worker reached the start barrier (%u SIGKILLed, %u crashed, %u failed)", rs->oom_suspects,
			 rs->crashed, rs->failed);
	/* Without a worker (all dead, or killed while stopped) the phases
	 * below find nothing to wait for; the record says the run failed. */

	/* Baseline: region mapped, not touched yet. */
	read_vmpte(rs, rs->vmpte_baseline);
	rs->meminfo_refreshed &= procfs_stat_refresh();
	place_read_pagetables(&rs->numa, &rs->pt_baseline);
	rs->meminfo_baseline = rs->pt_baseline.system;
	pt_levels_window_start(&rs->ptl);
	if (rs->region.backend_page_bytes > 4096)
		rs->hugetlb_free_before = hugepool_available(rs->region.backend_page_bytes);

	/* The kernel's probes over the region, from the release until every
	 * worker has finished the workload: a kretprobe slot per worker that
	 * may be inside a fault at once (the kernel's limit is 4096). */
	if (cfg->kernel_fault_time &&
	    ktrace_start(&rs->kt, rs->region.addr, rs->region.addr + rs->region.size, cfg->workers, err,
			 sizeof(err)) != 0) {
		cleanup(rs);
		fprintf(stderr, "mshare-bench run: --kernel-fault-time: arming the probes over the region: %s\n", err);
		return 1;
	}
	rs->t_released = clock_now_ns();
	release(&rs->area.control->start);
	wait_for_phase(rs, &rs->area.control->done, PHASE_DONE,
		       rs->t_released + (rs->cfg.max_ops ? 0 : rs->cfg.duration_ns)); /* a clock reading: > 0 */
	rs->t_all_done = clock_now_ns();
	if (rs->kt.armed && ktrace_stop(&rs->kt, &rs->kernel_fc, err, sizeof(err)) != 0) {
		/* The run's other figures stand; the record says what failed
		 * (results.fault_cost.kernel.error) and the exit status is 1. */
		rs->kernel_fc_failed = true;
		fprintf(stderr, "mshare-bench run: --kernel-fault-time: reading the kernel's fault times: %s\n", err);
	}

	/* Parked point: every live worker holds its page tables. */
	rs->meminfo_refreshed &= procfs_stat_refresh();
	place_read_pagetables(&rs->numa, &rs->pt_parked);
	rs->meminfo_parked = rs->pt_parked.system;
	pt_levels_window_stop(&rs->ptl);
	read_vmpte(rs, rs->vmpte_parked);
	if (rs->region.backend_page_bytes > 4096)
		rs->hugetlb_free_parked = hugepool_available(rs->region.backend_page_bytes);
	rs->smaps_worker = -1;
	for (unsigned i = 0; i < rs->forked && rs->smaps_worker < 0; i++)
		if (!rs->reaped[i] && procfs_smaps_region(rs->pids[i], rs->region.addr, &rs->smaps) == 0 &&
		    rs->smaps.found)
			rs->smaps_worker = (int)i;
	sample_private_memory(rs);
	rs->t_measured = clock_now_ns();

	release(&rs->area.control->measured);
	wait_all_exited(rs);
	rs->t_all_reaped = clock_now_ns();
	rs->oom_kill_after = procfs_vmstat("oom_kill");
	rs->oom_victims_logged = rs->oom_suspects ? oom_victims_in_kernel_log(rs) : 0;

	rs->cfg.backend->teardown(&rs->region);
	rs->backend_ready = false;
	if (stop_signal)
		interrupted_exit(rs);

	/* A signal before the commit of the outputs: no record. One that
	 * arrives during the commit is held back until it is done, and the
	 * record it leaves is reported as written. */
	int rc = record_write(rs, &stop_signal, err, sizeof(err));
	if (rc == RECORD_INTERRUPTED)
		interrupted_exit(rs);
	results_area_destroy(&rs->area);
	if (rc == RECORD_NOTHING) {
		fprintf(stderr, "mshare-bench run: %s\n", err);
		return 1;
	}
	if (stop_signal)
		fprintf(stderr, "mshare-bench: %s arrived while the record was being written: it was finished, "
				"not cut short\n", strsignal(stop_signal));
	if (rc == RECORD_PARTLY) {
		fprintf(stderr, "mshare-bench run: %s\n", err);
		return 4;
	}
	/* Workers the OOM killer took are a result (recorded); any other
	 * death is a failed run, though its record is written. */
	const char *source;
	bool all_oom = oom_victims(rs, &source) == rs->oom_suspects;
	if (rs->failure[0]) {
		fprintf(stderr, "mshare-bench run: the run failed: %s; its record says so (results.run_failed), with "
				"null figures\n", rs->failure);
		return 3;
	}
	if (rs->failed || rs->crashed || !all_oom)
		return 3;
	return rs->kernel_fc_failed ? 1 : 0;
}
