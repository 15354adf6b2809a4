/* workload_util.c - helpers every workload uses (see workload.h;
 * workload_touch_page is inline there). */
#include "clock.h"
#include "workload.h"

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
