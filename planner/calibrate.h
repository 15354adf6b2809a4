/* calibrate.h - the page-table model against measured run records.
 *
 * For each run record (one JSON file written by `mshare-bench run`), model
 * the same point - backend and page size obtained -> mode, config.size_bytes,
 * config.addr, the workers measured, the touched part implied by the
 * workload - and compare three views:
 *   region/worker  VmPTE per worker minus its baseline (region mapped,
 *                  untouched) vs the modelled VmPTE pages per process;
 *   VmPTE sum      sum of VmPTE over workers vs workers x (measured
 *                  baseline + modelled VmPTE pages): the baseline the
 *                  harness measured is part of the model here;
 *   PageTables     /proc/meminfo delta from the untouched point to the
 *                  parked point vs workers x per-process pages + shared
 *                  pages (each page once). System-wide.
 * Each comparison prints model, measured and error; where the error
 * exceeds the tolerance the output says why (from what the record shows).
 */
#ifndef MSHARE_BENCH_PLANNER_CALIBRATE_H
#define MSHARE_BENCH_PLANNER_CALIBRATE_H

#include <stdbool.h>
#include <stdio.h>

#define CALIBRATE_TOLERANCE_PCT 5.0

enum calibrate_format { CALIBRATE_TEXT, CALIBRATE_JSON, CALIBRATE_SERIES };

/* PATH: a run directory (every JSON file in its records/ directory, else in it) or one record.
 * Returns 0 when every record was read (whatever the errors), 2 when PATH
 * holds no run record or a record cannot be read (message on stderr). */
int calibrate_main(const char *path, enum calibrate_format format, FILE *out);

#endif
