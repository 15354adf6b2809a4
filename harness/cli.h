/* cli.h - the options of `mshare-bench run`. */
#ifndef MSHARE_BENCH_CLI_H
#define MSHARE_BENCH_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "backend.h"
#include "placement.h"
#include "workload.h"

#define DEFAULT_REGION_ADDR 0x20000000000ull /* 2 TiB: its own 512 GiB page-table slot */
#define REGION_ALIGN (512ull << 30)
#define DEFAULT_SEED 1
#define DEFAULT_DURATION_NS (10ull * 1000000000ull)

struct run_config {
	const struct backend_ops *backend;
	const struct workload_ops *workload;
	unsigned workers;
	uint64_t size;
	uint64_t addr;
	bool addr_given;
	enum page_mode page;
	bool write;
	const char *path;
	const char *out;      /* JSON (or CSV if it ends in .csv); NULL = stdout */
	const char *csv;      /* CSV file to append a row to */
	uint64_t seed;
	uint64_t duration_ns; /* budget for workloads with operations */
	bool duration_given;
	uint64_t max_ops;
	bool skip_memory_check;
	bool reuse_path;        /* --reuse-path */
	bool quiet;           /* no human summary */
	bool kernel_fault_time; /* --kernel-fault-time: harness/ktrace.h */
	bool hw_instructions;   /* --hw-instructions: harness/hw_counter.h */
	bool check_only;      /* --check: validate the options, run nothing */
	struct numa_options numa; /* --cpus, --mem-policy */
	/* The workload's params as given (defaults filled in), parsed once
	 * in the parent by workload_prepare() into params[] and the
	 * workload's own config, which the workers read. */
	const char *param_values[WORKLOAD_MAX_PARAMS];
	bool param_given[WORKLOAD_MAX_PARAMS];
	union workload_value params[WORKLOAD_MAX_PARAMS];
	_Alignas(max_align_t) unsigned char workload_config[WORKLOAD_CONFIG_BYTES];
};

/* Parse argv of `run` (argv[0] == "run"). 0 = go, 1 = help was printed,
 * -1 = bad input (message in err, naming the value). */
int cli_parse_run(int argc, char **argv, struct run_config *cfg, char *err, size_t err_len);
void cli_usage(FILE *out);

#endif
