/* ktrace.h - the guest kernel's own time per user page fault (issue 31 item 3).
 *
 * A kprobe on handle_mm_fault's entry (addr = its 2nd argument, %si) and a
 * kretprobe on its return; a hist trigger on the entry saves
 * common_timestamp and the address per task (common_pid), the exit's
 * trigger pairs them (onmatch) into a synthetic event
 * mshare_bench_fault_lat_<pid>(u64 lat; u64 addr), and a third hist trigger
 * on that event counts the exact latencies (keys=lat, no buckets) of the
 * faults whose address lies in [lo, hi). Everything lives in a tracefs
 * instance of its own (instances/mshare-bench-<pid>) with the trace clock
 * "local" (ns; one guest instruction per ns under QEMU -icount shift=0);
 * the kprobe and synthetic events, global in the kernel, carry the pid in
 * their names, so two runs never share state.
 *
 * What is timed: from the entry kprobe's hist trigger reading the clock to
 * the kretprobe's reading it, i.e. handle_mm_fault() whole, plus the part
 * of the two probe handlers that falls between the two clock reads (see
 * KTRACE_INCLUDES). The arch fault entry (exc_page_fault, the VMA lookup,
 * mmap_lock) is outside.
 */
#ifndef MSHARE_BENCH_KTRACE_H
#define MSHARE_BENCH_KTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json.h"

#define KTRACE_PROBE "kprobe/kretprobe on handle_mm_fault (entry to return), paired per task by a hist trigger, clock \"local\""
#define KTRACE_INCLUDES "kprobe handler overhead: the entry probe's work after its clock read (hist map update) and the kretprobe trampoline and handler before its clock read"

/* The kernel's limit on a kretprobe's maxactive (KRETPROBE_MAXACTIVE_MAX, 6.1). */
#define KTRACE_MAXACTIVE_MAX 4096u
/* The largest hist trigger map (TRACING_MAP_BITS_MAX = 17). */
#define KTRACE_HIST_SIZE_MAX (1u << 17)

struct ktrace_result {
	bool armed;
	char unit[16];
	uint64_t count, min, p50, p90, p99, p999, max;
	double mean;
	/* Of count, the faults timed at 0 (both clock reads equal): left out
	 * of min..max and mean (see ktrace_hist_summary). */
	uint64_t zero_intervals;
	uint64_t entries_dropped, probe_missed;
	char error[200];
};

struct ktrace_state {
	bool armed;
	char root[64];    /* tracefs mount point */
	char dir[192];    /* where the triggers live: the instance (or root) */
	char group[40];   /* kprobe event group, mshare_bench_<pid> */
	char synth[48];   /* synthetic event, mshare_bench_fault_lat_<pid> */
	char trig_entry[320], trig_exit[320], trig_lat[160];
	bool mounted;     /* ktrace mounted tracefs: unmount at stop */
	bool instance;    /* dir is an instance ktrace created */
	bool kp_entry, kp_exit, synth_made, t_entry, t_exit, t_lat;
	unsigned maxactive;
	uintptr_t lo, hi;
};

/* Parent, root, in the guest: arm the probes over [lo, hi) with a kretprobe
 * that can follow `maxactive` tasks inside handle_mm_fault at once
 * (clamped to 1..KTRACE_MAXACTIVE_MAX). Returns 0, or -1 with the reason in
 * err, everything set up so far removed again. */
int ktrace_start(struct ktrace_state *st, uintptr_t lo, uintptr_t hi, unsigned maxactive, char *err,
		 size_t err_len);
/* Parent: read the histogram and the probes' miss counts into *out, then
 * remove every trigger, event and the instance (and unmount tracefs when
 * ktrace mounted it), also on errors. Returns 0, or -1 with the first
 * failure in err (and out->error). */
int ktrace_stop(struct ktrace_state *st, struct ktrace_result *out, char *err, size_t err_len);
/* results.fault_cost.kernel (key): always the same keys, so that a
 * record's CSV columns do not depend on the run: state ("measured",
 * "failed" with error, or "not requested"), the figures (null when not
 * measured), the probes' own cost (probe_cost: ktrace_probe_overhead) and
 * unit, the caller's (the trace clock "local" counts ns; under QEMU
 * -icount shift=0 those are guest instructions). */
void ktrace_write_json(struct json_writer *w, const char *key, bool requested, const struct ktrace_result *r,
		       const struct ktrace_result *probe_cost, const char *unit);

/* The same probes and triggers on getppid's syscall function, which does
 * next to nothing, called `calls` times: its "latency" is what the probes
 * themselves put inside the measured interval (KTRACE_INCLUDES), in the
 * trace clock's unit. Root, guest; 0 or -1 as ktrace_stop. */
int ktrace_probe_overhead(unsigned calls, struct ktrace_result *out, char *err, size_t err_len);

/* One hist trigger's text as the kernel prints it (the "hist" file of an
 * event with one trigger): lines "{ KEY:   value } hitcount:   n" and the
 * totals. Keys are kept as printed, in decimal. */
struct ktrace_hist {
	uint64_t *keys, *hits; /* n entries, sorted by key */
	size_t n;
	uint64_t total_hits, entries, dropped;
};
/* Returns 0, or -1 (err says why: text that is not a histogram of KEY,
 * totals missing or not agreeing with the lines). */
int ktrace_hist_parse(const char *text, const char *key, struct ktrace_hist *h, char *err,
		      size_t err_len);
void ktrace_hist_free(struct ktrace_hist *h);
/* count, min, p50..p999 (nearest rank: exact, the keys being exact
 * values), max, mean and entries_dropped of h into *out; the rest of *out
 * is left alone. An interval of 0 (both time stamps equal, seen under
 * plain TCG only, cause not established) is counted in count and zero_intervals and
 * left out of min..max and mean. */
void ktrace_hist_summary(const struct ktrace_hist *h, struct ktrace_result *out);

/* A kprobe that only counts the calls of one kernel function (its hits in
 * kprobe_profile), e.g. the page-table allocations PageTables leaves out.
 * Root; the probe is enabled in a tracefs instance of its own with the
 * smallest buffer and removed again by ktrace_count_stop. */
struct ktrace_counter {
	struct ktrace_state st;
	char symbol[64], event[48];
	bool enabled;
};
/* 0, or -1 with the reason in err (nothing left behind). */
int ktrace_count_start(struct ktrace_counter *c, const char *symbol, char *err, size_t err_len);
/* The calls since the start into *hits (and the probe's misses into
 * *missed, may be NULL) when hits is not NULL, then removes everything.
 * 0, or -1 with the first failure in err. */
int ktrace_count_stop(struct ktrace_counter *c, uint64_t *hits, uint64_t *missed, char *err, size_t err_len);

#endif
