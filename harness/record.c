/* record.c - the run's figures merged over its workers into one struct
 * run_result (every derived figure computed here, once), the human summary
 * on stderr, and record_write: JSON (record_schema.c), the same as a CSV
 * row (csv.c), written out by record_files.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <inttypes.h>
#include <string.h>

#include "csv.h"
#include "environment.h"
#include "oom_victims.h"
#include "parse.h"
#include "record.h"
#include "record_files.h"
#include "record_schema.h"

static double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

static void latency_figures(const struct histogram *h, struct latency_figures *f)
{
	f->count = h->t.count;
	f->mean = histogram_mean(h);
	f->min = h->t.count ? h->t.min : 0;
	f->p50 = histogram_percentile(h, 50);
	f->p90 = histogram_percentile(h, 90);
	f->p99 = histogram_percentile(h, 99);
	f->p999 = histogram_percentile(h, 99.9);
	f->p9999 = histogram_percentile(h, 99.99);
	f->max = h->t.max;
}

/* Sums and maxima over the workers that published their figures. */
struct worker_sums {
	uint64_t attach_sum, attach_max, detach_sum, detach_max, barrier_sum, barrier_max, run_sum, run_max;
	uint64_t cpus_seen[NUMA_MAX_CPUS / 64];
};

static void merge(const struct run_state *rs, struct run_result *r, struct worker_sums *s)
{
	const struct workload_ops *wl = rs->cfg.workload;

	histogram_init(&r->slot.fault_ns);
	fault_cost_slot_init(&r->fc);
	r->fc_per_worker_min = UINT64_MAX;
	histogram_init(&r->slot.op_ns);
	for (unsigned ph = 0; ph < workload_phase_count(wl); ph++)
		histogram_init(&r->slot.phase_ns[ph]);
	r->region_min = INT64_MAX;
	for (unsigned i = 0; i < rs->forked; i++) {
		const struct worker_area *wa = &rs->area.workers[i];
		const struct worker_figures *f = &wa->fig;
		if (f->error[0] && !r->first_error[0])
			snprintf(r->first_error, sizeof(r->first_error), "worker %u: %s", i, f->error);
		if (f->phase < PHASE_DONE || f->phase == PHASE_FAILED)
			continue;
		r->published++;
		histogram_merge(&r->slot.fault_ns, &wa->slot.fault_ns);
		fault_cost_merge(&r->fc, &wa->slot.fault_cost);
		uint64_t fpw = wa->slot.fault_cost.faults_taken + wa->slot.fault_cost.preempted_faults;
		if (fpw < r->fc_per_worker_min)
			r->fc_per_worker_min = fpw;
		if (fpw > r->fc_per_worker_max)
			r->fc_per_worker_max = fpw;
		histogram_merge(&r->slot.op_ns, &wa->slot.op_ns);
		for (unsigned ph = 0; ph < workload_phase_count(wl); ph++)
			histogram_merge(&r->slot.phase_ns[ph], &wa->slot.phase_ns[ph]);
		r->slot.pages_touched += wa->slot.pages_touched;
		r->slot.ops += wa->slot.ops;
		r->slot.bytes += wa->slot.bytes;
		for (int c = 0; c < WORKLOAD_MAX_COUNTERS && wl->counter_names[c]; c++)
			r->slot.counters[c] += wa->slot.counters[c];
		r->minflt += f->minflt;
		r->majflt += f->majflt;
		s->attach_sum += f->attach_ns;
		s->barrier_sum += f->barrier_wait_ns;
		s->run_sum += wa->slot.run_ns;
		if (f->attach_ns > s->attach_max) s->attach_max = f->attach_ns;
		if (f->barrier_wait_ns > s->barrier_max) s->barrier_max = f->barrier_wait_ns;
		if (wa->slot.run_ns > s->run_max) s->run_max = wa->slot.run_ns;
		if (f->phase == PHASE_DETACHED) {
			r->detached++;
			s->detach_sum += f->detach_ns;
			if (f->detach_ns > s->detach_max) s->detach_max = f->detach_ns;
		}
		if (f->node >= 0 && f->node < NUMA_MAX_NODES)
			r->workers_per_node[f->node]++;
		if (f->cpu >= 0 && f->cpu < NUMA_MAX_CPUS)
			s->cpus_seen[f->cpu / 64] |= 1ull << (f->cpu % 64);
		if (rs->vmpte_baseline[i] >= 0 && rs->vmpte_parked[i] >= 0) {
			int64_t region = rs->vmpte_parked[i] - rs->vmpte_baseline[i];
			r->vmpte_workers++;
			r->vmpte_sum += (uint64_t)rs->vmpte_parked[i];
			r->vmpte_baseline_sum += (uint64_t)rs->vmpte_baseline[i];
			r->region_sum += (uint64_t)(region > 0 ? region : 0);
			if (region < r->region_min) r->region_min = region;
			if (region > r->region_max) r->region_max = region;
		}
	}
	if (r->region_min == INT64_MAX)
		r->region_min = 0;
}

/* How many `unit`-aligned blocks [addr, addr + size) touches. */
static uint64_t blocks_spanned(uint64_t addr, uint64_t size, uint64_t unit)
{
	return size ? (addr + size - 1) / unit - addr / unit + 1 : 0;
}

/* The page size the region actually got, from the smaps of one worker
 * (or the DAX probe), cross-checked against the region's page tables. */
static void page_size_obtained(const struct run_state *rs, struct run_result *r)
{
	const struct smaps_region *s = &rs->smaps;
	uint64_t pmd = s->shmem_pmd_bytes + s->file_pmd_bytes + s->anon_huge_bytes;

	r->page_mixed = false;
	if (rs->smaps_worker < 0) {
		r->page_bytes = 0;
		r->page_source = "unavailable (no worker's smaps could be read)";
	} else if (rs->page_probe == PAGE_PROBE_PMD || rs->page_probe == PAGE_PROBE_PTE ||
		   rs->page_probe == PAGE_PROBE_PUD) {
		/* DAX: smaps leaves PMD mappings of device memory out, and for
		 * device-DAX states the device's alignment (KernelPageSize is
		 * its vm_ops->pagesize), not what a fault installed. */
		r->page_bytes = rs->page_probe == PAGE_PROBE_PUD ? 1u << 30
				: rs->page_probe == PAGE_PROBE_PMD ? 2u << 20 : 4096;
		r->page_source = page_probe_describe(rs->page_probe);
		if (rs->page_probe != PAGE_PROBE_PTE) {
			/* The probe sees the first 2 MiB (1 GiB) only. With PMD
			 * mappings alone, a worker's region page tables are its
			 * PMD tables (one per GiB spanned) and PUD tables (one per
			 * 512 GiB); with PUD mappings alone, the PUD tables;
			 * anything beyond: some ranges fell back. */
			uint64_t only = 4096 * blocks_spanned(rs->region.addr, rs->cfg.size, 1ull << 39);
			if (rs->page_probe == PAGE_PROBE_PMD)
				only += 4096 * blocks_spanned(rs->region.addr, rs->cfg.size, 1ull << 30);
			r->page_mixed = r->region_max > (int64_t)only;
		}
	} else if (s->kernel_page_bytes > 4096) {
		r->page_bytes = s->kernel_page_bytes;
		r->page_source = "smaps KernelPageSize";
	} else if (pmd > 0) {
		r->page_bytes = 2u << 20;
		r->page_source = s->shmem_pmd_bytes ? "smaps ShmemPmdMapped"
				 : s->file_pmd_bytes ? "smaps FilePmdMapped"
						     : "smaps AnonHugePages";
		r->page_mixed = pmd < s->rss_bytes;
	} else if (rs->region.dax && rs->cfg.backend->page_tables_shared && rs->cfg.page != PAGE_MODE_4K) {
		/* A DAX file under shared page tables, the kernel choosing the
		 * size: smaps cannot see PMD mappings of device memory, and a
		 * probe would attach as one more sharer. The faults tell: every
		 * 4 KiB page touched, fewer faults than pages means larger
		 * mappings (several sharers may fault one mapping at once, so
		 * the count is not the number of mappings). */
		uint64_t pages = rs->cfg.size / 4096;
		uint64_t faults = r->fc.faults_taken + r->fc.preempted_faults;
		/* pages_touched is summed over the workers: 1000 pt-footprint
		 * workers (one page per 2 MiB each) reach the region's page
		 * count without touching every page. The workload's facts say
		 * whether each worker touches every page. */
		const struct workload_ops *wl = rs->cfg.workload;
		bool every_page = wl->touches_whole_region && wl->touch_stride <= 4096;

		/* The region's shared page tables, counted by the kernel: with
		 * no PTE page among them, the leaves are PMDs (or PUDs with no
		 * PMD page either). The system view of a quiet guest; only
		 * where PageTables' levels are known. */
		int64_t delta = rs->meminfo_parked - rs->meminfo_baseline;
		int64_t pud = 4096 * (int64_t)blocks_spanned(rs->region.addr, rs->cfg.size, 1ull << 39);
		int64_t pmd = 4096 * (int64_t)blocks_spanned(rs->region.addr, rs->cfg.size, 1ull << 30);
		int64_t below = delta - (rs->ptl.meminfo_has_pud == 1 ? pud : 0);

		/* A 4 KiB mapping needs a PTE page per 2 MiB: with fewer, some
		 * ranges have PMD leaves and the rest fell back (mixed). */
		int64_t pte_full = 4096 * (int64_t)blocks_spanned(rs->region.addr, rs->cfg.size, 2u << 20);
		/* The faults cannot tell the leaf size; the kernel's count of
		 * the shared tables can, where its levels are known. */
		bool by_faults = every_page && r->slot.pages_touched >= pages && faults > 0;
		bool by_tables = !by_faults && rs->ptl.meminfo_has_pud >= 0 && delta >= 0 && r->slot.pages_touched > 0;
		if (by_tables && below >= pmd + 4096 && below < pmd + pte_full / 2) {
			r->page_bytes = 2u << 20;
			r->page_mixed = true;
			snprintf(r->page_source_text, sizeof(r->page_source_text),
				 "page tables: the region's shared page tables hold %" PRId64 " PTE pages where 4 KiB "
				 "leaves need %" PRId64 ": PMD leaves, some 2 MiB ranges fell back to 4 KiB (a DAX file "
				 "under shared page tables, which smaps cannot see)",
				 (below - pmd) / 4096, pte_full / 4096);
			r->page_source = r->page_source_text;
		} else if (by_tables && below < pmd + 4096) {
			r->page_bytes = below <= 0 ? 1u << 30 : 2u << 20;
			r->page_source = below <= 0
				? "page tables: the region's shared page tables hold no PMD or PTE page (PUD leaves; "
				  "a DAX file under shared page tables, which smaps cannot see)"
				: "page tables: the region's shared page tables hold PMD pages and no PTE page (PMD "
				  "leaves; a DAX file under shared page tables, which smaps cannot see)";
		} else if (!by_faults) {
			r->page_bytes = 0;
			r->page_source = "unknown: a DAX file under shared page tables (smaps cannot see PMD mappings "
					 "of device memory) and the workload did not touch every 4 KiB page";
		} else {
			/* Every mapping took at least one fault: fewer faults
			 * than 2 MiB blocks means some mapping is larger than
			 * 2 MiB (1 GiB, device-DAX), fewer than 4 KiB pages
			 * some larger than 4 KiB. A lower bound when sharers
			 * race on one mapping. */
			uint64_t blocks = blocks_spanned(0, rs->cfg.size, 2u << 20);
			r->page_bytes = faults < blocks ? 1u << 30 : faults < pages ? 2u << 20 : 4096;
			snprintf(r->page_source_text, sizeof(r->page_source_text),
				 "fault count: %" PRIu64 " faults for the %" PRIu64 " 4 KiB pages (%" PRIu64 " 2 MiB "
				 "blocks) of the region, every one touched (DAX under shared page tables; each "
				 "mapping takes at least one fault)",
				 faults, pages, blocks);
			r->page_source = r->page_source_text;
		}
	} else {
		r->page_bytes = s->kernel_page_bytes ? s->kernel_page_bytes : 4096;
		r->page_source = "smaps KernelPageSize, no PMD-mapped memory";
	}
}

void record_result(const struct run_state *rs, struct run_result *r)
{
	const struct workload_ops *wl = rs->cfg.workload;
	struct worker_sums s = { 0 };

	memset(r, 0, sizeof(*r));
	merge(rs, r, &s);
	latency_figures(&r->slot.fault_ns, &r->fault);
	latency_figures(&r->slot.op_ns, &r->op);
	for (int k = 0; k < FC_KINDS; k++) {
		const struct tally *t = &r->fc.kind[k];
		struct latency_figures *f = &r->fc_kind[k];
		static const double pct[] = { 50, 90, 99, 99.9, 99.99 };
		uint64_t *out[] = { &f->p50, &f->p90, &f->p99, &f->p999, &f->p9999 };
		f->count = t->count;
		f->min = t->count ? t->min : 0;
		f->max = t->max;
		f->mean = t->count ? (double)t->sum / (double)t->count : 0;
		for (int i = 0; i < 5; i++)
			*out[i] = fault_cost_percentile(rs->area.fault_cost, (enum fault_cost_kind)k, t, pct[i]);
	}
	if (r->fc_per_worker_min == UINT64_MAX)
		r->fc_per_worker_min = 0;
	r->fc_per_worker_mean = r->published ? (double)(r->fc.faults_taken + r->fc.preempted_faults) / r->published : 0;
	for (unsigned ph = 0; ph < workload_phase_count(wl); ph++)
		latency_figures(&r->slot.phase_ns[ph], &r->phase[ph]);
	page_size_obtained(rs, r);

	r->meminfo_delta = rs->meminfo_parked - rs->meminfo_baseline;
	r->meminfo_delta_from_before = rs->meminfo_parked - rs->meminfo_before;
	r->vmpte_baseline_per_worker = r->vmpte_workers ? (double)r->vmpte_baseline_sum / r->vmpte_workers : 0;
	r->region_per_worker = r->vmpte_workers ? (double)r->region_sum / r->vmpte_workers : 0;
	double gib = (double)rs->cfg.size / (double)(1ull << 30);
	r->region_per_worker_per_gib = gib > 0 ? r->region_per_worker / gib : 0;
	for (int n = 0; n <= rs->numa.max_node; n++) {
		if (!(rs->numa.node_present >> n & 1))
			continue;
		r->node_delta[n] = rs->pt_parked.node[n] - rs->pt_baseline.node[n];
		r->node_delta_from_before[n] = rs->pt_parked.node[n] - rs->pt_before.node[n];
		r->nodes_delta_sum += r->node_delta[n];
	}
	r->nodes_consistent = rs->pt_before.consistent && rs->pt_baseline.consistent && rs->pt_parked.consistent;

	place_format_set(s.cpus_seen, NUMA_MAX_CPUS, r->cpus_seen, sizeof(r->cpus_seen));
	r->latency_note = strcmp(environment_platform(), "guest") == 0
				  ? "QEMU TCG guest: a remote node's memory costs what local memory does, so latency "
				    "figures say nothing of NUMA; where pages are allocated (pagetables.nodes) is real"
				  : "host: latencies are this machine's own";

	r->private_dirty = rs->private_sampled ? (double)rs->private_dirty_sum / rs->private_sampled : 0;
	r->worker_total = r->private_dirty + r->vmpte_baseline_per_worker;

	uint64_t flt = r->minflt + r->majflt;
	r->pages_per_fault = flt ? (double)r->slot.pages_touched / (double)flt : 0;
	/* A first touch of a page already mapped by an earlier fault (a large
	 * folio of the page cache, fault-around) is no fault: the first-touch
	 * latency percentiles mix both, this is the cost of a real one. */
	r->mean_ns_per_fault = flt ? (double)s.run_sum / (double)flt : 0;

	r->oom_killed = oom_victims(rs, &r->oom_source);
	r->sigkilled_not_oom = rs->oom_suspects - r->oom_killed;
	r->oom_kill_vmstat_delta = rs->oom_kill_before >= 0 ? rs->oom_kill_after - rs->oom_kill_before : -1;
	r->first_kill_at_workers = rs->oom_suspects ? rs->first_kill_at : 0;

	unsigned n = r->published ? r->published : 1;
	r->time_s.setup = secs(rs->t_setup_done - rs->t_start);
	r->time_s.fork = secs(rs->t_fork_end - rs->t_setup_done);
	r->time_s.barrier = secs(rs->t_all_ready - rs->t_setup_done);
	r->time_s.attach = secs(s.attach_sum / n);
	r->time_s.attach_max = secs(s.attach_max);
	r->time_s.barrier_wait = secs(s.barrier_sum / n);
	r->time_s.baseline_measure = secs(rs->t_released - rs->t_all_ready);
	r->time_s.touch = secs(rs->t_all_done - rs->t_released);
	r->time_s.touch_per_worker = secs(s.run_sum / n);
	r->time_s.touch_per_worker_max = secs(s.run_max);
	r->time_s.parked_measure = secs(rs->t_measured - rs->t_all_done);
	r->time_s.detach = secs(r->detached ? s.detach_sum / r->detached : 0);
	r->time_s.detach_max = secs(s.detach_max);
	r->time_s.exit = secs(rs->t_all_reaped - rs->t_measured);
	r->time_s.total = secs(rs->t_all_reaped - rs->t_start);
	r->ops_per_s = r->time_s.touch > 0 ? (double)r->slot.ops / r->time_s.touch : 0;

	preflight_estimate_text(rs, r->estimate, sizeof(r->estimate));
}

void record_summary(const struct run_state *rs, const struct run_result *r)
{
	const struct run_config *cfg = &rs->cfg;
	char a[32], b[32], c[32];

	if (rs->failure[0]) {
		/* No figure: none was measured (the record's are null). */
		fprintf(stderr, "mshare-bench: %s, %u workers, %s region, %s: FAILED, nothing measured: %s\n",
			cfg->backend->name, cfg->workers, format_bytes(cfg->size, a, sizeof(a)), cfg->workload->name,
			rs->failure);
		return;
	}
	fprintf(stderr, "mshare-bench: %s, %u workers, %s region, %s, pages obtained: %s%s (%s)\n",
		cfg->backend->name, cfg->workers, format_bytes(cfg->size, a, sizeof(a)), cfg->workload->name,
		format_bytes(r->page_bytes, b, sizeof(b)), r->page_mixed ? " (mixed with 4 KiB)" : "", r->page_source);
	fprintf(stderr, "  page tables for the region: %s per worker (VmPTE minus baseline), "
			"system view %s (PageTables delta), per-process view %s (sum of VmPTE)\n",
		format_bytes((uint64_t)r->region_per_worker, a, sizeof(a)),
		format_bytes((uint64_t)(r->meminfo_delta > 0 ? r->meminfo_delta : 0), b, sizeof(b)),
		format_bytes(r->vmpte_sum, c, sizeof(c)));
	if (rs->numa.nodes > 1 || cfg->numa.cpus || cfg->numa.policy) {
		fprintf(stderr, "  page tables per node (PageTables delta):");
		for (int n = 0; n <= rs->numa.max_node; n++)
			if (rs->numa.node_present >> n & 1)
				fprintf(stderr, " node %d %s", n,
					format_bytes((uint64_t)(r->node_delta[n] > 0 ? r->node_delta[n] : 0), a,
						     sizeof(a)));
		fprintf(stderr, "%s; cpus %s, mem-policy %s\n", rs->pt_parked.consistent ? "" : " (inconsistent read)",
			rs->numa.npus ? rs->numa.cpus_text : "not bound",
			rs->numa.policy_set ? rs->numa.policy_text : "unchanged");
	}
	fprintf(stderr, "  first-touch latency: %llu touches, p50 %llu ns, p99 %llu ns, max %llu ns "
			"(timer overhead %llu ns); %llu minor faults: %.1f pages per fault, %.0f ns per fault "
			"(workload time / faults)\n",
		(unsigned long long)r->fault.count, (unsigned long long)r->fault.p50,
		(unsigned long long)r->fault.p99, (unsigned long long)r->fault.max,
		(unsigned long long)rs->timer_overhead_ns, (unsigned long long)r->minflt, r->pages_per_fault,
		r->mean_ns_per_fault);
	fprintf(stderr, "  time: fork+attach %.3f s, touch %.3f s, total %.3f s\n", r->time_s.barrier,
		r->time_s.touch, r->time_s.total);
	if (rs->oom_suspects || rs->crashed || rs->failed || rs->stuck_killed || rs->fork_error[0])
		fprintf(stderr,
			"  WARNING: %u of %u workers started; %u OOM-killed (%s), %u other SIGKILLs, %u crashed, "
			"%u killed as stuck after a death, %u failed%s%s%s\n",
			rs->forked, cfg->workers, r->oom_killed, r->oom_source, r->sigkilled_not_oom, rs->crashed,
			rs->stuck_killed, rs->failed, r->first_error[0] ? "; " : "", r->first_error, rs->fork_error[0] ? rs->fork_error : "");
}

int record_write(struct run_state *rs, volatile sig_atomic_t *stop, char *err, size_t err_len)
{
	static struct run_result r;
	struct json_writer jw;
	char *json = NULL, *header = NULL, *row = NULL;
	size_t json_len = 0, hlen = 0, rlen = 0;
	int rc = RECORD_NOTHING;

	err[0] = '\0';
	record_result(rs, &r);
	/* No worker measured (all killed in the workload, say by the OOM
	 * killer): nothing to report but that. */
	if (!r.published && !rs->failure[0])
		snprintf(rs->failure, sizeof(rs->failure),
			 "no worker was measured: of %u started, %u SIGKILLed (OOM killer or not), %u crashed, %u failed, "
			 "%u killed as stuck", rs->forked, rs->oom_suspects, rs->crashed, rs->failed, rs->stuck_killed);
	FILE *mem = open_memstream(&json, &json_len);
	if (!mem) {
		snprintf(err, err_len, "out of memory; no record written");
		return RECORD_NOTHING;
	}
	json_init(&jw, mem);
	record_json(&jw, rs, &r);
	fclose(mem);
	if (json_failed(&jw) || csv_strings(&jw, &header, &hlen, &row, &rlen) != 0)
		snprintf(err, err_len, "internal error (out of memory?) while writing the record; no record written");
	else
		rc = record_files_write(&rs->cfg, stop, json, json_len, header, hlen, row, rlen, err, err_len);
	if ((rc == RECORD_WRITTEN || rc == RECORD_PARTLY) && !rs->cfg.quiet)
		record_summary(rs, &r);
	json_free(&jw);
	free(json);
	free(header);
	free(row);
	return rc;
}
