/* plan_pid.h - `mshare-bench plan --pid PID` (see plan_pid.c). */
#ifndef MSHARE_BENCH_PLANNER_PLAN_PID_H
#define MSHARE_BENCH_PLANNER_PLAN_PID_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "plan_report.h"

struct plan_pid_args {
	pid_t pid;
	int64_t shmid;               /* --shmid (by_shmid) */
	bool by_shmid;
	const char *file;            /* --file PATH, or NULL */
	uint64_t segment;            /* --segment ADDR, or 0 */
	const char *save_touch_map;  /* --save-touch-map FILE, or NULL */
	bool have_processes, modes_given, json;
	bool touch_given;            /* --touch-map or --touch-fraction: added processes touch that */
};

/* 0 done; 1 output error; 2 bad input or nothing to measure (message printed). */
int plan_pid_main(struct plan_request *req, const struct plan_pid_args *a, FILE *out);

#endif
