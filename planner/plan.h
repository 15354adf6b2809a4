/* plan.h - the capacity planner, `mshare-bench plan`. */
#ifndef MSHARE_BENCH_PLAN_H
#define MSHARE_BENCH_PLAN_H

/* Entry point of the `plan` subcommand; argv[0] is "plan". Returns the exit status. */
int plan_main(int argc, char **argv);

#endif
