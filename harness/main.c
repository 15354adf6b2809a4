/* main.c - `mshare-bench` subcommand dispatch. */
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "cli.h"
#include "environment.h"
#include "hugepool.h"
#include "mshare_detect.h"
#include "plan.h"
#include "run.h"
#include "selftest_bench.h"
#include "workload.h"

static int list_backends(void)
{
	struct region r;
	char why[256];

	printf("%-12s %-8s %s\n", "BACKEND", "USABLE", "DESCRIPTION / WHY NOT");
	for (const struct backend_ops *const *b = backend_table; *b; b++) {
		memset(&r, 0, sizeof(r));
		r.backend_name = (*b)->name;
		why[0] = '\0';
		int ok = (*b)->probe(&r, why, sizeof(why)) == 0;
		printf("%-12s %-8s %s%s%s\n", (*b)->name, ok ? "yes" : "no", (*b)->description,
		       ok ? "" : ": ", ok ? "" : why);
	}
	if (!backend_find("mshare")) {
		struct mshare_support ms;
		mshare_detect(&ms);
		printf("%-12s %-8s %s\n", "mshare", "no",
		       ms.available ? "mshare is available on this kernel but this build has no mshare backend"
				    : ms.why);
	}
	return 0;
}

static int list_workloads(void)
{
	for (const struct workload_ops *const *w = workload_table; *w; w++) {
		printf("%-14s %s\n", (*w)->name, (*w)->description);
		for (int p = 0; p < WORKLOAD_MAX_PARAMS && (*w)->params[p].name; p++)
			printf("    --%-12s %s (default %s)\n", (*w)->params[p].name, (*w)->params[p].help,
			       (*w)->params[p].default_value ? (*w)->params[p].default_value : "none");
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		cli_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "run") == 0)
		return run_main(argc - 1, argv + 1);
	if (strcmp(cmd, "cleanup") == 0)
		return hugepool_cleanup_main(argc - 1, argv + 1);
	if (strcmp(cmd, "backends") == 0)
		return list_backends();
	if (strcmp(cmd, "workloads") == 0)
		return list_workloads();
	if (strcmp(cmd, "plan") == 0)
		return plan_main(argc - 1, argv + 1);
	if (strcmp(cmd, "selftest-bench") == 0)
		return selftest_bench_main(argc - 1, argv + 1);
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
		printf("mshare-bench %s\n", environment_version());
		return 0;
	}
	fprintf(stderr, "mshare-bench: unknown command '%s' (try --help)\n", cmd);
	return 2;
}
