/* hw_counter.h - the CPU's own instruction count around each touch, where
 * the hardware and the kernel give it (issue 31 item 4: the host
 * reference in instructions, beside the guest's instruction clock).
 *
 * `mshare-bench run --hw-instructions`: every worker opens a counter of
 * retired instructions (perf_event_open, PERF_COUNT_HW_INSTRUCTIONS, this
 * thread, user and kernel) and reads it just outside the touch's other
 * counters, so a touch's count covers the touch and the fault it takes,
 * plus the fixed cost of the reads, the two getrusage calls and the two
 * clock reads around it: that fixed cost is measured by the worker first
 * (the least of HW_COUNTER_BASELINE_REPEATS empty rounds) and taken off.
 * The figures are per kind (faults, touches without a fault) as sums and
 * means, not percentiles.
 *
 * Where there is no counter (a VM without a virtual PMU, as on this
 * project's build machines; perf_event_paranoid; no such event), the
 * parent's probe fails before any worker starts and the record says why;
 * the run goes on without it.
 */
#ifndef MSHARE_BENCH_HW_COUNTER_H
#define MSHARE_BENCH_HW_COUNTER_H

#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#define HW_COUNTER_BASELINE_REPEATS 64

/* The event counted: "instructions", or "task-clock" (ns of CPU time,
 * a software event every kernel has) when MSHARE_BENCH_HW_EVENT=task-clock:
 * for the tests, on machines without a PMU, of everything around the
 * counter. The record names it. */
const char *hw_counter_event(void);

/* A counter of this thread's retired instructions (user and kernel),
 * enabled: its fd, or -1 with the reason (naming the call and errno) in why. */
int hw_counter_open(char *why, size_t why_len);

/* The count now; 0 when the read fails (the touch is then not counted:
 * see hw_counter_note). */
static inline uint64_t hw_counter_read(int fd)
{
	uint64_t v = 0;
	if (read(fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
		return 0;
	return v;
}

#endif
