/* first_touch.h - which pages of the region this worker has touched.
 *
 * Workloads that pick blocks at random fault pages in as they go, the way
 * a database process does. To feed the harness's fault-latency histogram
 * with first touches only, each worker keeps one bit per backend page
 * (region_size / page_bytes / 8 bytes of private memory: 32 KiB per GiB of
 * 4 KiB pages, 64 B per GiB of 2 MiB pages) and times a page through
 * workload_touch_page() the first time it is accessed.
 */
#ifndef MSHARE_BENCH_FIRST_TOUCH_H
#define MSHARE_BENCH_FIRST_TOUCH_H

#include <stddef.h>
#include <stdint.h>

#include "workload.h"

struct first_touch {
	uint64_t *bits;
	size_t npages;
	size_t page_bytes;
};

/* 0, or -1 when the bitmap cannot be allocated. */
int first_touch_init(struct first_touch *t, const struct workload_ctx *ctx);
void first_touch_free(struct first_touch *t);

/* Call before accessing region bytes [off, off + len): every page of that
 * range not touched yet is touched (timed) now. */
static inline void first_touch_range(struct first_touch *t, struct workload_ctx *ctx,
				     size_t off, size_t len)
{
	size_t first = off / t->page_bytes, last = (off + len - 1) / t->page_bytes;

	for (size_t pg = first; pg <= last && pg < t->npages; pg++) {
		uint64_t mask = 1ull << (pg & 63);
		if (!(t->bits[pg >> 6] & mask)) {
			t->bits[pg >> 6] |= mask;
			workload_touch_page(ctx, (volatile char *)ctx->base + pg * t->page_bytes);
		}
	}
}

#endif
