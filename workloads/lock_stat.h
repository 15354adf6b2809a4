/* lock_stat.h - /proc/lock_stat (CONFIG_LOCK_STAT) for the workloads that
 * count lock contention (lifecycle, fault-locks; issue 42).
 *
 * Writing "0" clears every class's figures; a read after gives what
 * happened since. lock_stat is per lock class, not per lock: the
 * mmap_lock of every mm is one class, "&mm->mmap_lock"; a lock taken
 * nested (down_read_nested(.., SINGLE_DEPTH_NESTING): the mshare v1 host
 * mm's in a sharer's fault, patch 0027) is the class with "/1" appended.
 * A class line is "name: " and 12 numbers (con-bounces, contentions,
 * waittime-min, -max, -total, -avg, acq-bounces, acquisitions, holdtime
 * min, max, total, avg; times in us with two decimals); a rwsem has a -W
 * and a -R line.
 */
#ifndef MSHARE_BENCH_LOCK_STAT_H
#define MSHARE_BENCH_LOCK_STAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct lock_stat_figures {
	int64_t contentions, wait_ns, wait_max_ns, acquisitions;
	int64_t lines; /* class lines summed (a rwsem counts twice) */
};

/* Sum the class lines whose name holds one of include[] and none of
 * exclude[] (NULL-terminated; exclude may be NULL). */
void lock_stat_group(const char *text, const char *const *include, const char *const *exclude,
		     struct lock_stat_figures *f);

/* The same, added to f (a text read in pieces of whole lines). */
void lock_stat_group_add(const char *text, const char *const *include, const char *const *exclude,
			 struct lock_stat_figures *f);

struct lock_stat_class {
	char name[64];
	struct lock_stat_figures f;
};

/* The n class lines with the most contentions (more than 0), most first;
 * returns how many were found (<= n). */
int lock_stat_top(const char *text, struct lock_stat_class *top, int n);
/* The same, into top[] already holding `found` classes (pieces of whole
 * lines); returns how many it holds now. */
int lock_stat_top_more(const char *text, struct lock_stat_class *top, int n, int found);

#endif
