/* futex.h - process-shared futex wait/wake on words in shared memory.
 *
 * The ready/start/parked barriers between the parent and its workers are
 * futex words in the MAP_SHARED results area, so the parent can release
 * ten thousand waiters with one FUTEX_WAKE and never needs a pipe per
 * worker.
 */
#ifndef MSHARE_BENCH_FUTEX_H
#define MSHARE_BENCH_FUTEX_H

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Sleep while *word == expected, at most timeout_ns (0 = no limit).
 * Returns on wake, timeout, signal or a changed value. */
static inline void futex_wait_u32(uint32_t *word, uint32_t expected, uint64_t timeout_ns)
{
	struct timespec ts, *tp = NULL;
	if (timeout_ns) {
		ts.tv_sec = (time_t)(timeout_ns / 1000000000ull);
		ts.tv_nsec = (long)(timeout_ns % 1000000000ull);
		tp = &ts;
	}
	syscall(SYS_futex, word, FUTEX_WAIT, expected, tp, NULL, 0);
}

static inline void futex_wake_all(uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

#endif
