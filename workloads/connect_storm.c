/* connect_storm.c - dedicated-server connections coming and going.
 *
 * Each worker is a listener that spawns one short session after another,
 * as a database with a dedicated server process per connection does: a
 * connection maps the shared region (the backend's attach, as a new
 * backend process attaches the SGA or shared buffers), touches its working
 * set (--working-set bytes, rounded up to whole pages, scattered over the
 * region and distinct), and unmaps it (detach) as the session ends. Every
 * page of the working set is therefore a first touch, a real page fault,
 * timed into the fault-latency histogram. With page tables shared across
 * processes, attach and first touch should cost far less.
 *
 * The harness attaches the worker before run() and detaches it after; so
 * that every counted connection is a full attach/touch/detach cycle, run()
 * first detaches (not counted) and re-attaches at the end (not counted).
 * One operation is one connection; its latency is attach + touch + detach.
 */
#include <stdio.h>

#include "clock.h"
#include "json.h"
#include "param.h"
#include "rng.h"
#include "workload.h"

enum { P_WORKING_SET };
enum { PH_ATTACH, PH_FIRST_TOUCH, PH_DETACH };
enum {
	C_CONNECTIONS, C_ATTACHES, C_DETACHES, C_ATTACH_NS, C_TOUCH_NS, C_DETACH_NS,
	C_WORKING_SET_PAGES,
};

static int connect_storm_prepare(const union workload_value *values, const char *const *text, size_t region_size,
				 void *config, char *err, size_t err_len)
{
	*(uint64_t *)config = values[P_WORKING_SET].u;
	return param_range("working-set", text[P_WORKING_SET], values[P_WORKING_SET].u, 1, region_size, " bytes",
			   err, err_len);
}

static int connect_storm_run(struct workload_ctx *ctx, char *err, size_t err_len)
{
	struct workload_slot *slot = ctx->slot;
	uint64_t *c = slot->counters;
	uint64_t ws = *(const uint64_t *)ctx->config;
	struct rng rng;

	rng_seed(&rng, ctx->seed);
	size_t page = ctx->page_bytes ? ctx->page_bytes : 4096;
	uint64_t npages = ctx->size / page;
	uint64_t wpages = (ws + page - 1) / page;
	if (wpages > npages)
		wpages = npages;

	if (ctx->detach(ctx, err, err_len) < 0)
		return -1;
	uint64_t conns = 0;
	uint64_t start = clock_now_ns();
	while (!workload_budget_done(ctx, start, conns)) {
		/* Distinct scattered pages: first + k * step (mod npages), step
		 * coprime with npages. */
		uint64_t first = rng_below(&rng, npages);
		uint64_t step = npages > 1 ? 1 + rng_below(&rng, npages - 1) : 1;
		while (workload_gcd(step, npages) != 1)
			step++;

		uint64_t t0 = clock_now_ns();
		if (ctx->attach(ctx, err, err_len) < 0)
			return -1; /* the backend says why (anon: shared only through fork) */
		c[C_ATTACHES]++;
		uint64_t t1 = clock_now_ns();
		volatile char *base = ctx->base; /* the region may have moved */
		for (uint64_t k = 0, p = first; k < wpages; k++, p = (p + step) % npages)
			workload_touch_page(ctx, base + p * page);
		uint64_t t2 = clock_now_ns();
		if (ctx->detach(ctx, err, err_len) < 0)
			return -1;
		c[C_DETACHES]++;
		uint64_t t3 = clock_now_ns();

		histogram_record(&slot->phase_ns[PH_ATTACH], t1 - t0);
		histogram_record(&slot->phase_ns[PH_FIRST_TOUCH], t2 - t1);
		histogram_record(&slot->phase_ns[PH_DETACH], t3 - t2);
		c[C_ATTACH_NS] += t1 - t0;
		c[C_TOUCH_NS] += t2 - t1;
		c[C_DETACH_NS] += t3 - t2;
		c[C_WORKING_SET_PAGES] += wpages;
		histogram_record(&slot->op_ns, t3 - t0);
		conns++;
		c[C_CONNECTIONS] = conns;
		slot->ops = conns;
	}
	/* Leave the worker attached, as the harness expects. */
	if (ctx->attach(ctx, err, err_len) < 0)
		return -1;
	return 0;
}

static void connect_storm_report(struct json_writer *json, const struct workload_slot *merged,
				 const void *config, unsigned workers, double wall_s)
{
	const uint64_t *c = merged->counters;
	uint64_t n = c[C_CONNECTIONS];

	(void)config;
	(void)workers;
	json_key_double(json, "working_set_pages_per_connection", workload_per(c[C_WORKING_SET_PAGES], n));
	json_key_double(json, "connections_per_s", workload_rate(n, wall_s));
	json_key_bool(json, "attach_detach_balanced", c[C_ATTACHES] == c[C_DETACHES]);
	json_key_double(json, "attach_mean_ns", workload_per(c[C_ATTACH_NS], n));
	json_key_double(json, "first_touch_mean_ns", workload_per(c[C_TOUCH_NS], n));
	json_key_double(json, "first_touch_per_page_mean_ns",
			workload_per(c[C_TOUCH_NS], c[C_WORKING_SET_PAGES]));
	json_key_double(json, "detach_mean_ns", workload_per(c[C_DETACH_NS], n));
}

const struct workload_ops workload_connect_storm = {
	.has_budget = true,
	.name = "connect-storm",
	.description = "sessions that attach, touch a small working set and detach, over and over",
	.params = {
		{ .name = "working-set", .type = WP_SIZE, .min = 1, .max = UINT64_MAX, .default_value = "1M",
		  .help = "bytes each connection touches (whole pages, scattered)" },
	},
	.counter_names = { "connections", "attaches", "detaches", "attach_ns", "touch_ns",
			   "detach_ns", "working_set_pages", NULL },
	.phase_names = { "attach", "first_touch", "detach", NULL },
	.phase_meaning = "per connection: attach = the backend's attach (mshare: open and read "
			 "/sys/fs/mshare/NAME, close, mshare() as consumer; the others: open the "
			 "backing again through /proc/self/fd and mmap it), first_touch = reading "
			 "(--write: writing) every working-set page once, detach = the backend's "
			 "detach (mshare: mshare_unlink; the others: munmap and close)",
	.config_bytes = sizeof(uint64_t),
	.prepare = connect_storm_prepare,
	.run = connect_storm_run,
	.report = connect_storm_report,
};
