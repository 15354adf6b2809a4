/* first_touch.c - the per-worker touched-page bitmap. */
#include <stdlib.h>

#include "first_touch.h"

int first_touch_init(struct first_touch *t, const struct workload_ctx *ctx)
{
	t->page_bytes = ctx->page_bytes ? ctx->page_bytes : 4096;
	t->npages = (ctx->size + t->page_bytes - 1) / t->page_bytes;
	/* calloc of a large bitmap is mmap'd zero pages: only the parts a
	 * worker actually uses cost memory. */
	t->bits = calloc((t->npages + 63) / 64, sizeof(uint64_t));
	return t->bits ? 0 : -1;
}

void first_touch_free(struct first_touch *t)
{
	free(t->bits);
	t->bits = NULL;
}
