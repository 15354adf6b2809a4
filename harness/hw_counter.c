/* hw_counter.c - perf_event_open for retired instructions (hw_counter.h). */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hw_counter.h"

const char *hw_counter_event(void)
{
	const char *e = getenv("MSHARE_BENCH_HW_EVENT");
	return e && strcmp(e, "task-clock") == 0 ? "task-clock" : "instructions";
}

int hw_counter_open(char *why, size_t why_len)
{
	struct perf_event_attr a;
	bool test_event = strcmp(hw_counter_event(), "task-clock") == 0;

	memset(&a, 0, sizeof(a));
	a.type = test_event ? PERF_TYPE_SOFTWARE : PERF_TYPE_HARDWARE;
	a.size = sizeof(a);
	a.config = test_event ? PERF_COUNT_SW_TASK_CLOCK : PERF_COUNT_HW_INSTRUCTIONS;
	a.exclude_hv = 1;
	/* pid 0, cpu -1: this thread, wherever it runs; no group, no flags. */
	long fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0) {
		int e = errno;
		const char *hint = e == ENOENT || e == EOPNOTSUPP ? " (no hardware PMU, or no instructions event: "
								    "a VM without a virtual PMU)"
				   : e == EACCES || e == EPERM	  ? " (kernel.perf_event_paranoid, or no CAP_PERFMON)"
								  : "";
		snprintf(why, why_len, "perf_event_open(%s, this thread, user+kernel): %s%s",
			 test_event ? "PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK"
				    : "PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS",
			 strerror(e), hint);
		return -1;
	}
	return (int)fd;
}
