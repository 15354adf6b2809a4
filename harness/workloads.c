/* workloads.c - the table of workloads. Adding one: its file in
 * workloads/ plus one line here. */
#include <string.h>

#include "workload.h"

extern const struct workload_ops workload_touch;
extern const struct workload_ops workload_pt_footprint;
extern const struct workload_ops workload_verify;
extern const struct workload_ops workload_sga_read;
extern const struct workload_ops workload_oltp;
extern const struct workload_ops workload_scan;
extern const struct workload_ops workload_redo;
extern const struct workload_ops workload_connect_storm;
#ifdef MSHARE_BENCH_TEST_WORKLOAD
extern const struct workload_ops workload_dummy;
#endif

const struct workload_ops *const workload_table[] = {
	&workload_touch,
	&workload_pt_footprint,
	&workload_verify,
	&workload_sga_read,
	&workload_oltp,
	&workload_scan,
	&workload_redo,
	&workload_connect_storm,
#ifdef MSHARE_BENCH_TEST_WORKLOAD
	&workload_dummy, /* tests/harness/workload_dummy.c, in the test build only */
#endif
	NULL,
};

const struct workload_ops *workload_find(const char *name)
{
	for (const struct workload_ops *const *w = workload_table; *w; w++)
		if (strcmp((*w)->name, name) == 0)
			return *w;
	return NULL;
}
