/* plan_report.c - the plan as text for a person, JSON for a program, and a
 * data table for gnuplot. Every output says it is a model. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "accuracy.h"
#include "json.h"
#include "plan_report.h"
#include "units.h"

#define FMT(b) units_format_bytes((b), (char[32]){ 0 }, 32)

int plan_compute_row(const struct plan_request *req, enum deploy_id d, const struct pt_region *r,
		     const struct capacity_inputs *in, struct plan_row *row)
{
	struct capacity_inputs x = *in;
	struct pt_cost cost;

	memset(row, 0, sizeof(*row));
	if (deploy_model(d, r, &cost, row->error, sizeof(row->error)) < 0)
		return -1;
	/* Where the data lives is the deployment's, unless --sga-in-ram says. */
	if (x.sga == SGA_PLACEMENT_DEFAULT)
		x.sga = deploy_get(d)->data == DATA_RAM ? SGA_PLACEMENT_RAM : SGA_PLACEMENT_NOT_RAM;
	row->valid = true;
	capacity_compute(&cost, &x, &row->cap);
	if (req->nodes)
		nodes_compute(&row->cap, &x, req->nodes, req->sga_node, &row->nodes);
	return 0;
}

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
		fprintf(out, "  region %s at 0x%" PRIx64 "%s, %" PRIu64 " processes each touching %.4g%% of it%s\n",
			FMT(r->size), r->addr, r->addr % PT_PUD_SPAN ? " (not 512 GiB-aligned)" : "",
			req->inputs.processes, r->touch_fraction * 100.0,
			r->touch_fraction < 1 ? " (the first part, densely: whole 2 MiB spans)" : "");
	}
	if (req->touch_note[0])
		fprintf(out, "  %s\n", req->touch_note);
	for (int i = 0; i < 3; i++)
		if (req->unit_note[i][0])
			fprintf(out, "  %s\n", req->unit_note[i]);
	if (r->around_known)
		fprintf(out, "  page-table pages the mappings around the region need anyway are left out (see each mode)\n");
	else if (r->addr % PT_PUD_SPAN)
		fprintf(out, "  nothing is known about what lies around the region: every page-table page it reaches is "
			"charged to it (at a real address some may serve neighbours too; plan --pid knows them)\n");
	if (req->ram_from_host)
		fprintf(out, "  RAM %s, NOT GIVEN: this host's MemTotal is used (give --ram for the machine the plan is "
			"for)\n", FMT(req->inputs.ram_bytes));
	else
		fprintf(out, "  RAM %s, as given (--ram)\n", FMT(req->inputs.ram_bytes));
	if (req->private_given || req->inputs.measured_processes)
		fprintf(out, "  private memory %s per process%s\n", FMT(req->inputs.private_bytes),
			req->private_given ? ", as given (--private)" : "");
	else
		fprintf(out, "  private memory per process NOT GIVEN (--private): 0 B is used, so the demand and max "
			"procs count only page tables and the region's data (give a process's own memory, e.g. "
			"--private 16M)\n");
	fprintf(out, "  region data: %s\n",
		req->inputs.sga == SGA_PLACEMENT_DEFAULT ? "in RAM or on the device as each mode says (column data)"
		: req->inputs.sga == SGA_PLACEMENT_RAM ? "in RAM for every mode (--sga-in-ram yes overrides the modes)"
		: "counted in no mode (--sga-in-ram no overrides the modes)");
	if (req->inputs.process_limit)
		fprintf(out, "  max procs is bounded by this host's %s, %" PRIu64 " (pid_max %" PRIu64 ", threads-max %"
			PRIu64 ")\n", req->inputs.process_limit_name, req->inputs.process_limit, req->pid_max,
			req->threads_max);
	else
		fprintf(out, "  max procs is bounded only by the kernel's PID_MAX_LIMIT, 4194304 (the plan is for another "
			"machine; set its kernel.pid_max and kernel.threads-max to match)\n");
	fprintf(out, "  page-table figures hold PTE+PMD+PUD pages (x86-64 4-level paging, P4D folded); the PGD page "
		"every process has anyway is not counted, an mshare host mm's is (in PT shared)\n\n");
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
	fprintf(out, "%-18s %4s %9s %11s %11s %11s %11s %11s  %s\n", "mode", "node", "processes", "PT on node",
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
			fprintf(out, "%-18s %4u %9" PRIu64 " %11s %11s %11s %11s %11s  %s\n",
				k == 0 ? deploy_name(req->modes[i]) : "", k, x->processes, FMT(x->pt_bytes),
				FMT(x->sga_bytes), FMT(x->private_bytes), FMT(x->demand_bytes), FMT(x->ram_bytes), verdict);
		}
		const struct capacity *c = &row->cap;
		fprintf(out, "%-18s      every node %s; max procs with every node fitting %" PRIu64 "\n", "",
			row->nodes.fits ? "fits" : "does NOT fit", row->nodes.max_processes);
		if (row->nodes.max_processes < c->max_processes)
			fprintf(out, "%-18s      a node runs out first: %" PRIu64 " fewer than the %" PRIu64
				" the machine's RAM as a whole allows\n", "", c->max_processes - row->nodes.max_processes,
				c->max_processes);
	}
}

void plan_capacity_at(const struct plan_request *req, const struct plan_row *row, enum deploy_id d, uint64_t n,
		      struct capacity *c)
{
	struct capacity_inputs x = req->inputs;

	x.processes = n;
	if (x.sga == SGA_PLACEMENT_DEFAULT)
		x.sga = deploy_get(d)->data == DATA_RAM ? SGA_PLACEMENT_RAM : SGA_PLACEMENT_NOT_RAM;
	capacity_compute(&row->cap.cost, &x, c);
}

static void verdict_text(const struct capacity *c, char *buf, size_t len)
{
	if (c->fits)
		snprintf(buf, len, "fits, %s headroom", FMT(c->headroom_bytes));
	else
		snprintf(buf, len, "DOES NOT FIT, %s short", FMT(c->shortfall_bytes));
}

static const char *limit_note(const struct capacity *c)
{
	if (strcmp(c->max_limited_by, "ram") == 0)
		return "";
	if (strcmp(c->max_limited_by, "pid_max_limit") == 0)
		return " (PID_MAX_LIMIT)";
	return strcmp(c->max_limited_by, "pid_max") == 0 ? " (pid_max)" : " (threads-max)";
}

/* What to set for each mode. */
static void print_settings(FILE *out, const struct plan_request *req, const struct plan_row *rows)
{
	struct deploy_setting set[DEPLOY_MAX_SETTINGS];

	if (req->mode_count > 6) {
		fprintf(out, "\nWhat to set: give --mode with the deployment(s) you consider (up to 6) to list the kernel, "
			"sysctls, limits and database parameters each needs (--json lists them for every mode).\n");
		return;
	}
	for (int i = 0; i < req->mode_count; i++) {
		const struct deploy *d = deploy_get(req->modes[i]);
		size_t n;

		if (!rows[i].valid)
			continue;
		n = deploy_settings(req->modes[i], rows[i].cap.cost.mapped_bytes, req->inputs.processes, req->nodes,
				    req->sga_node, set, DEPLOY_MAX_SETTINGS);
		fprintf(out, "\nWhat to set for %s (%s):\n", d->name, d->what);
		for (size_t k = 0; k < n; k++)
			fprintf(out, "  %-44s %s%s%s%s\n", set[k].key, set[k].value, set[k].why[0] ? "  (" : "", set[k].why,
				set[k].why[0] ? ")" : "");
	}
}

/* --processes N,N,...: each mode at each count. */
static void print_counts(FILE *out, const struct plan_request *req, const struct plan_row *rows)
{
	fprintf(out, "\nBy process count (MODELLED): page tables in all (each page once) / verdict with the region's "
		"data and private memory\n%-18s", "mode");
	for (int k = 0; k < req->count_n; k++)
		fprintf(out, " %24" PRIu64, req->counts[k]);
	fprintf(out, "\n");
	for (int i = 0; i < req->mode_count; i++) {
		const struct plan_row *row = &rows[i];

		if (!row->valid)
			continue;
		fprintf(out, "%-18s", deploy_name(req->modes[i]));
		for (int k = 0; k < req->count_n; k++) {
			struct capacity c;
			char cell[64];

			plan_capacity_at(req, row, req->modes[i], req->counts[k], &c);
			snprintf(cell, sizeof(cell), "%s %s", FMT(c.pt_total_bytes), c.fits ? "fits" : "NO FIT");
			fprintf(out, " %24s", cell);
		}
		fprintf(out, "\n");
	}
}

void plan_report_text(FILE *out, const struct plan_request *req, const struct plan_row *rows)
{
	print_inputs(out, req);
	fprintf(out, "%-18s %-6s %5s %11s %11s %11s %11s %8s  %-30s %9s\n", "mode", "data", "page", "PT/process",
		"PTE/process", "PT shared", "PT total", "PT %RAM", "verdict (all memory)", "max procs");
	for (int i = 0; i < req->mode_count; i++) {
		const struct plan_row *row = &rows[i];
		const struct capacity *c = &row->cap;
		const struct deploy *d = deploy_get(req->modes[i]);
		char verdict[64], pct[32];

		if (!row->valid) {
			fprintf(out, "%-18s n/a: %s\n", d->name, row->error);
			continue;
		}
		verdict_text(c, verdict, sizeof(verdict));
		if (c->ram_fraction > 0 && c->ram_fraction < 0.00005)
			snprintf(pct, sizeof(pct), "<0.01%%");
		else
			snprintf(pct, sizeof(pct), "%.2f%%", c->ram_fraction * 100.0);
		fprintf(out, "%-18s %-6s %5s %11s %11s %11s %11s %8s  %-30s %9" PRIu64 "%s\n",
			d->name, c->sga_ram_bytes ? "RAM" : d->data == DATA_RAM ? "(RAM)" : "device",
			FMT(c->cost.leaf_page_bytes), FMT(c->pt_per_process_bytes),
			FMT(c->pte_per_process_bytes), FMT(c->pt_shared_bytes), FMT(c->pt_total_bytes),
			pct, verdict, c->max_processes, limit_note(c));
	}
	fprintf(out, "  (PT = page tables, PTE+PMD+PUD pages; data: where the region's data lives, counted in the "
		"demand when RAM)\n");
	if (req->count_n > 1)
		print_counts(out, req, rows);

	if (req->nodes)
		print_nodes(out, req, rows);

	fprintf(out, "\nPage-table pages per level (4 KiB each): per process + shared once\n");
	for (int i = 0; i < req->mode_count; i++) {
		const struct plan_row *row = &rows[i];
		const struct pt_cost *k = &row->cap.cost;

		if (!row->valid)
			continue;
		fprintf(out, "  %-18s", deploy_name(req->modes[i]));
		for (int l = PT_LEVEL_PTE; l <= PT_LEVEL_PUD; l++)
			fprintf(out, " %s %" PRIu64 "+%" PRIu64, l == PT_LEVEL_PTE ? "PTE" : l == PT_LEVEL_PMD ? "PMD" : "PUD",
				k->per_process_pages[l], k->shared_pages[l]);
		fprintf(out, ", PGD 0+%" PRIu64 " pages and %" PRIu64 " PGD entr%s per process (in its own PGD page)\n",
			k->shared_pages[PT_LEVEL_PGD], k->pgd_entries_per_process,
			k->pgd_entries_per_process == 1 ? "y" : "ies");
		fprintf(out, "  %-18s VmPTE view: %s per process (%s summed over processes)\n", "",
			FMT(row->cap.vmpte_per_process_bytes),
			FMT(units_sat_mul(row->cap.vmpte_per_process_bytes, req->inputs.processes)));
		if (k->note[0])
			fprintf(out, "  %-18s note: %s\n", "", k->note);
		if (k->left_out_pages[PT_LEVEL_PTE] + k->left_out_pages[PT_LEVEL_PMD] + k->left_out_pages[PT_LEVEL_PUD])
			fprintf(out, "  %-18s left out per process (the mappings around need them anyway): %s\n", "",
				k->left_out_note);
	}

	fprintf(out, "\nPTE level vs upper levels (PMD+PUD, and an mshare host mm's PGD page), all processes:\n");
	for (int i = 0; i < req->mode_count; i++) {
		const struct capacity *c = &rows[i].cap;

		if (!rows[i].valid)
			continue;
		fprintf(out, "  %-18s PTE %s per process, %s in all; upper levels %s per process, %s in all\n",
			deploy_name(req->modes[i]), FMT(c->pte_per_process_bytes), FMT(c->pte_total_bytes),
			FMT(c->pt_per_process_bytes - c->pte_per_process_bytes),
			FMT(c->pt_total_bytes - c->pte_total_bytes));
	}
	if (req->inputs.measured_processes)
		fprintf(out, "\nPT/process, PT total and the upper levels include the processes' own page tables "
			"(code, heap, stack: %s per added process, their PTE pages too), as measured; PTE/process is "
			"the region's alone.\n", FMT(req->inputs.own_pt_bytes_per_process));
	fprintf(out, "\nPT total counts each page-table page once (the /proc/meminfo PageTables view).\n"
		"Demand = page tables + region data in RAM + private x processes; see --help for the assumptions.\n");
	print_settings(out, req, rows);
	accuracy_print(out);
}

static void mode_json(struct json_writer *w, const struct plan_request *req, const struct plan_row *row,
		      enum deploy_id mode)
{
	const struct capacity *c = &row->cap;
	const struct pt_cost *k = &c->cost;
	const struct deploy *d = deploy_get(mode);
	struct deploy_setting set[DEPLOY_MAX_SETTINGS];
	size_t nset;

	json_begin_object(w, NULL);
	json_key_string(w, "mode", d->name);
	json_key_string(w, "what", d->what);
	json_key_string(w, "shape", pt_mode_name(d->shape));
	json_key_string(w, "data", d->data == DATA_RAM ? "ram" : "device");
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
	json_key_string(w, "levels_counted", "pte+pmd+pud (4-level paging; the PGD page of an mshare host mm in shared)");
	if (req->count_n > 1) {
		json_begin_array(w, "by_processes");
		for (int i = 0; i < req->count_n; i++) {
			struct capacity x;

			plan_capacity_at(req, row, mode, req->counts[i], &x);
			json_begin_object(w, NULL);
			json_key_u64(w, "processes", req->counts[i]);
			json_key_u64(w, "pagetable_bytes_total", x.pt_total_bytes);
			json_key_u64(w, "demand_bytes", x.demand_bytes);
			json_key_bool(w, "fits", x.fits);
			json_end_object(w);
		}
		json_end_array(w);
	}
	nset = deploy_settings(mode, k->mapped_bytes, req->inputs.processes, req->nodes, req->sga_node, set,
			       DEPLOY_MAX_SETTINGS);
	json_begin_array(w, "settings");
	for (size_t i = 0; i < nset; i++) {
		json_begin_object(w, NULL);
		json_key_string(w, "key", set[i].key);
		json_key_string(w, "value", set[i].value);
		json_key_string(w, "why", set[i].why);
		json_end_object(w);
	}
	json_end_array(w);
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
	json_key_bool(w, "private_given", req->private_given);
	json_key_u64(w, "process_limit", req->inputs.process_limit ? req->inputs.process_limit : PT_PID_MAX_LIMIT);
	json_key_string(w, "process_limit_name", req->inputs.process_limit ? req->inputs.process_limit_name
			: "PID_MAX_LIMIT");
	json_key_string(w, "touch_note", req->touch_note);
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
	accuracy_json(w, "accuracy");
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
		fprintf(out, " %s", deploy_name(req->modes[i]));
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
