/* tap.h - minimal TAP output for the harness unit tests. */
#ifndef MSHARE_BENCH_TAP_H
#define MSHARE_BENCH_TAP_H

#include <stdio.h>

static int tap_n, tap_failed;

#define TAP_OK(cond, ...)                                                        \
	do {                                                                     \
		int ok_ = (cond);                                                \
		printf("%sok %d - ", ok_ ? "" : "not ", ++tap_n);                \
		printf(__VA_ARGS__);                                             \
		printf("\n");                                                    \
		if (!ok_) {                                                      \
			tap_failed++;                                            \
			printf("#   failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
		}                                                                \
	} while (0)

static inline int tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif
