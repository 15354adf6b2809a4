/* run.h - one run of `mshare-bench run`: its configuration, its workers
 * and everything measured. The parent owns it; workers read a copy made
 * by fork. */
#ifndef MSHARE_BENCH_RUN_H
#define MSHARE_BENCH_RUN_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "backend.h"
#include "cli.h"
#include "ktrace.h"
#include "placement.h"
#include "page_probe.h"
#include "procfs.h"
#include "pt_levels.h"
#include "results_area.h"

/* Exit status of a worker that stopped on an error (fig.error says why). */
enum worker_exit {
	WORKER_EXIT_OK = 0,
	WORKER_EXIT_ATTACH = 10,
	WORKER_EXIT_WORKLOAD = 11,
	WORKER_EXIT_DETACH = 12,
	WORKER_EXIT_ORPHAN = 13,
};

struct preflight_figures {
	long pid_max, threads_max, max_map_count, tasks_now;
	long long nproc_soft, nproc_hard; /* -1 = unlimited */
	bool nproc_raised;
	int64_t mem_available_bytes;
	uint64_t expected_pt_bytes_per_worker;   /* estimate, for the check only */
	uint64_t expected_overhead_bytes_per_worker;
	uint64_t expected_total_bytes;          /* all of the below that comes out of MemAvailable */
	/* Region data the run faults in (an upper bound), where it lives
	 * ("shared memory", "page cache", "the DAX device", "the huge page
	 * pool") and how much of it comes out of MemAvailable. */
	uint64_t expected_data_bytes;
	uint64_t expected_data_in_memory_bytes;
	char data_home[96];
	/* hugetlb: pages the region takes from the pool, those free before
	 * the run, and the bytes the pool must grow by (from MemAvailable). */
	long pool_pages_needed, pool_pages_available;
	uint64_t pool_growth_bytes;
};

struct run_state {
	struct run_config cfg;
	struct region region;
	struct results_area area;
	pid_t parent_pid;
	struct preflight_figures preflight;
	bool backend_ready;
	bool oom_protected;       /* parent's oom_score_adj lowered; workers undo it */
	long hugepages_added;     /* kept after teardown for the record */

	/* Workers, in the parent's private memory. */
	unsigned forked;
	pid_t *pids;
	int *wait_status;
	uint8_t *reaped;
	int *pid_slots; unsigned pid_slots_mask; /* pid -> worker index hash */
	unsigned reaped_count;
	bool killing;            /* SIGKILLs from here on are ours */
	unsigned oom_suspects;   /* SIGKILLed and not by us */
	unsigned first_kill_at;  /* workers forked when the first one was SIGKILLed */
	unsigned crashed;        /* killed by another signal */
	unsigned failed;         /* exited with an error */
	/* Workers that did not finish the workload after another one died in
	 * it (waiting on what it held, e.g. a latch) and were killed here. */
	unsigned stuck_killed;
	uint8_t *stuck;          /* per worker: SIGKILLed here as stuck */
	unsigned signal_counts[65]; /* deaths by signal, not counting our own kills */
	/* Workers stopped (SIGSTOP, SIGTSTP, a debugger) during the run: a
	 * stopped worker's times include the stop, so the run measured nothing
	 * it may report; one stopped for STOPPED_LIMIT_NS ends the run. */
	uint8_t *stopped;        /* per worker: stopped now */
	unsigned stopped_now, workers_stopped; /* now; ever during the run */
	uint64_t stopped_since;  /* CLOCK_MONOTONIC when the oldest current stop began */
	/* Why the run measured nothing it may report ("" if it did): the
	 * record then gives results.run_failed true, this reason, and null
	 * figures; the exit status is 3. */
	char failure[256];
	char fork_error[160];

	/* Placement (--cpus, --mem-policy) and the NUMA nodes. */
	struct numa_plan numa;

	/* Page-table figures; the meminfo_* ones are the system figure of the
	 * pt_* per-node snapshots. */
	struct numa_pt_point pt_before, pt_baseline, pt_parked;
	int64_t meminfo_before, meminfo_baseline, meminfo_parked;
	bool meminfo_refreshed; /* vm.stat_refresh before every read */
	/* Which levels PageTables counts; the PUD pages it leaves out. */
	struct pt_levels ptl;
	int64_t *vmpte_baseline, *vmpte_parked;
	struct smaps_region smaps;
	int smaps_worker;
	enum page_probe_result page_probe; /* DAX backings: see page_probe.c */
	/* Private memory of sampled workers beyond the region (parked point). */
	uint64_t private_dirty_sum;
	unsigned private_sampled;
	int64_t oom_kill_before, oom_kill_after;
	long oom_victims_logged; /* SIGKILLed workers named by the kernel log; -1 unknown */
	int64_t hugetlb_free_before, hugetlb_free_parked;

	/* --kernel-fault-time: the probes (armed from the release to the
	 * last worker's end of the workload), what they counted, and the
	 * probes' own cost measured on a syscall that does nothing. */
	struct ktrace_state kt;
	struct ktrace_result kernel_fc;
	struct ktrace_result kernel_probe_cost;
	bool kernel_fc_failed;
	/* --hw-instructions: whether this host gives the counter, and why not. */
	bool hw_available;
	char hw_why[300];

	/* Timer. */
	uint64_t timer_overhead_ns, timer_overhead_min_ns;

	/* Lifecycle timestamps (CLOCK_MONOTONIC ns). */
	uint64_t t_start, t_setup_done, t_fork_end, t_all_ready, t_released, t_all_done,
		t_measured, t_all_reaped;
};

/* Entry point of `run`; returns the exit status. */
int run_main(int argc, char **argv);

/* Body of worker `index` in a freshly forked child; never returns. */
void worker_main(struct run_state *rs, unsigned index) __attribute__((noreturn));

/* Pre-flight checks of limits and memory before anything starts. */
int preflight_check(struct run_state *rs, char *err, size_t err_len);
/* How the pre-flight estimate was made, for the record. */
void preflight_estimate_text(const struct run_state *rs, char *out, size_t len);

/* Write the record (JSON to --out or stdout, CSV to --out *.csv and/or
 * --csv) and the human summary. The commit of the outputs happens with
 * SIGINT/SIGTERM/SIGHUP blocked; *stop is checked just before it. Returns
 * RECORD_WRITTEN, RECORD_PARTLY (one output written, another not: err says
 * which), RECORD_NOTHING (err says why) or RECORD_INTERRUPTED (*stop was set
 * before the commit; nothing written). */
enum { RECORD_WRITTEN = 0, RECORD_PARTLY = 1, RECORD_NOTHING = -1, RECORD_INTERRUPTED = -2 };
int record_write(struct run_state *rs, volatile sig_atomic_t *stop, char *err, size_t err_len);
/* --out FILE is written as CSV (FILE ends in .csv, in any case). */
bool record_out_is_csv(const char *out);
/* Remove temporary files NAME.mshare-bench-tmp.PID of this user in the
 * directory of out whose writer is gone (killed before its commit); no
 * other file. */
void record_clean_orphans(const char *out);

#endif
