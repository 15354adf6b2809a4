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
 * mshare-2025-file (series v3): the same region holding a file instead:
 * --path FILE (existing: used as is, at least --size long; missing:
 * created, removed at teardown) or --path DIR (a new file there, removed
 * at teardown), mapped at offset 0 of the region by MSHAREFS_CREATE_MAPPING
 * with its descriptor. The file may be on ext4 -o dax (pmem), a disk
 * filesystem or tmpfs; the page size the region gets is the kernel's
 * choice in the region's host mm and is measured (fault counts), never
 * assumed.
 *
 * Detection reads /sys/fs/mshare/mshare_info only (and refuses a kernel
 * with /proc/sys/vm/mshare_size: the 2022 series, where a region could be
 * named mshare_info); no system call or ioctl is tried to find out.
 *
 * The design's interface (msharefs paths, ftruncate, the ioctls, mmap of
 * the region) is used only by the m25_region_* functions below, so that a
 * version with system calls instead of ioctls (announced for the series'
 * next posting) replaces them and nothing else.
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
#include "mshare_detect.h"
#include "procfs.h"

/* 0 with the alignment in *align when the running kernel has the 2025
 * series and msharefs is mounted; else -1 and why (harness/mshare_detect.c,
 * the one detection of the suite). */
static int m25_detect(unsigned long *align, char *why, size_t why_len)
{
	return mshare_2025_ready(align, why, why_len);
}

static int m25_probe(const struct region *r, char *why, size_t why_len)
{
	unsigned long align;

	(void)r;
	return m25_detect(&align, why, why_len);
}

/* ---- the design's interface (v2/v3: msharefs + ioctls) ---- */


/* Create the region file at path, sized to bytes (a multiple of the
 * alignment): its descriptor, or -1 with err. */
static int m25_region_create(const char *path, unsigned long bytes, char *err, size_t err_len)
{
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

	if (fd < 0) {
		snprintf(err, err_len, "cannot create %s: %s", path, strerror(errno));
		return -1;
	}
	if (ftruncate(fd, (off_t)bytes) != 0) {
		snprintf(err, err_len, "ftruncate(%s, %lu) failed: %s", path, bytes, strerror(errno));
		close(fd);
		unlink(path);
		return -1;
	}
	return fd;
}

/* Map an object at region offset 0: anonymous shared memory (obj_fd < 0)
 * or the file obj_fd from its start. 0, or -1 with errno. */
static int m25_region_map_object(int rfd, size_t size, int prot, int obj_fd)
{
	struct mshare_create mc;

	memset(&mc, 0, sizeof(mc));
	mc.region_offset = 0;
	mc.size = size;
	mc.offset = 0;
	mc.prot = (__u32)prot;
	mc.flags = MAP_SHARED | MAP_FIXED | (obj_fd < 0 ? MAP_ANONYMOUS : 0);
	mc.fd = obj_fd < 0 ? (__u32)-1 : (__u32)obj_fd;
	return ioctl(rfd, MSHAREFS_CREATE_MAPPING, &mc);
}

/* A new region for this run under MSHAREFS_DIR, covering --size; its
 * descriptor in b->fd, its name in path (removed at teardown). */
static int m25_new_region(struct region *r, struct fd_backing *b, char *path, size_t path_len,
			  unsigned long *bytes, char *err, size_t err_len)
{
	unsigned long align;

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
	*bytes = (r->size + align - 1) / align * align;
	snprintf(path, path_len, "%s/mshare-bench-%ld-%llx", MSHAREFS_DIR, (long)getpid(),
		 (unsigned long long)clock_now_ns());
	b->fd = m25_region_create(path, *bytes, err, err_len);
	if (b->fd < 0)
		return -1;
	snprintf(b->unlink_path, sizeof(b->unlink_path), "%s", path);
	mshare_2025_version(r->design, sizeof(r->design));
	return 0;
}

static int m25_setup(struct region *r, char *err, size_t err_len)
{
	struct fd_backing *b = fd_backing_new(r);
	unsigned long bytes;
	char path[128];

	if (m25_new_region(r, b, path, sizeof(path), &bytes, err, err_len) != 0)
		return -1;
	if (m25_region_map_object(b->fd, r->size, PROT_READ | PROT_WRITE, -1) != 0) {
		snprintf(err, err_len, "ioctl(%s, MSHAREFS_CREATE_MAPPING, %zu bytes of anonymous shared memory) failed: %s",
			 path, r->size, strerror(errno));
		return -1;
	}
	/* Workers inherit the descriptor across fork; exec is never used. */
	fcntl(b->fd, F_SETFD, 0);
	r->backend_page_bytes = 4096;
	snprintf(r->preparation, sizeof(r->preparation), "%s", BACKEND_PREP_ANON);
	snprintf(r->backing, sizeof(r->backing), "%s (anonymous shared memory, region %lu bytes)", path,
		 bytes);
	snprintf(r->fs_type, sizeof(r->fs_type), "%s", MSHAREFS_TYPE);
	r->dax = false;
	return 0;
}

/* The data file of mshare-2025-file when this run created it (removed at
 * teardown); one region per process. */
static char m25_data_unlink[256];

/* Open or create the data file at r->path (see the top of the file). */
static int m25_open_data(struct region *r, bool *created, char *err, size_t err_len)
{
	int fd = backend_open_path(r, "mshare-bench-data", m25_data_unlink, sizeof(m25_data_unlink), err, err_len);

	*created = fd >= 0 && m25_data_unlink[0];
	return fd;
}

static int m25_file_probe(const struct region *r, char *why, size_t why_len)
{
	unsigned long align;

	if (!r->path) {
		snprintf(why, why_len, "needs --path FILE or --path DIR (the file mapped in the region)");
		return -1;
	}
	return m25_detect(&align, why, why_len);
}

static int m25_file_setup(struct region *r, char *err, size_t err_len)
{
	struct fd_backing *b = fd_backing_new(r);
	int prot = PROT_READ | (r->read_only ? 0 : PROT_WRITE);
	unsigned long bytes;
	char path[128], fs[32];
	bool created;
	struct stat st;
	int dfd;

	if (r->page == PAGE_MODE_4K) {
		snprintf(err, err_len, "--page 4k cannot be forced in an msharefs region: the page size of a file "
				       "in it is chosen in the region's host mm, which no madvise() reaches; "
				       "use --page any (the size obtained is measured and recorded)");
		return -1;
	}
	dfd = m25_open_data(r, &created, err, err_len);
	if (dfd < 0)
		return -1;
	if (fstat(dfd, &st) == 0 && (uint64_t)st.st_size < r->size && ftruncate(dfd, (off_t)r->size) != 0) {
		snprintf(err, err_len, "cannot size %s to %zu bytes: %s", r->path, r->size, strerror(errno));
		close(dfd);
		return -1;
	}
	/* Allocated extents: on DAX, what makes 2 MiB-aligned blocks (so
	 * PMD mappings) possible, as the file backend does. */
	if (created && fallocate(dfd, 0, 0, (off_t)r->size) != 0 && errno == ENOSPC) {
		snprintf(err, err_len, "not enough space for %zu bytes in %s", r->size, r->path);
		close(dfd);
		return -1;
	}
	r->dax = backend_fd_is_dax(dfd);
	backend_fs_name(dfd, fs, sizeof(fs));
	/* The file-backed rule (backend_map.h): written once before the
	 * workers, as the file and mshare backends write theirs. */
	snprintf(r->backing, sizeof(r->backing), "%.200s", r->path);
	if (created && backend_fd_initialize(r, dfd, err, err_len) != 0) {
		close(dfd);
		return -1;
	}
	if (!created)
		snprintf(r->preparation, sizeof(r->preparation), "%s", BACKEND_PREP_EXISTING);
	if (m25_new_region(r, b, path, sizeof(path), &bytes, err, err_len) != 0) {
		close(dfd);
		return -1;
	}
	if (m25_region_map_object(b->fd, r->size, prot, dfd) != 0) {
		int e = errno;

		snprintf(err, err_len, "ioctl(%s, MSHAREFS_CREATE_MAPPING, %zu bytes of the file %s) failed: %s%s",
			 path, r->size, r->path, strerror(e),
			 e == EINVAL ? " (a kernel whose regions take anonymous memory only: the v2 port?)" : "");
		close(dfd);
		return -1;
	}
	/* The region's host VMA holds the file now. */
	close(dfd);
	fcntl(b->fd, F_SETFD, 0);
	r->backend_page_bytes = 4096;
	/* Cut short where it must be (the file's path first, 100 bytes at most). */
	snprintf(r->backing, sizeof(r->backing), "%.100s (file on %.16s, %s) in msharefs region %.40s of %lu bytes",
		 created && m25_data_unlink[0] ? m25_data_unlink : r->path, fs, r->dax ? "DAX" : "not DAX", path,
		 bytes);
	snprintf(r->fs_type, sizeof(r->fs_type), "%s", fs);
	/* msync() of a process's region mapping goes to the msharefs file,
	 * which has no fsync: it cannot write the data file back. */
	r->persist = PERSIST_NONE;
	snprintf(r->persist_why, sizeof(r->persist_why),
		 "a file in an msharefs region: msync() of the region reaches the msharefs file, not %s "
		 "(no fsync there); only fsync() of the data file would write it back",
		 r->path);
	return 0;
}

static void m25_file_teardown(struct region *r)
{
	backend_fd_teardown(r);
	if (m25_data_unlink[0]) {
		unlink(m25_data_unlink);
		m25_data_unlink[0] = '\0';
	}
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
	.description = "msharefs region of the 2025 mshare series (v2/v3; anonymous shared memory, "
		       "mapped by ioctl); page tables below P4D shared by all workers",
	.page_tables_shared = true,
	.probe = m25_probe,
	.setup = m25_setup,
	.attach = m25_attach,
	.detach = m25_detach,
	.teardown = backend_fd_teardown,
};

const struct backend_ops backend_mshare2025_file = {
	.name = "mshare-2025-file",
	/* As above: the region's PUD, PMD and PTE pages are the host's. */
	.planner_mode = "mshare",
	.data = BACKEND_DATA_FILE,
	.description = "msharefs region of the 2025 mshare series (v3) holding the file at --path FILE|DIR "
		       "(ext4 -o dax, ext4, tmpfs); page tables below P4D shared by all workers; page size "
		       "measured",
	.page_tables_shared = true,
	.probe = m25_file_probe,
	.setup = m25_file_setup,
	.attach = m25_attach,
	.detach = m25_detach,
	.teardown = m25_file_teardown,
};
