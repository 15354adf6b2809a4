/* redo.c - a redo log (write-ahead log) in the shared region.
 *
 * The first 4 KiB hold the log's control words; the rest (or --log-size
 * bytes of it) is a circular log of fixed-size records (--record-size).
 * Workers 0 .. --writers-1 are sessions committing transactions: each
 * reserves the next log position with one atomic add (as PostgreSQL's WAL
 * insertion reserves space, or Oracle's redo allocation latch), waits if
 * the slot's previous occupant (one lap earlier) is still being written
 * ("log buffer space"), copies the record in and makes it durable
 * (pmem_memcpy_persist when the backend maps DAX MAP_SYNC, memcpy +
 * msync(MS_SYNC) otherwise: workloads/persist.h), then sets and persists the record's commit marker (its end
 * LSN), written last so that a record is valid only once complete.
 *
 * The other workers read the log as log shippers or change-capture
 * processes do: each follows the log from its start, sleeping on a futex
 * when it has caught up, and validates every record: commit marker, LSN,
 * writer, a per-writer sequence number that must grow, and a checksum of
 * the whole record. A reader that falls a lap behind skips ahead and
 * counts an overrun rather than reading torn data.
 *
 * One operation is one appended record; its latency is the commit latency
 * (reserve, space wait, durable copy, marker). persist_ns is the time spent
 * making records durable (the durable copy plus the marker's persist).
 */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checksum.h"
#include "clock.h"
#include "first_touch.h"
#include "futex.h"
#include "json.h"
#include "param.h"
#include "persist.h"
#include "rng.h"
#include "workload.h"

enum { P_WRITERS, P_RECORD_SIZE, P_LOG_SIZE };
enum {
	C_RECORDS_WRITTEN, C_BYTES_WRITTEN, C_PERSIST_NS, C_RECORDS_READ, C_BYTES_READ,
	C_RECORDS_VERIFIED, C_CHECKSUM_FAILURES, C_SEQUENCE_ERRORS, C_OVERRUNS,
	C_SPACE_WAITS, C_PERSIST_PMEM_WORKERS, C_PERSIST_MSYNC_WORKERS,
	/* The persist-latency tail (the op histogram holds commit latency). */
	C_PERSIST_OVER_10US, C_PERSIST_OVER_100US, C_PERSIST_OVER_1MS,
};

#define CONTROL_BYTES 4096u
#define MAX_WRITERS 1024u
/* Sleeping readers are woken at most once a millisecond, as a log writer wakes
 * its waiters once per flush rather than once per record: waking dozens of
 * readers after every commit would spend the CPU on wake-ups. A sleeping
 * reader also looks again after 2 ms on its own. */
#define READER_WAKE_INTERVAL_NS 1000000ull
#define READER_SLEEP_NS 2000000ull
/* A record slot whose previous occupant is not complete after this long
 * will not be: its writer is stopped or gone. The writer gives up. */
#define SPACE_WAIT_LIMIT_NS (60ull * 1000000000ull)

struct redo_control {
	_Atomic uint64_t reserve_lsn; /* next free log position (bytes since the start) */
	char pad0[56];
	_Atomic uint32_t wake;        /* futex word: bumped after each commit */
	_Atomic uint32_t sleepers;    /* readers waiting on it */
	char pad1[56];
	_Atomic uint32_t writers_done;
	_Atomic uint64_t last_wake_ns; /* CLOCK_MONOTONIC of the last wake-up */
};

struct redo_record {
	_Atomic uint64_t end_lsn; /* commit marker: lsn + length once complete */
	uint64_t lsn;
	uint32_t writer;
	uint32_t length;
	uint64_t seq;            /* per writer: 1, 2, 3, ... */
	uint64_t checksum;       /* of the payload, seeded with the fields above */
	uint64_t pad[3];
};

struct redo_config {
	uint64_t writers, record_size, log_bytes;
};

static int redo_prepare(const union workload_value *values, const char *const *text, size_t region_size,
			void *config, char *err, size_t err_len)
{
	struct redo_config *c = config;

	if (region_size < CONTROL_BYTES + 2 * 128) {
		snprintf(err, err_len, "redo needs a region of at least %u bytes, not %zu",
			 CONTROL_BYTES + 2 * 128, region_size);
		return -1;
	}
	size_t room = region_size - CONTROL_BYTES;
	c->writers = values[P_WRITERS].u;
	c->record_size = values[P_RECORD_SIZE].u;
	if (param_range("record-size", text[P_RECORD_SIZE], c->record_size, 128, room / 2, " bytes", err, err_len) < 0)
		return -1;
	if (c->record_size % 64) {
		snprintf(err, err_len, "--record-size: '%s' is not a multiple of 64 bytes",
			 text[P_RECORD_SIZE]);
		return -1;
	}
	c->log_bytes = values[P_LOG_SIZE].u ? values[P_LOG_SIZE].u : room;
	if (values[P_LOG_SIZE].u &&
	    param_range("log-size", text[P_LOG_SIZE], c->log_bytes, 2 * c->record_size, room, " bytes", err, err_len) < 0)
		return -1;
	c->log_bytes -= c->log_bytes % c->record_size;
	return 0;
}

static uint64_t record_seed(uint64_t lsn, uint32_t writer, uint32_t length, uint64_t seq)
{
	return lsn * 0x9e3779b97f4a7c15ull ^ ((uint64_t)writer << 32 | length) ^ seq * 0xbf58476d1ce4e5b9ull;
}

struct redo_worker {
	struct workload_ctx *ctx;
	struct redo_config cfg;
	struct redo_control *control;
	char *log;
	uint64_t nwriters; /* writers that exist: min(--writers, workers) */
	uint64_t *c;       /* the slot's counters */
	char *err;         /* why run() failed */
	size_t err_len;
};

static struct redo_record *slot_of(const struct redo_worker *w, uint64_t lsn)
{
	return (struct redo_record *)(w->log + lsn % w->cfg.log_bytes);
}

/* The writer's loop; record is its private image of one record
 * (w->cfg.record_size bytes, 8-byte aligned). */
static int redo_write_with(struct redo_worker *w, uint64_t *record)
{
	struct workload_ctx *ctx = w->ctx;
	struct persist persist;
	struct rng rng;
	uint64_t rec = w->cfg.record_size, payload = rec - sizeof(struct redo_record);
	uint64_t count = 0, seq = 0;
	struct first_touch touched;
	int rc = 0;

	if (first_touch_init(&touched, ctx) < 0) {
		snprintf(w->err, w->err_len, "cannot allocate the touched-page bitmap");
		return -1;
	}
	/* First touches read, even with --write: a byte stored into the log
	 * would corrupt a record or a control word. */
	struct workload_ctx touch_ctx = *ctx;
	touch_ctx.write = false;
	if (persist_init(&persist, ctx, w->err, w->err_len) < 0) {
		first_touch_free(&touched);
		return -1;
	}
	first_touch_range(&touched, &touch_ctx, 0, sizeof(*w->control));
	w->c[persist.pmem != NULL ? C_PERSIST_PMEM_WORKERS : C_PERSIST_MSYNC_WORKERS] = 1;
	rng_seed(&rng, ctx->seed);

	uint64_t start = clock_now_ns();
	while (!workload_budget_done(ctx, start, count)) {
		/* The change vector, built in private memory before the commit. */
		struct redo_record *h = (struct redo_record *)record;
		for (uint64_t i = sizeof(*h) / 8; i < rec / 8; i++)
			record[i] = rng_next(&rng);

		uint64_t t0 = clock_now_ns();
		uint64_t lsn = atomic_fetch_add(&w->control->reserve_lsn, rec);
		struct redo_record *s = slot_of(w, lsn);
		first_touch_range(&touched, &touch_ctx, (size_t)((char *)s - (char *)ctx->base), rec);
		uint64_t previous = lsn >= w->cfg.log_bytes ? lsn - w->cfg.log_bytes + rec : 0;
		unsigned spins = 0;
		uint64_t since = 0;
		while (atomic_load_explicit(&s->end_lsn, memory_order_acquire) != previous) {
			if (spins++ == 0) {
				w->c[C_SPACE_WAITS]++;
				since = clock_now_ns();
			}
			sched_yield();
			if (clock_now_ns() - since > SPACE_WAIT_LIMIT_NS) {
				snprintf(w->err, w->err_len, "the log slot of LSN %llu still holds marker %llu, not "
							     "%llu, after %llu s: its writer is stopped or gone",
					 (unsigned long long)lsn,
					 (unsigned long long)atomic_load(&s->end_lsn),
					 (unsigned long long)previous, SPACE_WAIT_LIMIT_NS / 1000000000ull);
				rc = -1;
				break;
			}
		}
		if (rc < 0)
			break;
		h->lsn = lsn;
		h->writer = ctx->worker;
		h->length = (uint32_t)rec;
		h->seq = ++seq;
		h->checksum = checksum64(h + 1, payload, record_seed(lsn, h->writer, h->length, h->seq));

		/* Invalidate the old record before overwriting it. */
		atomic_store_explicit(&s->end_lsn, 0, memory_order_relaxed);
		atomic_thread_fence(memory_order_release);
		uint64_t p0 = clock_now_ns();
		if (persist_memcpy(&persist, (char *)s + 8, (char *)record + 8, rec - 8) < 0)
			rc = -1;
		atomic_store_explicit(&s->end_lsn, lsn + rec, memory_order_release);
		if (persist_range(&persist, &s->end_lsn, sizeof(s->end_lsn)) < 0)
			rc = -1;
		uint64_t t1 = clock_now_ns();
		w->c[C_PERSIST_NS] += t1 - p0;
		w->c[C_PERSIST_OVER_10US] += t1 - p0 > 10000;
		w->c[C_PERSIST_OVER_100US] += t1 - p0 > 100000;
		w->c[C_PERSIST_OVER_1MS] += t1 - p0 > 1000000;

		atomic_fetch_add(&w->control->wake, 1);
		if (atomic_load(&w->control->sleepers)) {
			uint64_t last = atomic_load_explicit(&w->control->last_wake_ns,
							     memory_order_relaxed);
			if ((int64_t)(t1 - last) >= (int64_t)READER_WAKE_INTERVAL_NS &&
			    atomic_compare_exchange_strong(&w->control->last_wake_ns, &last, t1))
				futex_wake_all((uint32_t *)&w->control->wake);
		}
		histogram_record(&ctx->slot->op_ns, t1 - t0);
		count++;
		if (rc < 0) {
			snprintf(w->err, w->err_len, "persisting the record at LSN %llu: msync: %s",
				 (unsigned long long)lsn, strerror(errno));
			break;
		}
	}
	w->c[C_RECORDS_WRITTEN] = count;
	w->c[C_BYTES_WRITTEN] = count * rec;
	ctx->slot->ops = count;
	ctx->slot->bytes = count * rec;
	first_touch_free(&touched);
	atomic_fetch_add(&w->control->writers_done, 1);
	/* Wake readers so they notice the end. */
	atomic_fetch_add(&w->control->wake, 1);
	futex_wake_all((uint32_t *)&w->control->wake);
	return rc;
}

enum { REDO_RECORD_MAX = 1 << 20 };

static int redo_write(struct redo_worker *w)
{
	if (w->cfg.record_size > REDO_RECORD_MAX) {
		snprintf(w->err, w->err_len, "--record-size above %d bytes", REDO_RECORD_MAX);
		return -1;
	}
	/* On the heap of the writer: in bss it would sit in the address space
	 * of every run's workers. */
	uint64_t *record = malloc(w->cfg.record_size);
	if (!record) {
		snprintf(w->err, w->err_len, "cannot allocate a record image of %llu bytes",
			 (unsigned long long)w->cfg.record_size);
		return -1;
	}
	int rc = redo_write_with(w, record);
	free(record);
	return rc;
}

static bool writers_finished(const struct redo_worker *w, uint64_t cursor)
{
	return atomic_load(&w->control->writers_done) >= w->nwriters &&
	       atomic_load(&w->control->reserve_lsn) <= cursor;
}

/* Skip to a position a writer will not reach for half a lap. */
static uint64_t skip_ahead(const struct redo_worker *w)
{
	uint64_t r = atomic_load(&w->control->reserve_lsn), rec = w->cfg.record_size;
	uint64_t half = w->cfg.log_bytes / 2 / rec * rec;

	return r > half ? r - half : 0;
}

static int redo_read(struct redo_worker *w)
{
	struct workload_ctx *ctx = w->ctx;
	static uint64_t last_seq[MAX_WRITERS];
	uint64_t rec = w->cfg.record_size, payload = rec - sizeof(struct redo_record);
	uint64_t cursor = 0;
	struct first_touch touched;

	if (first_touch_init(&touched, ctx) < 0) {
		snprintf(w->err, w->err_len, "cannot allocate the touched-page bitmap");
		return -1;
	}
	/* First touches read, even with --write: a byte stored into the log
	 * would corrupt a record or a control word. */
	struct workload_ctx touch_ctx = *ctx;
	touch_ctx.write = false;
	first_touch_range(&touched, &touch_ctx, 0, sizeof(*w->control));
	uint64_t start = clock_now_ns();

	/* Budget: --duration; with only --ops, until the writers are done. */
	while (!(ctx->duration_ns && workload_budget_done(ctx, start, 0))) {
		struct redo_record *s = slot_of(w, cursor);
		first_touch_range(&touched, &touch_ctx, (size_t)((char *)s - (char *)ctx->base), rec);
		uint64_t marker = atomic_load_explicit(&s->end_lsn, memory_order_acquire);

		if (marker == cursor + rec) {
			uint64_t lsn = s->lsn, seq = s->seq;
			uint32_t writer = s->writer, length = s->length;
			uint64_t stored = s->checksum;
			uint64_t sum = checksum64(s + 1, payload, record_seed(lsn, writer, length, seq));
			atomic_thread_fence(memory_order_acquire);
			if (atomic_load(&w->control->reserve_lsn) > cursor + w->cfg.log_bytes) {
				/* A writer may be overwriting it: this reader was lapped. */
				w->c[C_OVERRUNS]++;
				cursor = skip_ahead(w);
				continue;
			}
			w->c[C_RECORDS_READ]++;
			w->c[C_BYTES_READ] += rec;
			if (lsn != cursor || length != rec || writer >= w->nwriters || sum != stored) {
				w->c[C_CHECKSUM_FAILURES]++;
			} else if (seq <= last_seq[writer]) {
				w->c[C_SEQUENCE_ERRORS]++;
			} else {
				last_seq[writer] = seq;
				w->c[C_RECORDS_VERIFIED]++;
			}
			cursor += rec;
		} else if (marker > cursor + rec) {
			w->c[C_OVERRUNS]++;
			cursor = skip_ahead(w);
		} else {
			/* Not written yet (or being written): wait for a commit. */
			if (writers_finished(w, cursor))
				break;
			uint32_t seen = atomic_load(&w->control->wake);
			atomic_fetch_add(&w->control->sleepers, 1);
			if (atomic_load_explicit(&s->end_lsn, memory_order_acquire) != cursor + rec &&
			    !writers_finished(w, cursor)) {
				futex_wait_u32((uint32_t *)&w->control->wake, seen, READER_SLEEP_NS);
			}
			atomic_fetch_sub(&w->control->sleepers, 1);
		}
	}
	first_touch_free(&touched);
	return 0;
}

static int redo_run(struct workload_ctx *ctx, char *err, size_t err_len)
{
	struct redo_worker w = { .ctx = ctx, .c = ctx->slot->counters, .err = err, .err_len = err_len };

	w.cfg = *(const struct redo_config *)ctx->config;
	w.control = ctx->base;
	w.log = (char *)ctx->base + CONTROL_BYTES;
	w.nwriters = w.cfg.writers < ctx->workers ? w.cfg.writers : ctx->workers;
	return ctx->worker < w.nwriters ? redo_write(&w) : redo_read(&w);
}

/* Every worker beyond the writers reads: more writers than workers would
 * be recorded as asked and run as fewer. */
static int redo_check_workers(const void *config, unsigned workers, char *err, size_t err_len)
{
	const struct redo_config *c = config;

	if (c->writers > workers) {
		snprintf(err, err_len, "--writers %llu is more than --workers %u (the first --writers workers write, "
				       "the others read)", (unsigned long long)c->writers, workers);
		return -1;
	}
	return 0;
}

/* --reuse-path: a log an earlier run left (its positions, its count of
 * writers done, a slot reserved by a writer killed before its commit)
 * would make writers wait for ever and readers stop at once. */
static int redo_check_region(void *base, size_t size, const void *config, char *err, size_t err_len)
{
	const struct redo_control *c = base;
	uint64_t lsn = atomic_load(&c->reserve_lsn);
	uint32_t done = atomic_load(&c->writers_done);

	(void)size;
	(void)config;
	if (lsn || done) {
		snprintf(err, err_len, "the file holds a redo log (reserve_lsn %llu, writers_done %u) an earlier "
				       "run left; use a new file",
			 (unsigned long long)lsn, done);
		return -1;
	}
	return 0;
}

static void redo_report(struct json_writer *json, const struct workload_slot *merged,
			const void *config, unsigned workers, double wall_s)
{
	const struct redo_config *cfg = config;
	const uint64_t *c = merged->counters;

	json_key_u64(json, "writers", cfg->writers < workers ? cfg->writers : workers);
	json_key_string(json, "persist_path", persist_merged_path(c[C_PERSIST_PMEM_WORKERS], c[C_PERSIST_MSYNC_WORKERS]));
	json_key_double(json, "persist_mean_ns", workload_per(c[C_PERSIST_NS], c[C_RECORDS_WRITTEN]));
	json_key_double(json, "persist_share_over_10us", workload_per(c[C_PERSIST_OVER_10US], c[C_RECORDS_WRITTEN]));
	json_key_double(json, "persist_share_over_100us", workload_per(c[C_PERSIST_OVER_100US], c[C_RECORDS_WRITTEN]));
	json_key_double(json, "persist_share_over_1ms", workload_per(c[C_PERSIST_OVER_1MS], c[C_RECORDS_WRITTEN]));
	json_key_double(json, "write_bytes_per_s", workload_rate(c[C_BYTES_WRITTEN], wall_s));
	json_key_double(json, "read_bytes_per_s", workload_rate(c[C_BYTES_READ], wall_s));
	json_key_double(json, "commits_per_s", workload_rate(c[C_RECORDS_WRITTEN], wall_s));
}

const struct workload_ops workload_redo = {
	.has_budget = true,
	.name = "redo",
	.description = "writers append durable records to a circular redo log, the other workers read and validate them",
	.params = {
		{ .name = "writers", .type = WP_UINT, .min = 1, .max = MAX_WRITERS, .default_value = "1",
		  .help = "workers that append (the first N); the others read" },
		{ .name = "record-size", .type = WP_SIZE, .min = 128, .max = UINT64_MAX, .default_value = "512",
		  .help = "bytes per log record, a multiple of 64, header included" },
		{ .name = "log-size", .type = WP_SIZE, .min = 0, .max = UINT64_MAX, .default_value = "0",
		  .help = "bytes of circular log (0: the region minus its 4 KiB control page)" },
	},
	.counter_names = {
		"records_written", "bytes_written", "persist_ns", "records_read", "bytes_read",
		"records_verified", "checksum_failures", "sequence_errors", "overruns",
		"space_waits", "persist_pmem_workers", "persist_msync_workers",
		"persist_over_10us", "persist_over_100us", "persist_over_1ms", NULL,
	},
	.persists = true,
	.config_bytes = sizeof(struct redo_config),
	.prepare = redo_prepare,
	.check_region = redo_check_region,
	.check_workers = redo_check_workers,
	.run = redo_run,
	.report = redo_report,
};
