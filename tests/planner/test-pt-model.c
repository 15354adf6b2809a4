/* test-pt-model.c - the page-table model and capacity verdict against
 * figures computed by hand (TAP). Spans: a PTE page maps 2 MiB, a PMD page
 * 1 GiB, a PUD page 512 GiB; "2T" = 0x20000000000 is 512 GiB-aligned. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "capacity.h"
#include "deploy.h"
#include "pt_model.h"
#include "units.h"
#include "../lib/tap.h"

static void check_u64(uint64_t got, uint64_t want, const char *what)
{
	TAP_OK(got == want, "%s: %" PRIu64 " (want %" PRIu64 ")", what, got, want);
}

/* Expected pages: own PTE/PMD/PUD, shared PTE/PMD/PUD/PGD, PGD entries. */
struct expect {
	uint64_t pte, pmd, pud;
	uint64_t s_pte, s_pmd, s_pud, s_pgd;
	uint64_t entries;
	uint64_t vmpte; /* pages one process's VmPTE shows */
};

static void case_pages(const char *name, enum pt_mode mode, uint64_t addr, uint64_t size, double f,
		       struct expect e)
{
	struct pt_region r = { .addr = addr, .size = size, .touch_fraction = f };
	struct pt_cost c;
	char err[256], what[200];
	int rc = pt_model(mode, &r, &c, err, sizeof(err));

	snprintf(what, sizeof(what), "%s: modelled", name);
	TAP_OK(rc == 0, "%s", what);
	if (rc)
		return;
#define CK(field, want, label) \
	do { snprintf(what, sizeof(what), "%s: %s", name, label); check_u64(field, want, what); } while (0)
	CK(c.per_process_pages[PT_LEVEL_PTE], e.pte, "PTE pages per process");
	CK(c.per_process_pages[PT_LEVEL_PMD], e.pmd, "PMD pages per process");
	CK(c.per_process_pages[PT_LEVEL_PUD], e.pud, "PUD pages per process");
	CK(c.shared_pages[PT_LEVEL_PTE], e.s_pte, "shared PTE pages");
	CK(c.shared_pages[PT_LEVEL_PMD], e.s_pmd, "shared PMD pages");
	CK(c.shared_pages[PT_LEVEL_PUD], e.s_pud, "shared PUD pages");
	CK(c.shared_pages[PT_LEVEL_PGD], e.s_pgd, "shared PGD pages");
	CK(c.pgd_entries_per_process, e.entries, "PGD entries per process");
	CK(pt_cost_vmpte_pages(&c), e.vmpte, "VmPTE pages per process");
#undef CK
}

/* mshare over device-DAX: the shared tables map with leaf-byte entries. */
static void case_mshare_leaf(const char *name, uint64_t addr, uint64_t size, uint64_t leaf, struct expect e)
{
	struct pt_region r = { .addr = addr, .size = size, .touch_fraction = 1, .leaf_bytes = leaf };
	struct pt_cost c;
	char err[256], what[512];
	int rc = pt_model(PT_MODE_MSHARE, &r, &c, err, sizeof(err));

	snprintf(what, sizeof(what), "%s: modelled (%s)", name, rc ? err : "ok");
	TAP_OK(rc == 0, "%s", what);
	if (rc)
		return;
	snprintf(what, sizeof(what), "%s: own pages PTE/PMD/PUD %" PRIu64 "/%" PRIu64 "/%" PRIu64 ", shared %" PRIu64
		 "/%" PRIu64 "/%" PRIu64 "/%" PRIu64 ", leaf %" PRIu64, name, c.per_process_pages[PT_LEVEL_PTE],
		 c.per_process_pages[PT_LEVEL_PMD], c.per_process_pages[PT_LEVEL_PUD], c.shared_pages[PT_LEVEL_PTE],
		 c.shared_pages[PT_LEVEL_PMD], c.shared_pages[PT_LEVEL_PUD], c.shared_pages[PT_LEVEL_PGD],
		 c.leaf_page_bytes);
	TAP_OK(c.per_process_pages[PT_LEVEL_PTE] == e.pte && c.per_process_pages[PT_LEVEL_PMD] == e.pmd &&
	       c.per_process_pages[PT_LEVEL_PUD] == e.pud && c.shared_pages[PT_LEVEL_PTE] == e.s_pte &&
	       c.shared_pages[PT_LEVEL_PMD] == e.s_pmd && c.shared_pages[PT_LEVEL_PUD] == e.s_pud &&
	       c.shared_pages[PT_LEVEL_PGD] == e.s_pgd && c.pgd_entries_per_process == e.entries &&
	       pt_cost_vmpte_pages(&c) == e.vmpte && c.leaf_page_bytes == leaf, "%s", what);
}

static void case_rejected(const char *name, enum pt_mode mode, uint64_t addr, uint64_t size)
{
	struct pt_region r = { .addr = addr, .size = size, .touch_fraction = 1 };
	struct pt_cost c;
	char err[256] = "", what[512];
	int rc = pt_model(mode, &r, &c, err, sizeof(err));

	snprintf(what, sizeof(what), "%s: rejected (%s)", name, err);
	TAP_OK(rc < 0 && err[0], "%s", what);
}

int main(void)
{
	const uint64_t T2 = 2 * TIB;

	/* pt_span_pages: blocks a range reaches into. */
	check_u64(pt_span_pages(0, 0, PT_PTE_SPAN), 0, "empty range needs no page");
	check_u64(pt_span_pages(MIB, 3 * MIB, PT_PTE_SPAN), 2, "[1M,3M) reaches 2 PTE blocks");
	check_u64(pt_span_pages(0, 4 * MIB, PT_PTE_SPAN), 2, "[0,4M) is exactly 2 PTE blocks");

	/* Cover letter: 300 GiB at 2T, 4 KiB pages. PTE = 300 GiB / 2 MiB =
	 * 153600 pages = 600 MiB; PMD = 300 GiB / 1 GiB = 300; PUD = 1. */
	case_pages("4k 300G@2T", PT_MODE_4K, T2, 300 * GIB, 1,
		   (struct expect){ 153600, 300, 1, 0, 0, 0, 0, 1, 153901 });
	/* 64 MiB at 2T: 32 PTE + 1 PMD + 1 PUD (the harness's exact figure). */
	case_pages("4k 64M@2T", PT_MODE_4K, T2, 64 * MIB, 1, (struct expect){ 32, 1, 1, 0, 0, 0, 0, 1, 34 });
	/* 4 MiB at 2T+1M: [2T+1M, 2T+5M) reaches the 2 MiB blocks at 2T, 2T+2M,
	 * 2T+4M: 3 PTE pages where an aligned start needs 2. */
	case_pages("4k 4M@2T+1M unaligned", PT_MODE_4K, T2 + MIB, 4 * MIB, 1,
		   (struct expect){ 3, 1, 1, 0, 0, 0, 0, 1, 5 });
	/* 4 MiB at 2.5T-2M: [2.5T-2M, 2.5T+2M) straddles 2.5T, which is both a
	 * 1 GiB and a 512 GiB boundary: 2 PTE, 2 PMD, 2 PUD pages, 2 PGD entries. */
	case_pages("4k 4M across a 512G boundary", PT_MODE_4K, 5 * 512 * GIB - 2 * MIB, 4 * MIB, 1,
		   (struct expect){ 2, 2, 2, 0, 0, 0, 0, 2, 6 });
	/* Half of 1 GiB touched: [2T, 2T+512M) = 256 PTE pages, 1 PMD, 1 PUD. */
	case_pages("4k 1G@2T touch 0.5", PT_MODE_4K, T2, GIB, 0.5, (struct expect){ 256, 1, 1, 0, 0, 0, 0, 1, 258 });

	/* hugetlb-2m 2 GiB at 2T: two 1 GiB ranges wholly inside -> 2 shared
	 * PMD pages; 1 PUD page per process; VmPTE counts 2 + 1 = 3. */
	case_pages("hugetlb-2m 2G@2T", PT_MODE_HUGETLB_2M, T2, 2 * GIB, 1,
		   (struct expect){ 0, 0, 1, 0, 2, 0, 0, 1, 3 });
	/* 2 GiB at 2T+2M: [2T+2M, 2T+2G+2M) reaches the 1 GiB ranges at 2T,
	 * 2T+1G, 2T+2G; only [2T+1G, 2T+2G) is wholly inside: 1 shared, 2 own. */
	case_pages("hugetlb-2m 2G@2T+2M not 1G-aligned", PT_MODE_HUGETLB_2M, T2 + 2 * MIB, 2 * GIB, 1,
		   (struct expect){ 0, 2, 1, 0, 1, 0, 0, 1, 4 });
	/* 3 MiB rounds up to a 4 MiB mapping inside one 1 GiB range that it does
	 * not fill: nothing shareable, 1 PMD + 1 PUD per process. */
	case_pages("hugetlb-2m 3M@2T (sub-1G)", PT_MODE_HUGETLB_2M, T2, 3 * MIB, 1,
		   (struct expect){ 0, 1, 1, 0, 0, 0, 0, 1, 2 });
	/* 4 GiB at 2T, half touched: [2T, 2T+2G) reaches 2 ranges, both
	 * wholly inside the 4 GiB mapping: 2 shared PMD pages. */
	case_pages("hugetlb-2m 4G@2T touch 0.5", PT_MODE_HUGETLB_2M, T2, 4 * GIB, 0.5,
		   (struct expect){ 0, 0, 1, 0, 2, 0, 0, 1, 3 });
	case_rejected("hugetlb-2m at 2T+4K", PT_MODE_HUGETLB_2M, T2 + 4096, 2 * GIB);

	/* hugetlb-1g 3 GiB at 2T: one PUD page per process, nothing below. */
	case_pages("hugetlb-1g 3G@2T", PT_MODE_HUGETLB_1G, T2, 3 * GIB, 1, (struct expect){ 0, 0, 1, 0, 0, 0, 0, 1, 1 });
	/* 600 GiB at 2T ends at 2T+600G, past 2.5T = 2T+512G: 2 PUD pages. */
	case_pages("hugetlb-1g 600G@2T", PT_MODE_HUGETLB_1G, T2, 600 * GIB, 1,
		   (struct expect){ 0, 0, 2, 0, 0, 0, 0, 2, 2 });
	case_rejected("hugetlb-1g at 2T+2M", PT_MODE_HUGETLB_1G, T2 + 2 * MIB, 2 * GIB);

	/* dax-2m 64 MiB at 2T: 32 PMD entries in 1 PMD page, 1 PUD, no PTE. */
	case_pages("dax-2m 64M@2T", PT_MODE_DAX_2M, T2, 64 * MIB, 1, (struct expect){ 0, 1, 1, 0, 0, 0, 0, 1, 2 });
	/* 65 MiB at 2T: the last 1 MiB is a partial 2 MiB block -> 4 KiB PTEs
	 * in 1 PTE page. */
	case_pages("dax-2m 65M@2T partial tail", PT_MODE_DAX_2M, T2, 65 * MIB, 1,
		   (struct expect){ 1, 1, 1, 0, 0, 0, 0, 1, 3 });
	/* 64 MiB at 2T+4K: offset 0 at an address that is not 2 MiB-aligned,
	 * never congruent: all 4 KiB, [2T+4K, 2T+64M+4K) reaches 33 blocks. */
	case_pages("dax-2m 64M@2T+4K unaligned", PT_MODE_DAX_2M, T2 + 4096, 64 * MIB, 1,
		   (struct expect){ 33, 1, 1, 0, 0, 0, 0, 1, 35 });

	/* mshare 300 GiB at 2T: the 4k page tables once in the host mm
	 * (153600 + 300 + 1) plus its PGD page; nothing per process but one
	 * PGD entry; no VmPTE in any process. */
	case_pages("mshare 300G@2T", PT_MODE_MSHARE, T2, 300 * GIB, 1,
		   (struct expect){ 0, 0, 0, 153600, 300, 1, 1, 1, 0 });
	/* 1 GiB at 2T+1G: mshare range widened to [2T, 2.5T): 1 entry;
	 * 512 PTE + 1 PMD + 1 PUD shared. */
	case_pages("mshare 1G@2T+1G", PT_MODE_MSHARE, T2 + GIB, GIB, 1,
		   (struct expect){ 0, 0, 0, 512, 1, 1, 1, 1, 0 });
	/* 1 GiB straddling 2.5T: mshare range [2T, 3T): 2 PGD entries. */
	case_pages("mshare 1G across 2.5T", PT_MODE_MSHARE, 5 * 512 * GIB - 512 * MIB, GIB, 1,
		   (struct expect){ 0, 0, 0, 512, 2, 2, 1, 2, 0 });

	/* dax-1g (device-DAX at 1 GiB alignment) 3 GiB at 2T: PUD entries,
	 * one PUD page per process, nothing below; as hugetlb-1g. */
	case_pages("dax-1g 3G@2T", PT_MODE_DAX_1G, T2, 3 * GIB, 1, (struct expect){ 0, 0, 1, 0, 0, 0, 0, 1, 1 });
	/* 1 GiB across 2.5T: two PUD pages, two PGD entries. */
	case_pages("dax-1g 2G across 2.5T", PT_MODE_DAX_1G, 5 * 512 * GIB - GIB, 2 * GIB, 1,
		   (struct expect){ 0, 0, 2, 0, 0, 0, 0, 2, 2 });
	/* The device refuses an address or a size off 1 GiB. */
	case_rejected("dax-1g at 2T+2M", PT_MODE_DAX_1G, T2 + 2 * MIB, 2 * GIB);
	case_rejected("dax-1g 1.5G@2T", PT_MODE_DAX_1G, T2, GIB + 512 * MIB);

	/* mshare over device-DAX, 1 GiB at 2T: 2 MiB entries leave the host
	 * mm 1 PMD + 1 PUD page (no PTE page), 1 GiB entries only the PUD
	 * page; nothing per process but the PGD entry. */
	case_mshare_leaf("mshare over devdax 2M, 1G@2T", T2, GIB, 2 * MIB, (struct expect){ 0, 0, 0, 0, 1, 1, 1, 1, 0 });
	case_mshare_leaf("mshare over devdax 1G, 1G@2T", T2, GIB, GIB, (struct expect){ 0, 0, 0, 0, 0, 1, 1, 1, 0 });
	case_mshare_leaf("mshare 4 KiB leaf given as 4096, 1G@2T", T2, GIB, 4096,
			 (struct expect){ 0, 0, 0, 512, 1, 1, 1, 1, 0 });
	{
		struct pt_region r = { .addr = T2, .size = GIB, .touch_fraction = 1, .leaf_bytes = 64 * 1024 };
		struct pt_cost c;
		char err[256] = "";
		int rc = pt_model(PT_MODE_MSHARE, &r, &c, err, sizeof(err));

		TAP_OK(rc < 0 && strstr(err, "65536"), "mshare leaf of 64 KiB rejected, naming it (%s)", err);
	}

	case_rejected("region beyond 128 TiB", PT_MODE_4K, 128 * TIB - GIB, 2 * GIB);

	/* Capacity, cover letter: 1500 processes x 153901 pages x 4 KiB =
	 * 945,567,744,000 B; PTE level 1500 x 600 MiB = 943,718,400,000 B
	 * (878.9 GiB). RAM 512 GiB - SGA 300 GiB = 212 GiB = 227,633,266,688 B;
	 * / 630,378,496 B per process = 361.1 -> 361 processes. */
	{
		struct pt_region r = { .addr = T2, .size = 300 * GIB, .touch_fraction = 1 };
		struct capacity_inputs in = { .processes = 1500, .ram_bytes = 512 * GIB };
		struct pt_cost c;
		struct capacity cap;
		char err[128];

		pt_model(PT_MODE_4K, &r, &c, err, sizeof(err));
		capacity_compute(&c, &in, &cap);
		check_u64(cap.pte_per_process_bytes, 600 * MIB, "cover letter: 600 MiB of PTEs per process");
		check_u64(cap.pte_total_bytes, 943718400000ull, "cover letter: PTE level total (878.9 GiB)");
		check_u64(cap.pt_total_bytes, 945567744000ull, "cover letter: all levels total");
		TAP_OK(!cap.fits, "cover letter: does not fit in 512 GiB");
		check_u64(cap.max_processes, 361, "cover letter: 361 processes fit with 4k pages");

		/* mshare: one host set; processes limited only by PID_MAX_LIMIT. */
		pt_model(PT_MODE_MSHARE, &r, &c, err, sizeof(err));
		capacity_compute(&c, &in, &cap);
		check_u64(cap.pt_total_bytes, 153902ull * 4096, "mshare: 153902 pages in all, whatever N");
		TAP_OK(cap.fits && cap.max_processes == PT_PID_MAX_LIMIT, "mshare: fits, max = PID_MAX_LIMIT");

		/* mshare with 64 MiB private per process: (212 GiB - 153902 pages)
		 * / 64 MiB = (227633266688 - 630382592) / 67108864 = 3382.6 -> 3382. */
		in.private_bytes = 64 * MIB;
		capacity_compute(&c, &in, &cap);
		check_u64(cap.max_processes, 3382, "mshare + 64M private: 3382 processes");

		/* dax-2m: SGA on the DAX device, not RAM: 512 GiB / 301 pages
		 * (1,232,896 B) + 64 MiB private = 549,755,813,888 / 68,341,760 =
		 * 8044.3 -> 8044. */
		pt_model(PT_MODE_DAX_2M, &r, &c, err, sizeof(err));
		capacity_compute(&c, &in, &cap);
		check_u64(cap.sga_ram_bytes, 0, "dax-2m: region data not counted in RAM");
		check_u64(cap.max_processes, 8044, "dax-2m + 64M private: 8044 processes");
	}

	/* A touch map and the surroundings, at a real address: PostgreSQL's
	 * 146.8 MiB segment at 0x7f49e499c000 (not 2 MiB-aligned), ending
	 * where a locale file starts; nothing below it in its 1 GiB span. */
	{
		const uint64_t a = 0x7f49e499c000ull, sz = 0x8bd6000ull, end = a + sz;
		struct pt_range touch[2] = { { 0, 4 * MIB, NULL }, { sz - 8192, sz, NULL } };
		struct pt_range above = { end, end + 0x57000, "LC_CTYPE" };
		struct pt_range below = { 0x7f49c0000000ull, 0x7f49c0001000ull, "low" };
		struct pt_region r = { .addr = a, .size = sz, .touch_fraction = 1 };
		struct pt_cost c;
		char err[256];
		uint64_t all_pte = pt_span_pages(a, end, PT_PTE_SPAN);

		/* Everything touched, nothing known around: every span charged. */
		TAP_OK(pt_model(PT_MODE_4K, &r, &c, err, sizeof(err)) == 0, "real address: modelled");
		check_u64(c.per_process_pages[PT_LEVEL_PTE], all_pte, "real address: a PTE page per 2 MiB span reached");
		check_u64(c.per_process_pages[PT_LEVEL_PMD] + c.per_process_pages[PT_LEVEL_PUD], 2,
			  "real address, nothing around: PMD and PUD page charged");
		/* The locale file above shares the last PTE span, the PMD and
		 * the PUD page: three pages left out. */
		r.around = &above;
		r.around_count = 1;
		r.around_known = true;
		pt_model(PT_MODE_4K, &r, &c, err, sizeof(err));
		check_u64(c.per_process_pages[PT_LEVEL_PTE], all_pte - 1, "mapping above: last PTE page left out");
		check_u64(c.per_process_pages[PT_LEVEL_PMD], 0, "mapping above: PMD page left out");
		check_u64(c.per_process_pages[PT_LEVEL_PUD], 0, "mapping above: PUD page left out");
		check_u64(c.left_out_pages[PT_LEVEL_PTE] + c.left_out_pages[PT_LEVEL_PMD] +
			  c.left_out_pages[PT_LEVEL_PUD], 3, "mapping above: 3 pages left out in all");
		TAP_OK(strstr(c.left_out_note, "LC_CTYPE") != NULL, "left-out note names the neighbour");
		/* Touch map: first 4 MiB (reaches 3 spans: unaligned start) and
		 * the last 8 KiB (the shared last span: not charged). */
		r.touch = touch;
		r.touch_count = 2;
		pt_model(PT_MODE_4K, &r, &c, err, sizeof(err));
		check_u64(c.touched_spans[PT_LEVEL_PTE], 4, "touch map: 4 spans of 2 MiB reached");
		check_u64(c.per_process_pages[PT_LEVEL_PTE], 3, "touch map: 3 PTE pages charged, the shared one not");
		check_u64(c.touched_bytes, 4 * MIB + 8192, "touch map: touched bytes summed");
		/* Something below in the first 2 MiB span as well: not there
		 * (0x7f49c0000000 is in the PMD span, not the first PTE span). */
		{
			struct pt_range both[2] = { below, above };

			r.around = both;
			r.around_count = 2;
			pt_model(PT_MODE_4K, &r, &c, err, sizeof(err));
			check_u64(c.per_process_pages[PT_LEVEL_PTE], 3, "mapping below in another 2 MiB span: PTE count unchanged");
			check_u64(c.left_out_pages[PT_LEVEL_PMD], 1, "PMD page shared below and above: left out once");
		}
		/* A bad touch map is rejected with the range named. */
		{
			struct pt_range bad[1] = { { 0, sz + 4096, NULL } };

			r.touch = bad;
			r.touch_count = 1;
			TAP_OK(pt_model(PT_MODE_4K, &r, &c, err, sizeof(err)) < 0 && strstr(err, "touch map"),
			      "touch map beyond the region rejected");
		}
		/* hugetlb-2m at the 2 MiB-aligned end: the PMD page and PUD page
		 * are the neighbours' too: nothing charged per process. */
		{
			struct pt_region h = { .addr = 0x7f49e4800000ull, .size = 148 * MIB, .touch_fraction = 1,
					       .around = &above, .around_count = 1, .around_known = true };

			above.start = h.addr + h.size;
			above.end = above.start + 4096;
			pt_model(PT_MODE_HUGETLB_2M, &h, &c, err, sizeof(err));
			check_u64(pt_cost_vmpte_pages(&c), 0, "hugetlb-2m below a library: no page of its own");
			check_u64(c.left_out_pages[PT_LEVEL_PMD] + c.left_out_pages[PT_LEVEL_PUD], 2,
				  "hugetlb-2m below a library: PMD and PUD page left out");
		}
	}

	/* plan --pid's projection: 4 processes measured (their page tables
	 * given whole), 6 added, each 34 region pages (64 MiB at 2T) + 30
	 * pages of its own: 4 x 262144 + 6 x 262144 = 2621440 B. RAM 1 GiB
	 * with the 64 MiB region: 4 + (1 GiB - 1 MiB - 64 MiB) / 256 KiB =
	 * 4 + 3836 = 3840 processes. */
	{
		struct pt_region r = { .addr = T2, .size = 64 * MIB, .touch_fraction = 1 };
		struct capacity_inputs in = { .processes = 10, .ram_bytes = GIB, .measured_processes = 4,
					      .measured_pt_bytes = 4 * 262144, .own_pt_bytes_per_process = 30 * 4096 };
		struct capacity cap;
		struct pt_cost c;
		char err[256];

		pt_model(PT_MODE_4K, &r, &c, err, sizeof(err));
		capacity_compute(&c, &in, &cap);
		check_u64(cap.pt_per_process_bytes, 64 * 4096, "measured: an added process costs region + own pages");
		check_u64(cap.pt_total_bytes, 2621440, "measured: 4 processes as measured + 6 added");
		check_u64(cap.max_processes, 3840, "measured: max processes counts the measured ones");
		in.processes = 4;
		capacity_compute(&c, &in, &cap);
		check_u64(cap.pt_total_bytes, 4 * 262144, "measured: at the measured count, exactly what was measured");
	}

	/* Size and count parsing. */
	{
		uint64_t v;
		double f;

		TAP_OK(units_parse_size("4K", &v) == 0 && v == 4096, "size 4K");
		TAP_OK(units_parse_size("256M", &v) == 0 && v == 256 * MIB, "size 256M");
		TAP_OK(units_parse_size("300G", &v) == 0 && v == 300 * GIB, "size 300G");
		TAP_OK(units_parse_size("1T", &v) == 0 && v == TIB, "size 1T");
		TAP_OK(units_parse_size("1GiB", &v) == 0 && v == GIB, "size 1GiB");
		TAP_OK(units_parse_size("1.5G", &v) < 0, "size 1.5G rejected (the suite's grammar)");
		{
			bool unit = false;

			TAP_OK(units_parse_size_unit("255.5G", &v, &unit) == 0 && v == 274341036032ull && unit,
			       "planner size 255.5G = 274341036032 bytes");
			TAP_OK(units_parse_size_unit("1.25T", &v, &unit) == 0 && v == 1374389534720ull,
			       "planner size 1.25T = 1374389534720 bytes");
			TAP_OK(units_parse_size_unit("0.5KiB", &v, &unit) == 0 && v == 512, "planner size 0.5KiB = 512");
			TAP_OK(units_parse_size_unit("0.1K", &v, &unit) < 0, "planner size 0.1K refused (102.4 bytes)");
			TAP_OK(units_parse_size_unit("1.5", &v, &unit) < 0, "planner size 1.5 refused (no unit)");
			TAP_OK(units_parse_size_unit(".5G", &v, &unit) < 0 && units_parse_size_unit("5.G", &v, &unit) < 0 &&
			       units_parse_size_unit("1.5.5G", &v, &unit) < 0 && units_parse_size_unit("1.5Q", &v, &unit) < 0,
			       "planner sizes .5G, 5.G, 1.5.5G, 1.5Q refused");
			TAP_OK(units_parse_size_unit("64", &v, &unit) == 0 && v == 64 && !unit,
			       "planner size 64: 64 bytes, no unit (the plan says so)");
			TAP_OK(units_parse_size_unit("0x1000", &v, &unit) == 0 && v == 4096 && unit,
			       "planner size 0x1000: hex is bytes, explicit");
		}
		TAP_OK(units_parse_size("-1", &v) < 0, "size -1 rejected");
		TAP_OK(units_parse_size("12Q", &v) < 0, "size 12Q rejected");
		TAP_OK(units_parse_size("99999999999T", &v) < 0, "size overflow rejected");
		TAP_OK(units_parse_addr("0x20000000000", &v) == 0 && v == T2, "addr 0x20000000000");
		TAP_OK(units_parse_addr("0x", &v) < 0, "addr 0x rejected");
		TAP_OK(units_parse_count("0", &v) < 0, "count 0 rejected");
		TAP_OK(units_parse_fraction("0", &f) < 0 && units_parse_fraction("1.01", &f) < 0 &&
		      units_parse_fraction("nan", &f) < 0, "fractions 0, 1.01, nan rejected");
		TAP_OK(units_parse_fraction("0.25", &f) == 0 && f == 0.25, "fraction 0.25");
	}

	{
		/* Deployments: shape, leaves, data place, refusals. 2 GiB at 2 TiB. */
		struct pt_region r = { .addr = 2ull << 40, .size = 2ull << 30, .touch_fraction = 1 };
		struct pt_cost c;
		char err[256];
		enum deploy_id d;

		TAP_OK(deploy_model(DEPLOY_MSHARE_DAX_2M, &r, &c, err, sizeof(err)) == 0 &&
		       c.shared_pages[PT_LEVEL_PTE] == 0 && c.shared_pages[PT_LEVEL_PMD] == 2 &&
		       c.shared_pages[PT_LEVEL_PUD] == 1 && c.shared_pages[PT_LEVEL_PGD] == 1 &&
		       pt_cost_per_process_pages(&c) == 0, "mshare-dax-2m: 2 PMD + 1 PUD + the host PGD page once, none per process");
		TAP_OK(deploy_model(DEPLOY_MSHARE_DEVDAX_1G, &r, &c, err, sizeof(err)) == 0 &&
		       c.shared_pages[PT_LEVEL_PMD] == 0 && c.shared_pages[PT_LEVEL_PUD] == 1,
		       "mshare-devdax-1g: no PMD pages, 1 PUD page once");
		TAP_OK(deploy_model(DEPLOY_DAX_4K, &r, &c, err, sizeof(err)) == 0 &&
		       c.per_process_pages[PT_LEVEL_PTE] == 1024 && c.per_process_pages[PT_LEVEL_PMD] == 2 &&
		       c.per_process_pages[PT_LEVEL_PUD] == 1, "dax-4k: 1024 PTE + 2 PMD + 1 PUD per process");
		TAP_OK(deploy_model(DEPLOY_HUGETLB_2M, &r, &c, err, sizeof(err)) == 0 &&
		       c.shared_pages[PT_LEVEL_PMD] == 2 && c.per_process_pages[PT_LEVEL_PMD] == 0 &&
		       c.per_process_pages[PT_LEVEL_PUD] == 1, "hugetlb-2m at 1 GiB-aligned: PMD pages shared, the PUD page per process");
		TAP_OK(deploy_model(DEPLOY_DEVDAX_1G, &r, &c, err, sizeof(err)) == 0 &&
		       pt_cost_per_process_pages(&c) == 1 && c.per_process_pages[PT_LEVEL_PUD] == 1,
		       "devdax-1g: the PUD page per process, nothing else");
		r.size = (2ull << 30) + (1ull << 20);
		TAP_OK(deploy_model(DEPLOY_DEVDAX_2M, &r, &c, err, sizeof(err)) < 0 && strstr(err, "multiples of 2 MiB"),
		       "devdax-2m refuses a size off 2 MiB");
		TAP_OK(deploy_model(DEPLOY_DAX_2M, &r, &c, err, sizeof(err)) == 0 && c.per_process_pages[PT_LEVEL_PTE] == 1,
		       "dax-2m (fsdax) maps the partial last 2 MiB with one PTE page");
		TAP_OK(deploy_get(DEPLOY_DAX_2M)->data == DATA_DEVICE && deploy_get(DEPLOY_MSHARE)->data == DATA_RAM &&
		       deploy_get(DEPLOY_SHM_THP)->data == DATA_RAM && deploy_get(DEPLOY_MSHARE_2025_DAX_4K)->data == DATA_DEVICE,
		       "each deployment knows where its data lives");
		TAP_OK(deploy_from_name("dax-1g", &d) == 0 && d == DEPLOY_DEVDAX_1G && deploy_from_name("shm-4k", &d) == 0 &&
		       d == DEPLOY_4K && deploy_from_name("2m", &d) < 0, "names and aliases (dax-1g, shm-4k)");
	}
	return tap_done();
}
