/* results_area.h - the memory the parent and its workers share.
 *
 * One MAP_SHARED|MAP_ANONYMOUS mapping created before the first fork:
 * a control block of futex words, then one worker_area per worker. Each
 * worker writes only its own worker_area; the parent reads them all after
 * the run. Shared anonymous memory is shmem, so fork copies no page table
 * for it and a worker faults in only the pages of its own area.
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

struct worker_area {
	struct workload_slot slot;
	struct worker_figures fig;
} __attribute__((aligned(64)));

struct results_control {
	uint32_t ready;     /* workers that reached the start barrier */
	uint32_t start;     /* 0 until the parent releases the workload */
	uint32_t done;      /* workers parked after the workload */
	uint32_t measured;  /* 0 until the parent has read the parked figures */
} __attribute__((aligned(64)));

struct results_area {
	struct results_control *control;
	struct fault_cost_shared *fault_cost; /* after the control block */
	struct worker_area *workers;
	size_t bytes;
	void *base;
};

int results_area_create(struct results_area *a, unsigned workers);
void results_area_destroy(struct results_area *a);

#endif
