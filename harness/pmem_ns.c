/* pmem_ns.c - pmem namespaces from sysfs and libndctl (see pmem_ns.h). */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <daxctl/libdaxctl.h>
#include <ndctl/libndctl.h>

#include "pmem_ns.h"
#include "procfs.h"

bool pmem_path_is_chardev(const char *path)
{
	struct stat st;

	return path && stat(path, &st) == 0 && S_ISCHR(st.st_mode);
}

/* dst = src, cut to fit (sysfs names are short; the compiler cannot know). */
static void copy_str(char *dst, size_t len, const char *src)
{
	size_t l = strnlen(src, len - 1);

	memcpy(dst, src, l);
	dst[l] = '\0';
}

static int read_u64(const char *dir, const char *attr, uint64_t *out)
{
	char path[PATH_MAX + 64], buf[64], *end;

	snprintf(path, sizeof(path), "%s/%s", dir, attr);
	if (procfs_read(path, buf, sizeof(buf)) < 0)
		return -1;
	errno = 0;
	unsigned long long v = strtoull(buf, &end, 0);
	if (errno || end == buf)
		return -1;
	*out = v;
	return 0;
}

static void read_word(const char *dir, const char *attr, char *out, size_t len)
{
	char path[PATH_MAX + 64], buf[128];

	out[0] = '\0';
	snprintf(path, sizeof(path), "%s/%s", dir, attr);
	if (procfs_read(path, buf, sizeof(buf)) < 0)
		return;
	buf[strcspn(buf, " \n")] = '\0';
	copy_str(out, len, buf);
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

int pmem_ns_of_devdax(const char *path, struct pmem_namespace *ns, char *err, size_t err_len)
{
	char link[128], sys[PATH_MAX], sub[PATH_MAX + 16], subsys[PATH_MAX], parent[PATH_MAX];
	struct stat st;
	uint64_t v;

	memset(ns, 0, sizeof(*ns));
	ns->numa_node = -1;
	if (stat(path, &st) != 0) {
		snprintf(err, err_len, "--path %s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISCHR(st.st_mode)) {
		snprintf(err, err_len, "--path %s is not a character device (device-DAX is /dev/daxX.Y)", path);
		return -1;
	}
	snprintf(link, sizeof(link), "/sys/dev/char/%u:%u", major(st.st_rdev), minor(st.st_rdev));
	snprintf(sub, sizeof(sub), "%s/subsystem", link);
	if (!realpath(link, sys) || !realpath(sub, subsys) || strcmp(base_name(subsys), "dax") != 0) {
		snprintf(err, err_len, "--path %s (character device %u:%u) is not a device-DAX device: its subsystem "
			 "is '%s', not 'dax'", path, major(st.st_rdev), minor(st.st_rdev),
			 realpath(sub, subsys) ? base_name(subsys) : "unknown");
		return -1;
	}
	if (read_u64(sys, "size", &ns->size) != 0 || read_u64(sys, "align", &ns->align) != 0 || ns->align == 0) {
		snprintf(err, err_len, "--path %s: cannot read size and align of %s", path, sys);
		return -1;
	}
	if (read_u64(sys, "numa_node", &v) == 0 && v < 4096)
		ns->numa_node = (int)v; /* "-1" does not parse as u64 below 4096 */
	memcpy(ns->device, "/dev/", 5);
	copy_str(ns->device + 5, sizeof(ns->device) - 5, base_name(sys));
	snprintf(ns->mode, sizeof(ns->mode), "devdax");
	/* .../ndbus0/region0/dax0.0/dax0.0: the nd dax device names its
	 * namespace; above it, the region. Other dax devices (hmem, CXL,
	 * kmem) have no namespace. */
	snprintf(parent, sizeof(parent), "%s", sys);
	char *slash = strrchr(parent, '/');
	if (slash) {
		*slash = '\0';
		read_word(parent, "namespace", ns->name, sizeof(ns->name));
		slash = strrchr(parent, '/');
		if (slash) {
			*slash = '\0';
			if (strncmp(base_name(parent), "region", 6) == 0)
				copy_str(ns->region, sizeof(ns->region), base_name(parent));
		}
	}
	ns->known = true;
	return 0;
}

static void human(uint64_t b, char *out, size_t len)
{
	if (b >= (1ull << 30) && b % (1ull << 30) == 0)
		snprintf(out, len, "%llu GiB", (unsigned long long)(b >> 30));
	else
		snprintf(out, len, "%llu MiB", (unsigned long long)(b >> 20));
}

int pmem_ns_check_fit(const struct pmem_namespace *ns, const char *path, uint64_t size, uint64_t addr, char *err,
		      size_t err_len)
{
	char a[32];

	human(ns->align, a, sizeof(a));
	if (size % ns->align != 0) {
		snprintf(err, err_len, "--size %llu is not a multiple of %s's alignment %llu (%s)",
			 (unsigned long long)size, path, (unsigned long long)ns->align, a);
		return -1;
	}
	if (addr % ns->align != 0) {
		snprintf(err, err_len, "--addr 0x%llx is not a multiple of %s's alignment %llu (%s)",
			 (unsigned long long)addr, path, (unsigned long long)ns->align, a);
		return -1;
	}
	if (size > ns->size) {
		snprintf(err, err_len, "--size %llu exceeds %s's %llu bytes", (unsigned long long)size, path,
			 (unsigned long long)ns->size);
		return -1;
	}
	return 0;
}

/* libndctl and libdaxctl, through dlopen: the functions used, typed as in
 * their headers (a mismatch does not compile). */
#define NDCTL_FUNCS(X)                                                                                 \
	X(ndctl_new) X(ndctl_unref) X(ndctl_bus_get_first) X(ndctl_bus_get_next)                       \
	X(ndctl_region_get_first) X(ndctl_region_get_next) X(ndctl_region_get_devname)                 \
	X(ndctl_namespace_get_first) X(ndctl_namespace_get_next) X(ndctl_namespace_get_devname)        \
	X(ndctl_namespace_is_active) X(ndctl_namespace_get_mode) X(ndctl_namespace_get_size)           \
	X(ndctl_namespace_get_numa_node) X(ndctl_namespace_get_pfn) X(ndctl_namespace_get_dax)         \
	X(ndctl_namespace_get_block_device) X(ndctl_pfn_get_align) X(ndctl_pfn_get_size)               \
	X(ndctl_pfn_get_block_device) X(ndctl_dax_get_align) X(ndctl_dax_get_size)                     \
	X(ndctl_dax_get_daxctl_region)
#define DAXCTL_FUNCS(X) X(daxctl_dev_get_first) X(daxctl_dev_get_devname)

#define DECLARE(f) __typeof__(&f) f;
static struct {
	NDCTL_FUNCS(DECLARE)
	DAXCTL_FUNCS(DECLARE)
} nd;
#undef DECLARE

static int ndctl_load(char *err, size_t err_len)
{
	static int loaded;
	void *h, *hd;

	if (loaded)
		return 0;
	h = dlopen("libndctl.so.6", RTLD_NOW | RTLD_LOCAL);
	hd = dlopen("libdaxctl.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h || !hd) {
		snprintf(err, err_len, "cannot load %s (Debian packages libndctl6, libdaxctl1): %s",
			 h ? "libdaxctl.so.1" : "libndctl.so.6", dlerror());
		return -1;
	}
#define LOAD(lib, so, f)                                                          \
	if (!(*(void **)&nd.f = dlsym(lib, #f))) {                                \
		snprintf(err, err_len, "%s has no %s", so, #f);                   \
		return -1;                                                        \
	}
#define LOAD_ND(f) LOAD(h, "libndctl.so.6", f)
#define LOAD_DAX(f) LOAD(hd, "libdaxctl.so.1", f)
	NDCTL_FUNCS(LOAD_ND)
	DAXCTL_FUNCS(LOAD_DAX)
#undef LOAD_DAX
#undef LOAD_ND
#undef LOAD
	loaded = 1;
	return 0;
}

static void describe(struct ndctl_region *region, struct ndctl_namespace *ndns, struct pmem_namespace *ns)
{
	struct ndctl_pfn *pfn = nd.ndctl_namespace_get_pfn(ndns);
	struct ndctl_dax *dax = nd.ndctl_namespace_get_dax(ndns);
	const char *blk = NULL;

	memset(ns, 0, sizeof(*ns));
	ns->known = true;
	snprintf(ns->region, sizeof(ns->region), "%s", nd.ndctl_region_get_devname(region));
	snprintf(ns->name, sizeof(ns->name), "%s", nd.ndctl_namespace_get_devname(ndns));
	ns->numa_node = nd.ndctl_namespace_get_numa_node(ndns);
	ns->size = nd.ndctl_namespace_get_size(ndns);
	ns->align = 4096;
	switch (nd.ndctl_namespace_get_mode(ndns)) {
	case NDCTL_NS_MODE_DEVDAX:
		snprintf(ns->mode, sizeof(ns->mode), "devdax");
		if (dax) {
			struct daxctl_region *dr = nd.ndctl_dax_get_daxctl_region(dax);
			struct daxctl_dev *dev = dr ? nd.daxctl_dev_get_first(dr) : NULL;

			ns->size = nd.ndctl_dax_get_size(dax);
			ns->align = nd.ndctl_dax_get_align(dax);
			if (dev)
				snprintf(ns->device, sizeof(ns->device), "/dev/%s", nd.daxctl_dev_get_devname(dev));
		}
		return;
	case NDCTL_NS_MODE_FSDAX:
		snprintf(ns->mode, sizeof(ns->mode), "fsdax");
		if (pfn) {
			ns->size = nd.ndctl_pfn_get_size(pfn);
			ns->align = nd.ndctl_pfn_get_align(pfn);
			blk = nd.ndctl_pfn_get_block_device(pfn);
		}
		break;
	case NDCTL_NS_MODE_SECTOR:
		snprintf(ns->mode, sizeof(ns->mode), "sector");
		break;
	case NDCTL_NS_MODE_RAW:
		snprintf(ns->mode, sizeof(ns->mode), "raw");
		blk = nd.ndctl_namespace_get_block_device(ndns);
		break;
	default:
		snprintf(ns->mode, sizeof(ns->mode), "unknown");
		break;
	}
	if (blk && blk[0])
		snprintf(ns->device, sizeof(ns->device), "/dev/%s", blk);
}

int pmem_ns_list(struct pmem_namespace *out, size_t max, size_t *n, char *err, size_t err_len)
{
	struct ndctl_ctx *ctx;
	int rc;

	*n = 0;
	if (ndctl_load(err, err_len) != 0)
		return -1;
	rc = nd.ndctl_new(&ctx);
	if (rc != 0) {
		snprintf(err, err_len, "ndctl_new: %s", strerror(-rc));
		return -1;
	}
	for (struct ndctl_bus *bus = nd.ndctl_bus_get_first(ctx); bus; bus = nd.ndctl_bus_get_next(bus))
		for (struct ndctl_region *region = nd.ndctl_region_get_first(bus); region;
		     region = nd.ndctl_region_get_next(region))
			for (struct ndctl_namespace *ndns = nd.ndctl_namespace_get_first(region); ndns;
			     ndns = nd.ndctl_namespace_get_next(ndns)) {
				if (!nd.ndctl_namespace_is_active(ndns) || *n >= max)
					continue;
				describe(region, ndns, &out[(*n)++]);
			}
	nd.ndctl_unref(ctx);
	return 0;
}
