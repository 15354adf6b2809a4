/* accuracy.h - how far the page-table model has been checked: against the
 * reference runs committed under results/ (`plan --calibrate`), per
 * page-table shape and platform, with the worst error seen. The table is
 * generated (planner/gen-accuracy.py) and checked against the runs by
 * tests/planner/accuracy.sh; `plan` prints it with every plan. */
#ifndef MSHARE_BENCH_PLANNER_ACCURACY_H
#define MSHARE_BENCH_PLANNER_ACCURACY_H

#include <stdint.h>
#include <stdio.h>

#include "json.h"

struct accuracy_row {
	const char *shape, *platform;
	unsigned records, runs;
	uint64_t size_min, size_max;
	unsigned workers_min, workers_max;
	double worst_pct[3];     /* VmPTE region/worker, VmPTE sum, PageTables delta */
	unsigned compared[3], within[3];
};

extern const struct accuracy_row accuracy_rows[];
extern const unsigned accuracy_row_count;

void accuracy_print(FILE *out);
void accuracy_json(struct json_writer *w, const char *key);

#endif
