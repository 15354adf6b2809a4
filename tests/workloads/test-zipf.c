/* test-zipf.c - the workloads' block-choice generators are what they claim.
 *
 * TAP output. Fixed seeds, so every figure is reproducible; tolerances are
 * statistical (several standard errors), never timing.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "block_choice.h"
#include "workload.h"
#include "rng.h"
#include "zipf.h"
#include "../lib/tap.h"

static uint64_t *zipf_counts(uint64_t n, double theta, uint64_t draws, uint64_t seed)
{
	struct zipf z;
	struct rng r;
	uint64_t *count = calloc(n, sizeof(*count));

	if (!count || zipf_init(&z, n, theta) < 0)
		abort();
	rng_seed(&r, seed);
	for (uint64_t i = 0; i < draws; i++)
		count[zipf_next(&z, &r)]++;
	return count;
}

/* Least-squares slope of log(frequency) against log(rank + 1) over ranks
 * [lo, hi): a zipfian with skew theta has slope -theta. */
static double rank_frequency_slope(const uint64_t *count, uint64_t lo, uint64_t hi)
{
	double sx = 0, sy = 0, sxx = 0, sxy = 0, m = 0;

	for (uint64_t i = lo; i < hi; i++) {
		if (!count[i])
			continue;
		double x = log((double)(i + 1)), y = log((double)count[i]);
		sx += x;
		sy += y;
		sxx += x * x;
		sxy += x * y;
		m++;
	}
	return (m * sxy - sx * sy) / (m * sxx - sx * sx);
}

/* Pearson chi-square of counts in `buckets` equal groups of [0, n) against
 * a uniform distribution. */
static double chi_square_uniform(const uint64_t *count, uint64_t n, unsigned buckets, uint64_t draws)
{
	double chi = 0, expected = (double)draws / buckets;

	for (unsigned b = 0; b < buckets; b++) {
		uint64_t sum = 0;
		for (uint64_t i = n * b / buckets; i < n * (b + 1) / buckets; i++)
			sum += count[i];
		chi += ((double)sum - expected) * ((double)sum - expected) / expected;
	}
	return chi;
}

/* 99.9th percentile of chi-square with 99 degrees of freedom. */
#define CHI2_99_P999 148.23

static void test_reproducible(void)
{
	struct zipf z;
	struct rng a, b, c;
	bool same = true, differs = false, in_range = true;

	zipf_init(&z, 100000, 0.99);
	rng_seed(&a, 7);
	rng_seed(&b, 7);
	rng_seed(&c, 8);
	for (int i = 0; i < 10000; i++) {
		uint64_t x = zipf_next(&z, &a), y = zipf_next(&z, &b), w = zipf_next(&z, &c);
		same &= x == y;
		differs |= x != w;
		in_range &= x < 100000 && w < 100000;
	}
	TAP_OK(same, "zipf: the same seed gives the same sequence");
	TAP_OK(differs, "zipf: another seed gives another sequence");
	TAP_OK(in_range, "zipf: every rank is in [0, n)");
}

static void test_zipf_shape(uint64_t n, double theta)
{
	const uint64_t draws = 4000000;
	uint64_t *count = zipf_counts(n, theta, draws, 42);
	double zetan = zipf_zeta(n, theta);

	/* Gray et al.'s method is exact for the two most popular ranks. */
	for (uint64_t r = 0; r < 2; r++) {
		double p = pow((double)(r + 1), -theta) / zetan;
		double se = sqrt(p * (1 - p) / draws), f = (double)count[r] / draws;
		TAP_OK(fabs(f - p) < 5 * se, "zipf n=%lu theta=%.2f: P(rank %lu) = %.5f, exact %.5f",
		   (unsigned long)n, theta, (unsigned long)r, f, p);
	}
	double slope = rank_frequency_slope(count, 10, 1000);
	TAP_OK(fabs(slope + theta) < 0.05,
	   "zipf n=%lu theta=%.2f: rank-frequency slope over ranks 10..999 is %.3f (want -theta +- 0.05)",
	   (unsigned long)n, theta, slope);
	uint64_t top = (n + 99) / 100, hits = 0;
	for (uint64_t i = 0; i < top; i++)
		hits += count[i];
	double share = (double)hits / draws, exact = zipf_top_mass(top, n, theta);
	TAP_OK(fabs(share - exact) < 0.03,
	   "zipf n=%lu theta=%.2f: hottest 1%% of ranks get %.4f of draws, exact zipf %.4f",
	   (unsigned long)n, theta, share, exact);
	double chi = chi_square_uniform(count, n, 100, draws);
	TAP_OK(chi > 100 * CHI2_99_P999,
	   "zipf n=%lu theta=%.2f: far from uniform (chi-square %.0f over 100 groups)",
	   (unsigned long)n, theta, chi);
	free(count);
}

static void test_uniform(void)
{
	const uint64_t n = 100000, draws = 4000000;
	uint64_t *count = calloc(n, sizeof(*count));
	struct rng r;

	rng_seed(&r, 42);
	for (uint64_t i = 0; i < draws; i++)
		count[rng_below(&r, n)]++;
	double chi = chi_square_uniform(count, n, 100, draws);
	TAP_OK(chi < CHI2_99_P999, "uniform: chi-square %.1f over 100 groups, below %.1f (p = 0.001)",
	   chi, CHI2_99_P999);
	double slope = rank_frequency_slope(count, 10, 1000);
	TAP_OK(fabs(slope) < 0.05, "uniform: rank-frequency slope %.3f is flat", slope);
	free(count);
}

static void test_scramble_permutation(uint64_t n)
{
	struct block_choice_config cfg = {
		.distribution = BLOCK_DIST_UNIFORM, .theta = 0.99, .block_size = 8192,
		.scramble = true, .nblocks = n,
	};
	struct block_chooser ch;
	unsigned char *seen = calloc(n, 1);
	bool bijective = true;

	block_chooser_init(&ch, &cfg, 1);
	for (uint64_t r = 0; r < n; r++) {
		uint64_t b = (uint64_t)(((unsigned __int128)r * ch.multiplier) % n);
		if (seen[b]++)
			bijective = false;
	}
	TAP_OK(bijective, "scramble: rank -> block is a permutation of %lu blocks (multiplier %lu)",
	   (unsigned long)n, (unsigned long)ch.multiplier);
	free(seen);
}

/* The four block-choice params through the harness's own path: typed
 * parse (workload_prepare) then block_choice_prepare, as a run does. */
static int chooser_prepare(const union workload_value *v, const char *const *text, size_t region_size, void *config,
			   char *err, size_t err_len)
{
	return block_choice_prepare(v, text, region_size, config, err, err_len);
}

static const struct workload_ops chooser_ops = {
	.name = "test-chooser",
	.params = { BLOCK_CHOICE_PARAMS },
	.config_bytes = sizeof(struct block_choice_config),
	.prepare = chooser_prepare,
};

static int block_choice_parse(const char *const *text, size_t region_size, struct block_choice_config *cfg,
			      char *err, size_t err_len)
{
	union workload_value v[WORKLOAD_MAX_PARAMS];

	return workload_prepare(&chooser_ops, text, region_size, v, cfg, err, err_len);
}

static void test_chooser_uses_zipf(void)
{
	const char *values[] = { "zipf", "0.99", "8K", "on" };
	struct block_choice_config cfg;
	struct block_chooser ch;
	char err[256];
	uint64_t hot = 0, draws = 200000;

	TAP_OK(block_choice_parse(values, 64u << 20, &cfg, err, sizeof(err)) == 0 && cfg.nblocks == 8192,
	   "block chooser: 64 MiB of 8 KiB blocks is 8192 blocks");
	block_chooser_init(&ch, &cfg, 3);
	for (uint64_t i = 0; i < draws; i++) {
		uint64_t rank, block = block_choose(&ch, &rank);
		hot += rank < ch.hot1_ranks && block < cfg.nblocks;
	}
	double exact = block_choice_expected_share(&cfg, ch.hot1_ranks);
	TAP_OK(fabs((double)hot / draws - exact) < 0.03,
	   "block chooser: hottest 1%% share %.4f, exact %.4f", (double)hot / draws, exact);

	const char *bad[][4] = {
		{ "zipfian", "0.99", "8K", "on" }, { "zipf", "1", "8K", "on" },
		{ "zipf", "0", "8K", "on" },       { "zipf", "x", "8K", "on" },
		{ "zipf", "0.5", "3K", "on" },     { "zipf", "0.5", "8K", "maybe" },
		{ "zipf", "0.5", "64M", "on" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = block_choice_parse(bad[i], 64u << 20, &cfg, err, sizeof(err));
		bool names = strstr(err, bad[i][0]) || strstr(err, bad[i][1]) ||
			     strstr(err, bad[i][2]) || strstr(err, bad[i][3]);
		TAP_OK(rc < 0 && names, "block chooser rejects %s/%s/%s/%s: %s", bad[i][0], bad[i][1],
		   bad[i][2], bad[i][3], err);
	}
}

int main(void)
{
	test_reproducible();
	test_zipf_shape(100000, 0.99);
	test_zipf_shape(100000, 0.5);
	test_zipf_shape(8192, 0.99);
	test_uniform();
	test_scramble_permutation(8192);
	test_scramble_permutation(1000003);
	test_scramble_permutation(1000);
	test_chooser_uses_zipf();
	return tap_done();
}
