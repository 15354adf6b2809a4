/* Unit tests of harness/ktrace.c's host-side parts: the hist text parser
 * (text as the 6.1 guest kernel prints it), the exact percentiles over its
 * keys and the JSON object. The probes themselves are exercised in the
 * guest by tests/kernel/fault-time.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ktrace.h"
#include "../lib/tap.h"

/* Captured in the guest (6.1, QEMU TCG): 1024 first touches of shared
 * anonymous 4 KiB pages, hist of the synthetic latency event (331 distinct
 * values); ktrace-guest printed for it: min 9466 p50 10028 p90 12195
 * p99 76626 p99.9 605285 max 2071293 mean 14981.9. */
static const char captured[] =
#include "ktrace-hist-captured.txt.h"
	;

static const char unsorted_dropped[] =
	"# event histogram\n"
	"#\n"
	"# trigger info: hist:keys=lat:vals=hitcount:sort=hitcount:size=131072 [active]\n"
	"#\n"
	"\n"
	"{ lat:        300 } hitcount:          5\n"
	"{ lat:        100 } hitcount:          1\n"
	"{ lat:        200 } hitcount:          3\n"
	"{ lat:   99999999 } hitcount:          1\n"
	"\n"
	"Totals:\n"
	"    Hits: 10\n"
	"    Entries: 4\n"
	"    Dropped: 7\n";

/* As printed under plain TCG: some faults timed at 0. */
static const char with_zero[] =
	"# event histogram\n"
	"\n"
	"{ lat:          0 } hitcount:          2\n"
	"{ lat:        500 } hitcount:          3\n"
	"{ lat:        700 } hitcount:          1\n"
	"\n"
	"Totals:\n"
	"    Hits: 6\n"
	"    Entries: 3\n"
	"    Dropped: 0\n";

static const char only_zero[] =
	"# event histogram\n"
	"\n"
	"{ lat:          0 } hitcount:          3\n"
	"\n"
	"Totals:\n"
	"    Hits: 3\n"
	"    Entries: 1\n"
	"    Dropped: 0\n";

static const char empty[] =
	"# event histogram\n"
	"#\n"
	"# trigger info: hist:keys=lat:vals=hitcount:sort=lat:size=131072 if addr >= 1 && addr < 2 [active]\n"
	"#\n"
	"\n"
	"\n"
	"Totals:\n"
	"    Hits: 0\n"
	"    Entries: 0\n"
	"    Dropped: 0\n";

static const char pid_hist[] =
	"# event histogram\n"
	"#\n"
	"# trigger info: hist:keys=common_pid:vals=hitcount:ts0=common_timestamp:a0=addr:sort=hitcount:size=256 [active]\n"
	"#\n"
	"\n"
	"{ common_pid:         95 } hitcount:       1024\n"
	"\n"
	"Totals:\n"
	"    Hits: 1024\n"
	"    Entries: 1\n"
	"    Dropped: 0\n";

static int parse(const char *text, const char *key, struct ktrace_hist *h, char *err, size_t len)
{
	err[0] = '\0';
	return ktrace_hist_parse(text, key, h, err, len);
}

/* The flat (CSV) field key has exactly value (null is ""). */
static bool field_is(const struct json_writer *w, const char *key, const char *value)
{
	for (size_t i = 0; i < w->nfields; i++)
		if (strcmp(w->fields[i].key, key) == 0)
			return strcmp(w->fields[i].value, value) == 0;
	return false;
}

int main(void)
{
	struct ktrace_hist h;
	struct ktrace_result r;
	char err[200];

	/* The captured text. */
	TAP_OK(parse(captured, "lat", &h, err, sizeof(err)) == 0, "captured guest hist parses (%s)", err);
	memset(&r, 0, sizeof(r));
	ktrace_hist_summary(&h, &r);
	TAP_OK(r.count == 1024 && r.entries_dropped == 0, "captured: 1024 faults, none dropped (count %llu)",
	       (unsigned long long)r.count);
	TAP_OK(h.n == 331 && r.min == 9466 && r.p50 == 10028 && r.p90 == 12195 && r.p99 == 76626 && r.p999 == 605285 &&
		       r.max == 2071293 && (long)(r.mean * 10 + 0.5) == 149819,
	       "captured: 331 values, the figures the guest printed (p50 %llu, mean %.1f)", (unsigned long long)r.p50, r.mean);
	TAP_OK(r.min <= r.p50 && r.p50 <= r.p90 && r.p90 <= r.p99 && r.p99 <= r.p999 && r.p999 <= r.max &&
		       r.mean >= (double)r.min && r.mean <= (double)r.max,
	       "captured: min <= p50 <= p90 <= p99 <= p999 <= max, min <= mean <= max");
	int sorted = 1;
	for (size_t i = 1; i < h.n; i++)
		sorted &= h.keys[i - 1] < h.keys[i];
	TAP_OK(sorted && h.n > 0 && r.min == h.keys[0] && r.max == h.keys[h.n - 1], "captured: keys sorted, min/max are the extreme keys");
	ktrace_hist_free(&h);

	/* Unsorted (sort=hitcount), Dropped > 0, exact nearest-rank percentiles. */
	TAP_OK(parse(unsorted_dropped, "lat", &h, err, sizeof(err)) == 0, "hist sorted by hitcount parses (%s)", err);
	TAP_OK(h.n == 4 && h.keys[0] == 100 && h.keys[1] == 200 && h.keys[2] == 300 && h.keys[3] == 99999999,
	       "entries come back sorted by key");
	memset(&r, 0, sizeof(r));
	ktrace_hist_summary(&h, &r);
	/* values: 100, 200 x3, 300 x5, 99999999: ranks p50 -> 5th = 300, p90 -> 9th = 300,
	 * p99 -> ceil(9.9) = 10th, p99.9 -> 10th */
	TAP_OK(r.count == 10 && r.min == 100 && r.max == 99999999, "count 10, min 100, max 99999999");
	TAP_OK(r.p50 == 300 && r.p90 == 300 && r.p99 == 99999999 && r.p999 == 99999999,
	       "nearest-rank percentiles: p50 %llu p90 %llu p99 %llu p999 %llu", (unsigned long long)r.p50,
	       (unsigned long long)r.p90, (unsigned long long)r.p99, (unsigned long long)r.p999);
	TAP_OK(r.mean == (100.0 + 600 + 1500 + 99999999) / 10, "mean %.1f", r.mean);
	TAP_OK(r.entries_dropped == 7, "Dropped: 7 is reported as entries_dropped");
	ktrace_hist_free(&h);

	/* Intervals of 0 are counted, not timed. */
	TAP_OK(parse(with_zero, "lat", &h, err, sizeof(err)) == 0 && h.n == 3, "hist with a 0 key parses (%s)", err);
	memset(&r, 0, sizeof(r));
	ktrace_hist_summary(&h, &r);
	/* timed values: 500 x3, 700: p50 -> 2nd of 4 = 500, p99 -> 4th = 700 */
	TAP_OK(r.count == 6 && r.zero_intervals == 2 && r.min == 500 && r.p50 == 500 && r.p99 == 700 && r.max == 700 &&
		       r.mean == (1500.0 + 700) / 4,
	       "0 intervals: count 6 (all), zero_intervals 2, min %llu p50 %llu max %llu mean %.1f over the 4 timed",
	       (unsigned long long)r.min, (unsigned long long)r.p50, (unsigned long long)r.max, r.mean);
	ktrace_hist_free(&h);
	TAP_OK(parse(only_zero, "lat", &h, err, sizeof(err)) == 0, "hist of 0s only parses (%s)", err);
	memset(&r, 0xff, sizeof(r));
	ktrace_hist_summary(&h, &r);
	TAP_OK(r.count == 3 && r.zero_intervals == 3 && r.min == 0 && r.p50 == 0 && r.max == 0 && r.mean == 0,
	       "only 0 intervals: count 3, zero_intervals 3, figures 0");
	ktrace_hist_free(&h);

	/* An empty histogram is a valid one with count 0. */
	TAP_OK(parse(empty, "lat", &h, err, sizeof(err)) == 0 && h.n == 0, "empty hist parses (%s)", err);
	memset(&r, 0xff, sizeof(r));
	ktrace_hist_summary(&h, &r);
	TAP_OK(r.count == 0 && r.min == 0 && r.p50 == 0 && r.max == 0 && r.mean == 0 && r.entries_dropped == 0,
	       "empty hist: count, percentiles, mean all 0");
	ktrace_hist_free(&h);

	/* The per-task maps' text (another key). */
	TAP_OK(parse(pid_hist, "common_pid", &h, err, sizeof(err)) == 0 && h.n == 1 && h.hits[0] == 1024,
	       "per-task hist (keys=common_pid) parses (%s)", err);
	ktrace_hist_free(&h);
	TAP_OK(parse(pid_hist, "lat", &h, err, sizeof(err)) != 0 && strstr(err, "{ lat N }"),
	       "a hist of another key is refused: %s", err);

	/* Garbage and damaged texts are errors, never a histogram. */
	TAP_OK(parse("", "lat", &h, err, sizeof(err)) != 0, "empty text refused: %s", err);
	TAP_OK(parse("hello world\n", "lat", &h, err, sizeof(err)) != 0, "garbage refused: %s", err);
	TAP_OK(parse("{ lat: 12 } hitcount: 3\n", "lat", &h, err, sizeof(err)) != 0 && strstr(err, "totals"),
	       "text cut before its totals refused: %s", err);
	TAP_OK(parse("{ lat: 12 } hitcount: 3\n\nTotals:\n    Hits: 4\n    Entries: 1\n    Dropped: 0\n", "lat", &h, err,
		     sizeof(err)) != 0 && strstr(err, "disagree"),
	       "Hits not the sum of the hitcounts refused: %s", err);
	TAP_OK(parse("{ lat: 12 } hitcount: 3\n\nTotals:\n    Hits: 3\n    Entries: 2\n    Dropped: 0\n", "lat", &h, err,
		     sizeof(err)) != 0 && strstr(err, "disagree"),
	       "Entries not the number of lines refused: %s", err);
	TAP_OK(parse("{ lat: 12 } hitcount: 3\n{ lat: 12 } hitcount: 1\n\nTotals:\n    Hits: 4\n    Entries: 2\n    Dropped: 0\n",
		     "lat", &h, err, sizeof(err)) != 0 && strstr(err, "twice"),
	       "a key twice refused: %s", err);
	TAP_OK(parse("{ lat: ~ 2^12 } hitcount: 3\n\nTotals:\n    Hits: 3\n    Entries: 1\n    Dropped: 0\n", "lat", &h, err,
		     sizeof(err)) != 0,
	       "a log2 key (not exact) refused: %s", err);
	TAP_OK(parse("{ lat: 99999999999999999999999 } hitcount: 3\n\nTotals:\n    Hits: 3\n    Entries: 1\n    Dropped: 0\n",
		     "lat", &h, err, sizeof(err)) != 0,
	       "a key beyond 64 bits refused: %s", err);

	/* JSON: the object, and null when not armed. */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct json_writer w;
	json_init(&w, f);
	json_begin_object(&w, NULL);
	memset(&r, 0, sizeof(r));
	r.armed = true;
	snprintf(r.unit, sizeof(r.unit), "ns");
	r.count = 10;
	r.min = 100;
	r.p50 = 300;
	r.max = 99999999;
	r.mean = 10000199.9;
	r.entries_dropped = 7;
	r.probe_missed = 2;
	struct ktrace_result cost;
	memset(&cost, 0, sizeof(cost));
	cost.armed = true;
	cost.count = 1000;
	cost.p50 = 2700;
	cost.p99 = 4100;
	ktrace_write_json(&w, "kernel", true, &r, &cost, "instructions");
	ktrace_write_json(&w, "kernel_off", false, NULL, NULL, "ns");
	r.armed = false;
	snprintf(r.error, sizeof(r.error), "reading the hist: gone");
	ktrace_write_json(&w, "kernel_failed", true, &r, &cost, "ns");
	json_end_object(&w);
	fclose(f);
	TAP_OK(!json_failed(&w) && field_is(&w, "kernel.state", "measured") && field_is(&w, "kernel.unit", "instructions") &&
		       field_is(&w, "kernel.count", "10") && field_is(&w, "kernel.p999", "0") &&
		       field_is(&w, "kernel.entries_dropped", "7") && field_is(&w, "kernel.probe_missed", "2") &&
		       field_is(&w, "kernel.probe_cost_calls", "1000") && field_is(&w, "kernel.probe_cost_p50", "2700") &&
		       field_is(&w, "kernel.probe_cost_p99", "4100") && field_is(&w, "kernel.error", "") &&
		       strstr(buf, "\"probe\": \"kprobe/kretprobe on handle_mm_fault") &&
		       strstr(buf, "\"includes\": \"kprobe handler overhead") &&
		       field_is(&w, "kernel_off.state", "not requested (mshare-bench run --kernel-fault-time)") &&
		       field_is(&w, "kernel_off.unit", "ns") && field_is(&w, "kernel_off.count", "") &&
		       field_is(&w, "kernel_off.probe_cost_p50", "") && field_is(&w, "kernel_failed.state", "failed") &&
		       field_is(&w, "kernel_failed.count", "") && field_is(&w, "kernel_failed.probe_cost_p50", "2700") &&
		       field_is(&w, "kernel_failed.error", "reading the hist: gone") &&
		       strstr(buf, "\"count\": null"),
	       "fault_cost.kernel JSON: measured, not requested and failed, the unit the caller gives");
	/* The CSV columns of the three objects are the same keys in the same order. */
	size_t per = 0, same = 1;
	for (size_t i = 0; i < w.nfields; i++)
		per += strncmp(w.fields[i].key, "kernel.", 7) == 0;
	TAP_OK(per > 0 && w.nfields == 3 * per, "three objects of %zu flat fields each (%zu in all)", per, w.nfields);
	for (size_t i = 0; per && i < per; i++)
		same &= strcmp(w.fields[i].key + 7, w.fields[per + i].key + 11) == 0 &&
			strcmp(w.fields[i].key + 7, w.fields[2 * per + i].key + 14) == 0;
	TAP_OK(same, "the same keys whether measured, not requested or failed");
	int flat = 0;
	for (size_t i = 0; i < w.nfields; i++)
		flat += strcmp(w.fields[i].key, "kernel.p50") == 0 && strcmp(w.fields[i].value, "300") == 0;
	TAP_OK(flat == 1, "the flat CSV field kernel.p50 is 300");
	json_free(&w);
	free(buf);
	return tap_done();
}
