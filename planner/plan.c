/* plan.c - `mshare-bench plan`: the capacity planner's command line.
 *
 * Reads the deployment (region size, process count, touch fraction, RAM,
 * private memory, modes), runs the page-table model for each mode and
 * prints the plan; or, with --calibrate, compares the model with measured
 * run records. Options come from one table (plan_options) through
 * harness/opts.c, which feeds getopt_long and the --help text.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calibrate.h"
#include "capacity.h"
#include "opts.h"
#include "plan.h"
#include "plan_pid.h"
#include "plan_report.h"
#include "pt_model.h"
#include "touch_map.h"
#include "units.h"

#define DEFAULT_ADDR (2ull << 40) /* 2 TiB: its own 512 GiB PGD slot */
#define MMAP_MIN_ADDR 65536ull

enum {
	P_SGA, P_PROCESSES, P_TOUCH_FRACTION, P_MODE, P_RAM, P_PRIVATE, P_ADDR, P_SGA_IN_RAM, P_NODES, P_SGA_NODE,
	P_JSON, P_SERIES,
	P_TOUCH_MAP, P_PID, P_SEGMENT, P_SAVE_TOUCH_MAP, P_CALIBRATE, P_COUNT
};

/* The options of `plan`: the parser and the --help text both come from here. */
static const struct opt plan_options[P_COUNT + 1] = {
	[P_SGA] = { "sga", "SIZE", "region size: bytes, 0x hex, or 4K, 256M, 300G, 1T\n"
				   "(binary units; the same sizes `run --size` takes)", false },
	[P_PROCESSES] = { "processes", "N", "processes mapping the region (1 .. 4194304)", false },
	[P_TOUCH_FRACTION] = { "touch-fraction", "F", "part of the region each process touches, 0 < F <= 1\n"
						    "(default 1)", false },
	[P_MODE] = { "mode", "M[,M...]", "4k, hugetlb-2m, hugetlb-1g, dax-2m, dax-1g, mshare; repeatable;\n"
					 "default: all, side by side", true },
	[P_RAM] = { "ram", "SIZE", "machine RAM (default: this host's MemTotal)", false },
	[P_PRIVATE] = { "private", "SIZE", "private memory per process, beyond the region (default 0)", false },
	[P_ADDR] = { "addr", "ADDR", "region start, hex (0x...) or size (2T); default 2T,\n"
				     "512 GiB-aligned; an unaligned start shows its cost", false },
	[P_SGA_IN_RAM] = { "sga-in-ram", "yes|no", "count the region's data against RAM (default: yes,\n"
						   "except dax-2m and dax-1g, whose data lives on the DAX\n"
						   "device)", false },
	[P_NODES] = { "nodes", "N", "also per NUMA node (1 .. 64): a node's memory can run\n"
				    "out before the machine's. RAM split evenly, processes\n"
				    "spread evenly (node 0 takes the remainder), each one's\n"
				    "page tables and private memory on its node, shared\n"
				    "page tables (mshare, hugetlb PMD sharing) all on node 0\n"
				    "(the worst case: the kernel puts each shared page where\n"
				    "the first process to fault it runs), region data\n"
				    "interleaved unless --sga-node", false },
	[P_SGA_NODE] = { "sga-node", "K", "with --nodes: the region's data all on node K", false },
	[P_JSON] = { "json", NULL, "JSON instead of text", false },
	[P_SERIES] = { "series", NULL, "gnuplot table: page-table bytes vs process count per mode;\n"
					"with --calibrate: each record's measured and modelled bytes\n"
					"and the model lines, in panels per platform, kernel and\n"
					"region size (plots/planner.gp draws them)", false },
	[P_TOUCH_MAP] = { "touch-map", "FILE", "each process touches exactly these ranges of the region:\n"
					      "lines \"OFFSET SIZE\" from its start (0x200000 2M; '#'\n"
					      "comments); --save-touch-map writes one from --pid", false },
	[P_PID] = { "pid", "PID", "a running deployment: the largest shared mapping of PID\n"
				  "(or of its first child that has one), in PID and every\n"
				  "descendant mapping it. MEASURED now: VmPTE, the pages\n"
				  "present (/proc/PID/pagemap; presence needs no root, the\n"
				  "processes' owner may read it), the segment's share of\n"
				  "VmPTE; MODELLED: the same at the real address, checked\n"
				  "against VmPTE, and the projection at --processes N\n"
				  "(default: as many as now) in every mode: the processes\n"
				  "measured as they are plus the added ones like the\n"
				  "busiest (their touch map and own page tables)", false },
	[P_SEGMENT] = { "segment", "ADDR", "with --pid: the mapping containing ADDR instead", false },
	[P_SAVE_TOUCH_MAP] = { "save-touch-map", "FILE", "with --pid: write the busiest processes' touch map\n"
						       "(a new file; never replaces one)", false },
	[P_CALIBRATE] = { "calibrate", "PATH", "compare the model with measured run records: a run\n"
					       "directory (records/*.json, else *.json) or one record", false },
	[P_COUNT] = { NULL, NULL, NULL, false },
};

static void usage(FILE *out)
{
	fprintf(out,
"usage: mshare-bench plan --sga SIZE --processes N [options]\n"
"       mshare-bench plan --pid PID [--processes N] [options]\n"
"       mshare-bench plan --calibrate RUN_DIR|RECORD.json [--json | --series]\n"
"\n"
"Capacity planner: how much memory the page tables of one shared region\n"
"(an SGA) take when N processes map it, per page mode, and whether the\n"
"deployment fits in RAM. Every figure it prints is MODELLED, not measured.\n"
"\n"
"Options:\n");
	opts_help(out, plan_options, 24);
	fprintf(out,
"  -h, --help            this text\n"
"Every option but --mode may be given once, as --name VALUE or --name=VALUE.\n"
"\n"
"Model assumptions:\n"
"  - x86-64, 4-level paging (P4D folded), 4 KiB page-table pages of 512\n"
"    8-byte entries: a PTE page maps 2 MiB, a PMD page 1 GiB, a PUD page\n"
"    512 GiB. Counts are exact for the region's alignment: a page exists for\n"
"    every aligned span the touched part reaches into.\n"
"  - Each process touches the first F of the region (F of its 2 MiB ranges,\n"
"    densely), or exactly the --touch-map; a scattered touch of the same\n"
"    amount allocates more. With\n"
"    F = 1 every page-table page of the region exists in every process.\n"
"  - The region's page-table pages hold nothing else (true at the default\n"
"    address: the region has its own 512 GiB PGD slot). A process's PGD page\n"
"    exists anyway; the region adds only PGD entries to it (listed, 0 pages).\n"
"    At a real address the first and last PTE/PMD/PUD page may also serve the\n"
"    mappings around the region: with --pid the pages present around it are\n"
"    known and such pages are left out (the output names them); with --addr\n"
"    alone nothing around is known and every page is charged, so the figure\n"
"    is an upper bound there (by at most 2 pages per level per process).\n"
"  - 4k: PTE+PMD+PUD pages per process, nothing shared (MAP_SHARED shares\n"
"    the data, not the page tables).\n"
"  - hugetlb-2m: no PTE pages. A PMD page is shared by all processes only for\n"
"    a 1 GiB-aligned range lying wholly inside the MAP_SHARED mapping (the\n"
"    kernel's want_pmd_share()); head/tail ranges of a mapping that is not\n"
"    1 GiB-aligned get a PMD page per process. PUD pages per process. The\n"
"    address must be 2 MiB-aligned; the length rounds up to 2 MiB.\n"
"  - hugetlb-1g: PUD pages per process, nothing below; 1 GiB-aligned address.\n"
"  - dax-2m: fsdax file at offset 0 mapped with 2 MiB PMD entries: PMD+PUD\n"
"    pages per process; PTE pages for a partial last 2 MiB, or everywhere if\n"
"    the address is not 2 MiB-aligned. A namespace that gives a mix of 2 MiB\n"
"    and 4 KiB mappings costs more (up to the 4k figure).\n"
"    Device-DAX at 2 MiB alignment is the same (it refuses anything else).\n"
"  - dax-1g: device-DAX namespace at 1 GiB alignment, PUD entries: PUD pages\n"
"    per process, nothing below; 1 GiB-aligned address and size.\n"
"  - mshare (the v1 series, and the 2025 series with 4-level paging): the\n"
"    region's PUD+PMD+PTE pages (4 KiB data pages) exist once in the mshare\n"
"    host mm, plus the host mm's PGD page; each process only copies PGD\n"
"    entries (no page-table page of its own; the 2025 series links the P4D\n"
"    entry, which is the PGD entry with 4-level paging). The mshare range\n"
"    is the region widened to 512 GiB alignment.\n"
"  - Views: 'PT total' counts each page-table page once (meminfo PageTables).\n"
"    A process's VmPTE counts every PTE/PMD/PUD page it maps, so shared\n"
"    hugetlb PMD pages appear once per process there (shown separately);\n"
"    mshare pages are in the host mm and in no process's VmPTE. Linux <= 6.1\n"
"    leaves PUD pages out of PageTables (they are memory all the same).\n"
"  - Demand = page tables + region data in RAM + private x N. Not modelled:\n"
"    the processes' own page tables for code/stack/heap (give them with\n"
"    --private), kernel memory, page cache, other programs.\n"
"  - max procs: largest N whose demand fits in RAM, at most PID_MAX_LIMIT\n"
"    (4194304).\n"
"\n"
"Example (the mshare cover letter): --sga 300G --processes 1500 --ram 512G --mode 4k\n"
"gives 600 MiB of PTEs per process, 878.9 GiB of PTEs in all: does not fit.\n");
}

static int bad_value(const char *option, const char *value, const char *expected)
{
	fprintf(stderr, "mshare-bench plan: %s: '%s' is not %s\n", option, value, expected);
	return 2;
}

static uint64_t host_memtotal(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);

	return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
}

/* "4k,mshare" or "4k": append each mode, rejecting unknown and repeated names. */
static int add_modes(struct plan_request *req, const char *text)
{
	char buf[256], *save = NULL, *tok;

	size_t len = strlen(text);

	if (len >= sizeof(buf) || text[0] == '\0')
		return bad_value("--mode", text, "a mode list (4k, hugetlb-2m, hugetlb-1g, dax-2m, dax-1g, mshare)");
	if (text[0] == ',' || text[len - 1] == ',' || strstr(text, ",,"))
		return bad_value("--mode", text, "a mode list without empty items (stray comma?)");
	strcpy(buf, text);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		enum pt_mode m;

		if (pt_mode_from_name(tok, &m) < 0)
			return bad_value("--mode", tok, "a mode (4k, hugetlb-2m, hugetlb-1g, dax-2m, dax-1g, mshare)");
		for (int i = 0; i < req->mode_count; i++) {
			if (req->modes[i] == m) {
				fprintf(stderr, "mshare-bench plan: --mode: '%s' given twice\n", tok);
				return 2;
			}
		}
		req->modes[req->mode_count++] = m;
	}
	return 0;
}

struct plan_args {
	struct plan_request req;
	bool have_sga, have_processes, have_ram, json, series, have_fraction, sga_node_given;
	const char *calibrate;
	const char *sga_text;         /* --sga as given, for messages */
	struct plan_pid_args pid;     /* --pid, --segment, --save-touch-map */
	const char *touch_map;
};

/* One option of the table, in command-line order: 0, or 2 (message printed). */
static int plan_option(void *data, int i, const struct opt *o, const char *v, char *err, size_t err_len)
{
	struct plan_args *a = data;
	struct plan_request *req = &a->req;
	uint64_t pid, n;

	(void)o;
	(void)err;
	(void)err_len;
	switch (i) {
	case P_JSON:
		a->json = true;
		break;
	case P_SERIES:
		a->series = true;
		break;
	case P_SGA:
		if (units_parse_size(v, &req->region.size) < 0 || req->region.size == 0)
			return bad_value("--sga", v, "a size above zero (e.g. 4K, 256M, 300G, 1T)");
		a->have_sga = true;
		a->sga_text = v;
		break;
	case P_PROCESSES:
		if (units_parse_count(v, &req->inputs.processes) < 0 || req->inputs.processes > PT_PID_MAX_LIMIT)
			return bad_value("--processes", v, "a process count from 1 to 4194304");
		a->have_processes = true;
		break;
	case P_TOUCH_FRACTION:
		if (units_parse_fraction(v, &req->region.touch_fraction) < 0)
			return bad_value("--touch-fraction", v, "a fraction F with 0 < F <= 1");
		a->have_fraction = true;
		break;
	case P_TOUCH_MAP:
		a->touch_map = v;
		break;
	case P_PID:
		if (units_parse_count(v, &pid) < 0 || pid > PT_PID_MAX_LIMIT)
			return bad_value("--pid", v, "a process id");
		a->pid.pid = (pid_t)pid;
		break;
	case P_SEGMENT:
		if (units_parse_addr(v, &a->pid.segment) < 0 || a->pid.segment == 0)
			return bad_value("--segment", v, "an address (0x7f49e499c000)");
		break;
	case P_SAVE_TOUCH_MAP:
		a->pid.save_touch_map = v;
		break;
	case P_MODE:
		return add_modes(req, v);
	case P_RAM:
		if (units_parse_size(v, &req->inputs.ram_bytes) < 0 || req->inputs.ram_bytes == 0)
			return bad_value("--ram", v, "a size above zero (e.g. 512G)");
		a->have_ram = true;
		break;
	case P_PRIVATE:
		if (units_parse_size(v, &req->inputs.private_bytes) < 0)
			return bad_value("--private", v, "a size (e.g. 0, 64M, 2G)");
		break;
	case P_ADDR:
		if (units_parse_addr(v, &req->region.addr) < 0)
			return bad_value("--addr", v, "an address (0x20000000000 or 2T)");
		if (req->region.addr % 4096)
			return bad_value("--addr", v, "4 KiB-aligned (mmap needs a page-aligned address)");
		if (req->region.addr < MMAP_MIN_ADDR)
			return bad_value("--addr", v, "at or above 64 KiB (vm.mmap_min_addr)");
		break;
	case P_SGA_IN_RAM:
		if (strcmp(v, "yes") == 0)
			req->inputs.sga = SGA_PLACEMENT_RAM;
		else if (strcmp(v, "no") == 0)
			req->inputs.sga = SGA_PLACEMENT_NOT_RAM;
		else
			return bad_value("--sga-in-ram", v, "yes or no");
		break;
	case P_CALIBRATE:
		a->calibrate = v;
		break;
	case P_NODES:
		if (units_parse_count(v, &n) < 0 || n > PLAN_MAX_NODES)
			return bad_value("--nodes", v, "a node count from 1 to 64");
		req->nodes = (unsigned)n;
		break;
	case P_SGA_NODE:
		/* parse_count takes whole numbers from 1: node 0 apart. */
		if (strcmp(v, "0") == 0)
			n = 0;
		else if (v[0] < '1' || v[0] > '9' || units_parse_count(v, &n) < 0 || n >= PLAN_MAX_NODES)
			return bad_value("--sga-node", v, "a node number from 0 to 63");
		a->sga_node_given = true;
		req->sga_node = (int)n;
		break;
	}
	return 0;
}

/* 0 on success, 1 after --help, 2 for bad input (message printed). */
static int parse_args(int argc, char **argv, struct plan_args *a)
{
	char err[512];

	a->req.region.addr = DEFAULT_ADDR;
	a->req.region.touch_fraction = 1.0;
	a->req.sga_node = -1;
	int rc = opts_parse(plan_options, NULL, argc, argv, plan_option, a, err, sizeof(err));
	if (rc == 1) {
		usage(stdout);
		return 1;
	}
	if (rc < 0) {
		fprintf(stderr, "mshare-bench plan: %s%s\n", err, rc == -2 ? " (see --help)" : "");
		return 2;
	}
	return rc;
}

/* Checks that apply whatever the mode; 0 or 2. */
static int check_plan_args(struct plan_args *a)
{
	struct plan_request *req = &a->req;
	uint64_t size = req->region.size;

	if (!a->have_sga || !a->have_processes) {
		fprintf(stderr, "mshare-bench plan: %s is required (see --help)\n",
			!a->have_sga ? "--sga" : "--processes");
		return 2;
	}
	/* mmap maps whole 4 KiB pages: a length in bytes rounds up. */
	req->region.size = units_align_up(size, 4096);
	if (req->region.addr >= PT_USER_VA_END || req->region.size > PT_USER_VA_END - req->region.addr) {
		fprintf(stderr, "mshare-bench plan: --sga %s (%llu bytes) at --addr 0x%llx ends beyond the 128 TiB "
			"user address space of 4-level paging\n", a->sga_text ? a->sga_text : "?",
			(unsigned long long)size, (unsigned long long)req->region.addr);
		return 2;
	}
	if (!a->have_ram) {
		req->inputs.ram_bytes = host_memtotal();
		req->ram_from_host = true;
		if (!req->inputs.ram_bytes) {
			fprintf(stderr, "mshare-bench plan: cannot read this host's RAM size; give --ram\n");
			return 2;
		}
	}
	return 0;
}

int plan_main(int argc, char **argv)
{
	struct plan_args a;
	struct plan_row rows[PT_MODE_COUNT];
	bool modes_given;
	int rc;

	memset(&a, 0, sizeof(a));
	rc = parse_args(argc, argv, &a);
	if (rc)
		return rc == 1 ? 0 : rc;
	if (a.sga_node_given && !a.req.nodes) {
		fprintf(stderr, "mshare-bench plan: --sga-node %d goes with --nodes\n", a.req.sga_node);
		return 2;
	}
	if (a.sga_node_given && a.req.sga_node >= (int)a.req.nodes) {
		fprintf(stderr, "mshare-bench plan: --sga-node %d is not one of the %u nodes of --nodes (0 to %u)\n",
			a.req.sga_node, a.req.nodes, a.req.nodes - 1);
		return 2;
	}
	if (a.req.nodes && (a.calibrate || a.pid.pid || a.series)) {
		fprintf(stderr, "mshare-bench plan: --nodes %u does not go with %s\n", a.req.nodes,
			a.calibrate ? "--calibrate" : a.pid.pid ? "--pid" : "--series");
		return 2;
	}
	if (a.calibrate) {
		if (a.have_sga || a.have_processes || a.have_ram || a.req.mode_count || a.pid.pid || a.touch_map) {
			fprintf(stderr, "mshare-bench plan: --calibrate takes its inputs from the records; "
				"only --json or --series may go with it\n");
			return 2;
		}
		return calibrate_main(a.calibrate, a.series ? CALIBRATE_SERIES
				      : a.json ? CALIBRATE_JSON : CALIBRATE_TEXT, stdout);
	}
	if (a.touch_map && a.have_fraction) {
		fprintf(stderr, "mshare-bench plan: --touch-map and --touch-fraction both say what is touched; give one\n");
		return 2;
	}
	if (!a.pid.pid && (a.pid.segment || a.pid.save_touch_map)) {
		fprintf(stderr, "mshare-bench plan: %s goes with --pid\n", a.pid.segment ? "--segment" : "--save-touch-map");
		return 2;
	}
	if (a.touch_map) {
		char err[512];

		if (touch_map_read(a.touch_map, (struct pt_range **)&a.req.region.touch, &a.req.region.touch_count,
				   err, sizeof(err)) < 0) {
			fprintf(stderr, "mshare-bench plan: %s\n", err);
			return 2;
		}
	}
	if (a.pid.pid) {
		if (a.have_sga) {
			fprintf(stderr, "mshare-bench plan: --pid measures the segment's size and address; "
				"--sga does not go with it\n");
			return 2;
		}
		a.pid.have_processes = a.have_processes;
		a.pid.json = a.json;
		a.pid.modes_given = a.req.mode_count > 0;
		a.pid.touch_given = a.touch_map || a.have_fraction;
		if (a.series) {
			fprintf(stderr, "mshare-bench plan: --series does not go with --pid\n");
			return 2;
		}
		if (!a.have_ram) {
			a.req.inputs.ram_bytes = host_memtotal();
			a.req.ram_from_host = true;
		}
		if (!a.pid.modes_given)
			for (int m = 0; m < PT_MODE_COUNT; m++)
				a.req.modes[a.req.mode_count++] = (enum pt_mode)m;
		{
			const struct pt_range *user_touch = a.req.region.touch;

			rc = plan_pid_main(&a.req, &a.pid, stdout);
			free((void *)user_touch);
		}
		return rc;
	}
	if ((rc = check_plan_args(&a)) != 0)
		return rc;
	if (a.req.region.touch_count && a.req.region.touch[a.req.region.touch_count - 1].end > a.req.region.size) {
		fprintf(stderr, "mshare-bench plan: --touch-map '%s': range up to offset 0x%llx lies beyond --sga (%llu bytes)\n",
			a.touch_map, (unsigned long long)a.req.region.touch[a.req.region.touch_count - 1].end,
			(unsigned long long)a.req.region.size);
		free((void *)a.req.region.touch);
		return 2;
	}

	modes_given = a.req.mode_count > 0;
	if (!modes_given)
		for (int m = 0; m < PT_MODE_COUNT; m++)
			a.req.modes[a.req.mode_count++] = (enum pt_mode)m;

	memset(rows, 0, sizeof(rows));
	for (int i = 0; i < a.req.mode_count; i++) {
		struct pt_cost cost;

		if (pt_model(a.req.modes[i], &a.req.region, &cost, rows[i].error, sizeof(rows[i].error)) < 0) {
			/* A mode the user named must work; in the default
			 * all-modes table it is shown as not applicable. */
			if (modes_given) {
				fprintf(stderr, "mshare-bench plan: --mode %s: %s\n",
					pt_mode_name(a.req.modes[i]), rows[i].error);
				return 2;
			}
			continue;
		}
		rows[i].valid = true;
		capacity_compute(&cost, &a.req.inputs, &rows[i].cap);
		if (a.req.nodes)
			nodes_compute(&rows[i].cap, &a.req.inputs, a.req.nodes, a.req.sga_node, &rows[i].nodes);
	}

	if (a.series)
		plan_report_series(stdout, &a.req, rows);
	else if (a.json) {
		struct json_writer w;

		json_init(&w, stdout);
		plan_report_json(&w, NULL, &a.req, rows);
		if ((rc = json_failed(&w)) != 0)
			fprintf(stderr, "mshare-bench plan: out of memory writing the JSON\n");
		json_free(&w);
	} else
		plan_report_text(stdout, &a.req, rows);
	free((void *)a.req.region.touch);
	return fflush(stdout) == 0 && rc == 0 ? 0 : 1;
}
