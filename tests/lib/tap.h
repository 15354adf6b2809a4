/* tap.h - TAP output for the C unit tests (tests/harness, tests/planner,
 * tests/workloads); the shell tests use tests/lib/tap.sh, the Python tests
 * tests/lib/tap.py, the kernel conformance tests the kernel's own
 * kselftest_harness.h (tests/kernel/mshare-test.h).
 *
 *   TAP_OK(cond, fmt, ...)  "ok N - what" or "not ok N - what" followed by
 *                           "#   failed at file:line: cond"
 *   tap_done()              prints the plan "1..N"; main's exit status
 *                           (1 when a check failed)
 */
#ifndef MSHARE_BENCH_TAP_H
#define MSHARE_BENCH_TAP_H

#include <stdio.h>

static int tap_n, tap_failed;

#define TAP_OK(cond, ...)                                                        \
	do {                                                                     \
		int ok_ = !!(cond);                                              \
		printf("%sok %d - ", ok_ ? "" : "not ", ++tap_n);                \
		printf(__VA_ARGS__);                                             \
		printf("\n");                                                    \
		if (!ok_) {                                                      \
			tap_failed++;                                            \
			printf("#   failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
		}                                                                \
		fflush(stdout);                                                  \
	} while (0)

static inline int tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif
