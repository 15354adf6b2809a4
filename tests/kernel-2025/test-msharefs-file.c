// SPDX-License-Identifier: GPL-2.0
/*
 * A file mapped in an msharefs region (series v3 patch 20: "support mapping
 * files and anon hugetlb in an mshare region"), on the mshare-2025 kernel
 * flavour, on three filesystems: ext4 -o dax on the guest's emulated pmem
 * (/mnt/pmem), the same device as plain ext4 (remounted dax=never for the
 * test) and tmpfs.  Each case runs on each filesystem (fixture variants).
 *
 * What MAP_SHARED of the file guarantees must hold through a region: data
 * written through the region is in the file (after the mapping goes, and
 * after the region goes); fsync writes it back and a later write dirties
 * the page again (non-DAX ext4); truncation or a punched hole under a
 * mapped region gives SIGBUS or zeros, never a kernel report (the guest's
 * kernel log is checked by tests/kernel/conformance.sh); a read-only
 * descriptor cannot be mapped writable, nor can a file be mapped without a
 * descriptor its caller could open; and the file's page tables are the
 * region's (VmPTE of the sharers does not grow, PageTables grows once).
 * On a kernel whose MSHAREFS_CREATE_MAPPING takes anonymous memory only
 * (the v2 port) every case fails at the ioctl (EINVAL).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "mshare-test.h"
#include "msharefs-uapi.h"
#include "msharefs-test.h"

#define PAGE	4096UL
#define DATA	(16UL << 20)	/* the file, mapped at region offset 0 */
#define PMEM_DIR "/mnt/pmem"

enum fs_kind { FS_TMPFS, FS_EXT4_DAX, FS_EXT4 };

/* Device and options of the mount on dir, from /proc/mounts; 0 if found. */
static int mount_of(const char *dir, char *dev, size_t dev_len, char *type, size_t type_len,
		    char *opts, size_t opts_len)
{
	char d[256], m[256], t[64], o[512];
	FILE *f = fopen("/proc/mounts", "r");
	int found = -1;

	if (!f)
		return -1;
	while (fscanf(f, "%255s %255s %63s %511s %*d %*d", d, m, t, o) == 4) {
		if (strcmp(m, dir) == 0) {	/* the last one wins, as mounts stack */
			snprintf(dev, dev_len, "%s", d);
			snprintf(type, type_len, "%s", t);
			snprintf(opts, opts_len, "%s", o);
			found = 0;
		}
	}
	fclose(f);
	return found;
}

static uint64_t pattern(unsigned long page, unsigned long seed)
{
	return 0x6d73686172650000ULL ^ (seed << 32) ^ page;
}

FIXTURE(file) {
	unsigned long align;
	char dir[64];
	char file[160];
	char region[160];
	int ffd;	/* the data file, O_RDWR */
	int rfd;	/* the region */
	int remounted;	/* /mnt/pmem was remounted dax=never */
	int tmpfs_mounted;
	char pmem_dev[256];
};

FIXTURE_VARIANT(file) {
	enum fs_kind kind;
};

FIXTURE_VARIANT_ADD(file, ext4_dax) { .kind = FS_EXT4_DAX };
FIXTURE_VARIANT_ADD(file, ext4) { .kind = FS_EXT4 };
FIXTURE_VARIANT_ADD(file, tmpfs) { .kind = FS_TMPFS };

static int create_mapping(int rfd, int ffd, unsigned long off, unsigned long size, int prot)
{
	struct mshare_create mc = {
		.region_offset = off, .size = size, .offset = 0, .prot = (__u32)prot,
		.flags = MAP_SHARED | MAP_FIXED, .fd = (__u32)ffd,
	};

	return ioctl(rfd, MSHAREFS_CREATE_MAPPING, &mc);
}

FIXTURE_SETUP(file)
{
	char type[64], opts[512];
	static int seq;

	self->ffd = self->rfd = -1;
	self->remounted = self->tmpfs_mounted = 0;
	self->align = read_align();
	if (!self->align)
		SKIP(return, "%s missing: not the mshare-2025 kernel, or msharefs not mounted", MSHAREFS_INFO);
	switch (variant->kind) {
	case FS_TMPFS:
		snprintf(self->dir, sizeof(self->dir), "/tmp/kt-tmpfs");
		mkdir(self->dir, 0755);
		ASSERT_SYS(mount("tmpfs", self->dir, "tmpfs", 0, "size=64m"));
		self->tmpfs_mounted = 1;
		break;
	case FS_EXT4_DAX:
	case FS_EXT4:
		snprintf(self->dir, sizeof(self->dir), "%s", PMEM_DIR);
		if (mount_of(PMEM_DIR, self->pmem_dev, sizeof(self->pmem_dev), type, sizeof(type), opts,
			     sizeof(opts)) != 0 || strcmp(type, "ext4") != 0)
			SKIP(return, "%s is not an ext4 mount (no pmem in this guest)", PMEM_DIR);
		if (!strstr(opts, "dax"))
			SKIP(return, "%s is mounted without dax (%s)", PMEM_DIR, opts);
		if (variant->kind == FS_EXT4) {
			ASSERT_SYS(umount2(PMEM_DIR, 0));
			self->remounted = 1;
			ASSERT_SYS(mount(self->pmem_dev, PMEM_DIR, "ext4", 0, "dax=never"));
		}
		break;
	}
	snprintf(self->file, sizeof(self->file), "%s/kt-file-%d-%d", self->dir, (int)getpid(), seq);
	self->ffd = open(self->file, O_RDWR | O_CREAT | O_EXCL, 0600);
	ASSERT_SYS(self->ffd);
	ASSERT_SYS(ftruncate(self->ffd, (off_t)DATA));
	snprintf(self->region, sizeof(self->region), "%s/kt-file-%d-%d", MSHAREFS_DIR, (int)getpid(), seq++);
	self->rfd = open(self->region, O_RDWR | O_CREAT | O_EXCL, 0600);
	ASSERT_SYS(self->rfd);
	ASSERT_SYS(ftruncate(self->rfd, (off_t)self->align));
}

FIXTURE_TEARDOWN(file)
{
	if (self->rfd >= 0) {
		close(self->rfd);
		unlink(self->region);
	}
	if (self->ffd >= 0) {
		close(self->ffd);
		unlink(self->file);
	}
	if (self->remounted) {
		umount2(PMEM_DIR, 0);
		if (mount(self->pmem_dev, PMEM_DIR, "ext4", 0, "dax=always") != 0)
			TH_LOG("could not mount %s on %s again with dax=always: %s", self->pmem_dev, PMEM_DIR,
			       strerror(errno));
	}
	if (self->tmpfs_mounted)
		umount2(self->dir, MNT_DETACH);
}

static char *map_region(int rfd, unsigned long align, int prot)
{
	void *p = mmap(NULL, align, prot, MAP_SHARED, rfd, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Child: map the region, write every page's pattern, unmap, exit 0. */
static int write_through_region(int rfd, unsigned long align, unsigned long seed)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		char *p = map_region(rfd, align, PROT_READ | PROT_WRITE);

		if (!p)
			_exit(11);
		for (unsigned long i = 0; i < DATA / PAGE; i++)
			*(uint64_t *)(p + i * PAGE) = pattern(i, seed);
		_exit(munmap(p, align) == 0 ? 0 : 12);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Pages of the file whose first word is not the pattern; -1 on error. */
static long file_mismatches(int ffd, unsigned long seed)
{
	long bad = 0;

	for (unsigned long i = 0; i < DATA / PAGE; i++) {
		uint64_t v;

		if (pread(ffd, &v, sizeof(v), (off_t)(i * PAGE)) != (ssize_t)sizeof(v))
			return -1;
		bad += v != pattern(i, seed);
	}
	return bad;
}

TEST_F(file, data_written_through_the_region_is_in_the_file)
{
	ASSERT_SYS(create_mapping(self->rfd, self->ffd, 0, DATA, PROT_READ | PROT_WRITE));
	ASSERT_EQ(write_through_region(self->rfd, self->align, 1), 0);
	/* The mapping is gone, the region (and its host mm) still there. */
	EXPECT_EQ(file_mismatches(self->ffd, 1), 0);
	/* The region goes: its last descriptor closed, its name removed. */
	close(self->rfd);
	self->rfd = -1;
	ASSERT_SYS(unlink(self->region));
	EXPECT_EQ(file_mismatches(self->ffd, 1), 0);
	/* And from a descriptor opened afresh. */
	int fd = open(self->file, O_RDONLY);
	ASSERT_SYS(fd);
	EXPECT_EQ(file_mismatches(fd, 1), 0);
	close(fd);
}

TEST_F(file, fsync_writes_back_and_a_later_write_dirties_again)
{
	if (variant->kind != FS_EXT4)
		SKIP(return, "page-cache writeback is the non-DAX disk filesystem's case");
	ASSERT_SYS(create_mapping(self->rfd, self->ffd, 0, DATA, PROT_READ | PROT_WRITE));
	ASSERT_SYS(fsync(self->ffd));
	long base = mt_meminfo_kb("Dirty");
	ASSERT_EQ(write_through_region(self->rfd, self->align, 2), 0);
	long dirty = mt_meminfo_kb("Dirty");
	TH_LOG("Dirty: %ld kB before, %ld kB after writing %lu kB through the region", base, dirty,
	       DATA >> 10);
	EXPECT_GE(dirty - base, (long)(DATA >> 10) / 2);
	ASSERT_SYS(fsync(self->ffd));
	long clean = mt_meminfo_kb("Dirty");
	EXPECT_LT(clean - base, (long)(DATA >> 10) / 8);
	/* Writeback write-protected the region's PTEs (and flushed the
	 * sharers' TLBs): writing again must dirty the pages again. */
	ASSERT_EQ(write_through_region(self->rfd, self->align, 3), 0);
	long again = mt_meminfo_kb("Dirty");
	TH_LOG("Dirty: %ld kB after fsync, %ld kB after writing again", clean, again);
	EXPECT_GE(again - clean, (long)(DATA >> 10) / 2);
	ASSERT_SYS(fsync(self->ffd));
	EXPECT_EQ(file_mismatches(self->ffd, 3), 0);
}

/* Child: map the region, read its first `touch` pages, then page `page`
 * after the parent's go (one byte on the pipe); exit 0 if it read zero, 1
 * if it read data; dies by SIGBUS if the kernel sends it. */
static pid_t reader(int rfd, unsigned long align, unsigned long touch, unsigned long page, int go,
		    int ready)
{
	pid_t pid = fork();

	if (pid == 0) {
		char *p = map_region(rfd, align, PROT_READ);
		char c;
		volatile uint64_t v;

		if (!p)
			_exit(11);
		for (unsigned long i = 0; i < touch; i++)	/* mapped before the change */
			v = *(volatile uint64_t *)(p + i * PAGE);
		if (write(ready, "r", 1) != 1 || read(go, &c, 1) != 1)
			_exit(13);
		v = *(volatile uint64_t *)(p + page * PAGE);
		_exit(v == 0 ? 0 : 1);
	}
	return pid;
}

TEST_F(file, truncate_under_a_mapped_region_is_sigbus_and_a_hole_is_zeros)
{
	int go[2], ready[2], st;
	char c;

	ASSERT_SYS(create_mapping(self->rfd, self->ffd, 0, DATA, PROT_READ | PROT_WRITE));
	ASSERT_EQ(write_through_region(self->rfd, self->align, 4), 0);
	ASSERT_SYS(pipe(go));
	ASSERT_SYS(pipe(ready));

	/* A punched hole under a mapped page: the page reads zeros. */
	pid_t pid = reader(self->rfd, self->align, DATA / PAGE, 1, go[0], ready[1]);
	ASSERT_GT(pid, 0);
	ASSERT_EQ(read(ready[0], &c, 1), 1);
	ASSERT_SYS(fallocate(self->ffd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, PAGE, PAGE));
	ASSERT_EQ(write(go[1], "g", 1), 1);
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	mt_log_status("reader of the punched page", st);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);

	/* Truncated under a mapped page: SIGBUS past the end (as MAP_SHARED). */
	pid = reader(self->rfd, self->align, DATA / PAGE, DATA / PAGE - 1, go[0], ready[1]);
	ASSERT_GT(pid, 0);
	ASSERT_EQ(read(ready[0], &c, 1), 1);
	ASSERT_SYS(ftruncate(self->ffd, (off_t)(DATA / 2)));
	ASSERT_EQ(write(go[1], "g", 1), 1);
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	mt_log_status("reader past the new end", st);
	EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGBUS);

	/* Below the end the data is still there, through the region. */
	pid = reader(self->rfd, self->align, DATA / 2 / PAGE, 0, go[0], ready[1]);
	ASSERT_GT(pid, 0);
	ASSERT_EQ(read(ready[0], &c, 1), 1);
	ASSERT_EQ(write(go[1], "g", 1), 1);
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1);	/* data, not zero */
	close(go[0]);
	close(go[1]);
	close(ready[0]);
	close(ready[1]);
}

TEST_F(file, a_read_only_descriptor_cannot_be_mapped_writable)
{
	int ro = open(self->file, O_RDONLY), wo = open(self->file, O_WRONLY), st;

	ASSERT_SYS(ro);
	ASSERT_SYS(wo);
	EXPECT_ERRNO(create_mapping(self->rfd, ro, 0, DATA, PROT_READ | PROT_WRITE), EACCES);
	EXPECT_ERRNO(create_mapping(self->rfd, wo, 0, DATA, PROT_READ), EACCES);
	ASSERT_SYS(create_mapping(self->rfd, ro, 0, DATA, PROT_READ));
	close(ro);
	close(wo);
	ASSERT_SYS(pwrite(self->ffd, "x", 1, 0));
	pid_t pid = fork();
	if (pid == 0) {	/* the region mapped read-write: the object is not */
		char *p = map_region(self->rfd, self->align, PROT_READ | PROT_WRITE);

		if (!p || p[0] != 'x')
			_exit(11);
		p[0] = 'y';
		_exit(12);
	}
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	mt_log_status("writer to a read-only object", st);
	EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
	char c = 0;
	ASSERT_EQ(pread(self->ffd, &c, 1, 0), 1);
	EXPECT_EQ(c, 'x');
}

TEST_F(file, no_mapping_without_a_descriptor_the_caller_could_open)
{
	int st;

	ASSERT_SYS(fchmod(self->rfd, 0666));
	pid_t pid = fork();
	if (pid == 0) {
		int path_fd, fd;

		if (setgid(65534) != 0 || setuid(65534) != 0)
			_exit(10);
		fd = open(self->file, O_RDONLY);	/* mode 0600, owned by root */
		if (fd >= 0 || errno != EACCES)
			_exit(11);
		path_fd = open(self->file, O_PATH);	/* allowed: no access to data */
		if (path_fd < 0)
			_exit(12);
		fd = open(self->region, O_RDWR);
		if (fd < 0)
			_exit(13);
		if (create_mapping(fd, path_fd, 0, DATA, PROT_READ) == 0)
			_exit(14);
		_exit(errno == EBADF ? 0 : 15);
	}
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	mt_log_status("another user", st);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* Nothing was mapped: the region still takes the file at offset 0. */
	EXPECT_EQ(create_mapping(self->rfd, self->ffd, 0, DATA, PROT_READ), 0);
}

#define SHARERS 8

TEST_F(file, page_tables_of_the_file_are_the_regions)
{
	int go[2], hold[2], ready[2], st;
	pid_t kids[SHARERS];
	char c;

	ASSERT_SYS(create_mapping(self->rfd, self->ffd, 0, DATA, PROT_READ | PROT_WRITE));
	ASSERT_EQ(write_through_region(self->rfd, self->align, 5), 0);
	ASSERT_SYS(pipe(go));
	ASSERT_SYS(pipe(hold));
	ASSERT_SYS(pipe(ready));
	for (int k = 0; k < SHARERS; k++) {
		kids[k] = fork();
		if (kids[k] == 0) {
			char *p = map_region(self->rfd, self->align, PROT_READ);
			uint64_t bad = 0;

			if (!p)
				_exit(11);
			long before = mt_proc_kb("/proc/self/status", "VmPTE");
			if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
				_exit(13);
			for (unsigned long i = 0; i < DATA / PAGE; i++)
				bad += *(uint64_t *)(p + i * PAGE) != pattern(i, 5);
			long grew = mt_proc_kb("/proc/self/status", "VmPTE") - before;
			if (write(ready[1], "r", 1) != 1 || read(hold[0], &c, 1) != 1)
				_exit(13);
			/* 16 MiB of 4 KiB pages: 32 KiB of PTE pages if private. */
			_exit(bad ? 12 : grew >= 8 ? 14 : 0);
		}
		ASSERT_GT(kids[k], 0);
	}
	/* Every sharer forked and mapped the region, none has touched it. */
	for (int k = 0; k < SHARERS; k++)
		ASSERT_EQ(read(ready[0], &c, 1), 1);
	long pt_mapped = mt_meminfo_kb("PageTables");
	for (int k = 0; k < SHARERS; k++)
		ASSERT_EQ(write(go[1], "g", 1), 1);
	for (int k = 0; k < SHARERS; k++)
		ASSERT_EQ(read(ready[0], &c, 1), 1);
	/* Every sharer has read every page of the file through the region. */
	long pt_read = mt_meminfo_kb("PageTables");
	for (int k = 0; k < SHARERS; k++)
		ASSERT_EQ(write(hold[1], "x", 1), 1);
	for (int k = 0; k < SHARERS; k++) {
		ASSERT_EQ(waitpid(kids[k], &st, 0), kids[k]);
		mt_log_status("sharer", st);
		EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	/* The region's tables were built by the first write: reading the
	 * whole file in 8 sharers adds no page table; private mappings would
	 * add 8 x 32 KiB. Less than one private copy is allowed for noise. */
	TH_LOG("PageTables %ld kB with %d sharers mapped, %ld kB after each read %lu MiB of the file",
	       pt_mapped, SHARERS, pt_read, DATA >> 20);
	EXPECT_LT(pt_read - pt_mapped, (long)(DATA / PAGE * 8 / 1024));
	close(go[0]);
	close(go[1]);
	close(hold[0]);
	close(hold[1]);
	close(ready[0]);
	close(ready[1]);
}

TEST_HARNESS_MAIN
