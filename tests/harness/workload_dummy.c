/* workload_dummy.c - a workload of the test build only: its file here and
 * its one line in harness/workloads.c (under MSHARE_BENCH_TEST_WORKLOAD)
 * are all it takes for it to appear in --help, `workloads --json`, run
 * --check, sweep validation, a real sweep and side-by-side
 * (tests/harness/dummy-backend.sh). It touches every page once, then its
 * operations each read one byte --stride bytes after the last, timed as
 * the one phase "poke". */
#include <stdio.h>

#include "clock.h"
#include "json.h"
#include "workload.h"

enum { P_STRIDE };
enum { C_POKES };

static int dummy_prepare(const union workload_value *values, const char *const *text, size_t region_size,
			 void *config, char *err, size_t err_len)
{
	(void)text;
	if (values[P_STRIDE].u >= region_size) {
		snprintf(err, err_len, "--stride %llu is not below the region size %zu",
			 (unsigned long long)values[P_STRIDE].u, region_size);
		return -1;
	}
	*(uint64_t *)config = values[P_STRIDE].u;
	return 0;
}

static int dummy_run(struct workload_ctx *ctx, char *err, size_t err_len)
{
	const uint64_t stride = *(const uint64_t *)ctx->config;
	volatile char *base = ctx->base;
	uint64_t ops = 0, off = 0, start;

	(void)err;
	(void)err_len;
	for (size_t p = 0; p < ctx->size; p += ctx->page_bytes)
		workload_touch_page(ctx, base + p);
	start = clock_now_ns();
	while (!workload_budget_done(ctx, start, ops)) {
		uint64_t t0 = clock_now_ns();
		(void)base[off];
		uint64_t t1 = clock_now_ns();
		histogram_record(&ctx->slot->phase_ns[0], t1 - t0);
		histogram_record(&ctx->slot->op_ns, t1 - t0);
		off = (off + stride) % ctx->size;
		ops++;
	}
	ctx->slot->ops = ops;
	ctx->slot->bytes = ops;
	ctx->slot->counters[C_POKES] = ops;
	return 0;
}

static void dummy_report(struct json_writer *json, const struct workload_slot *merged, const void *config,
			 unsigned workers, double wall_s)
{
	(void)workers;
	json_key_u64(json, "stride_bytes", *(const uint64_t *)config);
	json_key_double(json, "pokes_per_s", workload_rate(merged->counters[C_POKES], wall_s));
}

const struct workload_ops workload_dummy = {
	.name = "dummy-poke",
	.description = "test-build-only workload: one byte read per operation, --stride bytes apart",
	.params = { { .name = "stride", .type = WP_SIZE, .min = 1, .max = UINT64_MAX, .default_value = "4K",
		      .help = "bytes between two reads" } },
	.counter_names = { "pokes", NULL },
	.phase_names = { "poke", NULL },
	.phase_meaning = "poke: the read of one byte",
	.config_bytes = sizeof(uint64_t),
	.prepare = dummy_prepare,
	.run = dummy_run,
	.report = dummy_report,
};
