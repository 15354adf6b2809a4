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
		req->inputs.sga == SGA_PLACEMENT_DEFAULT ? "yes, except dax-2m and dax-1g (data on the DAX device)"
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

static void mode_json(struct json_writer *w, const struct plan_request *req, const struct plan_row *row,
		      enum pt_mode mode)
{
	const struct capacity *c = &row->cap;
	const struct pt_cost *k = &c->cost;

	json_begin_object(w, NULL);
	json_key_string(w, "mode", pt_mode_name(mode));
	json_key_bool(w, "valid", row->valid);
	if (!row->valid) {
		json_key_string(w, "error", row->error);
		json_key_null(w, "pagetable_bytes_total");
		json_key_null(w, "pagetable_bytes_per_process");
		json_key_bool(w, "fits", false);
		json_key_u64(w, "max_processes", 0);
		json_end_object(w);
		return;
	}
	json_key_u64(w, "leaf_page_bytes", k->leaf_page_bytes);
	json_key_u64(w, "mapped_bytes", k->mapped_bytes);
	json_key_u64(w, "touched_bytes", k->touched_bytes);
	json_key_u64(w, "pagetable_bytes_total", c->pt_total_bytes);
	json_key_u64(w, "pagetable_bytes_per_process", c->pt_per_process_bytes);
	json_key_u64(w, "pagetable_bytes_shared", c->pt_shared_bytes);
	json_key_u64(w, "pte_bytes_total", c->pte_total_bytes);
	json_key_u64(w, "pte_bytes_per_process", c->pte_per_process_bytes);
	json_key_u64(w, "vmpte_bytes_per_process", c->vmpte_per_process_bytes);
	json_begin_object(w, "levels");
	for (int l = 0; l < PT_LEVEL_COUNT; l++) {
		json_begin_object(w, pt_level_name((enum pt_level)l));
		json_key_u64(w, "per_process_pages", k->per_process_pages[l]);
		json_key_u64(w, "shared_pages", k->shared_pages[l]);
		json_key_u64(w, "shared_in_vmpte_pages", k->shared_in_vmpte_pages[l]);
		json_end_object(w);
	}
	json_end_object(w);
	json_key_u64(w, "pgd_entries_per_process", k->pgd_entries_per_process);
	if (k->mode == PT_MODE_MSHARE) {
		json_begin_array(w, "mshare_range");
		json_key_hex(w, NULL, k->mshare_start);
		json_key_hex(w, NULL, k->mshare_end);
		json_end_array(w);
	}
	json_key_string(w, "note", k->note);
	json_key_u64(w, "sga_ram_bytes", c->sga_ram_bytes);
	json_key_u64(w, "private_bytes_total", c->private_total_bytes);
	json_key_u64(w, "demand_bytes", c->demand_bytes);
	json_key_double_digits(w, "ram_fraction", c->ram_fraction, 6);
	json_key_bool(w, "fits", c->fits);
	json_key_u64(w, "headroom_bytes", c->headroom_bytes);
	json_key_u64(w, "shortfall_bytes", c->shortfall_bytes);
	json_key_u64(w, "max_processes", c->max_processes);
	json_key_string(w, "max_processes_limited_by", c->max_limited_by);
	if (req->nodes) {
		json_begin_object(w, "nodes");
		json_key_bool(w, "fits_every_node", row->nodes.fits);
		json_key_u64(w, "max_processes_every_node", row->nodes.max_processes);
		json_begin_array(w, "per_node");
		for (unsigned n = 0; n < row->nodes.nodes; n++) {
			const struct node_capacity *x = &row->nodes.node[n];

			json_begin_object(w, NULL);
			json_key_u64(w, "node", n);
			json_key_u64(w, "processes", x->processes);
			json_key_u64(w, "pagetable_bytes", x->pt_bytes);
			json_key_u64(w, "sga_bytes", x->sga_bytes);
			json_key_u64(w, "private_bytes", x->private_bytes);
			json_key_u64(w, "demand_bytes", x->demand_bytes);
			json_key_u64(w, "ram_bytes", x->ram_bytes);
			json_key_bool(w, "fits", x->fits);
			json_end_object(w);
		}
		json_end_array(w);
		json_end_object(w);
	}
	json_end_object(w);
}

void plan_report_json(struct json_writer *w, const char *key, const struct plan_request *req,
		      const struct plan_row *rows)
{
	const struct pt_region *r = &req->region;

	json_begin_object(w, key);
	json_key_u64(w, "planner_version", 1);
	json_key_string(w, "kind", "model");
	json_key_string(w, "view", "each page-table page counted once (meminfo PageTables)");
	json_begin_object(w, "inputs");
	json_key_u64(w, "sga_bytes", r->size);
	json_key_hex(w, "addr", r->addr);
	json_key_u64(w, "addr_bytes", r->addr);
	json_key_u64(w, "processes", req->inputs.processes);
	json_key_double(w, "touch_fraction", r->touch_fraction);
	json_key_u64(w, "ram_bytes", req->inputs.ram_bytes);
	json_key_bool(w, "ram_from_host", req->ram_from_host);
	json_key_u64(w, "private_bytes_per_process", req->inputs.private_bytes);
	json_key_string(w, "sga_in_ram", sga_placement_text(req));
	json_key_u64(w, "touch_map_ranges", r->touch_count);
	json_key_u64(w, "measured_processes", req->inputs.measured_processes);
	json_key_u64(w, "measured_pt_bytes", req->inputs.measured_pt_bytes);
	json_key_u64(w, "own_pt_bytes_per_process", req->inputs.own_pt_bytes_per_process);
	json_end_object(w);
	json_begin_array(w, "modes");
	for (int i = 0; i < req->mode_count; i++)
		mode_json(w, req, &rows[i], req->modes[i]);
	json_end_array(w);
	json_end_object(w);
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
