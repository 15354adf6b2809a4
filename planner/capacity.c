/* capacity.c - page-table totals, memory demand and the fit verdict. */
#include <string.h>

#include "capacity.h"
#include "units.h"

void capacity_compute(const struct pt_cost *cost, const struct capacity_inputs *in,
		      struct capacity *out)
{
	bool sga_in_ram;
	uint64_t fixed, per_process;
	uint64_t limit = in->process_limit ? in->process_limit : PT_PID_MAX_LIMIT;
	const char *limit_name = in->process_limit ? in->process_limit_name : "pid_max_limit";
	/* Processes beyond the measured ones (the caller keeps processes >= measured). */
	uint64_t added = in->processes > in->measured_processes ? in->processes - in->measured_processes : 0;

	memset(out, 0, sizeof(*out));
	out->cost = *cost;
	out->pt_per_process_bytes = units_sat_add(pt_cost_per_process_pages(cost) * PT_PAGE_BYTES,
						  in->own_pt_bytes_per_process);
	out->pt_shared_bytes = pt_cost_shared_pages(cost) * PT_PAGE_BYTES;
	out->pt_total_bytes = units_sat_add(units_sat_add(units_sat_mul(out->pt_per_process_bytes, added),
							  in->measured_pt_bytes), out->pt_shared_bytes);
	out->pte_per_process_bytes = cost->per_process_pages[PT_LEVEL_PTE] * PT_PAGE_BYTES;
	out->pte_total_bytes = units_sat_add(units_sat_add(units_sat_mul(out->pte_per_process_bytes, added),
							   in->measured_pte_bytes),
					     cost->shared_pages[PT_LEVEL_PTE] * PT_PAGE_BYTES);
	out->vmpte_per_process_bytes = pt_cost_vmpte_pages(cost) * PT_PAGE_BYTES;

	if (in->sga == SGA_PLACEMENT_DEFAULT)
		sga_in_ram = cost->mode != PT_MODE_DAX_2M && cost->mode != PT_MODE_DAX_1G;
	else
		sga_in_ram = in->sga == SGA_PLACEMENT_RAM;
	out->sga_ram_bytes = sga_in_ram ? cost->mapped_bytes : 0;
	out->private_total_bytes = units_sat_mul(in->private_bytes, in->processes);
	out->demand_bytes = units_sat_add(units_sat_add(out->pt_total_bytes, out->sga_ram_bytes),
					  out->private_total_bytes);
	out->fits = out->demand_bytes <= in->ram_bytes;
	if (out->fits)
		out->headroom_bytes = in->ram_bytes - out->demand_bytes;
	else
		out->shortfall_bytes = out->demand_bytes - in->ram_bytes;
	out->ram_fraction = (double)out->pt_total_bytes / (double)in->ram_bytes;

	/* Largest N with fixed + (N - measured) x per_process <= RAM. */
	fixed = units_sat_add(units_sat_add(out->pt_shared_bytes, out->sga_ram_bytes),
			      units_sat_add(in->measured_pt_bytes,
					    units_sat_mul(in->private_bytes, in->measured_processes)));
	per_process = units_sat_add(out->pt_per_process_bytes, in->private_bytes);
	out->max_limited_by = "ram";
	if (fixed > in->ram_bytes) {
		out->max_processes = 0;
	} else if (per_process == 0) {
		out->max_processes = limit;
		out->max_limited_by = limit_name;
	} else {
		out->max_processes = units_sat_add(in->measured_processes, (in->ram_bytes - fixed) / per_process);
		if (out->max_processes >= limit) {
			out->max_processes = limit;
			out->max_limited_by = limit_name;
		}
	}
}
