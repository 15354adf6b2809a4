// SPDX-License-Identifier: GPL-2.0
/*
 * msync() of an mshare'd range really writes the shared data back (patch
 * 0028). A consumer's VMA is an anonymous placeholder whose pages live in
 * the region's host mm: before the patch msync() found no file there and
 * returned 0 having written nothing back.
 *
 * The proof is taken from the device, not from the page cache: the file is
 * on ext4 on the guest's pmem device mounted with dax=never (page cache,
 * real writeback), its blocks are found with FIEMAP and read from
 * /dev/pmem0 with O_DIRECT. /proc/meminfo Dirty must drop by the data's
 * size as well. Periodic writeback is switched off meanwhile
 * (vm.dirty_writeback_centisecs = 0), so nothing but the msync() writes
 * the pages back; the data (32 MiB) is far below the dirty thresholds.
 *
 * The fixture unmounts the DAX filesystem from /mnt/pmem (one block device
 * cannot carry two ext4 mounts with different dax modes, and ext4 refuses
 * to change dax on remount), mounts it with dax=never on its own
 * directory, and mounts it back on /mnt/pmem with -o dax (as the guest's
 * init does) afterwards; the files stay. It needs root and /dev/pmem0: it
 * skips elsewhere.
 *
 * Fixture `inplace` leaves the mounts alone: on a DAX file in /mnt/pmem,
 * msync() writes back by flushing the dirty DAX entries and cleaning them
 * (write-protected again), so the consumer's next write to each page
 * faults once more, which it does not when msync() did nothing; on shared
 * anonymous memory msync() has nothing to do and returns 0.
 *
 * Every 4 KiB page of the test file starts with a 64-bit header derived
 * from its file page index; a consumer flips a fixed bit pattern in every
 * header it writes, so the expected contents of each file page on the
 * device are known whatever virtual address maps it.
 */
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/resource.h>

#include "mshare-test.h"

#ifndef STATX_ATTR_DAX
#define STATX_ATTR_DAX 0x00200000
#endif

#define PAGE		4096UL
#define MiB		(1UL << 20)
#define DATA_SIZE	(32 * MiB)
#define DATA_PAGES	(DATA_SIZE / PAGE)
#define FLIP		0xa5a5a5a55a5a5a5aULL

#define PMEM_DEV	"/dev/pmem0"
#define PMEM_DIR	"/mnt/pmem"
#define NODAX_DIR	"/tmp/kt-nodax"
#define WB_SYSCTL	"/proc/sys/vm/dirty_writeback_centisecs"

static uint64_t page_header(unsigned long index)
{
	return 0x9e3779b97f4a7c15ULL ^ ((uint64_t)index << 12) ^ index;
}

static int file_is_dax(const char *path)
{
	struct statx stx;

	if (statx(AT_FDCWD, path, 0, STATX_BASIC_STATS, &stx) != 0)
		return -1;
	return (stx.stx_attributes & STATX_ATTR_DAX) != 0;
}

static uint64_t unsalted_header(unsigned long index, uint64_t unused)
{
	(void)unused;
	return page_header(index);
}

/* Writes `size` bytes of header-stamped pages and syncs them to the device
 * (the blocks are allocated and written: FIEMAP then knows them). */
static int write_pattern_file(const char *path, size_t size)
{
	return mt_write_pattern_file(path, size, unsalted_header, 0, 1);
}

/*
 * The header of each of the first `pages` pages of the file at `path`, as
 * stored on the device: FIEMAP (without FIEMAP_FLAG_SYNC, which would write
 * the file back first) gives each page's block, read from /dev/pmem0 with
 * O_DIRECT (past the block device's own page cache). 0, or -1 with a log.
 */
static int device_headers(const char *path, unsigned long pages, uint64_t *hdr)
{
	const unsigned int max_ext = 256;
	size_t fmsize = sizeof(struct fiemap) + max_ext * sizeof(struct fiemap_extent);
	struct fiemap *fm = calloc(1, fmsize);
	char *buf = NULL;
	unsigned char *seen = calloc(pages, 1);
	int fd = open(path, O_RDONLY), dev = open(PMEM_DEV, O_RDONLY | O_DIRECT);
	int err = -1;

	if (!fm || !seen || fd < 0 || dev < 0 || posix_memalign((void **)&buf, PAGE, MiB)) {
		mt_log("device_headers: set-up failed: %s", strerror(errno));
		goto out;
	}
	fm->fm_start = 0;
	fm->fm_length = pages * PAGE;
	fm->fm_extent_count = max_ext;
	if (ioctl(fd, FS_IOC_FIEMAP, fm) != 0) {
		mt_log("FS_IOC_FIEMAP on %s: %s", path, strerror(errno));
		goto out;
	}
	for (unsigned int e = 0; e < fm->fm_mapped_extents; e++) {
		const struct fiemap_extent *x = &fm->fm_extents[e];

		if (x->fe_flags & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC |
				   FIEMAP_EXTENT_ENCODED | FIEMAP_EXTENT_DATA_INLINE |
				   FIEMAP_EXTENT_NOT_ALIGNED | FIEMAP_EXTENT_UNWRITTEN)) {
			mt_log("extent %u of %s has flags %#x: no plain block to read",
			       e, path, x->fe_flags);
			goto out;
		}
		for (uint64_t off = 0; off < x->fe_length; off += MiB) {
			uint64_t chunk = x->fe_length - off < MiB ? x->fe_length - off : MiB;
			ssize_t n = pread(dev, buf, chunk, (off_t)(x->fe_physical + off));

			if (n != (ssize_t)chunk) {
				mt_log("O_DIRECT read of %s at %llu: %s", PMEM_DEV,
				       (unsigned long long)(x->fe_physical + off),
				       n < 0 ? strerror(errno) : "short read");
				goto out;
			}
			for (uint64_t p = 0; p < chunk; p += PAGE) {
				uint64_t page = (x->fe_logical + off + p) / PAGE;

				if (page < pages) {
					hdr[page] = *(uint64_t *)(buf + p);
					seen[page] = 1;
				}
			}
		}
	}
	for (unsigned long i = 0; i < pages; i++) {
		if (!seen[i]) {
			mt_log("page %lu of %s has no block in the %u extents FIEMAP gave",
			       i, path, fm->fm_mapped_extents);
			goto out;
		}
	}
	err = 0;
out:
	if (dev >= 0)
		close(dev);
	if (fd >= 0)
		close(fd);
	free(buf);
	free(seen);
	free(fm);
	return err;
}

/* How many file pages in [first, last) do not hold on the device what
 * they should: the consumer's data when `written`, else the original. */
static long device_mismatches(const uint64_t *hdr, unsigned long first,
			      unsigned long last, int written)
{
	long bad = 0;

	for (unsigned long i = first; i < last; i++)
		if (hdr[i] != (page_header(i) ^ (written ? FLIP : 0)))
			bad++;
	return bad;
}

/* Dirty + Writeback of /proc/meminfo, in kB */
static long dirty_kb(void)
{
	return mt_meminfo_kb("Dirty") + mt_meminfo_kb("Writeback");
}

/* ---- the consumer ---- */

/* One msync() call, offsets relative to the region's start; want_errno 0
 * means it must succeed. */
struct msync_op {
	unsigned long off, len;
	int flags;
	int want_errno;
};

struct consumer_plan {
	const char *name;
	unsigned long data_len;		/* bytes from the region's start it writes */
	const struct msync_op *ops;
	int nops;
	long *faults;			/* shared with the parent: see 'r' */
};

/*
 * The consumer: 'g' attaches O_RDWR and flips the header of every page of
 * the data (reply 'w', or 'f'); 'r' flips them all again and stores in
 * *plan->faults how many page faults that took (reply 'k'); '0'..'9' runs
 * that msync() of the plan (reply 'k' when its result is the one expected,
 * else 'f'); on EOF it detaches and exits.
 */
static int consumer(struct mt_peer *p, void *arg)
{
	const struct consumer_plan *plan = arg;
	struct mshare_info info = { 0, 0 };
	int c;

	while ((c = mt_next(p)) >= 0) {
		if (c == 'g') {
			if (mt_attach(NULL, plan->name, O_RDWR, &info)) {
				mt_reply(p, 'f');
				continue;
			}
			for (unsigned long off = 0; off < plan->data_len; off += PAGE)
				*(volatile uint64_t *)(info.start + off) ^= FLIP;
			mt_reply(p, 'w');
		} else if (c == 'r' && plan->faults) {
			struct rusage before, after;

			getrusage(RUSAGE_SELF, &before);
			for (unsigned long off = 0; off < plan->data_len; off += PAGE)
				*(volatile uint64_t *)(info.start + off) ^= FLIP;
			getrusage(RUSAGE_SELF, &after);
			*plan->faults = (after.ru_minflt - before.ru_minflt) +
					(after.ru_majflt - before.ru_majflt);
			mt_reply(p, 'k');
		} else if (c >= '0' && c - '0' < plan->nops) {
			const struct msync_op *op = &plan->ops[c - '0'];
			int r, e;

			errno = 0;
			r = msync((void *)(info.start + op->off), op->len, op->flags);
			e = errno;
			if ((op->want_errno == 0 && r == 0) ||
			    (op->want_errno && r == -1 && e == op->want_errno)) {
				mt_reply(p, 'k');
			} else {
				mt_log("consumer: msync(start + %#lx, %#lx, %#x) = %d (%s), expected %s",
				       op->off, op->len, op->flags, r, r ? strerror(e) : "success",
				       op->want_errno ? strerror(op->want_errno) : "success");
				mt_reply(p, 'f');
			}
		} else {
			mt_reply(p, 'f');
		}
	}
	mshare_unlink(plan->name);
	return 0;
}

/* The start of both fixtures' teardowns: the consumer reaped, the region's
 * name and the test's file removed (both fixtures have these fields). */
#define END_REGION(self) do { \
	if ((self)->have_peer) { \
		int status_ = mt_finish(&(self)->peer); \
		if (!mt_exited_ok(status_)) \
			mt_log_status("consumer", status_); \
	} \
	if ((self)->created) \
		EXPECT_SYS(mshare_unlink((self)->name)); \
	if ((self)->path[0]) \
		unlink((self)->path); \
} while (0)

/* ---- the fixture: the pmem filesystem mounted dax=never ---- */

FIXTURE(nodax)
{
	unsigned long unit;
	unsigned long addr;
	char name[64];
	char path[256];
	char old_wb[32];
	int unmounted_pmem;	/* /mnt/pmem was unmounted: mount it back */
	int mounted;		/* NODAX_DIR is mounted */
	int created;
	int have_peer;
	struct mt_peer peer;
	uint64_t hdr[DATA_PAGES];
};

/* The mount point of `dev` in /proc/self/mounts, "" when not mounted. */
static void mount_point_of(const char *dev, char *dir, size_t len)
{
	char src[256], mnt[256], line[1024];
	FILE *f = fopen("/proc/self/mounts", "r");

	dir[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%255s %255s", src, mnt) == 2 && !strcmp(src, dev)) {
			snprintf(dir, len, "%s", mnt);
			break;
		}
	fclose(f);
}

static int write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

FIXTURE_SETUP(nodax)
{
	char where[256];
	int fd;
	ssize_t n;

	MT_SETUP_REGION(self, 16, "msync");
	if (geteuid() != 0)
		SETUP_SKIP("needs root (mounts %s)", PMEM_DEV);
	if (access(PMEM_DEV, R_OK) != 0)
		SETUP_SKIP("no %s (not the benchmark guest)", PMEM_DEV);
	/* A failed ASSERT from here on still runs the teardown, which mounts
	 * /mnt/pmem back for the later tests (the 6.1 harness tears down only
	 * after a setup that completed). */
	_metadata->setup_completed = true;

	mount_point_of(PMEM_DEV, where, sizeof(where));
	if (where[0]) {
		ASSERT_STREQ(where, PMEM_DIR);
		if (umount2(PMEM_DIR, 0) != 0) {
			TH_LOG("umount %s: %s (a file there still open or mapped, e.g. a region another test left?)",
			       PMEM_DIR, strerror(errno));
			ASSERT_SYS(-1);
		}
		self->unmounted_pmem = 1;
	}
	mkdir(NODAX_DIR, 0755);
	ASSERT_SYS(mount(PMEM_DEV, NODAX_DIR, "ext4", 0, "dax=never"));
	self->mounted = 1;
	snprintf(self->path, sizeof(self->path), "%s/kt-msync-%d", NODAX_DIR, (int)getpid());

	/* Only msync() writes back: no periodic writeback meanwhile. */
	fd = open(WB_SYSCTL, O_RDONLY);
	ASSERT_SYS(fd);
	n = read(fd, self->old_wb, sizeof(self->old_wb) - 1);
	close(fd);
	ASSERT_GT(n, 0);
	self->old_wb[n] = '\0';
	ASSERT_SYS(write_text(WB_SYSCTL, "0"));
}

FIXTURE_TEARDOWN(nodax)
{
	END_REGION(self);
	if (self->old_wb[0])
		EXPECT_SYS(write_text(WB_SYSCTL, self->old_wb));
	if (self->mounted)
		EXPECT_SYS(umount2(NODAX_DIR, 0));
	if (self->unmounted_pmem) {
		char probe[256];
		int fd;

		/* As the guest's init mounts it; later tests need DAX there. */
		EXPECT_SYS(mount(PMEM_DEV, PMEM_DIR, "ext4", 0, "dax"));
		snprintf(probe, sizeof(probe), "%s/.kt-msync-probe", PMEM_DIR);
		fd = open(probe, O_RDWR | O_CREAT | O_TRUNC, 0600);
		EXPECT_SYS(fd);
		if (fd >= 0) {
			EXPECT_EQ(pwrite(fd, "x", 1, 0), 1);
			close(fd);
			EXPECT_EQ(file_is_dax(probe), 1);
			unlink(probe);
		}
	}
}

/*
 * Maps the test file in the region: pieces[i] file offsets (in MiB) of
 * consecutive mappings of `piece` MiB each, from the region's start. Two
 * pieces whose offsets do not follow each other are two host VMAs.
 */
static int donate(FIXTURE_DATA(nodax) *self, const unsigned long *pieces,
		  int npieces, unsigned long piece)
{
	int fd = open(self->path, O_RDWR);

	if (fd < 0)
		return -1;
	for (int i = 0; i < npieces; i++) {
		void *want = (void *)(self->addr + i * piece * MiB);
		void *p = mmap(want, piece * MiB, PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_FIXED_NOREPLACE, fd, (off_t)(pieces[i] * MiB));

		if (p != want) {
			close(fd);
			return -1;
		}
	}
	close(fd);
	if (mshare(self->name, self->addr, self->unit, O_CREAT | O_EXCL | O_RDWR, 0600) != 0)
		return -1;
	self->created = 1;
	return 0;
}

/* Writes the file, donates it as `pieces`, has the consumer flip every page
 * and checks that this dirtied the page cache and nothing reached the
 * device. Returns Dirty+Writeback (kB) after the writes. */
static long prepare(struct __test_metadata *_metadata, FIXTURE_DATA(nodax) *self,
		    struct consumer_plan *plan, const unsigned long *pieces, int npieces,
		    unsigned long piece)
{
	long before, after;

	ASSERT_SYS(write_pattern_file(self->path, DATA_SIZE));
	ASSERT_EQ(file_is_dax(self->path), 0);
	ASSERT_SYS(device_headers(self->path, DATA_PAGES, self->hdr));
	ASSERT_EQ(device_mismatches(self->hdr, 0, DATA_PAGES, 0), 0);
	ASSERT_SYS(donate(self, pieces, npieces, piece));

	plan->name = self->name;
	plan->data_len = DATA_SIZE;
	ASSERT_SYS(mt_spawn(&self->peer, consumer, plan));
	self->have_peer = 1;
	before = dirty_kb();
	ASSERT_EQ(mt_ask(&self->peer, 'g'), 'w');
	after = dirty_kb();
	TH_LOG("Dirty+Writeback %ld kB before the consumer's writes, %ld kB after", before, after);
	/* The writes dirtied the page cache (else the test proves nothing) */
	ASSERT_GE(after - before, (long)(DATA_SIZE / 1024) * 7 / 8);
	ASSERT_SYS(device_headers(self->path, DATA_PAGES, self->hdr));
	ASSERT_EQ(device_mismatches(self->hdr, 0, DATA_PAGES, 0), 0);
	return after;
}

TEST_F_TIMEOUT(nodax, consumer_ms_sync_writes_the_file_back, 600)
{
	static const unsigned long whole[] = { 0 };
	static const struct msync_op ops[] = {
		{ 0, DATA_SIZE, MS_SYNC, 0 },
	};
	struct consumer_plan plan = { .ops = ops, .nops = 1 };
	long dirty, now;

	dirty = prepare(_metadata, self, &plan, whole, 1, DATA_SIZE / MiB);
	ASSERT_EQ(mt_ask(&self->peer, '0'), 'k');
	now = dirty_kb();
	TH_LOG("Dirty+Writeback %ld kB after the consumer's msync(MS_SYNC)", now);
	ASSERT_SYS(device_headers(self->path, DATA_PAGES, self->hdr));
	EXPECT_EQ(device_mismatches(self->hdr, 0, DATA_PAGES, 1), 0);
	EXPECT_GE(dirty - now, (long)(DATA_SIZE / 1024) * 7 / 8);
}

/* The donor's own msync() (its VMAs are windows on the host mm too). */
TEST_F_TIMEOUT(nodax, donor_ms_sync_writes_the_file_back, 600)
{
	static const unsigned long whole[] = { 0 };
	struct consumer_plan plan = { .ops = NULL, .nops = 0 };

	prepare(_metadata, self, &plan, whole, 1, DATA_SIZE / MiB);
	ASSERT_SYS(msync((void *)self->addr, DATA_SIZE, MS_SYNC));
	ASSERT_SYS(device_headers(self->path, DATA_PAGES, self->hdr));
	EXPECT_EQ(device_mismatches(self->hdr, 0, DATA_PAGES, 1), 0);
}

/*
 * The file mapped as two host VMAs in swapped order: region [0, 16M) is
 * file [16M, 32M), region [16M, 32M) is file [0, 16M). msync() of region
 * [8M, 24M) must write back file [24M, 32M) and [0, 8M), each at its own
 * VMA's offsets, and nothing else.
 */
TEST_F_TIMEOUT(nodax, consumer_ms_sync_of_a_part_writes_back_that_part_of_each_host_vma, 600)
{
	static const unsigned long swapped[] = { 16, 0 };
	static const struct msync_op ops[] = {
		{ 8 * MiB, 16 * MiB, MS_SYNC, 0 },
		{ 0, DATA_SIZE, MS_SYNC, 0 },
	};
	struct consumer_plan plan = { .ops = ops, .nops = 2 };
	const unsigned long p8 = 8 * MiB / PAGE, p24 = 24 * MiB / PAGE;

	prepare(_metadata, self, &plan, swapped, 2, 16);
	ASSERT_EQ(mt_ask(&self->peer, '0'), 'k');
	ASSERT_SYS(device_headers(self->path, DATA_PAGES, self->hdr));
	/* file [0, 8M) and [24M, 32M): written back */
	EXPECT_EQ(device_mismatches(self->hdr, 0, p8, 1), 0);
	EXPECT_EQ(device_mismatches(self->hdr, p24, DATA_PAGES, 1), 0);
	/* file [8M, 24M): outside the range, still only in the page cache */
	EXPECT_EQ(device_mismatches(self->hdr, p8, p24, 0), 0);

	ASSERT_EQ(mt_ask(&self->peer, '1'), 'k');
	ASSERT_SYS(device_headers(self->path, DATA_PAGES, self->hdr));
	EXPECT_EQ(device_mismatches(self->hdr, 0, DATA_PAGES, 1), 0);
}

/*
 * The region is one mshare unit (512 GiB) with 32 MiB of data at its
 * start: the rest is a hole, where an access is SIGBUS. A range that runs
 * from the data into the hole, or past the region's end, is partly
 * unmapped: ENOMEM, with the data in it written back (MS_SYNC), as
 * msync() does across a hole between a process's own mappings; MS_ASYNC
 * over a hole fails at once; MS_ASYNC and MS_INVALIDATE over the data
 * alone succeed.
 */
TEST_F_TIMEOUT(nodax, consumer_msync_into_the_hole_is_enomem_and_writes_the_data_back, 600)
{
	static const unsigned long whole[] = { 0 };
	/* filled in below: they depend on the unit */
	static struct msync_op ops[5];
	struct consumer_plan plan = { .ops = ops, .nops = 5 };
	const unsigned long p16 = 16 * MiB / PAGE;

	ops[0] = (struct msync_op){ 16 * MiB, self->unit - 16 * MiB, MS_SYNC, ENOMEM };
	ops[1] = (struct msync_op){ 0, 2 * self->unit, MS_SYNC, ENOMEM };
	ops[2] = (struct msync_op){ 0, DATA_SIZE + PAGE, MS_ASYNC, ENOMEM };
	ops[3] = (struct msync_op){ 0, DATA_SIZE, MS_ASYNC, 0 };
	ops[4] = (struct msync_op){ 0, DATA_SIZE, MS_INVALIDATE, 0 };

	prepare(_metadata, self, &plan, whole, 1, DATA_SIZE / MiB);
	EXPECT_EQ(mt_ask(&self->peer, '0'), 'k');
	ASSERT_SYS(device_headers(self->path, DATA_PAGES, self->hdr));
	EXPECT_EQ(device_mismatches(self->hdr, 0, p16, 0), 0);
	EXPECT_EQ(device_mismatches(self->hdr, p16, DATA_PAGES, 1), 0);

	EXPECT_EQ(mt_ask(&self->peer, '1'), 'k');
	ASSERT_SYS(device_headers(self->path, DATA_PAGES, self->hdr));
	EXPECT_EQ(device_mismatches(self->hdr, 0, DATA_PAGES, 1), 0);
	for (char c = '2'; c <= '4'; c++) {
		EXPECT_EQ(mt_ask(&self->peer, c), 'k');
	}
}

/* ---- no remount: a DAX file and shared anonymous memory ---- */

#define SMALL_SIZE	(4 * MiB)
#define SMALL_PAGES	(SMALL_SIZE / PAGE)

FIXTURE(inplace)
{
	unsigned long unit;
	unsigned long addr;
	char name[64];
	char path[256];
	int created;
	int have_peer;
	struct mt_peer peer;
	long *faults;
};

FIXTURE_SETUP(inplace)
{
	MT_SETUP_REGION(self, 18, "msync-inplace");
	self->faults = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(self->faults, MAP_FAILED);
}

FIXTURE_TEARDOWN(inplace)
{
	END_REGION(self);
}

/* Maps fd (or shared anonymous memory when fd < 0), header-stamped, at the
 * region's start and creates the region. */
static int donate_small(FIXTURE_DATA(inplace) *self, int fd)
{
	void *want = (void *)self->addr;
	char *p = mmap(want, SMALL_SIZE, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_FIXED_NOREPLACE | (fd < 0 ? MAP_ANONYMOUS : 0), fd, 0);

	if (p != want)
		return -1;
	if (madvise(p, SMALL_SIZE, MADV_NOHUGEPAGE) != 0)
		return -1;
	for (unsigned long i = 0; i < SMALL_PAGES; i++)
		*(uint64_t *)(p + i * PAGE) = page_header(i);
	if (mshare(self->name, self->addr, self->unit, O_CREAT | O_EXCL | O_RDWR, 0600) != 0)
		return -1;
	self->created = 1;
	return 0;
}

static long donor_mismatches(const FIXTURE_DATA(inplace) *self)
{
	long bad = 0;

	for (unsigned long i = 0; i < SMALL_PAGES; i++)
		if (*(volatile uint64_t *)(self->addr + i * PAGE) != (page_header(i) ^ FLIP))
			bad++;
	return bad;
}

/*
 * A DAX file: msync() writes back by flushing the CPU caches of the dirty
 * DAX entries and write-protecting them again (dax_writeback_mapping_range
 * -> dax_entry_mkclean, on the host mm's tables). The consumer's next
 * write to each page then faults once more; without the write-back (an
 * msync() that did nothing) it does not.
 */
TEST_F_TIMEOUT(inplace, consumer_ms_sync_of_a_dax_file_cleans_its_entries, 600)
{
	static const struct msync_op ops[] = { { 0, SMALL_SIZE, MS_SYNC, 0 } };
	struct consumer_plan plan = { .ops = ops, .nops = 1 };
	int fd;

	if (access(PMEM_DIR, W_OK) != 0)
		SKIP(return, "no %s (not the benchmark guest)", PMEM_DIR);
	snprintf(self->path, sizeof(self->path), "%s/kt-msync-dax-%d", PMEM_DIR, (int)getpid());
	fd = open(self->path, O_RDWR | O_CREAT | O_EXCL, 0600);
	ASSERT_SYS(fd);
	if (fallocate(fd, 0, 0, SMALL_SIZE) != 0)
		ASSERT_SYS(ftruncate(fd, SMALL_SIZE));
	if (file_is_dax(self->path) != 1) {
		close(fd);
		SKIP(return, "%s is not DAX", self->path);
	}
	ASSERT_SYS(donate_small(self, fd));
	close(fd);

	plan.name = self->name;
	plan.data_len = SMALL_SIZE;
	plan.faults = self->faults;
	ASSERT_SYS(mt_spawn(&self->peer, consumer, &plan));
	self->have_peer = 1;
	ASSERT_EQ(mt_ask(&self->peer, 'g'), 'w');
	/* Writable now: flipping again takes no faults (the check can fail) */
	ASSERT_EQ(mt_ask(&self->peer, 'r'), 'k');
	TH_LOG("second write of %lu pages: %ld faults", SMALL_PAGES, *self->faults);
	ASSERT_LT(*self->faults, (long)SMALL_PAGES / 8);
	ASSERT_EQ(mt_ask(&self->peer, '0'), 'k');
	ASSERT_EQ(mt_ask(&self->peer, 'r'), 'k');
	TH_LOG("write of %lu pages after msync(MS_SYNC): %ld faults", SMALL_PAGES, *self->faults);
	EXPECT_GE(*self->faults, (long)SMALL_PAGES * 7 / 8);
	/* flipped three times */
	EXPECT_EQ(donor_mismatches(self), 0);
}

/* Shared anonymous memory (shmem): nothing to write back, msync() is 0. */
TEST_F_TIMEOUT(inplace, consumer_msync_of_anonymous_memory_is_0, 600)
{
	static const struct msync_op ops[] = {
		{ 0, SMALL_SIZE, MS_SYNC, 0 },
		{ 0, SMALL_SIZE, MS_ASYNC | MS_INVALIDATE, 0 },
	};
	struct consumer_plan plan = { .ops = ops, .nops = 2 };

	ASSERT_SYS(donate_small(self, -1));
	plan.name = self->name;
	plan.data_len = SMALL_SIZE;
	ASSERT_SYS(mt_spawn(&self->peer, consumer, &plan));
	self->have_peer = 1;
	ASSERT_EQ(mt_ask(&self->peer, 'g'), 'w');
	EXPECT_EQ(mt_ask(&self->peer, '0'), 'k');
	EXPECT_EQ(mt_ask(&self->peer, '1'), 'k');
	EXPECT_EQ(donor_mismatches(self), 0);
}

MSHARE_TEST_MAIN
