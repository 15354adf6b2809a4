/* record.h - the run record in three steps (the entry points, record_write
 * and friends, are in run.h):
 *
 *   record.c         merges the workers' figures into one struct run_result,
 *                    where every derived figure is computed once, and prints
 *                    the human summary from it;
 *   record_schema.c  the JSON record (schema_version RECORD_SCHEMA_VERSION),
 *                    which only prints run_state and run_result;
 *   record_files.c   the outputs: --out written atomically, --csv appended.
 *
 * What each field means, once: results/README.md ("Reading a run record").
 */
#ifndef MSHARE_BENCH_RECORD_H
#define MSHARE_BENCH_RECORD_H

#include "run.h"
#include "run_result.h"

void record_result(const struct run_state *rs, struct run_result *r);
void record_summary(const struct run_state *rs, const struct run_result *r);

#endif
