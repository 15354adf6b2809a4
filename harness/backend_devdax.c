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
#include <stdio.h>

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
	struct fd_backing *b = fd_backing_new(r);
	char a[32];

	if (r->page == PAGE_MODE_4K) {
		struct pmem_namespace ns;

		if (pmem_ns_of_devdax(r->path, &ns, err, err_len) != 0)
			return -1;
		snprintf(err, err_len, "--page 4k: %s maps only in %s entries (its alignment); use --page any",
			 r->path, format_bytes(ns.align, a, sizeof(a)));
		return -1;
	}
	b->fd = backend_devdax_open(r, err, err_len);
	return b->fd < 0 ? -1 : 0;
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
