/* block_choice.h - which buffer-cache block a session accesses next.
 *
 * The region is an array of fixed-size blocks (--block-size, 8 KiB as in
 * most databases). A block is chosen by popularity rank: zipfian with
 * skew --theta (Gray et al.) or uniform (--distribution). With --scramble on
 * (the default), rank r maps to block (r * a) mod n, a a fixed
 * multiplier near n / golden ratio and coprime with n: the hot blocks are
 * the same for every worker but spread over the region, as hot rows are
 * spread over a real table, instead of packed into its first pages.
 */
#ifndef MSHARE_BENCH_BLOCK_CHOICE_H
#define MSHARE_BENCH_BLOCK_CHOICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rng.h"
#include "zipf.h"

enum block_distribution { BLOCK_DIST_ZIPF = 0, BLOCK_DIST_UNIFORM = 1 };

/* The four params, in this order, shared by every workload that chooses
 * blocks; BLOCK_CHOICE_NPARAMS entries. */
extern const char *const block_distribution_names[]; /* "zipf", "uniform" */
extern const char *const block_scramble_names[];     /* "off", "on" */
#define BLOCK_CHOICE_PARAMS \
	{ .name = "distribution", .type = WP_CHOICE, .choices = block_distribution_names, \
	  .default_value = "zipf", .help = "block popularity: zipf (skewed, Gray et al.) or uniform" }, \
	{ .name = "theta", .type = WP_REAL, .lo = 0.0, .hi = 1.0, .default_value = "0.99", \
	  .help = "zipfian skew, 0 < theta < 1 (YCSB uses 0.99)" }, \
	{ .name = "block-size", .type = WP_SIZE, .min = 512, .max = 1u << 20, .default_value = "8K", \
	  .help = "database block size, a power of two, 512 bytes to 1 MiB" }, \
	{ .name = "scramble", .type = WP_CHOICE, .choices = block_scramble_names, .default_value = "on", \
	  .help = "on: hot blocks spread over the region; off: rank r is block r" }
#define BLOCK_CHOICE_NPARAMS 4

struct block_choice_config {
	enum block_distribution distribution;
	double theta;
	uint64_t block_size;
	bool scramble;
	uint64_t nblocks;
};

/* The config of the four params (values[0..3], as given in text[0..3]) for a
 * region of region_size bytes; in the parent, once. */
union workload_value;
int block_choice_prepare(const union workload_value *values, const char *const *text, size_t region_size,
			 struct block_choice_config *cfg, char *err, size_t err_len);

struct block_chooser {
	struct block_choice_config cfg;
	struct zipf zipf;
	struct rng rng;
	uint64_t multiplier;   /* scramble: rank -> block */
	uint64_t hot1_ranks;   /* ceil(n / 100): the hottest 1% */
	uint64_t hot10_ranks;  /* ceil(n / 10) */
};

void block_chooser_init(struct block_chooser *c, const struct block_choice_config *cfg,
			uint64_t seed);

/* Block index in [0, nblocks); *rank gets its popularity rank. */
static inline uint64_t block_choose(struct block_chooser *c, uint64_t *rank)
{
	uint64_t n = c->cfg.nblocks;
	uint64_t r = c->cfg.distribution == BLOCK_DIST_ZIPF ? zipf_next(&c->zipf, &c->rng)
							     : rng_below(&c->rng, n);
	*rank = r;
	if (!c->cfg.scramble)
		return r;
	return (uint64_t)(((unsigned __int128)r * c->multiplier) % n);
}

/* Expected share of accesses to the hottest `top` ranks: exact for both
 * distributions (a model figure, for comparison with the measured one). */
double block_choice_expected_share(const struct block_choice_config *cfg, uint64_t top);

struct json_writer;
/* Write the block size and count and
 * how skewed the accesses came out: the measured share of operations on the
 * hottest 1% and 10% of blocks next to the exact expectation for the
 * distribution (labelled _model). ops is the number of block choices. */
void block_choice_report(struct json_writer *json, const struct block_choice_config *cfg, uint64_t ops,
			 uint64_t hot1_ops, uint64_t hot10_ops);

#endif
