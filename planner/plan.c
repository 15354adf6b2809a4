/* plan.c - the capacity planner (issue 8 replaces this placeholder). */
#include <stdio.h>

#include "plan.h"

int plan_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "mshare-bench plan: the capacity planner is not built yet\n");
	return 2;
}
