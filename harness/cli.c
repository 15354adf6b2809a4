/* cli.c - parsing `mshare-bench run` options and its --help. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "csv.h"
#include "opts.h"
#include "parse.h"

#define MAX_WORKERS 4000000u

enum {
	RO_BACKEND, RO_WORKERS, RO_SIZE, RO_WORKLOAD, RO_PATH, RO_ADDR, RO_PAGE, RO_WRITE, RO_SEED, RO_DURATION, RO_OPS,
	RO_OUT, RO_CSV, RO_SKIP_MEMORY_CHECK, RO_QUIET, RO_CHECK, RO_CPUS, RO_MEM_POLICY, RO_KERNEL_FAULT_TIME, RO_HW_INSTRUCTIONS, RO_REUSE_PATH, RO_COUNT
};

/* The options of `run`: the parser and the --help text both come from here
 * (--backend's list is filled in from the backend table). */
static struct opt run_options[RO_COUNT + 1] = {
	[RO_BACKEND] = { "backend", "B", NULL, false },
	[RO_WORKERS] = { "workers", "N", "number of worker processes (1 to 4000000)", false },
	[RO_SIZE] = { "size", "S", "region size: bytes, 0x hex, or 4K, 256M, 1G, 300G, 2T\n"
				  "(binary units); a multiple of the backend's page size", false },
	[RO_WORKLOAD] = { "workload", "W", NULL, false },
	[RO_PATH] = { "path", "P", "shm: directory (default /dev/shm); file: FILE or DIR;\n"
				  "mshare: directory of the backing file (default /mnt/pmem)", false },
	[RO_REUSE_PATH] = { "reuse-path", NULL, "let an existing --path FILE be used as it is: the run\n"
				   "writes into it (without this option it is refused, and a\n"
				   "--path that is a symbolic link is refused either way)", false },
	[RO_ADDR] = { "addr", "A", "region address (hex, or a size like 2T); default 0x20000000000\n"
				  "(2 TiB). Without --addr the address must be 512 GiB-aligned.", false },
	[RO_PAGE] = { "page", "4k|any", "4k: base pages only (MADV_NOHUGEPAGE); any: the kernel\n"
				       "chooses (default). The page size obtained is measured.", false },
	[RO_WRITE] = { "write", NULL, "touch pages by writing (default: reading)", false },
	[RO_SEED] = { "seed", "N", "base of the per-worker seeds (default 1)", false },
	[RO_DURATION] = { "duration", "D", "time budget of workloads with operations: 10s, 500ms, 2m\n"
					  "(default 10s when neither --duration nor --ops is given)", false },
	[RO_OPS] = { "ops", "N", "operation budget per worker", false },
	[RO_OUT] = { "out", "FILE", "write the JSON record to FILE (a CSV file with header if\n"
				   "FILE ends in .csv); atomic, never over an existing file.\n"
				   "Without --out the JSON record goes to stdout.", false },
	[RO_CSV] = { "csv", "FILE", "also append the record as one CSV row to FILE (header\n"
				   "written when FILE is new)", false },
	[RO_SKIP_MEMORY_CHECK] = { "skip-memory-check", NULL,
				  "do not refuse runs whose expected memory (the region\n"
				  "data faulted in, or the hugepage pool growth, plus page\n"
				  "tables and 256 KiB per worker) exceeds 90% of MemAvailable\n"
				  "(to provoke the OOM killer on purpose)", false },
	[RO_QUIET] = { "quiet", NULL, "no human summary on stderr", false },
	[RO_KERNEL_FAULT_TIME] = { "kernel-fault-time", NULL,
				  "also time every fault in the region with the kernel's own\n"
				  "tracing (kprobe events on handle_mm_fault, a hist trigger):\n"
				  "results.fault_cost.kernel. Needs root, tracefs and a kernel\n"
				  "with KPROBE_EVENTS and HIST_TRIGGERS (the project's guest\n"
				  "kernel). The probes add their own cost to every fault, also\n"
				  "to the user-side times: compare such runs only with each\n"
				  "other. Refused (exit 1) when the probes cannot be armed.", false },
	[RO_HW_INSTRUCTIONS] = { "hw-instructions", NULL,
				  "also count the CPU's retired instructions (user and kernel)\n"
				  "around every touch (perf_event_open; outside the timed\n"
				  "window, the fixed cost of the reads taken off):\n"
				  "results.fault_cost.hw_instructions, mean per fault and per\n"
				  "touch without one. Where there is no such counter (a VM\n"
				  "without a virtual PMU, perf_event_paranoid) the run goes\n"
				  "on and the record says why.", false },
	[RO_CHECK] = { "check", NULL, "check the options (values, workload options, sizes and\n"
				    "alignment the backend needs) and exit: 0 if a run would\n"
				    "accept them, 2 with the message if not. Runs nothing and\n"
				    "does not look at this host's backends or memory.", false },
	[RO_CPUS] = { "cpus", "C", "bind each worker to one CPU (hwloc): spread (the NUMA nodes\n"
				   "in turn, then the next CPU of each), compact (every worker\n"
				   "on the first node with CPUs, its CPUs in turn) or a list\n"
				   "such as 0,2-3 (its CPUs in turn). Default: not bound.\n"
				   "Only CPUs this process may run on are accepted.", false },
	[RO_MEM_POLICY] = { "mem-policy", "P", "memory policy (set_mempolicy) of the run, inherited by\n"
					       "every worker: local, bind:NODES or interleave[:NODES]\n"
					       "(NODES such as 1 or 0-1; interleave alone: every node\n"
					       "with memory). It places the region's data the workers\n"
					       "fault in (shared memory, page cache), the hugetlb pages\n"
					       "the set-up allocates (bind, interleave: the pool grows\n"
					       "on those nodes) and, since the kernel allocates a\n"
					       "page-table page under the policy of the task that faults,\n"
					       "the page tables too; not the data of a DAX file, which is\n"
					       "on the device (its node is recorded). Default: unchanged.\n"
					       "The record gives page tables per node either way.", false },
	[RO_COUNT] = { NULL, NULL, NULL, false },
};

/* "a, b, c" from a NULL-terminated table of names. */
#define NAME_LIST(buf, table)                                                                                  \
	do {                                                                                                   \
		size_t used_ = 0;                                                                              \
		(buf)[0] = '\0';                                                                               \
		for (size_t k_ = 0; (table)[k_] && used_ < sizeof(buf); k_++)                                  \
			used_ += (size_t)snprintf((buf) + used_, sizeof(buf) - used_, "%s%s", k_ ? ", " : "", \
						  (table)[k_]->name);                                          \
	} while (0)

void cli_usage(FILE *out)
{
	char backends[512], workloads[512], bhelp[700], whelp[600];

	NAME_LIST(backends, backend_table);
	NAME_LIST(workloads, workloads_all());
	snprintf(bhelp, sizeof(bhelp), "%s\n(see `backends`; mshare needs a kernel with the mshare series)", backends);
	snprintf(whelp, sizeof(whelp), "%s\n(see `workloads`)", workloads);
	run_options[RO_BACKEND].help = bhelp;
	run_options[RO_WORKLOAD].help = whelp;
	fprintf(out,
"usage: mshare-bench run --backend B --workers N --size S --workload W [options]\n"
"       mshare-bench backends [--json]   list backends and whether each is usable here\n"
"       mshare-bench workloads [--json]  list workloads and their options\n"
"       mshare-bench pmem [--json]       list persistent-memory namespaces (libndctl) and the backends each can serve\n"
"       mshare-bench environment --json  a record's schema version and environment here (clock, Slurm ids)\n"
"       mshare-bench record --frame F --body B --out R   write the record of a point the harness did not run (PostgreSQL)\n"
"       mshare-bench plan ...      capacity planner\n"
"       mshare-bench selftest-bench fault-rate|fork-barrier [options]   harness overhead figures\n"
"       mshare-bench cleanup       give back huge pages that killed runs left in the pool\n"
"\n"
"run: fork N workers that each map one shared region at a fixed address, run a\n"
"workload on it, and measure page-table memory, first-touch latency and the time per fault.\n"
"\n");
	opts_help(out, run_options, 19);
	fprintf(out,
"  --<param> VALUE  the selected workload's own options (see `workloads`)\n"
"Every option may be given once, as --name VALUE or --name=VALUE.\n"
"\n"
"Exit status: 0 record written; 1 error, nothing written; 2 bad input;\n"
"3 record written but some workers failed or died (when one dies in the\n"
"workload and the others then stop finishing it, e.g. waiting on a latch it\n"
"held, they are killed 20 s after it and after the time budget, not waited\n"
"for: results.workers_killed_stuck); 4 record written to only one of\n"
"--out/stdout and --csv (the message says which and why); 130/143\n"
"interrupted (no record). A signal that arrives while the record is being\n"
"committed waits until it is: the record is then complete, and the status\n"
"is that of the written record.\n");
}

struct run_parse {
	struct run_config *cfg;
	const char *text[RO_COUNT];
};

static int run_option(void *data, int i, const struct opt *o, const char *v, char *err, size_t err_len)
{
	struct run_parse *p = data;
	struct run_config *cfg = p->cfg;

	(void)o;
	if (i >= RO_COUNT) { /* the workload's own option */
		cfg->param_values[i - RO_COUNT] = v;
		cfg->param_given[i - RO_COUNT] = true;
		return 0;
	}
	p->text[i] = v;
	switch (i) {
	case RO_WRITE: cfg->write = true; break;
	case RO_SKIP_MEMORY_CHECK: cfg->skip_memory_check = true; break;
	case RO_QUIET: cfg->quiet = true; break;
	case RO_KERNEL_FAULT_TIME: cfg->kernel_fault_time = true; break;
	case RO_HW_INSTRUCTIONS: cfg->hw_instructions = true; break;
	case RO_CHECK: cfg->check_only = true; break;
	case RO_REUSE_PATH: cfg->reuse_path = true; break;
	case RO_PATH: cfg->path = v; break;
	case RO_OUT: cfg->out = v; break;
	case RO_CSV: cfg->csv = v; break;
	case RO_ADDR:
		if (parse_addr(v, &cfg->addr, err, err_len))
			return -1;
		cfg->addr_given = true;
		break;
	case RO_PAGE:
		if (strcmp(v, "4k") == 0 || strcmp(v, "4K") == 0)
			cfg->page = PAGE_MODE_4K;
		else if (strcmp(v, "any") == 0)
			cfg->page = PAGE_MODE_ANY;
		else {
			snprintf(err, err_len, "--page '%s' is not 4k or any", v);
			return -1;
		}
		break;
	case RO_SEED:
		if (parse_u64(v, &cfg->seed, err, err_len)) {
			snprintf(err, err_len, "--seed '%s' is not a non-negative integer", v);
			return -1;
		}
		break;
	case RO_DURATION:
		if (parse_duration_ns(v, &cfg->duration_ns, err, err_len))
			return -1;
		cfg->duration_given = true;
		break;
	case RO_CPUS:
		if (place_parse_cpus(v, &cfg->numa, err, err_len))
			return -1;
		break;
	case RO_MEM_POLICY:
		if (place_parse_mem_policy(v, &cfg->numa, err, err_len))
			return -1;
		break;
	case RO_OPS:
		if (parse_count(v, &cfg->max_ops, err, err_len)) {
			snprintf(err, err_len, "--ops '%s' is not a positive integer", v);
			return -1;
		}
		break;
	}
	return 0;
}

int cli_parse_run(int argc, char **argv, struct run_config *cfg, char *err, size_t err_len)
{
	struct run_parse p = { .cfg = cfg };
	const char *workload = NULL;
	struct opt params[WORKLOAD_MAX_PARAMS + 1];

	memset(cfg, 0, sizeof(*cfg));
	cfg->addr = DEFAULT_REGION_ADDR;
	cfg->seed = DEFAULT_SEED;
	cfg->page = PAGE_MODE_ANY;

	/* First: which workload, so that its options join the table. An empty
	 * or missing value is left to the parse's message. */
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			cli_usage(stdout);
			return 1;
		}
		if (strncmp(argv[i], "--workload=", 11) == 0 && argv[i][11])
			workload = argv[i] + 11;
		else if (strcmp(argv[i], "--workload") == 0 && i + 1 < argc && argv[i + 1][0] &&
			 strncmp(argv[i + 1], "--", 2) != 0)
			workload = argv[i + 1];
	}
	int np = 0;
	if (workload) {
		cfg->workload = workload_find(workload);
		if (!cfg->workload) {
			snprintf(err, err_len, "unknown workload '%s' (see `mshare-bench workloads`)", workload);
			return -1;
		}
		for (; np < WORKLOAD_MAX_PARAMS && cfg->workload->params[np].name; np++) {
			const struct workload_param *wp = &cfg->workload->params[np];
			params[np] = (struct opt){ wp->name, "VALUE", wp->help, false };
			cfg->param_values[np] = wp->default_value;
		}
	}
	params[np] = (struct opt){ NULL, NULL, NULL, false };

	int rc = opts_parse(run_options, params, argc, argv, run_option, &p, err, err_len);
	if (rc == 1) {
		cli_usage(stdout);
		return 1;
	}
	if (rc == -2) { /* unknown option: say where the known ones are listed */
		size_t len = strlen(err);
		if (cfg->workload)
			snprintf(err + len, err_len - len, " for workload %s (see `mshare-bench workloads`)",
				 cfg->workload->name);
		else
			snprintf(err + len, err_len - len, " (see --help)");
	}
	if (rc)
		return -1;
	const char *backend = p.text[RO_BACKEND], *workers = p.text[RO_WORKERS], *size = p.text[RO_SIZE];
	workload = p.text[RO_WORKLOAD];
	if (!backend || !workers || !size || !workload) {
		snprintf(err, err_len, "run needs --backend, --workers, --size and --workload (missing %s)",
			 !backend ? "--backend" : !workers ? "--workers" : !size ? "--size" : "--workload");
		return -1;
	}
	cfg->backend = backend_find(backend);
	if (!cfg->backend) {
		snprintf(err, err_len, "unknown backend '%s' (see `mshare-bench backends`)", backend);
		return -1;
	}
	uint64_t n;
	if (parse_count(workers, &n, err, err_len) || n > MAX_WORKERS) {
		snprintf(err, err_len, "--workers '%s' is not a number from 1 to %u", workers, MAX_WORKERS);
		return -1;
	}
	cfg->workers = (unsigned)n;
	if (parse_size(size, &cfg->size, err, err_len)) {
		char inner[200];
		snprintf(inner, sizeof(inner), "%s", err);
		snprintf(err, err_len, "--size: %s", inner);
		return -1;
	}
	if (cfg->backend->data == BACKEND_DATA_FILE && !cfg->backend->default_path && !cfg->path) {
		snprintf(err, err_len, "backend %s needs --path FILE or --path DIR", cfg->backend->name);
		return -1;
	}
	uint64_t page = cfg->backend->page_bytes ? cfg->backend->page_bytes : 4096;
	char pb[32];
	format_bytes(page, pb, sizeof(pb));
	if (cfg->size % page) {
		snprintf(err, err_len, "--size '%s' is not a multiple of the %s page of backend %s", size, pb,
			 cfg->backend->name);
		return -1;
	}
	if (cfg->addr % page) {
		snprintf(err, err_len, "--addr 0x%llx is not aligned to the %s page of backend %s",
			 (unsigned long long)cfg->addr, pb, cfg->backend->name);
		return -1;
	}
	if (!cfg->addr_given && cfg->addr % REGION_ALIGN) {
		snprintf(err, err_len, "region address 0x%llx is not 512 GiB-aligned", (unsigned long long)cfg->addr);
		return -1;
	}
	/* x86-64 user space with 4-level paging ends at 128 TiB. */
	const uint64_t user_top = 1ull << 47;
	if (cfg->addr == 0 || cfg->addr >= user_top || cfg->size > user_top - cfg->addr) {
		snprintf(err, err_len, "region 0x%llx + %s does not fit in the 128 TiB user address space",
			 (unsigned long long)cfg->addr, size);
		return -1;
	}
	if (!cfg->duration_given && !cfg->max_ops)
		cfg->duration_ns = DEFAULT_DURATION_NS;
	struct stat st;
	if (cfg->out && (lstat(cfg->out, &st) == 0)) {
		snprintf(err, err_len, "--out %s already exists; refusing to overwrite it", cfg->out);
		return -1;
	}
	/* The record is written after the run: check now that it can be. */
	for (int k = 0; k < 2; k++) {
		const char *file = k ? cfg->csv : cfg->out;
		if (!file)
			continue;
		/* Room for the temporary name the commit uses beside it
		 * (NAME.mshare-bench-tmp.PID): a name too long fails now, not
		 * after the whole run. */
		const char *base = strrchr(file, '/');
		base = base ? base + 1 : file;
		if (strlen(file) + 30 >= 4096 || strlen(base) + 30 > 255) {
			snprintf(err, err_len, "%s: the name is too long (%zu characters, its last component %zu; at "
					       "most 4065 and 225): %.60s...", k ? "--csv" : "--out", strlen(file),
				 strlen(base), file);
			return -1;
		}
		char dir[4096];
		path_dir(file, dir, sizeof(dir));
		if (access(dir, W_OK | X_OK) != 0) {
			snprintf(err, err_len, "%s %s: directory %s is missing or not writable", k ? "--csv" : "--out",
				 file, dir);
			return -1;
		}
	}
	if (cfg->csv && cfg->out && strcmp(cfg->csv, cfg->out) == 0) {
		snprintf(err, err_len, "--csv %s is also the --out file; give two files", cfg->csv);
		return -1;
	}
	/* An existing --csv must be this tool's CSV, whole: a row is never
	 * appended to another file or after a cut-off row. */
	if (cfg->csv && csv_check_path(cfg->csv, err, err_len) != 0)
		return -1;
	return 0;
}
