/* fault_cost.h - every timed first touch classified exactly as a fault or
 * not (issue 31), with a fine histogram of each kind.
 *
 * Around each touch the worker reads its own thread's counters
 * (getrusage(RUSAGE_THREAD), outside the timed window):
 *   - minflt + majflt rose, nivcsw did not: a fault; its time goes into the
 *     fault histogram, the rise into faults_taken (a touch may take two
 *     faults: a read fault then a write-protect fault);
 *   - neither rose: a touch without a fault (the page was already mapped:
 *     an earlier fault, fault-around, a page table shared with mshare);
 *   - nivcsw rose: the worker was switched out during the touch, so its
 *     time includes another task's; it is in neither histogram, only in
 *     preempted.count (and preempted.faults counts the faults it took).
 * nvcsw (a voluntary sleep inside the fault: a lock, I/O) does not make a
 * touch preempted: that wait is part of the fault's cost; faults.slept
 * counts such faults.
 *
 * The histograms are run-wide and shared: FAULT_COST_SUB_BITS = 7 splits
 * every power of two into 128 buckets (a bucket is under 0.8% wide), too
 * big to keep one per worker for 10,000 workers. A worker adds to them with
 * one atomic increment per touch, outside the timed window; count, sum,
 * min and max are the worker's own (its slot), merged by the parent.
 */
#ifndef MSHARE_BENCH_FAULT_COST_H
#define MSHARE_BENCH_FAULT_COST_H

#include <stdint.h>

#include "histogram.h"

#define FAULT_COST_SUB_BITS 7
#define FAULT_COST_MAX_BITS 40
#define FAULT_COST_BUCKETS \
	((1u << FAULT_COST_SUB_BITS) * (FAULT_COST_MAX_BITS - FAULT_COST_SUB_BITS + 1))

/* FC_FAULT holds every fault; FC_FIRST, FC_POPULATED and FC_SLEPT split
 * them (issue 46): a fault that slept (nvcsw rose: it waited, on a lock or
 * on another task's fault of the same page) is FC_SLEPT; one that did not
 * is FC_FIRST when no worker had finished a touch of its page before this
 * touch began, FC_POPULATED when one had (the page was in memory, only
 * this process's entry was missing). Without the run's page map (NULL)
 * a fault is in FC_FAULT (and FC_SLEPT) only. The hardware counts cover
 * FC_FAULT and FC_NO_FAULT (FC_HW_KINDS). */
enum fault_cost_kind { FC_FAULT = 0, FC_NO_FAULT = 1, FC_FIRST = 2, FC_POPULATED = 3, FC_SLEPT = 4, FC_KINDS = 5 };
#define FC_HW_KINDS 2

/* Shared by every worker of a run (in the results area). */
struct fault_cost_shared {
	uint64_t buckets[FC_KINDS][FAULT_COST_BUCKETS];
};

/* One kind's figures of one worker (its slot) or of the run (merged). */
struct fault_cost_slot {
	struct tally kind[FC_KINDS];
	uint64_t faults_taken;     /* minflt + majflt rises of the touches counted as faults */
	uint64_t slept;            /* of those, touches during which nvcsw rose */
	uint64_t preempted;        /* touches during which nivcsw rose */
	uint64_t preempted_faults; /* minflt + majflt rises of those */
	/* --hw-instructions (hw_counter.h): retired instructions of the
	 * touches of each kind that were counted, the fixed cost taken off
	 * each (the largest of the merged workers'), reads that failed. */
	uint64_t hw_instructions[FC_HW_KINDS], hw_touches[FC_HW_KINDS];
	uint64_t hw_baseline, hw_read_failures;
};

void fault_cost_slot_init(struct fault_cost_slot *s);
void fault_cost_shared_init(struct fault_cost_shared *sh);

static inline void fault_cost_add(struct fault_cost_shared *sh, struct fault_cost_slot *s, enum fault_cost_kind k,
				  uint64_t value)
{
	tally_add(&s->kind[k], value);
	if (sh)
		__atomic_fetch_add(&sh->buckets[k][histogram_bucket_of(value, FAULT_COST_SUB_BITS,
									FAULT_COST_MAX_BITS)],
				   1, __ATOMIC_RELAXED);
}

/* Worker: one classified touch (inline: called once per touch); populated
 * is 1 when another worker had finished a touch of the page before this
 * one began, 0 when none had, -1 when unknown. */
static inline void fault_cost_note_page(struct fault_cost_shared *sh, struct fault_cost_slot *s, uint64_t value,
					uint64_t faults, uint64_t involuntary, uint64_t voluntary, int populated)
{
	if (involuntary) {
		s->preempted++;
		s->preempted_faults += faults;
		return;
	}
	fault_cost_add(sh, s, faults ? FC_FAULT : FC_NO_FAULT, value);
	if (faults) {
		s->faults_taken += faults;
		s->slept += voluntary != 0;
		if (voluntary)
			fault_cost_add(sh, s, FC_SLEPT, value);
		else if (populated >= 0)
			fault_cost_add(sh, s, populated ? FC_POPULATED : FC_FIRST, value);
	}
}

static inline void fault_cost_note(struct fault_cost_shared *sh, struct fault_cost_slot *s, uint64_t value,
				   uint64_t faults, uint64_t involuntary, uint64_t voluntary)
{
	fault_cost_note_page(sh, s, value, faults, involuntary, voluntary, -1);
}

/* Worker: the instructions counted around one touch (i0 before, i1
 * after), classified as fault_cost_note does; preempted touches are left
 * out, as there. */
static inline void fault_cost_hw_note(struct fault_cost_slot *s, uint64_t faults, uint64_t involuntary, uint64_t i0,
				      uint64_t i1)
{
	if (involuntary)
		return;
	if (i0 == 0 || i1 <= i0) {
		s->hw_read_failures++;
		return;
	}
	enum fault_cost_kind k = faults ? FC_FAULT : FC_NO_FAULT;
	uint64_t v = i1 - i0;
	s->hw_instructions[k] += v > s->hw_baseline ? v - s->hw_baseline : 0;
	s->hw_touches[k]++;
}

/* Parent: add a worker's slot into the run's. */
void fault_cost_merge(struct fault_cost_slot *into, const struct fault_cost_slot *from);

/* Parent: the percentile pct of one kind, from the shared buckets; the
 * bucket's upper edge, clamped to the tally's min and max; 0 when empty. */
uint64_t fault_cost_percentile(const struct fault_cost_shared *sh, enum fault_cost_kind k,
			       const struct tally *t, double pct);

#endif
