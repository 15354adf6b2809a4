/* page_probe.h - the size of the mappings a fault installs in the region,
 * for backings whose smaps cannot say (DAX). See page_probe.c. */
#ifndef MSHARE_BENCH_PAGE_PROBE_H
#define MSHARE_BENCH_PAGE_PROBE_H
#include <stdbool.h>

#include "backend.h"

enum page_probe_result {
	PAGE_PROBE_NOT_RUN = 0,
	PAGE_PROBE_PMD,          /* one fault mapped the whole 2 MiB */
	PAGE_PROBE_PTE,          /* an access 1 MiB further on faulted again: 4 KiB */
	PAGE_PROBE_INCONCLUSIVE, /* the first access did not fault, or attach failed */
	PAGE_PROBE_PUD,          /* nor did one 512 MiB on: one fault mapped 1 GiB */
};

/* Fork a child that attaches the region as a worker would, accesses (reads,
 * or writes when `write`) its first byte and the byte 1 MiB on, and counts
 * the second access's minor faults; when that took none and the region is
 * 1 GiB or more, also the byte 512 MiB on (PMD or PUD). NOT_RUN when the
 * region is under 2 MiB. */
enum page_probe_result page_probe_run(const struct backend_ops *backend, const struct region *r, bool write);
const char *page_probe_describe(enum page_probe_result result);
#endif
