/* workload_registry.c - the workloads the harness runs, as handed over by
 * the program's entry (see workloads_use in workload.h): the workloads sit
 * above the harness, so the harness holds their table without naming them. */
#include <stddef.h>
#include <string.h>

#include "workload.h"

static const struct workload_ops *const none[] = { NULL };
static const struct workload_ops *const *table = none;

void workloads_use(const struct workload_ops *const *t)
{
	table = t ? t : none;
}

const struct workload_ops *const *workloads_all(void)
{
	return table;
}

const struct workload_ops *workload_find(const char *name)
{
	for (const struct workload_ops *const *w = table; *w; w++)
		if (strcmp((*w)->name, name) == 0)
			return *w;
	return NULL;
}
