/* selftest_bench.c - placeholder until the overhead benchmarks land. */
#include <stdio.h>

#include "selftest_bench.h"

int selftest_bench_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "mshare-bench selftest-bench: not built yet\n");
	return 2;
}
