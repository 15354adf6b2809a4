/* hugepool.h - borrowing huge pages from the kernel's pool for one run.
 *
 * A run that needs N huge pages takes them from the free pool if there are
 * enough, else raises the pool (nr_hugepages) by exactly the shortfall, and
 * gives back what it added when it ends.
 *
 * Runs at once: every change of the pool, and the allocation of the pages
 * that follows a check of what is free, happens under an exclusive flock
 * on HUGEPOOL_LOCK, so one run never counts another's free pages as its
 * own. Giving back never takes the pool below what others hold: a run
 * gives back at most the pages that are free and unreserved.
 *
 * Runs that die (SIGKILL): what a run added is written to a ledger entry,
 * one small file per run in HUGEPOOL_LEDGER_DIR (written whole to a
 * temporary name, then renamed), before the pool is raised and after every
 * change. The next run and `mshare-bench cleanup` give back what a dead run
 * left (dead: no process with that pid and start time, so a reused pid is
 * not taken for the run; entries of an earlier boot are dropped).
 */
#ifndef MSHARE_BENCH_HUGEPOOL_H
#define MSHARE_BENCH_HUGEPOOL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define HUGEPOOL_STATE_DIR "/run/mshare-bench"
#define HUGEPOOL_LOCK HUGEPOOL_STATE_DIR "/hugepool.lock"
#define HUGEPOOL_LEDGER_DIR HUGEPOOL_STATE_DIR "/hugepool"

/* One run's hold on one pool. */
struct hugepool_claim {
	size_t page_bytes;
	long added;         /* pages this run added and has not given back */
	int lock_fd;        /* >= 0 while the lock is held */
	char ledger[256];   /* this run's ledger entry, "" when there is none */
};

/* sysfs directory of the pool for pages of page_bytes. */
void hugepool_dir(size_t page_bytes, char *out, size_t len);
/* Free pages not already reserved; -1 if the pool does not exist. */
long hugepool_available(size_t page_bytes);

/* Where a wait for the lock looks for a stop request (SIGINT...). */
void hugepool_set_stop_flag(volatile sig_atomic_t *flag);
/* Grow (and shrink) the pool through nr_hugepages_mempolicy, so that the
 * pages come from the nodes of this process's memory policy (run
 * --mem-policy bind/interleave); off: nr_hugepages, every node. */
void hugepool_obey_mempolicy(bool on);

/* A claim with nothing held. */
void hugepool_claim_init(struct hugepool_claim *c, size_t page_bytes);
/* Take the pool lock (waiting for other runs, with progress on stderr),
 * then give back what dead runs left. A user who cannot open the lock file
 * (not root, and no root run made it yet) goes on without it. 0, or -1
 * with a message. */
int hugepool_lock(struct hugepool_claim *c, char *err, size_t err_len);
void hugepool_unlock(struct hugepool_claim *c);
/* Under the lock: make `pages` pages available, raising the pool by the
 * shortfall; c->added grows by what was added. 0, or -1 with a message
 * (nothing added then). */
int hugepool_reserve(struct hugepool_claim *c, long pages, char *err, size_t err_len);
/* Take the lock (whatever stop was asked) before freeing the pages the
 * claim added, so that no other run counts them as free before they are
 * given back; nothing to do when the claim added none. 0, or -1 (said on
 * stderr; hugepool_release then leaves them to the ledger). */
int hugepool_lock_to_release(struct hugepool_claim *c);
/* Give back what the claim added (takes the lock itself unless held) and
 * remove its ledger entry. What cannot be given back now stays in the
 * ledger for the next run or `mshare-bench cleanup`. */
void hugepool_release(struct hugepool_claim *c);

/* Give back what dead runs left, reporting each to `report` with the
 * prefix; for `run` (before its checks) and `cleanup`. Returns the number
 * of entries still left by dead runs (pages in use, unreadable entries,
 * or no permission), 0 when none, -1 when the lock cannot be had. */
int hugepool_recover(FILE *report, const char *prefix);
/* `mshare-bench cleanup`. */
int hugepool_cleanup_main(int argc, char **argv);

#endif
