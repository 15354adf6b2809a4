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
	tally_init(&h->t);
}

uint64_t histogram_bucket_upper(unsigned b, unsigned sub_bits)
{
	unsigned sub_buckets = 1u << sub_bits;
	if (b < sub_buckets)
		return b;
	unsigned group = b / sub_buckets; /* >= 1 */
	unsigned sub = b % sub_buckets;
	unsigned shift = group - 1;
	uint64_t lower = (uint64_t)(sub_buckets + sub) << shift;
	return lower + (1ull << shift) - 1;
}

void histogram_record(struct histogram *h, uint64_t value)
{
	tally_add(&h->t, value);
	h->buckets[histogram_bucket_of(value, HISTOGRAM_SUB_BITS, HISTOGRAM_MAX_BITS)]++;
}

void histogram_merge(struct histogram *into, const struct histogram *from)
{
	if (!from->t.count)
		return;
	tally_merge(&into->t, &from->t);
	for (unsigned i = 0; i < HISTOGRAM_BUCKETS; i++)
		into->buckets[i] += from->buckets[i];
}

uint64_t histogram_nearest_rank(uint64_t count, double pct)
{
	double want = pct / 100.0 * (double)count;
	uint64_t rank = (uint64_t)want;

	if ((double)rank < want)
		rank++;
	return rank ? rank : 1;
}

uint64_t histogram_percentile_of(uint64_t (*count_at)(const void *buckets, unsigned i), const void *buckets,
				 unsigned n, unsigned sub_bits, uint64_t count, uint64_t min, uint64_t max,
				 double pct)
{
	if (!count)
		return 0;
	if (pct <= 0)
		return min;
	if (pct >= 100)
		return max;
	uint64_t rank = histogram_nearest_rank(count, pct);
	uint64_t seen = 0;
	for (unsigned b = 0; b < n; b++) {
		seen += count_at(buckets, b);
		if (seen >= rank) {
			uint64_t v = histogram_bucket_upper(b, sub_bits);
			if (v > max)
				v = max;
			if (v < min)
				v = min;
			return v;
		}
	}
	return max;
}

static uint64_t count_u32(const void *buckets, unsigned i)
{
	return ((const uint32_t *)buckets)[i];
}

uint64_t histogram_percentile(const struct histogram *h, double pct)
{
	return histogram_percentile_of(count_u32, h->buckets, HISTOGRAM_BUCKETS, HISTOGRAM_SUB_BITS, h->t.count,
				       h->t.min, h->t.max, pct);
}

double histogram_mean(const struct histogram *h)
{
	return h->t.count ? (double)h->t.sum / (double)h->t.count : 0.0;
}
