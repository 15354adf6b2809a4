/* clock.h - the one clock every timing in the suite uses.
 *
 * CLOCK_MONOTONIC via vDSO: no syscall, comparable across processes, and the
 * name recorded in every run record ("clock": "CLOCK_MONOTONIC").
 */
#ifndef MSHARE_BENCH_CLOCK_H
#define MSHARE_BENCH_CLOCK_H

#include <stdint.h>
#include <time.h>

#define BENCH_CLOCK_NAME "CLOCK_MONOTONIC"

static inline uint64_t clock_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
