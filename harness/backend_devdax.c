/* backend_devdax.c - MAP_SHARED of a device-DAX namespace (/dev/daxX.Y).
 *
 * No filesystem: the whole namespace is one device, every mapping of it
 * is made of entries of the namespace's alignment (2 MiB: PMD entries, no
 * PTE pages; 1 GiB: PUD entries, no PMD or PTE pages), which the kernel
 * enforces: an mmap whose address or length is not a multiple of it is
 * refused (EINVAL), a fault of a smaller size is SIGBUS. So --size and
 * --addr must be multiples of the alignment, checked here with a message
 * naming both. Size, alignment and NUMA node come from sysfs
 * (/sys/dev/char/MAJ:MIN, pmem_ns.c); the record's environment.pmem names
 * the namespace. The page size the run got is measured by the DAX page
 * probe (page_probe.c), not taken from the alignment.
 *
 * Device-DAX mappings are synchronous by construction (no metadata, no
 * page cache): CPU cache flushes from user space (pmem_persist) make a
 * write durable; MAP_SYNC is not needed and not used.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend_map.h"
#include "parse.h"
#include "pmem_ns.h"

static int devdax_probe(const struct region *r, char *why, size_t why_len)
{
	struct pmem_namespace ns;

	if (!r->path) {
		snprintf(why, why_len, "needs --path /dev/daxX.Y (a device-DAX namespace; see `mshare-bench pmem`)");
		return -1;
	}
	return pmem_ns_of_devdax(r->path, &ns, why, why_len);
}

static int devdax_setup(struct region *r, char *err, size_t err_len)
{
	struct fd_backing *b = fd_backing_new(r, err, err_len);
	struct pmem_namespace *ns = &r->pmem;
	char a[32], s[32];

	if (!b)
		return -1;
	if (pmem_ns_of_devdax(r->path, ns, err, err_len) != 0)
		return -1;
	format_bytes(ns->align, a, sizeof(a));
	if (r->size % ns->align != 0) {
		snprintf(err, err_len, "--size %zu is not a multiple of %s's alignment %" PRIu64 " (%s)", r->size,
			 r->path, ns->align, a);
		return -1;
	}
	if (r->addr % ns->align != 0) {
		snprintf(err, err_len, "--addr 0x%lx is not a multiple of %s's alignment %" PRIu64 " (%s)",
			 (unsigned long)r->addr, r->path, ns->align, a);
		return -1;
	}
	if (r->size > ns->size) {
		snprintf(err, err_len, "--size %zu exceeds %s's %" PRIu64 " bytes (%s)", r->size, r->path, ns->size,
			 format_bytes(ns->size, s, sizeof(s)));
		return -1;
	}
	if (r->page == PAGE_MODE_4K) {
		snprintf(err, err_len, "--page 4k: %s maps only in %s entries (its alignment); use --page any",
			 r->path, a);
		return -1;
	}
	b->fd = open(r->path, (r->read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	if (b->fd < 0) {
		snprintf(err, err_len, "cannot open --path %s: %s", r->path, strerror(errno));
		return -1;
	}
	snprintf(r->backing, sizeof(r->backing), "%s", r->path);
	snprintf(r->fs_type, sizeof(r->fs_type), "devdax");
	r->dax = true;
	r->map_sync = false;
	r->backend_page_bytes = ns->align;
	r->persist = PERSIST_PMEM;
	snprintf(r->persist_why, sizeof(r->persist_why),
		 "device-DAX %s (%s, no filesystem): its mappings are synchronous, CPU cache flushes from user "
		 "space (pmem_persist) are durable", r->path, ns->name[0] ? ns->name : "no nd namespace");
	return 0;
}

const struct backend_ops backend_devdax = {
	.name = "devdax",
	.planner_mode = BACKEND_MODEL_BY_PAGE,
	.data = BACKEND_DATA_FILE,
	.description = "MAP_SHARED of a device-DAX namespace, --path /dev/daxX.Y (2 MiB or 1 GiB entries by its "
		       "alignment)",
	.probe = devdax_probe,
	.setup = devdax_setup,
	.attach = backend_fd_attach,
	.detach = backend_fd_detach,
	.teardown = backend_fd_teardown,
};
