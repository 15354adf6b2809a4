/* pt_model.c - page-table pages per level for a region, per mode.
 * See pt_model.h for the paging facts and the per-mode rules. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pt_model.h"
#include "units.h"

static const char *const mode_names[PT_MODE_COUNT] = {
	[PT_MODE_4K] = "4k",
	[PT_MODE_HUGETLB_2M] = "hugetlb-2m",
	[PT_MODE_HUGETLB_1G] = "hugetlb-1g",
	[PT_MODE_DAX_2M] = "dax-2m",
	[PT_MODE_MSHARE] = "mshare",
	[PT_MODE_DAX_1G] = "dax-1g",
};

static const char *const level_names[PT_LEVEL_COUNT] = {
	[PT_LEVEL_PTE] = "pte",
	[PT_LEVEL_PMD] = "pmd",
	[PT_LEVEL_PUD] = "pud",
	[PT_LEVEL_PGD] = "pgd",
};

const char *pt_mode_name(enum pt_mode mode)
{
	return mode < PT_MODE_COUNT ? mode_names[mode] : "?";
}

int pt_mode_from_name(const char *name, enum pt_mode *mode)
{
	for (int m = 0; m < PT_MODE_COUNT; m++) {
		if (strcmp(name, mode_names[m]) == 0) {
			*mode = (enum pt_mode)m;
			return 0;
		}
	}
	return -1;
}

const char *pt_level_name(enum pt_level level)
{
	return level < PT_LEVEL_COUNT ? level_names[level] : "?";
}

uint64_t pt_span_pages(uint64_t start, uint64_t end, uint64_t span)
{
	if (end <= start)
		return 0;
	return (units_align_up(end, span) - units_align_down(start, span)) / span;
}

uint64_t pt_cost_per_process_pages(const struct pt_cost *cost)
{
	uint64_t n = 0;

	for (int l = 0; l < PT_LEVEL_COUNT; l++)
		n += cost->per_process_pages[l];
	return n;
}

uint64_t pt_cost_shared_pages(const struct pt_cost *cost)
{
	uint64_t n = 0;

	for (int l = 0; l < PT_LEVEL_COUNT; l++)
		n += cost->shared_pages[l];
	return n;
}

uint64_t pt_cost_vmpte_pages(const struct pt_cost *cost)
{
	uint64_t n = 0;

	/* VmPTE (mm_pgtables_bytes) counts PTE, PMD and PUD pages, not the PGD. */
	for (int l = PT_LEVEL_PTE; l <= PT_LEVEL_PUD; l++)
		n += cost->per_process_pages[l] + cost->shared_in_vmpte_pages[l];
	return n;
}

/* Spans of the given size that the touched part of the region reaches
 * into, counting only the part inside [lo, hi). tend: end of the touched
 * part when the region has no touch map. */
static uint64_t spans_in(const struct pt_region *r, uint64_t tend, uint64_t span, uint64_t lo, uint64_t hi)
{
	uint64_t n = 0, last = 0;
	bool have_last = false;

	if (!r->touch_count)
		return pt_span_pages(r->addr > lo ? r->addr : lo, tend < hi ? tend : hi, span);
	for (size_t i = 0; i < r->touch_count; i++) {
		uint64_t s = r->addr + r->touch[i].start, e = r->addr + r->touch[i].end, first, lastidx;

		if (s < lo)
			s = lo;
		if (e > hi)
			e = hi;
		if (e <= s)
			continue;
		first = s / span;
		lastidx = (e - 1) / span;
		if (have_last && first <= last)
			first = last + 1;
		if (lastidx >= first)
			n += lastidx - first + 1;
		if (!have_last || lastidx > last)
			last = lastidx;
		have_last = true;
	}
	return n;
}

static uint64_t spans(const struct pt_region *r, uint64_t tend, uint64_t span)
{
	return spans_in(r, tend, span, 0, UINT64_MAX);
}

/* Every level of a 4 KiB-page mapping: what a process (or the mshare
 * host) allocates when it touches the region. */
static void base_page_tables(const struct pt_region *r, uint64_t tend, uint64_t pages[PT_LEVEL_COUNT])
{
	pages[PT_LEVEL_PTE] = spans(r, tend, PT_PTE_SPAN);
	pages[PT_LEVEL_PMD] = spans(r, tend, PT_PMD_SPAN);
	pages[PT_LEVEL_PUD] = spans(r, tend, PT_PUD_SPAN);
}

static void model_4k(const struct pt_region *r, uint64_t tend, struct pt_cost *c)
{
	base_page_tables(r, tend, c->per_process_pages);
}

static void model_mshare(const struct pt_region *r, uint64_t tend, struct pt_cost *c)
{
	c->mshare_start = units_align_down(r->addr, PT_PUD_SPAN);
	c->mshare_end = units_align_up(r->addr + r->size, PT_PUD_SPAN);
	base_page_tables(r, tend, c->shared_pages);
	/* Device-DAX under mshare: PMD entries leave no PTE pages, PUD
	 * entries no PMD pages either. */
	if (r->leaf_bytes >= PT_PTE_SPAN)
		c->shared_pages[PT_LEVEL_PTE] = 0;
	if (r->leaf_bytes >= PT_PMD_SPAN)
		c->shared_pages[PT_LEVEL_PMD] = 0;
	if (r->leaf_bytes > 4096)
		c->leaf_page_bytes = r->leaf_bytes;
	/* The host mm is an mm_struct of its own and has its own PGD page. */
	c->shared_pages[PT_LEVEL_PGD] = 1;
	c->pgd_entries_per_process = pt_span_pages(c->mshare_start, c->mshare_end, PT_PUD_SPAN);
	if (c->mshare_start != r->addr || c->mshare_end != r->addr + r->size)
		snprintf(c->note, sizeof(c->note),
			 "mshare range widened to 512 GiB alignment: [0x%" PRIx64 ", 0x%" PRIx64 ")%s",
			 c->mshare_start, c->mshare_end,
			 r->around_count ? "; other mappings lie in it here, so the region would need an "
			 "address of its own" : "");
}

static void model_dax_2m(const struct pt_region *r, uint64_t tend, struct pt_cost *c)
{
	uint64_t end = r->addr + r->size;
	uint64_t pmd_end;

	base_page_tables(r, tend, c->per_process_pages);
	if (r->addr % PT_PTE_SPAN) {
		/* File offset 0 sits at an address that is not 2 MiB-aligned:
		 * offset and address are never 2 MiB-congruent, so every fault
		 * falls back to a 4 KiB PTE, exactly like 4k mode. */
		c->leaf_page_bytes = 4096;
		snprintf(c->note, sizeof(c->note),
			 "addr not 2 MiB-aligned: no 2 MiB mapping possible, all 4 KiB PTEs");
		return;
	}
	/* 2 MiB blocks wholly inside the mapping map with a PMD entry; a
	 * partial last block maps with PTEs. */
	pmd_end = units_align_down(end, PT_PTE_SPAN);
	c->per_process_pages[PT_LEVEL_PTE] = spans_in(r, tend, PT_PTE_SPAN, pmd_end, UINT64_MAX);
	if (end != pmd_end)
		snprintf(c->note, sizeof(c->note),
			 "size not a multiple of 2 MiB: the last %" PRIu64 " KiB map with 4 KiB PTEs",
			 (end - pmd_end) / 1024);
}

static void model_hugetlb_2m(const struct pt_region *r, uint64_t tend, struct pt_cost *c)
{
	uint64_t end = r->addr + c->mapped_bytes;
	uint64_t pmd_pages = spans(r, tend, PT_PMD_SPAN);
	/* PMD sharing needs the whole 1 GiB range inside the MAP_SHARED
	 * mapping: these are [align_up(addr), align_down(end)). Of them, the
	 * ones the touched part reaches into get a (shared) PMD page. */
	uint64_t share_start = units_align_up(r->addr, PT_PMD_SPAN);
	uint64_t share_end = units_align_down(end, PT_PMD_SPAN);
	uint64_t shared = share_end > share_start ? spans_in(r, tend, PT_PMD_SPAN, share_start, share_end) : 0;

	c->per_process_pages[PT_LEVEL_PMD] = pmd_pages - shared;
	c->shared_pages[PT_LEVEL_PMD] = shared;
	c->shared_in_vmpte_pages[PT_LEVEL_PMD] = shared;
	c->per_process_pages[PT_LEVEL_PUD] = spans(r, tend, PT_PUD_SPAN);
	if (pmd_pages - shared)
		snprintf(c->note, sizeof(c->note),
			 "%" PRIu64 " of %" PRIu64 " PMD pages unshared: their 1 GiB range is not wholly inside the mapping",
			 pmd_pages - shared, pmd_pages);
}

static void model_hugetlb_1g(const struct pt_region *r, uint64_t tend, struct pt_cost *c)
{
	c->per_process_pages[PT_LEVEL_PUD] = spans(r, tend, PT_PUD_SPAN);
}

/* Device-DAX at 1 GiB: the same page tables as hugetlb-1g. */
static void model_dax_1g(const struct pt_region *r, uint64_t tend, struct pt_cost *c)
{
	model_hugetlb_1g(r, tend, c);
}

/* The first mapping around the region that reaches into [lo, hi), or NULL. */
static const struct pt_range *around_in(const struct pt_region *r, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < r->around_count; i++)
		if (r->around[i].start < hi && r->around[i].end > lo && lo < hi)
			return &r->around[i];
	return NULL;
}

/* A page-table page of the region's first or last span at some level that
 * a mapping around the region needs too exists anyway: not the region's
 * cost. Only those two spans can be shared (nothing else lies inside the
 * region). */
static void leave_out_shared(const struct pt_region *r, uint64_t tend, struct pt_cost *c)
{
	static const uint64_t span_of[PT_LEVEL_PGD] = { PT_PTE_SPAN, PT_PMD_SPAN, PT_PUD_SPAN };
	static const char *const level_text[PT_LEVEL_PGD] = { "PTE", "PMD", "PUD" };
	uint64_t end = r->addr + c->mapped_bytes;
	size_t used = 0;

	if (!r->around_count || c->mode == PT_MODE_MSHARE)
		return;
	for (int l = PT_LEVEL_PTE; l < PT_LEVEL_PGD; l++) {
		uint64_t s = span_of[l], first = units_align_down(r->addr, s), last = units_align_down(end - 1, s);
		const struct pt_range *lo = around_in(r, first, r->addr);
		const struct pt_range *hi = around_in(r, end, last + s);
		const struct pt_range *why[2] = { NULL, NULL };
		uint64_t at[2] = { first, last };
		uint64_t out = 0;

		if (lo && spans_in(r, tend, s, first, first + s))
			why[0] = lo;
		if (hi && spans_in(r, tend, s, last, last + s) && !(last == first && why[0]))
			why[1] = hi;
		for (int k = 0; k < 2; k++) {
			int n;

			if (!why[k] || out >= c->per_process_pages[l])
				continue;
			out++;
			c->left_out_at[l] |= 1u << k;
			n = snprintf(c->left_out_note + used, sizeof(c->left_out_note) - used,
				     "%s%s page of 0x%" PRIx64 " (also holds %s at 0x%" PRIx64 ")",
				     used ? "; " : "", level_text[l], at[k],
				     why[k]->name ? why[k]->name : "another mapping", why[k]->start);
			if (n > 0 && (size_t)n < sizeof(c->left_out_note) - used)
				used += (size_t)n;
		}
		c->per_process_pages[l] -= out;
		c->left_out_pages[l] = out;
	}
	if (c->mode == PT_MODE_HUGETLB_2M && c->left_out_pages[PT_LEVEL_PMD]) {
		uint64_t unshared = c->per_process_pages[PT_LEVEL_PMD] + c->left_out_pages[PT_LEVEL_PMD];

		snprintf(c->note, sizeof(c->note),
			 "%" PRIu64 " of %" PRIu64 " PMD pages unshared (their 1 GiB range is not wholly inside the "
			 "mapping); %" PRIu64 " of them left out, the mappings around need them anyway",
			 unshared, unshared + c->shared_pages[PT_LEVEL_PMD], c->left_out_pages[PT_LEVEL_PMD]);
	}
}

static uint64_t leaf_bytes(enum pt_mode mode)
{
	switch (mode) {
	case PT_MODE_HUGETLB_2M:
	case PT_MODE_DAX_2M:
		return 2ull << 20;
	case PT_MODE_HUGETLB_1G:
	case PT_MODE_DAX_1G:
		return 1ull << 30;
	default:
		return 4096;
	}
}

int pt_model(enum pt_mode mode, const struct pt_region *r, struct pt_cost *c,
	     char *err, size_t err_len)
{
	bool hugetlb = mode == PT_MODE_HUGETLB_2M || mode == PT_MODE_HUGETLB_1G;
	uint64_t tend;
	long double touched;

	memset(c, 0, sizeof(*c));
	c->mode = mode;
	c->leaf_page_bytes = leaf_bytes(mode);
	if (mode >= PT_MODE_COUNT) {
		snprintf(err, err_len, "unknown mode %d", (int)mode);
		return -1;
	}
	if (r->size == 0 || r->addr % 4096 || r->size % 4096) {
		snprintf(err, err_len, "region 0x%" PRIx64 " + %" PRIu64 " bytes is not 4 KiB-aligned and non-empty",
			 r->addr, r->size);
		return -1;
	}
	if (!r->touched_bytes && !(r->touch_fraction > 0.0 && r->touch_fraction <= 1.0)) {
		snprintf(err, err_len, "touch fraction %g is not in (0, 1]", r->touch_fraction);
		return -1;
	}
	if (mode == PT_MODE_DAX_1G && (r->addr % c->leaf_page_bytes || r->size % c->leaf_page_bytes)) {
		snprintf(err, err_len, "dax-1g needs a 1 GiB-aligned address and size; 0x%" PRIx64 " + %" PRIu64
			 " bytes is not (the device refuses the mmap with EINVAL)", r->addr, r->size);
		return -1;
	}
	if (mode == PT_MODE_MSHARE && r->leaf_bytes > 4096 &&
	    (r->leaf_bytes != PT_PTE_SPAN && r->leaf_bytes != PT_PMD_SPAN)) {
		snprintf(err, err_len, "mshare leaf entries of %" PRIu64 " bytes: only 4 KiB, 2 MiB and 1 GiB exist",
			 r->leaf_bytes);
		return -1;
	}
	if (hugetlb && r->addr % c->leaf_page_bytes) {
		snprintf(err, err_len, "%s needs a %s-aligned address; 0x%" PRIx64 " is not (mmap fails with EINVAL)",
			 pt_mode_name(mode), mode == PT_MODE_HUGETLB_2M ? "2 MiB" : "1 GiB", r->addr);
		return -1;
	}
	/* hugetlbfs rounds the mapping length up to whole huge pages. */
	c->mapped_bytes = hugetlb ? units_align_up(r->size, c->leaf_page_bytes) : r->size;
	if (r->addr > PT_USER_VA_END || c->mapped_bytes > PT_USER_VA_END - r->addr) {
		snprintf(err, err_len, "region 0x%" PRIx64 " + %" PRIu64 " bytes ends beyond the 128 TiB user address space",
			 r->addr, c->mapped_bytes);
		return -1;
	}
	/* Each process touches the first f of the region, rounded up to a
	 * whole 4 KiB page (a touch faults in at least that much). */
	touched = ceill((long double)r->touch_fraction * (long double)r->size);
	c->touched_bytes = units_align_up(r->touched_bytes ? r->touched_bytes : (uint64_t)touched, 4096);
	if (c->touched_bytes > c->mapped_bytes || (!r->touched_bytes && r->touch_fraction >= 1.0))
		c->touched_bytes = c->mapped_bytes;
	if (c->touched_bytes == 0)
		c->touched_bytes = 4096;
	if (r->touch_count) {
		uint64_t sum = 0, prev_end = 0;

		for (size_t i = 0; i < r->touch_count; i++) {
			const struct pt_range *t = &r->touch[i];

			if (t->end <= t->start || t->start < prev_end || t->end > c->mapped_bytes) {
				snprintf(err, err_len, "touch map range [0x%" PRIx64 ", 0x%" PRIx64 ") is empty, "
					 "out of order or beyond the region's %" PRIu64 " bytes",
					 t->start, t->end, c->mapped_bytes);
				return -1;
			}
			prev_end = t->end;
			sum += t->end - t->start;
		}
		c->touched_bytes = sum;
	}
	tend = r->addr + c->touched_bytes;

	if (mode != PT_MODE_MSHARE)
		c->pgd_entries_per_process = spans(r, tend, PT_PUD_SPAN);
	c->touched_spans[PT_LEVEL_PTE] = spans(r, tend, PT_PTE_SPAN);
	c->touched_spans[PT_LEVEL_PMD] = spans(r, tend, PT_PMD_SPAN);
	c->touched_spans[PT_LEVEL_PUD] = spans(r, tend, PT_PUD_SPAN);

	switch (mode) {
	case PT_MODE_4K: model_4k(r, tend, c); break;
	case PT_MODE_HUGETLB_2M: model_hugetlb_2m(r, tend, c); break;
	case PT_MODE_HUGETLB_1G: model_hugetlb_1g(r, tend, c); break;
	case PT_MODE_DAX_2M: model_dax_2m(r, tend, c); break;
	case PT_MODE_MSHARE: model_mshare(r, tend, c); break;
	case PT_MODE_DAX_1G: model_dax_1g(r, tend, c); break;
	default: break;
	}
	leave_out_shared(r, tend, c);
	return 0;
}
