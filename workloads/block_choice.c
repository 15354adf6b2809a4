/* block_choice.c - parsing and set-up of the block chooser. */
#include <stdio.h>

#include "block_choice.h"
#include "json.h"
#include "workload.h"

const char *const block_distribution_names[] = { "zipf", "uniform", NULL };
const char *const block_scramble_names[] = { "off", "on", NULL };

int block_choice_prepare(const union workload_value *values, const char *const *text, size_t region_size,
			 struct block_choice_config *cfg, char *err, size_t err_len)
{
	cfg->distribution = (enum block_distribution)values[0].choice;
	cfg->theta = values[1].d;
	cfg->block_size = values[2].u;
	if (cfg->block_size & (cfg->block_size - 1)) {
		snprintf(err, err_len, "--block-size: '%s' is not a power of two", text[2]);
		return -1;
	}
	cfg->scramble = values[3].choice == 1;
	cfg->nblocks = region_size / cfg->block_size;
	if (cfg->nblocks < 2) {
		snprintf(err, err_len, "--block-size: '%s' leaves fewer than 2 blocks in a %zu-byte region",
			 text[2], region_size);
		return -1;
	}
	/* Computed here, in the parent, so that forked workers find it cached. */
	if (cfg->distribution == BLOCK_DIST_ZIPF)
		(void)zipf_zeta(cfg->nblocks, cfg->theta);
	return 0;
}

void block_chooser_init(struct block_chooser *c, const struct block_choice_config *cfg,
			uint64_t seed)
{
	uint64_t n = cfg->nblocks;

	c->cfg = *cfg;
	rng_seed(&c->rng, seed);
	if (cfg->distribution == BLOCK_DIST_ZIPF)
		zipf_init(&c->zipf, n, cfg->theta);
	/* n / golden ratio, nudged to be coprime with n so that the map is a
	 * permutation; consecutive ranks land far apart. */
	uint64_t m = (uint64_t)((double)n * 0.6180339887498949);
	if (m == 0)
		m = 1;
	while (workload_gcd(m, n) != 1)
		m++;
	c->multiplier = m % n ? m % n : 1;
	c->hot1_ranks = (n + 99) / 100;
	c->hot10_ranks = (n + 9) / 10;
}

double block_choice_expected_share(const struct block_choice_config *cfg, uint64_t top)
{
	if (top >= cfg->nblocks)
		return 1.0;
	if (cfg->distribution == BLOCK_DIST_UNIFORM)
		return (double)top / (double)cfg->nblocks;
	return zipf_top_mass(top, cfg->nblocks, cfg->theta);
}

void block_choice_report(struct json_writer *json, const struct block_choice_config *cfg, uint64_t ops,
			 uint64_t hot1_ops, uint64_t hot10_ops)
{
	json_key_u64(json, "block_size_bytes", cfg->block_size);
	json_key_u64(json, "blocks", cfg->nblocks);
	uint64_t hot1 = (cfg->nblocks + 99) / 100, hot10 = (cfg->nblocks + 9) / 10;
	double n = ops ? (double)ops : 1.0;
	json_key_double(json, "hot1_share", (double)hot1_ops / n);
	json_key_double(json, "hot1_share_model", block_choice_expected_share(cfg, hot1));
	json_key_double(json, "hot10_share", (double)hot10_ops / n);
	json_key_double(json, "hot10_share_model", block_choice_expected_share(cfg, hot10));
}
