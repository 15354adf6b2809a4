// SPDX-License-Identifier: GPL-2.0
/*
 * Conformance of the 2025 mshare API (msharefs + ftruncate + ioctl + mmap)
 * on the mshare-2025 kernel flavour (Linux 6.12 + kernel/patches-2025).
 * The kernel's kselftest_harness.h (with tests/kernel/mshare-test.h); runs in the guest only
 * (tests/kernel-2025/conformance.sh).
 *
 * The cases of the series' selftests (tools/testing/selftests/mshare, posted
 * by Yongting Lin for the 2025 series) written again for this harness:
 * basic (a region created, mapped by two processes that see each other's
 * writes), util (map and unmap objects with the ioctls), memory (no THP in a
 * region, with shmem_enabled at its default, never).  Their swap case, which
 * needs a memory cgroup and swap, is in test-msharefs-memcg.c (with THP
 * under shmem_enabled=always).  The rest checks the API's rules and that
 * page tables are shared.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "mshare-test.h"
#include "msharefs-uapi.h"
#include "msharefs-test.h"

#define PAGE	4096UL
#define DATA	(64UL << 20)	/* object mapped in the test regions */

static unsigned long align;

#define NEED_MSHAREFS() do { \
	align = read_align(); \
	if (!align) \
		SKIP(return, "%s missing: not the mshare-2025 kernel, or msharefs not mounted", MSHAREFS_INFO); \
} while (0)

/* A region name unique to this process and call. */
static void region_path(char *buf, size_t len, const char *tag)
{
	static int seq;

	snprintf(buf, len, "%s/kt-%s-%d-%d", MSHAREFS_DIR, tag, (int)getpid(), seq++);
}

static int map_anon(int fd, unsigned long off, unsigned long size, int prot)
{
	struct mshare_create mc = {
		.region_offset = off, .size = size, .offset = 0, .prot = prot,
		.flags = MAP_SHARED | MAP_FIXED | MAP_ANONYMOUS, .fd = (__u32)-1,
	};

	return ioctl(fd, MSHAREFS_CREATE_MAPPING, &mc);
}

/* Create a region of one alignment unit holding DATA bytes of anonymous
 * shared memory at offset 0; returns its descriptor. */
static int make_region(char *path, size_t len)
{
	int fd;

	region_path(path, len, "r");
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)align) != 0 || map_anon(fd, 0, DATA, PROT_READ | PROT_WRITE) != 0)
		return -1;
	return fd;
}

static char *map_region(int fd, int prot)
{
	void *p = mmap(NULL, align, prot, MAP_SHARED, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Status of a child that runs fn(arg) and exits 0, or dies by a signal. */
static int run_child(void (*fn)(void *), void *arg)
{
	int st;
	pid_t pid = fork();

	if (pid == 0) {
		fn(arg);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return st;
}

TEST(info_holds_the_alignment)
{
	struct statfs sf;

	NEED_MSHAREFS();
	ASSERT_SYS(statfs(MSHAREFS_DIR, &sf));
	EXPECT_EQ((long)sf.f_type, (long)MSHAREFS_MAGIC);
	/* P4D_SIZE with 4-level paging (the flavour keeps 5-level off). */
	EXPECT_EQ(align, 1UL << 39);
}

TEST(size_is_set_once_to_a_multiple_of_the_alignment)
{
	char path[128];
	struct stat st;
	int fd;

	NEED_MSHAREFS();
	region_path(path, sizeof(path), "size");
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	ASSERT_SYS(fd);
	ASSERT_SYS(fstat(fd, &st));
	EXPECT_EQ((long)st.st_size, 0L);
	EXPECT_ERRNO(ftruncate(fd, (off_t)PAGE), EINVAL);
	EXPECT_ERRNO(ftruncate(fd, (off_t)(align + PAGE)), EINVAL);
	ASSERT_SYS(ftruncate(fd, (off_t)align));
	EXPECT_ERRNO(ftruncate(fd, (off_t)(2 * align)), EINVAL);
	ASSERT_SYS(fstat(fd, &st));
	EXPECT_EQ((unsigned long)st.st_size, align);
	close(fd);
	ASSERT_SYS(unlink(path));
}

TEST(mmap_rules)
{
	char path[128];
	int fd;

	NEED_MSHAREFS();
	region_path(path, sizeof(path), "mmap");
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	ASSERT_SYS(fd);
	/* Before the size is set. */
	EXPECT_TRUE(mmap(NULL, align, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED);
	ASSERT_SYS(ftruncate(fd, (off_t)align));
	EXPECT_TRUE(mmap(NULL, align, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED);
	EXPECT_TRUE(mmap(NULL, align / 2, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED);
	EXPECT_TRUE(mmap((void *)(4 * align + (2UL << 20)), align, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0) ==
		    MAP_FAILED);
	void *p = mmap(NULL, align, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_TRUE(p != MAP_FAILED);
	EXPECT_EQ((uintptr_t)p % align, 0UL);
	/* Not splittable, no protection changes, not movable. */
	EXPECT_ERRNO(munmap((char *)p + PAGE, PAGE), EINVAL);
	EXPECT_ERRNO(mprotect(p, PAGE, PROT_READ), EINVAL);
	EXPECT_TRUE(mremap(p, align, align + PAGE, MREMAP_MAYMOVE) == MAP_FAILED);
	ASSERT_SYS(munmap(p, align));
	close(fd);
	ASSERT_SYS(unlink(path));
}

/* MSHAREFS_CREATE_MAPPING's rules. Since v3 a file may be mapped too (the
 * file cases are in test-msharefs-file.c); a file descriptor with
 * MAP_ANONYMOUS, or a non-zero offset into anonymous memory, is EINVAL. */
TEST(create_mapping_rules)
{
	char path[128];
	int fd, mfd;

	NEED_MSHAREFS();
	region_path(path, sizeof(path), "ioctl");
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	ASSERT_SYS(fd);
	/* No size yet. */
	EXPECT_ERRNO(map_anon(fd, 0, PAGE, PROT_READ), EINVAL);
	ASSERT_SYS(ftruncate(fd, (off_t)align));
	struct mshare_create mc = {
		.region_offset = 0, .size = PAGE, .prot = PROT_READ | PROT_WRITE,
		.flags = MAP_SHARED | MAP_FIXED | MAP_ANONYMOUS, .fd = (__u32)-1,
	};
	mfd = memfd_create("kt", 0);
	ASSERT_SYS(mfd);
	ASSERT_SYS(ftruncate(mfd, (off_t)PAGE));
	mc.fd = (__u32)mfd;
	EXPECT_ERRNO(ioctl(fd, MSHAREFS_CREATE_MAPPING, &mc), EINVAL);	/* fd with MAP_ANONYMOUS */
	mc.fd = (__u32)-1;
	mc.offset = PAGE;
	EXPECT_ERRNO(ioctl(fd, MSHAREFS_CREATE_MAPPING, &mc), EINVAL);	/* offset into anonymous memory */
	mc.offset = 0;
	mc.flags = MAP_SHARED | MAP_FIXED;				/* a file: fd -1 */
	EXPECT_ERRNO(ioctl(fd, MSHAREFS_CREATE_MAPPING, &mc), EBADF);
	mc.flags = MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS;
	EXPECT_ERRNO(ioctl(fd, MSHAREFS_CREATE_MAPPING, &mc), EINVAL);
	mc.flags = MAP_SHARED | MAP_ANONYMOUS;				/* not MAP_FIXED */
	EXPECT_ERRNO(ioctl(fd, MSHAREFS_CREATE_MAPPING, &mc), EINVAL);
	EXPECT_ERRNO(map_anon(fd, align, PAGE, PROT_READ), EINVAL);	/* past the end */
	EXPECT_ERRNO(map_anon(fd, align - PAGE, 2 * PAGE, PROT_READ), EINVAL);
	EXPECT_ERRNO(map_anon(fd, 100, PAGE, PROT_READ), EINVAL);	/* unaligned */
	ASSERT_SYS(map_anon(fd, 0, 2 * PAGE, PROT_READ | PROT_WRITE));
	EXPECT_ERRNO(map_anon(fd, PAGE, PAGE, PROT_READ), EEXIST);	/* overlaps */
	ASSERT_SYS(map_anon(fd, 2 * PAGE, PAGE, PROT_READ));
	/* A region is not an object of a region. */
	mc.flags = MAP_SHARED | MAP_FIXED;
	mc.region_offset = 4 * PAGE;
	mc.fd = (__u32)fd;
	EXPECT_ERRNO(ioctl(fd, MSHAREFS_CREATE_MAPPING, &mc), EINVAL);
	/* The memfd, since v3. */
	mc.fd = (__u32)mfd;
	EXPECT_EQ(ioctl(fd, MSHAREFS_CREATE_MAPPING, &mc), 0);
	EXPECT_ERRNO(ioctl(fd, 0x7800ff, &mc), ENOTTY);
	close(mfd);
	close(fd);
	ASSERT_SYS(unlink(path));
}

struct share_arg {
	const char *path;
	unsigned long expect, write;
};

static void sharer(void *a)
{
	struct share_arg *s = a;
	int fd = open(s->path, O_RDWR);
	char *p;

	if (fd < 0)
		_exit(10);
	p = map_region(fd, PROT_READ | PROT_WRITE);
	if (!p)
		_exit(11);
	for (unsigned long i = 0; i < DATA / PAGE; i++)
		if (*(unsigned long *)(p + i * PAGE) != s->expect + i)
			_exit(12);
	for (unsigned long i = 0; i < DATA / PAGE; i++)
		*(unsigned long *)(p + i * PAGE) = s->write + i;
	_exit(0);
}

/* The series' basic selftest: two processes map one region and see each
 * other's writes (here: at different addresses, every page checked). */
TEST(two_processes_share_the_region)
{
	char path[128];
	int fd, st;
	char *p;

	NEED_MSHAREFS();
	fd = make_region(path, sizeof(path));
	ASSERT_SYS(fd);
	p = map_region(fd, PROT_READ | PROT_WRITE);
	ASSERT_TRUE(p != NULL);
	for (unsigned long i = 0; i < DATA / PAGE; i++)
		*(unsigned long *)(p + i * PAGE) = 1000 + i;
	struct share_arg s = { path, 1000, 5000 };
	st = run_child(sharer, &s);
	ASSERT_TRUE(WIFEXITED(st));
	ASSERT_EQ(WEXITSTATUS(st), 0);
	for (unsigned long i = 0; i < DATA / PAGE; i++) {
		ASSERT_EQ(*(unsigned long *)(p + i * PAGE), 5000 + i);
	}
	/* Beyond the mapped object the region holds nothing: SIGSEGV. */
	pid_t pid = fork();
	if (pid == 0) {
		*(volatile char *)(p + DATA) = 1;
		_exit(0);
	}
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
	ASSERT_SYS(munmap(p, align));
	close(fd);
	ASSERT_SYS(unlink(path));
}

/* A region's PTEs exist once: a process that maps and touches the whole
 * object does not grow its own page tables by the object's PTE pages. */
TEST(page_tables_are_shared)
{
	char path[128];
	int fd, st;
	int pipefd[2];

	NEED_MSHAREFS();
	fd = make_region(path, sizeof(path));
	ASSERT_SYS(fd);
	ASSERT_SYS(pipe(pipefd));
	long pt_before = mt_meminfo_kb("PageTables");
	pid_t kids[8];
	for (int k = 0; k < 8; k++) {
		kids[k] = fork();
		if (kids[k] == 0) {
			long before = mt_proc_kb("/proc/self/status", "VmPTE");
			char *p = map_region(fd, PROT_READ | PROT_WRITE);
			long sum = 0;

			if (!p)
				_exit(11);
			for (unsigned long i = 0; i < DATA / PAGE; i++)
				sum += p[i * PAGE];
			/* 64 MiB of 4 KiB pages: 128 KiB of PTE pages if private. */
			long grew = mt_proc_kb("/proc/self/status", "VmPTE") - before;
			char c;
			if (read(pipefd[0], &c, 1) != 1) /* hold the mapping */
				_exit(13);
			_exit(sum == 0 && grew < 32 ? 0 : 12);
		}
		ASSERT_GT(kids[k], 0);
	}
	/* Each holds its mapping until told to exit. */
	for (int k = 0; k < 8; k++) {
		ASSERT_EQ(write(pipefd[1], "x", 1), 1);
	}
	for (int k = 0; k < 8; k++) {
		ASSERT_EQ(waitpid(kids[k], &st, 0), kids[k]);
		EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	TH_LOG("PageTables before %ld kB, after 8 sharers exited %ld kB", pt_before, mt_meminfo_kb("PageTables"));
	close(pipefd[0]);
	close(pipefd[1]);
	close(fd);
	ASSERT_SYS(unlink(path));
}

/* The series' util selftest: objects mapped and unmapped with the ioctls;
 * an access after MSHAREFS_UNMAP is SIGSEGV in every sharer. */
TEST(unmap_ioctl_removes_the_object_for_every_sharer)
{
	char path[128];
	int fd, st;
	char *p;

	NEED_MSHAREFS();
	fd = make_region(path, sizeof(path));
	ASSERT_SYS(fd);
	p = map_region(fd, PROT_READ | PROT_WRITE);
	ASSERT_TRUE(p != NULL);
	memset(p, 7, DATA);
	struct mshare_unmap mu = { .region_offset = 0, .size = DATA };
	struct mshare_unmap bad = { .region_offset = 0, .size = 2 * align };
	EXPECT_ERRNO(ioctl(fd, MSHAREFS_UNMAP, &bad), EINVAL);
	ASSERT_SYS(ioctl(fd, MSHAREFS_UNMAP, &mu));
	pid_t pid = fork();
	if (pid == 0) {
		(void)*(volatile char *)p;
		_exit(0);
	}
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
	/* Mapped again: fresh zero pages. */
	ASSERT_SYS(map_anon(fd, 0, DATA, PROT_READ | PROT_WRITE));
	EXPECT_EQ(p[0], 0);
	EXPECT_EQ(p[DATA - 1], 0);
	ASSERT_SYS(munmap(p, align));
	close(fd);
	ASSERT_SYS(unlink(path));
}

/* A region of two alignment units: the process's entries for both slots
 * go with munmap (a stale second entry would still reach the host's pages). */
TEST(munmap_unlinks_every_slot)
{
	char path[128];
	int fd, st;
	char *p;

	NEED_MSHAREFS();
	region_path(path, sizeof(path), "two");
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	ASSERT_SYS(fd);
	ASSERT_SYS(ftruncate(fd, (off_t)(2 * align)));
	ASSERT_SYS(map_anon(fd, 0, PAGE, PROT_READ | PROT_WRITE));
	ASSERT_SYS(map_anon(fd, align, PAGE, PROT_READ | PROT_WRITE));
	pid_t pid = fork();
	if (pid == 0) {
		void *q = mmap(NULL, 2 * align, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

		if (q == MAP_FAILED)
			_exit(11);
		p = q;
		p[0] = 1;
		p[align] = 2;
		if (munmap(q, 2 * align) != 0)
			_exit(12);
		(void)*(volatile char *)(p + align);	/* must be SIGSEGV */
		_exit(13);
	}
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
	p = mmap(NULL, 2 * align, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_TRUE(p != MAP_FAILED);
	EXPECT_EQ(p[0], 1);
	EXPECT_EQ(p[align], 2);
	ASSERT_SYS(munmap(p, 2 * align));
	close(fd);
	ASSERT_SYS(unlink(path));
}

static void ro_writer(void *a)
{
	const char *path = a;
	int fd = open(path, O_RDONLY);
	char *p;

	if (fd < 0)
		_exit(10);
	p = map_region(fd, PROT_READ);
	if (!p)
		_exit(11);
	if (p[0] != 9)
		_exit(12);
	p[0] = 1;	/* must be SIGSEGV */
	_exit(0);
}

TEST(read_only_mapping_cannot_write)
{
	char path[128];
	int fd, st;
	char *p;

	NEED_MSHAREFS();
	fd = make_region(path, sizeof(path));
	ASSERT_SYS(fd);
	p = map_region(fd, PROT_READ | PROT_WRITE);
	ASSERT_TRUE(p != NULL);
	p[0] = 9;	/* the page is present and writable in the host */
	st = run_child(ro_writer, path);
	if (!(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV))
		TH_LOG("read-only writer: wait status 0x%x (exit 10 open, 11 mmap, 12 read, 0 wrote)", st);
	EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
	EXPECT_EQ(p[0], 9);
	ASSERT_SYS(munmap(p, align));
	close(fd);
	ASSERT_SYS(unlink(path));
}

TEST(fork_child_and_exit_keep_the_region)
{
	char path[128];
	int fd, st;
	char *p;

	NEED_MSHAREFS();
	fd = make_region(path, sizeof(path));
	ASSERT_SYS(fd);
	p = map_region(fd, PROT_READ | PROT_WRITE);
	ASSERT_TRUE(p != NULL);
	p[PAGE] = 3;
	pid_t pid = fork();
	if (pid == 0) {	/* inherits the mapping; its first touch links the tables */
		if (p[PAGE] != 3)
			_exit(12);
		p[2 * PAGE] = 4;
		_exit(0);
	}
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(WEXITSTATUS(st), 0);
	EXPECT_EQ(p[2 * PAGE], 4);
	/* Unlinked while mapped: still there for the mapper. */
	ASSERT_SYS(unlink(path));
	close(fd);
	EXPECT_EQ(p[PAGE], 3);
	ASSERT_SYS(munmap(p, align));
	EXPECT_ERRNO(open(path, O_RDWR), ENOENT);
}

/* Series v3 patch 17: the creator owns the region; when it exits the
 * region's objects are unmapped (an access through another process's
 * mapping is SIGSEGV) and nothing can be mapped in it or of it any more. */
TEST(owner_exit_unmaps_the_region)
{
	char path[128];
	int topar[2], tokid[2], st, fd;
	char c;

	NEED_MSHAREFS();
	ASSERT_SYS(pipe(topar));
	ASSERT_SYS(pipe(tokid));
	region_path(path, sizeof(path), "owner");
	pid_t owner = fork();
	if (owner == 0) {
		int rfd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);

		if (rfd < 0 || ftruncate(rfd, (off_t)align) != 0 ||
		    map_anon(rfd, 0, DATA, PROT_READ | PROT_WRITE) != 0)
			_exit(11);
		if (write(topar[1], "c", 1) != 1 || read(tokid[0], &c, 1) != 1)
			_exit(12);
		_exit(0);	/* the owner exits, its descriptor with it */
	}
	ASSERT_GT(owner, 0);
	ASSERT_EQ(read(topar[0], &c, 1), 1);
	fd = open(path, O_RDWR);
	ASSERT_SYS(fd);
	char *p = map_region(fd, PROT_READ | PROT_WRITE);
	ASSERT_TRUE(p != NULL);
	p[PAGE] = 7;
	EXPECT_EQ(p[PAGE], 7);
	ASSERT_EQ(write(tokid[1], "x", 1), 1);
	ASSERT_EQ(waitpid(owner, &st, 0), owner);
	ASSERT_TRUE(WIFEXITED(st));
	ASSERT_EQ(WEXITSTATUS(st), 0);
	pid_t pid = fork();
	if (pid == 0)
		_exit(p[PAGE] == 7 ? 1 : 2);
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	mt_log_status("reader after the owner exited", st);
	EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
	EXPECT_TRUE(mmap(NULL, align, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED && errno == EINVAL);
	EXPECT_ERRNO(map_anon(fd, 0, PAGE, PROT_READ), EINVAL);
	ASSERT_SYS(munmap(p, align));
	close(fd);
	ASSERT_SYS(unlink(path));
	close(topar[0]);
	close(topar[1]);
	close(tokid[0]);
	close(tokid[1]);
}

/* The series' memory selftest: a region has no transparent huge pages. */
TEST(region_has_no_thp)
{
	char path[128];
	int fd;
	char *p;

	NEED_MSHAREFS();
	long before = mt_meminfo_kb("ShmemPmdMapped");
	if (before < 0)
		SKIP(return, "no ShmemPmdMapped in /proc/meminfo (no THP)");
	fd = make_region(path, sizeof(path));
	ASSERT_SYS(fd);
	p = map_region(fd, PROT_READ | PROT_WRITE);
	ASSERT_TRUE(p != NULL);
	madvise(p, DATA, MADV_HUGEPAGE);
	memset(p, 1, DATA);
	EXPECT_EQ(mt_meminfo_kb("ShmemPmdMapped"), before);
	ASSERT_SYS(munmap(p, align));
	close(fd);
	ASSERT_SYS(unlink(path));
}

MSHARE_TEST_MAIN
