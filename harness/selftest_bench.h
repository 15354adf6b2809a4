/* selftest_bench.h - `mshare-bench selftest-bench`: the harness measuring
 * its own overhead (fault timing, fork-to-barrier, per-worker memory). */
#ifndef MSHARE_BENCH_SELFTEST_BENCH_H
#define MSHARE_BENCH_SELFTEST_BENCH_H

int selftest_bench_main(int argc, char **argv);

#endif
