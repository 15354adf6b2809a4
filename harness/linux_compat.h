/* linux_compat.h - Linux mapping and statx flags the suite uses, for C
 * libraries whose headers predate them (values from the kernel's uapi).
 * Included by the harness and by workloads/postgres/pg_mshare.c. */
#ifndef MSHARE_BENCH_LINUX_COMPAT_H
#define MSHARE_BENCH_LINUX_COMPAT_H

#include <sys/mman.h>
#include <sys/stat.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif
#ifndef MAP_SYNC
#define MAP_SYNC 0x80000
#endif
#ifndef STATX_ATTR_DAX
#define STATX_ATTR_DAX 0x00200000
#endif

#endif
