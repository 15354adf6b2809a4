/* run_result.h - struct run_result: every figure of one run, merged from
 * the workers and derived once (record.c), which the JSON record
 * (record_schema.c) and the summary print. */
#ifndef MSHARE_BENCH_RUN_RESULT_H
#define MSHARE_BENCH_RUN_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "run.h"

/* 2: results.map_sync, results.persist, results.persist_why (issue 20).
 * 3: the prose every record repeated (pagetables.views, worker_memory.meaning,
 *    numa.workers_per_node_source, numa.mem_policy_scope,
 *    numa.page_table_placement, fault_latency_includes, faults.scope,
 *    time_s.meaning) is said once in results/README.md (issue 18).
 * 4: results.worker_signals, workers_killed_stuck.
 * 5: environment.clock, environment.time_unit, results.fault_cost (issue 31).
 * 6: results.fault_cost.kernel (--kernel-fault-time) and
 *    results.fault_cost.hw_instructions (--hw-instructions), always present.
 * 7: environment.aslr (issue 33), environment.slurm (issue 30).
 * 8: results.run_failed, results.failure, results.workers_stopped; a failed
 *    run's figures are null (issue 44);
 *    results.pagetables.all_levels_delta_bytes and .levels, results.preparation,
 *    results.fault_cost.first_faults/populated_faults/slept_faults (issue 46). */
#define RECORD_SCHEMA_VERSION 8

/* A latency histogram as the record gives it. */
struct latency_figures {
	uint64_t count, min, p50, p90, p99, p999, p9999, max;
	double mean;
};

/* The phases' times of results.time_s, in the record's order: one list for
 * the struct and the record writer. */
#define RUN_TIMES(X)                                                                                   \
	X(setup) X(fork) X(barrier) X(attach) X(attach_max) X(barrier_wait) X(baseline_measure) X(touch) \
	X(touch_per_worker) X(touch_per_worker_max) X(parked_measure) X(detach) X(detach_max) X(exit)   \
	X(total)

struct run_result {
	/* Merged over the workers that reached the parked point. */
	struct workload_slot slot;
	unsigned published;   /* workers measured */
	unsigned detached;
	char first_error[200];
	struct latency_figures fault, op, phase[WORKLOAD_MAX_PHASES];

	/* The page size the region got (record.c: page_size_obtained). */
	uint64_t page_bytes;
	const char *page_source;
	char page_source_text[320]; /* page_source when it carries figures */
	bool page_mixed;

	/* Page tables: system view (meminfo, per node) and VmPTE view. */
	int64_t meminfo_delta, meminfo_delta_from_before;
	uint64_t vmpte_sum, vmpte_baseline_sum, region_sum;
	unsigned vmpte_workers;
	double vmpte_baseline_per_worker, region_per_worker, region_per_worker_per_gib;
	int64_t region_min, region_max;
	int64_t node_delta[NUMA_MAX_NODES], node_delta_from_before[NUMA_MAX_NODES];
	int64_t nodes_delta_sum;
	bool nodes_consistent;

	/* Where the workers were as their workload ended. */
	uint64_t workers_per_node[NUMA_MAX_NODES];
	char cpus_seen[256];
	const char *latency_note;

	/* Private memory per worker beyond the region. */
	double private_dirty, worker_total;

	/* The touches classified (harness/fault_cost.h): the merged slot, the
	 * percentiles of each kind, faults per worker (taken in touches). */
	struct fault_cost_slot fc;
	struct latency_figures fc_kind[FC_KINDS];
	uint64_t fc_per_worker_min, fc_per_worker_max;
	double fc_per_worker_mean;

	/* Faults of the workers during the workload. */
	uint64_t minflt, majflt;
	double pages_per_fault, mean_ns_per_fault;

	/* Workers killed, crashed or failed. */
	unsigned oom_killed, sigkilled_not_oom;
	const char *oom_source;
	int64_t oom_kill_vmstat_delta;
	uint64_t first_kill_at_workers;

	/* Seconds; per worker: the mean over workers measured (detach: over
	 * those that detached) and the maximum. */
	struct {
#define RUN_TIME_FIELD(name) double name;
		RUN_TIMES(RUN_TIME_FIELD)
#undef RUN_TIME_FIELD
	} time_s;
	double ops_per_s;

	char estimate[400]; /* how the pre-flight estimate was made */
};

#endif
