/* touch.c - first-touch every page of the region, in order.
 *
 * Every worker touches every page, so each worker builds its own page
 * tables for the whole region (unless the backend shares them). Reads by
 * default, writes with --write.
 */
#include "workload.h"

static int touch_run(struct workload_ctx *ctx, char *err, size_t err_len)
{
	(void)err;
	(void)err_len;
	char *base = ctx->base;

	for (size_t off = 0; off < ctx->size; off += ctx->page_bytes)
		workload_touch_page(ctx, base + off);
	return 0;
}

const struct workload_ops workload_touch = {
	.touches_whole_region = true,
	.name = "touch",
	.description = "first-touch every page of the region (read, or write with --write)",
	.run = touch_run,
};
