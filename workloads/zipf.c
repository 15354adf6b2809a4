/* zipf.c - set-up of the zipfian generator (the draw is inline in zipf.h). */
#include <math.h>

#include "zipf.h"

#define ZETA_CACHE 8

struct zeta_entry {
	uint64_t n;
	double theta;
	double value;
};

/* Per process; filled in the parent before fork, inherited by workers. */
static struct zeta_entry zeta_cache[ZETA_CACHE];
static unsigned zeta_next_slot;

static double zeta_sum(uint64_t n, double theta)
{
	double sum = 0.0;

	/* Smallest terms first: less rounding error for large n. */
	for (uint64_t i = n; i >= 1; i--)
		sum += pow((double)i, -theta);
	return sum;
}

double zipf_zeta(uint64_t n, double theta)
{
	if (n <= 2)
		return zeta_sum(n, theta);
	for (unsigned i = 0; i < ZETA_CACHE; i++)
		if (zeta_cache[i].n == n && zeta_cache[i].theta == theta)
			return zeta_cache[i].value;
	double value = zeta_sum(n, theta);
	struct zeta_entry *e = &zeta_cache[zeta_next_slot++ % ZETA_CACHE];
	e->n = n;
	e->theta = theta;
	e->value = value;
	return value;
}

int zipf_init(struct zipf *z, uint64_t n, double theta)
{
	if (n < 1 || !(theta > 0.0 && theta < 1.0))
		return -1;
	z->n = n;
	z->theta = theta;
	z->alpha = 1.0 / (1.0 - theta);
	z->zetan = zipf_zeta(n, theta);
	z->rank1_cut = 1.0 + pow(0.5, theta);
	if (n < 3) { /* every draw is rank 0 or 1; eta would be 0/0 */
		z->eta = 0.0;
		return 0;
	}
	double zeta2 = zipf_zeta(2, theta);
	z->eta = (1.0 - pow(2.0 / (double)n, 1.0 - theta)) / (1.0 - zeta2 / z->zetan);
	return 0;
}

double zipf_top_mass(uint64_t top, uint64_t n, double theta)
{
	if (top >= n)
		return 1.0;
	return zeta_sum(top, theta) / zipf_zeta(n, theta);
}
