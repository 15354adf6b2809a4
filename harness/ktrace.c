/* ktrace.c - the guest kernel's own time per user page fault: kprobe events
 * on handle_mm_fault paired by hist triggers (see ktrace.h). */
#include "ktrace.h"
#include "histogram.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define KTRACE_GROUP "mshare_bench"
#define KTRACE_DEFAULT_ROOT "/sys/kernel/tracing"

/* ---------------------------------------------------------------- parsing */

/* src into dst[len], cut to fit (truncation is meant: messages). */
static void scopy(char *dst, size_t len, const char *src)
{
	size_t n;

	if (!len)
		return;
	n = strnlen(src, len - 1);
	memmove(dst, src, n);
	dst[n] = '\0';
}

static int cmp_key(const void *a, const void *b, void *keys)
{
	const uint64_t *k = keys;
	uint64_t x = k[*(const size_t *)a], y = k[*(const size_t *)b];
	return x < y ? -1 : x > y;
}

/* A decimal u64 at *p (leading blanks skipped); advances *p. */
static bool parse_u64(const char **p, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	if (!isdigit((unsigned char)*s))
		return false;
	for (; isdigit((unsigned char)*s); s++) {
		if (x > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return false;
		x = x * 10 + (uint64_t)(*s - '0');
	}
	*v = x;
	*p = s;
	return true;
}

/* *p starts with word (after blanks): advance past it. */
static bool skip_word(const char **p, const char *word)
{
	const char *s = *p;
	size_t n = strlen(word);

	while (*s == ' ' || *s == '\t')
		s++;
	if (strncmp(s, word, n) != 0)
		return false;
	*p = s + n;
	return true;
}

void ktrace_hist_free(struct ktrace_hist *h)
{
	free(h->keys);
	free(h->hits);
	memset(h, 0, sizeof(*h));
}

int ktrace_hist_parse(const char *text, const char *key, struct ktrace_hist *h, char *err,
		      size_t err_len)
{
	size_t cap = 0, lineno = 0;
	bool totals = false, got_hits = false, got_entries = false, got_dropped = false;
	uint64_t sum = 0;
	char keyword[80];
	const char *line = text;

	memset(h, 0, sizeof(*h));
	snprintf(keyword, sizeof(keyword), "%s:", key);
	while (line && *line) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		const char *p = line;
		uint64_t v;

		lineno++;
		while (p < line + len && (*p == ' ' || *p == '\t'))
			p++;
		if (p == line + len || *p == '#') {
			/* blank or comment */
		} else if (*p == '{') {
			uint64_t k, n;

			p++;
			if (totals || !skip_word(&p, keyword) || !parse_u64(&p, &k) || !skip_word(&p, "}") ||
			    !skip_word(&p, "hitcount:") || !parse_u64(&p, &n) || p > line + len) {
				snprintf(err, err_len, "hist line %zu is not '{ %s N } hitcount: N': %.*s", lineno,
					 key, (int)(len > 80 ? 80 : len), line);
				goto fail;
			}
			if (h->n == cap) {
				size_t ncap = cap ? 2 * cap : 256;
				uint64_t *nk = realloc(h->keys, ncap * sizeof(*nk));
				uint64_t *nh = nk ? realloc(h->hits, ncap * sizeof(*nh)) : NULL;

				if (nk)
					h->keys = nk;
				if (!nh) {
					snprintf(err, err_len, "out of memory parsing a hist of %zu entries", h->n);
					goto fail;
				}
				h->hits = nh;
				cap = ncap;
			}
			h->keys[h->n] = k;
			h->hits[h->n] = n;
			h->n++;
			sum += n;
		} else if (strncmp(p, "Totals:", 7) == 0) {
			totals = true;
		} else if (totals && skip_word(&p, "Hits:") && parse_u64(&p, &v)) {
			h->total_hits = v;
			got_hits = true;
		} else if (totals && skip_word(&p, "Entries:") && parse_u64(&p, &v)) {
			h->entries = v;
			got_entries = true;
		} else if (totals && skip_word(&p, "Dropped:") && parse_u64(&p, &v)) {
			h->dropped = v;
			got_dropped = true;
		} else {
			snprintf(err, err_len, "hist line %zu not understood: %.*s", lineno,
				 (int)(len > 80 ? 80 : len), line);
			goto fail;
		}
		line = end ? end + 1 : NULL;
	}
	if (!got_hits || !got_entries || !got_dropped) {
		snprintf(err, err_len, "hist text without its totals (Hits, Entries, Dropped)");
		goto fail;
	}
	if (h->entries != h->n || h->total_hits != sum) {
		snprintf(err, err_len,
			 "hist totals disagree with its lines: Entries %" PRIu64 " for %zu lines, Hits %" PRIu64
			 " for hitcounts summing to %" PRIu64,
			 h->entries, h->n, h->total_hits, sum);
		goto fail;
	}
	/* Sort by key (the kernel sorts by hitcount unless told otherwise). */
	if (h->n > 1) {
		size_t *idx = malloc(h->n * sizeof(*idx));
		uint64_t *k2 = malloc(h->n * sizeof(*k2)), *h2 = malloc(h->n * sizeof(*h2));

		if (!idx || !k2 || !h2) {
			free(idx);
			free(k2);
			free(h2);
			snprintf(err, err_len, "out of memory sorting a hist of %zu entries", h->n);
			goto fail;
		}
		for (size_t i = 0; i < h->n; i++)
			idx[i] = i;
		qsort_r(idx, h->n, sizeof(*idx), cmp_key, h->keys);
		for (size_t i = 0; i < h->n; i++) {
			k2[i] = h->keys[idx[i]];
			h2[i] = h->hits[idx[i]];
		}
		for (size_t i = 1; i < h->n; i++) {
			if (k2[i] == k2[i - 1]) {
				snprintf(err, err_len, "hist key %" PRIu64 " appears twice", k2[i]);
				free(idx);
				free(k2);
				free(h2);
				goto fail;
			}
		}
		free(idx);
		free(h->keys);
		free(h->hits);
		h->keys = k2;
		h->hits = h2;
	}
	return 0;
fail:
	ktrace_hist_free(h);
	return -1;
}

/* The smallest key whose cumulative count reaches rank (1-based). */
static uint64_t key_at_rank(const struct ktrace_hist *h, uint64_t rank)
{
	uint64_t c = 0;

	for (size_t i = 0; i < h->n; i++) {
		c += h->hits[i];
		if (c >= rank)
			return h->keys[i];
	}
	return h->n ? h->keys[h->n - 1] : 0;
}

/* Nearest rank: the smallest value with at least pct% of the samples at or below it. */
static uint64_t percentile(const struct ktrace_hist *h, uint64_t count, double pct)
{
	return key_at_rank(h, histogram_nearest_rank(count, pct));
}

void ktrace_hist_summary(const struct ktrace_hist *h, struct ktrace_result *out)
{
	long double sum = 0;
	uint64_t count = 0, zero = 0;
	struct ktrace_hist timed = *h;

	for (size_t i = 0; i < h->n; i++) {
		count += h->hits[i];
		sum += (long double)h->keys[i] * (long double)h->hits[i];
	}
	/* Intervals of 0: both probes' time stamps equal around a whole
	 * handle_mm_fault(), which no fault can take. Seen under plain QEMU
	 * TCG (up to a third of the faults of a run), never under -icount;
	 * the cause is not established. Counted apart, left out below. */
	if (h->n && h->keys[0] == 0) {
		zero = h->hits[0];
		timed.keys++;
		timed.hits++;
		timed.n--;
	}
	out->count = count;
	out->zero_intervals = zero;
	out->entries_dropped = h->dropped;
	if (count == zero) {
		out->min = out->p50 = out->p90 = out->p99 = out->p999 = out->max = 0;
		out->mean = 0;
		return;
	}
	out->min = timed.keys[0];
	out->max = timed.keys[timed.n - 1];
	out->p50 = percentile(&timed, count - zero, 50);
	out->p90 = percentile(&timed, count - zero, 90);
	out->p99 = percentile(&timed, count - zero, 99);
	out->p999 = percentile(&timed, count - zero, 99.9);
	out->mean = (double)(sum / (long double)(count - zero));
}

/* ---------------------------------------------------------------- tracefs */

/* The number of lines in the kernel's tracing error log (tracefs/error_log),
 * and its last "error:" line after line `after` as " (kernel error_log:
 * <text>)", or "" (it explains a refused command). */
static size_t error_log_tail(const struct ktrace_state *st, size_t after, char *buf, size_t len)
{
	char path[256], line[512], last[512] = "";
	size_t n = 0;
	FILE *f;

	if (len)
		buf[0] = '\0';
	snprintf(path, sizeof(path), "%s/error_log", st->root);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		/* "[ts] hist:synthetic:x: error: ..." then "  Command: ..." and a caret line */
		if (++n > after && strstr(line, "error:"))
			snprintf(last, sizeof(last), "%s", line);
	}
	fclose(f);
	if (last[0] && len) {
		scopy(buf, len, " (kernel error_log: ");
		scopy(buf + strlen(buf), len - strlen(buf), last);
		if (strlen(buf) + 2 <= len)
			strcat(buf, ")");
	}
	return n;
}

/* Writes text to path (O_APPEND: never truncate kprobe_events and the like,
 * which would remove every other probe). */
static int write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	ssize_t n;
	size_t len = strlen(text);

	if (fd < 0)
		return -1;
	n = write(fd, text, len);
	if (n != (ssize_t)len) {
		int e = n < 0 ? errno : EIO;
		close(fd);
		errno = e;
		return -1;
	}
	return close(fd);
}

/* The whole file as a string (malloc'd), or NULL with errno. */
static char *read_text(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0, cap = 65536;
	char *buf;

	if (fd < 0)
		return NULL;
	buf = malloc(cap);
	while (buf) {
		ssize_t n;

		if (len + 1 >= cap) {
			char *nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				buf = NULL;
				errno = ENOMEM;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			free(buf);
			buf = NULL;
			errno = e;
			break;
		}
		if (n == 0) {
			buf[len] = '\0';
			break;
		}
		len += (size_t)n;
	}
	close(fd);
	return buf;
}

static bool exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* A tracefs command, with the kernel's explanation on failure. */
static int command(const struct ktrace_state *st, const char *file, const char *text, const char *what,
		   char *err, size_t err_len)
{
	char path[320], why[400];

	size_t before = error_log_tail(st, 0, why, 0);

	snprintf(path, sizeof(path), "%s", file);
	if (write_text(path, text) == 0)
		return 0;
	int e = errno;
	error_log_tail(st, before, why, sizeof(why));
	snprintf(err, err_len, "%s: writing '%s' to %s: %s%s", what, text, path, strerror(e), why);
	return -1;
}

/* A removal, retried briefly while the kernel still holds a reference
 * (EBUSY). */
static int removal(const struct ktrace_state *st, const char *file, const char *text, const char *what,
		   char *err, size_t err_len)
{
	for (int i = 0;; i++) {
		if (write_text(file, text) == 0)
			return 0;
		if (errno != EBUSY || i == 50)
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
	}
	return command(st, file, text, what, err, err_len);
}

/* Where tracefs is, mounting it at /sys/kernel/tracing when it is nowhere. */
static int find_tracefs(struct ktrace_state *st, char *err, size_t err_len)
{
	char line[512];
	FILE *f;

	if (exists(KTRACE_DEFAULT_ROOT "/trace")) {
		snprintf(st->root, sizeof(st->root), "%s", KTRACE_DEFAULT_ROOT);
		return 0;
	}
	f = fopen("/proc/mounts", "r");
	if (f) {
		while (fgets(line, sizeof(line), f)) {
			char dev[128], dir[128], type[64];

			if (sscanf(line, "%127s %127s %63s", dev, dir, type) == 3 &&
			    strcmp(type, "tracefs") == 0 && strlen(dir) < sizeof(st->root)) {
				scopy(st->root, sizeof(st->root), dir);
				fclose(f);
				return 0;
			}
		}
		fclose(f);
	}
	if (!exists(KTRACE_DEFAULT_ROOT)) {
		snprintf(err, err_len,
			 "tracefs is not mounted and %s does not exist: kernel without CONFIG_TRACING "
			 "(CONFIG_FTRACE, CONFIG_KPROBE_EVENTS, CONFIG_HIST_TRIGGERS)",
			 KTRACE_DEFAULT_ROOT);
		return -1;
	}
	if (mount("nodev", KTRACE_DEFAULT_ROOT, "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) {
		snprintf(err, err_len, "tracefs is not mounted and mount -t tracefs nodev %s failed: %s",
			 KTRACE_DEFAULT_ROOT, strerror(errno));
		return -1;
	}
	snprintf(st->root, sizeof(st->root), "%s", KTRACE_DEFAULT_ROOT);
	st->mounted = true;
	return 0;
}

/* Remove everything ktrace_start made, in dependency order; the first
 * failure in err (when err is empty). Returns 0 or -1. */
static int teardown(struct ktrace_state *st, char *err, size_t err_len)
{
	char path[400], text[400], e2[400];
	int rc = 0;

#define KEEP_FIRST(expr)                                                          \
	do {                                                                      \
		if ((expr) != 0) {                                                \
			if (rc == 0 && err && err_len)                            \
				scopy(err, err_len, e2);                          \
			rc = -1;                                                  \
		}                                                                 \
	} while (0)

	if (st->t_exit) {
		snprintf(path, sizeof(path), "%s/events/%s/fault_exit_%d/trigger", st->dir, st->group, (int)getpid());
		snprintf(text, sizeof(text), "!%s", st->trig_exit);
		KEEP_FIRST(removal(st, path, text, "removing the exit trigger", e2, sizeof(e2)));
		st->t_exit = false;
	}
	if (st->t_entry) {
		snprintf(path, sizeof(path), "%s/events/%s/fault_entry_%d/trigger", st->dir, st->group, (int)getpid());
		snprintf(text, sizeof(text), "!%s", st->trig_entry);
		KEEP_FIRST(removal(st, path, text, "removing the entry trigger", e2, sizeof(e2)));
		st->t_entry = false;
	}
	if (st->t_lat) {
		snprintf(path, sizeof(path), "%s/events/synthetic/%s/trigger", st->dir, st->synth);
		snprintf(text, sizeof(text), "!%s", st->trig_lat);
		KEEP_FIRST(removal(st, path, text, "removing the latency hist trigger", e2, sizeof(e2)));
		st->t_lat = false;
	}
	if (st->synth_made) {
		snprintf(path, sizeof(path), "%s/synthetic_events", st->root);
		snprintf(text, sizeof(text), "!%s", st->synth);
		KEEP_FIRST(removal(st, path, text, "removing the synthetic event", e2, sizeof(e2)));
		st->synth_made = false;
	}
	snprintf(path, sizeof(path), "%s/kprobe_events", st->root);
	if (st->kp_exit) {
		snprintf(text, sizeof(text), "-:%s/fault_exit_%d", st->group, (int)getpid());
		KEEP_FIRST(removal(st, path, text, "removing the kretprobe event", e2, sizeof(e2)));
		st->kp_exit = false;
	}
	if (st->kp_entry) {
		snprintf(text, sizeof(text), "-:%s/fault_entry_%d", st->group, (int)getpid());
		KEEP_FIRST(removal(st, path, text, "removing the kprobe event", e2, sizeof(e2)));
		st->kp_entry = false;
	}
	if (st->instance) {
		int r = -1;
		for (int i = 0; i < 50; i++) {
			r = rmdir(st->dir);
			if (r == 0 || errno != EBUSY)
				break;
			nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
		}
		if (r != 0)
			snprintf(e2, sizeof(e2), "rmdir %s: %s", st->dir, strerror(errno));
		KEEP_FIRST(r);
		st->instance = false;
	}
	if (st->mounted) {
		int r = umount(st->root);
		if (r != 0)
			snprintf(e2, sizeof(e2), "umount %s (mounted by ktrace): %s", st->root, strerror(errno));
		KEEP_FIRST(r);
		st->mounted = false;
	}
#undef KEEP_FIRST
	st->armed = false;
	return rc;
}

/* The hist trigger map size for the per-task maps: the tasks that fault in
 * the range while inside handle_mm_fault at once, with room to spare
 * (the map holds every task that ever faulted there; a full map drops). */
static unsigned pid_map_size(unsigned maxactive)
{
	unsigned want = 2 * maxactive + 256, s = 128;

	while (s < want && s < KTRACE_HIST_SIZE_MAX)
		s *= 2;
	return s;
}

/* The probes on `symbol` (its 2nd argument, %si, filtered to [lo, hi)). */
static int start_on(struct ktrace_state *st, const char *symbol, uintptr_t lo, uintptr_t hi, unsigned maxactive,
		    char *err, size_t err_len)
{
	char path[400], text[320], e2[400];
	int pid = (int)getpid();

	memset(st, 0, sizeof(*st));
	if (lo >= hi) {
		snprintf(err, err_len, "empty address range [0x%" PRIxPTR ", 0x%" PRIxPTR ")", lo, hi);
		return -1;
	}
	if (geteuid() != 0) {
		snprintf(err, err_len, "not root: kprobe events and hist triggers need root (tracefs)");
		return -1;
	}
	if (maxactive == 0)
		maxactive = 1;
	if (maxactive > KTRACE_MAXACTIVE_MAX)
		maxactive = KTRACE_MAXACTIVE_MAX;
	st->maxactive = maxactive;
	st->lo = lo;
	st->hi = hi;
	snprintf(st->group, sizeof(st->group), "%s", KTRACE_GROUP);
	snprintf(st->synth, sizeof(st->synth), "mshare_bench_fault_lat_%d", pid);

	if (find_tracefs(st, err, err_len) != 0)
		return -1;
	snprintf(path, sizeof(path), "%s/kprobe_events", st->root);
	if (!exists(path)) {
		snprintf(err, err_len, "%s missing: kernel without CONFIG_KPROBE_EVENTS", path);
		goto fail;
	}
	snprintf(path, sizeof(path), "%s/synthetic_events", st->root);
	if (!exists(path)) {
		snprintf(err, err_len, "%s missing: kernel without CONFIG_HIST_TRIGGERS (CONFIG_SYNTH_EVENTS)", path);
		goto fail;
	}

	/* Our own instance: its triggers, clock and buffer are no one else's. */
	snprintf(st->dir, sizeof(st->dir), "%s/instances/mshare-bench-%d", st->root, pid);
	if (mkdir(st->dir, 0755) != 0) {
		snprintf(err, err_len, "mkdir %s (a tracefs instance): %s", st->dir, strerror(errno));
		goto fail;
	}
	st->instance = true;
	snprintf(path, sizeof(path), "%s/trace_clock", st->dir);
	if (command(st, path, "local", "setting the trace clock", err, err_len) != 0)
		goto fail;
	/* The events are only counted by triggers, never kept in the ring
	 * buffer: the smallest buffer leaves the guest its memory. */
	snprintf(path, sizeof(path), "%s/buffer_size_kb", st->dir);
	if (command(st, path, "4", "shrinking the instance's ring buffer", err, err_len) != 0)
		goto fail;

	snprintf(path, sizeof(path), "%s/kprobe_events", st->root);
	snprintf(text, sizeof(text), "p:%s/fault_entry_%d %s addr=%%si:u64", st->group, pid, symbol);
	if (command(st, path, text, "the kprobe", err, err_len) != 0)
		goto fail;
	st->kp_entry = true;
	snprintf(text, sizeof(text), "r%u:%s/fault_exit_%d %s", maxactive, st->group, pid, symbol);
	if (command(st, path, text, "the kretprobe", err, err_len) != 0)
		goto fail;
	st->kp_exit = true;

	snprintf(path, sizeof(path), "%s/synthetic_events", st->root);
	snprintf(text, sizeof(text), "%s u64 lat; u64 addr", st->synth);
	if (command(st, path, text, "the synthetic latency event", err, err_len) != 0)
		goto fail;
	st->synth_made = true;

	snprintf(path, sizeof(path), "%s/events/%s/fault_entry_%d/hist", st->dir, st->group, pid);
	if (!exists(path)) {
		snprintf(err, err_len, "%s missing: kernel without CONFIG_HIST_TRIGGERS", path);
		goto fail;
	}

	/* Counting first, the entry (it defines ts0 and a0) before the exit
	 * that reads them: the chain runs once the exit's trigger is in. */
	snprintf(st->trig_lat, sizeof(st->trig_lat),
		 "hist:keys=lat:vals=hitcount:sort=lat:size=%u if addr >= %" PRIuPTR " && addr < %" PRIuPTR,
		 KTRACE_HIST_SIZE_MAX, lo, hi);
	snprintf(path, sizeof(path), "%s/events/synthetic/%s/trigger", st->dir, st->synth);
	if (command(st, path, st->trig_lat, "the latency hist trigger", err, err_len) != 0)
		goto fail;
	st->t_lat = true;

	snprintf(st->trig_entry, sizeof(st->trig_entry),
		 "hist:keys=common_pid:ts0=common_timestamp:a0=addr:size=%u if addr >= %" PRIuPTR
		 " && addr < %" PRIuPTR,
		 pid_map_size(maxactive), lo, hi);
	snprintf(path, sizeof(path), "%s/events/%s/fault_entry_%d/trigger", st->dir, st->group, pid);
	if (command(st, path, st->trig_entry, "the entry hist trigger", err, err_len) != 0)
		goto fail;
	st->t_entry = true;

	snprintf(st->trig_exit, sizeof(st->trig_exit),
		 "hist:keys=common_pid:lat=common_timestamp-$ts0:onmatch(%s.fault_entry_%d).trace(%s,$lat,$a0):size=%u",
		 st->group, pid, st->synth, pid_map_size(maxactive));
	snprintf(path, sizeof(path), "%s/events/%s/fault_exit_%d/trigger", st->dir, st->group, pid);
	if (command(st, path, st->trig_exit, "the exit hist trigger", err, err_len) != 0)
		goto fail;
	st->t_exit = true;
	st->armed = true;
	return 0;
fail:
	teardown(st, e2, sizeof(e2));
	return -1;
}

int ktrace_start(struct ktrace_state *st, uintptr_t lo, uintptr_t hi, unsigned maxactive, char *err,
		 size_t err_len)
{
	return start_on(st, "handle_mm_fault", lo, hi, maxactive, err, err_len);
}

/* entry + exit misses from kprobe_profile ("  NAME  hits  missed"). */
static int read_missed(const struct ktrace_state *st, uint64_t *missed, char *err, size_t err_len)
{
	char path[320], name[80], entry[64], exit_[64];
	char *text, *line;
	int found = 0;

	snprintf(entry, sizeof(entry), "fault_entry_%d", (int)getpid());
	snprintf(exit_, sizeof(exit_), "fault_exit_%d", (int)getpid());
	snprintf(path, sizeof(path), "%s/kprobe_profile", st->root);
	text = read_text(path);
	if (!text) {
		snprintf(err, err_len, "reading %s: %s", path, strerror(errno));
		return -1;
	}
	*missed = 0;
	for (line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		unsigned long long hits, miss;

		if (sscanf(line, "%79s %llu %llu", name, &hits, &miss) != 3)
			continue;
		/* The name is the event's, with or without its group. */
		const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
		if (strcmp(base, entry) == 0 || strcmp(base, exit_) == 0) {
			*missed += miss;
			found++;
		}
	}
	free(text);
	if (found != 2) {
		snprintf(err, err_len, "%s lists %d of the 2 probes", path, found);
		return -1;
	}
	return 0;
}

/* A hist file, parsed. */
static int hist_file(const char *path, const char *key, struct ktrace_hist *h, char *err, size_t err_len)
{
	char e2[200];
	char *text = read_text(path);

	if (!text) {
		snprintf(err, err_len, "reading %s: %s", path, strerror(errno));
		return -1;
	}
	if (ktrace_hist_parse(text, key, h, e2, sizeof(e2)) != 0) {
		snprintf(err, err_len, "%s: %s", path, e2);
		free(text);
		return -1;
	}
	free(text);
	return 0;
}

/* MSHARE_BENCH_KTRACE_HIST=FILE: a copy of the latency hist text as the
 * kernel printed it (for a look by hand, and the unit test's captured text). */
static void keep_hist(const char *path)
{
	const char *to = getenv("MSHARE_BENCH_KTRACE_HIST");
	char *text;
	FILE *f;

	if (!to || !*to)
		return;
	text = read_text(path);
	f = text ? fopen(to, "w") : NULL;
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	free(text);
}

int ktrace_stop(struct ktrace_state *st, struct ktrace_result *out, char *err, size_t err_len)
{
	char path[400], text[400], first[400] = "", e2[400];
	struct ktrace_hist h;
	uint64_t dropped = 0, missed = 0;
	bool have_lat = false;
	int pid = (int)getpid();

#define FAILED() scopy(first, first[0] ? 0 : sizeof(first), e2)
	memset(out, 0, sizeof(*out));
	snprintf(out->unit, sizeof(out->unit), "ns");
	if (!st->armed) {
		snprintf(err, err_len, "kernel fault timing was not armed");
		scopy(out->error, sizeof(out->error), err);
		teardown(st, NULL, 0);
		return -1;
	}
	/* The per-task maps' drops (a full map loses a fault), before the exit
	 * trigger goes. */
	for (unsigned i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/events/%s/fault_%s_%d/hist", st->dir, st->group,
			 i ? "exit" : "entry", pid);
		if (hist_file(path, "common_pid", &h, e2, sizeof(e2)) == 0) {
			dropped += h.dropped;
			ktrace_hist_free(&h);
		} else {
			FAILED();
		}
	}
	/* Disable: without the exit trigger no latency event is made. */
	snprintf(path, sizeof(path), "%s/events/%s/fault_exit_%d/trigger", st->dir, st->group, pid);
	snprintf(text, sizeof(text), "!%s", st->trig_exit);
	if (removal(st, path, text, "removing the exit trigger", e2, sizeof(e2)) == 0)
		st->t_exit = false;
	else
		FAILED();
	if (read_missed(st, &missed, e2, sizeof(e2)) != 0)
		FAILED();
	snprintf(path, sizeof(path), "%s/events/synthetic/%s/hist", st->dir, st->synth);
	keep_hist(path);
	if (hist_file(path, "lat", &h, e2, sizeof(e2)) == 0) {
		ktrace_hist_summary(&h, out);
		ktrace_hist_free(&h);
		have_lat = true;
	} else {
		FAILED();
	}
	out->entries_dropped += dropped;
	out->probe_missed = missed;
	if (teardown(st, e2, sizeof(e2)) != 0)
		FAILED();
#undef FAILED
	if (first[0] || !have_lat) {
		scopy(err, err_len, first);
		scopy(out->error, sizeof(out->error), first);
		return -1;
	}
	out->armed = true;
	return 0;
}

/* A figure, or null when there is none: the keys never change. */
static void u64_or_null(struct json_writer *w, const char *key, bool have, uint64_t v)
{
	if (have)
		json_key_u64(w, key, v);
	else
		json_key_null(w, key);
}

void ktrace_write_json(struct json_writer *w, const char *key, bool requested, const struct ktrace_result *r,
		       const struct ktrace_result *probe_cost, const char *unit)
{
	bool have = requested && r && r->armed;
	bool have_cost = requested && probe_cost && probe_cost->armed;

	json_begin_object(w, key);
	json_key_string(w, "state", !requested ? "not requested (mshare-bench run --kernel-fault-time)"
				    : have	    ? "measured"
						    : "failed");
	json_key_string(w, "unit", unit);
	/* A figure of r, or null when nothing was measured. */
#define FIGURE(name) u64_or_null(w, #name, have, have ? r->name : 0)
	FIGURE(count);
	FIGURE(min);
	FIGURE(p50);
	FIGURE(p90);
	FIGURE(p99);
	FIGURE(p999);
	FIGURE(max);
	if (have)
		json_key_double(w, "mean", r->mean);
	else
		json_key_null(w, "mean");
	/* Faults timed at 0 (seen under plain TCG only), in count but not in
	 * min..max and mean. */
	FIGURE(zero_intervals);
	FIGURE(entries_dropped);
	FIGURE(probe_missed);
#undef FIGURE
	/* The probes' own share of each interval (KTRACE_INCLUDES), measured
	 * on a syscall that does nothing, in the same unit. */
#define COST(name, field) u64_or_null(w, name, have_cost, have_cost ? probe_cost->field : 0)
	COST("probe_cost_calls", count);
	COST("probe_cost_p50", p50);
	COST("probe_cost_p99", p99);
#undef COST
	json_key_string(w, "probe", KTRACE_PROBE);
	json_key_string(w, "includes", KTRACE_INCLUDES);
	json_key_string(w, "error", requested && r && !r->armed ? r->error : "");
	json_end_object(w);
}

int ktrace_probe_overhead(unsigned calls, struct ktrace_result *out, char *err, size_t err_len)
{
	struct ktrace_state st;

	memset(out, 0, sizeof(*out));
	/* %si means nothing here: the whole range, every call counts. */
	if (start_on(&st, "__x64_sys_getppid", 0, UINTPTR_MAX, 4, err, err_len) != 0)
		return -1;
	for (unsigned i = 0; i < calls; i++)
		(void)getppid();
	return ktrace_stop(&st, out, err, err_len);
}

/* ------------------------------------------------------- counting kprobes */

int ktrace_count_start(struct ktrace_counter *c, const char *symbol, char *err, size_t err_len)
{
	char path[400], text[320], e2[400];
	int pid = (int)getpid();

	memset(c, 0, sizeof(*c));
	scopy(c->symbol, sizeof(c->symbol), symbol);
	if (geteuid() != 0) {
		snprintf(err, err_len, "not root: kprobe events need root (tracefs)");
		return -1;
	}
	if (find_tracefs(&c->st, err, err_len) != 0)
		return -1;
	snprintf(path, sizeof(path), "%s/kprobe_events", c->st.root);
	if (!exists(path)) {
		snprintf(err, err_len, "%s missing: kernel without CONFIG_KPROBE_EVENTS", path);
		goto fail;
	}
	snprintf(c->st.group, sizeof(c->st.group), "%s", KTRACE_GROUP);
	snprintf(c->event, sizeof(c->event), "count_%d", pid);
	/* The event is only counted (kprobe_profile's hits), never kept: an
	 * instance of its own with the smallest buffer enables it. */
	snprintf(c->st.dir, sizeof(c->st.dir), "%s/instances/mshare-bench-count-%d", c->st.root, pid);
	if (mkdir(c->st.dir, 0755) != 0) {
		snprintf(err, err_len, "mkdir %s (a tracefs instance): %s", c->st.dir, strerror(errno));
		goto fail;
	}
	c->st.instance = true;
	snprintf(path, sizeof(path), "%s/buffer_size_kb", c->st.dir);
	if (command(&c->st, path, "4", "shrinking the instance's ring buffer", err, err_len) != 0)
		goto fail;
	snprintf(path, sizeof(path), "%s/kprobe_events", c->st.root);
	snprintf(text, sizeof(text), "p:%s/%s %s", c->st.group, c->event, symbol);
	if (command(&c->st, path, text, "the counting kprobe", err, err_len) != 0)
		goto fail;
	c->st.kp_entry = true;
	snprintf(path, sizeof(path), "%s/events/%s/%s/enable", c->st.dir, c->st.group, c->event);
	if (command(&c->st, path, "1", "enabling the counting kprobe", err, err_len) != 0)
		goto fail;
	c->enabled = true;
	c->st.armed = true;
	return 0;
fail:
	ktrace_count_stop(c, NULL, NULL, e2, sizeof(e2));
	return -1;
}

int ktrace_count_stop(struct ktrace_counter *c, uint64_t *hits, uint64_t *missed, char *err, size_t err_len)
{
	char path[300], text[320], name[96], e2[480] = "", e3[400];
	int rc = 0, found = 0;

	if (c->st.armed && hits) {
		snprintf(path, sizeof(path), "%s/kprobe_profile", c->st.root);
		char *all = read_text(path);
		if (!all) {
			snprintf(e2, sizeof(e2), "reading %s: %s", path, strerror(errno));
			rc = 1;
		} else {
			for (char *line = strtok(all, "\n"); line; line = strtok(NULL, "\n")) {
				unsigned long long h, m;
				if (sscanf(line, "%95s %llu %llu", name, &h, &m) != 3)
					continue;
				const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
				if (strcmp(base, c->event) == 0) {
					*hits = h;
					if (missed)
						*missed = m;
					found++;
				}
			}
			free(all);
			if (found != 1) {
				snprintf(e2, sizeof(e2), "%s lists the probe %d times", path, found);
				rc = 1;
			}
		}
	}
	if (c->enabled) {
		snprintf(path, sizeof(path), "%s/events/%s/%s/enable", c->st.dir, c->st.group, c->event);
		if (removal(&c->st, path, "0", "disabling the counting kprobe", e3, sizeof(e3)) != 0 && rc++ == 0)
			scopy(e2, sizeof(e2), e3);
		c->enabled = false;
	}
	if (c->st.instance) {
		if (rmdir(c->st.dir) != 0 && rc++ == 0)
			snprintf(e2, sizeof(e2), "rmdir %s: %s", c->st.dir, strerror(errno));
		c->st.instance = false;
	}
	if (c->st.kp_entry) {
		snprintf(path, sizeof(path), "%s/kprobe_events", c->st.root);
		snprintf(text, sizeof(text), "-:%s/%s", c->st.group, c->event);
		if (removal(&c->st, path, text, "removing the counting kprobe", e3, sizeof(e3)) != 0 && rc++ == 0)
			scopy(e2, sizeof(e2), e3);
		c->st.kp_entry = false;
	}
	if (c->st.mounted) {
		umount(c->st.root);
		c->st.mounted = false;
	}
	c->st.armed = false;
	if (rc && err && err_len)
		scopy(err, err_len, e2);
	return rc ? -1 : 0;
}
