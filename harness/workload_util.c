/* workload_util.c - helpers every workload uses (see workload.h). */
#include "clock.h"
#include "workload.h"

void workload_touch_page(struct workload_ctx *ctx, volatile char *p)
{
	uint64_t t0 = clock_now_ns();
	/* Keep the access between the two clock reads. */
	__asm__ __volatile__("" ::: "memory");
	if (ctx->write)
		*p = 1;
	else
		(void)*p;
	__asm__ __volatile__("" ::: "memory");
	uint64_t t1 = clock_now_ns();

	histogram_record(&ctx->slot->fault_ns, t1 - t0);
	ctx->slot->pages_touched++;
}

bool workload_budget_done(const struct workload_ctx *ctx, uint64_t start_ns, uint64_t ops)
{
	if (!ctx->max_ops && !ctx->duration_ns)
		return true;
	if (ctx->max_ops && ops >= ctx->max_ops)
		return true;
	if (ctx->duration_ns && clock_now_ns() - start_ns >= ctx->duration_ns)
		return true;
	return false;
}
