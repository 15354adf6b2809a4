/* plan_report.c - the plan as text for a person, JSON for a program, and a
 * data table for gnuplot. Every output says it is a model. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "json.h"
#include "plan_report.h"
#include "units.h"

#define FMT(b) units_format_bytes((b), (char[32]){ 0 }, 32)

static const char *sga_placement_text(const struct plan_request *req)
{
	switch (req->inputs.sga) {
	case SGA_PLACEMENT_RAM: return "ram";
	case SGA_PLACEMENT_NOT_RAM: return "not-ram";
	default: return "default";
	}
}

static void print_inputs(FILE *out, const struct plan_request *req)
{
	const struct pt_region *r = &req->region;

	fprintf(out, "mshare-bench plan: MODELLED page-table memory (a model, not a measurement)\n");
	if (r->touch_count) {
		uint64_t bytes = 0;

		for (size_t i = 0; i < r->touch_count; i++)
			bytes += r->touch[i].end - r->touch[i].start;
		fprintf(out, "  region %s at 0x%" PRIx64 "%s, %" PRIu64 " processes each touching %s of it "
			"(%.4g%%, a touch map of %zu range%s)\n",
			FMT(r->size), r->addr, r->addr % PT_PUD_SPAN ? " (not 512 GiB-aligned)" : "",
			req->inputs.processes, FMT(bytes), (double)bytes / (double)r->size * 100.0, r->touch_count,
			r->touch_count == 1 ? "" : "s");
	} else {
		fprintf(out, "  region %s at 0x%" PRIx64 "%s, %" PRIu64 " processes each touching %.4g%% of it\n",
			FMT(r->size), r->addr, r->addr % PT_PUD_SPAN ? " (not 512 GiB-aligned)" : "",
			req->inputs.processes, r->touch_fraction * 100.0);
	}
	if (r->around_known)
		fprintf(out, "  page-table pages the mappings around the region need anyway are left out (see each mode)\n");
	else if (r->addr % PT_PUD_SPAN)
		fprintf(out, "  nothing is known about what lies around the region: every page-table page it reaches is "
			"charged to it (at a real address some may serve neighbours too; plan --pid knows them)\n");
	fprintf(out, "  RAM %s%s, private memory %s per process, region data in RAM: %s\n\n",
		FMT(req->inputs.ram_bytes), req->ram_from_host ? " (this host's MemTotal; use --ram)" : "",
		FMT(req->inputs.private_bytes),
		req->inputs.sga == SGA_PLACEMENT_DEFAULT ? "yes, except dax-2m (data on the DAX device)"
		: req->inputs.sga == SGA_PLACEMENT_RAM ? "yes, all modes" : "no, all modes");
}

/* --nodes: every mode's demand on each node. */
static void print_nodes(FILE *out, const struct plan_request *req, const struct plan_row *rows)
{
	char data[48];
	if (req->sga_node < 0)
		snprintf(data, sizeof(data), "interleaved over the nodes");
	else
		snprintf(data, sizeof(data), "all on node %d", req->sga_node);
	fprintf(out, "\nPer NUMA node (MODELLED; --nodes %u): RAM %s per node, processes spread evenly (node 0 takes "
		"the remainder), each one's page tables and private memory on its node, shared page tables on node 0 "
		"(worst case), region data %s:\n", req->nodes, FMT(req->inputs.ram_bytes / req->nodes), data);
	fprintf(out, "%-11s %4s %9s %11s %11s %11s %11s %11s  %s\n", "mode", "node", "processes", "PT on node",
		"data", "private", "demand", "node RAM", "verdict");
	for (int i = 0; i < req->mode_count; i++) {
		const struct plan_row *row = &rows[i];
		if (!row->valid)
			continue;
		for (unsigned k = 0; k < row->nodes.nodes; k++) {
			const struct node_capacity *x = &row->nodes.node[k];
			char verdict[64];
			if (x->fits)
				snprintf(verdict, sizeof(verdict), "fits, %s headroom", FMT(x->ram_bytes - x->demand_bytes));
			else
				snprintf(verdict, sizeof(verdict), "DOES NOT FIT, %s short", FMT(x->demand_bytes - x->ram_bytes));
			fprintf(out, "%-11s %4u %9" PRIu64 " %11s %11s %11s %11s %11s  %s\n",
				k == 0 ? pt_mode_name(req->modes[i]) : "", k, x->processes, FMT(x->pt_bytes),
				FMT(x->sga_bytes), FMT(x->private_bytes), FMT(x->demand_bytes), FMT(x->ram_bytes), verdict);
		}
		const struct capacity *c = &row->cap;
		fprintf(out, "%-11s      every node %s; max procs with every node fitting %" PRIu64 "\n", "",
			row->nodes.fits ? "fits" : "does NOT fit", row->nodes.max_processes);
		if (row->nodes.max_processes < c->max_processes)
			fprintf(out, "%-11s      a node runs out first: %" PRIu64 " fewer than the %" PRIu64
				" the machine's RAM as a whole allows\n", "", c->max_processes - row->nodes.max_processes,
				c->max_processes);
	}
}

void plan_report_text(FILE *out, const struct plan_request *req, const struct plan_row *rows)
{
	print_inputs(out, req);
	fprintf(out, "%-11s %5s %11s %11s %11s %11s %8s  %-30s %9s\n", "mode", "page", "PT/process",
		"PTE/process", "PT shared", "PT total", "PT %RAM", "verdict (all memory)", "max procs");
	for (int i = 0; i < req->mode_count; i++) {
		const struct plan_row *row = &rows[i];
		const struct capacity *c = &row->cap;
		char verdict[64], pct[32];

		if (!row->valid) {
			fprintf(out, "%-11s n/a: %s\n", pt_mode_name(req->modes[i]), row->error);
			continue;
		}
		if (c->fits)
			snprintf(verdict, sizeof(verdict), "fits, %s headroom", FMT(c->headroom_bytes));
		else
			snprintf(verdict, sizeof(verdict), "DOES NOT FIT, %s short", FMT(c->shortfall_bytes));
		if (c->ram_fraction > 0 && c->ram_fraction < 0.00005)
			snprintf(pct, sizeof(pct), "<0.01%%");
		else
			snprintf(pct, sizeof(pct), "%.2f%%", c->ram_fraction * 100.0);
		fprintf(out, "%-11s %5s %11s %11s %11s %11s %8s  %-30s %9" PRIu64 "%s\n",
			pt_mode_name(req->modes[i]), FMT(c->cost.leaf_page_bytes), FMT(c->pt_per_process_bytes),
			FMT(c->pte_per_process_bytes), FMT(c->pt_shared_bytes), FMT(c->pt_total_bytes),
			pct, verdict, c->max_processes,
			c->max_processes == PT_PID_MAX_LIMIT ? " (PID_MAX_LIMIT)" : "");
	}

	if (req->nodes)
		print_nodes(out, req, rows);

	fprintf(out, "\nPage-table pages per level (4 KiB each): per process + shared once\n");
	for (int i = 0; i < req->mode_count; i++) {
		const struct plan_row *row = &rows[i];
		const struct pt_cost *k = &row->cap.cost;

		if (!row->valid)
			continue;
		fprintf(out, "  %-11s", pt_mode_name(req->modes[i]));
		for (int l = PT_LEVEL_PTE; l <= PT_LEVEL_PUD; l++)
			fprintf(out, " %s %" PRIu64 "+%" PRIu64, l == PT_LEVEL_PTE ? "PTE" : l == PT_LEVEL_PMD ? "PMD" : "PUD",
				k->per_process_pages[l], k->shared_pages[l]);
		fprintf(out, ", PGD 0+%" PRIu64 " pages and %" PRIu64 " PGD entr%s per process (in its own PGD page)\n",
			k->shared_pages[PT_LEVEL_PGD], k->pgd_entries_per_process,
			k->pgd_entries_per_process == 1 ? "y" : "ies");
		fprintf(out, "  %-11s VmPTE view: %s per process (%s summed over processes)\n", "",
			FMT(row->cap.vmpte_per_process_bytes),
			FMT(units_sat_mul(row->cap.vmpte_per_process_bytes, req->inputs.processes)));
		if (k->note[0])
			fprintf(out, "  %-11s note: %s\n", "", k->note);
		if (k->left_out_pages[PT_LEVEL_PTE] + k->left_out_pages[PT_LEVEL_PMD] + k->left_out_pages[PT_LEVEL_PUD])
			fprintf(out, "  %-11s left out per process (the mappings around need them anyway): %s\n", "",
				k->left_out_note);
	}

	fprintf(out, "\nPTE level vs upper levels (PMD+PUD+PGD), all processes:\n");
	for (int i = 0; i < req->mode_count; i++) {
		const struct capacity *c = &rows[i].cap;

		if (!rows[i].valid)
			continue;
		fprintf(out, "  %-11s PTE %s per process, %s in all; upper levels %s per process, %s in all\n",
			pt_mode_name(req->modes[i]), FMT(c->pte_per_process_bytes), FMT(c->pte_total_bytes),
			FMT(c->pt_per_process_bytes - c->pte_per_process_bytes),
			FMT(c->pt_total_bytes - c->pte_total_bytes));
	}
	if (req->inputs.measured_processes)
		fprintf(out, "\nPT/process, PT total and the upper levels include the processes' own page tables "
			"(code, heap, stack: %s per added process, their PTE pages too), as measured; PTE/process is "
			"the region's alone.\n", FMT(req->inputs.own_pt_bytes_per_process));
	fprintf(out, "\nPT total counts each page-table page once (the /proc/meminfo PageTables view).\n"
		"Demand = page tables + region data in RAM + private x processes; see --help for the assumptions.\n");
}

void plan_report_json(FILE *out, const struct plan_request *req, const struct plan_row *rows)
{
	const struct pt_region *r = &req->region;

	fprintf(out, "{\n  \"planner_version\": 1,\n  \"kind\": \"model\",\n");
	fprintf(out, "  \"view\": \"each page-table page counted once (meminfo PageTables)\",\n");
	fprintf(out, "  \"inputs\": {\"sga_bytes\": %" PRIu64 ", \"addr\": \"0x%" PRIx64 "\", \"addr_bytes\": %" PRIu64
		", \"processes\": %" PRIu64 ", \"touch_fraction\": %.17g, \"ram_bytes\": %" PRIu64
		", \"ram_from_host\": %s, \"private_bytes_per_process\": %" PRIu64 ", \"sga_in_ram\": \"%s\""
		", \"touch_map_ranges\": %zu, \"measured_processes\": %" PRIu64 ", \"measured_pt_bytes\": %" PRIu64
		", \"own_pt_bytes_per_process\": %" PRIu64 "},\n",
		r->size, r->addr, r->addr, req->inputs.processes, r->touch_fraction, req->inputs.ram_bytes,
		req->ram_from_host ? "true" : "false", req->inputs.private_bytes, sga_placement_text(req),
		r->touch_count, req->inputs.measured_processes, req->inputs.measured_pt_bytes,
		req->inputs.own_pt_bytes_per_process);
	fprintf(out, "  \"modes\": [");
	for (int i = 0; i < req->mode_count; i++) {
		const struct plan_row *row = &rows[i];
		const struct capacity *c = &row->cap;
		const struct pt_cost *k = &c->cost;

		fprintf(out, "%s\n    {\"mode\": \"%s\", \"valid\": %s", i ? "," : "",
			pt_mode_name(req->modes[i]), row->valid ? "true" : "false");
		if (!row->valid) {
			fprintf(out, ", \"error\": ");
			json_write_string(out, row->error);
			fprintf(out, ", \"pagetable_bytes_total\": null, \"pagetable_bytes_per_process\": null"
				", \"fits\": false, \"max_processes\": 0}");
			continue;
		}
		fprintf(out, ", \"leaf_page_bytes\": %" PRIu64 ", \"mapped_bytes\": %" PRIu64
			", \"touched_bytes\": %" PRIu64 ",\n", k->leaf_page_bytes, k->mapped_bytes, k->touched_bytes);
		fprintf(out, "     \"pagetable_bytes_total\": %" PRIu64 ", \"pagetable_bytes_per_process\": %" PRIu64
			", \"pagetable_bytes_shared\": %" PRIu64 ",\n",
			c->pt_total_bytes, c->pt_per_process_bytes, c->pt_shared_bytes);
		fprintf(out, "     \"pte_bytes_total\": %" PRIu64 ", \"pte_bytes_per_process\": %" PRIu64
			", \"vmpte_bytes_per_process\": %" PRIu64 ",\n",
			c->pte_total_bytes, c->pte_per_process_bytes, c->vmpte_per_process_bytes);
		fprintf(out, "     \"levels\": {");
		for (int l = 0; l < PT_LEVEL_COUNT; l++)
			fprintf(out, "%s\"%s\": {\"per_process_pages\": %" PRIu64 ", \"shared_pages\": %" PRIu64
				", \"shared_in_vmpte_pages\": %" PRIu64 "}", l ? ", " : "",
				pt_level_name((enum pt_level)l), k->per_process_pages[l], k->shared_pages[l],
				k->shared_in_vmpte_pages[l]);
		fprintf(out, "},\n     \"pgd_entries_per_process\": %" PRIu64 ",", k->pgd_entries_per_process);
		if (k->mode == PT_MODE_MSHARE)
			fprintf(out, " \"mshare_range\": [\"0x%" PRIx64 "\", \"0x%" PRIx64 "\"],",
				k->mshare_start, k->mshare_end);
		fprintf(out, " \"note\": ");
		json_write_string(out, k->note);
		fprintf(out, ",\n     \"sga_ram_bytes\": %" PRIu64 ", \"private_bytes_total\": %" PRIu64
			", \"demand_bytes\": %" PRIu64 ", \"ram_fraction\": %.6g,\n",
			c->sga_ram_bytes, c->private_total_bytes, c->demand_bytes, c->ram_fraction);
		fprintf(out, "     \"fits\": %s, \"headroom_bytes\": %" PRIu64 ", \"shortfall_bytes\": %" PRIu64
			", \"max_processes\": %" PRIu64 ", \"max_processes_limited_by\": \"%s\"",
			c->fits ? "true" : "false", c->headroom_bytes, c->shortfall_bytes, c->max_processes,
			c->max_limited_by);
		if (req->nodes) {
			fprintf(out, ",\n     \"nodes\": {\"fits_every_node\": %s, \"max_processes_every_node\": %" PRIu64
				", \"per_node\": [", row->nodes.fits ? "true" : "false", row->nodes.max_processes);
			for (unsigned k = 0; k < row->nodes.nodes; k++) {
				const struct node_capacity *x = &row->nodes.node[k];
				fprintf(out, "%s{\"node\": %u, \"processes\": %" PRIu64 ", \"pagetable_bytes\": %" PRIu64
					", \"sga_bytes\": %" PRIu64 ", \"private_bytes\": %" PRIu64 ", \"demand_bytes\": %"
					PRIu64 ", \"ram_bytes\": %" PRIu64 ", \"fits\": %s}", k ? ", " : "", k, x->processes,
					x->pt_bytes, x->sga_bytes, x->private_bytes, x->demand_bytes, x->ram_bytes,
					x->fits ? "true" : "false");
			}
			fprintf(out, "]}");
		}
		fprintf(out, "}");
	}
	fprintf(out, "\n  ]\n}\n");
}

void plan_report_series(FILE *out, const struct plan_request *req, const struct plan_row *rows)
{
	uint64_t last = 0, n_max = req->inputs.processes;

	fprintf(out, "# mshare-bench plan series: MODELLED page-table bytes (each page once), not measured\n");
	fprintf(out, "# region %" PRIu64 " bytes at 0x%" PRIx64 ", touch fraction %g, RAM %" PRIu64 " bytes\n",
		req->region.size, req->region.addr, req->region.touch_fraction, req->inputs.ram_bytes);
	fprintf(out, "# processes");
	for (int i = 0; i < req->mode_count; i++)
		fprintf(out, " %s", pt_mode_name(req->modes[i]));
	fprintf(out, " ram\n");
	/* 64 log-spaced counts from 1 to n_max, each printed once. */
	for (int s = 0; s <= 64; s++) {
		uint64_t n = (uint64_t)llround(pow((double)n_max, s / 64.0));

		if (n <= last)
			continue;
		last = n;
		fprintf(out, "%" PRIu64, n);
		for (int i = 0; i < req->mode_count; i++) {
			const struct capacity *c = &rows[i].cap;

			if (!rows[i].valid)
				fprintf(out, " NaN");
			else
				fprintf(out, " %" PRIu64, units_sat_add(units_sat_mul(c->pt_per_process_bytes, n),
									 c->pt_shared_bytes));
		}
		fprintf(out, " %" PRIu64 "\n", req->inputs.ram_bytes);
	}
}
