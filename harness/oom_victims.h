/* oom_victims.h - which SIGKILLed workers the OOM killer took. */
#ifndef MSHARE_BENCH_OOM_VICTIMS_H
#define MSHARE_BENCH_OOM_VICTIMS_H
struct run_state;

/* Count the workers killed by SIGKILL (not by the harness) whose pid the
 * kernel log names in an "Out of memory: Killed process <pid>" line; -1
 * when the log cannot be read. */
long oom_victims_in_kernel_log(const struct run_state *rs);

/* Workers the OOM killer took, from the best source available: the
 * vmstat oom_kill counter, else the kernel log; and that source's name. */
unsigned oom_victims(const struct run_state *rs, const char **source);
#endif
