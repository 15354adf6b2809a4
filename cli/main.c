/* main.c - the program's entry: `mshare-bench` subcommand dispatch, the
 * `backends` and `workloads` listings. It sits in cli/, above harness/,
 * planner/ and workloads/: it joins them (the harness's run, the planner's
 * plan, the workloads' table), and none of them reaches up to it. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "cli.h"
#include "environment.h"
#include "hugepool.h"
#include "json.h"
#include "layout.h"
#include "mshare_detect.h"
#include "opts.h"
#include "parse.h"
#include "plan.h"
#include "pmem_ns.h"
#include "record_external.h"
#include "record_files.h"
#include "run.h"
#include "run_result.h"
#include "selftest_bench.h"
#include "workload.h"
#include "workloads.h"

static const struct opt json_only[] = {
	{ "json", NULL, "JSON: every fact of the table, for the tools", false },
	{ NULL, NULL, NULL, false },
};

static int set_flag(void *data, int i, const struct opt *o, const char *v, char *err, size_t err_len)
{
	(void)i, (void)o, (void)v, (void)err, (void)err_len;
	*(bool *)data = true;
	return 0;
}

/* `backends` / `workloads` [--json]: 0 text, 1 JSON (w is started: an
 * array), or -1 when the command is over (--help: *code 0; bad usage: 2). */
static int listing_args(int argc, char **argv, const char *what, struct json_writer *w, int *code)
{
	bool json = false;
	char err[256];
	int rc = opts_parse(json_only, NULL, argc, argv, set_flag, &json, err, sizeof(err));

	if (rc == 1) {
		printf("usage: mshare-bench %s [--json]\n", what);
		opts_help(stdout, json_only, 19);
		*code = 0;
		return -1;
	}
	if (rc) {
		fprintf(stderr, "mshare-bench %s: %s\n", what, err);
		*code = 2;
		return -1;
	}
	if (json) {
		json_init(w, stdout);
		json_begin_array(w, NULL);
	}
	return json;
}

static int finish_json(struct json_writer *w)
{
	bool failed = json_failed(w);

	json_free(w);
	putchar('\n');
	if (failed || fflush(stdout) != 0) {
		fprintf(stderr, "mshare-bench: cannot write the JSON listing\n");
		return 1;
	}
	return 0;
}

static int list_backends(int argc, char **argv)
{
	struct region r;
	char why[256];
	struct json_writer w;
	int code, mode = listing_args(argc, argv, "backends", &w, &code);

	if (mode < 0)
		return code;
	if (!mode) {
		printf("%-16s %-8s %s\n", "BACKEND", "USABLE", "DESCRIPTION / WHY NOT");
	}
	for (const struct backend_ops *const *b = backend_table; *b; b++) {
		memset(&r, 0, sizeof(r));
		r.backend_name = (*b)->name;
		why[0] = '\0';
		int ok = (*b)->probe(&r, why, sizeof(why)) == 0;
		if (mode) {
			json_begin_object(&w, NULL);
			backend_facts_json(&w, *b);
			json_key_bool(&w, "usable", ok);
			json_key_string(&w, "why_not", ok ? NULL : why);
			json_end_object(&w);
		} else {
			printf("%-16s %-8s %s%s%s\n", (*b)->name, ok ? "yes" : "no", (*b)->description, ok ? "" : ": ",
			       ok ? "" : why);
		}
	}
	if (mode) {
		json_end_array(&w);
		return finish_json(&w);
	}
	if (!backend_find("mshare")) {
		struct mshare_support ms;
		mshare_detect(&ms);
		printf("%-16s %-8s %s\n", "mshare", "no",
		       ms.available ? "mshare is available on this kernel but this build has no mshare backend"
				    : ms.why);
	}
	/* Where the pmem backends can run: the namespaces, in one line each. */
	struct pmem_namespace ns[64];
	char err[256], sz[32], al[32];
	size_t n;
	if (pmem_ns_list(ns, sizeof(ns) / sizeof(ns[0]), &n, err, sizeof(err)) != 0)
		printf("\npersistent memory: cannot list the namespaces (%s)\n", err);
	else if (n == 0)
		printf("\npersistent memory: no namespace on this machine\n");
	else
		printf("\npersistent memory (`mshare-bench pmem` says which backends each serves):\n");
	for (size_t i = 0; i < n; i++)
		printf("  %s %s: %s %s, %s, align %s, node %d\n", ns[i].region, ns[i].name, ns[i].mode,
		       ns[i].device[0] ? ns[i].device : "(no device)", format_bytes(ns[i].size, sz, sizeof(sz)),
		       format_bytes(ns[i].align, al, sizeof(al)), ns[i].numa_node);
	return 0;
}

static int list_workloads(int argc, char **argv)
{
	static const char *const types[] = { [WP_UINT] = "uint", [WP_SIZE] = "size", [WP_REAL] = "real",
					     [WP_CHOICE] = "choice", [WP_PATH] = "path" };
	struct json_writer w;
	int code, mode = listing_args(argc, argv, "workloads", &w, &code);

	if (mode < 0)
		return code;
	for (const struct workload_ops *const *wl = workload_table; *wl; wl++) {
		const struct workload_ops *o = *wl;
		if (!mode) {
			printf("%-14s %s\n", o->name, o->description);
			for (int p = 0; p < WORKLOAD_MAX_PARAMS && o->params[p].name; p++)
				printf("    --%-12s %s (default %s)\n", o->params[p].name, o->params[p].help,
				       o->params[p].default_value && o->params[p].default_value[0] ? o->params[p].default_value : "none");
			continue;
		}
		json_begin_object(&w, NULL);
		json_key_string(&w, "name", o->name);
		json_key_string(&w, "description", o->description);
		json_key_u64(&w, "touch_stride_bytes", o->touch_stride);
		json_key_bool(&w, "touches_whole_region", o->touches_whole_region);
		json_begin_array(&w, "params");
		for (int p = 0; p < WORKLOAD_MAX_PARAMS && o->params[p].name; p++) {
			const struct workload_param *d = &o->params[p];
			json_begin_object(&w, NULL);
			json_key_string(&w, "name", d->name);
			json_key_string(&w, "type", types[d->type]);
			json_key_string(&w, "default", d->default_value);
			json_key_string(&w, "help", d->help);
			if (d->type == WP_UINT || d->type == WP_SIZE) {
				json_key_u64(&w, "min", d->min);
				json_key_u64(&w, "max", d->max);
			} else if (d->type == WP_REAL) {
				json_key_double(&w, "above", d->lo);
				json_key_double(&w, "below", d->hi);
			} else if (d->type == WP_PATH) {
				json_key_u64(&w, "max_bytes", d->max);
			} else {
				json_begin_array(&w, "choices");
				for (int c = 0; d->choices[c]; c++)
					json_key_string(&w, NULL, d->choices[c]);
				json_end_array(&w);
			}
			json_end_object(&w);
		}
		json_end_array(&w);
		json_begin_array(&w, "counters");
		for (int c = 0; c < WORKLOAD_MAX_COUNTERS && o->counter_names[c]; c++)
			json_key_string(&w, NULL, o->counter_names[c]);
		json_end_array(&w);
		json_begin_array(&w, "phases");
		for (unsigned ph = 0; ph < workload_phase_count(o); ph++)
			json_key_string(&w, NULL, o->phase_names[ph]);
		json_end_array(&w);
		json_end_object(&w);
	}
	if (mode) {
		json_end_array(&w);
		return finish_json(&w);
	}
	return 0;
}

/* The mount point of block device dev mounted with -o dax, or "" . */
static void dax_mount_of(const char *dev, char *out, size_t len)
{
	char line[1024], src[256], dir[512], type[64], opts[512];
	FILE *f = fopen("/proc/mounts", "r");

	out[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%255s %511s %63s %511s", src, dir, type, opts) == 4 && strcmp(src, dev) == 0 &&
		    (strstr(opts, "dax") != NULL)) {
			snprintf(out, len, "%s", dir);
			break;
		}
	fclose(f);
}

/* The backends whose probe accepts where ns keeps its data: the device
 * (devdax) or the directory it is mounted on with -o dax (fsdax). */
static void pmem_servers(const struct pmem_namespace *ns, char *out, size_t len, char *where, size_t where_len)
{
	size_t n = 0;

	out[0] = '\0';
	where[0] = '\0';
	if (strcmp(ns->mode, "devdax") == 0 && ns->device[0])
		snprintf(where, where_len, "%s", ns->device);
	else if (strcmp(ns->mode, "fsdax") == 0 && ns->device[0])
		dax_mount_of(ns->device, where, where_len);
	if (!where[0])
		return;
	for (const struct backend_ops *const *b = backend_table; *b; b++) {
		struct region r;
		char why[256];

		if ((*b)->data != BACKEND_DATA_FILE)
			continue;
		memset(&r, 0, sizeof(r));
		r.backend_name = (*b)->name;
		r.path = where;
		if ((*b)->probe(&r, why, sizeof(why)) == 0 && n + strlen((*b)->name) + 2 < len)
			n += (size_t)snprintf(out + n, len - n, "%s%s", n ? "," : "", (*b)->name);
	}
}

static int list_pmem(int argc, char **argv)
{
	struct pmem_namespace ns[64];
	struct json_writer w;
	char err[256], servers[256], where[512], sz[32], al[32];
	size_t n;
	int code, mode = listing_args(argc, argv, "pmem", &w, &code);

	if (mode < 0)
		return code;
	if (pmem_ns_list(ns, sizeof(ns) / sizeof(ns[0]), &n, err, sizeof(err)) != 0) {
		if (mode)
			json_free(&w);
		fprintf(stderr, "mshare-bench pmem: %s\n", err);
		return 1;
	}
	if (!mode)
		printf("%-9s %-14s %-7s %-12s %-10s %-6s %-5s %s\n", "REGION", "NAMESPACE", "MODE", "DEVICE", "SIZE",
		       "ALIGN", "NODE", "BACKENDS (AT)");
	for (size_t i = 0; i < n; i++) {
		pmem_servers(&ns[i], servers, sizeof(servers), where, sizeof(where));
		if (mode) {
			json_begin_object(&w, NULL);
			json_key_string(&w, "region", ns[i].region);
			json_key_string(&w, "namespace", ns[i].name);
			json_key_string(&w, "mode", ns[i].mode);
			json_key_string(&w, "device", ns[i].device[0] ? ns[i].device : NULL);
			json_key_u64(&w, "size", ns[i].size);
			json_key_u64(&w, "align", ns[i].align);
			if (ns[i].numa_node >= 0)
				json_key_i64(&w, "numa_node", ns[i].numa_node);
			else
				json_key_null(&w, "numa_node");
			json_key_string(&w, "path", where[0] ? where : NULL);
			json_begin_array(&w, "backends");
			for (char *tok = strtok(servers, ","); tok; tok = strtok(NULL, ","))
				json_key_string(&w, NULL, tok);
			json_end_array(&w);
			json_end_object(&w);
			continue;
		}
		printf("%-9s %-14s %-7s %-12s %-10s %-6s %-5d %s%s%s%s\n", ns[i].region, ns[i].name, ns[i].mode,
		       ns[i].device[0] ? ns[i].device : "-", format_bytes(ns[i].size, sz, sizeof(sz)),
		       format_bytes(ns[i].align, al, sizeof(al)), ns[i].numa_node,
		       servers[0] ? servers : "none", where[0] ? " (--path " : "", where, where[0] ? ")" : "");
		if (!servers[0])
			printf("%-9s %s\n", "", strcmp(ns[i].mode, "fsdax") == 0 ? "  not mounted with -o dax"
					     : strcmp(ns[i].mode, "devdax") == 0 ? "  no backend accepts it here (see `backends`)"
										  : "  not DAX: no direct mapping of persistent memory");
	}
	if (mode) {
		json_end_array(&w);
		return finish_json(&w);
	}
	if (n == 0)
		printf("(no persistent-memory namespace on this machine)\n");
	return 0;
}

/* `environment --json`: the record's frame as the harness writes it for a
 * run here and now: schema_version, tool and the environment object
 * (platform, clock and time unit read on this machine, Slurm ids from this
 * process's environment). A run the harness does not drive itself (a
 * PostgreSQL point: bench/lib/pgpoint.py) takes its frame from here, and
 * `record` below writes its record inside that frame, so
 * that every record has the harness's schema and clock, never a guess. */
static int print_environment(int argc, char **argv)
{
	struct json_writer w;
	bool json = false;
	char err[256];
	int rc = opts_parse(json_only, NULL, argc, argv, set_flag, &json, err, sizeof(err));

	if (rc == 1) {
		printf("usage: mshare-bench environment --json\n");
		opts_help(stdout, json_only, 19);
		return 0;
	}
	if (rc || !json) {
		fprintf(stderr, "mshare-bench environment: %s\n", rc ? err : "give --json (the only form)");
		return 2;
	}
	json_init(&w, stdout);
	json_begin_object(&w, NULL);
	json_key_u64(&w, "schema_version", RECORD_SCHEMA_VERSION);
	json_key_string(&w, "tool", "mshare-bench");
	environment_write_json(&w, NULL);
	json_end_object(&w);
	return finish_json(&w);
}

/* `record`: the record of a point the harness did not drive itself (a
 * PostgreSQL point; harness/record_external.c), by the harness's writer. */
static const struct opt record_opts[] = {
	{ "frame", "FILE", "what `mshare-bench environment --json` printed where the point ran\n"
			   "(schema_version, tool, environment; must be this build's schema)", false },
	{ "body", "FILE", "the point's config and results (and preflight) as one JSON object;\n"
			  "- reads standard input", false },
	{ "out", "FILE", "the record: written atomically, never over an existing file\n"
			 "(a CSV file with header if FILE ends in .csv)", false },
	{ "csv", "FILE", "also append the record as one CSV row to FILE", false },
	{ NULL, NULL, NULL, false },
};

static volatile sig_atomic_t record_stop;

static void on_record_stop(int sig)
{
	record_stop = sig;
}

static int set_value(void *data, int i, const struct opt *o, const char *v, char *err, size_t err_len)
{
	(void)o, (void)err, (void)err_len;
	((const char **)data)[i] = v;
	return 0;
}

static int write_external_record(int argc, char **argv)
{
	const char *v[4] = { NULL, NULL, NULL, NULL }; /* frame, body, out, csv */
	char err[1024];
	int rc = opts_parse(record_opts, NULL, argc, argv, set_value, v, err, sizeof(err));

	if (rc == 1) {
		printf("usage: mshare-bench record --frame FILE --body FILE --out FILE [--csv FILE]\n"
		       "The record of a point the harness did not run itself (a PostgreSQL point: its\n"
		       "figures from bench/lib/pgpoint.py), written as a run's: the frame's schema and\n"
		       "environment, config and results from the body. config must hold every key of\n"
		       "a run's config:");
		for (int i = 0; record_config_keys[i]; i++)
			printf(" %s", record_config_keys[i]);
		printf(".\nExit 0 written, 1 written to one output only, 2 bad usage, a frame or body\n"
		       "refused, --out existing or a --csv that cannot take the row (nothing written),\n"
		       "3 nothing written.\n");
		opts_help(stdout, record_opts, 19);
		return 0;
	}
	if (!rc && (!v[0] || !v[1] || !v[2])) {
		snprintf(err, sizeof(err), "give --%s", !v[0] ? "frame FILE" : !v[1] ? "body FILE" : "out FILE");
		rc = -1;
	}
	if (rc) {
		fprintf(stderr, "mshare-bench record: %s\n", err);
		return 2;
	}
	record_catch_stop_signals(on_record_stop);
	rc = record_external_write(v[0], v[1], v[2], v[3], &record_stop, err, sizeof(err));
	switch (rc) {
	case RECORD_WRITTEN:
		return 0;
	case RECORD_PARTLY:
		fprintf(stderr, "mshare-bench record: %s\n", err);
		return 1;
	case RECORD_REFUSED:
		fprintf(stderr, "mshare-bench record: %s; no record written\n", err);
		return 2;
	case RECORD_INTERRUPTED:
		fprintf(stderr, "mshare-bench record: stopped by signal %d; no record written\n", (int)record_stop);
		return 3;
	default:
		fprintf(stderr, "mshare-bench record: %s\n", err);
		return 3;
	}
}

/* Messages never carry a terminal's control sequences: a byte below 0x20
 * (but newline and tab) or 0x7f, from an argument, a record or a file
 * name, is written as \xNN. */
static ssize_t escaped_write(void *cookie, const char *buf, size_t len)
{
	int fd = *(int *)cookie;
	char out[4 * 256];
	size_t done = 0;

	while (done < len) {
		size_t n = 0, took = 0;
		for (; done + took < len && n + 4 <= sizeof(out); took++) {
			unsigned char c = (unsigned char)buf[done + took];
			if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
				n += (size_t)snprintf(out + n, 5, "\\x%02x", c);
			else
				out[n++] = (char)c;
		}
		for (size_t off = 0; off < n;) {
			ssize_t w = write(fd, out + off, n - off);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return done ? (ssize_t)done : -1;
			off += (size_t)w;
		}
		done += took;
	}
	return (ssize_t)len;
}

/* stderr always (messages only), stdout when it is a terminal (JSON and
 * CSV to a pipe or file are left byte for byte; JSON escapes them anyway). */
static void escape_terminal_output(void)
{
	static int fds[2] = { 1, 2 };
	static const cookie_io_functions_t io = { .write = escaped_write };
	FILE *e = fopencookie(&fds[1], "w", io);
	if (e) {
		setvbuf(e, NULL, _IONBF, 0);
		stderr = e;
	}
	if (isatty(1)) {
		FILE *o = fopencookie(&fds[0], "w", io);
		if (o) {
			fflush(stdout);
			setvbuf(o, NULL, _IOLBF, 0);
			stdout = o;
		}
	}
}

int main(int argc, char **argv)
{
	escape_terminal_output();
	workloads_use(workload_table);
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		cli_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	static const struct {
		const char *name;
		int (*main)(int argc, char **argv);
	} commands[] = {
		{ "run", run_main },
		{ "cleanup", hugepool_cleanup_main },
		{ "backends", list_backends },
		{ "workloads", list_workloads },
		{ "pmem", list_pmem },
		{ "environment", print_environment },
		{ "record", write_external_record },
		{ "plan", plan_main },
		{ "selftest-bench", selftest_bench_main },
	};
	const char *cmd = argv[1];
	/* The commands that fork workers run them in a fixed layout: their
	 * own page tables are part of every figure (harness/layout.h). */
	if (strcmp(cmd, "run") == 0 || strcmp(cmd, "selftest-bench") == 0)
		layout_fix(argv);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(cmd, commands[i].name) == 0)
			return commands[i].main(argc - 1, argv + 1);
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
		printf("mshare-bench %s\n", environment_version());
		return 0;
	}
	fprintf(stderr, "mshare-bench: unknown command '%s' (try --help)\n", cmd);
	return 2;
}
