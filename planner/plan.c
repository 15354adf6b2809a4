/* plan.c - `mshare-bench plan`: the capacity planner's command line.
 *
 * Reads the deployment (region size, process count, touch fraction, RAM,
 * private memory, modes), runs the page-table model for each mode and
 * prints the plan; or, with --calibrate, compares the model with measured
 * run records. Options come from one table (plan_options) through
 * harness/opts.c, which feeds getopt_long and the --help text.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <inttypes.h>
#include <math.h>

#include "calibrate.h"
#include "deploy.h"
#include "plan_plot.h"
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
	P_SGA, P_PROCESSES, P_TOUCH_FRACTION, P_READS, P_BLOCK_SIZE, P_ACCESS, P_MODE, P_RAM, P_PRIVATE, P_ADDR,
	P_SGA_IN_RAM, P_NODES, P_SGA_NODE,
	P_JSON, P_CSV, P_PLOT, P_SERIES,
	P_TOUCH_MAP, P_PID, P_SHMID, P_FILE, P_SEGMENT, P_SAVE_TOUCH_MAP, P_CALIBRATE, P_COUNT
};

/* The options of `plan`: the parser and the --help text both come from here. */
static const struct opt plan_options[P_COUNT + 1] = {
	[P_SGA] = { "sga", "SIZE", "region size: 4K, 256M, 300G, 255.5G, 1T (binary units;\n"
				   "decimals with a unit), 0x hex; a number without a unit\n"
				   "is bytes, and the output says so", false },
	[P_PROCESSES] = { "processes", "N[,N...]", "processes mapping the region (1 .. 4194304); a list\n"
						   "(100,1000,3000) adds a table over the counts; the\n"
						   "largest is the main plan's", false },
	[P_TOUCH_FRACTION] = { "touch-fraction", "F", "share of the region's 2 MiB spans each process touches,\n"
						    "densely from its start, 0 < F <= 1 (default 1: all;\n"
						    "measured PostgreSQL backends at 2 GB of buffers: 0.90\n"
						    "after a full pass over 7/8 of them; at scale 8, whose\n"
						    "data fills 6% of them: 0.07-0.08 after pgbench -S,\n"
						    "0.05-0.08 after pgbench's read-write script)", false },
	[P_READS] = { "reads", "F|P%|Nblocks", "the DBA's unit: how much of the buffers one process\n"
					      "reads, as a fraction (0.004), a percentage (0.4%) or a\n"
					      "number of blocks (5000blocks); converted to 2 MiB spans\n"
					      "by --access, the conversion shown", false },
	[P_BLOCK_SIZE] = { "block-size", "SIZE", "with --reads: a database block (default 8K: PostgreSQL's\n"
						 "BLCKSZ, Oracle's usual db_block_size)", false },
	[P_ACCESS] = { "access", "random|sequential", "with --reads: random blocks all over the buffers\n"
						      "(default; OLTP) or one sequential stretch", false },
	[P_MODE] = { "mode", "M[,M...]", "deployments (below); repeatable; default: all, side by side", true },
	[P_RAM] = { "ram", "SIZE", "machine RAM (not given: this host's MemTotal, and the\n"
				   "output says so)", false },
	[P_PRIVATE] = { "private", "SIZE", "private memory per process, beyond the region (not\n"
					   "given: 0, and the output says so)", false },
	[P_ADDR] = { "addr", "ADDR", "region start, hex (0x...) or size (2T); default 2T,\n"
				     "512 GiB-aligned; an unaligned start shows its cost", false },
	[P_SGA_IN_RAM] = { "sga-in-ram", "yes|no", "override every mode: count the region's data against\n"
						   "RAM or not (default: as each mode says: RAM for shared\n"
						   "memory and hugetlbfs, the device for DAX)", false },
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
	[P_CSV] = { "csv", NULL, "CSV instead of text: a row per mode and process count", false },
	[P_PLOT] = { "plot", "FILE.svg", "also draw this plan (page tables and demand vs process\n"
					 "count per mode, RAM line) into FILE.svg (gnuplot)", false },
	[P_SERIES] = { "series", NULL, "gnuplot table: page-table bytes vs process count per mode;\n"
					"with --calibrate: each record's measured and modelled bytes\n"
					"and the model lines, in panels per platform, kernel and\n"
					"region size (plots/planner.gp draws them)", false },
	[P_TOUCH_MAP] = { "touch-map", "FILE", "each process touches exactly these ranges of the region:\n"
					      "lines \"OFFSET SIZE\" from its start (0x200000 2M; '#'\n"
					      "comments); --save-touch-map writes one from --pid", false },
	[P_PID] = { "pid", "PID", "a running deployment: the largest shared mapping of PID\n"
				  "(or of its first child that has one), in every process\n"
				  "that maps it, whatever its parent (all of /proc is\n"
				  "read; a SysV segment's attach count is checked against\n"
				  "what was found). MEASURED now: VmPTE, the pages\n"
				  "present (/proc/PID/pagemap; presence needs no root, the\n"
				  "processes' owner may read it), the segment's share of\n"
				  "VmPTE; MODELLED: the same at the real address, checked\n"
				  "against VmPTE, and the projection at --processes N\n"
				  "(default: as many as now) in every mode: the processes\n"
				  "measured as they are plus the added ones like the\n"
				  "busiest (their touch map and own page tables)", false },
	[P_SHMID] = { "shmid", "ID", "a running deployment by its SysV segment (ipcs -m): every\n"
				    "process attaching it, whatever its parent", false },
	[P_FILE] = { "file", "PATH", "a running deployment by the file or device it maps\n"
				     "(/dev/shm/x, /mnt/pmem/sga, /dev/dax0.0): every\n"
				     "process mapping it (device and inode)", false },
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
"usage: mshare-bench plan --sga SIZE --processes N[,N...] --ram SIZE --private SIZE [options]\n"
"       mshare-bench plan --pid PID | --shmid ID | --file PATH [--processes N] [options]\n"
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
"Deployments (--mode), each with where its data lives (RAM: counted in the\n"
"demand; device: not) and what it needs set (printed with the plan):\n");
	for (int d = 0; d < DEPLOY_COUNT; d++) {
		const struct deploy *x = deploy_get((enum deploy_id)d);

		fprintf(out, "  %-18s %-6s %s%s%s%s\n", x->name, x->data == DATA_RAM ? "RAM" : "device", x->what,
			x->alias ? " (also --mode " : "", x->alias ? x->alias : "", x->alias ? ")" : "");
	}
	fprintf(out,
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
"  - Deployments map to these shapes: 4k and dax-4k are 4k; shm-thp and\n"
"    devdax-2m are dax-2m (devdax-2m refuses an address or size off 2 MiB);\n"
"    devdax-1g is dax-1g; every mshare-* mode is mshare with its leaves\n"
"    (2 MiB leaves: no PTE pages; 1 GiB: no PMD pages either). mshare v1 and\n"
"    the 2025 design have the same page tables with 4-level paging.\n"
"  - Page-table figures hold PTE, PMD and PUD pages. Per process where each\n"
"    process has its own: hugetlb-2m's PUD page (its PMD pages are shared),\n"
"    hugetlb-1g's and devdax-1g's PUD page; mshare's PUD/PMD/PTE pages are\n"
"    the host mm's, once, and each process fills only PGD entries (the\n"
"    kernel copies the host's P4D entry, which is the PGD entry with P4D\n"
"    folded). With 5-level paging (not modelled) each process would also\n"
"    have a P4D page of its own per 256 TiB reached.\n"
"  - --reads converts a database's reads into 2 MiB spans: random: B blocks\n"
"    uniformly over the S spans of the region touch S x (1 - (1 - 1/S)^B)\n"
"    spans (expected), spread over the region; sequential: B x block\n"
"    bytes from the start.\n"
"  - max procs: largest N whose demand fits in RAM; for this host (no --ram,\n"
"    or --pid/--shmid/--file) at most its pid_max and threads-max, else at\n"
"    most PID_MAX_LIMIT (4194304), and the output says which.\n"
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
	char buf[512], *save = NULL, *tok, names[512];

	size_t len = strlen(text);

	deploy_list(names, sizeof(names));
	if (len >= sizeof(buf) || text[0] == '\0')
		return bad_value("--mode", text, "a mode list");
	if (text[0] == ',' || text[len - 1] == ',' || strstr(text, ",,"))
		return bad_value("--mode", text, "a mode list without empty items (stray comma?)");
	strcpy(buf, text);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		enum deploy_id m;

		if (deploy_from_name(tok, &m) < 0) {
			fprintf(stderr, "mshare-bench plan: --mode: '%s' is not a mode (%s)\n", tok, names);
			return 2;
		}
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

/* "100", "100,1000,3000": counts, each once, ascending in the table. */
static int add_counts(struct plan_request *req, const char *text)
{
	char buf[512], *save = NULL, *tok;
	size_t len = strlen(text);

	if (len >= sizeof(buf) || !len || text[0] == ',' || text[len - 1] == ',' || strstr(text, ",,"))
		return bad_value("--processes", text, "a process count from 1 to 4194304, or a list (100,1000)");
	strcpy(buf, text);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t n;
		int at;

		if (units_parse_count(tok, &n) < 0 || n > PT_PID_MAX_LIMIT)
			return bad_value("--processes", tok, "a process count from 1 to 4194304");
		if (req->count_n == (int)(sizeof(req->counts) / sizeof(req->counts[0])))
			return bad_value("--processes", text, "a list of at most 32 counts");
		for (at = 0; at < req->count_n && req->counts[at] < n; at++)
			;
		if (at < req->count_n && req->counts[at] == n)
			return bad_value("--processes", tok, "a count given once");
		memmove(&req->counts[at + 1], &req->counts[at], (size_t)(req->count_n - at) * sizeof(req->counts[0]));
		req->counts[at] = n;
		req->count_n++;
	}
	req->inputs.processes = req->counts[req->count_n - 1];
	return 0;
}

enum access_pattern { ACCESS_RANDOM, ACCESS_SEQUENTIAL };

struct plan_args {
	struct plan_request req;
	bool have_sga, have_processes, have_ram, json, csv, series, have_fraction, sga_node_given;
	const char *calibrate;
	const char *sga_text;         /* --sga as given, for messages */
	struct plan_pid_args pid;     /* --pid, --shmid, --file, --segment, --save-touch-map */
	const char *touch_map;
	const char *plot;
	/* --reads: a fraction of the buffers, or blocks */
	const char *reads_text;
	double reads_fraction;
	uint64_t reads_blocks;
	uint64_t block_bytes;
	bool have_block, have_access;
	enum access_pattern access;
};

/* --sga/--ram/--private: a size; a plain number is bytes, noted. 0 or 2. */
static int size_option(struct plan_args *a, const char *option, const char *v, uint64_t *out, bool zero_ok,
		       const char *expected)
{
	bool unit = true;

	if (units_parse_size_unit(v, out, &unit) < 0 || (!zero_ok && *out == 0))
		return bad_value(option, v, expected);
	if (!unit && *out) {
		for (int i = 0; i < 3; i++) {
			if (!a->req.unit_note[i][0]) {
				snprintf(a->req.unit_note[i], sizeof(a->req.unit_note[i]), "%s %s has no unit: read as %s "
					 "bytes (write e.g. %sG for GiB)", option, v, v, v);
				break;
			}
		}
	}
	return 0;
}

/* --reads: "0.004", "0.4%", "5000blocks". 0 or 2. */
static int reads_option(struct plan_args *a, const char *v)
{
	size_t len = strlen(v);
	char buf[64];

	a->reads_text = v;
	if (len >= sizeof(buf) || !len)
		return bad_value("--reads", v, "a fraction (0.004), a percentage (0.4%) or blocks (5000blocks)");
	strcpy(buf, v);
	if (len > 6 && strcmp(buf + len - 6, "blocks") == 0) {
		buf[len - 6] = '\0';
		if (units_parse_count(buf, &a->reads_blocks) < 0)
			return bad_value("--reads", v, "a number of blocks (5000blocks)");
		return 0;
	}
	if (buf[len - 1] == '%') {
		char *end;
		double pctv;

		buf[len - 1] = '\0';
		if (!(isdigit((unsigned char)buf[0]) || buf[0] == '.'))
			return bad_value("--reads", v, "a percentage above 0 and at most 100 (0.4%)");
		pctv = strtod(buf, &end);
		if (*end || !(pctv > 0 && pctv <= 100))
			return bad_value("--reads", v, "a percentage above 0 and at most 100 (0.4%)");
		a->reads_fraction = pctv / 100.0;
		return 0;
	}
	if (units_parse_fraction(buf, &a->reads_fraction) < 0)
		return bad_value("--reads", v, "a fraction F with 0 < F <= 1, a percentage (0.4%) or blocks (5000blocks)");
	return 0;
}

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
	case P_CSV:
		a->csv = true;
		break;
	case P_PLOT:
		a->plot = v;
		break;
	case P_SGA:
		if (size_option(a, "--sga", v, &req->region.size, false,
				"a size above zero (e.g. 4K, 256M, 300G, 255.5G, 1T)"))
			return 2;
		a->have_sga = true;
		a->sga_text = v;
		break;
	case P_PROCESSES:
		if (add_counts(req, v))
			return 2;
		a->have_processes = true;
		break;
	case P_READS:
		return reads_option(a, v);
	case P_BLOCK_SIZE:
		if (size_option(a, "--block-size", v, &a->block_bytes, false, "a block size (8K)"))
			return 2;
		a->have_block = true;
		break;
	case P_ACCESS:
		if (strcmp(v, "random") == 0)
			a->access = ACCESS_RANDOM;
		else if (strcmp(v, "sequential") == 0)
			a->access = ACCESS_SEQUENTIAL;
		else
			return bad_value("--access", v, "random or sequential");
		a->have_access = true;
		break;
	case P_SHMID:
		if (strcmp(v, "0") == 0)
			pid = 0;
		else if (units_parse_count(v, &pid) < 0 || pid > INT32_MAX)
			return bad_value("--shmid", v, "a SysV shared memory id (ipcs -m)");
		a->pid.shmid = (int64_t)pid;
		a->pid.by_shmid = true;
		break;
	case P_FILE:
		a->pid.file = v;
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
		if (size_option(a, "--ram", v, &req->inputs.ram_bytes, false, "a size above zero (e.g. 512G, 1.5T)"))
			return 2;
		a->have_ram = true;
		break;
	case P_PRIVATE:
		if (size_option(a, "--private", v, &req->inputs.private_bytes, true, "a size (e.g. 0, 64M, 2G)"))
			return 2;
		req->private_given = true;
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

static uint64_t read_proc_u64(const char *path)
{
	FILE *f = fopen(path, "re");
	unsigned long long v = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%llu", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

/* The plan is for this host: max procs no more than its pid_max and
 * threads-max (every process needs a pid and is a task). */
static void host_limits(struct plan_request *req)
{
	req->pid_max = read_proc_u64("/proc/sys/kernel/pid_max");
	req->threads_max = read_proc_u64("/proc/sys/kernel/threads-max");
	req->host_limits = true;
	if (req->pid_max && (!req->threads_max || req->pid_max <= req->threads_max)) {
		req->inputs.process_limit = req->pid_max;
		req->inputs.process_limit_name = "pid_max";
	} else if (req->threads_max) {
		req->inputs.process_limit = req->threads_max;
		req->inputs.process_limit_name = "threads-max";
	}
	/* pid_max counts from 0 and PIDs below 300 go to early tasks; the
	 * limit stated is the sysctl's value, an upper bound. */
}

/* --reads: the DBA's reads turned into the touched part of the region,
 * the conversion written into req->touch_note. 0, or 2 (message printed). */
static int convert_reads(struct plan_args *a)
{
	struct plan_request *req = &a->req;
	uint64_t size = req->region.size, block = a->have_block ? a->block_bytes : 8192;
	uint64_t spans = pt_span_pages(req->region.addr, req->region.addr + size, PT_PTE_SPAN);
	uint64_t nblocks = size / block ? size / block : 1, blocks, touched;
	char blk[32];

	units_format_bytes(block, blk, sizeof(blk));
	if (block % 4096 && block < PT_PTE_SPAN) {
		fprintf(stderr, "mshare-bench plan: --block-size %s is not a multiple of 4 KiB\n", blk);
		return 2;
	}
	blocks = a->reads_blocks ? a->reads_blocks : (uint64_t)ceil(a->reads_fraction * (double)nblocks);
	if (blocks == 0)
		blocks = 1;
	if (blocks > nblocks) {
		fprintf(stderr, "mshare-bench plan: --reads %s: %" PRIu64 " blocks of %s is more than the %" PRIu64
			" blocks of the region\n", a->reads_text, blocks, blk, nblocks);
		return 2;
	}
	if (a->access == ACCESS_SEQUENTIAL) {
		touched = blocks * block;
		req->region.touched_bytes = touched;
		snprintf(req->touch_note, sizeof(req->touch_note), "--reads %s, sequential: %" PRIu64 " blocks of %s = %s "
			 "from the region's start: %" PRIu64 " of its %" PRIu64 " 2 MiB spans (model's conversion)",
			 a->reads_text, blocks, blk, units_format_bytes(touched, (char[32]){ 0 }, 32),
			 pt_span_pages(req->region.addr, req->region.addr + units_align_up(touched, 4096), PT_PTE_SPAN),
			 spans);
		return 0;
	}
	/* Random: expected distinct spans of B uniform picks among S. */
	{
		double e = (double)spans * (1.0 - pow(1.0 - 1.0 / (double)spans, (double)blocks));
		uint64_t t = (uint64_t)llround(e), per;
		struct pt_range *map;

		if (t < 1)
			t = 1;
		if (t > spans)
			t = spans;
		/* Each touched span holds its share of the blocks read (so the
		 * touch map's bytes are the bytes read), at most the span. */
		per = units_align_up((blocks + t - 1) / t * block, 4096);
		if (per > PT_PTE_SPAN)
			per = PT_PTE_SPAN;
		map = calloc(t, sizeof(*map));
		if (!map) {
			fprintf(stderr, "mshare-bench plan: out of memory\n");
			return 2;
		}
		/* t spans spread evenly over the region, their blocks in each,
		 * never past the span (nor the region's end). */
		for (uint64_t i = 0; i < t; i++) {
			uint64_t span = i * spans / t;
			uint64_t base = units_align_down(req->region.addr, PT_PTE_SPAN) + span * PT_PTE_SPAN;
			uint64_t s0 = base > req->region.addr ? base - req->region.addr : 0;
			uint64_t e0 = s0 + per, span_end = base + PT_PTE_SPAN - req->region.addr;

			if (e0 > span_end)
				e0 = span_end;
			if (e0 > size)
				e0 = size;
			map[i] = (struct pt_range){ s0, e0, NULL };
		}
		req->region.touch = map;
		req->region.touch_count = t;
		snprintf(req->touch_note, sizeof(req->touch_note), "--reads %s, random: %" PRIu64 " blocks of %s uniformly "
			 "over the region's %" PRIu64 " 2 MiB spans touch %" PRIu64 " of them (%.4g%%; expected value "
			 "S x (1 - (1 - 1/S)^B), the model's conversion), spread over the region", a->reads_text, blocks,
			 blk, spans, t, (double)t / (double)spans * 100.0);
	}
	return 0;
}

/* Checks that apply whatever the mode; 0 or 2. *//* Checks that apply whatever the mode; 0 or 2. */
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

static void print_csv(FILE *out, const struct plan_request *req, const struct plan_row *rows)
{
	int nc = req->count_n > 0 ? req->count_n : 1;

	fprintf(out, "# MODELLED by mshare-bench plan (not measured); page-table bytes hold PTE+PMD+PUD pages\n");
	fprintf(out, "mode,data,leaf_page_bytes,processes,pagetable_bytes_per_process,pagetable_bytes_shared,"
		"pagetable_bytes_total,sga_ram_bytes,private_bytes_total,demand_bytes,ram_bytes,fits,max_processes,"
		"max_processes_limited_by\n");
	for (int i = 0; i < req->mode_count; i++) {
		const struct deploy *d = deploy_get(req->modes[i]);

		if (!rows[i].valid)
			continue;
		for (int k = 0; k < nc; k++) {
			struct capacity c;
			uint64_t n = req->count_n ? req->counts[k] : req->inputs.processes;

			plan_capacity_at(req, &rows[i], req->modes[i], n, &c);
			fprintf(out, "%s,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
				",%" PRIu64 ",%" PRIu64 ",%s,%" PRIu64 ",%s\n", d->name, d->data == DATA_RAM ? "ram" : "device",
				c.cost.leaf_page_bytes, n, c.pt_per_process_bytes, c.pt_shared_bytes, c.pt_total_bytes,
				c.sga_ram_bytes, c.private_total_bytes, c.demand_bytes, req->inputs.ram_bytes,
				c.fits ? "yes" : "no", c.max_processes, c.max_limited_by);
		}
	}
}

int plan_main(int argc, char **argv)
{
	struct plan_args a;
	struct plan_row rows[DEPLOY_COUNT];
	bool modes_given, live;
	int rc, outputs;

	memset(&a, 0, sizeof(a));
	rc = parse_args(argc, argv, &a);
	if (rc)
		return rc == 1 ? 0 : rc;
	live = a.pid.pid || a.pid.by_shmid || a.pid.file;
	if (a.sga_node_given && !a.req.nodes) {
		fprintf(stderr, "mshare-bench plan: --sga-node %d goes with --nodes\n", a.req.sga_node);
		return 2;
	}
	if (a.sga_node_given && a.req.sga_node >= (int)a.req.nodes) {
		fprintf(stderr, "mshare-bench plan: --sga-node %d is not one of the %u nodes of --nodes (0 to %u)\n",
			a.req.sga_node, a.req.nodes, a.req.nodes - 1);
		return 2;
	}
	if (a.req.nodes && (a.calibrate || live || a.series)) {
		fprintf(stderr, "mshare-bench plan: --nodes %u does not go with %s\n", a.req.nodes,
			a.calibrate ? "--calibrate" : live ? "--pid, --shmid or --file" : "--series");
		return 2;
	}
	outputs = a.json + a.csv + a.series;
	if (outputs > 1) {
		fprintf(stderr, "mshare-bench plan: --json, --csv and --series each choose the output; give one\n");
		return 2;
	}
	if (a.calibrate) {
		if (a.have_sga || a.have_processes || a.have_ram || a.req.mode_count || live || a.touch_map || a.csv ||
		    a.plot) {
			fprintf(stderr, "mshare-bench plan: --calibrate takes its inputs from the records; "
				"only --json or --series may go with it\n");
			return 2;
		}
		return calibrate_main(a.calibrate, a.series ? CALIBRATE_SERIES
				      : a.json ? CALIBRATE_JSON : CALIBRATE_TEXT, stdout);
	}
	if ((a.pid.pid != 0) + a.pid.by_shmid + (a.pid.file != NULL) > 1) {
		fprintf(stderr, "mshare-bench plan: --pid, --shmid and --file each name the deployment; give one\n");
		return 2;
	}
	if ((a.touch_map != NULL) + a.have_fraction + (a.reads_text != NULL) > 1) {
		fprintf(stderr, "mshare-bench plan: --touch-map, --touch-fraction and --reads each say what is touched; "
			"give one\n");
		return 2;
	}
	if ((a.have_block || a.have_access) && !a.reads_text) {
		fprintf(stderr, "mshare-bench plan: %s goes with --reads\n", a.have_block ? "--block-size" : "--access");
		return 2;
	}
	if (!a.pid.pid && (a.pid.segment || a.pid.save_touch_map) && !a.pid.by_shmid && !a.pid.file) {
		fprintf(stderr, "mshare-bench plan: %s goes with --pid\n", a.pid.segment ? "--segment" : "--save-touch-map");
		return 2;
	}
	if (a.pid.segment && !a.pid.pid) {
		fprintf(stderr, "mshare-bench plan: --segment goes with --pid (--shmid and --file name the segment)\n");
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
	if (live) {
		if (a.have_sga) {
			fprintf(stderr, "mshare-bench plan: %s measures the segment's size and address; "
				"--sga does not go with it\n", a.pid.pid ? "--pid" : a.pid.file ? "--file" : "--shmid");
			return 2;
		}
		if (a.reads_text) {
			fprintf(stderr, "mshare-bench plan: --reads does not go with %s: the pages present are measured "
				"(--touch-fraction or --touch-map say what added processes touch)\n",
				a.pid.pid ? "--pid" : a.pid.file ? "--file" : "--shmid");
			return 2;
		}
		if (a.series || a.csv || a.plot) {
			fprintf(stderr, "mshare-bench plan: %s does not go with --pid, --shmid or --file\n",
				a.series ? "--series" : a.csv ? "--csv" : "--plot");
			return 2;
		}
		if (a.req.count_n > 1) {
			fprintf(stderr, "mshare-bench plan: --processes takes one count with --pid, --shmid or --file\n");
			return 2;
		}
		a.pid.have_processes = a.have_processes;
		a.pid.json = a.json;
		a.pid.modes_given = a.req.mode_count > 0;
		a.pid.touch_given = a.touch_map || a.have_fraction;
		if (!a.have_ram) {
			a.req.inputs.ram_bytes = host_memtotal();
			a.req.ram_from_host = true;
		}
		/* A running deployment is on this host. */
		host_limits(&a.req);
		if (!a.pid.modes_given)
			for (int m = 0; m < DEPLOY_COUNT; m++)
				a.req.modes[a.req.mode_count++] = (enum deploy_id)m;
		{
			const struct pt_range *user_touch = a.req.region.touch;

			rc = plan_pid_main(&a.req, &a.pid, stdout);
			free((void *)user_touch);
		}
		return rc;
	}
	if ((rc = check_plan_args(&a)) != 0)
		return rc;
	if (a.req.ram_from_host)
		host_limits(&a.req);
	if (a.req.region.touch_count && a.req.region.touch[a.req.region.touch_count - 1].end > a.req.region.size) {
		fprintf(stderr, "mshare-bench plan: --touch-map '%s': range up to offset 0x%llx lies beyond --sga (%llu bytes)\n",
			a.touch_map, (unsigned long long)a.req.region.touch[a.req.region.touch_count - 1].end,
			(unsigned long long)a.req.region.size);
		free((void *)a.req.region.touch);
		return 2;
	}
	if (a.reads_text && (rc = convert_reads(&a)) != 0)
		return rc;
	if (!a.reads_text && !a.touch_map && !a.have_fraction)
		snprintf(a.req.touch_note, sizeof(a.req.touch_note), "touch NOT GIVEN: every process touches all of the "
			 "region (the upper bound); PostgreSQL backends MEASURED after a full pass over 7/8 of the "
			 "buffers touched 90.4%% to 92.2%% of the 2 MiB spans (results/postgres-dba-ref3, 10-200 "
			 "clients): --touch-fraction 0.9; under pgbench -S at scale 8 7-8%% "
			 "(results/postgres-scale-*): --touch-fraction 0.08; or --reads in blocks");

	modes_given = a.req.mode_count > 0;
	if (!modes_given)
		for (int m = 0; m < DEPLOY_COUNT; m++)
			a.req.modes[a.req.mode_count++] = (enum deploy_id)m;

	memset(rows, 0, sizeof(rows));
	for (int i = 0; i < a.req.mode_count; i++) {
		if (plan_compute_row(&a.req, a.req.modes[i], &a.req.region, &a.req.inputs, &rows[i]) < 0) {
			/* A mode the user named must work; in the default
			 * all-modes table it is shown as not applicable. */
			if (modes_given) {
				fprintf(stderr, "mshare-bench plan: --mode %s: %s\n", deploy_name(a.req.modes[i]),
					rows[i].error);
				free((void *)a.req.region.touch);
				return 2;
			}
		}
	}

	if (a.plot && plan_plot(a.plot, &a.req, rows) != 0) {
		free((void *)a.req.region.touch);
		return 2;
	}
	if (a.series)
		plan_report_series(stdout, &a.req, rows);
	else if (a.csv)
		print_csv(stdout, &a.req, rows);
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
