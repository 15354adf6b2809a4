/* plan_plot.h - `plan ... --plot FILE.svg`: the user's own scenario drawn
 * with gnuplot (page tables and memory demand vs process count per mode,
 * the RAM line, the counts asked for marked). MODELLED, and the figure
 * says so. */
#ifndef MSHARE_BENCH_PLANNER_PLAN_PLOT_H
#define MSHARE_BENCH_PLANNER_PLAN_PLOT_H

#include "plan_report.h"

/* 0 done; 2 with a message on stderr (gnuplot missing, cannot write). */
int plan_plot(const char *path, const struct plan_request *req, const struct plan_row *rows);

#endif
