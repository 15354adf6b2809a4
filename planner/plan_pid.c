/* plan_pid.c - `mshare-bench plan --pid PID`: measure a running
 * deployment's segment and page tables now, check the model against them
 * at the real address, and project the same deployment at --processes N
 * in every mode. Every figure is labelled MEASURED (read from /proc now)
 * or MODELLED. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capacity.h"
#include "deploy.h"
#include "pid_probe.h"
#include "plan_pid.h"
#include "json.h"
#include "plan_report.h"
#include "pt_model.h"
#include "touch_map.h"
#include "units.h"

#define FMT(b) units_format_bytes((b), (char[32]){ 0 }, 32)
/* Processes touching at least this share of the most-touched process's
 * 2 MiB spans form the "busiest" group that added processes resemble. */
#define BUSY_SHARE 0.9
#define LIST_MAX 40

struct proc_model {
	struct pt_cost cost;        /* the segment at its real address, this process's touch map */
	uint64_t seg_bytes;         /* the segment's VmPTE pages, modelled */
	uint64_t own_bytes;         /* VmPTE minus the segment: its own page tables */
	uint64_t recon_own_bytes;   /* page tables its other mappings' present pages need */
	uint64_t model_vmpte_bytes; /* recon_own + seg: VmPTE from presence and the model alone */
	uint64_t share_bytes;       /* the segment's share from presence alone (all - own) */
	uint64_t unseen_pages;      /* left-out pages whose neighbours have nothing present now */
	bool busy;
};

static uint64_t pages3(const uint64_t p[3])
{
	return p[0] + p[1] + p[2];
}

static double pct(double model, double measured)
{
	return measured != 0 ? (model - measured) / measured * 100.0 : 0;
}

/* Where a deployment would put the segment: where it is, except that it
 * needs (hugetlbfs, device-DAX) or gets (THP, fsdax: the kernel aligns a
 * mapping without an address hint) its page size's alignment; a top-down
 * mmap (the kernel's default) then ends it at the current end aligned
 * down. */
static uint64_t placement(enum deploy_id d, uint64_t start, uint64_t size)
{
	const struct deploy *x = deploy_get(d);
	uint64_t page = x->shape == PT_MODE_MSHARE ? 0 : x->leaf_bytes > 4096 ? x->leaf_bytes : 0;
	uint64_t len, end;

	if (!page || start % page == 0)
		return start;
	len = units_align_up(size, page);
	end = units_align_down(start + size, page);
	return end >= len ? end - len : units_align_up(start, page);
}

static int by_start(const void *a, const void *b)
{
	const struct pt_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Union of the busy processes' touch maps (offset ranges). */
static struct pt_range *union_touch(const struct pid_probe *p, const struct proc_model *pm, size_t *count,
				    uint64_t *bytes)
{
	size_t n = 0;
	struct pt_range *all, *out;

	for (size_t i = 0; i < p->proc_count; i++)
		if (pm[i].busy)
			n += p->procs[i].touch_count;
	all = malloc((n ? n : 1) * sizeof(*all));
	if (!all)
		return NULL;
	n = 0;
	for (size_t i = 0; i < p->proc_count; i++)
		if (pm[i].busy)
			for (size_t k = 0; k < p->procs[i].touch_count; k++)
				all[n++] = p->procs[i].touch[k];
	/* Sorted, then merged below (thousands of processes with scattered
	 * touches give millions of ranges: no quadratic insertion). */
	qsort(all, n, sizeof(*all), by_start);
	out = all;
	*count = n;
	*bytes = 0;
	if (*count) {
		size_t w = 0;

		for (size_t i = 1; i < *count; i++) {
			if (out[i].start <= out[w].end) {
				if (out[i].end > out[w].end)
					out[w].end = out[i].end;
			} else {
				out[++w] = out[i];
			}
		}
		*count = w + 1;
		for (size_t i = 0; i < *count; i++)
			*bytes += out[i].end - out[i].start;
	}
	return out;
}

/* The segment of process q in deployment d at addr; d < 0: in the shape
 * measured (shape). */
static int model_proc(int d, enum pt_mode shape, uint64_t addr, uint64_t size, const struct probe_proc *q,
		      struct pt_cost *c, char *err, size_t len)
{
	enum pt_mode m = d >= 0 ? deploy_get((enum deploy_id)d)->shape : shape;

	struct pt_region r = { .addr = addr, .size = size, .touch_fraction = 1,
			       .touch = q->touch, .touch_count = q->touch_count,
			       .around = q->around, .around_count = q->around_count, .around_known = true };

	if (q->touch_count == 0) {
		/* Nothing touched: no page-table page for the segment. */
		memset(c, 0, sizeof(*c));
		c->mode = m;
		return 0;
	}
	if (d >= 0 && deploy_get((enum deploy_id)d)->setup == SETUP_DEVDAX)
		r.size = units_align_up(size, deploy_get((enum deploy_id)d)->leaf_bytes);
	return d >= 0 ? deploy_model((enum deploy_id)d, &r, c, err, len) : pt_model(m, &r, c, err, len);
}

int plan_pid_main(struct plan_request *req, const struct plan_pid_args *a, FILE *out)
{
	struct pid_probe p;
	struct proc_model *pm = NULL;
	struct plan_row rows[DEPLOY_COUNT];
	struct probe_target target = { .pid = a->pid, .segment = a->segment, .by_shmid = a->by_shmid,
				       .shmid = a->shmid, .file = a->file };
	enum deploy_id seg_deploy;
	struct pt_range *group_touch = NULL;
	size_t group_touch_count = 0, busy = 0, least = 0, most = 0, check_fail = 0;
	uint64_t size, group_touched_bytes = 0, seg_spans, busy_own = 0;
	double sum_vmpte = 0, sum_model = 0, sum_recon = 0, sum_share = 0, busy_vmpte = 0, busy_mean;
	uint64_t per_busy;
	bool untouched = false;
	uint64_t seg_pages[3] = { 0, 0, 0 };
	const struct probe_proc *rep = NULL;
	char err[512];
	int rc = 0;

	if (pid_probe_run(&target, &p, err, sizeof(err)) < 0) {
		if (a->by_shmid)
			fprintf(stderr, "mshare-bench plan: --shmid %" PRId64 ": %s\n", a->shmid, err);
		else if (a->file)
			fprintf(stderr, "mshare-bench plan: %s\n", err);
		else
			fprintf(stderr, "mshare-bench plan: --pid %d: %s\n", (int)a->pid, err);
		return 2;
	}
	seg_deploy = deploy_of_shape(p.seg_mode, p.on_dax);
	size = p.seg_end - p.seg_start;
	seg_spans = pt_span_pages(p.seg_start, p.seg_end, PT_PTE_SPAN);
	pm = calloc(p.proc_count, sizeof(*pm));
	if (!pm) {
		pid_probe_free(&p);
		return 1;
	}
	/* MODELLED per process at the real address, in the mode measured. */
	for (size_t i = 0; i < p.proc_count; i++) {
		static const uint64_t span_of[3] = { PT_PTE_SPAN, PT_PMD_SPAN, PT_PUD_SPAN };
		const struct probe_proc *q = &p.procs[i];

		if (model_proc(-1, p.seg_mode, q->seg_start, q->seg_end - q->seg_start, q, &pm[i].cost, err,
			       sizeof(err)) < 0) {
			fprintf(stderr, "mshare-bench plan: --pid %d: cannot model pid %d's segment: %s\n", (int)a->pid,
				(int)q->pid, err);
			rc = 2;
			goto done;
		}
		pm[i].seg_bytes = pt_cost_vmpte_pages(&pm[i].cost) * PT_PAGE_BYTES;
		pm[i].own_bytes = (uint64_t)q->vmpte_bytes > pm[i].seg_bytes ? (uint64_t)q->vmpte_bytes - pm[i].seg_bytes : 0;
		pm[i].recon_own_bytes = pages3(q->own_pages) * PT_PAGE_BYTES;
		/* A page the model leaves out as the neighbours' exists: when
		 * they have nothing present in that span now (freed, evicted),
		 * presence does not count it among their page tables, so it is
		 * added here. */
		for (int l = 0; l < 3; l++) {
			unsigned at = pm[i].cost.left_out_at[l], own = q->own_at_edges[l];
			bool one_span = units_align_down(q->seg_start, span_of[l]) ==
					units_align_down(q->seg_end - 1, span_of[l]);

			if (one_span)
				pm[i].unseen_pages += at && !own;
			else
				pm[i].unseen_pages += ((at & 1) && !(own & 1)) + ((at & 2) && !(own & 2));
		}
		pm[i].model_vmpte_bytes = pm[i].recon_own_bytes + pm[i].seg_bytes + pm[i].unseen_pages * PT_PAGE_BYTES;
		pm[i].share_bytes = (pages3(q->all_pages) - pages3(q->own_pages)) * PT_PAGE_BYTES;
		sum_vmpte += (double)q->vmpte_bytes;
		sum_model += (double)pm[i].model_vmpte_bytes;
		sum_recon += (double)(pages3(q->all_pages) * PT_PAGE_BYTES);
		sum_share += (double)pm[i].share_bytes;
		for (int l = 0; l < 3; l++)
			seg_pages[l] += q->all_pages[l] - q->own_pages[l];
		if (pm[i].share_bytes != pm[i].seg_bytes + pm[i].unseen_pages * PT_PAGE_BYTES)
			check_fail++;
		if (pm[i].cost.touched_spans[PT_LEVEL_PTE] > pm[most].cost.touched_spans[PT_LEVEL_PTE])
			most = i;
		if (pm[i].cost.touched_spans[PT_LEVEL_PTE] < pm[least].cost.touched_spans[PT_LEVEL_PTE])
			least = i;
	}
	for (size_t i = 0; i < p.proc_count; i++) {
		pm[i].busy = (double)pm[i].cost.touched_spans[PT_LEVEL_PTE] >=
			     BUSY_SHARE * (double)pm[most].cost.touched_spans[PT_LEVEL_PTE];
		if (pm[i].busy) {
			busy++;
			busy_own += pm[i].own_bytes;
			busy_vmpte += (double)p.procs[i].vmpte_bytes;
		}
	}
	/* The typical busy process: the segment cost most busy processes
	 * have (a process with a mapping of its own next to the segment may
	 * share a page more or less); its surroundings stand for the added
	 * ones'. */
	{
		uint64_t *v = malloc((busy ? busy : 1) * sizeof(*v)), typical = 0;
		size_t nv = 0, best = 0;

		if (!v) {
			rc = 1;
			goto done;
		}
		for (size_t i = 0; i < p.proc_count; i++)
			if (pm[i].busy)
				v[nv++] = pm[i].seg_bytes;
		qsort(v, nv, sizeof(*v), by_u64);
		for (size_t i = 0, run = 0; i < nv; i++) {
			run = i && v[i] == v[i - 1] ? run + 1 : 1;
			if (run > best) {
				best = run;
				typical = v[i];
			}
		}
		free(v);
		for (size_t i = 0; i < p.proc_count && !rep; i++)
			if (pm[i].busy && pm[i].seg_bytes == typical)
				rep = &p.procs[i];
	}
	group_touch = union_touch(&p, pm, &group_touch_count, &group_touched_bytes);
	if (!group_touch) {
		rc = 1;
		goto done;
	}
	if (!a->have_processes)
		req->inputs.processes = p.proc_count;
	if (req->inputs.processes < p.proc_count) {
		fprintf(stderr, "mshare-bench plan: --processes %" PRIu64 " is fewer than the %zu processes that map "
			"the segment now (the projection adds processes to the measured ones)\n",
			req->inputs.processes, p.proc_count);
		rc = 2;
		goto done;
	}
	if (a->save_touch_map) {
		char header[512];

		snprintf(header, sizeof(header), "pid %d segment 0x%" PRIx64 "-0x%" PRIx64 " %s: union of the %zu busiest "
			 "processes' present pages", (int)a->pid, p.seg_start, p.seg_end, p.seg_name, busy);
		if (group_touch_count == 0 ||
		    touch_map_write(a->save_touch_map, group_touch, group_touch_count, header, err, sizeof(err)) < 0) {
			fprintf(stderr, "mshare-bench plan: %s\n",
				group_touch_count ? err : "--save-touch-map: no page of the segment is present");
			rc = 2;
			goto done;
		}
	}

	/* PROJECTION (MODELLED): every mode, the measured processes as they
	 * are and the added ones like the busiest group. */
	req->region.size = size;
	req->region.addr = p.seg_start;
	if (!req->region.touch_count && !req->region.touched_bytes && !a->touch_given) {
		if (group_touch_count) {
			req->region.touch = group_touch;
			req->region.touch_count = group_touch_count;
			req->region.touch_fraction = (double)group_touched_bytes / (double)size;
		} else {
			/* Nothing touched yet (a deployment just started):
			 * nothing to go by; the whole segment, an upper bound. */
			req->region.touch_fraction = 1.0;
			untouched = true;
		}
	}
	if (rep) {
		req->region.around = rep->around;
		req->region.around_count = rep->around_count;
		req->region.around_known = true;
	}
	req->inputs.measured_processes = p.proc_count;
	req->inputs.own_pt_bytes_per_process = busy ? (uint64_t)llround((double)busy_own / (double)busy) : 0;
	memset(rows, 0, sizeof(rows));
	for (int i = 0; i < req->mode_count; i++) {
		enum deploy_id m = req->modes[i];
		struct pt_region r = req->region;
		struct capacity_inputs in = req->inputs;
		bool ok = true;

		r.addr = placement(m, p.seg_start, size);
		if (deploy_get(m)->setup == SETUP_DEVDAX)
			r.size = units_align_up(size, deploy_get(m)->leaf_bytes);
		in.measured_pt_bytes = in.measured_pte_bytes = 0;
		for (size_t k = 0; k < p.proc_count && ok; k++) {
			struct pt_cost c;
			const struct probe_proc *q = &p.procs[k];

			uint64_t qsize = q->seg_end - q->seg_start;

			ok = model_proc((int)m, p.seg_mode, placement(m, q->seg_start, qsize), qsize, q, &c, rows[i].error,
					sizeof(rows[i].error)) == 0;
			in.measured_pt_bytes += pm[k].own_bytes + pt_cost_per_process_pages(&c) * PT_PAGE_BYTES;
			in.measured_pte_bytes += c.per_process_pages[PT_LEVEL_PTE] * PT_PAGE_BYTES;
		}
		if (!ok || plan_compute_row(req, m, &r, &in, &rows[i]) < 0) {
			rows[i].valid = false;
			if (a->modes_given) {
				fprintf(stderr, "mshare-bench plan: --mode %s: %s\n", deploy_name(m), rows[i].error);
				rc = 2;
				goto done;
			}
			continue;
		}
		if (r.addr != p.seg_start && !rows[i].cap.cost.note[0])
			snprintf(rows[i].cap.cost.note, sizeof(rows[i].cap.cost.note), "placed at 0x%" PRIx64 ": %s maps at "
				 "that alignment (a top-down mmap ends it at the current end, aligned down)", r.addr,
				 deploy_name(m));
	}

	busy_mean = busy ? busy_vmpte / (double)busy : 0;
	per_busy = req->inputs.own_pt_bytes_per_process +
		   (rep ? pt_cost_vmpte_pages(&pm[rep - p.procs].cost) : 0) * PT_PAGE_BYTES;
	if (a->json) {
		struct json_writer w;
		const struct pt_cost *rep_cost = rep ? &pm[rep - p.procs].cost : NULL;

		json_init(&w, out);
		json_begin_object(&w, NULL);
		json_key_u64(&w, "planner_version", 1);
		json_key_string(&w, "kind", "pid");
		json_key_i64(&w, "pid", p.pid);
		json_begin_object(&w, "segment");
		json_key_hex(&w, "start", p.seg_start);
		json_key_hex(&w, "end", p.seg_end);
		json_key_u64(&w, "start_bytes", p.seg_start);
		json_key_u64(&w, "size_bytes", size);
		json_key_string(&w, "perms", p.seg_perms);
		json_key_string(&w, "name", p.seg_name);
		json_key_u64(&w, "page_bytes", p.seg_page_bytes);
		json_key_string(&w, "mode", pt_mode_name(p.seg_mode));
		json_key_string(&w, "deployment", deploy_name(seg_deploy));
		json_key_bool(&w, "on_dax", p.on_dax);
		json_key_i64(&w, "shmid", p.shmid);
		json_key_i64(&w, "nattch", p.nattch);
		json_key_u64(&w, "spans_2m", seg_spans);
		json_key_string(&w, "why", p.why);
		json_end_object(&w);
		json_key_bool(&w, "root", p.root);
		json_key_u64(&w, "descendants", p.descendants);
		json_key_u64(&w, "processes_scanned", p.scanned);
		json_key_u64(&w, "maps_unreadable", p.maps_unreadable);
		json_key_u64(&w, "outside_tree", p.outside_tree);
		json_key_u64(&w, "mappings_found", p.vmas_found);
		json_key_bool(&w, "attach_count_matches", p.nattch < 0 || (uint64_t)p.nattch == p.vmas_found);
		json_begin_array(&w, "sysv_segments");
		for (size_t i = 0; i < p.sysv_count; i++) {
			json_begin_object(&w, NULL);
			json_key_i64(&w, "shmid", p.sysv[i].shmid);
			json_key_u64(&w, "size_bytes", p.sysv[i].size);
			json_key_i64(&w, "nattch", p.sysv[i].nattch);
			json_key_bool(&w, "hugetlb", p.sysv[i].hugetlb);
			json_end_object(&w);
		}
		json_end_array(&w);
		json_key_u64(&w, "skipped_not_mapping", p.skipped_unmapped);
		json_key_u64(&w, "skipped_unreadable", p.skipped_unreadable);
		json_begin_object(&w, "measured");
		json_key_string(&w, "kind", "measured");
		json_key_u64(&w, "processes", p.proc_count);
		json_key_fixed(&w, "vmpte_sum_bytes", sum_vmpte, 0);
		json_key_fixed(&w, "vmpte_mean_bytes", sum_vmpte / (double)p.proc_count, 1);
		json_key_fixed(&w, "segment_share_bytes", sum_share, 0);
		json_key_fixed(&w, "presence_pagetable_bytes", sum_recon, 0);
		json_key_u64(&w, "busy_processes", busy);
		json_key_fixed(&w, "busy_vmpte_mean_bytes", busy_mean, 1);
		json_key_u64(&w, "busy_touched_bytes", group_touched_bytes);
		json_key_u64(&w, "busy_touched_spans_2m", pm[most].cost.touched_spans[PT_LEVEL_PTE]);
		json_key_u64(&w, "least_touched_spans_2m", pm[least].cost.touched_spans[PT_LEVEL_PTE]);
		json_key_bool(&w, "nothing_touched", untouched);
		json_begin_array(&w, "per_process");
		for (size_t i = 0; i < p.proc_count; i++) {
			json_begin_object(&w, NULL);
			json_key_i64(&w, "pid", p.procs[i].pid);
			json_key_string(&w, "comm", p.procs[i].comm);
			json_key_i64(&w, "ppid", p.procs[i].ppid);
			json_key_bool(&w, "descendant", p.procs[i].descendant);
			json_key_hex(&w, "segment_start", p.procs[i].seg_start);
			json_key_u64(&w, "segment_mappings", p.procs[i].vmas);
			json_key_i64(&w, "vmpte_bytes", p.procs[i].vmpte_bytes);
			json_key_u64(&w, "touched_bytes", p.procs[i].touched_bytes);
			json_key_u64(&w, "touched_spans_2m", pm[i].cost.touched_spans[PT_LEVEL_PTE]);
			json_key_u64(&w, "segment_model_bytes", pm[i].seg_bytes);
			json_key_u64(&w, "segment_presence_bytes", pm[i].share_bytes);
			json_key_u64(&w, "own_bytes", pm[i].own_bytes);
			json_key_u64(&w, "own_presence_bytes", pm[i].recon_own_bytes);
			json_key_u64(&w, "model_vmpte_bytes", pm[i].model_vmpte_bytes);
			json_key_bool(&w, "busy", pm[i].busy);
			json_end_object(&w);
		}
		json_end_array(&w);
		json_end_object(&w);
		json_begin_object(&w, "model_check");
		json_key_string(&w, "kind", "model");
		json_key_string(&w, "mode", pt_mode_name(p.seg_mode));
		json_key_fixed(&w, "vmpte_sum_model_bytes", sum_model, 0);
		json_key_fixed(&w, "vmpte_sum_measured_bytes", sum_vmpte, 0);
		json_key_fixed(&w, "error_pct", pct(sum_model, sum_vmpte), 4);
		json_key_u64(&w, "left_out_pages_per_process", rep_cost ? pages3(rep_cost->left_out_pages) : 0);
		json_key_u64(&w, "per_added_process_model_bytes", per_busy);
		json_key_fixed(&w, "busy_vmpte_mean_measured_bytes", busy_mean, 1);
		json_key_fixed(&w, "per_process_error_pct", pct((double)per_busy, busy_mean), 4);
		json_end_object(&w);
		plan_report_json(&w, "projection", req, rows);
		json_end_object(&w);
		if (json_failed(&w)) {
			fprintf(stderr, "mshare-bench plan: out of memory writing the JSON\n");
			rc = 1;
		}
		json_free(&w);
		goto done;
	}

	if (a->by_shmid)
		fprintf(out, "mshare-bench plan --shmid %" PRId64 ": MEASURED now from /proc, then MODELLED (each figure says "
			"which)\n\n", a->shmid);
	else if (a->file)
		fprintf(out, "mshare-bench plan --file %s: MEASURED now from /proc, then MODELLED (each figure says "
			"which)\n\n", a->file);
	else
		fprintf(out, "mshare-bench plan --pid %d: MEASURED now from /proc, then MODELLED (each figure says which)\n\n",
			(int)a->pid);
	fprintf(out, "Segment: 0x%" PRIx64 "-0x%" PRIx64 " %s %s, %s, %s pages -> mode %s%s\n", p.seg_start, p.seg_end,
		p.seg_perms, p.seg_name, FMT(size), FMT(p.seg_page_bytes), deploy_name(seg_deploy),
		p.on_dax ? " (on DAX: data on the device)" : "");
	fprintf(out, "  chosen: %s\n", p.why);
	for (size_t i = 0; i < p.cand_count && i < 5; i++)
		fprintf(out, "  shared mapping %zu: 0x%" PRIx64 "-0x%" PRIx64 " %s %s\n", i + 1, p.cands[i].start,
			p.cands[i].end, FMT(p.cands[i].end - p.cands[i].start), p.cands[i].name);
	fprintf(out, "  %zu process(es) map it, found among all %zu processes on this host whatever their parent "
		"(%zu of them pid %d or its descendants, %zu not: e.g. children of PID 1; %zu processes' maps "
		"unreadable%s, %zu unreadable or gone while read%s%s)\n",
		p.proc_count, p.scanned, p.proc_count - p.outside_tree, (int)p.pid, p.outside_tree, p.maps_unreadable,
		p.maps_unreadable && !p.root ? ": other users', run as root or the owner" : "",
		p.skipped_unreadable, p.unreadable_example[0] ? ": " : "", p.unreadable_example);
	if (p.shmid >= 0) {
		fprintf(out, "  SysV segment id %" PRId64 ": attach count (nattch, /proc/sysvipc/shm) %" PRId64 ", mappings "
			"found %zu: %s\n", p.shmid, p.nattch, p.vmas_found,
			(uint64_t)p.nattch == p.vmas_found ? "every attach found"
			: "WARNING: they differ; the processes not found (other users', gone, or attaching after the "
			  "scan) are not in the figures below");
	} else if (p.maps_unreadable || p.skipped_unreadable) {
		fprintf(out, "  WARNING: %zu process(es) could not be read: any of them mapping the segment is not in the "
			"figures below (a file has no attach count to check against)\n",
			p.maps_unreadable + p.skipped_unreadable);
	}
	if (p.sysv_count > 1 || (p.sysv_count == 1 && p.shmid < 0)) {
		uint64_t total = 0;

		fprintf(out, "  pid %d attaches %zu SysV segment(s) (Oracle's SGA may be several; --shmid ID plans "
			"another):\n", (int)p.pid, p.sysv_count);
		for (size_t i = 0; i < p.sysv_count; i++) {
			total += p.sysv[i].size;
			fprintf(out, "    shmid %-10" PRId64 " %10s nattch %" PRId64 "%s%s\n", p.sysv[i].shmid,
				FMT(p.sysv[i].size), p.sysv[i].nattch, p.sysv[i].hugetlb ? ", hugetlb" : "",
				p.sysv[i].shmid == p.shmid ? "  <- planned here" : "");
		}
		fprintf(out, "    in all %s: huge pages for all of them: %" PRIu64 " x 2 MiB (vm.nr_hugepages, as "
			"hugepages_settings.sh counts)\n", FMT(total), (uint64_t)((total + PT_PTE_SPAN - 1) / PT_PTE_SPAN));
	}
	if (p.root)
		fprintf(out, "  access: root; /proc/PID/pagemap read for every process\n\n");
	else
		fprintf(out, "  access: not root; pagemap presence bits are readable for processes of your own user (this "
			"kernel hides only the PFNs, which the planner does not need); other users' processes are "
			"skipped as unreadable\n\n");

	fprintf(out, "Per process: VmPTE MEASURED (/proc/PID/status); 2 MiB spans of the segment with a page present "
		"MEASURED (/proc/PID/pagemap); the segment's page tables MODELLED at the real address from them; "
		"own = VmPTE - segment:\n");
	fprintf(out, "  %8s %8s %-16s %10s %13s %12s %12s %s\n", "pid", "ppid", "comm", "VmPTE", "2 MiB spans",
		"segment", "own", "");
	for (size_t i = 0; i < p.proc_count; i++) {
		const struct probe_proc *q = &p.procs[i];

		if (i == LIST_MAX) {
			fprintf(out, "  ... %zu more (--json lists every one)\n", p.proc_count - LIST_MAX);
			break;
		}
		fprintf(out, "  %8d %8d %-16s %10s %6" PRIu64 "/%-6" PRIu64 " %12s %12s %s\n", (int)q->pid, (int)q->ppid,
			q->comm,
			FMT((uint64_t)q->vmpte_bytes), pm[i].cost.touched_spans[PT_LEVEL_PTE], seg_spans,
			FMT(pm[i].seg_bytes), FMT(pm[i].own_bytes), pm[i].busy ? "busy" : "");
	}
	fprintf(out, "\nMEASURED now, in all:\n");
	fprintf(out, "  sum of VmPTE: %s over %zu processes (mean %s)\n", FMT((uint64_t)sum_vmpte), p.proc_count,
		FMT((uint64_t)(sum_vmpte / (double)p.proc_count)));
	fprintf(out, "  touched: the %zu busiest processes (>= %.0f%% of the most) touch %" PRIu64 " of %" PRIu64
		" 2 MiB spans, %s of %s (touch fraction %.4f); the least, pid %d (%s), %" PRIu64 " spans%s\n",
		busy, BUSY_SHARE * 100, pm[most].cost.touched_spans[PT_LEVEL_PTE], seg_spans, FMT(group_touched_bytes),
		FMT(size), (double)group_touched_bytes / (double)size, (int)p.procs[least].pid, p.procs[least].comm,
		pm[least].cost.touched_spans[PT_LEVEL_PTE],
		pm[least].cost.touched_spans[PT_LEVEL_PTE] ? " (spans a process touches without doing work, on "
		"starting or connecting, are part of every process's cost, not of a baseline)" : "");
	fprintf(out, "  page tables the present pages need, by the paging rules: %s (segment %s, PTE %" PRIu64
		", PMD %" PRIu64 ", PUD %" PRIu64 " pages of it)\n", FMT((uint64_t)sum_recon), FMT((uint64_t)sum_share),
		seg_pages[0], seg_pages[1], seg_pages[2]);

	fprintf(out, "\nMODELLED at the real address (mode %s, each process's touch map, the mappings around it):\n",
		deploy_name(seg_deploy));
	if (rep) {
		const struct pt_cost *c = &pm[rep - p.procs].cost;
		uint64_t out_pages = c->left_out_pages[0] + c->left_out_pages[1] + c->left_out_pages[2];

		fprintf(out, "  a typical busy process (pid %d): segment PTE %" PRIu64 " + PMD %" PRIu64 " + PUD %" PRIu64
			" pages; %" PRIu64 " page(s) left out, the mappings around the segment need them anyway%s%s\n",
			(int)rep->pid, c->per_process_pages[0], c->per_process_pages[1], c->per_process_pages[2],
			out_pages, out_pages ? ": " : "", c->left_out_note);
	}
	fprintf(out, "  sum of VmPTE: model %s (segment modelled + the page tables the other mappings' present pages "
		"need) vs measured %s: error %+.2f%%\n", FMT((uint64_t)sum_model), FMT((uint64_t)sum_vmpte),
		pct(sum_model, sum_vmpte));
	if (pct(sum_model, sum_vmpte) < -1)
		fprintf(out, "      why: VmPTE holds page-table pages with nothing present in them now: pages freed "
			"(free(), MADV_DONTNEED) or evicted (file pages under memory pressure) leave their page-table "
			"page behind; own page tables are therefore taken as VmPTE - segment below\n");
	if (check_fail)
		fprintf(out, "  note: for %zu process(es) the segment's page tables by presence alone differ from the "
			"model (the kernel placed pages the paging rules do not expect)\n", check_fail);
	if (busy)
		fprintf(out, "  per busy process: model %s (own %s + segment %s) vs measured mean VmPTE %s: error %+.2f%%\n",
			FMT(per_busy), FMT(req->inputs.own_pt_bytes_per_process),
			FMT(per_busy - req->inputs.own_pt_bytes_per_process), FMT((uint64_t)busy_mean),
			pct((double)per_busy, busy_mean));
	if (untouched)
		fprintf(out, "\nNo process has a page of the segment present yet: the projection takes each added "
			"process to touch all of it (an upper bound; --touch-fraction or --touch-map to say otherwise).\n");
	fprintf(out, "\nPROJECTION (MODELLED): the %zu processes measured as they are, %" PRIu64 " more like the busy ones "
		"(%s own page tables each%s), %" PRIu64 " in all:\n\n", p.proc_count,
		req->inputs.processes - p.proc_count, FMT(req->inputs.own_pt_bytes_per_process),
		a->touch_given ? ", touching as --touch-map/--touch-fraction says"
		: untouched ? ", touching all of it" : ", touching what they touch",
		req->inputs.processes);
	plan_report_text(out, req, rows);
done:
	free(group_touch);
	free(pm);
	pid_probe_free(&p);
	if (rc == 0 && fflush(out) != 0)
		rc = 1;
	return rc;
}
