/* lock_stat.c - reading /proc/lock_stat (lock_stat.h). */
#include <stdlib.h>
#include <string.h>

#include "lock_stat.h"

/* One class line: its name (up to the ':' before the numbers) and figures.
 * false for any other line (headers, call-site lines, separators). */
static bool class_line(const char *p, const char *eol, const char **name_end, struct lock_stat_figures *f)
{
	const char *colon = strstr(p, ": ");
	if (!colon || (eol && colon > eol))
		return false;
	double v[12];
	const char *q = colon + 1;
	int i;
	for (i = 0; i < 12; i++) {
		char *e;
		v[i] = strtod(q, &e);
		if (e == q || (eol && e > eol))
			break;
		q = e;
	}
	if (i < 12)
		return false;
	*name_end = colon;
	f->contentions = (int64_t)v[1];
	f->wait_max_ns = (int64_t)(v[3] * 1000.0 + 0.5);
	f->wait_ns = (int64_t)(v[4] * 1000.0 + 0.5); /* lock_stat prints us */
	f->acquisitions = (int64_t)v[7];
	f->lines = 1;
	return true;
}

static bool holds(const char *p, const char *end, const char *const *pats)
{
	for (const char *const *pat = pats; pats && *pat; pat++) {
		const char *m = strstr(p, *pat);
		if (m && m < end)
			return true;
	}
	return false;
}

void lock_stat_group(const char *text, const char *const *include, const char *const *exclude,
		     struct lock_stat_figures *f)
{
	memset(f, 0, sizeof(*f));
	lock_stat_group_add(text, include, exclude, f);
}

void lock_stat_group_add(const char *text, const char *const *include, const char *const *exclude,
			 struct lock_stat_figures *f)
{
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		const char *eol = strchr(p, '\n'), *end;
		struct lock_stat_figures l;
		if (!class_line(p, eol, &end, &l) || !holds(p, end, include) || holds(p, end, exclude))
			continue;
		f->contentions += l.contentions;
		f->wait_ns += l.wait_ns;
		f->wait_max_ns = l.wait_max_ns > f->wait_max_ns ? l.wait_max_ns : f->wait_max_ns;
		f->acquisitions += l.acquisitions;
		f->lines++;
	}
}

int lock_stat_top(const char *text, struct lock_stat_class *top, int n)
{
	return lock_stat_top_more(text, top, n, 0);
}

int lock_stat_top_more(const char *text, struct lock_stat_class *top, int n, int found)
{
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		const char *eol = strchr(p, '\n'), *end;
		struct lock_stat_figures l;
		if (!class_line(p, eol, &end, &l) || l.contentions <= 0)
			continue;
		int at = found < n ? found : n;
		while (at > 0 && top[at - 1].f.contentions < l.contentions)
			at--;
		if (at >= n)
			continue;
		memmove(&top[at + 1], &top[at], sizeof(top[0]) * (size_t)((found < n ? found : n - 1) - at));
		while (*p == ' ')
			p++;
		size_t len = (size_t)(end - p);
		if (len >= sizeof(top[at].name))
			len = sizeof(top[at].name) - 1;
		memcpy(top[at].name, p, len);
		top[at].name[len] = '\0';
		top[at].f = l;
		if (found < n)
			found++;
	}
	return found;
}
