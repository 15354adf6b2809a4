/*
 * pt-accounting: which page-table pages this kernel counts in
 * /proc/meminfo's PageTables, measured against the process's VmPTE.
 *
 * Maps one page in an empty 512 GiB slot (a PGD entry of 4-level paging,
 * so that the kernel allocates a PUD, a PMD and a PTE page for it), touches
 * it, and reads VmPTE and PageTables before and after; unmapping frees the
 * three again. Linux 6.1 counts PMD and PTE pages in PageTables but not PUD
 * pages (VmPTE counts all three); later kernels count PUD pages too.
 * PageTables is a vmstat counter whose per-CPU parts reach /proc/meminfo
 * only when folded (every second, or in batches): each reading first folds
 * them by writing /proc/sys/vm/stat_refresh (root only; without it the
 * increments are unreliable and the probe says so). PageTables is
 * system-wide, so another process may move it meanwhile: the probe runs 7
 * times and reports the pair of increments most tries agree on.
 *
 * Prints one line, "vmpte_pages=A pagetables_pages=B agreeing=K of=7", and
 * exits 0; exits 1 when no pair was seen twice or nothing could be mapped
 * (the reason on stderr), 2 on usage errors.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "proc-kb.h"

#define SLOT (1UL << 39)
#define TRIES 7

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

static int refreshed = 1;

/* PageTables in kB, the per-CPU counts folded in first. */
static long pagetables_kb(void)
{
	if (mt_vmstat_refresh() != 0)
		refreshed = 0;
	return mt_proc_kb("/proc/meminfo", "PageTables");
}

/* A 512 GiB slot below 128 TiB that none of this process's mappings
 * touches, or 0. */
static unsigned long empty_slot(void)
{
	static unsigned char used[256];
	char line[512];
	unsigned long a, b;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &a, &b) == 2 && a < 256 * SLOT)
			for (unsigned long s = a / SLOT; s <= (b - 1) / SLOT && s < 256; s++)
				used[s] = 1;
	fclose(f);
	for (unsigned long s = 200; s > 1; s--)
		if (!used[s])
			return s * SLOT;
	return 0;
}

int main(int argc, char **argv)
{
	long dv[TRIES], dp[TRIES];
	unsigned long addr;
	int best = -1, best_count = 0;

	(void)argv;
	if (argc != 1) {
		fprintf(stderr, "usage: pt-accounting (no arguments)\n");
		return 2;
	}
	addr = empty_slot();
	if (!addr) {
		fprintf(stderr, "pt-accounting: no empty 512 GiB slot found in /proc/self/maps\n");
		return 1;
	}
	for (int t = 0; t < TRIES; t++) {
		long v0 = mt_proc_kb("/proc/self/status", "VmPTE"), p0 = pagetables_kb();
		char *p = mmap((void *)addr, 4096, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		long v1, p1;

		if (p == MAP_FAILED || (unsigned long)p != addr) {
			fprintf(stderr, "pt-accounting: mmap at %#lx: %s\n", addr,
				p == MAP_FAILED ? strerror(errno) : "placed elsewhere");
			return 1;
		}
		*(volatile char *)p = 1;
		v1 = mt_proc_kb("/proc/self/status", "VmPTE");
		p1 = pagetables_kb();
		munmap(p, 4096);
		if (v0 < 0 || v1 < 0 || p0 < 0 || p1 < 0) {
			fprintf(stderr, "pt-accounting: no VmPTE in /proc/self/status or PageTables in /proc/meminfo\n");
			return 1;
		}
		dv[t] = (v1 - v0) / 4;
		dp[t] = (p1 - p0) / 4;
	}
	for (int t = 0; t < TRIES; t++) {
		int count = 0;

		for (int u = 0; u < TRIES; u++)
			count += dv[u] == dv[t] && dp[u] == dp[t];
		if (count > best_count) {
			best = t;
			best_count = count;
		}
	}
	if (!refreshed) {
		fprintf(stderr, "pt-accounting: cannot write /proc/sys/vm/stat_refresh (root needed): PageTables "
				"lags by the per-CPU counts, the increments are not reliable\n");
		return 1;
	}
	if (best_count < 2) {
		fprintf(stderr, "pt-accounting: no two of %d tries agreed (PageTables moved by other processes)\n", TRIES);
		return 1;
	}
	printf("vmpte_pages=%ld pagetables_pages=%ld agreeing=%d of=%d\n", dv[best], dp[best], best_count, TRIES);
	return 0;
}
