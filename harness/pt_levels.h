/* pt_levels.h - which page-table levels a run's page-table figures hold
 * (issue 46 item 1), and the PUD pages /proc/meminfo's PageTables leaves
 * out on kernels that do not count them (Linux 6.1: its x86 PUD pages have
 * no page-table constructor; 6.12 counts them).
 *
 * Two measurements, both made by the harness on the kernel it runs on:
 *   - pt_levels_probe(): does PageTables count PUD pages here? The parent
 *     maps and touches one page in an empty 512 GiB slot (so that the
 *     kernel allocates a PUD, a PMD and a PTE page for it) and compares the
 *     growth of its VmPTE (every level) with that of PageTables, folded
 *     first (vm.stat_refresh, root); 7 tries, the answer most agree on
 *     (kernel/vm/pt-accounting.c is the same probe as a guest tool).
 *   - a counting kprobe on __pud_alloc (harness/ktrace.h) between the
 *     baseline and the parked point: the PUD pages allocated in the
 *     window, system-wide like PageTables itself.
 * When PageTables leaves PUD pages out, the record's all-levels figure is
 * the PageTables growth plus those PUD pages; when it counts them, the
 * PageTables growth itself; when neither can be measured, null with the
 * reason. VmPTE (per process) counts every level on every kernel. */
#ifndef MSHARE_BENCH_PT_LEVELS_H
#define MSHARE_BENCH_PT_LEVELS_H

#include <stdbool.h>
#include <stdint.h>

#include "ktrace.h"

#define PT_LEVELS_PUD_SYMBOL "__pud_alloc"

struct pt_levels {
	/* 1: PageTables counts PUD pages, 0: it leaves them out, -1: unknown. */
	int meminfo_has_pud;
	int agreeing, tries;           /* the probe's agreement */
	long vmpte_pages, meminfo_pages; /* the agreed growth of one probe */
	char probe_note[200];
	/* The counter between baseline and parked. */
	struct ktrace_counter counter;
	bool counting;
	bool pud_measured;
	uint64_t pud_added, pud_missed;
	char pud_error[300];
};

/* Parent, before any worker: fills meminfo_has_pud and the probe's note. */
void pt_levels_probe(struct pt_levels *p);
/* At the baseline: arms the counter when PageTables leaves PUD pages out. */
void pt_levels_window_start(struct pt_levels *p);
/* At the parked point: reads and removes the counter. */
void pt_levels_window_stop(struct pt_levels *p);
/* Removes the counter if still armed (a run that ends early). */
void pt_levels_cleanup(struct pt_levels *p);
/* The all-levels system figure from the PageTables growth, into *out;
 * false (and *out untouched) when it cannot be known. */
bool pt_levels_all(const struct pt_levels *p, int64_t meminfo_delta, int64_t *out);
/* "pte+pmd+pud" or "pte+pmd" or NULL (unknown): what PageTables holds. */
const char *pt_levels_meminfo_text(const struct pt_levels *p);

#endif
