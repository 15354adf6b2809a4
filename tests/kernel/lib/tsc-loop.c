/*
 * tsc-loop ITERATIONS REPEATS: times a fixed empty loop of ITERATIONS
 * iterations REPEATS times, each with the TSC (rdtsc) and with
 * clock_gettime(CLOCK_MONOTONIC), and prints one "TSC/NS" pair per repeat,
 * then "min tsc T ns N".  tests/kernel/vm-clock.sh builds it static and runs
 * it in the guest under kernel/vm/run.sh --clock instructions, where the TSC
 * counts guest instructions: the same loop must read the same count in two
 * boots.  The ns figure goes through the kernel's clocksource conversion
 * (fixed-point cycles * mult >> shift, with the fraction carried over from
 * the last tick), so two readings of the same interval may differ by 1 ns;
 * the TSC difference is exact.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <x86intrin.h>

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc != 3 || atol(argv[1]) < 1 || atol(argv[2]) < 1) {
		fprintf(stderr, "usage: tsc-loop ITERATIONS REPEATS\n");
		return 2;
	}
	long iters = atol(argv[1]), reps = atol(argv[2]);
	long long tsc_min = -1, ns_min = -1;

	for (long r = 0; r < reps; r++) {
		long long t0 = now_ns();
		unsigned long long c0 = __rdtsc();

		for (long i = 0; i < iters; i++)
			__asm__ volatile("" ::: "memory");
		unsigned long long c1 = __rdtsc();
		long long ns = now_ns() - t0, tsc = (long long)(c1 - c0);

		printf("%lld/%lld%c", tsc, ns, r + 1 < reps ? ' ' : '\n');
		if (tsc_min < 0 || tsc < tsc_min)
			tsc_min = tsc;
		if (ns_min < 0 || ns < ns_min)
			ns_min = ns;
	}
	printf("min tsc %lld ns %lld\n", tsc_min, ns_min);
	return 0;
}
