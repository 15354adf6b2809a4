/* Unit tests of the log-linear histogram: buckets, percentiles, merge. */
#include <stdint.h>
#include <stdlib.h>

#include "fault_cost.h"
#include "histogram.h"
#include "../lib/tap.h"

/* The exact p-th percentile of sorted values (nearest rank). */
static uint64_t exact_percentile(const uint64_t *sorted, size_t n, double pct)
{
	size_t rank = (size_t)(pct / 100.0 * (double)n);
	if ((double)rank < pct / 100.0 * (double)n)
		rank++;
	if (rank == 0)
		rank = 1;
	return sorted[rank - 1];
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int main(void)
{
	struct histogram h;

	histogram_init(&h);
	TAP_OK(histogram_percentile(&h, 50) == 0 && histogram_mean(&h) == 0, "empty histogram: p50 and mean are 0");

	/* Small values are exact. */
	for (uint64_t v = 0; v < 32; v++)
		histogram_record(&h, v);
	int exact = 1;
	for (int p = 1; p <= 100; p++) {
		uint64_t want = (uint64_t)((p * 32 + 99) / 100) - 1;
		if (histogram_percentile(&h, p) != want)
			exact = 0;
	}
	TAP_OK(exact, "values below 32 are exact at every percentile");
	TAP_OK(h.t.count == 32 && h.t.sum == 496 && h.t.min == 0 && h.t.max == 31, "count, sum, min, max");
	TAP_OK(histogram_mean(&h) == 15.5, "mean of 0..31 is 15.5");

	/* Random values over many magnitudes: the histogram's percentile is
	 * never below the exact one and at most 1/32 above it. */
	enum { N = 100000 };
	static uint64_t vals[N];
	srand(12345);
	histogram_init(&h);
	for (int i = 0; i < N; i++) {
		uint64_t mag = 1ull << (rand() % 34);
		vals[i] = mag + (uint64_t)rand() % mag;
		histogram_record(&h, vals[i]);
	}
	qsort(vals, N, sizeof(vals[0]), cmp_u64);
	static const double pcts[] = { 1, 10, 50, 90, 99, 99.9, 99.99 };
	for (size_t i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++) {
		uint64_t e = exact_percentile(vals, N, pcts[i]);
		uint64_t got = histogram_percentile(&h, pcts[i]);
		TAP_OK(got >= e && (double)got <= (double)e * (1.0 + 1.0 / 32),
		       "p%g = %llu within [exact %llu, +1/32]", pcts[i], (unsigned long long)got,
		       (unsigned long long)e);
	}
	TAP_OK(histogram_percentile(&h, 100) == vals[N - 1], "p100 is the true maximum");

	/* Merge equals recording everything into one. */
	struct histogram a, b, all;
	histogram_init(&a);
	histogram_init(&b);
	histogram_init(&all);
	for (uint64_t v = 1; v < 5000; v += 7) {
		histogram_record(v % 2 ? &a : &b, v * 13);
		histogram_record(&all, v * 13);
	}
	histogram_merge(&a, &b);
	int same = a.t.count == all.t.count && a.t.sum == all.t.sum && a.t.min == all.t.min && a.t.max == all.t.max;
	for (unsigned i = 0; i < HISTOGRAM_BUCKETS; i++)
		same &= a.buckets[i] == all.buckets[i];
	TAP_OK(same, "merge of two halves equals one histogram of everything");
	struct histogram empty;
	histogram_init(&empty);
	histogram_merge(&a, &empty);
	TAP_OK(a.t.count == all.t.count && a.t.min == all.t.min, "merging an empty histogram changes nothing");

	/* Values beyond the last bucket land in it; max stays true. */
	histogram_init(&h);
	histogram_record(&h, 1ull << 50);
	histogram_record(&h, 5);
	TAP_OK(h.t.max == 1ull << 50 && histogram_percentile(&h, 100) == 1ull << 50 && h.buckets[HISTOGRAM_BUCKETS - 1] == 1,
	       "a value beyond 2^40 goes to the last bucket, max keeps it");
	TAP_OK(histogram_percentile(&h, 50) == 5, "p50 of {5, 2^50} is 5");
	/* The fault-cost layout (issue 31): every bucket under 1% of its
	 * values wide, so a 2% difference between two designs shows. */
	double worst = 0;
	for (unsigned b = 1u << FAULT_COST_SUB_BITS; b < FAULT_COST_BUCKETS; b++) {
		uint64_t lo = histogram_bucket_upper(b - 1, FAULT_COST_SUB_BITS) + 1;
		uint64_t hi = histogram_bucket_upper(b, FAULT_COST_SUB_BITS);
		double width = (double)(hi - lo + 1) / (double)lo;
		if (width > worst)
			worst = width;
	}
	TAP_OK(worst < 0.01, "fault-cost buckets: widest is %.4f of its lower edge (< 1%%)", worst);
	int placed = 1;
	for (uint64_t v = 0; v < (1ull << 36); v = v * 3 / 2 + 1) {
		unsigned b = histogram_bucket_of(v, FAULT_COST_SUB_BITS, FAULT_COST_MAX_BITS);
		uint64_t hi = histogram_bucket_upper(b, FAULT_COST_SUB_BITS);
		uint64_t lo = b ? histogram_bucket_upper(b - 1, FAULT_COST_SUB_BITS) + 1 : 0;
		placed &= b < FAULT_COST_BUCKETS && lo <= v && v <= hi;
	}
	TAP_OK(placed, "fault-cost buckets: every value lies between its bucket's edges");

	/* Two designs 2% apart, 1000 touches each: their medians differ. */
	static struct fault_cost_shared sh;
	struct fault_cost_slot fa, b2;
	fault_cost_shared_init(&sh);
	fault_cost_slot_init(&fa);
	fault_cost_slot_init(&b2);
	for (int i = 0; i < 1000; i++)
		fault_cost_note(&sh, &fa, 3007, 1, 0, 0);
	fault_cost_note(&sh, &fa, 100000, 1, 0, 0); /* so that p50 is a bucket edge, not the clamped max */
	uint64_t pa = fault_cost_percentile(&sh, FC_FAULT, &fa.kind[FC_FAULT], 50);
	fault_cost_shared_init(&sh);
	for (int i = 0; i < 1000; i++)
		fault_cost_note(&sh, &b2, 3067, 1, 0, 0);
	fault_cost_note(&sh, &b2, 100000, 1, 0, 0);
	uint64_t pb = fault_cost_percentile(&sh, FC_FAULT, &b2.kind[FC_FAULT], 50);
	TAP_OK(pa != pb && pa >= 3007 && pa <= 3007 * 1.01 && pb >= 3067 && pb <= 3067 * 1.01,
	       "p50 of 3007 and of 3067 (2%% apart) read %llu and %llu: apart, each within 1%%",
	       (unsigned long long)pa, (unsigned long long)pb);

	/* Classification: a preempted touch is in neither histogram. */
	struct fault_cost_slot s;
	fault_cost_shared_init(&sh);
	fault_cost_slot_init(&s);
	fault_cost_note(&sh, &s, 100, 0, 0, 0);     /* no fault */
	fault_cost_note(&sh, &s, 5000, 1, 0, 0);    /* a fault */
	fault_cost_note(&sh, &s, 9000, 2, 0, 1);    /* two faults, slept in one */
	fault_cost_note(&sh, &s, 999999, 1, 1, 0);  /* preempted fault */
	fault_cost_note(&sh, &s, 888888, 0, 2, 0);  /* preempted, no fault */
	TAP_OK(s.kind[FC_FAULT].count == 2 && s.kind[FC_NO_FAULT].count == 1 && s.faults_taken == 3 && s.slept == 1 &&
		       s.preempted == 2 && s.preempted_faults == 1,
	       "classification: 2 faults (3 taken, 1 slept), 1 no-fault touch, 2 preempted (1 fault)");
	TAP_OK(s.kind[FC_FAULT].max == 9000 && s.kind[FC_NO_FAULT].max == 100 &&
		       fault_cost_percentile(&sh, FC_FAULT, &s.kind[FC_FAULT], 100) == 9000,
	       "preempted touches' times are in no histogram");
	struct fault_cost_slot m;
	fault_cost_slot_init(&m);
	fault_cost_merge(&m, &s);
	fault_cost_merge(&m, &fa);
	TAP_OK(m.kind[FC_FAULT].count == 1003 && m.kind[FC_FAULT].min == 3007 && m.kind[FC_FAULT].max == 100000 &&
		       m.preempted == 2 && m.faults_taken == 1004,
	       "merge adds counts and keeps min and max");

	return tap_done();
}
