/* test-lock-stat.c - workloads/lock_stat.c reads /proc/lock_stat right:
 * the sample (tests/workloads/lock_stat.sample) is lines of a real one,
 * from the mshare-counters kernel (6.1 + mshare v1, CONFIG_LOCK_STAT) after
 * 8 workers first-touched an mshare region: class lines with -W/-R and
 * nested (/1) classes, call-site lines, separators. The expected figures
 * are added up by hand from it. TAP output.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lock_stat.h"
#include "../lib/tap.h"

#ifndef SAMPLE
#define SAMPLE "tests/workloads/lock_stat.sample"
#endif

static char text[1 << 16];

int main(void)
{
	FILE *f = fopen(SAMPLE, "r");
	size_t n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
	if (f)
		fclose(f);
	text[n] = '\0';
	TAP_OK(n > 1000, "the sample is read (%zu bytes from %s)", n, SAMPLE);

	struct lock_stat_figures g;
	static const char *const mm[] = { "mmap_lock", NULL }, *const nested[] = { "mmap_lock/", NULL };
	static const char *const ptl[] = { "ptlock", "page_table_lock", NULL }, *const xa[] = { "xa_lock", NULL };
	static const char *const im[] = { "i_mmap_rwsem", NULL }, *const none[] = { "no_such_lock", NULL };

	lock_stat_group(text, mm, NULL, &g);
	TAP_OK(g.acquisitions == 37 + 2465 + 1 + 2296 && g.lines == 4 && g.contentions == 0,
	       "mmap_lock: the -W and -R lines of the class and of its nested class /1, call-site lines left out "
	       "(acquisitions %lld, lines %lld)", (long long)g.acquisitions, (long long)g.lines);
	lock_stat_group(text, nested, NULL, &g);
	TAP_OK(g.acquisitions == 2297 && g.lines == 2, "mmap_lock/1 (the mshare v1 host mm's, taken nested): %lld "
	       "acquisitions in %lld lines", (long long)g.acquisitions, (long long)g.lines);
	lock_stat_group(text, mm, nested, &g);
	TAP_OK(g.acquisitions == 37 + 2465 && g.lines == 2, "mmap_lock without the nested class: %lld",
	       (long long)g.acquisitions);
	lock_stat_group(text, ptl, NULL, &g);
	TAP_OK(g.acquisitions == 3486 + 15 + 7 && g.contentions == 12 && g.wait_ns == 7631490 &&
		       g.wait_max_ns == 7581840 && g.lines == 3,
	       "page-table locks: contentions 12, wait 7631.49 us total and 7581.84 us longest in ns, acquisitions "
	       "3508 (%lld, %lld, %lld, %lld)", (long long)g.contentions, (long long)g.wait_ns,
	       (long long)g.wait_max_ns, (long long)g.acquisitions);
	lock_stat_group(text, xa, NULL, &g);
	TAP_OK(g.contentions == 109 && g.wait_ns == 4948460 && g.acquisitions == 12931 && g.lines == 1,
	       "xa_lock: 109 contentions, 4948460 ns, 12931 acquisitions (%lld, %lld, %lld)", (long long)g.contentions,
	       (long long)g.wait_ns, (long long)g.acquisitions);
	lock_stat_group(text, im, NULL, &g);
	TAP_OK(g.acquisitions == 445 && g.lines == 1, "i_mmap_rwsem: 445 acquisitions (%lld)", (long long)g.acquisitions);
	lock_stat_group(text, none, NULL, &g);
	TAP_OK(g.lines == 0 && g.acquisitions == 0, "a class that is not there: no line");

	struct lock_stat_class top[4];
	int k = lock_stat_top(text, top, 4);
	TAP_OK(k == 2 && strcmp(top[0].name, "&xa->xa_lock#3") == 0 && top[0].f.contentions == 109 &&
		       strcmp(top[1].name, "ptlock_ptr(page)#2") == 0 && top[1].f.contentions == 12,
	       "most contended: the two classes with contentions, most first (%d: %s %lld, %s %lld)", k,
	       k > 0 ? top[0].name : "-", k > 0 ? (long long)top[0].f.contentions : 0LL, k > 1 ? top[1].name : "-",
	       k > 1 ? (long long)top[1].f.contentions : 0LL);
	k = lock_stat_top(text, top, 1);
	TAP_OK(k == 1 && strcmp(top[0].name, "&xa->xa_lock#3") == 0, "most contended, room for one: the most (%d)", k);
	/* In two pieces of whole lines (how fault-locks reads it): the same. */
	char *cut = strstr(text, "ptlock_ptr(page):");
	while (cut && cut > text && cut[-1] != '\n')
		cut--;
	if (cut) {
		char keep = *cut;
		struct lock_stat_figures a = { 0 };
		*cut = '\0';
		lock_stat_group_add(text, ptl, NULL, &a);
		k = lock_stat_top_more(text, top, 4, 0);
		*cut = keep;
		lock_stat_group_add(cut, ptl, NULL, &a);
		k = lock_stat_top_more(cut, top, 4, k);
		TAP_OK(a.acquisitions == 3508 && a.lines == 3 && k == 2 && top[0].f.contentions == 109,
		       "read in two pieces: the same sums (ptl %lld acquisitions, %lld lines) and top (%d)",
		       (long long)a.acquisitions, (long long)a.lines, k);
	} else {
		TAP_OK(0, "the sample has the line to cut at");
	}
	k = lock_stat_top("lock_stat version 0.4\n", top, 4);
	TAP_OK(k == 0, "no class line: none found");
	return tap_done();
}
