/* pt_model.h - exact page-table pages for one shared region, per mode.
 *
 * x86-64, 4-level paging (PGD -> PUD -> PMD -> PTE; P4D folded), 4 KiB
 * page-table pages of 512 eight-byte entries:
 *   one PTE page maps 2 MiB, one PMD page 1 GiB, one PUD page 512 GiB,
 *   one PGD entry 512 GiB; user space ends at 128 TiB.
 * A page-table page exists for every aligned span the touched part of the
 * region reaches into, so the count depends on the region's alignment, not
 * only its size. Counts are split into pages each process allocates for
 * itself and pages that exist once however many processes map the region.
 *
 * Modes:
 *   4k          MAP_SHARED with 4 KiB pages: PTE+PMD+PUD pages per process.
 *   hugetlb-2m  hugetlbfs 2 MiB: no PTE pages; PMD pages are shared between
 *               processes for each 1 GiB-aligned range lying wholly inside
 *               the MAP_SHARED mapping (the kernel's want_pmd_share() /
 *               huge_pmd_share()), private for partial head/tail ranges;
 *               PUD pages per process. A process's VmPTE still counts every
 *               shared PMD page it maps.
 *   hugetlb-1g  hugetlbfs 1 GiB: PUD entries map the data; PUD pages per
 *               process, nothing below.
 *   dax-2m      fsdax file with 2 MiB PMD mappings (file offset 0 at addr):
 *               PMD+PUD pages per process; PTE pages only where a 2 MiB
 *               mapping is impossible (unaligned tail, or every page when
 *               addr is not 2 MiB-aligned: offset and address not congruent).
 *   dax-1g      device-DAX namespace at 1 GiB alignment: PUD entries map
 *               the data (as hugetlb-1g, without hugetlbfs's rounding);
 *               PUD pages per process, nothing below. The device refuses
 *               an address or size off 1 GiB (mmap fails with EINVAL).
 *               (Device-DAX at 2 MiB alignment is dax-2m.)
 *   mshare      the region's page tables (4 KiB pages) live once in the
 *               mshare host mm (PUD+PMD+PTE pages plus the host mm's own PGD
 *               page); each process only points its own PGD entries (8 B
 *               each, in the PGD page it has anyway) at them: no page-table
 *               page per process. Sharing is per 512 GiB PGD slot, so the
 *               mshare range is the region widened to 512 GiB alignment.
 *               Over device-DAX (pt_region.leaf_bytes 2 MiB or 1 GiB) the
 *               host mm holds no PTE pages (2 MiB), nor PMD pages (1 GiB).
 */
#ifndef MSHARE_BENCH_PLANNER_PT_MODEL_H
#define MSHARE_BENCH_PLANNER_PT_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PT_PAGE_BYTES 4096ull        /* one page-table page */
#define PT_ENTRY_BYTES 8ull
#define PT_PTE_SPAN (2ull << 20)     /* bytes mapped by one PTE page */
#define PT_PMD_SPAN (1ull << 30)     /* by one PMD page */
#define PT_PUD_SPAN (512ull << 30)   /* by one PUD page = one PGD entry */
#define PT_USER_VA_END (128ull << 40)
/* The kernel's PID_MAX_LIMIT on 64-bit: no more processes than this exist. */
#define PT_PID_MAX_LIMIT 4194304ull

enum pt_mode {
	PT_MODE_4K,
	PT_MODE_HUGETLB_2M,
	PT_MODE_HUGETLB_1G,
	PT_MODE_DAX_2M,
	PT_MODE_MSHARE,
	PT_MODE_DAX_1G,
	PT_MODE_COUNT
};

enum pt_level {
	PT_LEVEL_PTE,
	PT_LEVEL_PMD,
	PT_LEVEL_PUD,
	PT_LEVEL_PGD,
	PT_LEVEL_COUNT
};

/* A range of bytes [start, end); name says what it is (may be NULL). */
struct pt_range {
	uint64_t start, end;
	const char *name;
};

struct pt_region {
	uint64_t addr;          /* virtual start of the mapping */
	uint64_t size;          /* bytes mapped */
	double touch_fraction;  /* 0 < f <= 1: each process touches [addr, addr + f*size) */
	/* When non-zero, overrides the fraction: each process touches
	 * [addr, addr + touched_bytes), e.g. a strided touch's extent. */
	uint64_t touched_bytes;
	/* When touch_count > 0, overrides both: each process touches exactly
	 * these ranges, as OFFSETS from addr, sorted, not overlapping (a touch
	 * map, e.g. the pages `plan --pid` found present). */
	const struct pt_range *touch;
	size_t touch_count;
	/* What lies around the region in each process, as ABSOLUTE address
	 * ranges that already need page tables (pages present in other
	 * mappings). A PTE/PMD/PUD page of the region's first or last span
	 * that one of them also needs is not charged to the region: it exists
	 * anyway. around_known false: nothing is known about the surroundings
	 * (every page the region reaches is charged; true at the default
	 * address, which has a 512 GiB slot of its own). */
	const struct pt_range *around;
	size_t around_count;
	bool around_known;
	/* mshare mode only: the size of the entries the shared tables map
	 * the data with, 0 or 4096 for 4 KiB pages; 2 MiB or 1 GiB for a
	 * device-DAX device of that alignment shared with mshare. */
	uint64_t leaf_bytes;
};

struct pt_cost {
	enum pt_mode mode;
	uint64_t leaf_page_bytes;     /* data page size: 4K, 2M or 1G */
	uint64_t mapped_bytes;        /* size as the kernel maps it (hugetlb rounds up) */
	uint64_t touched_bytes;       /* of it, the part each process touches */
	/* Pages each process allocates for itself (counted once per process). */
	uint64_t per_process_pages[PT_LEVEL_COUNT];
	/* Pages that exist once, whatever the process count. */
	uint64_t shared_pages[PT_LEVEL_COUNT];
	/* Of the shared pages, how many each process's VmPTE counts again
	 * (hugetlb shared PMD pages: mm_inc_nr_pmds() per sharer). */
	uint64_t shared_in_vmpte_pages[PT_LEVEL_COUNT];
	/* PGD entries each process fills for the region (8 B each, inside the
	 * PGD page the process has anyway: no extra page). */
	uint64_t pgd_entries_per_process;
	uint64_t mshare_start, mshare_end; /* mshare mode: the aligned mshare range */
	/* Touched spans of each size (2 MiB, 1 GiB, 512 GiB) the region reaches. */
	uint64_t touched_spans[PT_LEVEL_PGD];
	/* Page-table pages per process left out of the count because what
	 * lies around the region needs them anyway (per level), and why. */
	uint64_t left_out_pages[PT_LEVEL_COUNT];
	unsigned left_out_at[PT_LEVEL_COUNT];  /* bit 0: the first span's page, bit 1: the last span's */
	char left_out_note[512];
	char note[256];               /* what about this region changes the count */
};

const char *pt_mode_name(enum pt_mode mode);
/* -1 if the name is not a mode. */
int pt_mode_from_name(const char *name, enum pt_mode *mode);
const char *pt_level_name(enum pt_level level);

/* Page-table pages needed at one level to cover [start, end): one per
 * span-aligned block the range reaches into; 0 for an empty range. */
uint64_t pt_span_pages(uint64_t start, uint64_t end, uint64_t span);

/* Fill *cost for the region in the given mode. 0 on success; -1 when the
 * mode cannot map this region (e.g. hugetlbfs at an address that is not
 * huge-page aligned), with the reason in err. */
int pt_model(enum pt_mode mode, const struct pt_region *region, struct pt_cost *cost,
	     char *err, size_t err_len);

/* Totals over the levels. */
uint64_t pt_cost_per_process_pages(const struct pt_cost *cost);
uint64_t pt_cost_shared_pages(const struct pt_cost *cost);
/* What one process's VmPTE shows for the region (own + shared it counts). */
uint64_t pt_cost_vmpte_pages(const struct pt_cost *cost);

#endif
