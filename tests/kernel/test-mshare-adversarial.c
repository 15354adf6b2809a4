// SPDX-License-Identifier: GPL-2.0
/*
 * Attacks on the mshare port (issue 14): each test reproduces one way an
 * unprivileged user or a misbehaving sharer could crash the kernel, leak
 * memory across processes, write where it may not, hang, or remove what is
 * not its own, and asserts the exact outcome the fixed kernel gives (errno
 * values, the data each side sees, the signal a faulting process gets).
 * Every test ends by checking that the kernel log gained no BUG, Oops or
 * WARNING.
 *
 * Unprivileged steps run in a child as uid/gid 65534 ("nobody").
 */
#include <dirent.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <linux/fs.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "mshare-test.h"

#define PAGE		4096UL
#define NOBODY		65534
#ifndef MPOL_BIND
#define MPOL_BIND	2
#endif
#ifndef MPOL_PREFERRED
#define MPOL_PREFERRED	1
#endif

FIXTURE(attack)
{
	unsigned long unit;
	unsigned long addr;
	char name[64];
	int created;		/* this process may still hold the name */
	int kmsg;
	int frozen;		/* 1 + the fd of a file system this test froze */
};

FIXTURE_SETUP(attack)
{
	self->kmsg = -1;
	MT_SETUP_REGION(self, 2, "adv");
	self->kmsg = mt_kmsg_open();
	if (self->kmsg < 0)
		TH_LOG("no /dev/kmsg: the kernel log is not checked");
}

FIXTURE_TEARDOWN(attack)
{
	/* never leave a file system frozen, even after a failed ASSERT */
	if (self->frozen)
		ioctl(self->frozen - 1, FITHAW, 0);
	if (self->created)
		mshare_unlink(self->name);
	if (self->kmsg >= 0) {
		EXPECT_EQ(mt_kmsg_problems(self->kmsg), 0);
	}
}

struct nobody_args {
	int (*fn)(void *);
	void *arg;
};

static int as_nobody_main(void *arg)
{
	const struct nobody_args *a = arg;

	if (setgid(NOBODY) != 0 || setuid(NOBODY) != 0)
		return 90;
	return a->fn(a->arg);
}

/* Runs fn(arg) in a child as uid/gid nobody; returns the wait status. */
static int run_as_nobody(int (*fn)(void *), void *arg)
{
	struct nobody_args a = { fn, arg };

	return mt_run_child(as_nobody_main, &a);
}

static int exit_code(int status)
{
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int killed_by(int status, int sig)
{
	return WIFSIGNALED(status) && WTERMSIG(status) == sig;
}

/* Creates the fixture's region over what is mapped at self->addr. */
static void create_region(struct __test_metadata *_metadata, FIXTURE_DATA(attack) *self,
			  int oflag, mode_t mode)
{
	ASSERT_SYS(mshare(self->name, self->addr, self->unit, O_CREAT | O_EXCL | oflag, mode));
	self->created = 1;
}

static void *map_shared_anon(unsigned long addr, size_t len, int prot)
{
	return mmap((void *)addr, len, prot, MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
		    -1, 0);
}

/* Maps `pages` pages of shared anonymous memory filled with c at the
 * fixture's address and creates the region over them (O_RDWR, 0600). */
static char *donate_filled(struct __test_metadata *_metadata, FIXTURE_DATA(attack) *self,
			   unsigned long pages, char c)
{
	char *p = map_shared_anon(self->addr, pages * PAGE, PROT_READ | PROT_WRITE);

	ASSERT_NE(p, MAP_FAILED);
	memset(p, c, pages * PAGE);
	create_region(_metadata, self, O_RDWR, 0600);
	return p;
}

/* The test's own mshare_unlink() of its region, which must work. */
static void unlink_region(struct __test_metadata *_metadata, FIXTURE_DATA(attack) *self)
{
	ASSERT_SYS(mshare_unlink(self->name));
	self->created = 0;
}

/* Runs fn in a sharer attached with oflag (mt_run_sharer), which must exit
 * 0; who names it in the log. */
static void sharer_exits_0(struct __test_metadata *_metadata, const char *name, int oflag,
			   mt_child_fn fn, void *arg, const char *who)
{
	int status = mt_run_sharer(name, oflag, fn, arg);

	mt_log_status(who, status);
	EXPECT_EQ(exit_code(status), 0);
}

/* The region over 16 pages of 'D', a sharer attached with oflag that runs
 * fn and must exit 0, then the test's own unlink. */
static void share_16_pages(struct __test_metadata *_metadata, FIXTURE_DATA(attack) *self, int oflag,
			   mt_child_fn fn)
{
	donate_filled(_metadata, self, 16, 'D');
	sharer_exits_0(_metadata, self->name, oflag, fn, NULL, "sharer");
	unlink_region(_metadata, self);
}

/* ---- 1. private memory cannot be donated (it BUG()ed the kernel) ---- */

struct private_args {
	unsigned long addr, unit;
	char name[96], heap_name[112];
};

static int donate_private_as_nobody(void *arg)
{
	struct private_args *a = arg;
	char *p, *heap;

	p = mmap((void *)a->addr, 2 * PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED)
		return 10;
	memset(p, 'P', 2 * PAGE);
	MT_CHILD_ERRNO(mshare(a->name, a->addr, a->unit, O_CREAT | O_EXCL | O_RDWR, 0600), EINVAL, 11,
		       "mshare of touched private anonymous memory");
	/* Still the caller's ordinary private memory. */
	if (p[0] != 'P' || p[2 * PAGE - 1] != 'P')
		return 12;
	if (mprotect(p, PAGE, PROT_READ) != 0)
		return 13;
	/* Slot 0 holds the program and its heap: private mappings too. */
	heap = malloc(1 << 16);
	if (!heap)
		return 14;
	memset(heap, 'H', 1 << 16);
	MT_CHILD_ERRNO(mshare(a->heap_name, 0, a->unit, O_CREAT | O_EXCL | O_RDWR, 0600), EINVAL, 15,
		       "mshare(name, 0, %lu) over the program and its heap", a->unit);
	if (heap[0] != 'H' || heap[(1 << 16) - 1] != 'H')
		return 16;
	free(heap);
	heap = malloc(1 << 20);		/* the heap still grows */
	if (!heap)
		return 17;
	memset(heap, 'h', 1 << 20);
	free(heap);
	if (mt_file_exists(a->name) || mt_file_exists(a->heap_name))
		return 18;
	return 0;
}

TEST_F(attack, private_memory_donation_is_einval_as_nobody)
{
	struct private_args a = { .addr = self->addr, .unit = self->unit };
	int status;

	snprintf(a.name, sizeof(a.name), "%s", self->name);
	snprintf(a.heap_name, sizeof(a.heap_name), "%s-heap", self->name);
	status = run_as_nobody(donate_private_as_nobody, &a);
	mt_log_status("unprivileged donor", status);
	EXPECT_EQ(exit_code(status), 0);
}

/* ---- 2. the host copy of a VMA holds its own mempolicy reference ---- */

static long mbind_node0(void *addr, unsigned long len, int mode)
{
	unsigned long nodemask = 1;

	return syscall(SYS_mbind, addr, len, mode, &nodemask, 8 * sizeof(nodemask), 0);
}

static int read_region_byte(const struct mshare_info *info, void *arg)
{
	(void)arg;
	return *(volatile char *)info->start == 'M' ? 0 : 20;
}

TEST_F(attack, mbind_policy_survives_donation)
{
	char cmdline[1024] = "";
	char *p, *spare;
	FILE *f;

	f = fopen("/proc/cmdline", "r");
	if (f) {
		if (!fgets(cmdline, sizeof(cmdline), f))
			cmdline[0] = '\0';
		fclose(f);
	}
	/* Without SLUB poisoning of numa_policy, a freed policy that is put
	 * again leaves no trace. */
	if (!strstr(cmdline, "slub_debug") || !strstr(cmdline, "numa_policy"))
		SKIP(return, "kernel booted without slub_debug=...,numa_policy (cmdline: %.100s)",
		     cmdline);

	p = map_shared_anon(self->addr, 16 * PAGE, PROT_READ | PROT_WRITE);
	ASSERT_NE(p, MAP_FAILED);
	if (mbind_node0(p, 4 * PAGE, MPOL_BIND) != 0 && errno == ENOSYS)
		SKIP(return, "no NUMA policy support (mbind: ENOSYS)");
	ASSERT_SYS(mbind_node0(p, 4 * PAGE, MPOL_BIND));
	ASSERT_SYS(mbind_node0(p + 8 * PAGE, 4 * PAGE, MPOL_PREFERRED));
	memset(p, 'M', 16 * PAGE);
	create_region(_metadata, self, O_RDWR, 0600);
	sharer_exits_0(_metadata, self->name, O_RDONLY, read_region_byte, NULL, "consumer");
	/* The donor's VMAs go (each puts its policy), then the host's. */
	unlink_region(_metadata, self);
	EXPECT_FALSE(mt_file_exists(self->name));

	/* New policies reuse the freed objects: SLUB checks their poison. */
	spare = mmap(NULL, 64 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(spare, MAP_FAILED);
	for (int i = 0; i < 64; i += 2)
		EXPECT_SYS(mbind_node0(spare + i * PAGE, PAGE, i % 4 ? MPOL_BIND : MPOL_PREFERRED));
	munmap(spare, 64 * PAGE);
}

/* ---- 3. an O_RDONLY sharer cannot write through GUP ---- */

static int write_proc_self_mem(const struct mshare_info *info, void *arg)
{
	int fd;

	(void)arg;
	if (*(volatile char *)info->start != 'D')
		return 20;
	fd = open("/proc/self/mem", O_RDWR);
	if (fd < 0)
		return 21;
	MT_CHILD_ERRNO(pwrite(fd, "XXXX", 4, (off_t)info->start), EIO, 22,
		       "O_RDONLY sharer: pwrite to /proc/self/mem at the region");
	close(fd);
	return 0;
}

TEST_F(attack, rdonly_sharer_cannot_write_through_proc_self_mem)
{
	char *p = map_shared_anon(self->addr, 2 * PAGE, PROT_READ | PROT_WRITE);

	ASSERT_NE(p, MAP_FAILED);
	create_region(_metadata, self, O_RDWR, 0600);
	memset(p, 'D', 2 * PAGE);	/* writable entries in the host's tables */
	sharer_exits_0(_metadata, self->name, O_RDONLY, write_proc_self_mem, NULL, "read-only sharer");
	EXPECT_EQ(memcmp(p, "DDDD", 4), 0);
}

static const char *block_device(void)
{
	return access("/dev/pmem0", R_OK) == 0 ? "/dev/pmem0" : NULL;
}

static int odirect_read_into_region(const struct mshare_info *info, void *arg)
{
	int fd;

	(void)arg;
	if (*(volatile char *)info->start != 'D')
		return 20;
	fd = open(block_device(), O_RDONLY | O_DIRECT);
	if (fd < 0)
		return 21;
	MT_CHILD_ERRNO(pread(fd, (void *)info->start, PAGE, 0), EFAULT, 22,
		       "O_RDONLY sharer: O_DIRECT read into the region");
	close(fd);
	return 0;
}

TEST_F(attack, rdonly_sharer_cannot_odirect_read_into_region)
{
	char *p;

	if (!block_device())
		SKIP(return, "no block device (/dev/pmem0) for an O_DIRECT read");
	p = map_shared_anon(self->addr, 2 * PAGE, PROT_READ | PROT_WRITE);
	ASSERT_NE(p, MAP_FAILED);
	create_region(_metadata, self, O_RDWR, 0600);
	memset(p, 'D', 2 * PAGE);
	sharer_exits_0(_metadata, self->name, O_RDONLY, odirect_read_into_region, NULL, "read-only sharer");
	EXPECT_EQ(p[0], 'D');
	EXPECT_EQ(p[PAGE - 1], 'D');
}

/* ---- 4. no private page may land in a shared slot's tables ---- */

/*
 * A sharer forked before anything is mapped in the range (a child forked
 * later would inherit the donor's private mappings there): on 'g' it
 * attaches read-only and reads the region's first byte, then on 'p' the
 * byte at region + *offset, replying 'r' and that byte, unless the read
 * kills it.
 */
static int peek_peer(struct mt_peer *p, const struct mshare_info *region, void *offset)
{
	mt_reply(p, *(volatile char *)region->start);
	if (mt_next(p) != 'p')
		return 11;
	mt_reply(p, 'r');
	mt_reply(p, *(volatile char *)(region->start + *(unsigned long *)offset));
	return 0;
}

/* Asks the peer to read the hole; returns its wait status. */
static int peek_hole(struct mt_peer *peer)
{
	int c = mt_ask(peer, 'p');

	if (c == 'r') {
		c = mt_recv(peer);
		mt_log("sharer read '%c' (0x%02x) in a hole of the region", c > 32 && c < 127 ? c : '?',
		       c & 0xff);
	}
	return mt_finish(peer);
}

/* The set-up of the hole tests: a sharer that will peek at region + *offset
 * (peek_peer), a one-page region of 'D' that it has read. Returns the
 * region's page. */
static char *region_with_peeker(struct __test_metadata *_metadata, FIXTURE_DATA(attack) *self,
				struct mt_peer *peer, unsigned long *offset)
{
	char *p;

	ASSERT_SYS(mt_spawn_sharer(peer, self->name, O_RDONLY, peek_peer, offset));
	p = map_shared_anon(self->addr, PAGE, PROT_READ | PROT_WRITE);
	ASSERT_NE(p, MAP_FAILED);
	p[0] = 'D';
	create_region(_metadata, self, O_RDWR, 0600);
	EXPECT_EQ(*(volatile char *)p, 'D');	/* the donor uses the host's tables */
	ASSERT_EQ(mt_ask(peer, 'g'), 'D');
	return p;
}

/* The end of the hole tests: the sharer's read of the hole kills it by SIGBUS. */
static void expect_hole_sigbus(struct __test_metadata *_metadata, struct mt_peer *peer, const char *what)
{
	int status = peek_hole(peer);

	if (!killed_by(status, SIGBUS))
		mt_log_status(what, status);
	EXPECT_TRUE(killed_by(status, SIGBUS));
}

TEST_F(attack, mremap_into_shared_slot_is_einval)
{
	unsigned long hole = 1UL << 30;
	struct mt_peer peer;
	char *q, *r;

	region_with_peeker(_metadata, self, &peer, &hole);
	q = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(q, MAP_FAILED);
	strcpy(q, "private");
	errno = 0;
	r = mremap(q, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)(self->addr + hole));
	EXPECT_TRUE(r == MAP_FAILED && errno == EINVAL);
	if (r != MAP_FAILED)
		TH_LOG("mremap of a private page into the shared slot succeeded");
	else
		EXPECT_STREQ(q, "private");	/* left where it was */
	expect_hole_sigbus(_metadata, &peer, "sharer reading the hole");
}

static sigjmp_buf segv_jmp;

static void on_segv(int sig)
{
	(void)sig;
	siglongjmp(segv_jmp, 1);
}

TEST_F(attack, stack_growth_into_shared_slot_is_refused)
{
	const unsigned long stack_len = 16 * PAGE;
	unsigned long last_page = self->unit - PAGE;
	unsigned long slot_end = self->addr + self->unit;
	struct sigaction sa = { .sa_handler = on_segv }, old;
	volatile int grew = 0;
	struct mt_peer peer;
	char *stack;

	region_with_peeker(_metadata, self, &peer, &last_page);

	/* A stack right above the shared slot, in the next (unshared) one. */
	stack = mmap((void *)slot_end, stack_len, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_GROWSDOWN | MAP_FIXED_NOREPLACE, -1, 0);
	ASSERT_NE(stack, MAP_FAILED);
	stack[0] = 's';
	sigemptyset(&sa.sa_mask);
	ASSERT_SYS(sigaction(SIGSEGV, &sa, &old));
	if (sigsetjmp(segv_jmp, 1) == 0) {
		*(volatile char *)(slot_end - PAGE) = 'S';	/* grows into the slot */
		grew = 1;
	}
	sigaction(SIGSEGV, &old, NULL);
	EXPECT_FALSE(grew);
	if (grew)
		TH_LOG("the stack grew into the shared slot");

	expect_hole_sigbus(_metadata, &peer, "sharer reading below the stack");
	munmap(stack, stack_len);
}

/* ---- 5. mlock of a region whose file is not DAX returns, and so do later calls ---- */

/* True when dir is a 9p mount (statfs() reports the server's file system type). */
static int is_9p_mount(const char *dir)
{
	char line[512], mnt[256], type[64];
	FILE *f = fopen("/proc/mounts", "r");
	int found = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %255s %63s", mnt, type) == 2 && !strcmp(mnt, dir))
			found = !strcmp(type, "9p");
	fclose(f);
	return found;
}

static int mlock_then_mmap(const struct mshare_info *info, void *arg)
{
	const char *name = arg;
	void *m;

	if (mlock((void *)info->start, 16 * PAGE) != 0) {
		mt_log("mlock of the region: %s", strerror(errno));
		return 20;
	}
	/* A later mmap needs this mm's lock for writing. */
	m = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 21;
	munmap(m, PAGE);
	for (unsigned long i = 0; i < 16; i++)
		if (*(volatile char *)(info->start + i * PAGE) != (char)('a' + i))
			return 22;
	if (mshare_unlink(name) != 0)
		return 23;
	return 0;
}

TEST_F_TIMEOUT(attack, mlock_of_page_cache_region_returns, 120)
{
	char path[256], buf[PAGE];
	void *p;
	int fd;

	/* A file system whose pages are read through the page cache with
	 * I/O (so that a fault can drop the mmap lock and retry): the 9p
	 * results share with cache=none, where nothing is cached yet. */
	if (!is_9p_mount("/out"))
		SKIP(return, "/out is not a 9p mount (no page-cache file system without DAX)");
	snprintf(path, sizeof(path), "/out/.kt-mlock-%d", (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	ASSERT_SYS(fd);
	for (int i = 0; i < 16; i++) {
		memset(buf, 'a' + i, sizeof(buf));
		ASSERT_EQ(write(fd, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	}
	close(fd);
	fd = open(path, O_RDONLY);
	ASSERT_SYS(fd);
	p = mmap((void *)self->addr, 16 * PAGE, PROT_READ, MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
	close(fd);
	unlink(path);
	ASSERT_NE(p, MAP_FAILED);
	create_region(_metadata, self, O_RDONLY, 0600);
	sharer_exits_0(_metadata, self->name, O_RDONLY, mlock_then_mmap, self->name, "sharer");
	unlink_region(_metadata, self);
	EXPECT_FALSE(mt_file_exists(self->name));
}

/* ---- 6. writing where the donor mapped read-only is SIGSEGV, not a fault loop ---- */

struct poke_args {
	unsigned long offset;
	int write;
};

static int poke_region(const struct mshare_info *info, void *arg)
{
	struct poke_args *a = arg;

	if (*(volatile char *)info->start != 'D')
		return 20;
	if (a->write)
		*(volatile char *)(info->start + a->offset) = 'W';
	else
		(void)*(volatile char *)(info->start + a->offset);
	return 1;
}

TEST_F_TIMEOUT(attack, access_beyond_donor_protection_is_sigsegv, 90)
{
	struct poke_args ro_anon = { 16 * PAGE, 1 };
	struct poke_args ro_memfd = { 32 * PAGE, 1 };
	struct poke_args none = { 48 * PAGE, 0 };
	char *p, *ro, *mf;
	int fd, status;

	p = map_shared_anon(self->addr, PAGE, PROT_READ | PROT_WRITE);
	ASSERT_NE(p, MAP_FAILED);
	p[0] = 'D';
	ro = map_shared_anon(self->addr + ro_anon.offset, PAGE, PROT_READ);
	ASSERT_NE(ro, MAP_FAILED);
	fd = memfd_create("kt-ro", 0);
	ASSERT_SYS(fd);
	ASSERT_EQ(pwrite(fd, "m", 1, 0), 1);
	ASSERT_SYS(ftruncate(fd, PAGE));
	mf = mmap((void *)(self->addr + ro_memfd.offset), PAGE, PROT_READ,
		  MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
	close(fd);
	ASSERT_NE(mf, MAP_FAILED);
	ASSERT_NE(map_shared_anon(self->addr + none.offset, PAGE, PROT_NONE), MAP_FAILED);
	(void)*(volatile char *)ro;		/* entries present in the host */
	EXPECT_EQ(*(volatile char *)mf, 'm');
	create_region(_metadata, self, O_RDWR, 0600);

	status = mt_run_sharer(self->name, O_RDWR, poke_region, &ro_anon);
	mt_log_status("O_RDWR sharer writing the donor's PROT_READ anonymous memory", status);
	EXPECT_TRUE(killed_by(status, SIGSEGV));
	status = mt_run_sharer(self->name, O_RDWR, poke_region, &ro_memfd);
	mt_log_status("O_RDWR sharer writing the donor's PROT_READ memfd mapping", status);
	EXPECT_TRUE(killed_by(status, SIGSEGV));
	status = mt_run_sharer(self->name, O_RDWR, poke_region, &none);
	mt_log_status("O_RDWR sharer reading the donor's PROT_NONE mapping", status);
	EXPECT_TRUE(killed_by(status, SIGSEGV));
	EXPECT_EQ(*(volatile char *)mf, 'm');
}

/* ---- 7. names ---- */

TEST_F(attack, unlinked_name_can_be_created_again)
{
	for (int round = 0; round < 3; round++) {
		int oflag = O_CREAT | O_RDWR | (round == 1 ? 0 : O_EXCL);

		ASSERT_NE(map_shared_anon(self->addr, PAGE, PROT_READ | PROT_WRITE), MAP_FAILED);
		ASSERT_SYS(mshare(self->name, self->addr, self->unit, oflag, 0600));
		self->created = 1;
		EXPECT_TRUE(mt_file_exists(self->name));
		ASSERT_SYS(mshare_unlink(self->name));
		self->created = 0;
		EXPECT_FALSE(mt_file_exists(self->name));
		/* Without O_CREAT the name is simply not there. */
		EXPECT_ERRNO(mshare(self->name, self->addr, self->unit, O_RDWR, 0), ENOENT);
	}
}

TEST_F(attack, bad_names_are_refused)
{
	static char long256[257], long4000[4001], long255[256];
	const struct { const char *name; int err; } bad[] = {
		{ long256, ENAMETOOLONG }, { long4000, ENAMETOOLONG },
		{ "a/b", EINVAL }, { "../x", EINVAL }, { ".", EINVAL }, { "..", EINVAL },
		{ "x\n", EINVAL }, { "tab\there", EINVAL }, { "", ENOENT },
	};
	int dots = 0, dotdots = 0;
	struct dirent *de;
	DIR *dir;

	memset(long256, 'n', 256);
	memset(long4000, 'n', 4000);
	memset(long255, 'k', 255);
	ASSERT_NE(map_shared_anon(self->addr, PAGE, PROT_READ | PROT_WRITE), MAP_FAILED);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		int r = mshare(bad[i].name, self->addr, self->unit, O_CREAT | O_EXCL | O_RDWR, 0600);
		int e = errno;

		if (r != -1 || e != bad[i].err)
			TH_LOG("mshare(\"%.20s%s\" (%zu bytes)): %d, %s; want %s", bad[i].name,
			       strlen(bad[i].name) > 20 ? "..." : "", strlen(bad[i].name), r,
			       r ? strerror(e) : "success", strerror(bad[i].err));
		EXPECT_TRUE(r == -1 && e == bad[i].err);
		EXPECT_ERRNO(mshare_unlink(bad[i].name), bad[i].err);
	}
	/* Nothing was donated: the range is still an ordinary mapping. */
	EXPECT_SYS(mprotect((void *)self->addr, PAGE, PROT_READ));
	EXPECT_SYS(mprotect((void *)self->addr, PAGE, PROT_READ | PROT_WRITE));

	dir = opendir(MSHARE_FS_DIR);
	ASSERT_TRUE(dir != NULL);
	while ((de = readdir(dir)) != NULL) {
		dots += !strcmp(de->d_name, ".");
		dotdots += !strcmp(de->d_name, "..");
		EXPECT_TRUE(strchr(de->d_name, '\n') == NULL);
	}
	closedir(dir);
	EXPECT_EQ(dots, 1);
	EXPECT_EQ(dotdots, 1);

	/* NAME_MAX bytes is fine. */
	EXPECT_SYS(mshare(long255, self->addr, self->unit, O_CREAT | O_EXCL | O_RDWR, 0600));
	EXPECT_TRUE(mt_file_exists(long255));
	EXPECT_SYS(mshare_unlink(long255));
	EXPECT_FALSE(mt_file_exists(long255));
}

/* ---- 8. ownership and permissions ---- */

static int unlink_as_nobody(void *arg)
{
	errno = 0;
	if (mshare_unlink(arg) == 0)
		return 1;
	return errno == EPERM ? 0 : 2;
}

static int create_and_unlink_as_nobody(void *arg)
{
	struct private_args *a = arg;

	if (map_shared_anon(a->addr, PAGE, PROT_READ | PROT_WRITE) == MAP_FAILED)
		return 10;
	if (mshare(a->name, a->addr, a->unit, O_CREAT | O_EXCL | O_RDWR, 0600) != 0) {
		mt_log("nobody: mshare(O_CREAT): %s", strerror(errno));
		return 11;
	}
	if (mshare_unlink(a->name) != 0)
		return 12;
	return mt_file_exists(a->name) ? 13 : 0;
}

TEST_F(attack, unlink_of_another_users_region_is_eperm)
{
	struct private_args a = { .addr = self->addr, .unit = self->unit };
	struct stat st;
	int status;

	ASSERT_SYS(stat(MSHARE_FS_DIR, &st));
	EXPECT_EQ(st.st_mode & 07777, 01777u);

	ASSERT_NE(map_shared_anon(self->addr, PAGE, PROT_READ | PROT_WRITE), MAP_FAILED);
	create_region(_metadata, self, O_RDWR, 0600);
	/* Nobody maps it now; it persists until its name is unlinked. */
	ASSERT_SYS(munmap((void *)self->addr, self->unit));
	EXPECT_TRUE(mt_file_exists(self->name));

	status = run_as_nobody(unlink_as_nobody, self->name);
	if (exit_code(status) == 1)
		TH_LOG("uid %d removed root's 0600 region", NOBODY);
	EXPECT_EQ(exit_code(status), 0);	/* EPERM */
	EXPECT_TRUE(mt_file_exists(self->name));
	unlink_region(_metadata, self);
	EXPECT_FALSE(mt_file_exists(self->name));

	/* Anyone may create a region of their own and remove it. */
	snprintf(a.name, sizeof(a.name), "%s-nobody", self->name);
	status = run_as_nobody(create_and_unlink_as_nobody, &a);
	mt_log_status("nobody creating its own region", status);
	EXPECT_EQ(exit_code(status), 0);
}

struct attach_args {
	const char *name;
	int oflag;
	int want_errno;		/* 0: must attach */
	struct mshare_info info;	/* given: nobody may not read the file */
};

/* Attaches as nobody: with want_errno, must fail with it; else must attach,
 * see 'R' and (O_RDWR) write 'N'. */
static int attach_as_nobody(void *arg)
{
	struct attach_args *a = arg;
	struct mshare_info info = a->info;

	errno = 0;
	if (mshare(a->name, info.start, info.size, a->oflag, 0) != 0) {
		if (a->want_errno && errno == a->want_errno)
			return 0;
		mt_log("nobody: mshare(%s): %s", (a->oflag & O_ACCMODE) == O_RDWR ? "O_RDWR" :
		       "O_RDONLY", strerror(errno));
		return 11;
	}
	if (a->want_errno) {
		mt_log("nobody attached %s; want %s", (a->oflag & O_ACCMODE) == O_RDWR ?
		       "O_RDWR" : "O_RDONLY", strerror(a->want_errno));
		return 12;
	}
	if (*(volatile char *)info.start != 'R')
		return 13;
	if ((a->oflag & O_ACCMODE) == O_RDWR)
		*(volatile char *)info.start = 'N';
	return 0;
}

TEST_F(attack, attach_checks_the_callers_permission_on_the_file)
{
	const struct { mode_t mode; int oflag, want_errno; } cases[] = {
		{ 0644, O_RDWR, EACCES },
		{ 0644, O_RDONLY, 0 },
		{ 0600, O_RDONLY, EACCES },
		{ 0666, O_RDWR, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned long addr = mt_region(self->unit, 8 + (int)i);
		struct attach_args a = { NULL, cases[i].oflag, cases[i].want_errno,
					 { addr, self->unit } };
		char name[96], path[256];
		struct stat st;
		int status;
		char *p;

		snprintf(name, sizeof(name), "%s-%zu", self->name, i);
		a.name = name;
		p = map_shared_anon(addr, PAGE, PROT_READ | PROT_WRITE);
		ASSERT_NE(p, MAP_FAILED);
		p[0] = 'R';
		ASSERT_SYS(mshare(name, addr, self->unit, O_CREAT | O_EXCL | O_RDWR, cases[i].mode));
		/* The file carries the read and write bits of mode. */
		mt_path(path, sizeof(path), name);
		EXPECT_SYS(stat(path, &st));
		EXPECT_EQ(st.st_mode & 0777, cases[i].mode);
		status = run_as_nobody(attach_as_nobody, &a);
		if (exit_code(status) != 0)
			TH_LOG("case %zu: mode %04o, %s", i, (unsigned)cases[i].mode,
			       cases[i].oflag == O_RDWR ? "O_RDWR" : "O_RDONLY");
		mt_log_status("nobody", status);
		EXPECT_EQ(exit_code(status), 0);
		if (!cases[i].want_errno && cases[i].oflag == O_RDWR) {
			EXPECT_EQ(p[0], 'N');
		} else {
			EXPECT_EQ(p[0], 'R');
		}
		EXPECT_SYS(mshare_unlink(name));
		EXPECT_FALSE(mt_file_exists(name));
	}
}

/* ---- 10. mshare_unlink unmaps the region and nothing else ---- */

TEST_F(attack, unlink_leaves_other_mappings_in_the_range_alone)
{
	unsigned long addr = mt_region(self->unit, 4);	/* 2 units */
	unsigned char vec;
	char *q;

	ASSERT_NE(map_shared_anon(addr, PAGE, PROT_READ | PROT_WRITE), MAP_FAILED);
	ASSERT_NE(map_shared_anon(addr + self->unit, PAGE, PROT_READ | PROT_WRITE), MAP_FAILED);
	ASSERT_SYS(mshare(self->name, addr, 2 * self->unit, O_CREAT | O_EXCL | O_RDWR, 0600));
	self->created = 1;
	*(volatile char *)(addr + self->unit) = 'D';
	/* The second slot's shared VMA goes; the slot is the caller's again. */
	ASSERT_SYS(munmap((void *)(addr + self->unit), PAGE));
	q = mmap((void *)(addr + self->unit + 4 * PAGE), PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	ASSERT_NE(q, MAP_FAILED);
	q[0] = 'Q';
	unlink_region(_metadata, self);
	EXPECT_FALSE(mt_file_exists(self->name));
	/* The first slot's shared VMA is gone, the private page is not. */
	EXPECT_ERRNO(mincore((void *)addr, PAGE, &vec), ENOMEM);
	EXPECT_SYS(mincore(q, PAGE, &vec));
	if (mincore(q, PAGE, &vec) == 0) {
		EXPECT_EQ(q[0], 'Q');
	}
	munmap(q, PAGE);
}

/* ---- 10b. a donated VMA across a slot boundary ----
 * Unmapping a sharer's VMA must forget the sharer's entries in every slot
 * (PGDIR_SIZE) the VMA touches. They were cleared stepping one slot size
 * from the VMA's start, not from its slot's start, so for a donated VMA
 * from the end of one slot into the start of the next the second slot's
 * entry stayed, pointing into the host mm's tables: a private page the
 * donor mapped there afterwards was installed in the host's tables (every
 * sharer saw it), and once the region went the entry pointed at a freed
 * page table (KASAN use-after-free in internal_get_user_pages_fast and
 * "kernel BUG at include/linux/mm.h:794" under fuzz-mshare on the debug
 * kernel). */

struct donor_private_args {
	const char *name;
	unsigned long q;
};

/* In a child of the donor: drops its copy of the donor's private page at
 * q, attaches to the region and reads q, a hole of the region: SIGBUS from
 * the fault handler; 30 when it reads the donor's private byte, 31 any
 * other byte, 32 when munmap() failed (or mt_attach()'s exit code). */
static int read_donor_private(void *arg)
{
	const struct donor_private_args *a = arg;
	struct mshare_info info;
	char c;
	int rc;

	if (munmap((void *)a->q, PAGE) != 0)
		return 32;
	rc = mt_attach(NULL, a->name, O_RDONLY, &info);
	if (rc)
		return rc;
	c = *(volatile char *)a->q;
	mt_log("sharer: read %#x at %#lx, the donor's private page", c, a->q);
	return c == 'Q' ? 30 : 31;
}

TEST_F(attack, unmapping_a_donated_vma_across_slots_forgets_both_slots)
{
	unsigned long addr = mt_region(self->unit, 20);	/* 2 units */
	unsigned long edge = addr + self->unit, q;
	unsigned char vec;
	char *v;
	int status;

	/* One VMA: the last page of the first slot and the first of the next */
	v = map_shared_anon(edge - PAGE, 2 * PAGE, PROT_READ | PROT_WRITE);
	ASSERT_NE(v, MAP_FAILED);
	v[0] = 'D';
	v[PAGE] = 'E';
	ASSERT_SYS(mshare(self->name, addr, 2 * self->unit, O_CREAT | O_EXCL | O_RDWR, 0600));
	self->created = 1;
	/* The donor's entries for both slots now point at the host's tables */
	EXPECT_EQ(*(volatile char *)(edge - PAGE), 'D');
	EXPECT_EQ(*(volatile char *)edge, 'E');
	ASSERT_SYS(munmap(v, 2 * PAGE));
	/* A private page of the donor in the second slot, in a hole of the
	 * region, within the 2 MiB the host's page table for edge covers */
	q = (unsigned long)mmap((void *)(edge + 4 * PAGE), PAGE, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	ASSERT_NE((void *)q, MAP_FAILED);
	*(volatile char *)q = 'Q';
	status = mt_run_child(read_donor_private, &(struct donor_private_args){ self->name, q });
	mt_log_status("sharer reading the donor's private page in a hole of the region", status);
	EXPECT_TRUE(killed_by(status, SIGBUS));
	/* The region goes with its name; the donor's page stays its own */
	unlink_region(_metadata, self);
	EXPECT_SYS(mincore((void *)q, PAGE, &vec));
	EXPECT_EQ(*(volatile char *)q, 'Q');
	EXPECT_SYS(munmap((void *)q, PAGE));
}

/* ---- 10c. the OOM reaper leaves the region's entries alone ----
 * The OOM reaper (and process_mrelease(2), which runs it on a dying
 * process) unmaps the private mappings of the victim's mm with an
 * mmu_gather of that mm. A sharer's VMA is a private placeholder whose
 * vm_mm is the host mm, so the reaper zapped the host's entries: every
 * sharer's pages, counted against the victim's counters (a negative
 * MM_SHMEMPAGES: "BUG: Bad rss-counter state" when its mm went) and
 * flushed from the victim's CPUs only. The reaper needs a victim whose mm
 * outlives its death: here a sibling sharing the sharer's mm (CLONE_VM)
 * blocked in a write to a frozen file system. */

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_process_mrelease
#define SYS_process_mrelease 448
#endif

struct reap_args {
	const char *name;
	int go;		/* the sibling waits on this for its write */
	int ready;	/* the sharer reports the sibling's pid here */
	int file;	/* a file on the file system the test freezes */
};

/* The sibling: shares the sharer's mm; blocks in a write once told. */
static int blocked_writer(void *arg)
{
	struct reap_args *a = arg;
	char c;

	if (read(a->go, &c, 1) != 1)
		return 1;
	return write(a->file, "x", 1) == 1 ? 0 : 2;
}

/* The sharer: attaches, reads the region's pages (the host's entries are
 * then present), starts the sibling in its mm, reports the sibling's pid
 * and waits to be killed. */
static int attach_and_clone(struct reap_args *a)
{
	static char stack[64 * 1024] __attribute__((aligned(16)));
	struct mshare_info info;
	int rc = mt_attach(NULL, a->name, O_RDONLY, &info);
	pid_t sib;

	if (rc)
		return rc;
	for (unsigned long i = 0; i < 16; i++)
		if (*(volatile char *)(info.start + i * PAGE) != 'D')
			return 40;
	sib = clone(blocked_writer, stack + sizeof(stack), CLONE_VM | SIGCHLD, a);
	if (sib < 0)
		return 41;
	if (write(a->ready, &sib, sizeof(sib)) != (ssize_t)sizeof(sib))
		return 42;
	for (;;)
		pause();
}

/* 'S' (D) or 'D' ... : the state letter of pid, or 0. */
static char proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

TEST_F_TIMEOUT(attack, oom_reaper_leaves_the_region_alone, 90)
{
	struct reap_args a = { self->name, -1, -1, -1 };
	int go[2], ready[2], fsfd, status, i;
	char path[128], *p;
	pid_t sharer, sib = -1;
	long rc;
	int pidfd;

	fsfd = open("/mnt/pmem", O_RDONLY | O_DIRECTORY);
	if (fsfd < 0)
		SKIP(return, "no /mnt/pmem to freeze: %s", strerror(errno));
	p = donate_filled(_metadata, self, 16, 'D');
	snprintf(path, sizeof(path), "/mnt/pmem/kt-reap-%d", (int)getpid());
	a.file = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ASSERT_SYS(a.file);
	ASSERT_SYS(pipe(go));
	ASSERT_SYS(pipe(ready));
	a.go = go[0];
	a.ready = ready[1];
	/* the sibling is reparented here when the sharer dies */
	ASSERT_SYS(prctl(PR_SET_CHILD_SUBREAPER, 1));
	sharer = fork();
	ASSERT_SYS(sharer);
	if (sharer == 0)
		_exit(attach_and_clone(&a));
	ASSERT_EQ(read(ready[0], &sib, sizeof(sib)), (ssize_t)sizeof(sib));
	pidfd = (int)syscall(SYS_pidfd_open, sib, 0);
	ASSERT_SYS(pidfd);
	/* Freeze, let the sibling write: it blocks (D) holding the mm */
	ASSERT_SYS(ioctl(fsfd, FIFREEZE, 0));
	self->frozen = 1 + fsfd;
	ASSERT_EQ(write(go[1], "g", 1), 1);
	for (i = 0; i < 1000 && proc_state(sib) != 'D'; i++)
		usleep(10000);
	EXPECT_EQ(proc_state(sib), 'D');
	ASSERT_SYS(kill(sharer, SIGKILL));
	ASSERT_EQ(waitpid(sharer, &status, 0), sharer);
	ASSERT_SYS(kill(sib, SIGKILL));
	/* The sharer's mm, now only the dying sibling's: reap it */
	rc = syscall(SYS_process_mrelease, pidfd, 0);
	if (rc != 0)
		TH_LOG("process_mrelease: %s", strerror(errno));
	EXPECT_EQ(rc, 0);
	ASSERT_SYS(ioctl(fsfd, FITHAW, 0));
	self->frozen = 0;
	EXPECT_EQ(waitpid(sib, &status, 0), sib);
	EXPECT_TRUE(killed_by(status, SIGKILL));
	/* The region is intact for its owner */
	for (i = 0; i < 16; i++)
		EXPECT_EQ(p[i * PAGE], 'D');
	/* Let the mm go (a CPU in lazy TLB mode may hold it a while): the
	 * fixture's teardown reads the kernel log */
	usleep(300000);
	prctl(PR_SET_CHILD_SUBREAPER, 0);
	close(pidfd);
	close(fsfd);
	close(a.file);
	unlink(path);
	close(go[0]); close(go[1]); close(ready[0]); close(ready[1]);
	unlink_region(_metadata, self);
}

/* ---- 11. smaps, mbind and mlock of a sharer stay off the host mm ----
 * A sharer's VMA has the host mm as vm_mm, whose mmap_lock the sharer does
 * not hold: each of these walked or searched the host mm unlocked (kernel
 * BUG at mmap_lock.h:156 on the debug kernel). */

/* kB value of field in file: in the block of the VMA that starts at start
 * for smaps, anywhere when start is 0 (/proc/self/status); -1 when absent. */
static long proc_self_kb(const char *file, unsigned long start, const char *field)
{
	char line[512];
	size_t flen = strlen(field);
	unsigned long from, to;
	int in = start == 0;
	long v = -1;
	FILE *f = fopen(file, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		/* "from-to perms ..." starts a VMA's block; fields are "Name: v" */
		if (start && sscanf(line, "%lx-%lx ", &from, &to) == 2)
			in = from == start;
		if (in && strncmp(line, field, flen) == 0 && line[flen] == ':') {
			v = strtol(line + flen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

/* Reads a whole /proc file; its size, or -1. */
static long read_all(const char *path)
{
	char buf[4096];
	long total = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -1;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		total += n;
	close(fd);
	return n < 0 ? -1 : total;
}

static int sharer_reads_smaps(const struct mshare_info *info, void *arg)
{
	long rss;

	(void)arg;
	if (*(volatile char *)info->start != 'D')
		return 20;
	/* Listed, with no pages: they are the host's (region's), not this
	 * process's, as the host's page tables are not in its VmPTE. */
	rss = proc_self_kb("/proc/self/smaps", info->start, "Rss");
	if (rss != 0) {
		mt_log("sharer: smaps Rss of the region at %#lx: %ld kB, want 0", info->start, rss);
		return 21;
	}
	if (read_all("/proc/self/smaps_rollup") <= 0)
		return 22;
	if (access("/proc/self/numa_maps", F_OK) == 0 && read_all("/proc/self/numa_maps") <= 0)
		return 23;
	if (*(volatile char *)(info->start + PAGE) != 'D')
		return 24;
	return 0;
}

TEST_F(attack, sharer_smaps_lists_region_without_pages)
{
	share_16_pages(_metadata, self, O_RDONLY, sharer_reads_smaps);
}

static int sharer_mbinds_region(const struct mshare_info *info, void *arg)
{
	char *q;

	(void)arg;
	q = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (q == MAP_FAILED)
		return 20;
	if (mbind_node0(q, PAGE, MPOL_BIND) != 0)
		return errno == ENOSYS ? 77 : 21;	/* mbind itself works */
	MT_CHILD_ERRNO(mbind_node0((void *)info->start, 4 * PAGE, MPOL_BIND), EINVAL, 22,
		       "sharer: mbind over the region");
	/* The whole VMA (no split needed, which the region refuses anyway). */
	MT_CHILD_ERRNO(mbind_node0((void *)info->start, info->size, MPOL_PREFERRED), EINVAL, 23,
		       "sharer: mbind of the whole region");
	/* The region still works, read and write. */
	if (*(volatile char *)info->start != 'D')
		return 24;
	*(volatile char *)(info->start + PAGE) = 'S';
	return 0;
}

TEST_F(attack, sharer_mbind_over_region_is_einval)
{
	char *p;
	int status;

	p = donate_filled(_metadata, self, 16, 'D');
	status = mt_run_sharer(self->name, O_RDWR, sharer_mbinds_region, NULL);
	mt_log_status("sharer", status);
	if (exit_code(status) == 77) {
		mshare_unlink(self->name);
		self->created = 0;
		SKIP(return, "no NUMA policy support (mbind: ENOSYS)");
	}
	EXPECT_EQ(exit_code(status), 0);
	EXPECT_EQ(p[PAGE], 'S');
	unlink_region(_metadata, self);
}

static int sharer_mlocks_past_region(const struct mshare_info *info, void *arg)
{
	unsigned long end;
	char *q;

	(void)arg;
	end = info->start + info->size;
	q = mmap((void *)end, PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (q == MAP_FAILED)
		return 20;
	if (proc_self_kb("/proc/self/status", 0, "VmLck") != 0)
		return 21;
	/* The shared VMA is skipped (patch 0019), the page after it is
	 * locked: the range is walked in this mm, not the host's. */
	if (mlock((void *)(end - PAGE), 2 * PAGE) != 0) {
		mt_log("sharer: mlock across the region's end: %s, want success", strerror(errno));
		return 22;
	}
	if (proc_self_kb("/proc/self/status", 0, "VmLck") != PAGE / 1024) {
		mt_log("sharer: VmLck %ld kB after mlock, want %lu",
		       proc_self_kb("/proc/self/status", 0, "VmLck"), PAGE / 1024);
		return 23;
	}
	if (munlock((void *)(end - PAGE), 2 * PAGE) != 0) {
		mt_log("sharer: munlock across the region's end: %s, want success", strerror(errno));
		return 24;
	}
	if (proc_self_kb("/proc/self/status", 0, "VmLck") != 0)
		return 25;
	if (*(volatile char *)info->start != 'D')
		return 26;
	return 0;
}

TEST_F(attack, sharer_mlock_past_region_locks_the_rest)
{
	share_16_pages(_metadata, self, O_RDONLY, sharer_mlocks_past_region);
}

/* ---- 12. zaps in the host mm reach the sharers' TLBs (patch 0026) ----
 * The host mm runs on no CPU, so its mm_cpumask is empty: a flush of the
 * host mm (truncate, writeback, reclaim, migration, khugepaged) reached no
 * CPU, and a sharer running on another CPU kept using the freed page.
 * QEMU's TCG keeps a software TLB per vCPU that only a flush on that vCPU
 * (an IPI, a CR3 write, invlpg) empties, so a sharer spinning on one CPU
 * while the donor truncates the file on the other shows it: its next read
 * after the truncate returned must be SIGBUS, not the old data. */

struct tlb_sync {
	volatile int ready;		/* the sharer has the pages in its TLB */
	volatile int truncated;		/* ftruncate() has returned */
	volatile long spins;
};

static int pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static sigjmp_buf bus_jmp;

static void on_bus(int sig)
{
	(void)sig;
	siglongjmp(bus_jmp, 1);
}

struct tlb_args {
	const char *name;
	struct tlb_sync *sync;
	unsigned long pages;
};

/* On CPU 1: attach, read every page, then keep reading them until the
 * donor says the file is truncated; one more read must be SIGBUS. */
static int spin_through_truncate(void *arg)
{
	struct tlb_args *a = arg;
	struct sigaction sa = { .sa_handler = on_bus };
	struct mshare_info info;
	volatile char c = 0;
	int rc;

	if (pin_to_cpu(1) != 0)
		return 70;
	rc = mt_attach(NULL, a->name, O_RDONLY, &info);
	if (rc)
		return rc;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL) != 0)
		return 71;
	if (sigsetjmp(bus_jmp, 1) != 0)
		/* SIGBUS: during the spin only once the truncate started */
		return a->sync->ready ? 0 : 72;
	for (unsigned long i = 0; i < a->pages; i++)
		if (*(volatile char *)(info.start + i * PAGE) != 'T')
			return 73;
	a->sync->ready = 1;
	while (!a->sync->truncated) {
		for (unsigned long i = 0; i < a->pages; i++)
			c = *(volatile char *)(info.start + i * PAGE);
		a->sync->spins++;
	}
	c = *(volatile char *)info.start;
	mt_log("sharer on CPU 1 read '%c' (0x%02x) from a page truncated away on CPU 0: "
	       "a stale TLB entry (want SIGBUS)", c > 32 && c < 127 ? c : '?', c & 0xff);
	return 74;
}

/* Donates len bytes of fd mapped at the fixture's address, lets a sharer
 * on CPU 1 spin on them, truncates fd on CPU 0; the sharer's wait status. */
static int truncate_under_spinning_sharer(FIXTURE_DATA(attack) *self, int fd,
					  unsigned long pages, struct tlb_sync *sync)
{
	struct tlb_args a = { self->name, sync, pages };
	pid_t pid;
	char *p;
	int status;

	p = mmap((void *)self->addr, pages * PAGE, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
	if (p == MAP_FAILED)
		return -1;
	memset(p, 'T', pages * PAGE);
	if (mshare(self->name, self->addr, self->unit, O_CREAT | O_EXCL | O_RDWR, 0600) != 0)
		return -1;
	self->created = 1;
	if (pin_to_cpu(0) != 0)
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
		_exit(spin_through_truncate(&a));
	while (!sync->ready) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;		/* it failed before spinning */
		usleep(1000);
	}
	while (sync->spins < 100)
		usleep(1000);
	if (ftruncate(fd, 0) != 0)
		mt_log("ftruncate: %s", strerror(errno));
	sync->truncated = 1;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return status;
}

static struct tlb_sync *tlb_sync_page(void)
{
	void *s = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return s == MAP_FAILED ? NULL : s;
}

/* The body of both truncate tests, over fd (16 pages of it; closed here):
 * the spinning sharer sees the truncate and exits 0. */
static void expect_truncate_reaches_tlb(struct __test_metadata *_metadata, FIXTURE_DATA(attack) *self, int fd)
{
	struct tlb_sync *sync = tlb_sync_page();
	int status;

	ASSERT_NE(sync, NULL);
	ASSERT_SYS(ftruncate(fd, 16 * PAGE));
	status = truncate_under_spinning_sharer(self, fd, 16, sync);
	close(fd);
	mt_log_status("sharer", status);
	EXPECT_EQ(exit_code(status), 0);
	munmap(sync, PAGE);
}

TEST_F_TIMEOUT(attack, truncate_of_memfd_reaches_a_running_sharers_tlb, 90)
{
	int fd;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs 2 CPUs (one spinning sharer, one truncating donor)");
	fd = memfd_create("kt-tlb", 0);
	ASSERT_SYS(fd);
	expect_truncate_reaches_tlb(_metadata, self, fd);
}

#ifndef STATX_ATTR_DAX
#define STATX_ATTR_DAX 0x00200000
#endif

TEST_F_TIMEOUT(attack, truncate_of_dax_file_reaches_a_running_sharers_tlb, 90)
{
	struct statx stx;
	char path[128];
	int fd;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs 2 CPUs (one spinning sharer, one truncating donor)");
	snprintf(path, sizeof(path), "/mnt/pmem/.kt-tlb-%d", (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		SKIP(return, "no DAX file system on /mnt/pmem (%s: %s)", path, strerror(errno));
	unlink(path);
	if (statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &stx) != 0 ||
	    !(stx.stx_attributes & STATX_ATTR_DAX)) {
		close(fd);
		SKIP(return, "/mnt/pmem files are not DAX");
	}
	expect_truncate_reaches_tlb(_metadata, self, fd);
}

/* ---- 13. the last mmput() of a sharer in another task (patch 0023) ----
 * A /proc/PID/mem reader holds the target's mm for the whole read: when
 * the target dies meanwhile, the reader's mmput() tears the target's mm
 * down in the reader's context.  mshare_vm_close() cleared the region's
 * entries of current->mm, the reader's: a reader that shares the same
 * region lost its top-level entry (and faulted it back on its next
 * access), while the dying mm kept its own. */

struct mmput_sync {
	volatile int reading;		/* the reader is inside its pread() */
	volatile int read_done;		/* its pread() returned */
	volatile unsigned long victim_buf;
};

struct mmput_args {
	const char *name;
	struct mmput_sync *sync;
	size_t len;
};

/* Whether this process's page tables map addr (bit 63 of its pagemap
 * entry): 1, 0, or -1 when pagemap cannot be read.  Reading it faults
 * nothing in. */
static int page_present(unsigned long addr)
{
	uint64_t e;
	int fd = open("/proc/self/pagemap", O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pread(fd, &e, sizeof(e), (off_t)(addr / PAGE * sizeof(e)));
	close(fd);
	return n == (ssize_t)sizeof(e) ? (int)(e >> 63) : -1;
}

/* The victim: a sharer with a large private buffer for the reader to read. */
static int mmput_victim(struct mt_peer *p, void *arg)
{
	struct mmput_args *a = arg;
	struct mshare_info info;
	char *buf;
	int rc = mt_attach(NULL, a->name, O_RDONLY, &info);

	if (rc)
		return rc;
	if (*(volatile char *)info.start != 'D')
		return 20;
	buf = mmap(NULL, a->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return 21;
	memset(buf, 'v', a->len);
	a->sync->victim_buf = (unsigned long)buf;
	mt_reply(p, 'r');
	for (;;)
		pause();
}

/* The reader: shares the region too; reads the victim's buffer through
 * /proc/PID/mem, then checks it still has its own entry for the region
 * (no fault on a page it had touched). */
static int mmput_reader(struct mt_peer *p, const struct mshare_info *region, void *arg)
{
	struct mmput_args *a = arg;
	struct mshare_info info = *region;
	char path[64], *buf;
	int fd, pid;
	ssize_t n;

	if (*(volatile char *)info.start != 'D')
		return 20;
	if (page_present(info.start) != 1)
		return 25;	/* pagemap does not show the region's page */
	pid = mt_next(p) << 24;
	pid |= mt_next(p) << 16;
	pid |= mt_next(p) << 8;
	pid |= mt_next(p);
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY);
	buf = malloc(a->len);
	if (fd < 0 || !buf)
		return 21;
	memset(buf, 0, a->len);
	mt_reply(p, 'o');
	a->sync->reading = 1;
	n = pread(fd, buf, a->len, (off_t)a->sync->victim_buf);
	a->sync->read_done = 1;
	close(fd);
	if (n <= 0 || buf[0] != 'v')
		return 22;
	/* The victim's mm is gone now, torn down by this task if it died
	 * during the read.  This task's entry for the region must be intact. */
	if (page_present(info.start) != 1) {
		mt_log("reader: the region's page is no longer in its page tables: its "
		       "entry was cleared by the victim's teardown");
		return 24;
	}
	if (*(volatile char *)info.start != 'D')
		return 23;
	return 0;
}

TEST_F_TIMEOUT(attack, last_mmput_in_a_reader_leaves_the_readers_entries, 240)
{
	struct mmput_sync *sync;
	struct mmput_args a = { .name = self->name };
	int hit = 0, status;

	donate_filled(_metadata, self, 16, 'D');
	sync = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(sync, MAP_FAILED);
	a.sync = sync;
	/* Bigger reads until the victim dies while the reader is still in
	 * its pread() (the reader then holds the last reference). */
	for (int round = 0; round < 4 && !hit; round++) {
		struct mt_peer victim, reader;
		siginfo_t si;
		pid_t vpid;

		memset(sync, 0, sizeof(*sync));
		a.len = (size_t)(16UL << 20) << round;
		ASSERT_SYS(mt_spawn_sharer(&reader, a.name, O_RDONLY, mmput_reader, &a));
		ASSERT_SYS(mt_spawn(&victim, mmput_victim, &a));
		ASSERT_EQ(mt_recv(&victim), 'r');
		vpid = victim.pid;
		ASSERT_EQ(mt_send(&reader, 'g'), 0);
		for (int sh = 24; sh >= 0; sh -= 8) {
			ASSERT_EQ(mt_send(&reader, (vpid >> sh) & 0xff), 0);
		}
		ASSERT_EQ(mt_recv(&reader), 'o');
		while (!sync->reading)
			usleep(100);
		ASSERT_SYS(kill(vpid, SIGKILL));
		/* A zombie has been through exit_mm(). */
		memset(&si, 0, sizeof(si));
		ASSERT_SYS(waitid(P_PID, vpid, &si, WEXITED | WNOWAIT));
		hit = !sync->read_done;
		mt_finish(&victim);
		status = mt_finish(&reader);
		if (exit_code(status) == 22) {
			/* its read started after the victim's mm was gone */
			TH_LOG("round %d: the reader read nothing", round);
			hit = 0;
		} else if (hit) {
			mt_log_status("reader", status);
			EXPECT_EQ(exit_code(status), 0);
		} else {
			mt_log_status("reader", status);
			EXPECT_EQ(exit_code(status), 0);
			TH_LOG("round %d: the reader's %zu MiB read ended before the victim died",
			       round, a.len >> 20);
		}
	}
	munmap(sync, PAGE);
	/* A skip must not hide a failed EXPECT of a round (SKIP marks the
	 * test passed). */
	if (!hit && _metadata->passed)
		SKIP(return, "the victim never died during the reader's read");
}

/* ---- 14. set_mempolicy_home_node() over a shared VMA ----
 * Like mbind(), it changes a VMA's policy through mbind_range(), which
 * merges and splits in vma->vm_mm: for a shared VMA the host mm, whose
 * lock nobody holds.  The donor's VMA keeps the policy it had before
 * mshare(), so the donor reaches that path; it is EINVAL, as mbind(). */

#ifndef SYS_set_mempolicy_home_node
#define SYS_set_mempolicy_home_node 450
#endif

static long home_node0(unsigned long start, unsigned long len)
{
	return syscall(SYS_set_mempolicy_home_node, start, len, 0UL, 0UL);
}

static int sharer_sets_home_node(const struct mshare_info *info, void *arg)
{
	(void)arg;
	MT_CHILD_ERRNO(home_node0(info->start, 16 * PAGE), EINVAL, 20,
		       "sharer: set_mempolicy_home_node over the region");
	if (*(volatile char *)info->start != 'D')
		return 21;
	*(volatile char *)(info->start + PAGE) = 'S';
	return 0;
}

TEST_F(attack, set_mempolicy_home_node_over_region_is_einval)
{
	char *p = map_shared_anon(self->addr, 16 * PAGE, PROT_READ | PROT_WRITE);
	char *q;

	ASSERT_NE(p, MAP_FAILED);
	if (mbind_node0(p, 16 * PAGE, MPOL_BIND) != 0 && errno == ENOSYS)
		SKIP(return, "no NUMA policy support (mbind: ENOSYS)");
	/* The syscall itself works on an ordinary MPOL_BIND mapping. */
	q = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(q, MAP_FAILED);
	ASSERT_SYS(mbind_node0(q, 4 * PAGE, MPOL_BIND));
	if (home_node0((unsigned long)q, 4 * PAGE) != 0 && errno == ENOSYS)
		SKIP(return, "no set_mempolicy_home_node (ENOSYS)");
	ASSERT_SYS(home_node0((unsigned long)q, 4 * PAGE));
	munmap(q, 4 * PAGE);

	memset(p, 'D', 16 * PAGE);
	create_region(_metadata, self, O_RDWR, 0600);
	/* The donor's VMA, which has an MPOL_BIND policy: whole and part. */
	EXPECT_ERRNO(home_node0(self->addr, 16 * PAGE), EINVAL);
	EXPECT_ERRNO(home_node0(self->addr + PAGE, 2 * PAGE), EINVAL);
	EXPECT_EQ(p[0], 'D');
	sharer_exits_0(_metadata, self->name, O_RDWR, sharer_sets_home_node, NULL, "sharer");
	EXPECT_EQ(p[PAGE], 'S');
	unlink_region(_metadata, self);
}

MSHARE_TEST_MAIN
