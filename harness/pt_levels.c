/* pt_levels.c - which levels PageTables counts here, and the PUD pages it
 * leaves out (see pt_levels.h). */
#include "pt_levels.h"
#include "procfs.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SLOT (1ULL << 39)
#define TRIES 7

/* A 512 GiB slot below 128 TiB that none of this process's mappings
 * touches (nor its neighbours', so no shared upper table), or 0. */
static uint64_t empty_slot(void)
{
	unsigned char used[256] = { 0 };
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a, b;
		if (sscanf(line, "%llx-%llx", &a, &b) == 2 && a < 256 * SLOT)
			for (unsigned long long s = a / SLOT; s <= (b - 1) / SLOT && s < 256; s++)
				used[s] = 1;
	}
	fclose(f);
	for (unsigned s = 255; s >= 8; s--)
		if (!used[s] && !used[s - 1] && (s == 255 || !used[s + 1]))
			return s * SLOT;
	return 0;
}

void pt_levels_probe(struct pt_levels *p)
{
	long seen_v[TRIES], seen_m[TRIES];
	int n = 0;

	memset(p, 0, sizeof(*p));
	p->meminfo_has_pud = -1;
	p->tries = TRIES;
	if (!procfs_stat_refresh()) {
		snprintf(p->probe_note, sizeof(p->probe_note),
			 "not probed: /proc/sys/vm/stat_refresh cannot be written (root only), so PageTables lags");
		return;
	}
	for (int t = 0; t < TRIES; t++) {
		uint64_t slot = empty_slot();
		if (!slot) {
			snprintf(p->probe_note, sizeof(p->probe_note), "not probed: no empty 512 GiB slot");
			return;
		}
		int64_t v0 = procfs_status_bytes(getpid(), "VmPTE");
		procfs_stat_refresh();
		int64_t m0 = procfs_meminfo_bytes("PageTables");
		void *a = mmap((void *)slot, 4096, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (a == MAP_FAILED || a != (void *)slot) {
			if (a != MAP_FAILED)
				munmap(a, 4096);
			snprintf(p->probe_note, sizeof(p->probe_note), "not probed: mmap in an empty slot: %s",
				 strerror(errno));
			return;
		}
		*(volatile char *)a = 1;
		int64_t v1 = procfs_status_bytes(getpid(), "VmPTE");
		procfs_stat_refresh();
		int64_t m1 = procfs_meminfo_bytes("PageTables");
		munmap(a, 4096);
		if (v0 < 0 || v1 < 0 || m0 < 0 || m1 < 0) {
			snprintf(p->probe_note, sizeof(p->probe_note), "not probed: VmPTE or PageTables unreadable");
			return;
		}
		seen_v[n] = (long)((v1 - v0) / 4096);
		seen_m[n] = (long)((m1 - m0) / 4096);
		n++;
	}
	int best = -1, best_k = 0;
	for (int i = 0; i < n; i++) {
		int k = 0;
		for (int j = 0; j < n; j++)
			k += seen_v[j] == seen_v[i] && seen_m[j] == seen_m[i];
		if (k > best_k)
			best_k = k, best = i;
	}
	p->agreeing = best_k;
	if (best < 0 || best_k < 2) {
		snprintf(p->probe_note, sizeof(p->probe_note), "not probed: no two of %d tries agreed", n);
		return;
	}
	p->vmpte_pages = seen_v[best];
	p->meminfo_pages = seen_m[best];
	/* One page in an empty slot: VmPTE grows by its PUD, PMD and PTE page. */
	if (p->vmpte_pages != 3 || (p->meminfo_pages != 3 && p->meminfo_pages != 2)) {
		snprintf(p->probe_note, sizeof(p->probe_note),
			 "inconclusive: one page in an empty 512 GiB slot grew VmPTE by %ld pages, PageTables by %ld "
			 "(%d of %d tries)", p->vmpte_pages, p->meminfo_pages, best_k, n);
		return;
	}
	p->meminfo_has_pud = p->meminfo_pages == 3;
	snprintf(p->probe_note, sizeof(p->probe_note),
		 "one page in an empty 512 GiB slot grew VmPTE by 3 pages (PUD, PMD, PTE) and PageTables by %ld "
		 "(%d of %d tries agreed)", p->meminfo_pages, best_k, n);
}

void pt_levels_window_start(struct pt_levels *p)
{
	char err[200];

	if (p->meminfo_has_pud != 0)
		return;
	if (ktrace_count_start(&p->counter, PT_LEVELS_PUD_SYMBOL, err, sizeof(err)) != 0) {
		snprintf(p->pud_error, sizeof(p->pud_error), "kprobe on %s: %s", PT_LEVELS_PUD_SYMBOL, err);
		return;
	}
	p->counting = true;
}

void pt_levels_window_stop(struct pt_levels *p)
{
	char err[200];

	if (!p->counting)
		return;
	p->counting = false;
	if (ktrace_count_stop(&p->counter, &p->pud_added, &p->pud_missed, err, sizeof(err)) != 0) {
		snprintf(p->pud_error, sizeof(p->pud_error), "kprobe on %s: %s", PT_LEVELS_PUD_SYMBOL, err);
		return;
	}
	if (p->pud_missed) {
		snprintf(p->pud_error, sizeof(p->pud_error), "kprobe on %s missed %llu calls", PT_LEVELS_PUD_SYMBOL,
			 (unsigned long long)p->pud_missed);
		return;
	}
	p->pud_measured = true;
}

void pt_levels_cleanup(struct pt_levels *p)
{
	if (p->counting) {
		p->counting = false;
		ktrace_count_stop(&p->counter, NULL, NULL, NULL, 0);
	}
}

bool pt_levels_all(const struct pt_levels *p, int64_t meminfo_delta, int64_t *out)
{
	if (p->meminfo_has_pud == 1) {
		*out = meminfo_delta;
		return true;
	}
	if (p->meminfo_has_pud == 0 && p->pud_measured) {
		*out = meminfo_delta + (int64_t)p->pud_added * 4096;
		return true;
	}
	return false;
}

const char *pt_levels_meminfo_text(const struct pt_levels *p)
{
	return p->meminfo_has_pud == 1 ? "pte+pmd+pud" : p->meminfo_has_pud == 0 ? "pte+pmd" : NULL;
}
