/* workload.h - what a worker does with the region once attached.
 *
 * One file per workload (workloads/<name>.c) defines one
 * `const struct workload_ops`; cli/workloads.c lists them.
 * A workload never forks and never knows the backend: it sees a mapped
 * region, its worker index, its parameters, and a slot in the shared
 * results area where it publishes what it measured. The harness merges
 * the slots and writes them under results.workload in the run record.
 */
#ifndef MSHARE_BENCH_WORKLOAD_H
#define MSHARE_BENCH_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sys/resource.h>

#include "clock.h"
#include "fault_cost.h"
#include "histogram.h"
#include "hw_counter.h"
#include "persist_mode.h"

#define WORKLOAD_MAX_COUNTERS 16
#define WORKLOAD_MAX_PARAMS 16
/* Timed phases of one operation (connect-storm: attach, first touch,
 * detach), each with its own histogram. */
#define WORKLOAD_MAX_PHASES 3

/* A workload's parameters are typed: the harness parses and range-checks
 * each value once, in the parent (harness/workload_util.c), and hands the
 * values to prepare() and, through the config prepare() fills, to every
 * worker; a worker never parses text. */
enum workload_param_type {
	WP_UINT,   /* decimal whole number (or 0x hex) in [min, max] */
	WP_SIZE,   /* size (8K, 1M, 0x1000) in [min, max] bytes; min 0 lets "0" through */
	WP_REAL,   /* real number strictly between lo and hi */
	WP_CHOICE, /* one of choices[] (NULL-terminated); the value is its index */
	WP_PATH,   /* "" (none) or an absolute path shorter than max bytes; the value
		    * is its length, the path is text[] (prepare() copies it) */
};

struct workload_param {
	const char *name;        /* long option, e.g. "theta" for --theta */
	enum workload_param_type type;
	const char *default_value;
	const char *help;
	uint64_t min, max;          /* WP_UINT, WP_SIZE; WP_PATH: max = bytes it must stay under */
	double lo, hi;              /* WP_REAL */
	const char *const *choices; /* WP_CHOICE */
};

union workload_value {
	uint64_t u;      /* WP_UINT, WP_SIZE */
	double d;        /* WP_REAL */
	unsigned choice; /* WP_CHOICE */
};

/* Room for a workload's prepared configuration (workload_ops.config_bytes). */
#define WORKLOAD_CONFIG_BYTES 256

/* Per-worker results, in shared memory, written only by that worker. */
struct workload_slot {
	/* First-touch latency of each page the workload faulted in (the
	 * harness's fault figures come from here). */
	struct histogram fault_ns;
	/* The same touches classified: faults, touches without a fault,
	 * preempted touches (harness/fault_cost.h). */
	struct fault_cost_slot fault_cost;
	/* Where workload_touch_page reads its counters into: memory the
	 * worker has mapped before its workload, so that copying them out
	 * never faults (a stack page still shared copy-on-write with the
	 * parent would, and that fault would count in the next touch). */
	struct rusage touch_ru[2];
	/* --hw-instructions: this worker's instruction counter, or -1. */
	int hw_fd;
	/* Per-operation latency, for workloads that have operations. */
	struct histogram op_ns;
	uint64_t pages_touched;
	uint64_t ops;
	uint64_t bytes;
	/* Workload-specific counters, named by workload_ops.counter_names;
	 * merged by sum. */
	uint64_t counters[WORKLOAD_MAX_COUNTERS];
	uint64_t run_ns;   /* time spent in run(), measured by the harness */
	/* Per-operation time of each phase named in workload_ops.phase_names
	 * (initialised and merged only for those: the pages of the others are
	 * never touched). */
	struct histogram phase_ns[WORKLOAD_MAX_PHASES];
};

struct workload_ctx {
	void *base;                /* the mapped region */
	size_t size;
	size_t page_bytes;         /* backend page size: one touch per page faults once */
	unsigned worker;           /* 0 .. workers-1 */
	unsigned workers;
	bool write;                /* --write */
	uint64_t seed;             /* per-worker, reproducible: derived from --seed and worker */
	uint64_t duration_ns;      /* --duration, 0 = not set */
	uint64_t max_ops;          /* --ops, 0 = not set */
	/* The workload's params, parsed (defaults filled in), in the order of
	 * workload_ops.params; and the config its prepare() made of them. */
	const union workload_value *params;
	const void *config;
	struct workload_slot *slot;
	/* How a write to the region is made durable: the backend's statement
	 * (struct region), for workloads that persist (workloads/persist.h). */
	enum persist_mode persist;
	/* For workloads that connect and disconnect repeatedly
	 * (connect-storm): re-run the backend's detach/attach. The region
	 * may move: read ctx->base again after attach(). 0, or -1 with the
	 * backend's message in err[]. */
	int (*attach)(struct workload_ctx *ctx, char *err, size_t err_len);
	int (*detach)(struct workload_ctx *ctx, char *err, size_t err_len);
	void *harness_private;
	/* The run's shared fault-cost histograms (NULL: counts only). */
	struct fault_cost_shared *fault_cost;
	/* A bit per 4 KiB page of the region, set once a worker has finished
	 * a touch of it (NULL: no page map): splits faults into first ones
	 * and ones on a page another worker populated (fault_cost.h). */
	uint8_t *populated;
	size_t populated_pages;
};

struct json_writer;

struct workload_ops {
	const char *name;
	const char *description;
	struct workload_param params[WORKLOAD_MAX_PARAMS]; /* ends at name == NULL */
	const char *counter_names[WORKLOAD_MAX_COUNTERS];  /* ends at NULL */
	/* Phases of one operation timed into slot->phase_ns[i] (ends at NULL;
	 * none for most workloads), written as results.workload.phase_latency_ns,
	 * with phase_meaning saying what each one covers. */
	const char *phase_names[WORKLOAD_MAX_PHASES + 1];
	const char *phase_meaning;
	/* A worker touches at most one page in each touch_stride-aligned
	 * range of addresses the region reaches (0: it may touch every page).
	 * The memory pre-flight counts the region data faulted in from it. */
	size_t touch_stride;
	/* Every worker reaches every touch_stride-aligned range of the region
	 * (every page when touch_stride is 0), so its page tables span the
	 * whole region: `plan --calibrate` models such workloads only. */
	bool touches_whole_region;
	/* The workload makes its writes durable (workloads/persist.h): the
	 * harness refuses to run it where the backend cannot say how, or
	 * where msync() would silently write nothing back (PERSIST_NONE). */
	bool persists;
	/* run() honours the --ops and --duration budgets (workload_budget_done):
	 * --ops is refused for the others, which would ignore it. */
	bool has_budget;
	/* Parent, after prepare(): check the config against the worker count
	 * (redo: more writers than workers). 0, or -1 with a message naming
	 * the values. May be NULL. */
	int (*check_workers)(const void *config, unsigned workers, char *err, size_t err_len);
	/* Parent, before fork, once: check what the typed params cannot say
	 * alone (against each other and the region size) and fill config
	 * (config_bytes <= WORKLOAD_CONFIG_BYTES) with what run() needs.
	 * 0, or -1 with a message naming the bad value (text[] holds the
	 * values as given). May be NULL. */
	size_t config_bytes;
	int (*prepare)(const union workload_value *params, const char *const *text, size_t region_size,
		       void *config, char *err, size_t err_len);
	/* Worker 0, after it attached and before the start barrier (no other
	 * worker touches the region yet), when the region is an existing file
	 * used as it is (--reuse-path): refuse the state an earlier run may
	 * have left there that would hang or fool this one (a latch held by a
	 * killed writer, a log's positions), or reset it. 0, or -1 with a
	 * message naming what was found; the run then fails before it starts.
	 * May be NULL (nothing to check). */
	int (*check_region)(void *base, size_t size, const void *config, char *err, size_t err_len);
	/* Worker: do the work. 0 on success; -1 with the reason in err[],
	 * which the run record keeps (workers[].error, errors[]). */
	int (*run)(struct workload_ctx *ctx, char *err, size_t err_len);
	/* Parent: write workload-specific figures into results.workload
	 * (the harness has already written ops, bytes, op latency and the
	 * named counters). May be NULL. */
	void (*report)(struct json_writer *json, const struct workload_slot *merged, const void *config,
		       unsigned workers, double wall_s);
};

/* How many phases wl names (0..WORKLOAD_MAX_PHASES). */
static inline unsigned workload_phase_count(const struct workload_ops *wl)
{
	unsigned n = 0;
	while (n < WORKLOAD_MAX_PHASES && wl->phase_names[n])
		n++;
	return n;
}
/* The workloads the program offers. The harness does not know them: the
 * program's entry (cli/main.c) hands it their table (cli/workloads.c, NULL-
 * terminated) before any subcommand runs, and the harness finds them by
 * name there. */
void workloads_use(const struct workload_ops *const *table);
/* The table handed over (an empty one before workloads_use). */
const struct workload_ops *const *workloads_all(void);
const struct workload_ops *workload_find(const char *name);

/* Helpers for workloads. */
/* Touch one byte of the page at p, timing the touch into slot->fault_ns,
 * and classify it (fault, no fault, preempted: harness/fault_cost.h) from
 * this thread's fault and context-switch counters read just before and
 * just after the timed window. Inline on purpose: measured on this suite's
 * host, an out-of-line call per touch cut the first-touch fault rate to
 * ~0.82x of a bare loop (selftest-bench fault-rate); the two getrusage
 * calls per touch cost more, and are outside the timed window. */
static inline void workload_touch_page(struct workload_ctx *ctx, volatile char *p)
{
	struct rusage *r0 = &ctx->slot->touch_ru[0], *r1 = &ctx->slot->touch_ru[1];
	int hw = ctx->slot->hw_fd;
	/* Outside the timed window and the counters: was the page populated? */
	size_t page = (size_t)(((uintptr_t)p - (uintptr_t)ctx->base) >> 12);
	bool mapped = ctx->populated && page < ctx->populated_pages;
	int populated = mapped ? (__atomic_load_n(&ctx->populated[page >> 3], __ATOMIC_ACQUIRE) >> (page & 7)) & 1 : -1;
	uint64_t i0 = hw >= 0 ? hw_counter_read(hw) : 0;

	getrusage(RUSAGE_THREAD, r0);
	uint64_t t0 = clock_now_ns();
	/* Keep the access between the two clock reads. */
	__asm__ __volatile__("" ::: "memory");
	if (ctx->write)
		*p = 1;
	else
		(void)*p;
	__asm__ __volatile__("" ::: "memory");
	uint64_t t1 = clock_now_ns();
	getrusage(RUSAGE_THREAD, r1);
	uint64_t i1 = hw >= 0 ? hw_counter_read(hw) : 0;

	uint64_t faults = (uint64_t)((r1->ru_minflt - r0->ru_minflt) + (r1->ru_majflt - r0->ru_majflt));
	uint64_t involuntary = (uint64_t)(r1->ru_nivcsw - r0->ru_nivcsw);
	histogram_record(&ctx->slot->fault_ns, t1 - t0);
	ctx->slot->pages_touched++;
	fault_cost_note_page(ctx->fault_cost, &ctx->slot->fault_cost, t1 - t0, faults, involuntary,
			     (uint64_t)(r1->ru_nvcsw - r0->ru_nvcsw), populated);
	if (populated == 0)
		__atomic_fetch_or(&ctx->populated[page >> 3], (uint8_t)(1u << (page & 7)), __ATOMIC_RELEASE);
	if (hw >= 0)
		fault_cost_hw_note(&ctx->slot->fault_cost, faults, involuntary, i0, i1);
}
/* For report(): num / den, 0 when den is 0 (means, shares). */
static inline double workload_per(uint64_t num, uint64_t den)
{
	return den ? (double)num / (double)den : 0.0;
}
/* For report(): n per second of wall_s, 0 when no time passed. */
static inline double workload_rate(uint64_t n, double wall_s)
{
	return wall_s > 0 ? (double)n / wall_s : 0.0;
}
/* Greatest common divisor (an odd or coprime step visits every slot). */
static inline uint64_t workload_gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}
/* Parent: parse text[] (the params as given, defaults filled in) into
 * values[] by their types, then call wl->prepare() into config. 0, or -1
 * with a message naming the option and value (harness/workload_util.c). */
int workload_prepare(const struct workload_ops *wl, const char *const *text, size_t region_size,
		     union workload_value *values, void *config, char *err, size_t err_len);
/* True when the --duration or --ops budget is used up (harness/workload_util.c). */
bool workload_budget_done(const struct workload_ctx *ctx, uint64_t start_ns, uint64_t ops);

#endif
