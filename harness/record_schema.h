/* record_schema.h - the run record as JSON (record_schema.c). */
#ifndef MSHARE_BENCH_RECORD_SCHEMA_H
#define MSHARE_BENCH_RECORD_SCHEMA_H

#include "json.h"
#include "run.h"
#include "run_result.h"

void record_json(struct json_writer *w, const struct run_state *rs, const struct run_result *r);

#endif
