/* platform.h - "host" or "guest" (the benchmark VM), from its boot marker. */
#ifndef MSHARE_BENCH_PLATFORM_H
#define MSHARE_BENCH_PLATFORM_H

/* Written by the VM's init (kernel/vm/init): this boot's id. */
#define GUEST_MARKER_PATH "/etc/mshare-bench-guest"
#define BOOT_ID_PATH "/proc/sys/kernel/random/boot_id"

/* Written by the VM's init from the kernel command line
 * (mshare_bench.clock=, set by kernel/vm/run.sh --clock): how the guest's
 * time runs. */
#define GUEST_CLOCK_PATH "/etc/mshare-bench-clock"

/* "guest" when marker_path holds the boot id read from boot_id_path,
 * else "host". */
const char *platform_from_marker(const char *marker_path, const char *boot_id_path);

/* What the times of a run on `platform` are (issue 31): "host-ns" on the
 * host; in the guest the name clock_path holds when it is one of
 * "guest-instructions" (QEMU -icount shift=0, one vCPU: one guest ns is one
 * guest instruction), "guest-tcg-ns" (plain TCG: emulated, not hardware,
 * time) or "guest-kvm-ns" (hardware time), else "guest-unknown": never
 * guessed. */
const char *platform_clock(const char *platform, const char *clock_path);
/* "instructions" for guest-instructions, else "ns". */
const char *platform_time_unit(const char *clock);

#endif
