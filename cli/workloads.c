/* workloads.c - the table of workloads. Adding one: its file in
 * workloads/ plus one line here. It sits in cli/, above workloads/ and
 * harness/, because it names every workload; main() hands it to the harness
 * (workloads_use), which finds a workload by name without naming any. */
#include <stddef.h>

#include "workload.h"
#include "workloads.h"

extern const struct workload_ops workload_touch;
extern const struct workload_ops workload_pt_footprint;
extern const struct workload_ops workload_verify;
extern const struct workload_ops workload_sga_read;
extern const struct workload_ops workload_oltp;
extern const struct workload_ops workload_scan;
extern const struct workload_ops workload_redo;
extern const struct workload_ops workload_connect_storm;
extern const struct workload_ops workload_lifecycle;
extern const struct workload_ops workload_fault_locks;
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
	&workload_lifecycle,
	&workload_fault_locks,
#ifdef MSHARE_BENCH_TEST_WORKLOAD
	&workload_dummy, /* tests/harness/workload_dummy.c, in the test build only */
#endif
	NULL,
};
