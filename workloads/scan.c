/* scan.c - sequential full scans of a table, parallel-query style.
 *
 * The region is one table of --block-size blocks. A parallel query splits
 * it into granules (--granule bytes, block ranges as Oracle's PX granules
 * or PostgreSQL's parallel seq scan chunks) dealt round-robin to the --dop
 * workers of a query (0: all workers form one query; 1: every worker scans
 * the whole table by itself). Each worker reads its granules in address
 * order, one block every --stride bytes (stride = block size: a full scan;
 * larger: a sampling scan that skips), checksumming each block it reads,
 * and starts over when its share is done. One operation is one block.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "checksum.h"
#include "clock.h"
#include "first_touch.h"
#include "json.h"
#include "param.h"
#include "workload.h"

enum { P_BLOCK_SIZE, P_STRIDE, P_GRANULE, P_DOP };
enum { C_PASSES, C_IDLE_WORKERS };

struct scan_config {
	uint64_t block_size, stride, granule, dop;
};

static int scan_prepare(const union workload_value *values, const char *const *text, size_t region_size,
			void *config, char *err, size_t err_len)
{
	struct scan_config *c = config;

	c->block_size = values[P_BLOCK_SIZE].u;
	if (param_range("block-size", text[P_BLOCK_SIZE], c->block_size, 64, region_size, " bytes", err, err_len) < 0)
		return -1;
	if (c->block_size % 8) {
		snprintf(err, err_len, "--block-size: '%s' is not a multiple of 8 bytes", text[P_BLOCK_SIZE]);
		return -1;
	}
	c->stride = values[P_STRIDE].u ? values[P_STRIDE].u : c->block_size;
	if (values[P_STRIDE].u &&
	    param_range("stride", text[P_STRIDE], c->stride, c->block_size, region_size, " bytes", err, err_len) < 0)
		return -1;
	c->granule = values[P_GRANULE].u;
	if (param_range("granule", text[P_GRANULE], c->granule, c->block_size, region_size, " bytes", err, err_len) < 0)
		return -1;
	c->dop = values[P_DOP].u;
	return 0;
}

static int scan_run(struct workload_ctx *ctx, char *err, size_t err_len)
{
	const struct scan_config c = *(const struct scan_config *)ctx->config;
	struct first_touch touched;
	struct workload_slot *slot = ctx->slot;

	uint64_t dop = c.dop == 0 || c.dop > ctx->workers ? ctx->workers : c.dop;
	uint64_t rank = ctx->worker % dop;
	uint64_t granules = (ctx->size + c.granule - 1) / c.granule;
	if (rank >= granules) { /* more query workers than granules: nothing to scan */
		slot->counters[C_IDLE_WORKERS] = 1;
		return 0;
	}
	if (first_touch_init(&touched, ctx) < 0) {
		snprintf(err, err_len, "cannot allocate the touched-page bitmap");
		return -1;
	}

	const char *base = ctx->base;
	uint64_t ops = 0, passes = 0, sink = 0, blocks_this_pass = 0;
	uint64_t start = clock_now_ns();
	uint64_t g = rank, pos = 0;
	bool in_granule = false;

	while (!workload_budget_done(ctx, start, ops)) {
		if (!in_granule) {
			/* First block position at or after this granule's start. */
			pos = (g * c.granule + c.stride - 1) / c.stride * c.stride;
			in_granule = true;
		}
		uint64_t end = (g + 1) * c.granule;
		if (pos >= end || pos + c.block_size > ctx->size) {
			in_granule = false;
			g += dop;
			if (g >= granules) {
				g = rank;
				passes++;
				if (blocks_this_pass == 0) /* stride leaves this worker nothing */
					break;
				blocks_this_pass = 0;
			}
			continue;
		}
		uint64_t t0 = clock_now_ns();
		first_touch_range(&touched, ctx, pos, c.block_size);
		sink += checksum64(base + pos, c.block_size, 0);
		histogram_record(&slot->op_ns, clock_now_ns() - t0);
		ops++;
		blocks_this_pass++;
		pos += c.stride;
	}
	slot->ops = ops;
	slot->bytes = ops * c.block_size;
	slot->counters[C_PASSES] = passes;
	if (ops == 0)
		slot->counters[C_IDLE_WORKERS] = 1;
	__asm__ volatile("" : : "r"(sink));
	first_touch_free(&touched);
	return 0;
}

static void scan_report(struct json_writer *json, const struct workload_slot *merged, const void *config,
			unsigned workers, double wall_s)
{
	const struct scan_config *c = config;

	json_key_u64(json, "block_size_bytes", c->block_size);
	json_key_u64(json, "stride_bytes", c->stride);
	json_key_u64(json, "granule_bytes", c->granule);
	json_key_u64(json, "dop", c->dop == 0 || c->dop > workers ? workers : c->dop);
	json_key_double(json, "scan_bytes_per_s", workload_rate(merged->bytes, wall_s));
	json_key_double(json, "blocks_per_s", workload_rate(merged->ops, wall_s));
}

const struct workload_ops workload_scan = {
	.has_budget = true,
	.name = "scan",
	.description = "sequential full-table scans split into granules among parallel-query workers",
	.params = {
		{ .name = "block-size", .type = WP_SIZE, .min = 64, .max = UINT64_MAX, .default_value = "8K",
		  .help = "bytes read per block (one operation), a multiple of 8" },
		{ .name = "stride", .type = WP_SIZE, .min = 0, .max = UINT64_MAX, .default_value = "0",
		  .help = "distance between blocks read, >= block size (0: the block size, a full scan)" },
		{ .name = "granule", .type = WP_SIZE, .min = 1, .max = UINT64_MAX, .default_value = "1M",
		  .help = "bytes of table per parallel-query granule" },
		{ .name = "dop", .type = WP_UINT, .min = 0, .max = 1000000, .default_value = "0",
		  .help = "workers per parallel query (0: all workers, 1: each scans the whole table)" },
	},
	.counter_names = { "passes", "idle_workers", NULL },
	.config_bytes = sizeof(struct scan_config),
	.prepare = scan_prepare,
	.run = scan_run,
	.report = scan_report,
};
