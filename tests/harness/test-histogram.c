/* Unit tests of the log-linear histogram: buckets, percentiles, merge. */
#include <stdint.h>
#include <stdlib.h>

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
	TAP_OK(h.count == 32 && h.sum == 496 && h.min == 0 && h.max == 31, "count, sum, min, max");
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
	int same = a.count == all.count && a.sum == all.sum && a.min == all.min && a.max == all.max;
	for (unsigned i = 0; i < HISTOGRAM_BUCKETS; i++)
		same &= a.buckets[i] == all.buckets[i];
	TAP_OK(same, "merge of two halves equals one histogram of everything");
	struct histogram empty;
	histogram_init(&empty);
	histogram_merge(&a, &empty);
	TAP_OK(a.count == all.count && a.min == all.min, "merging an empty histogram changes nothing");

	/* Values beyond the last bucket land in it; max stays true. */
	histogram_init(&h);
	histogram_record(&h, 1ull << 50);
	histogram_record(&h, 5);
	TAP_OK(h.max == 1ull << 50 && histogram_percentile(&h, 100) == 1ull << 50 && h.buckets[HISTOGRAM_BUCKETS - 1] == 1,
	       "a value beyond 2^40 goes to the last bucket, max keeps it");
	TAP_OK(histogram_percentile(&h, 50) == 5, "p50 of {5, 2^50} is 5");
	return tap_done();
}
