/* histogram.h - fixed log-linear latency histogram.
 *
 * Fixed size and no pointers so that one lives in each worker's slot of the
 * shared results area and the parent can merge them without copying.
 * Values below HISTOGRAM_SUB_BUCKETS are exact; above, each power of two is
 * split into HISTOGRAM_SUB_BUCKETS linear buckets (relative error < 1/32).
 * Values beyond the last bucket land in it; max keeps the true maximum.
 */
#ifndef MSHARE_BENCH_HISTOGRAM_H
#define MSHARE_BENCH_HISTOGRAM_H

#include <stdint.h>

#define HISTOGRAM_SUB_BITS 5
#define HISTOGRAM_SUB_BUCKETS (1u << HISTOGRAM_SUB_BITS)
#define HISTOGRAM_MAX_BITS 40 /* 2^40 ns = 18 minutes */
#define HISTOGRAM_BUCKETS \
	(HISTOGRAM_SUB_BUCKETS * (HISTOGRAM_MAX_BITS - HISTOGRAM_SUB_BITS + 1))

/* How many values, their sum, least and greatest: the part of every
 * latency summary here that merges by adding (an empty one has min
 * UINT64_MAX: tally_init). */
struct tally {
	uint64_t count, sum, min, max;
};

static inline void tally_init(struct tally *t)
{
	*t = (struct tally){ .min = UINT64_MAX };
}

static inline void tally_add(struct tally *t, uint64_t value)
{
	t->count++;
	t->sum += value;
	if (value < t->min)
		t->min = value;
	if (value > t->max)
		t->max = value;
}

static inline void tally_merge(struct tally *into, const struct tally *from)
{
	if (!from->count)
		return;
	into->count += from->count;
	into->sum += from->sum;
	if (from->min < into->min)
		into->min = from->min;
	if (from->max > into->max)
		into->max = from->max;
}

struct histogram {
	struct tally t;
	uint32_t buckets[HISTOGRAM_BUCKETS];
};

/* Bucket of v in a log-linear layout of 2^sub_bits buckets per power of two
 * up to 2^max_bits (the fault-cost histograms use a finer one than this
 * struct: harness/fault_cost.h). Values < 2^sub_bits are their own bucket. */
static inline unsigned histogram_bucket_of(uint64_t v, unsigned sub_bits, unsigned max_bits)
{
	unsigned sub_buckets = 1u << sub_bits;
	if (v < sub_buckets)
		return (unsigned)v;
	unsigned msb = 63u - (unsigned)__builtin_clzll(v);
	if (msb >= max_bits)
		return sub_buckets * (max_bits - sub_bits + 1) - 1;
	unsigned shift = msb - sub_bits;
	unsigned sub = (unsigned)(v >> shift) - sub_buckets;
	return (msb - sub_bits + 1) * sub_buckets + sub;
}
/* Largest value that falls into bucket b of that layout. */
uint64_t histogram_bucket_upper(unsigned b, unsigned sub_bits);
/* Nearest rank: the smallest rank r (1-based, at least 1) with r >= pct%
 * of count samples. Every percentile in the harness is taken at this rank. */
uint64_t histogram_nearest_rank(uint64_t count, double pct);

/* The percentile pct over n bucket counts (count_at(buckets, i) reads
 * bucket i) of that layout holding count samples between min and max:
 * the upper edge of the bucket that holds the rank, clamped to [min, max]. */
uint64_t histogram_percentile_of(uint64_t (*count_at)(const void *buckets, unsigned i), const void *buckets,
				 unsigned n, unsigned sub_bits, uint64_t count, uint64_t min, uint64_t max,
				 double pct);

void histogram_init(struct histogram *h);
void histogram_record(struct histogram *h, uint64_t value);
void histogram_merge(struct histogram *into, const struct histogram *from);
/* pct in [0,100]; returns a value v such that at least pct% of samples are <= v
 * (the upper edge of the bucket, clamped to max). 0 for an empty histogram. */
uint64_t histogram_percentile(const struct histogram *h, double pct);
double histogram_mean(const struct histogram *h);

#endif
