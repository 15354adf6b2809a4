/* record.c - the run record: JSON (schema_version 2), the same as a CSV
 * row, and a human summary on stderr.
 *
 * Files are written atomically: into a temporary file in the target's
 * directory, then renamed with RENAME_NOREPLACE, so a record is either
 * complete or absent and an existing file is never replaced.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "csv.h"
#include "environment.h"
#include "json.h"
#include "parse.h"
#include "oom_victims.h"
#include "run.h"

/* 2: results.map_sync, results.persist, results.persist_why (issue 20) */
#define SCHEMA_VERSION 2

static double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

/* Merged figures over all workers that published them. */
struct merged {
	struct workload_slot slot;
	uint64_t minflt, majflt;
	uint64_t attach_sum, attach_max, detach_sum, detach_max, barrier_sum, barrier_max, run_sum, run_max;
	unsigned published;   /* workers that reached the parked point */
	unsigned detached;
	/* Page tables (VmPTE view), over workers measured at both points. */
	uint64_t vmpte_sum, vmpte_baseline_sum, region_sum;
	unsigned vmpte_workers;
	int64_t region_min, region_max;
	char first_error[200];
};

static void merge(const struct run_state *rs, struct merged *m, const struct workload_ops *wl)
{
	memset(m, 0, sizeof(*m));
	histogram_init(&m->slot.fault_ns);
	histogram_init(&m->slot.op_ns);
	for (unsigned ph = 0; ph < workload_phase_count(wl); ph++)
		histogram_init(&m->slot.phase_ns[ph]);
	m->region_min = INT64_MAX;
	for (unsigned i = 0; i < rs->forked; i++) {
		const struct worker_area *wa = &rs->area.workers[i];
		const struct worker_figures *f = &wa->fig;
		if (f->error[0] && !m->first_error[0])
			snprintf(m->first_error, sizeof(m->first_error), "worker %u: %s", i, f->error);
		if (f->phase < PHASE_DONE || f->phase == PHASE_FAILED)
			continue;
		m->published++;
		histogram_merge(&m->slot.fault_ns, &wa->slot.fault_ns);
		histogram_merge(&m->slot.op_ns, &wa->slot.op_ns);
		for (unsigned ph = 0; ph < workload_phase_count(wl); ph++)
			histogram_merge(&m->slot.phase_ns[ph], &wa->slot.phase_ns[ph]);
		m->slot.pages_touched += wa->slot.pages_touched;
		m->slot.ops += wa->slot.ops;
		m->slot.bytes += wa->slot.bytes;
		for (int c = 0; c < WORKLOAD_MAX_COUNTERS && wl->counter_names[c]; c++)
			m->slot.counters[c] += wa->slot.counters[c];
		m->minflt += f->minflt;
		m->majflt += f->majflt;
		m->attach_sum += f->attach_ns;
		m->barrier_sum += f->barrier_wait_ns;
		m->run_sum += wa->slot.run_ns;
		if (f->attach_ns > m->attach_max) m->attach_max = f->attach_ns;
		if (f->barrier_wait_ns > m->barrier_max) m->barrier_max = f->barrier_wait_ns;
		if (wa->slot.run_ns > m->run_max) m->run_max = wa->slot.run_ns;
		if (f->phase == PHASE_DETACHED) {
			m->detached++;
			m->detach_sum += f->detach_ns;
			if (f->detach_ns > m->detach_max) m->detach_max = f->detach_ns;
		}
		if (rs->vmpte_baseline[i] >= 0 && rs->vmpte_parked[i] >= 0) {
			int64_t region = rs->vmpte_parked[i] - rs->vmpte_baseline[i];
			m->vmpte_workers++;
			m->vmpte_sum += (uint64_t)rs->vmpte_parked[i];
			m->vmpte_baseline_sum += (uint64_t)rs->vmpte_baseline[i];
			m->region_sum += (uint64_t)(region > 0 ? region : 0);
			if (region < m->region_min) m->region_min = region;
			if (region > m->region_max) m->region_max = region;
		}
	}
	if (m->region_min == INT64_MAX)
		m->region_min = 0;
}

static void write_histogram(struct json_writer *w, const char *key, const struct histogram *h, bool p9999)
{
	json_begin_object(w, key);
	json_key_u64(w, "count", h->count);
	json_key_double(w, "mean", histogram_mean(h));
	json_key_u64(w, "min", h->count ? h->min : 0);
	json_key_u64(w, "p50", histogram_percentile(h, 50));
	json_key_u64(w, "p90", histogram_percentile(h, 90));
	json_key_u64(w, "p99", histogram_percentile(h, 99));
	json_key_u64(w, "p999", histogram_percentile(h, 99.9));
	if (p9999)
		json_key_u64(w, "p9999", histogram_percentile(h, 99.99));
	json_key_u64(w, "max", h->max);
	json_end_object(w);
}

/* How many `unit`-aligned blocks [addr, addr + size) touches. */
static uint64_t blocks_spanned(uint64_t addr, uint64_t size, uint64_t unit)
{
	return size ? (addr + size - 1) / unit - addr / unit + 1 : 0;
}

/* The page size the region actually got, from the smaps of one worker
 * (or the DAX probe), cross-checked against the region's page tables. */
static void page_size_obtained(const struct run_state *rs, const struct merged *m, uint64_t *bytes,
			       const char **source, bool *mixed)
{
	const struct smaps_region *s = &rs->smaps;
	uint64_t pmd = s->shmem_pmd_bytes + s->file_pmd_bytes + s->anon_huge_bytes;

	*mixed = false;
	if (rs->smaps_worker < 0) {
		*bytes = 0;
		*source = "unavailable (no worker's smaps could be read)";
	} else if (s->kernel_page_bytes > 4096) {
		*bytes = s->kernel_page_bytes;
		*source = "smaps KernelPageSize";
	} else if (pmd > 0) {
		*bytes = 2u << 20;
		*source = s->shmem_pmd_bytes ? "smaps ShmemPmdMapped" : s->file_pmd_bytes ? "smaps FilePmdMapped"
											  : "smaps AnonHugePages";
		*mixed = pmd < s->rss_bytes;
	} else if (rs->page_probe == PAGE_PROBE_PMD || rs->page_probe == PAGE_PROBE_PTE) {
		/* DAX: smaps leaves PMD mappings of device memory out. */
		*bytes = rs->page_probe == PAGE_PROBE_PMD ? 2u << 20 : 4096;
		*source = page_probe_describe(rs->page_probe);
		if (rs->page_probe == PAGE_PROBE_PMD) {
			/* The probe sees the first 2 MiB only. With PMD mappings
			 * alone, a worker's region page tables are its PMD tables
			 * (one per GiB spanned) and PUD tables (one per 512 GiB);
			 * anything beyond is PTE tables: some ranges fell back. */
			uint64_t pmd_only = 4096 * (blocks_spanned(rs->region.addr, rs->cfg.size, 1ull << 30) +
						    blocks_spanned(rs->region.addr, rs->cfg.size, 1ull << 39));
			*mixed = m->region_max > (int64_t)pmd_only;
		}
	} else {
		*bytes = s->kernel_page_bytes ? s->kernel_page_bytes : 4096;
		*source = "smaps KernelPageSize, no PMD-mapped memory";
	}
}

/* results.pagetables.nodes: PageTables of every node at the three points. */
static void write_pagetables_per_node(struct json_writer *w, const struct run_state *rs)
{
	const struct numa_plan *p = &rs->numa;
	int64_t sum = 0;
	json_begin_array(w, "nodes");
	for (int n = 0; n <= p->max_node; n++) {
		if (!(p->node_present >> n & 1))
			continue;
		const int64_t b = rs->pt_before.node[n], z = rs->pt_baseline.node[n], k = rs->pt_parked.node[n];
		json_begin_object(w, NULL);
		json_key_i64(w, "node", n);
		json_key_i64(w, "before_bytes", b);
		json_key_i64(w, "baseline_bytes", z);
		json_key_i64(w, "parked_bytes", k);
		json_key_i64(w, "delta_bytes", k - z);
		json_key_i64(w, "delta_from_before_bytes", k - b);
		json_end_object(w);
		sum += k - z;
	}
	json_end_array(w);
	json_key_i64(w, "nodes_delta_sum_bytes", sum);
	json_key_bool(w, "nodes_consistent",
		      rs->pt_before.consistent && rs->pt_baseline.consistent && rs->pt_parked.consistent);
	json_key_string(w, "nodes_source", p->sysfs_nodes ? "/sys/devices/system/node/node*/meminfo PageTables"
							   : "no /sys/devices/system/node (kernel without NUMA): "
							     "node 0 is /proc/meminfo");
}

/* results.numa: where workers ran, the memory policy, the DAX device's
 * node, and what the kernel does about page-table placement. */
static void write_numa(struct json_writer *w, const struct run_state *rs)
{
	const struct numa_plan *p = &rs->numa;
	const struct run_config *cfg = &rs->cfg;
	static const char *const placement[] = { "none (workers not bound; the scheduler places them)", "spread",
						 "compact", "list" };
	json_begin_object(w, "numa");
	json_key_i64(w, "nodes", p->nodes);
	json_key_string(w, "cpu_placement", placement[cfg->numa.cpus]);
	json_key_string(w, "cpus_used", p->npus ? p->cpus_text : NULL);
	json_begin_array(w, "workers_per_node");
	for (int n = 0; n <= p->max_node; n++) {
		if (!(p->node_present >> n & 1))
			continue;
		uint64_t count = 0;
		for (unsigned i = 0; i < rs->forked; i++)
			if (rs->area.workers[i].fig.phase >= PHASE_DONE && rs->area.workers[i].fig.phase != PHASE_FAILED &&
			    rs->area.workers[i].fig.node == n)
				count++;
		json_key_u64(w, NULL, count);
	}
	json_end_array(w);
	uint64_t seen[NUMA_MAX_CPUS / 64] = { 0 };
	char seen_text[256];
	for (unsigned i = 0; i < rs->forked; i++) {
		const struct worker_figures *f = &rs->area.workers[i].fig;
		if (f->phase >= PHASE_DONE && f->phase != PHASE_FAILED && f->cpu >= 0 && f->cpu < NUMA_MAX_CPUS)
			seen[f->cpu / 64] |= 1ull << (f->cpu % 64);
	}
	place_format_set(seen, NUMA_MAX_CPUS, seen_text, sizeof(seen_text));
	json_key_string(w, "cpus_seen", seen_text);
	json_key_string(w, "workers_per_node_source",
			"getcpu() in each worker as its workload ended, over the nodes present (node 0 first); cpus_seen: the CPUs they were on then");
	json_key_string(w, "mem_policy", p->policy_set ? p->policy_text : "unchanged (as inherited)");
	json_key_string(w, "mem_policy_scope",
			"set_mempolicy() of the run's process before the backend's set-up, inherited by every worker: "
			"it places what they allocate: the region's data they fault in (shared memory, page cache, "
			"anonymous memory), hugetlb pages allocated in the set-up (bind/interleave: the pool grows through "
			"nr_hugepages_mempolicy, on the policy's nodes), and page-table pages; not the data "
			"of a DAX file (on the device, data_device_node)");
	json_key_i64(w, "data_device_node", p->data_device_node);
	json_key_string(w, "data_device", p->data_device[0] ? p->data_device : NULL);
	json_key_string(w, "page_table_placement",
			"Linux allocates a page-table page (PTE, PMD, PUD) with alloc_pages() in the context of the "
			"task that faults: under that task's memory policy (local: the node of the CPU it runs on; "
			"an mbind() VMA policy does not apply). A private set of page tables thus lands where its "
			"worker faults; a shared set (mshare) wherever the worker that first faults each range runs; "
			"pagetables.nodes says where they were");
	json_key_string(w, "latency_note",
			strcmp(environment_platform(), "guest") == 0
				? "QEMU TCG guest: a remote node's memory costs what local memory does, so latency "
				  "figures say nothing of NUMA; where pages are allocated (pagetables.nodes) is real"
				: "host: latencies are this machine's own");
	json_end_object(w);
}

static void write_record(struct json_writer *w, const struct run_state *rs, const struct merged *m)
{
	const struct run_config *cfg = &rs->cfg;
	const struct region *r = &rs->region;
	const struct workload_ops *wl = cfg->workload;
	char buf[64];

	json_begin_object(w, NULL);
	json_key_u64(w, "schema_version", SCHEMA_VERSION);
	json_key_string(w, "tool", "mshare-bench");

	json_begin_object(w, "config");
	json_key_string(w, "backend", cfg->backend->name);
	/* What the suite knows of the backend (its backend_ops): the tools
	 * read these, never the name. */
	json_begin_object(w, "backend_facts");
	backend_facts_json(w, cfg->backend);
	json_end_object(w);
	json_key_u64(w, "workers", cfg->workers);
	json_key_u64(w, "size_bytes", cfg->size);
	json_key_string(w, "workload", wl->name);
	json_key_string(w, "page_mode", cfg->page == PAGE_MODE_4K ? "4k" : "any");
	json_key_bool(w, "write", cfg->write);
	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)cfg->addr);
	json_key_string(w, "addr", buf);
	json_key_string(w, "path", cfg->path);
	json_key_u64(w, "seed", cfg->seed);
	json_key_double(w, "duration_s", cfg->duration_ns ? secs(cfg->duration_ns) : 0);
	json_key_u64(w, "ops", cfg->max_ops);
	json_key_string(w, "cpus", cfg->numa.cpus_arg);
	json_key_string(w, "mem_policy", cfg->numa.mem_policy_arg);
	json_begin_object(w, "params");
	for (int p = 0; p < WORKLOAD_MAX_PARAMS && wl->params[p].name; p++)
		json_key_string(w, wl->params[p].name, cfg->param_values[p]);
	json_end_object(w);
	json_end_object(w);

	environment_write_json(w);

	const struct preflight_figures *pf = &rs->preflight;
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
	char estimate[400];
	preflight_estimate_text(rs, estimate, sizeof(estimate));
	json_key_string(w, "estimate", estimate);
	json_end_object(w);

	json_begin_object(w, "results");
	uint64_t page_bytes;
	const char *page_source;
	bool mixed;
	page_size_obtained(rs, m, &page_bytes, &page_source, &mixed);
	json_key_u64(w, "page_size_bytes", page_bytes);
	json_key_string(w, "page_size_source", page_source);
	json_key_bool(w, "page_size_mixed", mixed);
	json_key_string(w, "page_probe", page_probe_describe(rs->page_probe));
	json_key_u64(w, "backend_page_bytes", r->backend_page_bytes);
	json_key_bool(w, "dax", r->dax);
	json_key_string(w, "backing", r->backing);
	json_key_string(w, "fs_type", r->fs_type);
	json_key_bool(w, "map_sync", r->map_sync);
	json_key_string(w, "persist", persist_mode_name(r->persist));
	json_key_string(w, "persist_why", r->persist_why);
	json_key_i64(w, "hugepages_added_to_pool", rs->hugepages_added);

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

	double gib = (double)cfg->size / (double)(1ull << 30);
	double per_worker = m->vmpte_workers ? (double)m->region_sum / m->vmpte_workers : 0;
	json_begin_object(w, "pagetables");
	json_key_i64(w, "meminfo_before_bytes", rs->meminfo_before);
	json_key_i64(w, "meminfo_baseline_bytes", rs->meminfo_baseline);
	json_key_i64(w, "meminfo_parked_bytes", rs->meminfo_parked);
	json_key_i64(w, "meminfo_delta_bytes", rs->meminfo_parked - rs->meminfo_baseline);
	json_key_i64(w, "meminfo_delta_from_before_bytes", rs->meminfo_parked - rs->meminfo_before);
	json_key_bool(w, "meminfo_stat_refreshed", rs->meminfo_refreshed);
	json_key_u64(w, "vmpte_sum_bytes", m->vmpte_sum);
	json_key_u64(w, "vmpte_baseline_sum_bytes", m->vmpte_baseline_sum);
	json_key_double(w, "vmpte_baseline_per_worker_bytes",
			m->vmpte_workers ? (double)m->vmpte_baseline_sum / m->vmpte_workers : 0);
	json_key_u64(w, "vmpte_workers", m->vmpte_workers);
	json_key_u64(w, "region_bytes_total", m->region_sum);
	json_key_double(w, "region_bytes_per_worker", per_worker);
	json_key_i64(w, "region_bytes_per_worker_min", m->region_min);
	json_key_i64(w, "region_bytes_per_worker_max", m->region_max);
	json_key_double(w, "region_bytes_per_worker_per_gib", gib > 0 ? per_worker / gib : 0);
	write_pagetables_per_node(w, rs);
	json_key_string(w, "views",
			"nodes: the same PageTables per NUMA node (/sys/devices/system/node/nodeN/meminfo) at the "
			"same three points, read around the system figure until two reads of the nodes agree "
			"(nodes_consistent: at every point; then the deltas sum to meminfo_delta_bytes); "
			"meminfo_*: /proc/meminfo PageTables, system-wide, each page-table page counted once "
			"(includes any other process's changes; per-CPU counters folded by vm/stat_refresh before each read when meminfo_stat_refreshed); meminfo_delta_bytes = parked - baseline "
			"(all workers attached, region untouched), meminfo_delta_from_before_bytes = parked - before "
			"the first fork (adds the workers' own process page tables); vmpte_*: sum of per-process "
			"VmPTE from /proc/<pid>/status, a page-table page shared by N processes counted N times; "
			"region_bytes_*: per worker VmPTE at the parked point minus the same worker's VmPTE with "
			"the region mapped but untouched");
	json_end_object(w);

	double pd = rs->private_sampled ? (double)rs->private_dirty_sum / rs->private_sampled : 0;
	double pte0 = m->vmpte_workers ? (double)m->vmpte_baseline_sum / m->vmpte_workers : 0;
	json_begin_object(w, "worker_memory");
	json_key_u64(w, "sampled_workers", rs->private_sampled);
	json_key_double(w, "private_dirty_bytes", pd);
	json_key_double(w, "pagetables_baseline_bytes", pte0);
	json_key_double(w, "total_bytes", pd + pte0);
	json_key_string(w, "meaning",
			"per worker, beyond the region: Private_Dirty from smaps_rollup minus the region's own "
			"(mean over sampled workers at the parked point) plus VmPTE with the region untouched; "
			"kernel structures (task, kernel stack) not included");
	json_end_object(w);

	write_numa(w, rs);

	write_histogram(w, "fault_latency_ns", &m->slot.fault_ns, true);
	json_key_u64(w, "timer_overhead_ns", rs->timer_overhead_ns);
	json_key_u64(w, "timer_overhead_min_ns", rs->timer_overhead_min_ns);
	json_key_string(w, "clock", BENCH_CLOCK_NAME);
	json_key_string(w, "fault_latency_includes",
			"one access between two clock reads: the fault plus one timer overhead");

	json_begin_object(w, "faults");
	json_key_u64(w, "minflt", m->minflt);
	json_key_u64(w, "majflt", m->majflt);
	json_key_u64(w, "pages_touched", m->slot.pages_touched);
	uint64_t flt = m->minflt + m->majflt;
	json_key_double(w, "pages_per_fault", flt ? (double)m->slot.pages_touched / (double)flt : 0);
	/* A first touch of a page already mapped by an earlier fault (a large
	 * folio of the page cache, fault-around) is no fault: the first-touch
	 * latency percentiles mix both, this is the cost of a real one. */
	json_key_double(w, "mean_ns_per_fault", flt ? (double)m->run_sum / (double)flt : 0);
	json_key_string(w, "scope", "getrusage of each worker around the workload only, summed; mean_ns_per_fault = "
				    "time in the workload summed over workers / (minflt + majflt)");
	json_end_object(w);

	const char *oom_source;
	unsigned oom_killed = oom_victims(rs, &oom_source);
	json_key_u64(w, "oom_killed", oom_killed);
	json_key_u64(w, "sigkilled_not_oom", rs->oom_suspects - oom_killed);
	json_key_string(w, "oom_kill_source", oom_source);
	json_key_i64(w, "oom_kill_vmstat_delta",
		     rs->oom_kill_before >= 0 ? rs->oom_kill_after - rs->oom_kill_before : -1);
	json_key_u64(w, "first_kill_at_workers", rs->oom_suspects ? rs->first_kill_at : 0);
	json_key_u64(w, "workers_started", rs->forked);
	json_key_u64(w, "workers_measured", m->published);
	json_key_u64(w, "workers_failed", rs->failed);
	json_key_u64(w, "workers_crashed", rs->crashed);
	json_begin_object(w, "worker_signals");
	for (int s = 1; s < 65; s++)
		if (rs->signal_counts[s] && !(s == SIGKILL && rs->killing))
			json_key_u64(w, sigabbrev_np(s) ? sigabbrev_np(s) : "unknown", rs->signal_counts[s]);
	json_end_object(w);
	json_key_string(w, "fork_error", rs->fork_error[0] ? rs->fork_error : NULL);
	json_key_string(w, "first_worker_error", m->first_error[0] ? m->first_error : NULL);

	unsigned n = m->published ? m->published : 1;
	json_begin_object(w, "time_s");
	json_key_double(w, "setup", secs(rs->t_setup_done - rs->t_start));
	json_key_double(w, "fork", secs(rs->t_fork_end - rs->t_setup_done));
	json_key_double(w, "barrier", secs(rs->t_all_ready - rs->t_setup_done));
	json_key_double(w, "attach", secs(m->attach_sum / n));
	json_key_double(w, "attach_max", secs(m->attach_max));
	json_key_double(w, "barrier_wait", secs(m->barrier_sum / n));
	json_key_double(w, "baseline_measure", secs(rs->t_released - rs->t_all_ready));
	json_key_double(w, "touch", secs(rs->t_all_done - rs->t_released));
	json_key_double(w, "touch_per_worker", secs(m->run_sum / n));
	json_key_double(w, "touch_per_worker_max", secs(m->run_max));
	json_key_double(w, "parked_measure", secs(rs->t_measured - rs->t_all_done));
	json_key_double(w, "detach", secs(m->detached ? m->detach_sum / m->detached : 0));
	json_key_double(w, "detach_max", secs(m->detach_max));
	json_key_double(w, "exit", secs(rs->t_all_reaped - rs->t_measured));
	json_key_double(w, "total", secs(rs->t_all_reaped - rs->t_start));
	json_key_string(w, "meaning",
			"barrier: end of setup to every worker attached; attach, barrier_wait, touch_per_worker, "
			"detach: mean per worker (and _max); touch: release to every worker parked; total: setup to "
			"every worker reaped");
	json_end_object(w);

	double wall = secs(rs->t_all_done - rs->t_released);
	json_begin_object(w, "workload");
	json_key_string(w, "name", wl->name);
	json_begin_object(w, "params");
	for (int p = 0; p < WORKLOAD_MAX_PARAMS && wl->params[p].name; p++)
		json_key_string(w, wl->params[p].name, cfg->param_values[p]);
	json_end_object(w);
	json_key_u64(w, "ops", m->slot.ops);
	json_key_double(w, "ops_per_s", wall > 0 ? (double)m->slot.ops / wall : 0);
	json_key_u64(w, "bytes", m->slot.bytes);
	write_histogram(w, "op_latency_ns", &m->slot.op_ns, false);
	if (workload_phase_count(wl)) {
		json_begin_object(w, "phase_latency_ns");
		for (unsigned ph = 0; ph < workload_phase_count(wl); ph++)
			write_histogram(w, wl->phase_names[ph], &m->slot.phase_ns[ph], false);
		json_end_object(w);
		if (wl->phase_meaning)
			json_key_string(w, "phase_meaning", wl->phase_meaning);
	}
	json_begin_object(w, "counters");
	for (int c = 0; c < WORKLOAD_MAX_COUNTERS && wl->counter_names[c]; c++)
		json_key_u64(w, wl->counter_names[c], m->slot.counters[c]);
	json_end_object(w);
	if (wl->report)
		wl->report(w, &m->slot, cfg->workload_config, m->published, wall);
	json_end_object(w);

	json_end_object(w); /* results */
	json_end_object(w);
}

/* --- outputs ------------------------------------------------------------
 *
 * --out is written in two steps: prepare (a temporary file NAME.tmp.PID
 * beside it, written and fsynced, flock()ed while it exists) and commit
 * (renamed with RENAME_NOREPLACE). --csv is appended under an exclusive
 * flock in one write at the file's old end; on any failure the file is cut
 * back to that size, so earlier rows are never touched. The commit happens
 * with SIGINT/SIGTERM/SIGHUP blocked: a signal then cannot make the run say
 * "no record" about a record that exists.
 */

/* 0, or the errno of a failed write: a write that stores nothing without
 * an error means a full device (errno is stale then). */
static int write_all(int fd, const char *data, size_t len, off_t at)
{
	size_t off = 0;
	while (off < len) {
		ssize_t n = pwrite(fd, data + off, len - off, at + (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno;
		if (n == 0)
			return ENOSPC;
		off += (size_t)n;
	}
	return 0;
}

struct prepared {
	char tmp[PATH_MAX];
	int fd;
};

static int prepare_new_file(struct prepared *pf, const char *path, const char *data, size_t len, char *err,
			    size_t err_len)
{
	snprintf(pf->tmp, sizeof(pf->tmp), "%s.tmp.%d", path, (int)getpid());
	pf->fd = open(pf->tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (pf->fd < 0) {
		snprintf(err, err_len, "--out %s: cannot create %s: %s", path, pf->tmp, strerror(errno));
		return -1;
	}
	/* Held until this process ends: a later run knows the file is not
	 * an orphan while it is locked. */
	flock(pf->fd, LOCK_EX);
	int e = write_all(pf->fd, data, len, 0);
	if (!e && fsync(pf->fd) != 0)
		e = errno;
	if (e) {
		snprintf(err, err_len, "--out %s: cannot write: %s (nothing left behind)", path, strerror(e));
		unlink(pf->tmp);
		close(pf->fd);
		pf->fd = -1;
		return -1;
	}
	return 0;
}

static void discard_prepared(struct prepared *pf)
{
	if (pf->fd >= 0) {
		unlink(pf->tmp);
		close(pf->fd);
		pf->fd = -1;
	}
}

/* Rename the prepared file to path unless path exists. */
static int commit_new_file(struct prepared *pf, const char *path, char *err, size_t err_len)
{
	int rc = 0;
	if (renameat2(AT_FDCWD, pf->tmp, AT_FDCWD, path, RENAME_NOREPLACE) != 0) {
		int e = errno;
		if (e == EINVAL && link(pf->tmp, path) == 0) { /* filesystem without RENAME_NOREPLACE */
			unlink(pf->tmp);
		} else {
			if (e == EINVAL)
				e = errno;
			unlink(pf->tmp);
			snprintf(err, err_len, "--out %s: cannot create: %s%s", path, strerror(e),
				 e == EEXIST ? " (it appeared during the run; not overwritten)" : "");
			rc = -1;
		}
	}
	close(pf->fd);
	pf->fd = -1;
	return rc;
}

/* "NAME.json.tmp.PID" or "NAME.csv.tmp.PID" (the names prepare_new_file
 * makes): the PID, else 0. */
static pid_t orphan_pid(const char *name)
{
	const char *t = strstr(name, ".tmp.");
	while (t && strstr(t + 1, ".tmp."))
		t = strstr(t + 1, ".tmp.");
	if (!t || t == name)
		return 0;
	size_t stem = (size_t)(t - name);
	if (!((stem > 5 && strncasecmp(t - 5, ".json", 5) == 0) || (stem > 4 && strncasecmp(t - 4, ".csv", 4) == 0)))
		return 0;
	const char *d = t + 5;
	if (!*d || strlen(d) > 10)
		return 0;
	long long v = 0;
	for (; *d; d++) {
		if (*d < '0' || *d > '9')
			return 0;
		v = v * 10 + (*d - '0');
	}
	return v > 0 && v <= INT32_MAX ? (pid_t)v : 0;
}

void record_clean_orphans(const char *out)
{
	char dir[PATH_MAX];
	path_dir(out, dir, sizeof(dir));
	DIR *d = opendir(dir);
	if (!d)
		return;
	int dfd = dirfd(d);
	struct dirent *e;
	while ((e = readdir(d))) {
		pid_t pid = orphan_pid(e->d_name);
		/* Only a temporary file whose writer is gone: no such process
		 * here, and nobody holds its lock (a writer in another PID
		 * namespace still does). */
		if (!pid || pid == getpid() || kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		int fd = openat(dfd, e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			continue;
		struct stat st;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && flock(fd, LOCK_EX | LOCK_NB) == 0 &&
		    unlinkat(dfd, e->d_name, 0) == 0)
			fprintf(stderr, "mshare-bench: removed %s/%s, left by run %d that was killed before "
					"committing it\n", dir, e->d_name, (int)pid);
		close(fd);
	}
	closedir(d);
}

/* Test hook (test-only, used by tests/harness/commit.sh): with
 * MSHARE_BENCH_TEST_COMMIT_GATE=PATH set, wait at the commit of the outputs
 * (temporary file written, signals blocked) until PATH exists, at most 60 s,
 * so that a test can deliver signals at that moment. */
static void test_commit_gate(const char *tmp)
{
	const char *gate = getenv("MSHARE_BENCH_TEST_COMMIT_GATE");
	if (!gate || !*gate)
		return;
	fprintf(stderr, "mshare-bench: test hook: at commit (%s), waiting for %s\n", tmp ? tmp : "stdout", gate);
	for (int i = 0; i < 6000 && access(gate, F_OK) != 0; i++) {
		struct timespec nap = { 0, 10000000 };
		nanosleep(&nap, NULL);
	}
}

/* Append one row to a CSV file (with the header when the file is empty),
 * in one write at its end, under an exclusive lock; a file whose header has
 * other columns, or that ends in a cut-off row, is left alone. On failure
 * the file is cut back to its size before, so earlier rows stay intact. */
static int append_csv(const char *path, const char *header, size_t hlen, const char *row, size_t rlen,
		      char *err, size_t err_len)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(err, err_len, "--csv %s: cannot open: %s; no row appended", path, strerror(errno));
		return -1;
	}
	struct stat st;
	if (flock(fd, LOCK_EX) != 0 || fstat(fd, &st) != 0) {
		snprintf(err, err_len, "--csv %s: cannot lock: %s; no row appended", path, strerror(errno));
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, err_len, "--csv %s is not a regular file; no row appended", path);
		close(fd);
		return -1;
	}
	char *buf = malloc(hlen + rlen);
	if (!buf) {
		snprintf(err, err_len, "--csv %s: out of memory; no row appended", path);
		close(fd);
		return -1;
	}
	size_t len = 0;
	if (st.st_size == 0) {
		memcpy(buf, header, hlen);
		len = hlen;
	} else {
		char last = 0;
		char *have = malloc(hlen);
		ssize_t got = have ? pread(fd, have, hlen, 0) : -1;
		bool same = got == (ssize_t)hlen && memcmp(have, header, hlen) == 0;
		free(have);
		if (!same) {
			snprintf(err, err_len, "--csv %s has other columns than this run's record (not this tool's "
				 "CSV, or another version); no row appended: use a new file", path);
			goto fail;
		}
		if (pread(fd, &last, 1, st.st_size - 1) != 1 || last != '\n') {
			snprintf(err, err_len, "--csv %s ends in a cut-off row (no newline at the end); no row "
				 "appended: repair or move the file", path);
			goto fail;
		}
	}
	memcpy(buf + len, row, rlen);
	len += rlen;
	int e = write_all(fd, buf, len, st.st_size);
	if (!e && fsync(fd) != 0)
		e = errno;
	if (e) {
		bool back = ftruncate(fd, st.st_size) == 0 && fsync(fd) == 0;
		snprintf(err, err_len, "--csv %s: cannot append the row: %s; %s", path, strerror(e),
			 back ? "the file is as it was before this run" :
				"cutting it back to its size before this run failed too: its last row may be cut off");
		goto fail;
	}
	free(buf);
	close(fd);
	return 0;
fail:
	free(buf);
	close(fd);
	return -1;
}

/* The CSV header and row of the record, or -1. */
static int csv_strings(const struct json_writer *jw, char **header, size_t *hlen, char **row, size_t *rlen)
{
	FILE *hf = open_memstream(header, hlen);
	if (!hf)
		return -1;
	csv_write_header(hf, jw);
	if (fclose(hf) != 0)
		return -1;
	FILE *rf = open_memstream(row, rlen);
	if (!rf)
		return -1;
	csv_write_row(rf, jw);
	return fclose(rf) != 0 ? -1 : 0;
}

static void block_stop_signals(sigset_t *old)
{
	sigset_t block;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, old);
}

static void append(char *err, size_t err_len, const char *fmt, const char *arg)
{
	size_t n = strlen(err);
	if (n < err_len)
		snprintf(err + n, err_len - n, fmt, arg);
}

static void summary(const struct run_state *rs, const struct merged *m)
{
	const struct run_config *cfg = &rs->cfg;
	char a[32], b[32], c[32];
	uint64_t page;
	const char *src;
	bool mixed;

	page_size_obtained(rs, m, &page, &src, &mixed);
	double per_worker = m->vmpte_workers ? (double)m->region_sum / m->vmpte_workers : 0;
	fprintf(stderr, "mshare-bench: %s, %u workers, %s region, %s, pages obtained: %s%s (%s)\n",
		cfg->backend->name, cfg->workers, format_bytes(cfg->size, a, sizeof(a)), cfg->workload->name,
		format_bytes(page, b, sizeof(b)), mixed ? " (mixed with 4 KiB)" : "", src);
	fprintf(stderr, "  page tables for the region: %s per worker (VmPTE minus baseline), "
			"system view %s (PageTables delta), per-process view %s (sum of VmPTE)\n",
		format_bytes((uint64_t)per_worker, a, sizeof(a)),
		format_bytes((uint64_t)(rs->meminfo_parked - rs->meminfo_baseline > 0
						? rs->meminfo_parked - rs->meminfo_baseline : 0), b, sizeof(b)),
		format_bytes(m->vmpte_sum, c, sizeof(c)));
	if (rs->numa.nodes > 1 || rs->cfg.numa.cpus || rs->cfg.numa.policy) {
		fprintf(stderr, "  page tables per node (PageTables delta):");
		for (int n = 0; n <= rs->numa.max_node; n++)
			if (rs->numa.node_present >> n & 1)
				fprintf(stderr, " node %d %s", n,
					format_bytes((uint64_t)(rs->pt_parked.node[n] - rs->pt_baseline.node[n] > 0
								? rs->pt_parked.node[n] - rs->pt_baseline.node[n] : 0),
						     a, sizeof(a)));
		fprintf(stderr, "%s; cpus %s, mem-policy %s\n", rs->pt_parked.consistent ? "" : " (inconsistent read)",
			rs->numa.npus ? rs->numa.cpus_text : "not bound",
			rs->numa.policy_set ? rs->numa.policy_text : "unchanged");
	}
	const struct histogram *h = &m->slot.fault_ns;
	uint64_t flt = m->minflt + m->majflt;
	fprintf(stderr, "  first-touch latency: %llu touches, p50 %llu ns, p99 %llu ns, max %llu ns "
			"(timer overhead %llu ns); %llu minor faults: %.1f pages per fault, %.0f ns per fault "
			"(workload time / faults)\n",
		(unsigned long long)h->count, (unsigned long long)histogram_percentile(h, 50),
		(unsigned long long)histogram_percentile(h, 99), (unsigned long long)h->max,
		(unsigned long long)rs->timer_overhead_ns, (unsigned long long)m->minflt,
		flt ? (double)m->slot.pages_touched / (double)flt : 0.0, flt ? (double)m->run_sum / (double)flt : 0.0);
	fprintf(stderr, "  time: fork+attach %.3f s, touch %.3f s, total %.3f s\n",
		secs(rs->t_all_ready - rs->t_setup_done), secs(rs->t_all_done - rs->t_released),
		secs(rs->t_all_reaped - rs->t_start));
	const char *oom_source;
	unsigned oom_killed = oom_victims(rs, &oom_source);
	if (rs->oom_suspects || rs->crashed || rs->failed || rs->fork_error[0])
		fprintf(stderr,
			"  WARNING: %u of %u workers started; %u OOM-killed (%s), %u other SIGKILLs, %u crashed, "
			"%u failed%s%s%s\n",
			rs->forked, cfg->workers, oom_killed, oom_source, rs->oom_suspects - oom_killed, rs->crashed,
			rs->failed, m->first_error[0] ? "; " : "", m->first_error, rs->fork_error[0] ? rs->fork_error : "");
}

int record_write(struct run_state *rs, volatile sig_atomic_t *stop, char *err, size_t err_len)
{
	static struct merged m;
	struct json_writer jw;
	char *json = NULL, *header = NULL, *row = NULL;
	size_t json_len = 0, hlen = 0, rlen = 0;
	struct prepared pf = { .fd = -1 };
	sigset_t old;
	const char *out = rs->cfg.out, *csv = rs->cfg.csv;
	char csv_err[1024] = "";
	bool out_ok = false, csv_ok = false;
	int rc = RECORD_NOTHING;

	err[0] = '\0';
	merge(rs, &m, rs->cfg.workload);
	FILE *mem = open_memstream(&json, &json_len);
	if (!mem) {
		snprintf(err, err_len, "out of memory; no record written");
		return RECORD_NOTHING;
	}
	json_init(&jw, mem);
	write_record(&jw, rs, &m);
	fclose(mem);
	if (json_failed(&jw) || csv_strings(&jw, &header, &hlen, &row, &rlen) != 0) {
		snprintf(err, err_len, "internal error (out of memory?) while writing the record; no record written");
		goto done;
	}

	/* Prepare --out: CSV with header if FILE ends in .csv, else JSON. A
	 * failure here still leaves --csv to keep the record. */
	bool out_prepared = true;
	if (out) {
		if (record_out_is_csv(out)) {
			char *both = malloc(hlen + rlen);
			if (both) {
				memcpy(both, header, hlen);
				memcpy(both + hlen, row, rlen);
				out_prepared = prepare_new_file(&pf, out, both, hlen + rlen, err, err_len) == 0;
			} else {
				snprintf(err, err_len, "--out %s: out of memory", out);
				out_prepared = false;
			}
			free(both);
		} else {
			out_prepared = prepare_new_file(&pf, out, json, json_len, err, err_len) == 0;
		}
	}

	/* Commit, with the stop signals held back until it is done. */
	block_stop_signals(&old);
	if (*stop) {
		discard_prepared(&pf);
		sigprocmask(SIG_SETMASK, &old, NULL);
		rc = RECORD_INTERRUPTED;
		goto done;
	}
	if (out_prepared) {
		test_commit_gate(out ? pf.tmp : NULL);
		if (out) {
			out_ok = commit_new_file(&pf, out, err, err_len) == 0;
		} else {
			out_ok = fwrite(json, 1, json_len, stdout) == json_len && fflush(stdout) == 0;
			if (!out_ok)
				snprintf(err, err_len, "cannot write the record to stdout: %s", strerror(errno));
		}
	}
	if (csv)
		csv_ok = append_csv(csv, header, hlen, row, rlen, csv_err, sizeof(csv_err)) == 0;
	sigprocmask(SIG_SETMASK, &old, NULL); /* a held-back signal is taken here */

	if (out_ok && (!csv || csv_ok)) {
		rc = RECORD_WRITTEN;
	} else if (out_ok) {
		snprintf(err, err_len, "%s", csv_err);
		append(err, err_len, "; the record is in %s", out ? out : "the JSON on stdout");
		rc = RECORD_PARTLY;
	} else if (csv_ok) {
		append(err, err_len, "; the record is only in --csv %s (row appended)", csv);
		rc = RECORD_PARTLY;
	} else {
		if (csv)
			append(err, err_len, "; %s", csv_err);
		append(err, err_len, "%s", "; no record written");
		rc = RECORD_NOTHING;
	}
	if (rc != RECORD_NOTHING && !rs->cfg.quiet)
		summary(rs, &m);
done:
	discard_prepared(&pf);
	json_free(&jw);
	free(json);
	free(header);
	free(row);
	return rc;
}

bool record_out_is_csv(const char *out)
{
	size_t n = strlen(out);
	return n >= 4 && strcasecmp(out + n - 4, ".csv") == 0;
}
