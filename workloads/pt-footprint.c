/* pt-footprint.c - touch one page per 2 MiB of the region.
 *
 * One touch per PMD entry's range allocates every PTE page of the region
 * with 512x fewer faults than touching every 4 KiB page: the cheapest way
 * to build the full page-table footprint. With pages of 2 MiB or more, one
 * touch per page.
 */
#include "workload.h"

#define PT_FOOTPRINT_STRIDE (2u << 20)

static int pt_footprint_run(struct workload_ctx *ctx)
{
	char *base = ctx->base;
	size_t stride = ctx->page_bytes > PT_FOOTPRINT_STRIDE ? ctx->page_bytes : PT_FOOTPRINT_STRIDE;

	for (size_t off = 0; off < ctx->size; off += stride)
		workload_touch_page(ctx, base + off);
	return 0;
}

const struct workload_ops workload_pt_footprint = {
	.name = "pt-footprint",
	.description = "touch one page per 2 MiB: allocates every page-table page with 512x fewer faults",
	.run = pt_footprint_run,
};
