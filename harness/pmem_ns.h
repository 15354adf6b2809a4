/* pmem_ns.h - persistent-memory namespaces: the one a device-DAX path
 * belongs to (from sysfs), and all of them (libndctl/libdaxctl, loaded
 * with dlopen() only by the command that lists them, like libpmem). */
#ifndef MSHARE_BENCH_PMEM_NS_H
#define MSHARE_BENCH_PMEM_NS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pmem_namespace {
	bool known;         /* filled in; false: no pmem namespace (record: null) */
	char region[32];    /* "region0" */
	char name[32];      /* "namespace0.0", or "" when the device has none */
	char mode[16];      /* "devdax", "fsdax", "sector", "raw" */
	char device[64];    /* "/dev/dax0.0", "/dev/pmem1", or "" */
	uint64_t size;      /* bytes usable (the dax device's or pfn's size) */
	uint64_t align;     /* bytes: every mapping of it is a multiple */
	int numa_node;      /* -1: unknown */
};

/* path is a device-DAX character device (/dev/daxX.Y): fill ns from
 * /sys/dev/char/MAJ:MIN (size, align, numa_node, and the nd namespace and
 * region above it when there is one). 0, or -1 with a message naming path
 * in err (missing, not a character device, not device-DAX). */
int pmem_ns_of_devdax(const char *path, struct pmem_namespace *ns, char *err, size_t err_len);

/* A mapping of size bytes at addr of the device at path (described by
 * ns): both multiples of its alignment (the kernel refuses the mmap
 * otherwise) and size within it. 0, or -1 with a message naming the value,
 * the device and its alignment or size. */
int pmem_ns_check_fit(const struct pmem_namespace *ns, const char *path, uint64_t size, uint64_t addr, char *err,
		      size_t err_len);

/* True when path is a character device (whatever its kind). */
bool pmem_path_is_chardev(const char *path);

/* Every active namespace of every NVDIMM bus, through libndctl and
 * libdaxctl: up to max into out, their number in *n. 0, or -1 with why
 * in err (the libraries missing, ndctl_new failing). */
int pmem_ns_list(struct pmem_namespace *out, size_t max, size_t *n, char *err, size_t err_len);

#endif
