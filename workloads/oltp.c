/* oltp.c - OLTP on a buffer cache in shared (possibly persistent) memory.
 *
 * The same block choice as sga-read (zipfian or uniform over --block-size
 * blocks) with a read/write mix: --write-pct of the operations update one
 * row (--row-size bytes) of the block. Each block starts with a 64-byte
 * header holding its latch and its checksum:
 *
 *   - a write takes the block latch (the header's version word goes odd,
 *     as a buffer latch or seqlock would), updates the row, recomputes the
 *     block checksum (seeded with block number and new version, so a torn,
 *     stale or misplaced block fails), makes row and header durable
 *     (pmem_persist when the backend maps DAX MAP_SYNC, msync(MS_SYNC) of
 *     the touched pages otherwise: workloads/persist.h) and releases the latch (version even again);
 *   - a read takes no latch: it reads the version, reads and checksums the
 *     whole block, and retries if the version moved meanwhile. A block
 *     written at least once is then validated against its stored checksum;
 *     a valid block last written by another worker counts as
 *     verified_foreign, evidence that the write was visible, after its
 *     persistence, to another process through this backend.
 */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "block_choice.h"
#include "checksum.h"
#include "clock.h"
#include "first_touch.h"
#include "json.h"
#include "param.h"
#include "persist.h"
#include "workload.h"

enum {
	P_WRITE_PCT = BLOCK_CHOICE_NPARAMS,
	P_ROW_SIZE,
};

enum {
	C_READS, C_WRITES, C_WRITE_NS, C_PERSISTS, C_PERSIST_NS, C_VERIFIED_FOREIGN,
	C_VERIFIED_OWN, C_CHECKSUM_FAILURES, C_LATCH_WAITS, C_READ_RETRIES,
	C_PERSIST_PMEM_WORKERS, C_PERSIST_MSYNC_WORKERS, C_HOT1_OPS, C_HOT10_OPS, C_BLOCKS,
};

struct block_header {
	_Atomic uint64_t version; /* odd: latched by a writer; writes = version / 2 */
	uint64_t writer;          /* last writer's worker index + 1; 0: never written */
	uint64_t checksum;        /* of the block after the header */
	uint64_t pad[5];
};

#define HEADER_BYTES sizeof(struct block_header)
#define SPINS_BEFORE_YIELD 64
/* A latch held this long has a holder that is stopped or gone: the
 * worker gives up with an error naming the block instead of spinning. */
#define LATCH_WAIT_LIMIT_NS (60ull * 1000000000ull)

struct oltp_config {
	struct block_choice_config blocks;
	uint64_t write_pct;
	uint64_t row_size;
	uint64_t rows_per_block;
};

static int oltp_prepare(const union workload_value *values, const char *const *text, size_t region_size,
			void *config, char *err, size_t err_len)
{
	struct oltp_config *c = config;

	if (block_choice_prepare(values, text, region_size, &c->blocks, err, err_len) < 0)
		return -1;
	c->write_pct = values[P_WRITE_PCT].u;
	c->row_size = values[P_ROW_SIZE].u;
	if (param_range("row-size", text[P_ROW_SIZE], c->row_size, 8, c->blocks.block_size - HEADER_BYTES, " bytes",
			err, err_len) < 0)
		return -1;
	if (c->row_size % 8) {
		snprintf(err, err_len, "--row-size: '%s' is not a multiple of 8 bytes", text[P_ROW_SIZE]);
		return -1;
	}
	c->rows_per_block = (c->blocks.block_size - HEADER_BYTES) / c->row_size;
	return 0;
}

static uint64_t block_seed(uint64_t block, uint64_t version)
{
	return block * 0x9e3779b97f4a7c15ull ^ version;
}

struct oltp_worker {
	struct workload_ctx *ctx;
	struct oltp_config cfg;
	struct block_chooser chooser;
	struct persist persist;
	uint64_t counters[WORKLOAD_MAX_COUNTERS];
	uint64_t row[1u << 17]; /* new row image, up to 1 MiB */
};

static inline struct block_header *block_at(struct oltp_worker *w, uint64_t block)
{
	return (struct block_header *)((char *)w->ctx->base + block * w->cfg.blocks.block_size);
}

/* Spin (then yield) while block's latch is held; -1 with the reason in
 * err[] after LATCH_WAIT_LIMIT_NS. */
static int latch_wait(struct oltp_worker *w, uint64_t block, unsigned *spins, uint64_t *since, uint64_t v,
		      char *err, size_t err_len)
{
	if ((*spins)++ == 0) {
		w->counters[C_LATCH_WAITS]++;
		*since = clock_now_ns();
	}
	if (*spins % SPINS_BEFORE_YIELD == 0) {
		sched_yield();
		if (clock_now_ns() - *since > LATCH_WAIT_LIMIT_NS) {
			snprintf(err, err_len, "block %llu's latch still held after %llu s (version %llu): its "
					       "holder is stopped or gone",
				 (unsigned long long)block, LATCH_WAIT_LIMIT_NS / 1000000000ull,
				 (unsigned long long)v);
			return -1;
		}
	}
	return 0;
}

static int oltp_write(struct oltp_worker *w, uint64_t block, char *err, size_t err_len)
{
	struct block_header *h = block_at(w, block);
	size_t payload = w->cfg.blocks.block_size - HEADER_BYTES;
	unsigned spins = 0;
	uint64_t v, since = 0;

	for (;;) {
		v = atomic_load_explicit(&h->version, memory_order_relaxed);
		if (!(v & 1) && atomic_compare_exchange_weak_explicit(
					&h->version, &v, v + 1, memory_order_acquire,
					memory_order_relaxed))
			break;
		if (latch_wait(w, block, &spins, &since, v, err, err_len) < 0)
			return -1;
	}
	atomic_thread_fence(memory_order_release);

	uint64_t row_index = rng_below(&w->chooser.rng, w->cfg.rows_per_block);
	char *row = (char *)h + HEADER_BYTES + row_index * w->cfg.row_size;
	for (size_t i = 0; i < w->cfg.row_size / 8; i++)
		w->row[i] = rng_next(&w->chooser.rng);
	memcpy(row, w->row, w->cfg.row_size);
	h->writer = w->ctx->worker + 1;
	h->checksum = checksum64((char *)h + HEADER_BYTES, payload, block_seed(block, v + 2));

	uint64_t t0 = clock_now_ns();
	int rc = persist_range(&w->persist, row, w->cfg.row_size);
	if (rc == 0)
		rc = persist_range(&w->persist, h, HEADER_BYTES);
	w->counters[C_PERSIST_NS] += clock_now_ns() - t0;
	w->counters[C_PERSISTS]++;
	atomic_store_explicit(&h->version, v + 2, memory_order_release);
	if (rc < 0) {
		snprintf(err, err_len, "persisting block %llu: msync: %s", (unsigned long long)block, strerror(errno));
		return -1;
	}
	w->counters[C_WRITES]++;
	return 0;
}

static int oltp_read(struct oltp_worker *w, uint64_t block, char *err, size_t err_len)
{
	struct block_header *h = block_at(w, block);
	size_t payload = w->cfg.blocks.block_size - HEADER_BYTES;
	unsigned spins = 0;
	uint64_t since = 0;

	for (;;) {
		uint64_t v1 = atomic_load_explicit(&h->version, memory_order_acquire);
		if (v1 & 1) {
			/* Counted as a wait only by writers, as before. */
			uint64_t waits = w->counters[C_LATCH_WAITS];
			int rc = latch_wait(w, block, &spins, &since, v1, err, err_len);
			w->counters[C_LATCH_WAITS] = waits;
			if (rc < 0)
				return -1;
			continue;
		}
		uint64_t writer = h->writer, stored = h->checksum;
		uint64_t sum = checksum64((char *)h + HEADER_BYTES, payload, block_seed(block, v1));
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&h->version, memory_order_relaxed) != v1) {
			w->counters[C_READ_RETRIES]++;
			continue;
		}
		if (v1 != 0) {
			if (sum != stored)
				w->counters[C_CHECKSUM_FAILURES]++;
			else if (writer != w->ctx->worker + 1)
				w->counters[C_VERIFIED_FOREIGN]++;
			else
				w->counters[C_VERIFIED_OWN]++;
		}
		break;
	}
	w->counters[C_READS]++;
	return 0;
}

static int oltp_run(struct workload_ctx *ctx, char *err, size_t err_len)
{
	/* One per worker process, on the heap: the row buffer is large, and
	 * in bss it would sit in the address space of every run's workers. */
	struct oltp_worker *w = malloc(sizeof(*w));
	struct first_touch touched;

	if (!w) {
		snprintf(err, err_len, "cannot allocate the worker's state (%zu bytes)", sizeof(*w));
		return -1;
	}
	memset(w, 0, offsetof(struct oltp_worker, row));
	w->ctx = ctx;
	w->cfg = *(const struct oltp_config *)ctx->config;
	if (first_touch_init(&touched, ctx) < 0) {
		snprintf(err, err_len, "cannot allocate the touched-page bitmap");
		free(w);
		return -1;
	}
	block_chooser_init(&w->chooser, &w->cfg.blocks, ctx->seed);
	if (persist_init(&w->persist, ctx, err, err_len) < 0) {
		first_touch_free(&touched);
		free(w);
		return -1;
	}

	struct workload_slot *slot = ctx->slot;
	/* First touches read, even with --write: a byte stored into a block
	 * header would take its latch. The workload's writes are its own. */
	struct workload_ctx touch_ctx = *ctx;
	touch_ctx.write = false;
	uint64_t ops = 0;
	int rc = 0;
	uint64_t start = clock_now_ns();

	while (!workload_budget_done(ctx, start, ops)) {
		uint64_t rank, block = block_choose(&w->chooser, &rank);
		bool write = rng_below(&w->chooser.rng, 100) < w->cfg.write_pct;
		uint64_t t0 = clock_now_ns();

		first_touch_range(&touched, &touch_ctx, block * w->cfg.blocks.block_size,
				  w->cfg.blocks.block_size);
		if (write) {
			if (oltp_write(w, block, err, err_len) < 0) {
				rc = -1;
				break;
			}
		} else if (oltp_read(w, block, err, err_len) < 0) {
			rc = -1;
			break;
		}
		uint64_t ns = clock_now_ns() - t0;
		histogram_record(&slot->op_ns, ns);
		if (write)
			w->counters[C_WRITE_NS] += ns;
		ops++;
		w->counters[C_HOT1_OPS] += rank < w->chooser.hot1_ranks;
		w->counters[C_HOT10_OPS] += rank < w->chooser.hot10_ranks;
	}
	w->counters[C_PERSIST_PMEM_WORKERS] = w->persist.pmem != NULL;
	w->counters[C_PERSIST_MSYNC_WORKERS] = w->persist.pmem == NULL;
	w->counters[C_BLOCKS] = ctx->worker == 0 ? w->cfg.blocks.nblocks : 0;
	slot->ops = ops;
	slot->bytes = w->counters[C_READS] * w->cfg.blocks.block_size +
		      w->counters[C_WRITES] * w->cfg.row_size;
	memcpy(slot->counters, w->counters, sizeof(w->counters));
	first_touch_free(&touched);
	free(w);
	return rc;
}

/* --reuse-path: a block latched in the file (version odd) was left so by a
 * writer that died holding it; every run would wait on it for ever. */
static int oltp_check_region(void *base, size_t size, const void *config, char *err, size_t err_len)
{
	const struct oltp_config *c = config;

	for (uint64_t b = 0; b < c->blocks.nblocks && (b + 1) * c->blocks.block_size <= size; b++) {
		const struct block_header *h = (const void *)((const char *)base + b * c->blocks.block_size);
		uint64_t v = atomic_load_explicit(&h->version, memory_order_relaxed);
		if (v & 1) {
			snprintf(err, err_len, "oltp block %llu (offset %llu) is latched (version %llu), left by a "
					       "run killed mid-write; use a new file",
				 (unsigned long long)b, (unsigned long long)(b * c->blocks.block_size),
				 (unsigned long long)v);
			return -1;
		}
	}
	return 0;
}

static void oltp_report(struct json_writer *json, const struct workload_slot *merged,
			const void *config, unsigned workers, double wall_s)
{
	const struct oltp_config *cfg = config;
	const uint64_t *c = merged->counters;

	(void)workers;
	block_choice_report(json, &cfg->blocks, merged->ops, c[C_HOT1_OPS], c[C_HOT10_OPS]);
	json_key_string(json, "persist_path", persist_merged_path(c[C_PERSIST_PMEM_WORKERS], c[C_PERSIST_MSYNC_WORKERS]));
	json_key_double(json, "persist_mean_ns", workload_per(c[C_PERSIST_NS], c[C_PERSISTS]));
	json_key_double(json, "write_mean_ns", workload_per(c[C_WRITE_NS], c[C_WRITES]));
	json_key_double(json, "writes_per_s", workload_rate(c[C_WRITES], wall_s));
	json_key_double(json, "write_share", workload_per(c[C_WRITES], merged->ops));
}

const struct workload_ops workload_oltp = {
	.has_budget = true,
	.name = "oltp",
	.description = "buffer-cache reads and durable row updates with latches and block checksums",
	.params = {
		BLOCK_CHOICE_PARAMS,
		{ .name = "write-pct", .type = WP_UINT, .min = 0, .max = 100, .default_value = "20",
		  .help = "percentage of operations that update a row (0-100)" },
		{ .name = "row-size", .type = WP_SIZE, .min = 8, .max = 1u << 20, .default_value = "128",
		  .help = "bytes updated per write, a multiple of 8" },
	},
	.counter_names = {
		"reads", "writes", "write_ns", "persists", "persist_ns", "verified_foreign",
		"verified_own", "checksum_failures", "latch_waits", "read_retries",
		"persist_pmem_workers", "persist_msync_workers", "hot1_ops", "hot10_ops", "blocks",
		NULL,
	},
	.persists = true,
	.config_bytes = sizeof(struct oltp_config),
	.prepare = oltp_prepare,
	.check_region = oltp_check_region,
	.run = oltp_run,
	.report = oltp_report,
};
