// SPDX-License-Identifier: GPL-2.0
/*
 * Memory cgroups, swap and THP with msharefs regions on the mshare-2025
 * kernel flavour (Linux 6.12 + kernel/patches-2025; issue 32 item 1).
 *
 * Series v3 patch 17 makes the region's creator its owner, and v3 patch 22
 * (kernel/patches-2025/0008) charges what a fault in the region allocates
 * to the owner's memory cgroup, whoever faults.  Here an owner in one
 * cgroup creates a region holding 16 MiB of anonymous shared memory and a
 * sharer in another cgroup faults all of it in:
 *   charge: the owner's cgroup gets exactly the 16 MiB of shmem and the
 *           region's page tables, the sharer's gets neither (0 bytes);
 *   oom:    with memory.max 4 MiB and memory.swap.max 0 on the owner's
 *           cgroup the owner is OOM-killed, which unmaps the region
 *           (patch 17), and the sharer's access ends in SIGSEGV;
 *   pageout: MADV_PAGEOUT through the sharer's mapping writes the region's
 *           pages to swap (pswpout at least 4096 - 64 pages, the owner's
 *           memory.swap.current up by as much, the sharer's 0), and they
 *           read back intact;
 *   swap:   with memory.max 4 MiB and swap allowed, the sharer writes and
 *           reads back all 16 MiB, the owner's cgroup stays under its limit
 *           by swapping, nobody is OOM-killed.
 * And without cgroups:
 *   thp:    with shmem_enabled=always a 2 MiB shmem object in a region is
 *           mapped by one PMD in the host (ShmemPmdMapped, thp_file_mapped)
 *           and a second process reads it through the region correctly.
 *
 * The memcg cases skip without a memory controller (a kernel without
 * CONFIG_MEMCG: the mshare-2025 keys before the memcg fragment), the swap
 * ones without swap (kernel/vm/run.sh --swap, which the 2025 tiers pass).
 * Counters: memory.stat of cgroup v2 (read after 3 s: the kernel flushes
 * its per-cpu statistics every 2 s and small changes are not flushed on
 * read), memory.events, memory.peak, /proc/vmstat, /proc/meminfo.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "mshare-test.h"
#include "msharefs-uapi.h"
#include "msharefs-test.h"

#define PAGE	4096UL
#define DATA	(16UL << 20)	/* the region's object */
#define LIMIT	(4UL << 20)	/* memory.max of the owner's cgroup in the limit cases */
#define CGROOT	"/sys/fs/cgroup"
#define SHMEM_ENABLED "/sys/kernel/mm/transparent_hugepage/shmem_enabled"

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

static unsigned long align;

/* ---- cgroup v2 files ---- */

static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

static int cg_write(const char *cg, const char *file, const char *val)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	return write_file(path, val);
}

/* A file holding one number ("max" reads as -2), or -1. */
static long long cg_read(const char *cg, const char *file)
{
	char path[256], buf[64] = "";
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	if (strncmp(buf, "max", 3) == 0)
		return -2;
	return strtoll(buf, NULL, 10);
}

/* The value of "key value" lines (memory.stat, memory.events, /proc/vmstat), or -1. */
static long long key_value(const char *path, const char *key)
{
	char line[256];
	size_t klen = strlen(key);
	long long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) == 0 && line[klen] == ' ') {
			v = strtoll(line + klen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

static long long cg_key(const char *cg, const char *file, const char *key)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	return key_value(path, key);
}

static long long vmstat(const char *key)
{
	return key_value("/proc/vmstat", key);
}

/* Moves the calling process into cgroup directory cg. */
static int cg_enter(const char *cg)
{
	return cg_write(cg, "cgroup.procs", "0");
}

static int memcg_available(void)
{
	char buf[256] = "";
	int fd = open(CGROOT "/cgroup.controllers", O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 && strstr(buf, "memory") != NULL;
}

static int map_anon(int fd, unsigned long off, unsigned long size, int prot)
{
	struct mshare_create mc = {
		.region_offset = off, .size = size, .offset = 0, .prot = prot,
		.flags = MAP_SHARED | MAP_FIXED | MAP_ANONYMOUS, .fd = (__u32)-1,
	};

	return ioctl(fd, MSHAREFS_CREATE_MAPPING, &mc);
}

/* ---- the two helper processes ---- */

struct role {
	const char *cg;		/* cgroup directory to enter */
	const char *path;	/* the region */
	unsigned long size;	/* its object */
};

/* The owner: enters its cgroup, creates the region with `size` bytes of
 * anonymous shared memory (touching none of it), replies 'r', then answers
 * 'p' (ping) until 'q' or EOF. */
static int owner_fn(struct mt_peer *p, void *arg)
{
	struct role *r = arg;
	int fd, c;

	if (cg_enter(r->cg))
		return 10;
	fd = open(r->path, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)align) != 0 || map_anon(fd, 0, r->size, PROT_READ | PROT_WRITE) != 0)
		return 11;
	mt_reply(p, 'r');
	while ((c = mt_next(p)) >= 0 && c != 'q')
		mt_reply(p, c);
	return 0;
}

/* The sharer: enters its cgroup, maps the region and replies 'm'; then
 * 'w' writes every page (a word naming it), 'v' checks every page ('v' or
 * 'x' with the mismatches logged), 'o' is MADV_PAGEOUT of the object ('o',
 * or 'e' with errno logged); 'q' or EOF ends it. */
static int sharer_fn(struct mt_peer *p, void *arg)
{
	struct role *r = arg;
	unsigned long n = r->size / PAGE, bad;
	char *m;
	int fd, c;

	if (cg_enter(r->cg))
		return 10;
	fd = open(r->path, O_RDWR);
	if (fd < 0)
		return 11;
	m = mmap(NULL, align, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return 12;
	mt_reply(p, 'm');
	while ((c = mt_next(p)) >= 0 && c != 'q') {
		switch (c) {
		case 'w':
			for (unsigned long i = 0; i < n; i++)
				*(volatile uint64_t *)(m + i * PAGE) = 0x6d656d6367000000ULL + i;
			mt_reply(p, 'w');
			break;
		case 'v':
			bad = 0;
			for (unsigned long i = 0; i < n; i++)
				if (*(volatile uint64_t *)(m + i * PAGE) != 0x6d656d6367000000ULL + i)
					bad++;
			if (bad)
				mt_log("sharer: %lu of %lu pages read back wrong", bad, n);
			mt_reply(p, bad ? 'x' : 'v');
			break;
		case 'o':
			if (madvise(m, r->size, MADV_PAGEOUT) != 0) {
				mt_log("sharer: madvise(MADV_PAGEOUT): %s", strerror(errno));
				mt_reply(p, 'e');
			} else {
				mt_reply(p, 'o');
			}
			break;
		default:
			mt_reply(p, '?');
		}
	}
	return 0;
}

/* ---- fixture: two cgroups, an owner and a sharer ---- */

FIXTURE(memcg) {
	char own[128], shr[128], path[128];
	struct role owner_role, sharer_role;
	struct mt_peer owner, sharer;
	int have_owner, have_sharer;
};

FIXTURE_SETUP(memcg)
{
	static int seq;

	align = read_align();
	if (!align)
		SETUP_SKIP("%s missing: not the mshare-2025 kernel, or msharefs not mounted", MSHAREFS_INFO);
	if (!memcg_available())
		SETUP_SKIP("no memory cgroup controller in " CGROOT "/cgroup.controllers "
			   "(kernel without CONFIG_MEMCG, or cgroup2 not mounted there)");
	/* The guest init enables it; idempotent. */
	write_file(CGROOT "/cgroup.subtree_control", "+memory");
	snprintf(self->own, sizeof(self->own), CGROOT "/kt-own-%d-%d", (int)getpid(), seq);
	snprintf(self->shr, sizeof(self->shr), CGROOT "/kt-shr-%d-%d", (int)getpid(), seq);
	snprintf(self->path, sizeof(self->path), "%s/kt-memcg-%d-%d", MSHAREFS_DIR, (int)getpid(), seq++);
	ASSERT_SYS(mkdir(self->own, 0755));
	ASSERT_SYS(mkdir(self->shr, 0755));
	self->owner_role = (struct role){ self->own, self->path, DATA };
	self->sharer_role = (struct role){ self->shr, self->path, DATA };
}

FIXTURE_TEARDOWN(memcg)
{
	if (self->have_sharer) {
		kill(self->sharer.pid, SIGKILL);
		mt_finish(&self->sharer);
	}
	if (self->have_owner) {
		kill(self->owner.pid, SIGKILL);
		mt_finish(&self->owner);
	}
	unlink(self->path);
	for (int i = 0; i < 50; i++) {
		int a = rmdir(self->own) == 0 || errno == ENOENT;
		int b = rmdir(self->shr) == 0 || errno == ENOENT;

		if (a && b)
			break;
		usleep(100000);
	}
}

/* Starts the owner (region created) and the sharer (region mapped). */
static int start_both(FIXTURE_DATA(memcg) *self)
{
	if (mt_spawn(&self->owner, owner_fn, &self->owner_role))
		return -1;
	self->have_owner = 1;
	if (mt_recv(&self->owner) != 'r')
		return -2;
	if (mt_spawn(&self->sharer, sharer_fn, &self->sharer_role))
		return -3;
	self->have_sharer = 1;
	if (mt_recv(&self->sharer) != 'm')
		return -4;
	return 0;
}

struct cgstat {
	long long shmem, pagetables, anon, file;
};

static void read_stat(const char *cg, struct cgstat *s)
{
	s->shmem = cg_key(cg, "memory.stat", "shmem");
	s->pagetables = cg_key(cg, "memory.stat", "pagetables");
	s->anon = cg_key(cg, "memory.stat", "anon");
	s->file = cg_key(cg, "memory.stat", "file");
}

/* The charge: a sharer in cgroup B faults in the 16 MiB object of a region
 * whose owner is in cgroup A: A is charged the shmem and the region's page
 * tables, B nothing. */
TEST_F_TIMEOUT(memcg, sharer_faults_are_charged_to_the_owners_cgroup, 300)
{
	struct cgstat o0, o1, s0, s1;

	ASSERT_EQ(start_both(self), 0);
	sleep(3);
	read_stat(self->own, &o0);
	read_stat(self->shr, &s0);
	ASSERT_EQ(mt_ask(&self->sharer, 'w'), 'w');
	sleep(3);
	read_stat(self->own, &o1);
	read_stat(self->shr, &s1);
	TH_LOG("owner's cgroup: shmem %+lld, pagetables %+lld, anon %+lld, file %+lld bytes",
	       o1.shmem - o0.shmem, o1.pagetables - o0.pagetables, o1.anon - o0.anon, o1.file - o0.file);
	TH_LOG("sharer's cgroup: shmem %+lld, pagetables %+lld, anon %+lld, file %+lld bytes",
	       s1.shmem - s0.shmem, s1.pagetables - s0.pagetables, s1.anon - s0.anon, s1.file - s0.file);
	ASSERT_GE(o0.shmem, 0);
	EXPECT_EQ(o1.shmem - o0.shmem, (long long)DATA);
	EXPECT_EQ(s1.shmem - s0.shmem, 0);
	/* The host's PTE pages (8 for 16 MiB) and its PMD and PUD pages. */
	EXPECT_GE(o1.pagetables - o0.pagetables, (long long)(DATA / (2UL << 20) * PAGE));
	EXPECT_EQ(s1.pagetables - s0.pagetables, 0);
	EXPECT_EQ(s1.file - s0.file, 0);
	EXPECT_EQ(mt_ask(&self->sharer, 'v'), 'v');
}

/* Counts the kernel log records since fd was opened that contain pat,
 * logging the first few; closes fd. */
static int kmsg_count(int fd, const char *pat, const char *also)
{
	char rec[8192];
	int n = 0, logged = 0;

	if (fd < 0)
		return -1;
	for (;;) {
		ssize_t r = read(fd, rec, sizeof(rec) - 1);

		if (r < 0 && errno == EPIPE)
			continue;
		if (r <= 0)
			break;
		rec[r] = '\0';
		char *msg = strchr(rec, ';');
		char *nl;

		msg = msg ? msg + 1 : rec;
		if ((nl = strchr(msg, '\n')))
			*nl = '\0';
		if (strstr(msg, pat))
			n++;
		if ((strstr(msg, pat) || (also && strstr(msg, also))) && logged++ < 6)
			mt_log("kernel log: %s", msg);
	}
	close(fd);
	return n;
}

/* The limit without swap: the owner's cgroup cannot hold the 16 MiB the
 * sharer faults in; the memcg OOM killer kills the owner (the only task in
 * that cgroup), whose exit unmaps the region, and the sharer's access ends
 * in SIGSEGV. */
TEST_F_TIMEOUT(memcg, owner_limit_without_swap_oom_kills_the_owner, 600)
{
	int st_sharer, st_owner, kfd;
	long long events_oom, events_kill, peak, swapped;

	ASSERT_SYS(cg_write(self->own, "memory.max", "4194304"));
	ASSERT_SYS(cg_write(self->own, "memory.swap.max", "0"));
	ASSERT_EQ(start_both(self), 0);
	kfd = mt_kmsg_open();
	ASSERT_SYS(mt_send(&self->sharer, 'w'));
	/* No reply: the sharer dies in the middle of its writes. */
	EXPECT_EQ(mt_recv(&self->sharer), -1);
	st_sharer = mt_finish(&self->sharer);
	self->have_sharer = 0;
	st_owner = mt_finish(&self->owner);
	self->have_owner = 0;
	events_oom = cg_key(self->own, "memory.events", "oom");
	events_kill = cg_key(self->own, "memory.events", "oom_kill");
	peak = cg_read(self->own, "memory.peak");
	swapped = cg_read(self->own, "memory.swap.current");
	mt_log_status("sharer", st_sharer);
	mt_log_status("owner", st_owner);
	TH_LOG("owner's cgroup: memory.events oom %lld, oom_kill %lld; memory.peak %lld; memory.swap.current %lld",
	       events_oom, events_kill, peak, swapped);
	int leaked = kmsg_count(kfd, "VM_FAULT_OOM leaked out", "out of memory");
	TH_LOG("kernel log: %d \"VM_FAULT_OOM leaked out to the #PF handler\" lines", leaked);
	EXPECT_TRUE(WIFSIGNALED(st_owner) && WTERMSIG(st_owner) == SIGKILL);
	EXPECT_TRUE(WIFSIGNALED(st_sharer) && WTERMSIG(st_sharer) == SIGSEGV);
	EXPECT_EQ(events_kill, 1);
	EXPECT_GE(events_oom, 1);
	EXPECT_LE(peak, (long long)LIMIT);
	EXPECT_EQ(swapped, 0);
}

/* MADV_PAGEOUT through the sharer's mapping: the region's pages go to swap
 * (charged to the owner's cgroup) and read back intact. */
TEST_F_TIMEOUT(memcg, pageout_swaps_region_pages_and_they_read_back, 600)
{
	long long out0, out1, in0, in1, sw0, sw1, shsw;

	if (mt_meminfo_kb("SwapTotal") <= 0)
		SKIP(return, "no swap in the guest (kernel/vm/run.sh --swap MIB)");
	ASSERT_EQ(start_both(self), 0);
	ASSERT_EQ(mt_ask(&self->sharer, 'w'), 'w');
	out0 = vmstat("pswpout");
	sw0 = cg_read(self->own, "memory.swap.current");
	ASSERT_EQ(mt_ask(&self->sharer, 'o'), 'o');
	out1 = vmstat("pswpout");
	sw1 = cg_read(self->own, "memory.swap.current");
	shsw = cg_read(self->shr, "memory.swap.current");
	in0 = vmstat("pswpin");
	EXPECT_EQ(mt_ask(&self->sharer, 'v'), 'v');
	in1 = vmstat("pswpin");
	TH_LOG("pswpout %+lld pages, pswpin %+lld pages (object: %lu pages); owner's memory.swap.current %lld -> %lld, sharer's %lld",
	       out1 - out0, in1 - in0, DATA / PAGE, sw0, sw1, shsw);
	ASSERT_GE(out0, 0);
	/* Nearly every page: MADV_PAGEOUT drains the LRU batches of its own
	 * CPU only, and a few pages the sharer faulted in while running on
	 * the other vCPU may still wait there, not on an LRU (seen: 4083 and
	 * 4096 of 4096).  Every page written out is charged to the owner. */
	EXPECT_GE(out1 - out0, (long long)(DATA / PAGE) - 64);
	EXPECT_LE(out1 - out0, (long long)(DATA / PAGE));
	EXPECT_EQ(sw1 - sw0, (out1 - out0) * (long long)PAGE);
	EXPECT_EQ(shsw, 0);
	/* pswpin may stay 0: right after MADV_PAGEOUT the pages are still in
	 * the swap cache (written back asynchronously), and the read back
	 * finds them there without reading the disk (seen: +0). */
}

/* The limit with swap: the owner's cgroup stays within 4 MiB by swapping,
 * the sharer writes and reads back all 16 MiB, nobody is OOM-killed. */
TEST_F_TIMEOUT(memcg, owner_limit_with_swap_is_met_by_swapping, 600)
{
	long long out0, out1, peak, swapped, events_oom, events_kill, events_max;

	if (mt_meminfo_kb("SwapTotal") <= 0)
		SKIP(return, "no swap in the guest (kernel/vm/run.sh --swap MIB)");
	ASSERT_SYS(cg_write(self->own, "memory.max", "4194304"));
	ASSERT_EQ(start_both(self), 0);
	out0 = vmstat("pswpout");
	EXPECT_EQ(mt_ask(&self->sharer, 'w'), 'w');
	EXPECT_EQ(mt_ask(&self->sharer, 'v'), 'v');
	out1 = vmstat("pswpout");
	peak = cg_read(self->own, "memory.peak");
	swapped = cg_read(self->own, "memory.swap.current");
	events_oom = cg_key(self->own, "memory.events", "oom");
	events_kill = cg_key(self->own, "memory.events", "oom_kill");
	events_max = cg_key(self->own, "memory.events", "max");
	TH_LOG("owner's cgroup: memory.peak %lld, memory.swap.current %lld, events max %lld oom %lld oom_kill %lld; pswpout %+lld",
	       peak, swapped, events_max, events_oom, events_kill, out1 - out0);
	/* The owner is alive. */
	EXPECT_EQ(mt_ask(&self->owner, 'p'), 'p');
	EXPECT_LE(peak, (long long)LIMIT);
	EXPECT_GE(swapped, (long long)(DATA - LIMIT));
	EXPECT_GT(events_max, 0);
	EXPECT_EQ(events_oom, 0);
	EXPECT_EQ(events_kill, 0);
	EXPECT_GT(out1 - out0, 0);
}

/* ---- THP: a 2 MiB shmem object in a region, shmem_enabled=always ---- */

FIXTURE(thp) {
	char saved[32], path[128];
	int changed;
};

FIXTURE_SETUP(thp)
{
	char buf[256] = "", *l, *r;
	int fd;
	ssize_t n;

	align = read_align();
	if (!align)
		SETUP_SKIP("%s missing: not the mshare-2025 kernel, or msharefs not mounted", MSHAREFS_INFO);
	fd = open(SHMEM_ENABLED, O_RDONLY);
	if (fd < 0)
		SETUP_SKIP("no %s (kernel without TRANSPARENT_HUGEPAGE)", SHMEM_ENABLED);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	l = strchr(buf, '[');
	r = l ? strchr(l, ']') : NULL;
	ASSERT_TRUE(n > 0 && l && r && r - l - 1 < (long)sizeof(self->saved));
	memcpy(self->saved, l + 1, (size_t)(r - l - 1));
	ASSERT_SYS(write_file(SHMEM_ENABLED, "always"));
	self->changed = 1;
	snprintf(self->path, sizeof(self->path), "%s/kt-thp-%d", MSHAREFS_DIR, (int)getpid());
}

FIXTURE_TEARDOWN(thp)
{
	unlink(self->path);
	if (self->changed && write_file(SHMEM_ENABLED, self->saved) != 0)
		TH_LOG("could not restore %s to %s", SHMEM_ENABLED, self->saved);
}

#define THP_SIZE (2UL << 20)

TEST_F_TIMEOUT(thp, shmem_object_is_pmd_mapped_and_read_by_a_second_process, 300)
{
	long pmd0, huge0, pmd1, huge1, pmd2;
	long long mapped0, mapped1, alloc0, alloc1;
	int fd, st;
	char *p;

	pmd0 = mt_meminfo_kb("ShmemPmdMapped");
	huge0 = mt_meminfo_kb("ShmemHugePages");
	mapped0 = vmstat("thp_file_mapped");
	alloc0 = vmstat("thp_file_alloc");
	fd = open(self->path, O_RDWR | O_CREAT | O_EXCL, 0600);
	ASSERT_SYS(fd);
	ASSERT_SYS(ftruncate(fd, (off_t)align));
	ASSERT_SYS(map_anon(fd, 0, THP_SIZE, PROT_READ | PROT_WRITE));
	p = mmap(NULL, align, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_TRUE(p != MAP_FAILED);
	for (unsigned long i = 0; i < THP_SIZE / PAGE; i++)
		*(uint64_t *)(p + i * PAGE) = 0x7468700000000000ULL + i;
	pmd1 = mt_meminfo_kb("ShmemPmdMapped");
	huge1 = mt_meminfo_kb("ShmemHugePages");
	mapped1 = vmstat("thp_file_mapped");
	alloc1 = vmstat("thp_file_alloc");
	TH_LOG("ShmemPmdMapped %ld -> %ld kB, ShmemHugePages %ld -> %ld kB, thp_file_alloc %+lld, thp_file_mapped %+lld",
	       pmd0, pmd1, huge0, huge1, alloc1 - alloc0, mapped1 - mapped0);
	EXPECT_EQ(pmd1 - pmd0, 2048);
	EXPECT_EQ(huge1 - huge0, 2048);
	if (mapped0 >= 0) {
		EXPECT_EQ(mapped1 - mapped0, 1);
		EXPECT_EQ(alloc1 - alloc0, 1);
	}
	/* A second process maps the region and reads every page through the
	 * host's PMD; its own page tables do not grow. */
	pid_t pid = fork();
	if (pid == 0) {
		int cfd = open(self->path, O_RDONLY);
		long before = mt_proc_kb("/proc/self/status", "VmPTE");
		char *q;
		unsigned long bad = 0;

		if (cfd < 0)
			_exit(10);
		q = mmap(NULL, align, PROT_READ, MAP_SHARED, cfd, 0);
		if (q == MAP_FAILED)
			_exit(11);
		for (unsigned long i = 0; i < THP_SIZE / PAGE; i++)
			if (*(volatile uint64_t *)(q + i * PAGE) != 0x7468700000000000ULL + i)
				bad++;
		long grew = mt_proc_kb("/proc/self/status", "VmPTE") - before;
		if (bad || grew >= 4)
			mt_log("reader: %lu pages wrong, VmPTE %+ld kB", bad, grew);
		_exit(bad ? 12 : grew >= 4 ? 13 : 0);
	}
	ASSERT_GT(pid, 0);
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	mt_log_status("reader", st);
	EXPECT_TRUE(mt_exited_ok(st));
	/* Still the one PMD mapping in the host. */
	EXPECT_EQ(mt_meminfo_kb("ShmemPmdMapped") - pmd0, 2048);
	ASSERT_SYS(munmap(p, align));
	close(fd);
	ASSERT_SYS(unlink(self->path));
	/* The region went with its last reference: so did the huge page. */
	pmd2 = mt_meminfo_kb("ShmemPmdMapped");
	EXPECT_EQ(pmd2, pmd0);
}

MSHARE_TEST_MAIN
