/* results_area.h - the memory the parent and its workers share.
 *
 * One memfd (shmem) created before the first fork, mapped twice: the head
 * (a control block of futex words, then the run's fault-cost histograms)
 * and then one worker_area per worker. Each worker writes only its own
 * worker_area; the parent reads them all after the run. Fork copies no
 * page table for shmem. A worker keeps the head where the parent mapped it
 * (just below the shared libraries, in a 2 MiB whose page table the worker
 * has anyway) and maps only its own worker_area from the memfd into the
 * hole the others leave (results_area_own), next to the head: at 1,000
 * workers the whole table is 24 MiB, and a worker that touched its entry in
 * place would pay a page table of its own for it.
 */
#ifndef MSHARE_BENCH_RESULTS_AREA_H
#define MSHARE_BENCH_RESULTS_AREA_H

#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "workload.h"

/* Phases a worker reports, in order. */
enum worker_phase {
	PHASE_FORKED = 0,
	PHASE_READY,    /* attached, waiting at the start barrier */
	PHASE_DONE,     /* workload finished, parked until measured */
	PHASE_DETACHED, /* unmapped, about to exit */
	PHASE_FAILED,   /* error[] says why */
};

/* The harness's own per-worker figures. */
struct worker_figures {
	uint32_t phase;              /* enum worker_phase, written by the worker */
	int32_t pid;                 /* written by the parent after fork */
	uint64_t attach_ns;
	uint64_t barrier_wait_ns;    /* from ready to released */
	uint64_t detach_ns;
	uint64_t minflt, majflt;     /* during the workload only */
	int32_t cpu, node;           /* where it ran when its workload ended (getcpu); -1 unknown */
	/* The counters read around the workload, here rather than on the
	 * stack: copying them out to a stack page still shared copy-on-write
	 * with the parent would itself fault, inside the workload's count. */
	struct rusage workload_ru[2];
	char error[176];
};

/* Page-aligned, the figures first: the parts a worker writes (its figures,
 * the head of its slot, the histogram buckets its touches land in) share
 * as few pages as they can, and each of those pages is this worker's own
 * memory (results.worker_memory counts them). */
struct worker_area {
	struct worker_figures fig;
	struct workload_slot slot;
} __attribute__((aligned(4096)));

struct results_control {
	uint32_t ready;     /* workers that reached the start barrier */
	uint32_t start;     /* 0 until the parent releases the workload */
	uint32_t done;      /* workers parked after the workload */
	uint32_t measured;  /* 0 until the parent has read the parked figures */
} __attribute__((aligned(64)));

struct results_area {
	struct results_control *control;     /* the head: control block, */
	struct fault_cost_shared *fault_cost; /* then the histograms, */
	uint8_t *populated;                   /* then a bit per 4 KiB page of the region, or NULL */
	size_t populated_bytes, populated_pages;
	struct worker_area *workers;          /* every worker's (parent only) */
	void *head, *table;                   /* the two mappings of the memfd */
	size_t head_bytes, table_bytes;
	int fd;                               /* the memfd; -1 once a worker has its own */
};

/* The largest page map (a bit per 4 KiB page of the region: 64 MiB covers
 * 2 TiB); a larger region has none (faults are not split by page). */
#define RESULTS_POPULATED_MAX ((size_t)64 << 20)
/* In the parent, before the first fork, for a region of region_bytes.
 * 0, or -1 with errno. */
int results_area_create(struct results_area *a, unsigned workers, size_t region_bytes);
/* In worker `index`, first thing after fork: unmap the table, map this
 * worker's own worker_area alone and return it (NULL, errno set, if that
 * failed: the table is gone then, so the caller can only exit). */
struct worker_area *results_area_own(struct results_area *a, unsigned index);
void results_area_destroy(struct results_area *a);

#endif
