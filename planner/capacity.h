/* capacity.h - will N processes mapping the region fit in RAM?
 *
 * Memory demand = page tables (per process x N + shared once)
 *               + the region's data, when it lives in RAM
 *               + private memory per process x N.
 * The region's data counts against RAM in every mode except dax-2m, whose
 * data lives on the DAX device; --sga-in-ram yes|no overrides that.
 * Nothing else (kernel, page cache, other programs) is modelled.
 */
#ifndef MSHARE_BENCH_PLANNER_CAPACITY_H
#define MSHARE_BENCH_PLANNER_CAPACITY_H

#include <stdbool.h>
#include <stdint.h>

#include "pt_model.h"

enum sga_placement { SGA_PLACEMENT_DEFAULT, SGA_PLACEMENT_RAM, SGA_PLACEMENT_NOT_RAM };

struct capacity_inputs {
	uint64_t processes;
	uint64_t ram_bytes;
	uint64_t private_bytes;      /* per process, beyond the region */
	enum sga_placement sga;
	/* plan --pid: processes running now, each measured and modelled on
	 * its own; their page tables (each page once, own page tables
	 * included; the region's PTE pages apart) are given whole. The
	 * processes beyond them each add the modelled per-process pages plus
	 * own_pt_bytes_per_process (their page tables outside the region).
	 * All 0 when not given: every process costs the same. */
	uint64_t measured_processes;
	uint64_t measured_pt_bytes, measured_pte_bytes;
	uint64_t own_pt_bytes_per_process;
	/* The most processes there can be: this host's pid_max or threads-max
	 * when the plan is for this host; 0: the kernel's PID_MAX_LIMIT. */
	uint64_t process_limit;
	const char *process_limit_name;  /* "pid_max", "threads-max" */
};

struct capacity {
	struct pt_cost cost;
	uint64_t pt_per_process_bytes;   /* every additional process adds this (own page tables included) */
	uint64_t pt_shared_bytes;        /* once */
	uint64_t pt_total_bytes;         /* per process x N + shared */
	uint64_t pte_per_process_bytes;  /* PTE level only */
	uint64_t pte_total_bytes;        /* PTE level, per process x N + shared */
	uint64_t vmpte_per_process_bytes;/* what one process's VmPTE shows for the region */
	uint64_t sga_ram_bytes;          /* region data counted in RAM */
	uint64_t private_total_bytes;
	uint64_t demand_bytes;
	bool fits;
	uint64_t headroom_bytes;         /* RAM - demand when it fits */
	uint64_t shortfall_bytes;        /* demand - RAM when it does not */
	double ram_fraction;             /* page tables / RAM */
	uint64_t max_processes;
	const char *max_limited_by;      /* "ram", "pid_max_limit", or process_limit_name */
};

void capacity_compute(const struct pt_cost *cost, const struct capacity_inputs *in,
		      struct capacity *out);

#endif
