/* pmem_lib.c - libpmem through dlopen(), for the runs that persist with it. */
#include <dlfcn.h>
#include <stdio.h>

#include <libpmem.h>

#include "pmem_lib.h"

/* The pointers below must have libpmem's own types: a mismatch does not
 * compile (nothing is called or linked here, _Generic does not evaluate). */
_Static_assert(_Generic(&pmem_persist, void (*)(const void *, size_t): 1, default: 0),
	       "pmem_persist's type differs from struct pmem_lib's");
_Static_assert(_Generic(&pmem_memcpy_persist, void *(*)(void *, const void *, size_t): 1, default: 0),
	       "pmem_memcpy_persist's type differs from struct pmem_lib's");

static struct pmem_lib lib;
static int loaded;

int pmem_lib_load(char *err, size_t err_len)
{
	if (loaded)
		return 0;
	void *h = dlopen(PMEM_LIB_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(err, err_len, "cannot load %s (Debian package libpmem1): %s", PMEM_LIB_SONAME, dlerror());
		return -1;
	}
	/* POSIX: a function pointer converts from dlsym's void *. */
	*(void **)&lib.persist = dlsym(h, "pmem_persist");
	*(void **)&lib.memcpy_persist = dlsym(h, "pmem_memcpy_persist");
	if (!lib.persist || !lib.memcpy_persist) {
		snprintf(err, err_len, "%s has no pmem_persist or pmem_memcpy_persist", PMEM_LIB_SONAME);
		dlclose(h);
		return -1;
	}
	loaded = 1;
	return 0;
}

const struct pmem_lib *pmem_lib(void)
{
	return loaded ? &lib : NULL;
}
