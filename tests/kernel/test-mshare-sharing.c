// SPDX-License-Identifier: GPL-2.0
/*
 * Page tables really are shared: many consumers of one fully populated
 * region add (almost) no page-table memory, where the same number of plain
 * MAP_SHARED mappings of the same file each build their own PTEs.  And a
 * DAX file on /mnt/pmem placed in a region is shared and reads back intact.
 *
 * Each 4 KiB page of the test files starts with a 64-bit header derived from
 * its index, so every reader checks that it sees the right page, not only
 * some page.
 */
#include <sys/statfs.h>

#include <time.h>

#include "mshare-test.h"

#ifndef STATX_ATTR_DAX
#define STATX_ATTR_DAX 0x00200000
#endif
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

#define PAGE		4096UL
#define MAX_SHARERS	1000

/* 100 sharers of 1 GiB by default; KT_SHARERS and KT_SHARED_MB change them
 * (for a quick look at a slow machine: the figures scale). */
static int sharers = 100;
static unsigned long shared_size = 1UL << 30;

static void read_scale(void)
{
	const char *n = getenv("KT_SHARERS"), *mb = getenv("KT_SHARED_MB");

	if (n && atoi(n) > 0 && atoi(n) <= MAX_SHARERS)
		sharers = atoi(n);
	if (mb && atol(mb) > 0)
		shared_size = (unsigned long)atol(mb) << 20;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}
#define PMEM_DIR	"/mnt/pmem"

static uint64_t page_header(uint64_t salt, unsigned long index)
{
	return (salt * 0x9e3779b97f4a7c15ULL) ^ index;
}

static uint64_t salted_header(unsigned long index, uint64_t salt)
{
	return page_header(salt, index);
}

/* Writes size bytes, every page stamped with its header; 0 or -1/errno. */
static int write_pattern_file(const char *path, size_t size, uint64_t salt)
{
	return mt_write_pattern_file(path, size, salted_header, salt, 0);
}

/* Index of the first page whose header is wrong, or -1 when all are right. */
static long check_pattern(const char *base, size_t size, uint64_t salt)
{
	for (unsigned long i = 0; i < size / PAGE; i++)
		if (*(volatile const uint64_t *)(base + i * PAGE) != page_header(salt, i))
			return (long)i;
	return -1;
}

static int file_is_dax(const char *path)
{
	struct statx stx;

	if (statx(AT_FDCWD, path, 0, STATX_BASIC_STATS, &stx) != 0)
		return 0;
	return (stx.stx_attributes & STATX_ATTR_DAX) != 0;
}

static int dir_is_mountpoint(const char *dir)
{
	struct stat a, b;
	char parent[256];

	snprintf(parent, sizeof(parent), "%s/..", dir);
	return stat(dir, &a) == 0 && stat(parent, &b) == 0 && a.st_dev != b.st_dev;
}

FIXTURE(sharing)
{
	unsigned long unit;
	unsigned long addr;
	char name[64];
	char path[256];
	int created;
};

FIXTURE_SETUP(sharing)
{
	MT_SETUP_REGION(self, 4, "share");
}

FIXTURE_TEARDOWN(sharing)
{
	if (self->created)
		mshare_unlink(self->name);
	if (self->path[0])
		unlink(self->path);
}

/* Plain sharer: on 'g' maps the file MAP_SHARED with 4 KiB PTEs, populates
 * and checks every page, replies 'r' (or 'f'); exits on EOF. */
static int plain_sharer(struct mt_peer *p, void *arg)
{
	const char *path = arg;
	char *base;
	int fd;

	if (mt_next(p) != 'g')
		return 10;
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 11;
	base = mmap(NULL, shared_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (base == MAP_FAILED)
		return 12;
	madvise(base, shared_size, MADV_NOHUGEPAGE);
	madvise(base, shared_size, MADV_POPULATE_READ);	/* faster than faulting */
	mt_reply(p, check_pattern(base, shared_size, 1) < 0 ? 'r' : 'f');
	mt_next(p);
	return 0;
}

/* mshare consumer: on 'g' attaches, checks every page, replies 'r' (or 'f');
 * on 'u' detaches and replies 'u' (or 'e'); exits on EOF. */
static int mshare_sharer(struct mt_peer *p, const struct mshare_info *region, void *name)
{
	mt_reply(p, check_pattern((const char *)region->start, shared_size, 1) < 0 ? 'r' : 'f');
	if (mt_next(p) == 'u')
		mt_reply(p, mshare_unlink(name) == 0 ? 'u' : 'e');
	return 0;
}

/* Lets the peers map and read one after the other (all at once, a hundred
 * processes faulting the same DAX entries mostly wait on each other);
 * returns how many replied 'r'. */
static int go_all(struct mt_peer *peers, int n)
{
	int good = 0;

	for (int i = 0; i < n; i++)
		good += mt_ask(&peers[i], 'g') == 'r';
	return good;
}

static int finish_all(struct mt_peer *peers, int n, const char *who)
{
	int ok = 0;

	for (int i = 0; i < n; i++) {
		int status = mt_finish(&peers[i]);

		if (mt_exited_ok(status))
			ok++;
		else if (ok == i)	/* log the first failure only */
			mt_log_status(who, status);
	}
	return ok;
}

TEST_F_TIMEOUT(sharing, consumers_add_far_less_page_table_than_map_shared, 3000)
{
	static struct mt_peer peers[MAX_SHARERS];
	long one_set_kb, pt0, pt1, plain_kb, mshare_kb;
	int good, dax;
	char *donor;
	double t;
	int fd;

	read_scale();
	one_set_kb = (long)(shared_size / PAGE * 8 / 1024);	/* its PTE pages */
	t = now_s();

	/* The file lives on the DAX filesystem when there is one (its pages
	 * are persistent memory, not RAM), on tmpfs otherwise. */
	snprintf(self->path, sizeof(self->path), "%s/kt-share-%d",
		 dir_is_mountpoint(PMEM_DIR) ? PMEM_DIR : "/dev/shm", (int)getpid());
	ASSERT_SYS(write_pattern_file(self->path, shared_size, 1));
	dax = file_is_dax(self->path);
	TH_LOG("%lu MiB file %s (%s) written in %.1f s", shared_size >> 20, self->path,
	       dax ? "DAX" : "not DAX", now_s() - t);
	t = now_s();

	/* Plain MAP_SHARED: helpers forked first, so that the baseline holds
	 * their own page tables and the delta is the mappings alone. */
	for (int i = 0; i < sharers; i++)
		ASSERT_SYS(mt_spawn(&peers[i], plain_sharer, self->path));
	pt0 = mt_meminfo_kb("PageTables");
	good = go_all(peers, sharers);
	pt1 = mt_meminfo_kb("PageTables");
	plain_kb = pt1 - pt0;
	EXPECT_EQ(good, sharers);
	EXPECT_EQ(finish_all(peers, sharers, "plain sharer"), sharers);
	TH_LOG("%d plain MAP_SHARED sharers done in %.1f s", sharers, now_s() - t);
	t = now_s();

	/* mshare: consumers forked before the region exists. */
	for (int i = 0; i < sharers; i++)
		ASSERT_SYS(mt_spawn_sharer(&peers[i], self->name, O_RDWR, mshare_sharer, self->name));
	fd = open(self->path, O_RDWR);
	ASSERT_SYS(fd);
	donor = mmap((void *)self->addr, shared_size, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
	close(fd);
	ASSERT_NE(donor, MAP_FAILED);
	ASSERT_SYS(madvise(donor, shared_size, MADV_NOHUGEPAGE));
	ASSERT_SYS(mshare(self->name, self->addr, self->unit, O_CREAT | O_EXCL | O_RDWR, 0600));
	self->created = 1;
	/* Fully touched: every page faulted in through the shared tables. */
	ASSERT_EQ(check_pattern(donor, shared_size, 1), -1L);
	pt0 = mt_meminfo_kb("PageTables");
	good = go_all(peers, sharers);
	pt1 = mt_meminfo_kb("PageTables");
	mshare_kb = pt1 - pt0;
	EXPECT_EQ(good, sharers);
	for (int i = 0; i < sharers; i++)
		mt_send(&peers[i], 'u');
	good = 0;
	for (int i = 0; i < sharers; i++)
		good += mt_recv(&peers[i]) == 'u';
	EXPECT_EQ(good, sharers);
	EXPECT_EQ(finish_all(peers, sharers, "mshare consumer"), sharers);
	TH_LOG("donor and %d mshare consumers done in %.1f s", sharers, now_s() - t);

	TH_LOG("PageTables (/proc/meminfo): %d plain MAP_SHARED mappings of the %lu MiB %s file added %ld kB (%ld kB each)",
	       sharers, shared_size >> 20, dax ? "DAX" : "tmpfs", plain_kb, plain_kb / sharers);
	TH_LOG("PageTables (/proc/meminfo): %d mshare consumers of the same file added %ld kB (%ld kB each); one 4 KiB PTE set for it is %ld kB",
	       sharers, mshare_kb, mshare_kb / sharers, one_set_kb);
	/* The comparison means something only if plain mappings used PTEs. */
	EXPECT_GE(plain_kb, sharers * one_set_kb * 9 / 10);
	EXPECT_LT(mshare_kb * 10, plain_kb);
	EXPECT_LT(mshare_kb, sharers * one_set_kb / 8);
}

/* DAX consumer: on 'g' attaches, checks the pattern, stamps page 7 and
 * replies 'w'; on 'c' checks the donor's stamp on page 9 and replies 'k';
 * on 'u' detaches and replies 'u'. */
#define DAX_SIZE	(16UL << 20)
#define STAMP_CONSUMER	0x636f6e73756d6572ULL
#define STAMP_DONOR	0x646f6e6f72212121ULL

static int dax_consumer(struct mt_peer *p, const struct mshare_info *region, void *name)
{
	char *base = (char *)region->start;

	if (check_pattern(base, DAX_SIZE, 2) >= 0)
		return 13;
	*(volatile uint64_t *)(base + 7 * PAGE) = STAMP_CONSUMER;
	mt_reply(p, 'w');
	if (mt_next(p) != 'c')
		return 14;
	mt_reply(p, *(volatile uint64_t *)(base + 9 * PAGE) == STAMP_DONOR ? 'k' : 'f');
	return mt_detach_on_u(p, name);
}

TEST_F(sharing, dax_file_in_region_is_shared_and_reads_back)
{
	struct mt_peer consumer;
	uint64_t word = 0;
	char *donor;
	int fd, status;

	if (!dir_is_mountpoint(PMEM_DIR))
		SKIP(return, "%s is not mounted (guest booted without pmem)", PMEM_DIR);
	snprintf(self->path, sizeof(self->path), "%s/kt-dax-%d", PMEM_DIR, (int)getpid());
	ASSERT_SYS(write_pattern_file(self->path, DAX_SIZE, 2));
	ASSERT_TRUE(file_is_dax(self->path));

	ASSERT_SYS(mt_spawn_sharer(&consumer, self->name, O_RDWR, dax_consumer, self->name));
	fd = open(self->path, O_RDWR);
	ASSERT_SYS(fd);
	donor = mmap((void *)self->addr, DAX_SIZE, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
	ASSERT_NE(donor, MAP_FAILED);
	ASSERT_SYS(mshare(self->name, self->addr, self->unit, O_CREAT | O_EXCL | O_RDWR, 0600));
	self->created = 1;
	EXPECT_EQ(check_pattern(donor, DAX_SIZE, 2), -1L);

	ASSERT_EQ(mt_ask(&consumer, 'g'), 'w');
	/* The consumer's store is in the donor's view and in the file itself. */
	EXPECT_EQ(*(volatile uint64_t *)(donor + 7 * PAGE), STAMP_CONSUMER);
	EXPECT_EQ(pread(fd, &word, sizeof(word), 7 * PAGE), (ssize_t)sizeof(word));
	EXPECT_EQ(word, STAMP_CONSUMER);
	*(volatile uint64_t *)(donor + 9 * PAGE) = STAMP_DONOR;
	EXPECT_EQ(mt_ask(&consumer, 'c'), 'k');
	EXPECT_EQ(mt_ask(&consumer, 'u'), 'u');
	status = mt_finish(&consumer);
	mt_log_status("consumer", status);
	EXPECT_TRUE(mt_exited_ok(status));

	EXPECT_SYS(mshare_unlink(self->name));
	self->created = 0;
	EXPECT_FALSE(mt_file_exists(self->name));

	/* After the region is gone the file reads back: the stamps, and the
	 * original pattern everywhere else. */
	for (unsigned long i = 0; i < DAX_SIZE / PAGE; i++) {
		uint64_t want = i == 7 ? STAMP_CONSUMER : i == 9 ? STAMP_DONOR : page_header(2, i);

		ASSERT_EQ(pread(fd, &word, sizeof(word), i * PAGE), (ssize_t)sizeof(word));
		if (word != want) {
			TH_LOG("page %lu of %s reads %#llx, want %#llx", i, self->path,
			       (unsigned long long)word, (unsigned long long)want);
			EXPECT_EQ(word, want);
			break;
		}
	}
	close(fd);
}

MSHARE_TEST_MAIN
