/* backend_mshare2025.c - a region of the 2025 mshare series (msharefs).
 *
 * The kernel: the mshare-2025 flavour (Linux 6.12 + kernel/patches-2025,
 * `make kernel FLAVOUR=mshare-2025`). There is no system call: the region
 * is a file on msharefs. setup() (the harness parent) creates
 * /sys/fs/mshare/mshare-bench-<pid>-<clock>, sizes it with ftruncate() to
 * --size rounded up to the alignment in /sys/fs/mshare/mshare_info (512 GiB
 * with 4-level paging) and maps --size bytes of anonymous shared memory at
 * offset 0 with ioctl(MSHAREFS_CREATE_MAPPING): anonymous shared memory is
 * all the series supports. Every worker opens the file and mmap()s the
 * whole region MAP_SHARED at --addr (a multiple of the alignment); its page
 * tables below the P4D entry are the region's. detach munmap()s the whole
 * region (a part cannot be unmapped) and closes the descriptor; teardown
 * removes the file, and the region goes with the last mapping.
 *
 * Detection reads /sys/fs/mshare/mshare_info only (and refuses a kernel
 * with /proc/sys/vm/mshare_size: the 2022 series, where a region could be
 * named mshare_info); no system call or ioctl is tried to find out.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../kernel/include/msharefs-uapi.h"
#include "backend_map.h"
#include "clock.h"
#include "linux_compat.h"
#include "procfs.h"

/* 0 with the alignment in *align when the running kernel has the 2025
 * series and msharefs is mounted; else -1 and why. */
static int m25_detect(unsigned long *align, char *why, size_t why_len)
{
	struct stat st;
	char fs[8192];
	long v;

	if (stat(MSHARE_2022_SYSCTL, &st) == 0) {
		snprintf(why, why_len, "this kernel has the 2022 mshare series (%s exists), not the 2025 one",
			 MSHARE_2022_SYSCTL);
		return -1;
	}
	if (procfs_read_long(MSHAREFS_INFO, &v) != 0) {
		if (procfs_read("/proc/filesystems", fs, sizeof(fs)) >= 0 && strstr(fs, "\tmsharefs\n"))
			snprintf(why, why_len, "msharefs is not mounted at %s (mount -t %s %s %s)", MSHAREFS_DIR,
				 MSHAREFS_TYPE, MSHAREFS_TYPE, MSHAREFS_DIR);
		else
			snprintf(why, why_len, "mshare-2025 not available on this kernel: %s missing", MSHAREFS_INFO);
		return -1;
	}
	if (v < 4096 || (v & (v - 1)) != 0) {
		snprintf(why, why_len, "%s holds %ld, not a power of two >= 4096", MSHAREFS_INFO, v);
		return -1;
	}
	*align = (unsigned long)v;
	return 0;
}

static int m25_probe(const struct region *r, char *why, size_t why_len)
{
	unsigned long align;

	(void)r;
	return m25_detect(&align, why, why_len);
}

static int m25_setup(struct region *r, char *err, size_t err_len)
{
	struct fd_backing *b = fd_backing_new(r, err, err_len);
	struct mshare_create mc;
	unsigned long align, bytes;
	char path[128];

	if (!b)
		return -1;
	if (m25_detect(&align, err, err_len) != 0)
		return -1;
	if (r->addr % align != 0) {
		snprintf(err, err_len, "--addr 0x%lx is not a multiple of the msharefs alignment %lu (%s)",
			 (unsigned long)r->addr, align, MSHAREFS_INFO);
		return -1;
	}
	if (r->size == 0 || r->size % 4096 != 0) {
		snprintf(err, err_len, "--size %zu is not a positive multiple of 4096", r->size);
		return -1;
	}
	bytes = (r->size + align - 1) / align * align;
	snprintf(path, sizeof(path), "%s/mshare-bench-%ld-%llx", MSHAREFS_DIR, (long)getpid(),
		 (unsigned long long)clock_now_ns());
	b->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (b->fd < 0) {
		snprintf(err, err_len, "cannot create %s: %s", path, strerror(errno));
		return -1;
	}
	snprintf(b->unlink_path, sizeof(b->unlink_path), "%s", path);
	if (ftruncate(b->fd, (off_t)bytes) != 0) {
		snprintf(err, err_len, "ftruncate(%s, %lu) failed: %s", path, bytes, strerror(errno));
		return -1;
	}
	memset(&mc, 0, sizeof(mc));
	mc.region_offset = 0;
	mc.size = r->size;
	mc.offset = 0;
	mc.prot = PROT_READ | PROT_WRITE;
	mc.flags = MAP_SHARED | MAP_FIXED | MAP_ANONYMOUS;
	mc.fd = (__u32)-1;
	if (ioctl(b->fd, MSHAREFS_CREATE_MAPPING, &mc) != 0) {
		snprintf(err, err_len, "ioctl(%s, MSHAREFS_CREATE_MAPPING, %zu bytes of anonymous shared memory) failed: %s",
			 path, r->size, strerror(errno));
		return -1;
	}
	/* Workers inherit the descriptor across fork; exec is never used. */
	fcntl(b->fd, F_SETFD, 0);
	r->backend_page_bytes = 4096;
	snprintf(r->backing, sizeof(r->backing), "%s (anonymous shared memory, region %lu bytes)", path,
		 bytes);
	snprintf(r->fs_type, sizeof(r->fs_type), "%s", MSHAREFS_TYPE);
	r->dax = false;
	return 0;
}

/* The region's size: the file's. */
static int m25_region_bytes(const struct fd_backing *b, size_t *bytes, char *err, size_t err_len)
{
	struct stat st;

	if (fstat(b->fd, &st) != 0 || st.st_size <= 0) {
		snprintf(err, err_len, "cannot read the msharefs region's size: %s", strerror(errno));
		return -1;
	}
	*bytes = (size_t)st.st_size;
	return 0;
}

static int m25_attach(struct region *r, char *err, size_t err_len)
{
	struct fd_backing *b = r->backend_private;
	int prot = PROT_READ | (r->read_only ? 0 : PROT_WRITE);
	char path[64];
	size_t bytes;
	void *p;
	int fd;

	if (!b || b->fd < 0) {
		snprintf(err, err_len, "backend %s was not set up", r->backend_name);
		return -1;
	}
	if (m25_region_bytes(b, &bytes, err, err_len) != 0)
		return -1;
	/* As a process that connects would: open the region, map it. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", b->fd);
	fd = open(path, (r->read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, err_len, "cannot open the msharefs region again through %s: %s", path,
			 strerror(errno));
		return -1;
	}
	p = mmap((void *)r->addr, bytes, prot, MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
	if (p == MAP_FAILED || p != (void *)r->addr) {
		snprintf(err, err_len, "mmap of the msharefs region (%zu bytes) at 0x%lx failed: %s", bytes,
			 (unsigned long)r->addr, p == MAP_FAILED ? strerror(errno) : "mapped elsewhere");
		if (p != MAP_FAILED)
			munmap(p, bytes);
		close(fd);
		return -1;
	}
	if (b->attach_fd >= 0)
		close(b->attach_fd);
	b->attach_fd = fd;
	r->base = p;
	return 0;
}

static int m25_detach(struct region *r, char *err, size_t err_len)
{
	struct fd_backing *b = r->backend_private;
	size_t bytes;

	if (!r->base)
		return 0;
	if (!b || m25_region_bytes(b, &bytes, err, err_len) != 0)
		return -1;
	/* The whole region: msharefs mappings cannot be split. */
	if (munmap(r->base, bytes) != 0) {
		snprintf(err, err_len, "munmap of the msharefs region failed: %s", strerror(errno));
		return -1;
	}
	r->base = NULL;
	if (b->attach_fd >= 0) {
		close(b->attach_fd);
		b->attach_fd = -1;
	}
	return 0;
}

const struct backend_ops backend_mshare2025 = {
	.name = "mshare-2025",
	/* The series links the host's P4D entry (with 4-level paging: the PGD
	 * entry) into each process, so every sharer uses the host's PUD, PMD
	 * and PTE pages: the levels the 2022 series shares (kernel/README.md,
	 * "The mshare-2025 flavour"). */
	.planner_mode = "mshare",
	.data = BACKEND_DATA_SHMEM,
	.description = "msharefs region of the 2025 mshare series (anonymous shared memory, mapped "
		       "by ioctl); page tables below P4D shared by all workers",
	.page_tables_shared = true,
	.probe = m25_probe,
	.setup = m25_setup,
	.attach = m25_attach,
	.detach = m25_detach,
	.teardown = backend_fd_teardown,
};
