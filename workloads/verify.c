/* verify.c - check that the region is really shared between workers.
 *
 * Worker 0 writes a pattern into the first word of every page, then
 * publishes a flag in the last word of the region (release store). Every
 * other worker waits for the flag (acquire load), then checks the
 * pattern page by page and counts mismatches. The data written by one
 * process must be what another reads, whatever the backend.
 */
#include <stdio.h>
#include <time.h>

#include "clock.h"
#include "workload.h"

#define VERIFY_FLAG 0x6d73686172656421ull /* "mshared!" */
#define VERIFY_WAIT_NS (120ull * 1000000000ull)

enum { C_PAGES_WRITTEN, C_PAGES_CHECKED, C_MISMATCHES };

static uint64_t pattern(size_t page_index)
{
	return 0x9e3779b97f4a7c15ull * (page_index + 1);
}

static int verify_run(struct workload_ctx *ctx, char *err, size_t err_len)
{
	char *base = ctx->base;
	size_t pages = ctx->size / ctx->page_bytes;
	uint64_t *flag = (uint64_t *)(base + ctx->size - sizeof(uint64_t));

	if (ctx->worker == 0) {
		for (size_t i = 0; i < pages; i++) {
			volatile uint64_t *word = (volatile uint64_t *)(base + i * ctx->page_bytes);
			uint64_t t0 = clock_now_ns();
			*word = pattern(i);
			histogram_record(&ctx->slot->fault_ns, clock_now_ns() - t0);
			ctx->slot->pages_touched++;
		}
		ctx->slot->counters[C_PAGES_WRITTEN] = pages;
		__atomic_store_n(flag, VERIFY_FLAG, __ATOMIC_RELEASE);
		return 0;
	}
	uint64_t start = clock_now_ns();
	while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) != VERIFY_FLAG) {
		if (clock_now_ns() - start > VERIFY_WAIT_NS) {
			snprintf(err, err_len, "worker 0's flag never appeared within %llu s",
				 (unsigned long long)(VERIFY_WAIT_NS / 1000000000ull));
			return -1;
		}
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, NULL);
	}
	for (size_t i = 0; i < pages; i++) {
		volatile uint64_t *word = (volatile uint64_t *)(base + i * ctx->page_bytes);
		uint64_t t0 = clock_now_ns();
		uint64_t v = *word;
		histogram_record(&ctx->slot->fault_ns, clock_now_ns() - t0);
		ctx->slot->pages_touched++;
		ctx->slot->counters[C_PAGES_CHECKED]++;
		if (v != pattern(i))
			ctx->slot->counters[C_MISMATCHES]++;
	}
	return 0;
}

/* --reuse-path: the flag an earlier run left in the file would let the
 * checkers read that run's pattern before worker 0 wrote this one's:
 * reset it (the region is the run's to write). */
static int verify_check_region(void *base, size_t size, const void *config, char *err, size_t err_len)
{
	(void)config;
	(void)err;
	(void)err_len;
	__atomic_store_n((uint64_t *)((char *)base + size - sizeof(uint64_t)), 0, __ATOMIC_RELEASE);
	return 0;
}

const struct workload_ops workload_verify = {
	.touches_whole_region = true,
	.name = "verify",
	.description = "worker 0 writes a pattern, every other worker checks it: proves the region is shared",
	.counter_names = { "pages_written", "pages_checked", "mismatches", NULL },
	.check_region = verify_check_region,
	.run = verify_run,
};
