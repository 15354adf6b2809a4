/* zipf.h - zipfian ranks by the method of Gray et al. ("Quickly generating
 * billion-record synthetic databases", SIGMOD 1994), as YCSB's
 * ZipfianGenerator uses it.
 *
 * Rank 0 is the most popular item; P(rank = i) is proportional to
 * 1 / (i + 1)^theta over n items. The method is exact for ranks 0 and 1 and
 * follows the continuous approximation of the CDF beyond, at O(1) per draw
 * after computing zeta(n, theta) once.
 */
#ifndef MSHARE_BENCH_ZIPF_H
#define MSHARE_BENCH_ZIPF_H

#include <math.h>
#include <stdint.h>

#include "rng.h"

struct zipf {
	uint64_t n;
	double theta;
	double alpha;     /* 1 / (1 - theta) */
	double zetan;     /* zeta(n, theta) */
	double eta;
	double rank1_cut; /* 1 + 0.5^theta: below it (in units of zetan), rank 1 */
};

/* theta in (0, 1), n >= 1. Returns 0, or -1 for values outside those ranges. */
int zipf_init(struct zipf *z, uint64_t n, double theta);

/* A rank in [0, n). */
static inline uint64_t zipf_next(const struct zipf *z, struct rng *r)
{
	double u = rng_unit(r);
	double uz = u * z->zetan;

	if (uz < 1.0 || z->n == 1)
		return 0;
	if (uz < z->rank1_cut)
		return 1;
	uint64_t rank = (uint64_t)((double)z->n * pow(z->eta * u - z->eta + 1.0, z->alpha));
	return rank < z->n ? rank : z->n - 1;
}

/* zeta(n, theta) = sum over i = 1..n of 1 / i^theta. The last few results
 * are cached: a parent that computes it before forking spares every worker
 * the O(n) sum. */
double zipf_zeta(uint64_t n, double theta);

/* Exact zipfian probability mass of the `top` most popular ranks out of n. */
double zipf_top_mass(uint64_t top, uint64_t n, double theta);

#endif
