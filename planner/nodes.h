/* nodes.h - the capacity plan per NUMA node (`plan --nodes N`).
 *
 * A node's memory can run out before the machine's: the machine is split
 * in N nodes of equal RAM, the processes are spread evenly over them (node
 * 0 takes the remainder), each process's own page tables and private
 * memory are on its node (the kernel allocates a page-table page on the
 * node of the task that faults, under local policy), page tables shared by
 * all processes (mshare's one set, hugetlb's shared PMD pages) on ONE node
 * (node 0, which also has the most processes: the worst case; the kernel
 * puts each shared page where the first process to fault its range runs,
 * so a real run may split them), and the region's data interleaved over
 * the nodes or on one node (--sga-node).
 */
#ifndef MSHARE_BENCH_PLANNER_NODES_H
#define MSHARE_BENCH_PLANNER_NODES_H

#include <stdbool.h>
#include <stdint.h>

#include "capacity.h"

#define PLAN_MAX_NODES 64

struct node_capacity {
	uint64_t processes;
	uint64_t pt_bytes;       /* per-process page tables of its processes + shared ones on it */
	uint64_t sga_bytes;      /* region data on it */
	uint64_t private_bytes;
	uint64_t demand_bytes;
	uint64_t ram_bytes;
	bool fits;
};

struct nodes_plan {
	unsigned nodes;
	int sga_node;            /* -1: interleaved */
	struct node_capacity node[PLAN_MAX_NODES];
	bool fits;               /* every node */
	uint64_t max_processes;  /* largest count with every node fitting */
};

/* Per-node figures of one mode's machine-wide capacity c (from in). */
void nodes_compute(const struct capacity *c, const struct capacity_inputs *in, unsigned nodes, int sga_node,
		   struct nodes_plan *out);

#endif
