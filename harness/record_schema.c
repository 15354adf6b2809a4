/* record_schema.c - the run record as JSON (schema_version
 * RECORD_SCHEMA_VERSION): prints the run's configuration and measurements
 * (struct run_state) and the figures derived from them (struct run_result,
 * record.c); computes nothing. What each field means: results/README.md.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "environment.h"
#include "hw_counter.h"
#include "record_schema.h"

/* The figures of one histogram, inside an object the caller opened. */
static void write_latency_fields(struct json_writer *w, const struct latency_figures *f, bool p9999)
{
	json_key_u64(w, "count", f->count);
	json_key_double(w, "mean", f->mean);
	json_key_u64(w, "min", f->min);
	json_key_u64(w, "p50", f->p50);
	json_key_u64(w, "p90", f->p90);
	json_key_u64(w, "p99", f->p99);
	json_key_u64(w, "p999", f->p999);
	if (p9999)
		json_key_u64(w, "p9999", f->p9999);
	json_key_u64(w, "max", f->max);
}

static void write_latency(struct json_writer *w, const char *key, const struct latency_figures *f, bool p9999)
{
	json_begin_object(w, key);
	write_latency_fields(w, f, p9999);
	json_end_object(w);
}

static void write_params(struct json_writer *w, const struct run_config *cfg)
{
	const struct workload_ops *wl = cfg->workload;
	json_begin_object(w, "params");
	for (int p = 0; p < WORKLOAD_MAX_PARAMS && wl->params[p].name; p++)
		json_key_string(w, wl->params[p].name, cfg->param_values[p]);
	json_end_object(w);
}

static void write_config(struct json_writer *w, const struct run_config *cfg)
{
	char addr[32];
	json_begin_object(w, "config");
	json_key_string(w, "backend", cfg->backend->name);
	/* What the suite knows of the backend (its backend_ops): the tools
	 * read these, never the name. */
	json_begin_object(w, "backend_facts");
	backend_facts_json(w, cfg->backend);
	json_end_object(w);
	json_key_u64(w, "workers", cfg->workers);
	json_key_u64(w, "size_bytes", cfg->size);
	json_key_string(w, "workload", cfg->workload->name);
	/* What the suite knows of the workload's reach (its workload_ops):
	 * the planner reads these, never the name. */
	json_begin_object(w, "workload_facts");
	json_key_u64(w, "touch_stride_bytes", cfg->workload->touch_stride);
	json_key_bool(w, "touches_whole_region", cfg->workload->touches_whole_region);
	json_end_object(w);
	json_key_string(w, "page_mode", cfg->page == PAGE_MODE_4K ? "4k" : "any");
	json_key_bool(w, "write", cfg->write);
	snprintf(addr, sizeof(addr), "0x%llx", (unsigned long long)cfg->addr);
	json_key_string(w, "addr", addr);
	json_key_string(w, "path", cfg->path);
	json_key_u64(w, "seed", cfg->seed);
	json_key_double(w, "duration_s", cfg->duration_ns ? (double)cfg->duration_ns / 1e9 : 0);
	json_key_u64(w, "ops", cfg->max_ops);
	json_key_string(w, "cpus", cfg->numa.cpus_arg);
	json_key_string(w, "mem_policy", cfg->numa.mem_policy_arg);
	write_params(w, cfg);
	json_end_object(w);
}

static void write_preflight(struct json_writer *w, const struct preflight_figures *pf, const struct run_result *r)
{
	json_begin_object(w, "preflight");
	json_key_i64(w, "pid_max", pf->pid_max);
	json_key_i64(w, "threads_max", pf->threads_max);
	json_key_i64(w, "tasks_before", pf->tasks_now);
	json_key_i64(w, "nproc_soft", pf->nproc_soft);
	json_key_i64(w, "nproc_hard", pf->nproc_hard);
	json_key_bool(w, "nproc_raised", pf->nproc_raised);
	json_key_i64(w, "max_map_count", pf->max_map_count);
	json_key_i64(w, "mem_available_bytes", pf->mem_available_bytes);
	json_key_u64(w, "estimated_bytes", pf->expected_total_bytes);
	json_key_u64(w, "estimated_pt_bytes_per_worker", pf->expected_pt_bytes_per_worker);
	json_key_string(w, "estimate", r->estimate);
	json_end_object(w);
}

static void write_smaps(struct json_writer *w, const struct run_state *rs)
{
	json_begin_object(w, "smaps");
	json_key_i64(w, "worker", rs->smaps_worker);
	json_key_u64(w, "rss_bytes", rs->smaps.rss_bytes);
	json_key_u64(w, "kernel_page_bytes", rs->smaps.kernel_page_bytes);
	json_key_u64(w, "mmu_page_bytes", rs->smaps.mmu_page_bytes);
	json_key_u64(w, "shmem_pmd_mapped_bytes", rs->smaps.shmem_pmd_bytes);
	json_key_u64(w, "file_pmd_mapped_bytes", rs->smaps.file_pmd_bytes);
	json_key_u64(w, "anon_huge_bytes", rs->smaps.anon_huge_bytes);
	json_key_string(w, "vmflags", rs->smaps.vmflags);
	json_end_object(w);
}

/* results.pagetables.all_levels_delta_bytes and .levels (issue 46): the
 * system view with every level in it, and which levels each figure holds
 * (harness/pt_levels.h). */
static void write_levels(struct json_writer *w, const struct run_state *rs, const struct run_result *r)
{
	const struct pt_levels *p = &rs->ptl;
	int64_t all;
	const char *mi = pt_levels_meminfo_text(p);

	if (pt_levels_all(p, r->meminfo_delta, &all))
		json_key_i64(w, "all_levels_delta_bytes", all);
	else
		json_key_null(w, "all_levels_delta_bytes");
	json_begin_object(w, "levels");
	if (mi)
		json_key_string(w, "meminfo", mi);
	else
		json_key_null(w, "meminfo");
	json_key_string(w, "vmpte", "pte+pmd+pud");
	json_key_string(w, "all_levels", "pte+pmd+pud");
	json_key_string(w, "probe", p->probe_note);
	if (p->pud_measured)
		json_key_u64(w, "pud_pages_added", p->pud_added);
	else
		json_key_null(w, "pud_pages_added");
	json_key_string(w, "pud_source",
			p->meminfo_has_pud == 1 ? "PageTables counts PUD pages on this kernel: none added"
			: p->meminfo_has_pud == 0 ? "calls of " PT_LEVELS_PUD_SYMBOL
						    " between the baseline and the parked point (a counting kprobe), system-wide"
						  : "");
	json_key_string(w, "error", p->meminfo_has_pud == -1 ? "PageTables' levels unknown (see probe)" : p->pud_error);
	json_end_object(w);
}

/* results.pagetables: the system view (/proc/meminfo and per node) and
 * the per-process view (VmPTE). */
static void write_pagetables(struct json_writer *w, const struct run_state *rs, const struct run_result *r)
{
	const struct numa_plan *p = &rs->numa;
	json_begin_object(w, "pagetables");
	json_key_i64(w, "meminfo_before_bytes", rs->meminfo_before);
	json_key_i64(w, "meminfo_baseline_bytes", rs->meminfo_baseline);
	json_key_i64(w, "meminfo_parked_bytes", rs->meminfo_parked);
	json_key_i64(w, "meminfo_delta_bytes", r->meminfo_delta);
	json_key_i64(w, "meminfo_delta_from_before_bytes", r->meminfo_delta_from_before);
	json_key_bool(w, "meminfo_stat_refreshed", rs->meminfo_refreshed);
	write_levels(w, rs, r);
	json_key_u64(w, "vmpte_sum_bytes", r->vmpte_sum);
	json_key_u64(w, "vmpte_baseline_sum_bytes", r->vmpte_baseline_sum);
	json_key_double(w, "vmpte_baseline_per_worker_bytes", r->vmpte_baseline_per_worker);
	json_key_u64(w, "vmpte_workers", r->vmpte_workers);
	json_key_u64(w, "region_bytes_total", r->region_sum);
	json_key_double(w, "region_bytes_per_worker", r->region_per_worker);
	json_key_i64(w, "region_bytes_per_worker_min", r->region_min);
	json_key_i64(w, "region_bytes_per_worker_max", r->region_max);
	json_key_double(w, "region_bytes_per_worker_per_gib", r->region_per_worker_per_gib);
	json_begin_array(w, "nodes");
	for (int n = 0; n <= p->max_node; n++) {
		if (!(p->node_present >> n & 1))
			continue;
		json_begin_object(w, NULL);
		json_key_i64(w, "node", n);
		json_key_i64(w, "before_bytes", rs->pt_before.node[n]);
		json_key_i64(w, "baseline_bytes", rs->pt_baseline.node[n]);
		json_key_i64(w, "parked_bytes", rs->pt_parked.node[n]);
		json_key_i64(w, "delta_bytes", r->node_delta[n]);
		json_key_i64(w, "delta_from_before_bytes", r->node_delta_from_before[n]);
		json_end_object(w);
	}
	json_end_array(w);
	json_key_i64(w, "nodes_delta_sum_bytes", r->nodes_delta_sum);
	json_key_bool(w, "nodes_consistent", r->nodes_consistent);
	json_key_string(w, "nodes_source", p->sysfs_nodes ? "/sys/devices/system/node/node*/meminfo PageTables"
							   : "no /sys/devices/system/node (kernel without NUMA): "
							     "node 0 is /proc/meminfo");
	json_end_object(w);
}

static void write_worker_memory(struct json_writer *w, const struct run_state *rs, const struct run_result *r)
{
	json_begin_object(w, "worker_memory");
	json_key_u64(w, "sampled_workers", rs->private_sampled);
	json_key_double(w, "private_dirty_bytes", r->private_dirty);
	json_key_double(w, "pagetables_baseline_bytes", r->vmpte_baseline_per_worker);
	json_key_double(w, "total_bytes", r->worker_total);
	json_end_object(w);
}

/* results.numa: where workers ran, the memory policy, the DAX device's
 * node. */
static void write_numa(struct json_writer *w, const struct run_state *rs, const struct run_result *r)
{
	const struct numa_plan *p = &rs->numa;
	static const char *const placement[] = { "none (workers not bound; the scheduler places them)", "spread",
						 "compact", "list" };
	json_begin_object(w, "numa");
	json_key_i64(w, "nodes", p->nodes);
	json_key_string(w, "cpu_placement", placement[rs->cfg.numa.cpus]);
	json_key_string(w, "cpus_used", p->npus ? p->cpus_text : NULL);
	json_begin_array(w, "workers_per_node");
	for (int n = 0; n <= p->max_node; n++)
		if (p->node_present >> n & 1)
			json_key_u64(w, NULL, r->workers_per_node[n]);
	json_end_array(w);
	json_key_string(w, "cpus_seen", r->cpus_seen);
	json_key_string(w, "mem_policy", p->policy_set ? p->policy_text : "unchanged (as inherited)");
	json_key_i64(w, "data_device_node", p->data_device_node);
	json_key_string(w, "data_device", p->data_device[0] ? p->data_device : NULL);
	json_key_string(w, "latency_note", r->latency_note);
	json_end_object(w);
}

static void write_faults(struct json_writer *w, const struct run_result *r)
{
	json_begin_object(w, "faults");
	json_key_u64(w, "minflt", r->minflt);
	json_key_u64(w, "majflt", r->majflt);
	json_key_u64(w, "pages_touched", r->slot.pages_touched);
	json_key_double(w, "pages_per_fault", r->pages_per_fault);
	json_key_double(w, "mean_ns_per_fault", r->mean_ns_per_fault);
	json_end_object(w);
}

/* results.fault_cost.hw_instructions (--hw-instructions): the CPU's
 * retired instructions per touch of each kind (harness/hw_counter.h), or
 * why there are none; always the same keys. */
static void write_hw_instructions(struct json_writer *w, const struct run_state *rs, const struct run_result *r)
{
	static const char *const names[FC_HW_KINDS] = { "per_fault_mean", "per_no_fault_touch_mean" };
	static const char *const counted[FC_HW_KINDS] = { "faults_counted", "no_fault_touches_counted" };
	bool have = rs->cfg.hw_instructions && rs->hw_available;

	json_begin_object(w, "hw_instructions");
	json_key_string(w, "state", !rs->cfg.hw_instructions ? "not requested (mshare-bench run --hw-instructions)"
				    : have			 ? "measured"
								 : "unavailable");
	json_key_string(w, "reason", rs->cfg.hw_instructions && !have ? rs->hw_why : "");
	/* "instructions"; "task-clock" (ns) only when a test asked for it. */
	json_key_string(w, "event", hw_counter_event());
	for (int k = 0; k < FC_HW_KINDS; k++) {
		if (have && r->fc.hw_touches[k])
			json_key_double(w, names[k], (double)r->fc.hw_instructions[k] / (double)r->fc.hw_touches[k]);
		else
			json_key_null(w, names[k]);
		if (have)
			json_key_u64(w, counted[k], r->fc.hw_touches[k]);
		else
			json_key_null(w, counted[k]);
	}
	if (have) {
		json_key_u64(w, "fixed_cost_taken_off", r->fc.hw_baseline);
		json_key_u64(w, "read_failures", r->fc.hw_read_failures);
	} else {
		json_key_null(w, "fixed_cost_taken_off");
		json_key_null(w, "read_failures");
	}
	json_end_object(w);
}

/* results.fault_cost: every timed touch classified (harness/fault_cost.h),
 * in the clock's unit. */
static void write_fault_cost(struct json_writer *w, const struct run_state *rs, const struct run_result *r)
{
	static const char *const names[FC_KINDS] = { "faults", "no_fault_touches", "first_faults", "populated_faults",
						     "slept_faults" };

	json_begin_object(w, "fault_cost");
	json_key_string(w, "unit", environment_time_unit());
	json_key_string(w, "clock", environment_clock());
	json_key_u64(w, "touches", r->slot.pages_touched);
	for (int k = 0; k < FC_KINDS; k++) {
		const struct latency_figures *f = &r->fc_kind[k];
		json_begin_object(w, names[k]);
		write_latency_fields(w, f, false);
		if (k == FC_FAULT) {
			json_key_u64(w, "faults_taken", r->fc.faults_taken);
			json_key_u64(w, "slept", r->fc.slept);
		}
		json_end_object(w);
	}
	/* What the split means, and the cost of getting 1 MiB mapped. */
	json_key_string(w, "split", rs->area.populated
		? "first_faults: no worker had finished a touch of the page before; populated_faults: one had (only "
		  "this process's entry was missing); slept_faults: the fault slept (waited on a lock or another "
		  "task's fault), apart from both; faults = all three"
		: "no page map (region too large for it): faults and slept_faults only");
	{
		/* Per MiB of the region each worker's pass covered: only for a
		 * workload whose pass covers the whole region (touch). */
		const struct tally *t = &r->fc.kind[FC_FAULT];
		double mib = (double)rs->cfg.size * (double)r->published / (double)(1u << 20);
		if (t->count && mib > 0 && rs->cfg.workload->touches_whole_region)
			json_key_double(w, "fault_time_per_mib_touched", (double)t->sum / mib);
		else
			json_key_null(w, "fault_time_per_mib_touched");
	}
	json_begin_object(w, "preempted");
	json_key_u64(w, "count", r->fc.preempted);
	json_key_u64(w, "faults", r->fc.preempted_faults);
	json_end_object(w);
	json_begin_object(w, "faults_per_worker");
	json_key_double(w, "mean", r->fc_per_worker_mean);
	json_key_u64(w, "min", r->fc_per_worker_min);
	json_key_u64(w, "max", r->fc_per_worker_max);
	json_end_object(w);
	write_hw_instructions(w, rs, r);
	/* The kernel's own time per fault in the region (--kernel-fault-time). */
	ktrace_write_json(w, "kernel", rs->cfg.kernel_fault_time, &rs->kernel_fc, &rs->kernel_probe_cost,
			  environment_time_unit());
	json_end_object(w);
}

static void write_workers(struct json_writer *w, const struct run_state *rs, const struct run_result *r)
{
	json_key_u64(w, "oom_killed", r->oom_killed);
	json_key_u64(w, "sigkilled_not_oom", r->sigkilled_not_oom);
	json_key_string(w, "oom_kill_source", r->oom_source);
	json_key_i64(w, "oom_kill_vmstat_delta", r->oom_kill_vmstat_delta);
	json_key_u64(w, "first_kill_at_workers", r->first_kill_at_workers);
	json_key_u64(w, "workers_started", rs->forked);
	json_key_u64(w, "workers_measured", r->published);
	json_key_u64(w, "workers_failed", rs->failed);
	json_key_u64(w, "workers_crashed", rs->crashed);
	json_key_u64(w, "workers_killed_stuck", rs->stuck_killed);
	/* Deaths by signal (not the harness's own kills), always the same keys
	 * so that a record's CSV columns do not depend on what happened. */
	static const int named[] = { SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE, SIGTRAP, SIGSYS, SIGKILL, SIGTERM };
	unsigned other = 0;
	for (int s = 1; s < 65; s++) {
		bool is_named = false;
		for (size_t k = 0; k < sizeof(named) / sizeof(named[0]); k++)
			is_named |= named[k] == s;
		if (!is_named)
			other += rs->signal_counts[s];
	}
	json_begin_object(w, "worker_signals");
	for (size_t k = 0; k < sizeof(named) / sizeof(named[0]); k++)
		json_key_u64(w, sigabbrev_np(named[k]), rs->signal_counts[named[k]]);
	json_key_u64(w, "other", other);
	json_end_object(w);
	json_key_string(w, "fork_error", rs->fork_error[0] ? rs->fork_error : NULL);
	json_key_string(w, "first_worker_error", r->first_error[0] ? r->first_error : NULL);
}

static void write_times(struct json_writer *w, const struct run_result *r)
{
	json_begin_object(w, "time_s");
#define WRITE_TIME(name) json_key_double(w, #name, r->time_s.name);
	RUN_TIMES(WRITE_TIME)
#undef WRITE_TIME
	json_end_object(w);
}

static void write_workload(struct json_writer *w, const struct run_config *cfg, const struct run_result *r)
{
	const struct workload_ops *wl = cfg->workload;
	json_begin_object(w, "workload");
	json_key_string(w, "name", wl->name);
	write_params(w, cfg);
	json_key_u64(w, "ops", r->slot.ops);
	json_key_double(w, "ops_per_s", r->ops_per_s);
	json_key_u64(w, "bytes", r->slot.bytes);
	write_latency(w, "op_latency_ns", &r->op, false);
	if (workload_phase_count(wl)) {
		json_begin_object(w, "phase_latency_ns");
		for (unsigned ph = 0; ph < workload_phase_count(wl); ph++)
			write_latency(w, wl->phase_names[ph], &r->phase[ph], false);
		json_end_object(w);
		if (wl->phase_meaning)
			json_key_string(w, "phase_meaning", wl->phase_meaning);
	}
	json_begin_object(w, "counters");
	for (int c = 0; c < WORKLOAD_MAX_COUNTERS && wl->counter_names[c]; c++)
		json_key_u64(w, wl->counter_names[c], r->slot.counters[c]);
	json_end_object(w);
	if (wl->report)
		wl->report(w, &r->slot, cfg->workload_config, r->published, r->time_s.touch);
	json_end_object(w);
}

void record_json(struct json_writer *w, const struct run_state *rs, const struct run_result *r)
{
	const struct region *reg = &rs->region;

	json_begin_object(w, NULL);
	json_key_u64(w, "schema_version", RECORD_SCHEMA_VERSION);
	json_key_string(w, "tool", "mshare-bench");
	write_config(w, &rs->cfg);
	environment_write_json(w, &rs->region.pmem);
	write_preflight(w, &rs->preflight, r);

	json_begin_object(w, "results");
	/* A run that measured nothing it may report (no worker measured, a
	 * worker stopped): it says so and why, and every figure is null, so
	 * that no zero or stop-inflated time passes for a measurement. */
	json_key_bool(w, "run_failed", rs->failure[0] != '\0');
	json_key_string(w, "failure", rs->failure[0] ? rs->failure : NULL);
	json_key_u64(w, "workers_stopped", rs->workers_stopped);
	w->null_numbers = rs->failure[0] != '\0';
	json_key_u64(w, "page_size_bytes", r->page_bytes);
	json_key_string(w, "page_size_source", r->page_source);
	json_key_bool(w, "page_size_mixed", r->page_mixed);
	json_key_string(w, "page_probe", page_probe_describe(rs->page_probe));
	json_key_u64(w, "backend_page_bytes", reg->backend_page_bytes);
	json_key_bool(w, "dax", reg->dax);
	json_key_string(w, "backing", reg->backing);
	json_key_string(w, "fs_type", reg->fs_type);
	json_key_string(w, "design", reg->design);
	json_key_bool(w, "map_sync", reg->map_sync);
	json_key_string(w, "persist", persist_mode_name(reg->persist));
	json_key_string(w, "persist_why", reg->persist_why);
	json_key_string(w, "preparation", reg->preparation[0] ? reg->preparation : "not stated by the backend");
	json_key_i64(w, "hugepages_added_to_pool", rs->hugepages_added);
	write_smaps(w, rs);
	write_pagetables(w, rs, r);
	write_worker_memory(w, rs, r);
	write_numa(w, rs, r);
	write_latency(w, "fault_latency_ns", &r->fault, true);
	json_key_u64(w, "timer_overhead_ns", rs->timer_overhead_ns);
	json_key_u64(w, "timer_overhead_min_ns", rs->timer_overhead_min_ns);
	json_key_string(w, "clock", BENCH_CLOCK_NAME);
	write_faults(w, r);
	write_fault_cost(w, rs, r);
	/* The workers' fates are counts, true either way. */
	bool nulls = w->null_numbers;
	w->null_numbers = false;
	write_workers(w, rs, r);
	w->null_numbers = nulls;
	write_times(w, r);
	write_workload(w, &rs->cfg, r);
	w->null_numbers = false;
	json_end_object(w); /* results */
	json_end_object(w);
}
