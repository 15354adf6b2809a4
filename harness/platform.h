/* platform.h - "host" or "guest" (the benchmark VM), from its boot marker. */
#ifndef MSHARE_BENCH_PLATFORM_H
#define MSHARE_BENCH_PLATFORM_H

/* Written by the VM's init (kernel/vm/init): this boot's id. */
#define GUEST_MARKER_PATH "/etc/mshare-bench-guest"
#define BOOT_ID_PATH "/proc/sys/kernel/random/boot_id"

/* "guest" when marker_path holds the boot id read from boot_id_path,
 * else "host". */
const char *platform_from_marker(const char *marker_path, const char *boot_id_path);

#endif
