/* workload_dummy.c - a workload of the test build only: its file here and
 * its one line in cli/workloads.c (under MSHARE_BENCH_TEST_WORKLOAD)
 * are all it takes for it to appear in --help, `workloads --json`, run
 * --check, sweep validation, a real sweep and side-by-side
 * (tests/harness/dummy-backend.sh). It touches every page once, then its
 * operations each read one byte --stride bytes after the last, timed as
 * the one phase "poke". With --hold-and-die on, worker 0 takes a
 * latch word at the start of the region and dies of SIGSEGV holding it;
 * the others wait for that latch for ever (tests/harness/crashed-worker.sh:
 * the run must kill them, not hang). */
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "clock.h"
#include "json.h"
#include "workload.h"

enum { P_STRIDE, P_DIE_HOLDING_LATCH };
struct dummy_config {
	uint64_t stride;
	unsigned die_holding_latch;
};
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
	struct dummy_config *c = config;
	c->stride = values[P_STRIDE].u;
	c->die_holding_latch = values[P_DIE_HOLDING_LATCH].choice;
	return 0;
}

static int dummy_run(struct workload_ctx *ctx, char *err, size_t err_len)
{
	const struct dummy_config *c = ctx->config;
	const uint64_t stride = c->stride;
	volatile char *base = ctx->base;
	uint64_t ops = 0, off = 0, start;

	(void)err;
	(void)err_len;
	for (size_t p = 0; p < ctx->size; p += ctx->page_bytes)
		workload_touch_page(ctx, base + p);
	if (c->die_holding_latch) {
		uint32_t *latch = (uint32_t *)ctx->base;
		if (ctx->worker == 0) {
			__atomic_store_n(latch, 1, __ATOMIC_RELEASE);
			raise(SIGSEGV);
		}
		while (__atomic_load_n(latch, __ATOMIC_ACQUIRE) != 1)
			sched_yield(); /* until worker 0 holds it */
		while (__atomic_load_n(latch, __ATOMIC_ACQUIRE) == 1)
			sched_yield(); /* for ever: its holder is dead */
	}
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
	json_key_u64(json, "stride_bytes", ((const struct dummy_config *)config)->stride);
	json_key_double(json, "pokes_per_s", workload_rate(merged->counters[C_POKES], wall_s));
}

static const char *const onoff[] = { "off", "on", NULL };

const struct workload_ops workload_dummy = {
	.has_budget = true,
	.name = "dummy-poke",
	.description = "test-build-only workload: one byte read per operation, --stride bytes apart",
	.params = { { .name = "stride", .type = WP_SIZE, .min = 1, .max = UINT64_MAX, .default_value = "4K",
		      .help = "bytes between two reads" },
		    { .name = "hold-and-die", .type = WP_CHOICE, .choices = onoff, .default_value = "off",
		      .help = "on: worker 0 dies (SIGSEGV) holding a latch the others wait for" } },
	.counter_names = { "pokes", NULL },
	.phase_names = { "poke", NULL },
	.phase_meaning = "poke: the read of one byte",
	.config_bytes = sizeof(struct dummy_config),
	.prepare = dummy_prepare,
	.run = dummy_run,
	.report = dummy_report,
};
