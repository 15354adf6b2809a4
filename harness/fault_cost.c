/* fault_cost.c - the parent's side of the fault-cost figures (fault_cost.h). */
#include <string.h>

#include "fault_cost.h"

void fault_cost_slot_init(struct fault_cost_slot *s)
{
	memset(s, 0, sizeof(*s));
	for (int k = 0; k < FC_KINDS; k++)
		tally_init(&s->kind[k]);
}

void fault_cost_shared_init(struct fault_cost_shared *sh)
{
	memset(sh, 0, sizeof(*sh));
}

void fault_cost_merge(struct fault_cost_slot *into, const struct fault_cost_slot *from)
{
	for (int k = 0; k < FC_KINDS; k++)
		tally_merge(&into->kind[k], &from->kind[k]);
	into->faults_taken += from->faults_taken;
	into->slept += from->slept;
	into->preempted += from->preempted;
	into->preempted_faults += from->preempted_faults;
	for (int k = 0; k < FC_HW_KINDS; k++) {
		into->hw_instructions[k] += from->hw_instructions[k];
		into->hw_touches[k] += from->hw_touches[k];
	}
	if (from->hw_baseline > into->hw_baseline)
		into->hw_baseline = from->hw_baseline;
	into->hw_read_failures += from->hw_read_failures;
}

static uint64_t count_u64(const void *buckets, unsigned i)
{
	return __atomic_load_n(&((const uint64_t *)buckets)[i], __ATOMIC_RELAXED);
}

uint64_t fault_cost_percentile(const struct fault_cost_shared *sh, enum fault_cost_kind k,
			       const struct tally *t, double pct)
{
	/* The shared buckets also hold the touches of workers that did not
	 * publish (crashed): rank over what they hold, clamp to the tally. */
	uint64_t n = 0;
	for (unsigned b = 0; b < FAULT_COST_BUCKETS; b++)
		n += count_u64(sh->buckets[k], b);
	return histogram_percentile_of(count_u64, sh->buckets[k], FAULT_COST_BUCKETS, FAULT_COST_SUB_BITS, n,
				       t->count ? t->min : 0, t->max, pct);
}
