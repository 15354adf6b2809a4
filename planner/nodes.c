/* nodes.c - the capacity plan per NUMA node; see nodes.h. */
#include <string.h>

#include "nodes.h"
#include "units.h"

/* Node k's share of total spread over n (node 0 takes the remainder). */
static uint64_t share(uint64_t total, unsigned n, unsigned k)
{
	return total / n + (k == 0 ? total % n : 0);
}

/* Processes on node k of n: the remainder goes to the first nodes. */
static uint64_t procs_on(uint64_t processes, unsigned n, unsigned k)
{
	return processes / n + (k < processes % n ? 1 : 0);
}

static bool fill(const struct capacity *c, const struct capacity_inputs *in, unsigned n, int sga_node,
		 uint64_t processes, struct node_capacity *node)
{
	bool all = true;
	for (unsigned k = 0; k < n; k++) {
		struct node_capacity *x = &node[k];
		x->processes = procs_on(processes, n, k);
		x->pt_bytes = units_sat_add(units_sat_mul(c->pt_per_process_bytes, x->processes),
					    k == 0 ? c->pt_shared_bytes : 0);
		x->sga_bytes = sga_node < 0 ? share(c->sga_ram_bytes, n, k) : (int)k == sga_node ? c->sga_ram_bytes : 0;
		x->private_bytes = units_sat_mul(in->private_bytes, x->processes);
		x->demand_bytes = units_sat_add(units_sat_add(x->pt_bytes, x->sga_bytes), x->private_bytes);
		x->ram_bytes = share(in->ram_bytes, n, k);
		x->fits = x->demand_bytes <= x->ram_bytes;
		all &= x->fits;
	}
	return all;
}

void nodes_compute(const struct capacity *c, const struct capacity_inputs *in, unsigned nodes, int sga_node,
		   struct nodes_plan *out)
{
	static struct node_capacity scratch[PLAN_MAX_NODES];
	memset(out, 0, sizeof(*out));
	out->nodes = nodes;
	out->sga_node = sga_node;
	out->fits = fill(c, in, nodes, sga_node, in->processes, out->node);
	/* Largest process count with every node fitting: the demand of each
	 * node grows with the count, so bisect. */
	uint64_t lo = 0, hi = in->process_limit ? in->process_limit : PT_PID_MAX_LIMIT;
	if (!fill(c, in, nodes, sga_node, 0, scratch)) {
		out->max_processes = 0;
		return;
	}
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo + 1) / 2;
		if (fill(c, in, nodes, sga_node, mid, scratch))
			lo = mid;
		else
			hi = mid - 1;
	}
	out->max_processes = lo;
}
