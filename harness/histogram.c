/* histogram.c - fixed log-linear histogram (see histogram.h).
 *
 * Bucket index: values < SUB_BUCKETS map to themselves. Otherwise, with
 * msb = floor(log2(v)), the value lies in the power-of-two range
 * [2^msb, 2^(msb+1)), split into SUB_BUCKETS equal parts of width
 * 2^(msb-SUB_BITS).
 */
#include <string.h>

#include "histogram.h"

void histogram_init(struct histogram *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

static unsigned bucket_of(uint64_t v)
{
	if (v < HISTOGRAM_SUB_BUCKETS)
		return (unsigned)v;
	unsigned msb = 63u - (unsigned)__builtin_clzll(v);
	if (msb >= HISTOGRAM_MAX_BITS)
		return HISTOGRAM_BUCKETS - 1;
	unsigned shift = msb - HISTOGRAM_SUB_BITS;
	unsigned sub = (unsigned)(v >> shift) - HISTOGRAM_SUB_BUCKETS;
	return (msb - HISTOGRAM_SUB_BITS + 1) * HISTOGRAM_SUB_BUCKETS + sub;
}

/* Largest value that falls into bucket b. */
static uint64_t bucket_upper(unsigned b)
{
	if (b < HISTOGRAM_SUB_BUCKETS)
		return b;
	unsigned group = b / HISTOGRAM_SUB_BUCKETS; /* >= 1 */
	unsigned sub = b % HISTOGRAM_SUB_BUCKETS;
	unsigned shift = group - 1;
	uint64_t lower = (uint64_t)(HISTOGRAM_SUB_BUCKETS + sub) << shift;
	return lower + (1ull << shift) - 1;
}

void histogram_record(struct histogram *h, uint64_t value)
{
	h->count++;
	h->sum += value;
	if (value < h->min)
		h->min = value;
	if (value > h->max)
		h->max = value;
	h->buckets[bucket_of(value)]++;
}

void histogram_merge(struct histogram *into, const struct histogram *from)
{
	if (!from->count)
		return;
	into->count += from->count;
	into->sum += from->sum;
	if (from->min < into->min)
		into->min = from->min;
	if (from->max > into->max)
		into->max = from->max;
	for (unsigned i = 0; i < HISTOGRAM_BUCKETS; i++)
		into->buckets[i] += from->buckets[i];
}

uint64_t histogram_percentile(const struct histogram *h, double pct)
{
	if (!h->count)
		return 0;
	if (pct <= 0)
		return h->min;
	if (pct >= 100)
		return h->max;
	/* Smallest rank r (1-based) with r >= pct% of count. */
	double want = pct / 100.0 * (double)h->count;
	uint64_t rank = (uint64_t)want;
	if ((double)rank < want)
		rank++;
	if (rank == 0)
		rank = 1;
	uint64_t seen = 0;
	for (unsigned b = 0; b < HISTOGRAM_BUCKETS; b++) {
		seen += h->buckets[b];
		if (seen >= rank) {
			uint64_t v = bucket_upper(b);
			if (v > h->max)
				v = h->max;
			if (v < h->min)
				v = h->min;
			return v;
		}
	}
	return h->max;
}

double histogram_mean(const struct histogram *h)
{
	return h->count ? (double)h->sum / (double)h->count : 0.0;
}
