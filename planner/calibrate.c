/* calibrate.c - `mshare-bench plan --calibrate`: model vs measured. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "calibrate.h"
#include "record_json.h"
#include "json.h"
#include "plan_report.h"
#include "pt_model.h"
#include "units.h"

#define FMT(b) units_format_bytes((b), (char[32]){ 0 }, 32)

/* mm/vmstat.c caps a per-CPU counter's unflushed delta at 125 pages. */
#define VMSTAT_MAX_THRESHOLD 125

enum view { VIEW_REGION_PER_WORKER, VIEW_VMPTE_SUM, VIEW_MEMINFO, VIEW_COUNT };

static const char *const view_names[VIEW_COUNT] = {
	[VIEW_REGION_PER_WORKER] = "vmpte_region_per_worker",
	[VIEW_VMPTE_SUM] = "vmpte_sum",
	[VIEW_MEMINFO] = "meminfo_delta",
};

static const char *const view_text[VIEW_COUNT] = {
	[VIEW_REGION_PER_WORKER] = "VmPTE region/worker (baseline subtracted)",
	[VIEW_VMPTE_SUM] = "VmPTE sum over workers (incl. measured baseline)",
	[VIEW_MEMINFO] = "meminfo PageTables delta (system-wide, each page once)",
};

static const char *const view_key[VIEW_COUNT] = {
	[VIEW_REGION_PER_WORKER] = "results.pagetables.region_bytes_per_worker",
	[VIEW_VMPTE_SUM] = "results.pagetables.vmpte_sum_bytes",
	[VIEW_MEMINFO] = "results.pagetables.meminfo_delta_bytes",
};

struct comparison {
	bool have;
	double measured, model, error_pct;
	bool error_defined; /* false when nothing was measured (0) */
	bool within;
	char reason[1024];
};

struct point {
	char file[512];
	const char *backend, *workload;
	uint64_t workers, size, addr, page_bytes, mem_total;
	bool mixed;
	bool dax; /* results.dax: the region was on a DAX device */
	uint64_t touch_stride; /* the workload's (config.workload_facts), 0: every page */
	/* Whether this kernel's PageTables counts PUD pages (see model_view). */
	bool meminfo_counts_pud;
	char kernel[64];
	const char *platform, *kernel_version; /* environment.*, NULL if absent */
	char mode_label[96];
	enum pt_mode mode;
	double touch_fraction;
	struct pt_cost cost;
	bool skipped;
	char skip_reason[512];
	struct comparison cmp[VIEW_COUNT];
};

/* ---- finding the records ---------------------------------------------- */

struct path_list {
	char **paths;
	size_t count, cap;
};

static int list_add(struct path_list *l, const char *dir, const char *name)
{
	char *p;

	if (l->count == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		char **n = realloc(l->paths, cap * sizeof(*n));

		if (!n)
			return -1;
		l->paths = n;
		l->cap = cap;
	}
	if (asprintf(&p, "%s/%s", dir, name) < 0)
		return -1;
	l->paths[l->count++] = p;
	return 0;
}

static int json_name(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	/* The run directory's manifest describes the sweep, not one run. */
	return n > 5 && strcmp(d->d_name + n - 5, ".json") == 0 && d->d_name[0] != '.' &&
	       strcmp(d->d_name, "manifest.json") != 0;
}

/* Every *.json in dir, sorted by name. -1 if dir cannot be read. */
static int list_dir(const char *dir, struct path_list *l)
{
	struct dirent **names;
	int n = scandir(dir, &names, json_name, alphasort), rc = 0;

	if (n < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		if (rc == 0 && list_add(l, dir, names[i]->d_name) < 0)
			rc = -1;
		free(names[i]);
	}
	free(names);
	return rc;
}

static int find_records(const char *path, struct path_list *l)
{
	struct stat st;
	char *records;

	if (stat(path, &st) < 0) {
		fprintf(stderr, "mshare-bench plan: --calibrate: '%s': %s\n", path, strerror(errno));
		errno = 0; /* said */
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		l->paths = malloc(sizeof(*l->paths));
		if (!l->paths || !(l->paths[0] = strdup(path)))
			return -1;
		l->count = l->cap = 1;
		return 0;
	}
	if (asprintf(&records, "%s/records", path) < 0)
		return -1;
	if (stat(records, &st) == 0 && S_ISDIR(st.st_mode)) {
		int rc = list_dir(records, l);

		free(records);
		return rc;
	}
	free(records);
	return list_dir(path, l);
}

/* ---- modelling one record ---------------------------------------------- */

/* Whether every worker reaches every range of the region (and the stride
 * it touches at, 0: every page), from the workload's facts
 * (config.workload_facts, written from the workload's workload_ops);
 * records from before the facts were written name only the workload, and
 * for them the same facts are those of the workloads of that time. */
static bool touches_whole_region(const json_t *r, const char *workload, uint64_t *stride)
{
	static const struct {
		const char *workload;
		uint64_t stride;
	} before_facts[] = { { "touch", 0 }, { "pt-footprint", PT_PTE_SPAN }, { "verify", 0 } };
	bool whole = false;

	*stride = 0;
	if (jr_get(r, "config.workload_facts")) {
		jr_get_u64(r, "config.workload_facts.touch_stride_bytes", stride);
		jr_get_bool(r, "config.workload_facts.touches_whole_region", &whole);
		return whole;
	}
	for (size_t i = 0; i < sizeof(before_facts) / sizeof(before_facts[0]); i++)
		if (strcmp(workload, before_facts[i].workload) == 0) {
			*stride = before_facts[i].stride;
			return true;
		}
	return false;
}

/* The planner mode of a record from its backend's facts
 * (config.backend_facts.planner_mode, written from the backend's
 * backend_ops); records from before the facts were written name only the
 * backend, and for them the same facts are those of the backends of that
 * time. */
static const char *record_planner_mode(const json_t *r, const char *backend, bool *known)
{
	static const struct {
		const char *backend, *mode;
	} before_facts[] = {
		{ "shm", "by-page" }, { "file", "by-page" }, { "anon", "by-page" }, { "hugetlb-2m", "hugetlb-2m" },
		{ "hugetlb-1g", "hugetlb-1g" }, { "mshare", "mshare" },
	};
	const json_t *facts = jr_get(r, "config.backend_facts");

	*known = true;
	if (facts)
		return jr_get_string(r, "config.backend_facts.planner_mode");
	for (size_t i = 0; i < sizeof(before_facts) / sizeof(before_facts[0]); i++)
		if (strcmp(backend, before_facts[i].backend) == 0)
			return before_facts[i].mode;
	*known = false;
	return NULL;
}

static int choose_mode(const json_t *r, struct point *p)
{
	bool known;
	const char *mode = record_planner_mode(r, p->backend, &known);

	jr_get_bool(r, "results.dax", &p->dax);
	if (!mode) {
		snprintf(p->skip_reason, sizeof(p->skip_reason), "backend '%s' has no planner mode%s", p->backend,
			 known ? "" : " (a record without config.backend_facts, of a backend the planner does not know)");
		return -1;
	}
	if (strcmp(mode, "by-page") != 0) {
		if (pt_mode_from_name(mode, &p->mode) < 0) {
			snprintf(p->skip_reason, sizeof(p->skip_reason), "backend '%s': planner mode '%s' is unknown",
				 p->backend, mode);
			return -1;
		}
		snprintf(p->mode_label, sizeof(p->mode_label), "%s", mode);
		return 0;
	}
	if (p->page_bytes == 4096 && !p->mixed) {
		p->mode = PT_MODE_4K;
		snprintf(p->mode_label, sizeof(p->mode_label), "4k");
	} else if (p->page_bytes == (1u << 30) && !p->mixed) {
		p->mode = PT_MODE_DAX_1G;
		snprintf(p->mode_label, sizeof(p->mode_label), "dax-1g");
	} else if (p->page_bytes == (2u << 20) || p->mixed) {
		p->mode = PT_MODE_DAX_2M;
		snprintf(p->mode_label, sizeof(p->mode_label), "%s%s", p->dax ? "dax-2m" : "thp-2m (as dax-2m)",
			 p->mixed ? ", mixed" : "");
	} else {
		snprintf(p->skip_reason, sizeof(p->skip_reason), "page size obtained %" PRIu64 " bytes has no planner mode",
			 p->page_bytes);
		return -1;
	}
	return 0;
}

/* A mapping that is part 2 MiB, part 4 KiB: the 2 MiB blocks that are not
 * PMD-mapped (per the record's smaps of one worker) each need a PTE page. */
static void apply_mixed_mapping(const json_t *r, struct point *p)
{
	uint64_t shmem = 0, file = 0, anon = 0, pmd_bytes, rest;

	jr_get_u64(r, "results.smaps.shmem_pmd_mapped_bytes", &shmem);
	jr_get_u64(r, "results.smaps.file_pmd_mapped_bytes", &file);
	jr_get_u64(r, "results.smaps.anon_huge_bytes", &anon);
	pmd_bytes = shmem + file + anon;
	if (pmd_bytes > p->cost.touched_bytes)
		pmd_bytes = p->cost.touched_bytes;
	rest = p->cost.touched_bytes - pmd_bytes;
	p->cost.per_process_pages[PT_LEVEL_PTE] = (rest + PT_PTE_SPAN - 1) / PT_PTE_SPAN;
	snprintf(p->cost.note, sizeof(p->cost.note),
		 "mixed mapping: %s PMD-mapped per the record's smaps (one worker), %s in 4 KiB pages "
		 "(one PTE page per 2 MiB)", FMT(pmd_bytes), FMT(rest));
}

/* Linux 6.1 allocates PUD pages without the page-table accounting
 * (asm-generic __pud_alloc_one: get_zeroed_page, no constructor), so its
 * PageTables leaves them out while VmPTE (mm_inc_nr_puds) counts them.
 * Linux 6.18 counts them in both (measured on this project's host: 1000
 * hugetlb-1g workers add one page each). Releases in between are taken to
 * count them; the calibration note says which rule a point used. */
static bool kernel_counts_pud_in_meminfo(const char *kernel, struct point *p)
{
	unsigned major = 0, minor = 0;

	snprintf(p->kernel, sizeof(p->kernel), "%s", kernel ? kernel : "unknown");
	if (!kernel || sscanf(kernel, "%u.%u", &major, &minor) != 2)
		return true;
	return major > 6 || (major == 6 && minor > 1);
}

static int model_point(const json_t *r, struct point *p)
{
	struct pt_region region = { 0 };
	char err[256];

	p->backend = jr_get_string(r, "config.backend");
	p->workload = jr_get_string(r, "config.workload");
	if (!p->backend || !p->workload || !jr_get_u64(r, "config.size_bytes", &p->size)) {
		snprintf(p->skip_reason, sizeof(p->skip_reason),
			 "not a run record (no config.backend, config.workload or config.size_bytes)");
		return -1;
	}
	if (!jr_get_u64(r, "results.pagetables.vmpte_workers", &p->workers) &&
	    !jr_get_u64(r, "results.workers_measured", &p->workers) &&
	    !jr_get_u64(r, "config.workers", &p->workers)) {
		snprintf(p->skip_reason, sizeof(p->skip_reason), "no worker count in the record");
		return -1;
	}
	if (p->workers == 0) {
		snprintf(p->skip_reason, sizeof(p->skip_reason), "no worker was measured");
		return -1;
	}
	if (!jr_get_u64(r, "config.addr", &p->addr))
		p->addr = 2ull << 40;
	if (!jr_get_u64(r, "results.page_size_bytes", &p->page_bytes)) {
		const char *pm = jr_get_string(r, "config.page_mode");

		p->page_bytes = pm && strcmp(pm, "4k") == 0 ? 4096 : 0;
	}
	jr_get_bool(r, "results.page_size_mixed", &p->mixed);
	p->meminfo_counts_pud = kernel_counts_pud_in_meminfo(jr_get_string(r, "environment.kernel"), p);
	jr_get_u64(r, "environment.mem_total_bytes", &p->mem_total);
	p->platform = jr_get_string(r, "environment.platform");
	p->kernel_version = jr_get_string(r, "environment.kernel_version");
	if (!touches_whole_region(r, p->workload, &p->touch_stride)) {
		snprintf(p->skip_reason, sizeof(p->skip_reason),
			 "workload '%s': the part of the region it touches is not modelled "
			 "(modelled: workloads whose every worker reaches every 2 MiB range, touches_whole_region in `workloads --json`)", p->workload);
		return -1;
	}
	p->touch_fraction = 1.0;
	if (choose_mode(r, p) < 0)
		return -1;
	region.addr = p->addr;
	region.size = p->size;
	/* mshare over device-DAX: the device maps only in entries of its
	 * alignment (environment.pmem, a fact of the device). */
	{
		const char *pmode = jr_get_string(r, "environment.pmem.mode");
		uint64_t align = 0;

		if (p->mode == PT_MODE_MSHARE && pmode && strcmp(pmode, "devdax") == 0 &&
		    jr_get_u64(r, "environment.pmem.align", &align))
			region.leaf_bytes = align;
	}
	/* mshare over a file whose mappings the region's host mm chooses
	 * (the 2025 design, --page any): the leaf size is the record's page
	 * size obtained; where the record could not tell it (0: unknown), a
	 * model would have to guess 4 KiB or 2 MiB, a 128x difference. */
	if (p->mode == PT_MODE_MSHARE && !region.leaf_bytes) {
		if (p->page_bytes == 0) {
			snprintf(p->skip_reason, sizeof(p->skip_reason),
				 "mshare region whose page size the record could not tell (results.page_size_bytes 0: "
				 "%s): the model needs its leaf size",
				 jr_get_string(r, "results.page_size_source") ? jr_get_string(r, "results.page_size_source")
									       : "no source");
			return -1;
		}
		if (p->page_bytes > 4096)
			region.leaf_bytes = p->page_bytes;
	}
	region.touch_fraction = p->touch_fraction;
	region.touched_bytes = 0;
	if (p->touch_stride) {
		/* It touches addr + k x stride (stride = its touch stride, or
		 * the page size when larger) for every k with k x stride < size: the
		 * touched extent ends one page after the last touch. At an
		 * address that is not 2 MiB-aligned it leaves the last, partial
		 * 2 MiB range untouched. */
		uint64_t page = p->page_bytes ? p->page_bytes : 4096;
		uint64_t stride = page > p->touch_stride ? page : p->touch_stride;
		uint64_t last = (p->size - 1) / stride * stride;

		region.touched_bytes = last + page;
		/* Shown as the share of the region's 2 MiB ranges touched. */
		p->touch_fraction = (double)pt_span_pages(p->addr, p->addr + region.touched_bytes, PT_PTE_SPAN) /
				    (double)pt_span_pages(p->addr, p->addr + p->size, PT_PTE_SPAN);
	}
	if (pt_model(p->mode, &region, &p->cost, err, sizeof(err)) < 0) {
		snprintf(p->skip_reason, sizeof(p->skip_reason), "cannot model: %s", err);
		return -1;
	}
	if (p->mixed && p->mode == PT_MODE_DAX_2M)
		apply_mixed_mapping(r, p);
	if (region.touched_bytes &&
	    pt_span_pages(p->addr, p->addr + p->cost.touched_bytes, PT_PTE_SPAN) <
	    pt_span_pages(p->addr, p->addr + p->size, PT_PTE_SPAN) && !p->cost.note[0])
		snprintf(p->cost.note, sizeof(p->cost.note),
			 "pt-footprint touches addr + k x 2 MiB: at this address the region's last, partial 2 MiB "
			 "range gets no touch, so its page-table page is never allocated");
	return 0;
}

/* Modelled bytes for each view. */
static double model_view(const struct point *p, enum view v, double baseline_per_worker)
{
	double vmpte = (double)(pt_cost_vmpte_pages(&p->cost) * PT_PAGE_BYTES);
	uint64_t shared = 0, own;

	switch (v) {
	case VIEW_REGION_PER_WORKER:
		return vmpte;
	case VIEW_VMPTE_SUM:
		return (double)p->workers * (baseline_per_worker + vmpte);
	case VIEW_MEMINFO:
		/* The host mm's PGD page (mshare) exists before the untouched
		 * point, so the delta does not see it. */
		for (int l = PT_LEVEL_PTE; l <= PT_LEVEL_PUD; l++)
			if (l != PT_LEVEL_PUD || p->meminfo_counts_pud)
				shared += p->cost.shared_pages[l];
		own = pt_cost_per_process_pages(&p->cost);
		if (!p->meminfo_counts_pud)
			own -= p->cost.per_process_pages[PT_LEVEL_PUD];
		return (double)p->workers * (double)(own * PT_PAGE_BYTES) + (double)(shared * PT_PAGE_BYTES);
	default:
		return 0;
	}
}

static size_t add_reason(char *buf, size_t len, size_t used, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static size_t add_reason(char *buf, size_t len, size_t used, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (used >= len)
		return used;
	if (used) {
		n = snprintf(buf + used, len - used, "; ");
		used += n > 0 ? (size_t)n : 0;
		if (used >= len)
			return len;
	}
	va_start(ap, fmt);
	n = vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
	used += n > 0 ? (size_t)n : 0;
	return used < len ? used : len;
}

/* Page-table pages of the region's first and last span per level that
 * could also serve mappings around it: a span the region does not start
 * (or end) on the boundary of. At the default, 512 GiB-aligned address
 * there are none above the PTE level a run's own slot would share. */
static uint64_t boundary_pages(const struct point *p, char *which, size_t len)
{
	static const uint64_t span[3] = { PT_PTE_SPAN, PT_PMD_SPAN, PT_PUD_SPAN };
	static const char *const name[3] = { "PTE", "PMD", "PUD" };
	uint64_t n = 0, end = p->addr + p->cost.mapped_bytes;
	size_t used = 0;

	which[0] = '\0';
	for (int l = 0; l < 3; l++) {
		int k = (p->addr % span[l] != 0) + (end % span[l] != 0 &&
						     units_align_down(end - 1, span[l]) != units_align_down(p->addr, span[l]));
		int w;

		if (!p->cost.per_process_pages[l] || !k)
			continue;
		n += (uint64_t)k;
		w = snprintf(which + used, len - used, "%s%d %s", used ? ", " : "", k, name[l]);
		if (w > 0 && (size_t)w < len - used)
			used += (size_t)w;
	}
	return n;
}

/* The three ways a VmPTE view falls short of the model at a real
 * deployment: upper-level pages shared with neighbours, spans never
 * touched, page tables already there at the baseline. short_pages: the
 * shortfall per worker in pages (> 0). */
static size_t vmpte_causes(const json_t *r, const struct point *p, enum view v, double short_pages,
			   char *buf, size_t len, size_t used)
{
	char which[64];
	uint64_t candidates = boundary_pages(p, which, sizeof(which)), rss = 0;
	uint64_t spans = pt_span_pages(p->addr, p->addr + p->cost.touched_bytes, PT_PTE_SPAN);
	bool have_rss = jr_get_u64(r, "results.smaps.rss_bytes", &rss) && rss > 0;
	uint64_t page = p->page_bytes ? p->page_bytes : 4096;
	/* What one worker has resident when it touched all the model assumes. */
	uint64_t expect = p->touch_stride ? spans * page : p->cost.touched_bytes;
	bool touched_all = have_rss && rss >= expect;

	if (candidates)
		used = add_reason(buf, len, used,
				  "shared upper-level pages: at 0x%" PRIx64 " the region's first or last page-table page "
				  "(%s: up to %" PRIu64 " per worker) may also serve whatever lies around it in that span "
				  "and then exists anyway, so it is not the region's cost; plan --pid leaves such pages "
				  "out from the mappings around the segment (/proc/PID/maps)", p->addr, which, candidates);
	if (short_pages > (double)candidates + 0.01 || !candidates) {
		double rest = short_pages - (double)candidates;

		if (rest < 0)
			rest = short_pages;
		/* Only a shortfall has these causes (the model counting spans
		 * never touched, or a baseline holding them): "about -7 of the
		 * 512 spans" meant the measured figure was the larger. */
		if (rest < 0.5)
			return used;
		if (!touched_all)
			used = add_reason(buf, len, used,
					  "touch fraction: about %.0f of the %" PRIu64 " 2 MiB spans the model counts got no "
					  "page-table page%s; model the spans really touched with --touch-map FILE "
					  "(plan --pid --save-touch-map writes one from a running deployment)",
					  rest, spans,
					  have_rss ? " (the worker measured had less resident than the model assumes "
					  "touched: smaps Rss)" : "");
		if (!have_rss || touched_all)
			used = add_reason(buf, len, used,
					  "baseline: %sthe per-worker baseline (read with the region mapped and, supposedly, "
					  "untouched) may already have held about %.0f of the region's page-table pages, "
					  "touched before it (as connecting to a database does): %s",
					  touched_all ? "the worker measured had everything resident (smaps Rss), so " : "",
					  rest, v == VIEW_REGION_PER_WORKER ? "a delta from an idle but connected point misses them"
					  : "the model adds the measured baseline, which already holds them, so they count twice");
	}
	return used;
}

/* Why the model and the measurement differ, from what the record shows. */
static void explain(const json_t *r, const struct point *p, enum view v, struct comparison *c)
{
	size_t used = 0, len = sizeof(c->reason);
	double diff = c->measured - c->model;
	double per_worker = v == VIEW_REGION_PER_WORKER ? diff : diff / (double)p->workers;
	uint64_t rmin = 0, rmax = 0;
	double before = 0, baseline = 0, parked = 0, base_sum = 0;
	uint64_t cpus = 0;

	used = add_reason(c->reason, len, used, "measured %s the model by %.0f B per worker (%.2f page-table pages)",
			  diff > 0 ? "exceeds" : "falls short of", fabs(per_worker), fabs(per_worker) / PT_PAGE_BYTES);
	if (p->mixed)
		used = add_reason(c->reason, len, used,
				  "the mapping mixes 2 MiB and 4 KiB pages; the model takes the split from one worker's smaps, "
				  "other workers may differ");
	else if (p->mode == PT_MODE_DAX_2M && !p->dax)
		used = add_reason(c->reason, len, used, "THP: the kernel chose 2 MiB pages (modelled as PMD-mapped)");

	if (v != VIEW_MEMINFO && jr_get_u64(r, "results.pagetables.region_bytes_per_worker_min", &rmin) &&
	    jr_get_u64(r, "results.pagetables.region_bytes_per_worker_max", &rmax) && rmin != rmax)
		used = add_reason(c->reason, len, used, "workers differ: %" PRIu64 " to %" PRIu64 " B of region page tables",
				  rmin, rmax);
	if (v != VIEW_MEMINFO && per_worker <= -PT_PAGE_BYTES / 2.0 && !p->mixed)
		used = vmpte_causes(r, p, v, -per_worker / PT_PAGE_BYTES, c->reason, len, used);
	if (v == VIEW_VMPTE_SUM && fabs(per_worker) > PT_PAGE_BYTES / 2.0)
		used = add_reason(c->reason, len, used,
				  "the sum also holds each worker's own page tables, which can grow between the "
				  "baseline and parked reads");
	if (v == VIEW_MEMINFO) {
		double vmpte_view = (double)p->workers * (double)(pt_cost_vmpte_pages(&p->cost) * PT_PAGE_BYTES);

		if (p->mode == PT_MODE_HUGETLB_2M && p->cost.shared_pages[PT_LEVEL_PMD] &&
		    fabs(c->measured - vmpte_view) <= fabs(c->measured) * CALIBRATE_TOLERANCE_PCT / 100.0)
			used = add_reason(c->reason, len, used,
					  "it matches every worker having its own PMD pages: PMD sharing did not happen");
		used = add_reason(c->reason, len, used,
				  "PageTables is system-wide: every other process's page-table changes between the "
				  "untouched and parked reads land in it");
		if (jr_get_u64(r, "environment.cpus", &cpus) && cpus &&
		    fabs(diff) <= (double)(VMSTAT_MAX_THRESHOLD * cpus * PT_PAGE_BYTES))
			used = add_reason(c->reason, len, used,
					  "the difference is within the drift of the kernel's per-CPU vmstat counters "
					  "(meminfo lags by up to the stats threshold, at most %d pages, per CPU: "
					  "%" PRIu64 " CPUs here)", VMSTAT_MAX_THRESHOLD, cpus);
		if (jr_get_number(r, "results.pagetables.meminfo_before_bytes", &before) &&
		    jr_get_number(r, "results.pagetables.meminfo_baseline_bytes", &baseline) &&
		    jr_get_number(r, "results.pagetables.meminfo_parked_bytes", &parked) &&
		    jr_get_number(r, "results.pagetables.vmpte_baseline_sum_bytes", &base_sum))
			used = add_reason(c->reason, len, used,
					  "evidence: from the first fork to the untouched point PageTables moved by %.0f B "
					  "while the workers' own VmPTE baselines sum to %.0f B; this host's PageTables "
					  "total was %s at the parked point",
					  baseline - before, base_sum, FMT((uint64_t)(parked > 0 ? parked : 0)));
	}
	(void)used;
}

static void compare_point(const json_t *r, struct point *p)
{
	double baseline = 0;
	bool have_baseline = jr_get_number(r, "results.pagetables.vmpte_baseline_per_worker_bytes", &baseline);

	for (int v = 0; v < VIEW_COUNT; v++) {
		struct comparison *c = &p->cmp[v];

		if (!jr_get_number(r, view_key[v], &c->measured))
			continue;
		if (v == VIEW_VMPTE_SUM && !have_baseline)
			continue;
		c->have = true;
		c->model = model_view(p, (enum view)v, baseline);
		/* A relative error needs a measured value; with 0 measured
		 * only an exact 0 modelled counts as a match. */
		c->error_defined = c->measured != 0;
		c->error_pct = c->error_defined ? (c->model - c->measured) / c->measured * 100.0 : 0;
		c->within = c->error_defined ? fabs(c->error_pct) <= CALIBRATE_TOLERANCE_PCT : c->model == 0;
		/* The VmPTE views are exact when the model is right: explain
		 * any whole page per worker, within tolerance or not. */
		if (!c->within ||
		    (v != VIEW_MEMINFO && fabs(c->measured - c->model) >=
		     (v == VIEW_REGION_PER_WORKER ? 1.0 : (double)p->workers) * PT_PAGE_BYTES / 2.0))
			explain(r, p, (enum view)v, c);
	}
}

/* ---- output ---------------------------------------------------------------- */

static void print_text(FILE *out, const char *path, struct point *pts, size_t n)
{
	size_t compared = 0, within = 0, skipped = 0;
	double worst = 0;
	const char *worst_view = "";

	fprintf(out, "mshare-bench plan --calibrate %s: MODEL vs MEASURED page-table bytes (tolerance %.0f%%)\n\n",
		path, CALIBRATE_TOLERANCE_PCT);
	for (size_t i = 0; i < n; i++) {
		struct point *p = &pts[i];

		fprintf(out, "%s\n", p->file);
		if (p->skipped) {
			fprintf(out, "  skipped: %s\n\n", p->skip_reason);
			skipped++;
			continue;
		}
		fprintf(out, "  %s, %" PRIu64 " workers, %s at 0x%" PRIx64 ", %s (touches a fraction %.4g of its 2 MiB spans), pages %s -> model %s\n",
			p->backend, p->workers, FMT(p->size), p->addr, p->workload, p->touch_fraction,
			FMT(p->page_bytes), p->mode_label);
		fprintf(out, "  model per process: PTE %" PRIu64 " + PMD %" PRIu64 " + PUD %" PRIu64
			" pages own, %" PRIu64 " shared (%" PRIu64 " counted in each VmPTE)\n",
			p->cost.per_process_pages[PT_LEVEL_PTE], p->cost.per_process_pages[PT_LEVEL_PMD],
			p->cost.per_process_pages[PT_LEVEL_PUD], pt_cost_shared_pages(&p->cost),
			p->cost.shared_in_vmpte_pages[PT_LEVEL_PMD]);
		if (p->cost.note[0])
			fprintf(out, "  note: %s\n", p->cost.note);
		if (!p->meminfo_counts_pud)
			fprintf(out, "  note: kernel %s: PageTables does not count PUD pages (Linux <= 6.1); "
				"the PageTables model leaves them out, the VmPTE models keep them\n", p->kernel);
		for (int v = 0; v < VIEW_COUNT; v++) {
			struct comparison *c = &p->cmp[v];

			if (!c->have) {
				fprintf(out, "  %-55s not in the record\n", view_text[v]);
				continue;
			}
			compared++;
			within += c->within;
			if (c->error_defined && fabs(c->error_pct) > worst) {
				worst = fabs(c->error_pct);
				worst_view = view_names[v];
			}
			if (c->error_defined)
				fprintf(out, "  %-55s measured %12.0f  model %12.0f  error %+7.2f%%  %s\n", view_text[v],
					c->measured, c->model, c->error_pct, c->within ? "ok" : "OUTSIDE 5%");
			else
				fprintf(out, "  %-55s measured %12.0f  model %12.0f  error     n/a  %s\n", view_text[v],
					c->measured, c->model, c->within ? "ok" : "OUTSIDE 5%");
			if (!c->within)
				fprintf(out, "      why: %s\n", c->reason);
			else if (c->reason[0])
				fprintf(out, "      note: %s\n", c->reason);
		}
		fputc('\n', out);
	}
	fprintf(out, "summary: %zu record(s), %zu skipped; %zu comparisons, %zu within %.0f%%, worst |error| %.2f%% (%s)\n",
		n, skipped, compared, within, CALIBRATE_TOLERANCE_PCT, worst, worst_view);
}

static int print_json(FILE *out, const char *path, struct point *pts, size_t n)
{
	size_t compared = 0, within = 0;
	struct json_writer w;
	int rc;

	json_init(&w, out);
	json_begin_object(&w, NULL);
	json_key_u64(&w, "planner_version", 1);
	json_key_string(&w, "kind", "calibration");
	json_key_string(&w, "path", path);
	json_key_fixed(&w, "tolerance_pct", CALIBRATE_TOLERANCE_PCT, 1);
	json_begin_array(&w, "points");
	for (size_t i = 0; i < n; i++) {
		struct point *p = &pts[i];

		json_begin_object(&w, NULL);
		json_key_string(&w, "file", p->file);
		json_key_bool(&w, "skipped", p->skipped);
		if (p->skipped) {
			json_key_string(&w, "reason", p->skip_reason);
			json_end_object(&w);
			continue;
		}
		json_key_string(&w, "backend", p->backend);
		json_key_string(&w, "workload", p->workload);
		json_key_string(&w, "mode", pt_mode_name(p->mode));
		json_key_string(&w, "mode_label", p->mode_label);
		json_key_u64(&w, "workers", p->workers);
		json_key_u64(&w, "size_bytes", p->size);
		json_key_hex(&w, "addr", p->addr);
		json_key_double_digits(&w, "touch_fraction", p->touch_fraction, 6);
		json_key_string(&w, "note", p->cost.note);
		json_key_string(&w, "kernel", p->kernel);
		json_key_bool(&w, "meminfo_counts_pud_pages", p->meminfo_counts_pud);
		json_begin_array(&w, "comparisons");
		for (int v = 0; v < VIEW_COUNT; v++) {
			struct comparison *c = &p->cmp[v];

			if (!c->have)
				continue;
			compared++;
			within += c->within;
			json_begin_object(&w, NULL);
			json_key_string(&w, "view", view_names[v]);
			json_key_string(&w, "key", view_key[v]);
			json_key_fixed(&w, "measured_bytes", c->measured, 0);
			json_key_fixed(&w, "model_bytes", c->model, 0);
			if (c->error_defined)
				json_key_fixed(&w, "error_pct", c->error_pct, 4);
			else
				json_key_null(&w, "error_pct");
			json_key_bool(&w, "within_tolerance", c->within);
			json_key_string(&w, "reason", c->reason);
			json_end_object(&w);
		}
		json_end_array(&w);
		json_end_object(&w);
	}
	json_end_array(&w);
	json_begin_object(&w, "summary");
	json_key_u64(&w, "records", n);
	json_key_u64(&w, "comparisons", compared);
	json_key_u64(&w, "within_tolerance", within);
	json_end_object(&w);
	json_end_object(&w);
	rc = json_failed(&w) ? -1 : 0;
	json_free(&w);
	return rc;
}

/* s on one line of a series table: whitespace and control characters
 * become '_' in a word (word = true), control characters a space else. */
static void series_text(FILE *out, const char *s, bool word)
{
	for (const unsigned char *c = (const unsigned char *)(s ? s : "unknown"); *c; c++)
		fputc(*c < 0x20 || *c == 0x7f || (word && *c == ' ') ? (word ? '_' : ' ') : *c, out);
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* Whether two points are drawn in one panel: same platform, kernel and
 * region size. */
static bool same_panel(const struct point *a, const struct point *b)
{
	return a->size == b->size && same_str(a->platform, b->platform) && strcmp(a->kernel, b->kernel) == 0 &&
	       same_str(a->kernel_version, b->kernel_version);
}

static int panel_order(const struct point *a, const struct point *b)
{
	int c = strcmp(a->platform ? a->platform : "", b->platform ? b->platform : "");

	if (!c)
		c = strcmp(a->kernel, b->kernel);
	if (!c)
		c = strcmp(a->kernel_version ? a->kernel_version : "", b->kernel_version ? b->kernel_version : "");
	return c ? c : (a->size > b->size) - (a->size < b->size);
}

/* Panel numbers 1..panels in panel_order (a few panels: a simple sort). */
static void renumber_panels(const struct point *pts, size_t n, size_t *panel, size_t panels)
{
	for (size_t k = 1; k <= panels; k++) {
		/* The first point of each panel not yet numbered below k: the
		 * smallest in panel_order becomes k. */
		size_t best = n;

		for (size_t i = 0; i < n; i++)
			if (panel[i] >= k && (best == n || panel_order(&pts[i], &pts[best]) < 0))
				best = i;
		size_t from = panel[best];

		for (size_t i = 0; i < n; i++)
			if (panel[i] == from)
				panel[i] = k;
			else if (panel[i] >= k && panel[i] < from)
				panel[i]++;
	}
}

/* What tells one record's model lines from another's: both views are
 * linear in the process count, so their values at 1 and 2 processes. */
static void model_key(const struct point *p, double key[4])
{
	struct point x = *p;

	for (uint64_t w = 1; w <= 2; w++) {
		x.workers = w;
		key[2 * (w - 1)] = model_view(&x, VIEW_MEMINFO, 0);
		key[2 * (w - 1) + 1] = model_view(&x, VIEW_REGION_PER_WORKER, 0);
	}
}

/* Block 1 of the series: the model each panel's records are compared
 * with, as lines over 1 to 4x the panel's most workers (at least 16): a
 * line per mode (and per distinct model, should records of one mode differ,
 * e.g. in their address), from the record's own cost and its kernel's
 * PageTables rule. A blank line ends each line. */
static int print_model_lines(FILE *out, const struct point *pts, size_t n, const size_t *panel, size_t panels)
{
	double (*key)[4] = calloc(n ? n : 1, sizeof(*key));

	if (!key)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (panel[i])
			model_key(&pts[i], key[i]);
	fprintf(out, "\n\n# block 1, the model of the records of each panel (PageTables view: each page once, "
		"by the records' kernel's rule; VmPTE view: shared pages in every process):\n");
	fprintf(out, "# panel mode processes model_meminfo model_vmpte_region_sum\n");
	for (size_t k = 1; k <= panels; k++) {
		uint64_t maxw = 0, n_max;

		for (size_t i = 0; i < n; i++)
			if (panel[i] == k && pts[i].workers > maxw)
				maxw = pts[i].workers;
		n_max = maxw * 4 > 16 ? maxw * 4 : 16;
		/* In mode order: dax-2m's dashed line comes after, so over,
		 * hugetlb-2m's, which it often equals. */
		for (size_t t = 0; t < n * PT_MODE_COUNT; t++) {
			size_t i = t % n;
			struct point x;
			uint64_t last = 0;
			bool drawn = false;

			if (panel[i] != k || pts[i].mode != (enum pt_mode)(t / n))
				continue;
			for (size_t j = 0; j < i && !drawn; j++)
				drawn = panel[j] == k && pts[j].mode == pts[i].mode && !memcmp(key[i], key[j], sizeof(key[i]));
			if (drawn)
				continue;
			x = pts[i];
			/* 64 log-spaced counts, each once (as plan --series). */
			for (int s = 0; s <= 64; s++) {
				uint64_t c = (uint64_t)llround(pow((double)n_max, s / 64.0));

				if (c <= last)
					continue;
				last = x.workers = c;
				fprintf(out, "%zu %s %" PRIu64 " %.0f %.0f\n", k, pt_mode_name(x.mode), c,
					model_view(&x, VIEW_MEMINFO, 0),
					(double)c * model_view(&x, VIEW_REGION_PER_WORKER, 0));
			}
			fputc('\n', out);
		}
	}
	free(key);
	return 0;
}

/* Measured points for plots/planner.gp, one line per modelled record with
 * its panel number; a panel per platform, kernel and region size, each
 * described in a comment line (its RAM: the largest MemTotal of its
 * records). */
static int print_series(FILE *out, struct point *pts, size_t n)
{
	size_t *panel = calloc(n ? n : 1, sizeof(*panel)), panels = 0;

	if (!panel)
		return -1;
	/* A panel per group, numbered in the order of (platform, kernel,
	 * region size): first[k] is the first point of panel k + 1. */
	for (size_t i = 0; i < n; i++) {
		if (pts[i].skipped)
			continue;
		for (size_t j = 0; j < i && !panel[i]; j++)
			if (!pts[j].skipped && same_panel(&pts[i], &pts[j]))
				panel[i] = panel[j];
		if (!panel[i])
			panel[i] = ++panels;
	}
	renumber_panels(pts, n, panel, panels);
	fprintf(out, "# mshare-bench plan --calibrate series: MEASURED points with the MODEL for each\n");
	fprintf(out, "# panels %zu\n", panels);
	fprintf(out, "# panel N platform size_bytes mem_total_bytes records kernel (the rest of the line)\n");
	for (size_t k = 1; k <= panels; k++) {
		const struct point *first = NULL;
		uint64_t mem = 0;
		size_t count = 0;

		for (size_t i = 0; i < n; i++) {
			if (panel[i] != k)
				continue;
			first = first ? first : &pts[i];
			mem = pts[i].mem_total > mem ? pts[i].mem_total : mem;
			count++;
		}
		fprintf(out, "# panel %zu ", k);
		series_text(out, first->platform, true);
		fprintf(out, " %" PRIu64 " %" PRIu64 " %zu %s", first->size, mem, count, first->kernel);
		if (first->kernel_version) {
			fputc(' ', out);
			series_text(out, first->kernel_version, false);
		}
		fputc('\n', out);
	}
	fprintf(out, "# block 0, a line per modelled record:\n");
	fprintf(out, "# mode workers size_bytes measured_meminfo model_meminfo measured_vmpte_sum model_vmpte_sum"
		" measured_region_per_worker model_region_per_worker panel\n");
	for (size_t i = 0; i < n; i++) {
		struct point *p = &pts[i];

		if (p->skipped)
			continue;
		fprintf(out, "%s %" PRIu64 " %" PRIu64, pt_mode_name(p->mode), p->workers, p->size);
		for (int v = VIEW_COUNT - 1; v >= 0; v--) {
			if (p->cmp[v].have)
				fprintf(out, " %.0f %.0f", p->cmp[v].measured, p->cmp[v].model);
			else
				fprintf(out, " NaN NaN");
		}
		fprintf(out, " %zu\n", panel[i]);
	}
	if (print_model_lines(out, pts, n, panel, panels) < 0) {
		free(panel);
		return -1;
	}
	free(panel);
	return 0;
}

int calibrate_main(const char *path, enum calibrate_format format, FILE *out)
{
	struct path_list list = { 0 };
	struct point *pts;
	size_t modelled = 0;
	int rc = 0;

	if (find_records(path, &list) < 0) {
		if (errno)
			fprintf(stderr, "mshare-bench plan: --calibrate: cannot read '%s'\n", path);
		return 2;
	}
	if (list.count == 0) {
		fprintf(stderr, "mshare-bench plan: --calibrate: '%s' holds no run record (*.json)\n", path);
		free(list.paths);
		return 2;
	}
	pts = calloc(list.count, sizeof(*pts));
	if (!pts) {
		fprintf(stderr, "mshare-bench plan: out of memory\n");
		return 1;
	}
	/* Records stay parsed until the output is written: the points point
	 * into them (backend and workload names). */
	json_t **roots = calloc(list.count, sizeof(*roots));

	for (size_t i = 0; roots && i < list.count; i++) {
		struct point *p = &pts[i];
		char err[400];

		snprintf(p->file, sizeof(p->file), "%s", list.paths[i]);
		roots[i] = jr_load_file(list.paths[i], err, sizeof(err));
		if (!roots[i]) {
			p->skipped = true;
			snprintf(p->skip_reason, sizeof(p->skip_reason), "unreadable: %s", err);
			continue;
		}
		if (model_point(roots[i], p) < 0) {
			p->skipped = true;
			continue;
		}
		compare_point(roots[i], p);
		modelled++;
	}
	if (!roots) {
		fprintf(stderr, "mshare-bench plan: out of memory\n");
		return 1;
	}
	if (format == CALIBRATE_JSON) {
		if (print_json(out, path, pts, list.count) < 0) {
			fprintf(stderr, "mshare-bench plan: out of memory writing the JSON\n");
			rc = 1;
		}
	} else if (format == CALIBRATE_SERIES) {
		if (print_series(out, pts, list.count) < 0) {
			fprintf(stderr, "mshare-bench plan: out of memory\n");
			rc = 1;
		}
	} else
		print_text(out, path, pts, list.count);
	for (size_t i = 0; i < list.count; i++) {
		json_decref(roots[i]);
		free(list.paths[i]);
	}
	free(roots);
	free(list.paths);
	free(pts);
	if (modelled == 0) {
		fprintf(stderr, "mshare-bench plan: --calibrate: no record in '%s' could be modelled\n", path);
		return 2;
	}
	return fflush(out) == 0 && rc == 0 ? 0 : 1;
}
