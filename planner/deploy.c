/* deploy.c - the deployments: their page-table shape, where their data
 * lives, the kernel they need and what to set; see deploy.h. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "deploy.h"
#include "units.h"

#define FMT(b) units_format_bytes((b), (char[32]){ 0 }, 32)

static const char *const MAINLINE = "any Linux (mainline)";
static const char *const V1_KERNEL = "PATCHED: Linux 6.1 with the mshare v1 series (kernel/patches, `make kernel-deb`); "
				     "mainline Linux has no mshare";
static const char *const V3_KERNEL = "PATCHED: Linux 6.12 with the 2025 mshare design, v3 (kernel/patches-2025, "
				     "`make kernel-2025`); mainline Linux has no mshare";

static const struct deploy table[DEPLOY_COUNT] = {
	[DEPLOY_4K] = { "4k", "shm-4k", PT_MODE_4K, 4096, DATA_RAM, 0, SETUP_SHMEM,
			"shared memory (SysV shmget, MAP_SHARED anonymous, tmpfs) with 4 KiB pages, THP off", NULL },
	[DEPLOY_SHM_THP] = { "shm-thp", NULL, PT_MODE_DAX_2M, 2 * MIB, DATA_RAM, 0, SETUP_THP,
			     "shared memory with transparent huge pages (shmem_enabled=always): 2 MiB PMD mappings "
			     "where the kernel found a huge page (4k where it did not)", NULL },
	[DEPLOY_HUGETLB_2M] = { "hugetlb-2m", NULL, PT_MODE_HUGETLB_2M, 2 * MIB, DATA_RAM, 2 * MIB, SETUP_HUGETLB,
				"hugetlbfs / SHM_HUGETLB / MAP_HUGETLB with 2 MiB pages (PMD sharing)", NULL },
	[DEPLOY_HUGETLB_1G] = { "hugetlb-1g", NULL, PT_MODE_HUGETLB_1G, GIB, DATA_RAM, GIB, SETUP_HUGETLB,
				"hugetlbfs with 1 GiB pages", NULL },
	[DEPLOY_DAX_4K] = { "dax-4k", NULL, PT_MODE_4K, 4096, DATA_DEVICE, 0, SETUP_FSDAX,
			    "MAP_SHARED of a file on a DAX filesystem (fsdax namespace, mount -o dax) mapped with 4 KiB "
			    "pages (namespace --align 4K, or extents not 2 MiB-aligned)", NULL },
	[DEPLOY_DAX_2M] = { "dax-2m", NULL, PT_MODE_DAX_2M, 2 * MIB, DATA_DEVICE, 0, SETUP_FSDAX,
			    "MAP_SHARED of a file on a DAX filesystem mapped with 2 MiB PMD entries (namespace --align "
			    "2M, 2 MiB-aligned extents)", NULL },
	[DEPLOY_DEVDAX_2M] = { "devdax-2m", NULL, PT_MODE_DAX_2M, 2 * MIB, DATA_DEVICE, 2 * MIB, SETUP_DEVDAX,
			       "MAP_SHARED of a device-DAX namespace (/dev/daxX.Y) at 2 MiB alignment", NULL },
	[DEPLOY_DEVDAX_1G] = { "devdax-1g", "dax-1g", PT_MODE_DAX_1G, GIB, DATA_DEVICE, GIB, SETUP_DEVDAX,
			       "MAP_SHARED of a device-DAX namespace at 1 GiB alignment (PUD entries)", NULL },
	[DEPLOY_MSHARE] = { "mshare", "mshare-anon", PT_MODE_MSHARE, 4096, DATA_RAM, 0, SETUP_MSHARE_V1,
			    "mshare v1 over shared memory in RAM (4 KiB pages): the region's page tables once", NULL },
	[DEPLOY_MSHARE_DAX_4K] = { "mshare-dax-4k", NULL, PT_MODE_MSHARE, 4096, DATA_DEVICE, 0, SETUP_MSHARE_V1,
				   "mshare v1 over a file on a DAX filesystem, 4 KiB leaves (the suite's `mshare` "
				   "backend on /mnt/pmem)", NULL },
	[DEPLOY_MSHARE_DAX_2M] = { "mshare-dax-2m", NULL, PT_MODE_MSHARE, 2 * MIB, DATA_DEVICE, 0, SETUP_MSHARE_V1,
				   "mshare v1 over a DAX file or devdax 2M with 2 MiB leaves (no PTE pages at all)",
				   NULL },
	[DEPLOY_MSHARE_DEVDAX_1G] = { "mshare-devdax-1g", NULL, PT_MODE_MSHARE, GIB, DATA_DEVICE, 0, SETUP_MSHARE_V1,
				      "mshare v1 over a device-DAX namespace at 1 GiB alignment (no PMD pages)", NULL },
	[DEPLOY_MSHARE_2025] = { "mshare-2025", NULL, PT_MODE_MSHARE, 4096, DATA_RAM, 0, SETUP_MSHARE_2025,
				 "the 2025 mshare design (msharefs region) of anonymous shared memory, 4 KiB pages", NULL },
	[DEPLOY_MSHARE_2025_DAX_4K] = { "mshare-2025-dax-4k", NULL, PT_MODE_MSHARE, 4096, DATA_DEVICE, 0,
					SETUP_MSHARE_2025,
					"the 2025 design's region holding a file on ext4 -o dax, 4 KiB leaves", NULL },
	[DEPLOY_MSHARE_2025_DAX_2M] = { "mshare-2025-dax-2m", NULL, PT_MODE_MSHARE, 2 * MIB, DATA_DEVICE, 0,
					SETUP_MSHARE_2025,
					"the 2025 design's region holding a file on ext4 -o dax, 2 MiB leaves", NULL },
};

const struct deploy *deploy_get(enum deploy_id id)
{
	return id < DEPLOY_COUNT ? &table[id] : NULL;
}

const char *deploy_name(enum deploy_id id)
{
	return id < DEPLOY_COUNT ? table[id].name : "?";
}

int deploy_from_name(const char *name, enum deploy_id *id)
{
	for (int d = 0; d < DEPLOY_COUNT; d++) {
		if (strcmp(name, table[d].name) == 0 || (table[d].alias && strcmp(name, table[d].alias) == 0)) {
			*id = (enum deploy_id)d;
			return 0;
		}
	}
	return -1;
}

enum deploy_id deploy_of_shape(enum pt_mode shape, bool on_dax)
{
	switch (shape) {
	case PT_MODE_HUGETLB_2M: return DEPLOY_HUGETLB_2M;
	case PT_MODE_HUGETLB_1G: return DEPLOY_HUGETLB_1G;
	case PT_MODE_DAX_2M: return on_dax ? DEPLOY_DAX_2M : DEPLOY_SHM_THP;
	case PT_MODE_DAX_1G: return DEPLOY_DEVDAX_1G;
	case PT_MODE_MSHARE: return on_dax ? DEPLOY_MSHARE_DAX_4K : DEPLOY_MSHARE;
	default: return on_dax ? DEPLOY_DAX_4K : DEPLOY_4K;
	}
}

void deploy_list(char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int d = 0; d < DEPLOY_COUNT && used < len; d++) {
		int n = snprintf(buf + used, len - used, "%s%s", d ? ", " : "", table[d].name);

		if (n < 0)
			break;
		used += (size_t)n;
	}
}

int deploy_model(enum deploy_id d, const struct pt_region *r, struct pt_cost *cost, char *err, size_t err_len)
{
	const struct deploy *x = deploy_get(d);
	struct pt_region reg;

	if (!x) {
		snprintf(err, err_len, "unknown deployment %d", (int)d);
		return -1;
	}
	reg = *r;
	if (x->shape == PT_MODE_MSHARE)
		reg.leaf_bytes = x->leaf_bytes;
	if (x->setup == SETUP_DEVDAX && (r->addr % x->align_bytes || r->size % x->align_bytes)) {
		snprintf(err, err_len, "%s needs an address and size that are multiples of %s; 0x%" PRIx64 " + %" PRIu64
			 " bytes is not (the device refuses the mmap with EINVAL; round the SGA up to %s)", x->name,
			 FMT(x->align_bytes), r->addr, r->size, FMT(units_align_up(r->size, x->align_bytes)));
		return -1;
	}
	if (pt_model(x->shape, &reg, cost, err, err_len) < 0)
		return -1;
	if (x->leaf_bytes == 4096)
		cost->leaf_page_bytes = 4096;
	return 0;
}

/* One setting into out[*n]. */
static void set(struct deploy_setting *out, size_t max, size_t *n, const char *key, const char *why,
		const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void set(struct deploy_setting *out, size_t max, size_t *n, const char *key, const char *why,
		const char *fmt, ...)
{
	va_list ap;

	if (*n >= max)
		return;
	snprintf(out[*n].key, sizeof(out[*n].key), "%s", key);
	snprintf(out[*n].why, sizeof(out[*n].why), "%s", why);
	va_start(ap, fmt);
	vsnprintf(out[*n].value, sizeof(out[*n].value), fmt, ap);
	va_end(ap);
	(*n)++;
}

/* SysV limits (Oracle's SGA; PostgreSQL's main segment is an mmap, its
 * SysV segment a few bytes). */
static void sysv(struct deploy_setting *out, size_t max, size_t *n, uint64_t sga)
{
	set(out, max, n, "kernel.shmmax", "SysV only (Oracle's SGA; PostgreSQL maps its shared memory with mmap and "
	    "needs no change): the largest segment in bytes; Linux's default, 18446744073692774399, already is",
	    ">= %" PRIu64, sga);
	set(out, max, n, "kernel.shmall", "SysV only: all segments together, in 4 KiB pages (huge pages count in "
	    "4 KiB pages too); Linux's default already is", ">= %" PRIu64, units_align_up(sga, 4096) / 4096);
}

size_t deploy_settings(enum deploy_id d, uint64_t sga, uint64_t processes, unsigned nodes, int sga_node,
		       struct deploy_setting *out, size_t max)
{
	const struct deploy *x = deploy_get(d);
	size_t n = 0;

	(void)processes;
	if (!x)
		return 0;
	set(out, max, &n, "kernel", "", "%s", x->kernel ? x->kernel
	    : x->setup == SETUP_MSHARE_V1 ? V1_KERNEL : x->setup == SETUP_MSHARE_2025 ? V3_KERNEL : MAINLINE);
	switch (x->setup) {
	case SETUP_SHMEM:
		sysv(out, max, &n, sga);
		set(out, max, &n, "/sys/kernel/mm/transparent_hugepage/shmem_enabled",
		    "with always, within_size or advise (and MADV_HUGEPAGE) shared memory may get 2 MiB pages: "
		    "that is shm-thp", "never");
		set(out, max, &n, "postgresql.conf huge_pages", "try falls back to 4 KiB pages silently", "off");
		set(out, max, &n, "Oracle use_large_pages", "", "FALSE");
		break;
	case SETUP_THP:
		sysv(out, max, &n, sga);
		set(out, max, &n, "/sys/kernel/mm/transparent_hugepage/shmem_enabled",
		    "covers SysV segments, MAP_SHARED anonymous memory and /dev/shm; a 2 MiB block the kernel "
		    "cannot find a huge page for maps with 4 KiB pages (4k's figure is the upper bound)", "always");
		set(out, max, &n, "postgresql.conf huge_pages", "PostgreSQL's huge_pages is hugetlbfs only; THP of its "
		    "shared memory comes from shmem_enabled", "off");
		set(out, max, &n, "Oracle use_large_pages", "Oracle advises against THP (My Oracle Support 1557478.1): "
		    "hugetlb-2m is its supported way", "FALSE");
		break;
	case SETUP_HUGETLB: {
		uint64_t pages = units_align_up(sga, x->leaf_bytes) / x->leaf_bytes;
		bool g1 = x->leaf_bytes == GIB;
		const char *dir = g1 ? "hugepages-1048576kB" : "hugepages-2048kB";
		char key[96];

		if (g1)
			set(out, max, &n, "kernel command line", "1 GiB pages are rarely free once memory is in use: "
			    "reserve them at boot", "hugepagesz=1G hugepages=%" PRIu64, pages);
		else
			set(out, max, &n, "vm.nr_hugepages", "2 MiB pages for the region (Oracle's hugepages_settings.sh "
			    "sums every segment of `ipcs -m`); add what other programs use", "%" PRIu64, pages);
		snprintf(key, sizeof(key), "/sys/kernel/mm/hugepages/%s/nr_hugepages", dir);
		set(out, max, &n, key, "the same count at run time", "%" PRIu64, pages);
		for (unsigned k = 0; k < nodes; k++) {
			uint64_t on = sga_node >= 0 ? ((int)k == sga_node ? pages : 0)
				    : pages / nodes + (k == 0 ? pages % nodes : 0);

			snprintf(key, sizeof(key), "/sys/devices/system/node/node%u/hugepages/%s/nr_hugepages", k, dir);
			set(out, max, &n, key, sga_node >= 0 ? "--sga-node: the region's pages on that node"
			    : "interleaved (node 0 takes the remainder); the pool is per node: a process allocating "
			    "from a node whose pool is empty fails or falls back", "%" PRIu64, on);
		}
		set(out, max, &n, "memlock (/etc/security/limits.conf, kB)", "the database's OS user: SysV SHM_HUGETLB "
		    "without vm.hugetlb_shm_group needs it (Oracle: at least the SGA); not needed for PostgreSQL's "
		    "mmap", "soft and hard memlock >= %" PRIu64, units_align_up(sga, x->leaf_bytes) / 1024);
		set(out, max, &n, "vm.hugetlb_shm_group", "SysV SHM_HUGETLB (Oracle) without CAP_IPC_LOCK: the GID of "
		    "the database's OS group (e.g. oinstall, dba)", "GID of the database user's group");
		sysv(out, max, &n, sga);
		set(out, max, &n, "postgresql.conf huge_pages", "on refuses to start without the pages (try falls back "
		    "to 4 KiB silently)", "on");
		set(out, max, &n, "postgresql.conf huge_page_size", "PostgreSQL 14 or later", g1 ? "1GB" : "0 (the "
		    "default huge page size, 2 MiB)");
		set(out, max, &n, "PostgreSQL shared_memory_size_in_huge_pages", "PostgreSQL 15 or later prints its "
		    "own figure: `postgres -D $PGDATA -C shared_memory_size_in_huge_pages`; the two agree when --sga "
		    "is its shared_memory_size", "%" PRIu64 " (for --sga)", pages);
		set(out, max, &n, "Oracle use_large_pages", "ONLY refuses to start rather than run the SGA on 4 KiB "
		    "pages", "ONLY");
		set(out, max, &n, "Oracle memory_target, memory_max_target", "Automatic Memory Management maps the SGA "
		    "from /dev/shm, never huge pages: size sga_target instead", "0");
		break;
	}
	case SETUP_FSDAX:
		set(out, max, &n, "namespace", "the data lives here, not in RAM",
		    "ndctl create-namespace -m fsdax --align %s (size >= %s plus the filesystem's own)",
		    x->leaf_bytes >= 2 * MIB ? "2M" : "4K", FMT(sga));
		set(out, max, &n, "filesystem", x->leaf_bytes >= 2 * MIB ? "2 MiB-aligned extents, or the kernel "
		    "maps 4 KiB pages (dax-4k)" : "",
		    x->leaf_bytes >= 2 * MIB ? "mkfs.xfs -d su=2m,sw=1 (or mkfs.ext4 -E stride=512,stripe_width=512); "
		    "mount -o dax" : "mkfs.ext4 or mkfs.xfs; mount -o dax");
		set(out, max, &n, "the file", "holes fault in as 4 KiB blocks", "fallocate -l %" PRIu64 " (written "
		    "before use); mmap MAP_SHARED_VALIDATE|MAP_SYNC", sga);
		set(out, max, &n, "database", "neither PostgreSQL nor Oracle maps its shared memory on a DAX file by a "
		    "parameter; the suite's interposer does for PostgreSQL (workloads/postgres, LD_PRELOAD)", "n/a");
		break;
	case SETUP_DEVDAX:
		set(out, max, &n, "namespace", "the device refuses any mapping off its alignment",
		    "ndctl create-namespace -m devdax --align %s --size %s", x->leaf_bytes >= GIB ? "1G" : "2M",
		    FMT(units_align_up(sga, x->leaf_bytes)));
		set(out, max, &n, "/dev/daxX.Y", "", "owned by the database's OS user (chown, or a udev rule)");
		set(out, max, &n, "database", "no database parameter maps the SGA on /dev/dax; the suite's interposer "
		    "does for PostgreSQL (workloads/postgres)", "n/a");
		break;
	case SETUP_MSHARE_V1:
		set(out, max, &n, "check", "", "cat /proc/sys/vm/mshare_size  # 549755813888 on the patched kernel");
		set(out, max, &n, "msharefs", "", "mount -t msharefs msharefs /sys/fs/mshare");
		set(out, max, &n, "region", "mshare shares page tables per PGD entry: the region's address range "
		    "(not its memory) is rounded up", "512 GiB-aligned address and length (%s of address space for "
		    "%s)", FMT(units_align_up(sga, PT_PUD_SPAN)), FMT(sga));
		if (x->data == DATA_DEVICE)
			set(out, max, &n, "namespace", "", "%s", x->leaf_bytes >= GIB ? "ndctl create-namespace -m devdax "
			    "--align 1G" : x->leaf_bytes >= 2 * MIB ? "ndctl create-namespace -m devdax --align 2M (or "
			    "fsdax --align 2M, mount -o dax)" : "ndctl create-namespace -m fsdax; mount -o dax /mnt/pmem");
		set(out, max, &n, "database", "no database calls mshare(); the suite's interposer does for PostgreSQL "
		    "(workloads/postgres/pg_mshare.c)", "n/a");
		break;
	case SETUP_MSHARE_2025:
		set(out, max, &n, "msharefs", "", "mount -t msharefs msharefs /sys/fs/mshare; cat "
		    "/sys/fs/mshare/mshare_info  # 549755813888");
		set(out, max, &n, "region", "ftruncate to a multiple of mshare_info, ioctl(MSHAREFS_CREATE_MAPPING), "
		    "mmap MAP_SHARED at an aligned address", "%s of address space for %s",
		    FMT(units_align_up(sga, PT_PUD_SPAN)), FMT(sga));
		if (x->data == DATA_DEVICE)
			set(out, max, &n, "filesystem", "", "ext4 on an fsdax namespace%s, mount -o dax",
			    x->leaf_bytes >= 2 * MIB ? " --align 2M" : "");
		set(out, max, &n, "database", "no database maps an msharefs region; the suite's interposer does for "
		    "PostgreSQL", "n/a");
		break;
	}
	return n;
}
