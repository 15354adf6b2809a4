/* cli.c - parsing `mshare-bench run` options and its --help. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "parse.h"

#define MAX_WORKERS 4000000u

void cli_usage(FILE *out)
{
	fprintf(out,
"usage: mshare-bench run --backend B --workers N --size S --workload W [options]\n"
"       mshare-bench backends      list backends and whether each is usable here\n"
"       mshare-bench workloads     list workloads and their options\n"
"       mshare-bench plan ...      capacity planner\n"
"       mshare-bench selftest-bench [--workers N] [--size S]   harness overhead figures\n"
"       mshare-bench cleanup       give back huge pages that killed runs left in the pool\n"
"\n"
"run: fork N workers that each map one shared region at a fixed address, run a\n"
"workload on it, and measure page-table memory and first-touch fault latency.\n"
"\n"
"  --backend B      shm, file, anon, hugetlb-2m, hugetlb-1g, mshare, mshare-anon\n"
"                   (see `backends`; mshare needs a kernel with the mshare series)\n"
"  --workers N      number of worker processes (1 to 4000000)\n"
"  --size S         region size: bytes, 0x hex, or 4K, 256M, 1G, 300G, 2T\n"
"                   (binary units); a multiple of the backend's page size\n"
"  --workload W     touch, pt-footprint, ... (see `workloads`)\n"
"  --path P         shm: directory (default /dev/shm); file: FILE or DIR;\n"
"                   mshare: directory of the backing file (default /mnt/pmem)\n"
"  --addr A         region address (hex, or a size like 2T); default 0x20000000000\n"
"                   (2 TiB). Without --addr the address must be 512 GiB-aligned.\n"
"  --page 4k|any    4k: base pages only (MADV_NOHUGEPAGE); any: the kernel\n"
"                   chooses (default). The page size obtained is measured.\n"
"  --write          touch pages by writing (default: reading)\n"
"  --seed N         base of the per-worker seeds (default %d)\n"
"  --duration D     time budget of workloads with operations: 10s, 500ms, 2m\n"
"                   (default 10s when neither --duration nor --ops is given)\n"
"  --ops N          operation budget per worker\n"
"  --out FILE       write the JSON record to FILE (a CSV file with header if\n"
"                   FILE ends in .csv); atomic, never over an existing file.\n"
"                   Without --out the JSON record goes to stdout.\n"
"  --csv FILE       also append the record as one CSV row to FILE (header\n"
"                   written when FILE is new)\n"
"  --skip-memory-check  do not refuse runs whose expected memory (the region\n"
"                   data faulted in, or the hugepage pool growth, plus page\n"
"                   tables and 256 KiB per worker) exceeds 90%% of MemAvailable\n"
"                   (to provoke the OOM killer on purpose)\n"
"  --quiet          no human summary on stderr\n"
"  --check          check the options (values, workload options, sizes and\n"
"                   alignment the backend needs) and exit: 0 if a run would\n"
"                   accept them, 2 with the message if not. Runs nothing and\n"
"                   does not look at this host's backends or memory.\n"
"  --cpus C         bind each worker to one CPU (hwloc): spread (the NUMA nodes\n"
"                   in turn, then the next CPU of each), compact (every worker\n"
"                   on the first node with CPUs, its CPUs in turn) or a list\n"
"                   such as 0,2-3 (its CPUs in turn). Default: not bound.\n"
"                   Only CPUs this process may run on are accepted.\n"
"  --mem-policy P   memory policy (set_mempolicy) of the run, inherited by\n"
"                   every worker: local, bind:NODES or interleave[:NODES]\n"
"                   (NODES such as 1 or 0-1; interleave alone: every node\n"
"                   with memory). It places the region's data the workers\n"
"                   fault in (shared memory, page cache, hugetlb pages from\n"
"                   the pool's free pages) and, since the kernel allocates a\n"
"                   page-table page under the policy of the task that faults,\n"
"                   the page tables too; not the data of a DAX file, which is\n"
"                   on the device (its node is recorded). Default: unchanged.\n"
"                   The record gives page tables per node either way.\n"
"  --<param> VALUE  the selected workload's own options (see `workloads`)\n"
"Every option may be given once.\n"
"\n"
"Exit status: 0 record written; 1 error, nothing written; 2 bad input;\n"
"3 record written but some workers failed; 4 record written to only one of\n"
"--out/stdout and --csv (the message says which and why); 130/143\n"
"interrupted (no record). A signal that arrives while the record is being\n"
"committed waits until it is: the record is then complete, and the status\n"
"is that of the written record.\n",
		DEFAULT_SEED);
}

/* Value of option i: "--name=value" or "--name value". */
static const char *option_value(int argc, char **argv, int *i, const char *eq, char *err, size_t err_len)
{
	if (eq)
		return eq + 1;
	if (*i + 1 >= argc || strncmp(argv[*i + 1], "--", 2) == 0) {
		snprintf(err, err_len, "option %s needs a value", argv[*i]);
		return NULL;
	}
	return argv[++*i];
}

static bool known_option(const char *name, const struct workload_ops *wl)
{
	static const char *const names[] = { "backend", "workload", "workers", "size", "path", "out", "csv",
					     "addr", "page", "seed", "duration", "ops", "cpus",
					     "mem-policy" };
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if (strcmp(names[k], name) == 0)
			return true;
	for (int k = 0; wl && k < WORKLOAD_MAX_PARAMS && wl->params[k].name; k++)
		if (strcmp(wl->params[k].name, name) == 0)
			return true;
	return false;
}

int cli_parse_run(int argc, char **argv, struct run_config *cfg, char *err, size_t err_len)
{
	const char *backend = NULL, *workload = NULL, *workers = NULL, *size = NULL;
	struct {
		char name[64];
		const char *value;
	} seen[64];
	int nseen = 0;

	memset(cfg, 0, sizeof(*cfg));
	cfg->addr = DEFAULT_REGION_ADDR;
	cfg->seed = DEFAULT_SEED;
	cfg->page = PAGE_MODE_ANY;

	/* First pass: which workload, so its options can be recognised. */
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			cli_usage(stdout);
			return 1;
		}
		/* An empty or missing value is left to the main pass's message. */
		if (strncmp(argv[i], "--workload=", 11) == 0 && argv[i][11])
			workload = argv[i] + 11;
		else if (strcmp(argv[i], "--workload") == 0 && i + 1 < argc && argv[i + 1][0] &&
			 strncmp(argv[i + 1], "--", 2) != 0)
			workload = argv[i + 1];
	}
	if (workload) {
		cfg->workload = workload_find(workload);
		if (!cfg->workload) {
			snprintf(err, err_len, "unknown workload '%s' (see `mshare-bench workloads`)", workload);
			return -1;
		}
		for (int p = 0; p < WORKLOAD_MAX_PARAMS && cfg->workload->params[p].name; p++)
			cfg->param_values[p] = cfg->workload->params[p].default_value;
	}

	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (strncmp(arg, "--", 2) != 0) {
			snprintf(err, err_len, "unexpected argument '%s' (options start with --)", arg);
			return -1;
		}
		const char *eq = strchr(arg, '=');
		size_t nlen = eq ? (size_t)(eq - arg) : strlen(arg);
		char name[64];
		if (nlen - 2 >= sizeof(name)) {
			snprintf(err, err_len, "unknown option '%s'", arg);
			return -1;
		}
		memcpy(name, arg + 2, nlen - 2);
		name[nlen - 2] = '\0';

		/* Every option once: a repeat is a mistake, not an override. */
		for (int k = 0; k < nseen; k++) {
			if (strcmp(seen[k].name, name) == 0) {
				const char *again = eq ? eq + 1 : i + 1 < argc ? argv[i + 1] : "";
				if (seen[k].value)
					snprintf(err, err_len, "option --%s is given twice ('%s', then '%s'); give it once",
						 name, seen[k].value, again);
				else
					snprintf(err, err_len, "option --%s is given twice; give it once", name);
				return -1;
			}
		}
		/* Known names are far fewer than the slots; an unknown one ends
		 * the parse below. */
		int slot = nseen < (int)(sizeof(seen) / sizeof(seen[0])) ? nseen++ : -1;
		if (slot >= 0) {
			snprintf(seen[slot].name, sizeof(seen[slot].name), "%s", name);
			seen[slot].value = NULL;
		}
		/* Flags first. */
		if (strcmp(name, "write") == 0 || strcmp(name, "skip-memory-check") == 0 ||
		    strcmp(name, "quiet") == 0 || strcmp(name, "check") == 0) {
			if (eq) {
				snprintf(err, err_len, "option --%s takes no value (got '%s')", name, eq + 1);
				return -1;
			}
			if (name[0] == 'w')
				cfg->write = true;
			else if (name[0] == 's')
				cfg->skip_memory_check = true;
			else if (name[0] == 'q')
				cfg->quiet = true;
			else
				cfg->check_only = true;
			continue;
		}
		if (!known_option(name, cfg->workload)) {
			snprintf(err, err_len, "unknown option '--%s'%s%s%s", name,
				 cfg->workload ? " for workload " : "", cfg->workload ? cfg->workload->name : "",
				 cfg->workload ? " (see `mshare-bench workloads`)" : " (see --help)");
			return -1;
		}
		const char *v = option_value(argc, argv, &i, eq, err, err_len);
		if (!v)
			return -1;
		if (slot >= 0)
			seen[slot].value = v;
		if (!*v) {
			snprintf(err, err_len, "option --%s has an empty value", name);
			return -1;
		}
		if (strcmp(name, "backend") == 0) backend = v;
		else if (strcmp(name, "workload") == 0) workload = v;
		else if (strcmp(name, "workers") == 0) workers = v;
		else if (strcmp(name, "size") == 0) size = v;
		else if (strcmp(name, "path") == 0) cfg->path = v;
		else if (strcmp(name, "out") == 0) cfg->out = v;
		else if (strcmp(name, "csv") == 0) cfg->csv = v;
		else if (strcmp(name, "addr") == 0) {
			if (parse_addr(v, &cfg->addr, err, err_len))
				return -1;
			cfg->addr_given = true;
		} else if (strcmp(name, "page") == 0) {
			if (strcmp(v, "4k") == 0 || strcmp(v, "4K") == 0)
				cfg->page = PAGE_MODE_4K;
			else if (strcmp(v, "any") == 0)
				cfg->page = PAGE_MODE_ANY;
			else {
				snprintf(err, err_len, "--page '%s' is not 4k or any", v);
				return -1;
			}
		} else if (strcmp(name, "seed") == 0) {
			if (parse_u64(v, &cfg->seed, err, err_len)) {
				snprintf(err, err_len, "--seed '%s' is not a non-negative integer", v);
				return -1;
			}
		} else if (strcmp(name, "duration") == 0) {
			if (parse_duration_ns(v, &cfg->duration_ns, err, err_len))
				return -1;
			cfg->duration_given = true;
		} else if (strcmp(name, "cpus") == 0) {
			if (place_parse_cpus(v, &cfg->numa, err, err_len))
				return -1;
		} else if (strcmp(name, "mem-policy") == 0) {
			if (place_parse_mem_policy(v, &cfg->numa, err, err_len))
				return -1;
		} else if (strcmp(name, "ops") == 0) {
			if (parse_count(v, &cfg->max_ops, err, err_len)) {
				snprintf(err, err_len, "--ops '%s' is not a positive integer", v);
				return -1;
			}
		} else {
			int p = -1;
			for (int k = 0; cfg->workload && k < WORKLOAD_MAX_PARAMS && cfg->workload->params[k].name; k++)
				if (strcmp(cfg->workload->params[k].name, name) == 0)
					p = k;
			if (p < 0) {
				snprintf(err, err_len, "unknown option '--%s'%s%s%s", name,
					 cfg->workload ? " for workload " : "", cfg->workload ? cfg->workload->name : "",
					 cfg->workload ? " (see `mshare-bench workloads`)" : "");
				return -1;
			}
			cfg->param_values[p] = v;
			cfg->param_given[p] = true;
		}
	}

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
	if (cfg->csv && stat(cfg->csv, &st) == 0) {
		static const char first[] = "schema_version,";
		char head[sizeof(first) - 1], last = '\n';
		int fd = -1;
		bool good = S_ISREG(st.st_mode);
		if (good && st.st_size > 0) {
			fd = open(cfg->csv, O_RDONLY | O_CLOEXEC);
			good = fd >= 0 && pread(fd, head, sizeof(head), 0) == (ssize_t)sizeof(head) &&
			       memcmp(head, first, sizeof(head)) == 0 && pread(fd, &last, 1, st.st_size - 1) == 1;
			if (fd >= 0)
				close(fd);
		}
		if (!good) {
			snprintf(err, err_len, "--csv %s is not a CSV file of mshare-bench records; give a new file",
				 cfg->csv);
			return -1;
		}
		if (last != '\n') {
			snprintf(err, err_len, "--csv %s ends in a cut-off row (no newline at the end); repair or move it",
				 cfg->csv);
			return -1;
		}
	}
	return 0;
}
