/* layout.h - the address-space layout a run's workers inherit.
 *
 * A worker's own page tables (results.worker_memory) cover the pages it
 * inherits from the parent: the binary and its data, the heap, the shared
 * libraries, the stack. With address-space randomization these sit in
 * four separate 512 GiB areas on x86-64 (binary, heap, libraries, stack
 * each randomized), each needing its own PUD, PMD and PTE pages; without
 * it the heap follows the binary and the libraries sit under the stack. */
#ifndef MSHARE_BENCH_LAYOUT_H
#define MSHARE_BENCH_LAYOUT_H

/* Re-execute this program (/proc/self/exe, the same argv and environment)
 * with the personality flag ADDR_NO_RANDOMIZE, as `setarch -R` does, unless
 * it is already set, randomization is off system-wide, or the environment
 * says MSHARE_BENCH_ASLR=on. Returns only when it does not re-execute
 * (including when personality() or execv() fails: a seccomp filter, for
 * example); layout_aslr() then says what the run got. */
void layout_fix(char **argv);

/* What this process's layout is, for environment.aslr: "off
 * (ADDR_NO_RANDOMIZE)", "off (kernel.randomize_va_space=0)" or "on". */
const char *layout_aslr(void);

#endif
