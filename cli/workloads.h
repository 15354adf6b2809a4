/* workloads.h - the program's table of workloads (cli/workloads.c). */
#ifndef CLI_WORKLOADS_H
#define CLI_WORKLOADS_H

#include "workload.h"

/* Every workload of the program, NULL-terminated. */
extern const struct workload_ops *const workload_table[];

#endif
