/* plan_report.h - printing a capacity plan: text table, JSON, gnuplot series. */
#ifndef MSHARE_BENCH_PLANNER_PLAN_REPORT_H
#define MSHARE_BENCH_PLANNER_PLAN_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "capacity.h"
#include "deploy.h"
#include "json.h"
#include "nodes.h"
#include "pt_model.h"

struct plan_request {
	struct pt_region region;
	struct capacity_inputs inputs;
	bool ram_from_host;       /* --ram not given: this machine's MemTotal */
	enum deploy_id modes[DEPLOY_COUNT];
	int mode_count;
	bool private_given;       /* --private given (else 0, and the output says so) */
	/* Limits of this host on the process count (the plan is for this
	 * host when --ram is not given, or with --pid): 0 = not applied. */
	uint64_t pid_max, threads_max;
	bool host_limits;
	char touch_note[512];     /* how the DBA's units became the touched part */
	char unit_note[3][160];   /* sizes given without a unit, read as bytes */
	/* --processes N,N,...: a table over these counts (count_n > 1). */
	uint64_t counts[32];
	int count_n;
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

/* The row of deployment d: its model, its data's place and the capacity.
 * 0, or -1 with the reason in row->error. */
int plan_compute_row(const struct plan_request *req, enum deploy_id d, const struct pt_region *r,
		     const struct capacity_inputs *in, struct plan_row *row);

/* Row's capacity at n processes. */
void plan_capacity_at(const struct plan_request *req, const struct plan_row *row, enum deploy_id d, uint64_t n,
		      struct capacity *c);

void plan_report_text(FILE *out, const struct plan_request *req, const struct plan_row *rows);
/* The plan as a JSON object: the top-level value when key is NULL, else
 * the member key of the object w is in. */
void plan_report_json(struct json_writer *w, const char *key, const struct plan_request *req,
		      const struct plan_row *rows);
/* Page-table bytes (all levels, each page once) vs process count, one
 * column per mode, log-spaced counts from 1 to req->inputs.processes. */
void plan_report_series(FILE *out, const struct plan_request *req, const struct plan_row *rows);


#endif
