/* pmem_lib.h - libpmem, loaded only for a run that persists with it.
 *
 * libpmem pulls in libndctl, libdaxctl, libkmod, libudev, libcrypto and
 * more; linked into the binary, every process of every run mapped them and
 * ran their constructors, for the few runs that persist on DAX. The parent
 * loads it with dlopen() before the first fork, and only when the
 * workload persists (workload_ops.persists) and the backend stated
 * PERSIST_PMEM; the workers inherit it. Workloads reach it through
 * workloads/persist.c. */
#ifndef MSHARE_BENCH_PMEM_LIB_H
#define MSHARE_BENCH_PMEM_LIB_H

#include <stddef.h>

/* The shared object loaded (kernel/vm/mkinitramfs.sh puts it in the guest). */
#define PMEM_LIB_SONAME "libpmem.so.1"

struct pmem_lib {
	void (*persist)(const void *addr, size_t len);
	void *(*memcpy_persist)(void *dst, const void *src, size_t len);
};

/* Parent, before fork: load libpmem (once; later calls return at once).
 * 0, or -1 with dlopen's or dlsym's reason in err[]. */
int pmem_lib_load(char *err, size_t err_len);
/* The loaded library, or NULL when pmem_lib_load() has not succeeded. */
const struct pmem_lib *pmem_lib(void);

#endif
