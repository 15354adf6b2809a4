/* sga_read.c - buffer-cache lookups in a database's shared global area.
 *
 * Models the dominant access of an OLTP database's foreground processes:
 * reading a block of the buffer cache that lives in shared memory. The
 * region is an array of --block-size blocks; each operation picks one by
 * popularity (zipfian --theta, or uniform) and reads it whole, folding it
 * into a checksum as a row search or a block check would. The first access
 * to each page is a real page fault in this process, timed separately
 * (fault latency) and included in that operation's latency, as a session
 * would feel it.
 */
#include <stdio.h>

#include "block_choice.h"
#include "checksum.h"
#include "clock.h"
#include "first_touch.h"
#include "json.h"
#include "workload.h"

enum { C_HOT1_OPS, C_HOT10_OPS, C_BLOCKS };

static int sga_read_prepare(const union workload_value *values, const char *const *text, size_t region_size,
			    void *config, char *err, size_t err_len)
{
	return block_choice_prepare(values, text, region_size, config, err, err_len);
}

static int sga_read_run(struct workload_ctx *ctx, char *err, size_t err_len)
{
	const struct block_choice_config cfg = *(const struct block_choice_config *)ctx->config;
	struct block_chooser chooser;
	struct first_touch touched;
	struct workload_slot *slot = ctx->slot;

	if (first_touch_init(&touched, ctx) < 0) {
		snprintf(err, err_len, "cannot allocate the touched-page bitmap");
		return -1;
	}
	block_chooser_init(&chooser, &cfg, ctx->seed);

	const char *base = ctx->base;
	uint64_t ops = 0, hot1 = 0, hot10 = 0, sink = 0;
	uint64_t start = clock_now_ns();

	while (!workload_budget_done(ctx, start, ops)) {
		uint64_t rank, block = block_choose(&chooser, &rank);
		size_t off = block * cfg.block_size;
		uint64_t t0 = clock_now_ns();

		first_touch_range(&touched, ctx, off, cfg.block_size);
		sink += checksum64(base + off, cfg.block_size, 0);
		histogram_record(&slot->op_ns, clock_now_ns() - t0);
		ops++;
		hot1 += rank < chooser.hot1_ranks;
		hot10 += rank < chooser.hot10_ranks;
	}
	slot->ops = ops;
	slot->bytes = ops * cfg.block_size;
	slot->counters[C_HOT1_OPS] = hot1;
	slot->counters[C_HOT10_OPS] = hot10;
	/* One worker reports the block count, so that the sum is the count. */
	slot->counters[C_BLOCKS] = ctx->worker == 0 ? cfg.nblocks : 0;
	/* Keep the reads: the checksum feeds nothing else. */
	__asm__ volatile("" : : "r"(sink));
	first_touch_free(&touched);
	return 0;
}

static void sga_read_report(struct json_writer *json, const struct workload_slot *merged,
			    const void *config, unsigned workers, double wall_s)
{
	(void)workers;
	block_choice_report(json, config, merged->ops, merged->counters[C_HOT1_OPS], merged->counters[C_HOT10_OPS]);
	json_key_double(json, "read_bytes_per_s", workload_rate(merged->bytes, wall_s));
}

const struct workload_ops workload_sga_read = {
	.has_budget = true,
	.name = "sga-read",
	.description = "buffer-cache block reads, zipfian or uniform popularity (read-only)",
	.params = { BLOCK_CHOICE_PARAMS },
	.counter_names = { "hot1_ops", "hot10_ops", "blocks", NULL },
	.config_bytes = sizeof(struct block_choice_config),
	.prepare = sga_read_prepare,
	.run = sga_read_run,
	.report = sga_read_report,
};
