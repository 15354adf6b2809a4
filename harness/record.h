/* record.h - the run record in three steps (the entry points, record_write
 * and friends, are in run.h):
 *
 *   record.c         merges the workers' figures into one struct run_result,
 *                    where every derived figure is computed once, and prints
 *                    the human summary from it;
 *   record_schema.c  the JSON record (schema_version RECORD_SCHEMA_VERSION),
 *                    which only prints run_state and run_result;
 *   record_files.c   the outputs: --out written atomically, --csv appended.
 *
 * What each field means, once: results/README.md ("Reading a run record").
 */
#ifndef MSHARE_BENCH_RECORD_H
#define MSHARE_BENCH_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json.h"
#include "run.h"

/* 2: results.map_sync, results.persist, results.persist_why (issue 20).
 * 3: the prose every record repeated (pagetables.views, worker_memory.meaning,
 *    numa.workers_per_node_source, numa.mem_policy_scope,
 *    numa.page_table_placement, fault_latency_includes, faults.scope,
 *    time_s.meaning) is said once in results/README.md (issue 18).
 * 4: results.worker_signals, workers_killed_stuck.
 * 5: environment.clock, environment.time_unit, results.fault_cost (issue 31).
 * 6: results.fault_cost.kernel (--kernel-fault-time) and
 *    results.fault_cost.hw_instructions (--hw-instructions), always present. */
#define RECORD_SCHEMA_VERSION 6

/* A latency histogram as the record gives it. */
struct latency_figures {
	uint64_t count, min, p50, p90, p99, p999, p9999, max;
	double mean;
};

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
		double setup, fork, barrier, attach, attach_max, barrier_wait, baseline_measure, touch,
			touch_per_worker, touch_per_worker_max, parked_measure, detach, detach_max, exit, total;
	} time_s;
	double ops_per_s;

	char estimate[400]; /* how the pre-flight estimate was made */
};

/* record.c */
void record_result(const struct run_state *rs, struct run_result *r);
void record_summary(const struct run_state *rs, const struct run_result *r);
/* record_schema.c */
void record_json(struct json_writer *w, const struct run_state *rs, const struct run_result *r);
/* record_files.c: write the JSON text and the CSV header and row to --out
 * (or stdout) and --csv; what record_write returns (run.h). */
int record_files_write(const struct run_config *cfg, volatile sig_atomic_t *stop, const char *json,
		       size_t json_len, const char *header, size_t hlen, const char *row, size_t rlen, char *err,
		       size_t err_len);

#endif
