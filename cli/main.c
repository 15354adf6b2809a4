/* main.c - the program's entry: `mshare-bench` subcommand dispatch, the
 * `backends` and `workloads` listings. It sits in cli/, above harness/,
 * planner/ and workloads/: it joins them (the harness's run, the planner's
 * plan, the workloads' table), and none of them reaches up to it. */
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "cli.h"
#include "environment.h"
#include "hugepool.h"
#include "json.h"
#include "mshare_detect.h"
#include "opts.h"
#include "plan.h"
#include "run.h"
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
	return 0;
}

static int list_workloads(int argc, char **argv)
{
	static const char *const types[] = { [WP_UINT] = "uint", [WP_SIZE] = "size", [WP_REAL] = "real",
					     [WP_CHOICE] = "choice" };
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
				       o->params[p].default_value ? o->params[p].default_value : "none");
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

int main(int argc, char **argv)
{
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
		{ "plan", plan_main },
		{ "selftest-bench", selftest_bench_main },
	};
	const char *cmd = argv[1];
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
