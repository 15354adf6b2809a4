/* plan_report.h - printing a capacity plan: text table, JSON, gnuplot series. */
#ifndef MSHARE_BENCH_PLANNER_PLAN_REPORT_H
#define MSHARE_BENCH_PLANNER_PLAN_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "capacity.h"
#include "json.h"
#include "nodes.h"
#include "pt_model.h"

struct plan_request {
	struct pt_region region;
	struct capacity_inputs inputs;
	bool ram_from_host;       /* --ram not given: this machine's MemTotal */
	enum pt_mode modes[PT_MODE_COUNT];
	int mode_count;
	unsigned nodes;           /* --nodes: 0 = no per-node view */
	int sga_node;             /* --sga-node: -1 = interleaved */
};

/* One row per requested mode; valid == false carries why the mode cannot
 * map this region. */
struct plan_row {
	bool valid;
	char error[256];
	struct capacity cap;
	struct nodes_plan nodes;  /* with --nodes */
};

void plan_report_text(FILE *out, const struct plan_request *req, const struct plan_row *rows);
/* The plan as a JSON object: the top-level value when key is NULL, else
 * the member key of the object w is in. */
void plan_report_json(struct json_writer *w, const char *key, const struct plan_request *req,
		      const struct plan_row *rows);
/* Page-table bytes (all levels, each page once) vs process count, one
 * column per mode, log-spaced counts from 1 to req->inputs.processes. */
void plan_report_series(FILE *out, const struct plan_request *req, const struct plan_row *rows);


#endif
