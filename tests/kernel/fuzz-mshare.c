/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fuzz-mshare: a seeded syscall fuzzer for mshare()/mshare_unlink() and the
 * msharefs files, run inside the benchmark guest (static binary in the
 * initramfs as /guest/bin/fuzz-mshare; it is not a TAP test).
 *
 *   fuzz-mshare [--seed N] [--seconds S] [--calls N] [--procs P]
 *               [--stall S] [--verbose]
 *
 * P worker processes (half of them as uid/gid 65534) issue random calls:
 * mshare() with random names (a small pool, so that they collide, and
 * hostile ones: empty, ".", "..", "a/b", "../x", "x\n", 255/256/4000
 * characters, NULL, unmapped, crossing into an unmapped page), addresses,
 * lengths, flags and modes; donor set-ups (anonymous shared/private, memfd,
 * tmpfs and DAX files, read-only mappings, mbind and mlock before sharing);
 * consumer attaches through /sys/fs/mshare/<name>; loads and stores inside
 * the regions (faults are caught), pwrite to /proc/self/mem and O_DIRECT
 * reads from /dev/pmem0 into them; munmap, mremap, mprotect, madvise, mlock,
 * mbind, truncate of the backing files; reads, writes, chmod, chown, unlink,
 * rename, create and mkdir on msharefs; fork (children run a few calls and
 * exit or are killed), voluntary exits and SIGKILLs of workers, which are
 * replaced.
 *
 * Reproducibility: every decision a process makes comes from a generator
 * seeded with (--seed, worker number, generation), so a seed replays the same
 * sequence of calls per process; what the calls return depends on how the
 * processes interleave.  With --calls the workers share out exactly N calls
 * (calls made by their forked children come on top and are counted too).
 *
 * Output: a progress line every 10 s, then the number of calls and for every
 * operation a histogram of its outcomes (ok, errno names, SIGSEGV/SIGBUS for
 * faulting accesses).  Exit status 0 when the run completed; 1 when a worker
 * made no progress for --stall seconds (a hang or livelock: the worker's
 * state, wait channel and kernel stack are printed), or when the set-up
 * failed; 2 for bad usage.  Kernel crashes and reports are judged outside,
 * by kernel/vm/run.sh (status 125) and its kernel-log checks.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mshare-uapi.h"

#define MAX_PROCS	16
#define SLOTS		4		/* page-table slots used as region homes */
#define SLOT_BASE	(2UL << 40)	/* 2 TiB, as the conformance tests */
#define FUZZ_DIR_PMEM	"/mnt/pmem/fuzz"
static char fuzz_dir_tmp[40] = "/tmp/fuzz";
#define FUZZ_DIR_TMP	fuzz_dir_tmp
#define NOBODY		65534
#define PAGE		4096UL
#define MAX_MAPS	32
#define MAX_FILES	8
#define MAX_CHILDREN	4

#ifndef MADV_COLD
#define MADV_COLD 20
#endif
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
#ifndef MLOCK_ONFAULT
#define MLOCK_ONFAULT 1
#endif
/* <numaif.h> is libnuma's; the syscall and its constants are all we need. */
#define FZ_MPOL_DEFAULT		0
#define FZ_MPOL_PREFERRED	1
#define FZ_MPOL_BIND		2
#define FZ_MPOL_INTERLEAVE	3
#define FZ_MPOL_LOCAL		4
#define FZ_MPOL_MF_STRICT	(1 << 0)
#define FZ_MPOL_MF_MOVE		(1 << 1)

/* ---- operations and their outcome histogram ---- */

#define OPS(X) \
	X(map) X(mshare_donate) X(mshare_attach) X(mshare_random) X(mshare_unlink) \
	X(load) X(store) X(procmem_write) X(odirect_read) X(munmap) X(mremap) \
	X(mprotect) X(madvise) X(mlock) X(mbind) X(truncate) X(fs_read) \
	X(fs_modify) X(fork) X(exit) X(kill_child)
#define OP_ENUM(n) OP_##n,
#define OP_NAME(n) #n,
enum { OPS(OP_ENUM) NOPS };
static const char *const op_names[] = { OPS(OP_NAME) };
/* Relative weights of the operations for a worker; children never fork or exit
 * early on purpose (they are short-lived anyway). */
static const unsigned op_weight[NOPS] = {
	[OP_map] = 12, [OP_mshare_donate] = 10, [OP_mshare_attach] = 10,
	[OP_mshare_random] = 8, [OP_mshare_unlink] = 8, [OP_load] = 10,
	[OP_store] = 10, [OP_procmem_write] = 3, [OP_odirect_read] = 2,
	[OP_munmap] = 5, [OP_mremap] = 4, [OP_mprotect] = 4, [OP_madvise] = 5,
	[OP_mlock] = 3, [OP_mbind] = 3, [OP_truncate] = 4, [OP_fs_read] = 5,
	[OP_fs_modify] = 4, [OP_fork] = 3, [OP_exit] = 1, [OP_kill_child] = 2,
};

#define OUT_SEGV	(NERRNO)	/* outcome columns after the errno values */
#define OUT_BUS		(NERRNO + 1)
#define NERRNO		134
#define NOUT		(NERRNO + 2)

struct shared {
	unsigned long counts[NOPS][NOUT];
	unsigned long calls;			/* all calls, children's included */
	unsigned long budget;			/* --calls: calls still to hand out */
	int stop;
	struct {
		unsigned long heartbeat;	/* calls made by this worker */
		int op;				/* operation in progress, -1 between */
		pid_t pid;
	} w[MAX_PROCS];
	unsigned long worker_deaths[65];	/* by signal number (0: exit) */
};
static struct shared *sh;

/* ---- options ---- */

static unsigned long opt_seed = 1, opt_calls, opt_seconds = 60, opt_stall = 60;
static int opt_procs = 4, opt_verbose, opt_dry_run, switch_uid = 1;
/* --avoid: set-ups that trigger a known, still open kernel bug (issue 14),
 * left out so that the run can look for others. */
#define AV_PRIVATE	1	/* item 1: private memory donated -> BUG_ON(vma->anon_vma) */
#define AV_MBIND	2	/* item 2: donated mempolicy freed twice */
#define AV_READONLY	4	/* item 6: write to a PROT_READ donation loops forever */
static unsigned opt_avoid;

/* ---- per-process state ---- */

static uint64_t rng;
static int me = -1;		/* worker number; children keep their parent's */
static unsigned long unit;	/* mshare size/alignment: PGDIR_SIZE */

struct mapping { unsigned long addr, len; };
static struct mapping maps[MAX_MAPS];
static int nmaps;
struct file { int fd; char path[96]; };
static struct file files[MAX_FILES];
static int nfiles;
static pid_t children[MAX_CHILDREN];
static int nchildren;
static char *bad_name;		/* a name running into an unmapped page */

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rnd(void)
{
	return splitmix(&rng);
}

static unsigned long below(unsigned long n)
{
	return n ? (unsigned long)(rnd() % n) : 0;
}

static int chance(unsigned percent)
{
	return below(100) < percent;
}

static void seed_for(int worker, unsigned long generation, unsigned long salt)
{
	rng = opt_seed * 0x100000001b3ULL ^ ((uint64_t)worker << 48) ^ (generation << 20) ^ salt;
	(void)rnd();
}

static void vlog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void vlog(const char *fmt, ...)
{
	va_list ap;

	if (!opt_verbose)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "[w%d %d] ", me, (int)getpid());
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* Records the outcome of one call: rc < 0 means failure with errno. */
static void record(int op, long rc, int err)
{
	int col = rc < 0 ? (err > 0 && err < NERRNO ? err : NERRNO - 1) : 0;

	__atomic_fetch_add(&sh->counts[op][col], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&sh->calls, 1, __ATOMIC_RELAXED);
	if (me >= 0)
		__atomic_fetch_add(&sh->w[me].heartbeat, 1, __ATOMIC_RELAXED);
	vlog("%s -> %ld%s%s", op_names[op], rc, rc < 0 ? " " : "", rc < 0 ? strerror(err) : "");
}

static void record_fault(int op, int sig)
{
	__atomic_fetch_add(&sh->counts[op][sig == SIGBUS ? OUT_BUS : OUT_SEGV], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&sh->calls, 1, __ATOMIC_RELAXED);
	if (me >= 0)
		__atomic_fetch_add(&sh->w[me].heartbeat, 1, __ATOMIC_RELAXED);
	vlog("%s -> %s", op_names[op], sig == SIGBUS ? "SIGBUS" : "SIGSEGV");
}

/* ---- random arguments ---- */

static const char *const pool[] = { "fz0", "fz1", "fz2", "fz3", "fz4", "fz5" };
#define NPOOL (sizeof(pool) / sizeof(pool[0]))

static char long_name[4001];

/* A region name: usually one of a few (so that processes collide), sometimes
 * a hostile one. */
static const char *rand_name(void)
{
	static char buf[300];

	if (chance(80))
		return pool[below(NPOOL)];
	switch (below(14)) {
	case 0: return "";
	case 1: return ".";
	case 2: return "..";
	case 3: return "a/b";
	case 4: return "../x";
	case 5: return "x\n";
	case 6: memset(buf, 'n', 255); buf[255] = 0; return buf;	/* NAME_MAX */
	case 7: memset(buf, 'n', 256); buf[256] = 0; return buf;
	case 8: return long_name;					/* 4000 */
	case 9: return NULL;
	case 10: return (const char *)1;
	case 11: return bad_name;
	case 12: return "fz0/";
	default: snprintf(buf, sizeof(buf), "fz%lu", below(1000)); return buf;
	}
}

static unsigned long slot_addr(unsigned long s)
{
	return SLOT_BASE + s * unit;
}

/* An address for the memory operations: near the start of a slot, where the
 * mappings are, or around a slot boundary; always inside the slot area, so
 * that the fuzzer does not unmap its own text, stack or statistics. */
static unsigned long rand_addr(void)
{
	unsigned long s = below(SLOTS);

	if (nmaps && chance(50)) {
		struct mapping *m = &maps[below(nmaps)];

		return m->addr + below(m->len / PAGE + 1) * PAGE;
	}
	if (chance(85))
		return slot_addr(s) + below(2048) * PAGE;		/* first 8 MiB */
	return slot_addr(s + 1) - PAGE * below(3);			/* boundary */
}

static unsigned long rand_len(void)
{
	switch (below(8)) {
	case 0: return PAGE;
	case 1: return 2 * 1024 * 1024;
	case 2: return below(64) * PAGE;
	case 3: return below(1 << 20);			/* unaligned */
	default: return (1 + below(16)) * PAGE;
	}
}

/* Arguments of mshare() itself may be anything. */
static unsigned long rand_mshare_addr(void)
{
	unsigned long k = below(12);

	/* Slot 0 holds the heap, the top one the stack: private memory. */
	if ((opt_avoid & AV_PRIVATE) && k < 2)
		k = 11;
	switch (k) {
	case 0: return 0;				/* text, data, heap */
	case 1: return (0x7fffffffffffUL & ~(unit - 1));	/* stack, mmap base */
	case 2: return slot_addr(below(SLOTS)) + PAGE;	/* unaligned */
	case 3: return rnd() & ~(PAGE - 1);
	case 4: return 0xffff888000000000UL;		/* kernel */
	case 5: return 1UL << 47;			/* just above user space */
	default: return slot_addr(below(SLOTS));
	}
}

static unsigned long rand_mshare_len(void)
{
	switch (below(10)) {
	case 0: return 0;
	case 1: return 2 * unit;
	case 2: return unit - PAGE;
	case 3: return unit + PAGE;
	case 4: return ~0UL & ~(unit - 1);
	case 5: return rnd();
	default: return unit;
	}
}

static int rand_oflags(void)
{
	static const int accmodes[] = { O_RDONLY, O_WRONLY, O_RDWR, O_ACCMODE };

	switch (below(6)) {
	case 0: return (int)rnd();
	case 1: return accmodes[below(4)];
	case 2: return O_CREAT | O_EXCL | accmodes[below(4)];
	default: return O_CREAT | (chance(70) ? O_RDWR : O_RDONLY) | (chance(20) ? O_TRUNC : 0);
	}
}

static mode_t rand_mode(void)
{
	static const mode_t modes[] = { 0600, 0644, 0666, 0400, 0, 0777, 07777, S_IFDIR | 0755 };

	return chance(90) ? modes[below(8)] : (mode_t)rnd();
}

/* ---- fault-tolerant memory access ---- */

static sigjmp_buf fault_jmp;
static volatile sig_atomic_t fault_armed;

static void on_fault(int sig)
{
	if (fault_armed) {
		fault_armed = 0;
		siglongjmp(fault_jmp, sig);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Fills len bytes at p, surviving a fault (a private file mapping past the
 * end of its file, a page another process truncated away); 0 or the signal. */
static int guarded_fill(void *p, unsigned long len)
{
	int sig;

	if ((sig = sigsetjmp(fault_jmp, 1)) != 0)
		return sig;
	fault_armed = 1;
	memset(p, 0x5a, len);
	fault_armed = 0;
	return 0;
}

static void touch(int op, unsigned long addr, int write)
{
	int sig;

	if ((sig = sigsetjmp(fault_jmp, 1)) != 0) {
		record_fault(op, sig);
		return;
	}
	fault_armed = 1;
	if (write)
		*(volatile unsigned long *)addr = rnd();
	else
		(void)*(volatile unsigned long *)addr;
	fault_armed = 0;
	record(op, 0, 0);
}

/* ---- bookkeeping of what this process mapped and opened ---- */

static void remember_map(unsigned long addr, unsigned long len)
{
	/* Only the slot area: the memory operations must never reach the
	 * fuzzer's own text, stack, heap or statistics. */
	if (addr < SLOT_BASE || addr + len > slot_addr(SLOTS) || addr + len < addr)
		return;
	if (nmaps < MAX_MAPS) {
		maps[nmaps++] = (struct mapping){ addr, len };
	} else {
		maps[below(MAX_MAPS)] = (struct mapping){ addr, len };
	}
}

static int backing_fd(void)
{
	char path[96];
	int fd;

	if (nfiles && chance(60))
		return files[below(nfiles)].fd;
	switch (below(3)) {
	case 0:
		fd = (int)syscall(SYS_memfd_create, "fz", 0);
		snprintf(path, sizeof(path), "memfd");
		break;
	case 1:
		snprintf(path, sizeof(path), FUZZ_DIR_PMEM "/f%lu", below(8));
		fd = open(path, O_RDWR | O_CREAT, 0666);
		break;
	default:
		snprintf(path, sizeof(path), "%s/f%lu", FUZZ_DIR_TMP, below(8));
		fd = open(path, O_RDWR | O_CREAT, 0666);
		break;
	}
	if (fd < 0)
		return -1;
	if (ftruncate(fd, (off_t)(1 + below(8)) * 1024 * 1024) != 0) {
		close(fd);
		return -1;
	}
	if (nfiles == MAX_FILES) {
		int i = (int)below(MAX_FILES);

		close(files[i].fd);
		files[i] = files[--nfiles];
	}
	files[nfiles].fd = fd;
	snprintf(files[nfiles].path, sizeof(files[nfiles].path), "%s", path);
	nfiles++;
	return fd;
}

/* ---- the operations ---- */

static void op_map(void)
{
	unsigned long addr = rand_addr() & ~(PAGE - 1), len = (1 + below(256)) * PAGE;
	int prot = chance(80) ? PROT_READ | PROT_WRITE : (chance(50) ? PROT_READ : PROT_NONE);
	int flags = MAP_FIXED_NOREPLACE, fd = -1;
	unsigned long kind = below(4);
	void *p;

	if (opt_avoid & AV_READONLY)
		prot = PROT_READ | PROT_WRITE;
	if ((opt_avoid & AV_PRIVATE) && (kind == 1 || kind == 2))
		kind = kind == 1 ? 0 : 3;
	switch (kind) {
	case 0: flags |= MAP_SHARED | MAP_ANONYMOUS; break;
	case 1: flags |= MAP_PRIVATE | MAP_ANONYMOUS; break;
	case 2: flags |= MAP_PRIVATE; fd = backing_fd(); break;
	default: flags |= MAP_SHARED; fd = backing_fd(); break;
	}
	if (!(flags & MAP_ANONYMOUS) && fd < 0) {
		record(OP_map, -1, errno);
		return;
	}
	if (chance(10))
		flags |= MAP_POPULATE;
	p = mmap((void *)addr, len, prot, flags, fd, 0);
	if (p == MAP_FAILED) {
		record(OP_map, -1, errno);
		return;
	}
	remember_map((unsigned long)p, len);
	if ((prot & PROT_WRITE) && chance(70)) {
		unsigned long n = PAGE * (1 + below(4));
		int sig = guarded_fill(p, n > len ? len : n);

		if (sig) {
			record_fault(OP_map, sig);
			return;
		}
	}
	record(OP_map, 0, 0);
}

static void op_mshare_donate(void)
{
	unsigned long s = below(SLOTS);
	int flags = O_CREAT | (chance(80) ? O_RDWR : O_RDONLY) | (chance(30) ? O_EXCL : 0);
	const char *name = chance(90) ? pool[below(NPOOL)] : rand_name();
	long rc;

	/* Something to donate at the start of the slot, now and then with a
	 * policy or a lock on it first. */
	if (chance(70)) {
		unsigned long a = slot_addr(s) + below(512) * PAGE;
		int priv = chance(25) && !(opt_avoid & AV_PRIVATE);
		void *p = mmap((void *)a, 16 * PAGE, PROT_READ | PROT_WRITE,
			       (priv ? MAP_PRIVATE : MAP_SHARED) | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

		if (p != MAP_FAILED) {
			remember_map((unsigned long)p, 16 * PAGE);
			(void)guarded_fill(p, PAGE);
			if (chance(15) && !(opt_avoid & AV_MBIND)) {
				unsigned long mask = 1;

				(void)syscall(SYS_mbind, p, 16 * PAGE, FZ_MPOL_BIND, &mask, 2UL, 0);
			}
			if (chance(10))
				(void)mlock(p, 16 * PAGE);
			if (chance(10) && !(opt_avoid & AV_READONLY))
				(void)mprotect(p, 16 * PAGE, PROT_READ);
		}
	}
	rc = mshare(name, slot_addr(s), chance(90) ? unit : 2 * unit, flags, rand_mode());
	record(OP_mshare_donate, rc, errno);
}

static void op_mshare_attach(void)
{
	const char *name = pool[below(NPOOL)];
	struct mshare_info info = { 0, 0 };
	char path[128];
	long rc;
	int fd;

	snprintf(path, sizeof(path), MSHARE_FS_DIR "/%s", name);
	fd = open(path, O_RDONLY);
	if (fd >= 0) {
		if (read(fd, &info, sizeof(info)) != (ssize_t)sizeof(info))
			info.start = info.size = 0;
		close(fd);
	}
	if (!info.size || chance(10)) {
		info.start = slot_addr(below(SLOTS));
		info.size = unit;
	}
	/* A consumer needs the range empty: usually clear it first (this
	 * process's own mappings there, or its earlier attachment). */
	if (chance(70) && info.size && info.start + info.size > info.start) {
		(void)munmap((void *)info.start, info.size);
		for (int i = 0; i < nmaps;) {
			if (maps[i].addr >= info.start && maps[i].addr < info.start + info.size)
				maps[i] = maps[--nmaps];
			else
				i++;
		}
	}
	rc = mshare(name, info.start, info.size, chance(60) ? O_RDWR : O_RDONLY, 0);
	record(OP_mshare_attach, rc, errno);
	if (rc == 0 && chance(60))
		touch(chance(50) ? OP_store : OP_load, info.start + below(2048) * PAGE, chance(50));
}

static void op_mshare_random(void)
{
	long rc = mshare(rand_name(), rand_mshare_addr(), rand_mshare_len(), rand_oflags(), rand_mode());

	record(OP_mshare_random, rc, errno);
}

static void op_mshare_unlink(void)
{
	long rc = mshare_unlink(rand_name());

	record(OP_mshare_unlink, rc, errno);
}

static void op_procmem_write(void)
{
	unsigned long v = rnd(), addr = rand_addr();
	int fd = open("/proc/self/mem", O_RDWR);
	long rc;

	if (fd < 0) {
		record(OP_procmem_write, -1, errno);
		return;
	}
	rc = pwrite(fd, &v, sizeof(v), (off_t)addr);
	record(OP_procmem_write, rc, errno);
	close(fd);
}

static void op_odirect_read(void)
{
	unsigned long addr = rand_addr() & ~(PAGE - 1);
	char tmpf[96];
	int fd;
	long rc;

	snprintf(tmpf, sizeof(tmpf), "%s/f0", FUZZ_DIR_TMP);
	fd = open(chance(50) ? "/dev/pmem0" : tmpf, O_RDONLY | O_DIRECT);

	if (fd < 0) {
		record(OP_odirect_read, -1, errno);
		return;
	}
	rc = pread(fd, (void *)addr, PAGE * (1 + below(4)), 0);
	record(OP_odirect_read, rc, errno);
	close(fd);
}

static void op_munmap(void)
{
	long rc = munmap((void *)(rand_addr() & ~(PAGE - 1)), rand_len());

	record(OP_munmap, rc, errno);
}

static void op_mremap(void)
{
	unsigned long old = rand_addr() & ~(PAGE - 1), len = rand_len(), nlen = chance(50) ? len : rand_len();
	void *p;

	if (chance(60))
		p = mremap((void *)old, len, nlen, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)(rand_addr() & ~(PAGE - 1)));
	else
		p = mremap((void *)old, len, nlen, chance(50) ? MREMAP_MAYMOVE : 0);
	if (p == MAP_FAILED) {
		record(OP_mremap, -1, errno);
		return;
	}
	remember_map((unsigned long)p, nlen & ~(PAGE - 1) ? nlen & ~(PAGE - 1) : PAGE);
	record(OP_mremap, 0, 0);
}

static void op_mprotect(void)
{
	static const int prots[] = { PROT_NONE, PROT_READ, PROT_READ | PROT_WRITE, PROT_WRITE,
				     PROT_READ | PROT_EXEC, PROT_READ | PROT_WRITE | PROT_EXEC };
	long rc = mprotect((void *)(rand_addr() & ~(PAGE - 1)), rand_len(), prots[below(6)]);

	record(OP_mprotect, rc, errno);
}

static void op_madvise(void)
{
	static const int advice[] = {
		MADV_DONTNEED, MADV_FREE, MADV_REMOVE, MADV_WILLNEED, MADV_COLD, MADV_PAGEOUT,
		MADV_DONTFORK, MADV_DOFORK, MADV_HUGEPAGE, MADV_NOHUGEPAGE, MADV_WIPEONFORK,
		MADV_KEEPONFORK, MADV_DONTDUMP, MADV_DODUMP, MADV_POPULATE_READ,
		MADV_POPULATE_WRITE, MADV_COLLAPSE, MADV_SEQUENTIAL, MADV_RANDOM, MADV_NORMAL,
	};
	long rc = madvise((void *)(rand_addr() & ~(PAGE - 1)), rand_len(),
			  advice[below(sizeof(advice) / sizeof(advice[0]))]);

	record(OP_madvise, rc, errno);
}

static void op_mlock(void)
{
	void *a = (void *)(rand_addr() & ~(PAGE - 1));
	unsigned long len = rand_len();
	long rc;

	switch (below(3)) {
	case 0: rc = mlock(a, len); break;
	case 1: rc = syscall(SYS_mlock2, a, len, MLOCK_ONFAULT); break;
	default: rc = munlock(a, len); break;
	}
	record(OP_mlock, rc, errno);
}

static void op_mbind(void)
{
	static const int modes[] = { FZ_MPOL_DEFAULT, FZ_MPOL_PREFERRED, FZ_MPOL_BIND,
				     FZ_MPOL_INTERLEAVE, FZ_MPOL_LOCAL };
	unsigned long mask = chance(90) ? 1 : rnd();
	int mode = modes[below(5)];
	long rc = syscall(SYS_mbind, rand_addr() & ~(PAGE - 1), rand_len(), mode,
			  mode == FZ_MPOL_DEFAULT || mode == FZ_MPOL_LOCAL ? NULL : &mask, 64UL,
			  chance(30) ? FZ_MPOL_MF_MOVE | FZ_MPOL_MF_STRICT : 0);

	record(OP_mbind, rc, errno);
}

static void op_truncate(void)
{
	off_t len = chance(30) ? 0 : (off_t)below(16) * 512 * 1024 + (chance(20) ? 1 : 0);
	long rc;

	if (nfiles && chance(70)) {
		rc = ftruncate(files[below(nfiles)].fd, len);
	} else {
		char path[96];

		snprintf(path, sizeof(path), "%s/f%lu", chance(50) ? FUZZ_DIR_PMEM : FUZZ_DIR_TMP, below(8));
		rc = truncate(path, len);
	}
	record(OP_truncate, rc, errno);
}

static void op_fs_read(void)
{
	DIR *d = opendir(MSHARE_FS_DIR);
	struct dirent *e;
	long rc = 0;
	int n = 0;

	if (!d) {
		record(OP_fs_read, -1, errno);
		return;
	}
	while ((e = readdir(d)) != NULL && n < 64) {
		char path[600], buf[64];
		struct stat st;
		int fd;

		n++;
		if (chance(50))
			continue;
		snprintf(path, sizeof(path), MSHARE_FS_DIR "/%s", e->d_name);
		(void)stat(path, &st);
		fd = open(path, chance(80) ? O_RDONLY : O_RDWR);
		if (fd < 0)
			continue;
		rc = pread(fd, buf, below(sizeof(buf) + 1), (off_t)(chance(70) ? 0 : below(64)));
		if (chance(30))
			rc = read(fd, buf, sizeof(buf));
		if (chance(20))
			rc = lseek(fd, (off_t)rnd() % 100, (int)below(3));
		close(fd);
	}
	closedir(d);
	record(OP_fs_read, rc < 0 ? -1 : 0, errno);
}

static void op_fs_modify(void)
{
	char path[4100], path2[4100];
	const char *name = rand_name();
	long rc;
	int fd;

	if (!name || name == (const char *)1 || name == bad_name)
		name = "fz0";
	snprintf(path, sizeof(path), MSHARE_FS_DIR "/%s", name);
	snprintf(path2, sizeof(path2), MSHARE_FS_DIR "/%s", pool[below(NPOOL)]);
	switch (below(10)) {
	case 0: rc = chmod(path, rand_mode()); break;
	case 1: rc = chown(path, chance(50) ? NOBODY : 0, chance(50) ? NOBODY : 0); break;
	case 2: rc = unlink(path); break;
	case 3: rc = rename(path, path2); break;
	case 4: rc = mkdir(path, 0755); break;
	case 5: rc = rmdir(path); break;
	case 6: rc = truncate(path, (off_t)below(64)); break;
	case 7: rc = link(path, path2); break;
	case 8:
		fd = open(path, O_WRONLY | (chance(50) ? O_CREAT : 0) | (chance(30) ? O_TRUNC : 0), 0644);
		rc = fd;
		if (fd >= 0) {
			struct mshare_info info = { rnd(), rnd() };

			rc = write(fd, &info, below(sizeof(info) + 1));
			close(fd);
		}
		break;
	default: rc = symlink(path2, path); break;
	}
	record(OP_fs_modify, rc < 0 ? -1 : 0, errno);
}

static void reap_children(int block)
{
	for (int i = 0; i < nchildren;) {
		int st;
		pid_t r = waitpid(children[i], &st, block ? 0 : WNOHANG);

		if (r == children[i] || (r < 0 && errno == ECHILD)) {
			children[i] = children[--nchildren];
			continue;
		}
		i++;
	}
}

static void run_calls(unsigned long n, int child);

static void op_fork(void)
{
	pid_t pid;

	reap_children(0);
	if (nchildren >= MAX_CHILDREN) {
		record(OP_fork, -1, EAGAIN);
		return;
	}
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		record(OP_fork, -1, errno);
		return;
	}
	if (pid == 0) {
		/* The child inherits the mappings (shared ones are not copied
		 * into a child, by design) and runs a few calls of its own. */
		nchildren = 0;
		me = -1;	/* its calls do not count as the worker's progress */
		rng ^= 0x5bd1e995ULL * (uint64_t)getpid();
		run_calls(1 + below(20), 1);
		if (chance(20))
			abort();
		_exit(0);
	}
	children[nchildren++] = pid;
	record(OP_fork, 0, 0);
}

static void op_kill_child(void)
{
	long rc;

	if (!nchildren) {
		record(OP_kill_child, -1, ESRCH);
		return;
	}
	rc = kill(children[below(nchildren)], SIGKILL);
	record(OP_kill_child, rc, errno);
	reap_children(0);
}

static void one_call(int child)
{
	unsigned long total = 0, r;
	int op;

	for (op = 0; op < NOPS; op++)
		total += op_weight[op];
	for (;;) {
		r = below(total);
		for (op = 0; op < NOPS && r >= op_weight[op]; op++)
			r -= op_weight[op];
		if (!child || (op != OP_fork && op != OP_exit))
			break;
	}
	if (me >= 0 && !child)
		sh->w[me].op = op;
	switch (op) {
	case OP_map: op_map(); break;
	case OP_mshare_donate: op_mshare_donate(); break;
	case OP_mshare_attach: op_mshare_attach(); break;
	case OP_mshare_random: op_mshare_random(); break;
	case OP_mshare_unlink: op_mshare_unlink(); break;
	case OP_load: touch(OP_load, rand_addr(), 0); break;
	case OP_store: touch(OP_store, rand_addr(), 1); break;
	case OP_procmem_write: op_procmem_write(); break;
	case OP_odirect_read: op_odirect_read(); break;
	case OP_munmap: op_munmap(); break;
	case OP_mremap: op_mremap(); break;
	case OP_mprotect:
		if (opt_avoid & AV_READONLY)
			record(OP_mprotect, -1, ENOSYS);	/* left out: --avoid readonly */
		else
			op_mprotect();
		break;
	case OP_madvise: op_madvise(); break;
	case OP_mlock: op_mlock(); break;
	case OP_mbind:
		if (opt_avoid & AV_MBIND)
			record(OP_mbind, -1, ENOSYS);		/* left out: --avoid mbind */
		else
			op_mbind();
		break;
	case OP_truncate: op_truncate(); break;
	case OP_fs_read: op_fs_read(); break;
	case OP_fs_modify: op_fs_modify(); break;
	case OP_fork: op_fork(); break;
	case OP_kill_child: op_kill_child(); break;
	case OP_exit:
		record(OP_exit, 0, 0);
		fflush(stderr);
		_exit(0);
	}
	if (me >= 0 && !child)
		sh->w[me].op = -1;
}

/* Runs n calls (0: until told to stop or the shared budget is spent). */
static void run_calls(unsigned long n, int child)
{
	for (unsigned long i = 0; !n || i < n; i++) {
		if (__atomic_load_n(&sh->stop, __ATOMIC_RELAXED))
			break;
		if (!n && opt_calls) {
			unsigned long b = __atomic_load_n(&sh->budget, __ATOMIC_RELAXED);

			do {
				if (b == 0)
					return;
			} while (!__atomic_compare_exchange_n(&sh->budget, &b, b - 1, 0,
							      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
		}
		one_call(child);
	}
}

static void prepare_process(void)
{
	struct sigaction sa;
	long pg = sysconf(_SC_PAGESIZE);
	char *p;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fault;
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	memset(long_name, 'L', sizeof(long_name) - 1);
	/* A name whose last byte is followed by an unmapped page. */
	p = mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED) {
		munmap(p + pg, (size_t)pg);
		memset(p, 'b', (size_t)pg);
		bad_name = p + pg - 3;
	}
}

static pid_t start_worker(int w, unsigned long generation)
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid != 0)
		return pid;
	me = w;
	seed_for(w, generation, 0);
	nmaps = nfiles = nchildren = 0;
	if (w % 2 == 1 && switch_uid) {
		if (setgroups(0, NULL) != 0 || setgid(NOBODY) != 0 || setuid(NOBODY) != 0) {
			fprintf(stderr, "fuzz-mshare: worker %d: cannot become uid %d: %s\n",
				w, NOBODY, strerror(errno));
			_exit(3);
		}
	}
	run_calls(0, 0);
	reap_children(1);
	_exit(0);
}

static void print_stack(pid_t pid)
{
	char path[64], buf[4096];
	const char *files_to_show[] = { "stat", "wchan", "stack" };

	for (size_t i = 0; i < 3; i++) {
		ssize_t n;
		int fd;

		snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, files_to_show[i]);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			buf[n] = 0;
			printf("fuzz-mshare:   %s: %s%s", path, buf, buf[n - 1] == '\n' ? "" : "\n");
		}
	}
}

static int in_msharefs(const char *name)
{
	char path[4200];

	snprintf(path, sizeof(path), MSHARE_FS_DIR "/%s", name);
	return access(path, F_OK) == 0;
}

static const char *outcome_name(int col)
{
	static char buf[32];
	const char *s;

	if (col == 0)
		return "ok";
	if (col == OUT_SEGV)
		return "SIGSEGV";
	if (col == OUT_BUS)
		return "SIGBUS";
	s = strerrorname_np(col);
	if (s)
		return s;
	snprintf(buf, sizeof(buf), "errno%d", col);
	return buf;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: fuzz-mshare [--seed N] [--seconds S] [--calls N] [--procs P]\n"
		"                   [--stall S] [--verbose]\n"
		"  --seed N      generator seed (default 1); the same seed replays the same\n"
		"                decisions per process\n"
		"  --seconds S   stop after S seconds (default 60; 0: no time limit)\n"
		"  --calls N     stop after N worker calls in all (default: no limit)\n"
		"  --procs P     worker processes, 1..%d (default 4; odd ones run as uid %d)\n"
		"  --stall S     fail when a worker makes no call for S seconds (default 60)\n"
		"  --verbose     log every call on stderr\n"
		"  --avoid LIST  leave out set-ups that trigger known open kernel bugs\n"
		"                (issue 14), comma-separated: private (item 1: private\n"
		"                memory in a donation), mbind (item 2: a donated mempolicy),\n"
		"                readonly (item 6: PROT_READ donations and mprotect); the\n"
		"                calls left out count as ENOSYS in the histogram\n"
		"  --dry-run     run on a kernel without mshare (every mshare call fails with\n"
		"                ENOSYS; files in /tmp/fuzz-dry-PID): tests the fuzzer itself\n"
		"Exit status: 0 run completed, 1 a worker stalled or set-up failed, 2 usage.\n",
		MAX_PROCS, NOBODY);
}

static int parse_ulong(const char *opt, const char *s, unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(s, &end, 0);
	if (errno || end == s || *end || s[0] == '-') {
		fprintf(stderr, "fuzz-mshare: %s: '%s' is not a non-negative integer\n", opt, s);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	pid_t pids[MAX_PROCS];
	unsigned long gen[MAX_PROCS], last_beat[MAX_PROCS], respawned = 0, v;
	time_t start, last_progress[MAX_PROCS], last_line;
	int stalled = 0;
	time_t stalled_at = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--verbose")) {
			opt_verbose = 1;
			continue;
		} else if (!strcmp(a, "--dry-run")) {
			opt_dry_run = 1;
			continue;
		} else if (!strcmp(a, "--avoid") && i + 1 < argc) {
			char *list = strdup(argv[++i]), *tok, *save = NULL;

			for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				if (!strcmp(tok, "private"))
					opt_avoid |= AV_PRIVATE;
				else if (!strcmp(tok, "mbind"))
					opt_avoid |= AV_MBIND;
				else if (!strcmp(tok, "readonly"))
					opt_avoid |= AV_READONLY;
				else if (*tok) {
					fprintf(stderr, "fuzz-mshare: --avoid: unknown '%s' (private, mbind, readonly)\n", tok);
					return 2;
				}
			}
			free(list);
			continue;
		}
		if (i + 1 >= argc) {
			fprintf(stderr, "fuzz-mshare: unknown option or missing value: '%s'\n", a);
			usage(stderr);
			return 2;
		}
		if (parse_ulong(a, argv[i + 1], &v))
			return 2;
		if (!strcmp(a, "--seed"))
			opt_seed = v;
		else if (!strcmp(a, "--seconds"))
			opt_seconds = v;
		else if (!strcmp(a, "--calls"))
			opt_calls = v;
		else if (!strcmp(a, "--stall") && v > 0)
			opt_stall = v;
		else if (!strcmp(a, "--procs") && v >= 1 && v <= MAX_PROCS)
			opt_procs = (int)v;
		else {
			fprintf(stderr, "fuzz-mshare: bad option or value: %s %s\n", a, argv[i + 1]);
			usage(stderr);
			return 2;
		}
		i++;
	}
	if (!opt_seconds && !opt_calls) {
		fprintf(stderr, "fuzz-mshare: --seconds 0 needs --calls N (the run would not end)\n");
		return 2;
	}
	if (opt_dry_run) {
		/* The wrappers refuse to issue syscalls 451/452 on a kernel
		 * that did not prove it has mshare: they fail with ENOSYS. */
		unit = 1UL << 39;
		snprintf(fuzz_dir_tmp, sizeof(fuzz_dir_tmp), "/tmp/fuzz-dry-%d", (int)getpid());
	} else if (!mshare_kernel_supported() || !mshare_fs_mounted()) {
		fprintf(stderr, "fuzz-mshare: this kernel has no mshare or msharefs is not mounted on %s"
			" (--dry-run tests the fuzzer without it)\n", MSHARE_FS_DIR);
		return 1;
	}
	if (geteuid() != 0) {
		switch_uid = 0;
		printf("fuzz-mshare: not root: every worker runs as uid %d\n", (int)geteuid());
	}
	if (!opt_dry_run && mshare_read_size_unit(&unit) != 0) {
		fprintf(stderr, "fuzz-mshare: cannot read %s: %s\n", MSHARE_SIZE_SYSCTL, strerror(errno));
		return 1;
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		perror("fuzz-mshare: mmap");
		return 1;
	}
	sh->budget = opt_calls;
	umask(0);
	mkdir(FUZZ_DIR_TMP, 01777);
	chmod(FUZZ_DIR_TMP, 01777);
	if (mkdir(FUZZ_DIR_PMEM, 01777) == 0 || errno == EEXIST)
		chmod(FUZZ_DIR_PMEM, 01777);
	prepare_process();
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (opt_avoid)
		printf("fuzz-mshare: avoiding known open bugs (issue 14):%s%s%s\n",
		       opt_avoid & AV_PRIVATE ? " private (item 1)" : "",
		       opt_avoid & AV_MBIND ? " mbind (item 2)" : "",
		       opt_avoid & AV_READONLY ? " readonly (item 6)" : "");
	printf("fuzz-mshare: seed %lu, %d processes (odd ones as uid %d), %s%lu s, %s%lu calls, mshare unit %lu GiB\n",
	       opt_seed, opt_procs, NOBODY, opt_seconds ? "" : "no limit ", opt_seconds,
	       opt_calls ? "" : "unlimited ", opt_calls, unit >> 30);

	start = last_line = time(NULL);
	for (int w = 0; w < opt_procs; w++) {
		gen[w] = 0;
		sh->w[w].op = -1;
		pids[w] = start_worker(w, 0);
		last_beat[w] = 0;
		last_progress[w] = start;
	}
	seed_for(MAX_PROCS, 0, 0x9a9e17);	/* the supervisor's own decisions */
	for (;;) {
		int running = 0, st;
		time_t now;
		pid_t r;

		usleep(200 * 1000);
		now = time(NULL);
		if (opt_seconds && now - start >= (time_t)opt_seconds)
			__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
		while ((r = waitpid(-1, &st, WNOHANG)) > 0) {
			for (int w = 0; w < opt_procs; w++) {
				if (pids[w] != r)
					continue;
				sh->worker_deaths[WIFSIGNALED(st) ? WTERMSIG(st) & 63 : 0]++;
				pids[w] = 0;
				/* Replace it unless the run is ending (a worker
				 * ends on its own only when it stops). */
				if (!sh->stop && !(opt_calls && !sh->budget)) {
					pids[w] = start_worker(w, ++gen[w]);
					respawned++;
					last_progress[w] = now;
					last_beat[w] = sh->w[w].heartbeat;
				}
			}
		}
		for (int w = 0; w < opt_procs; w++) {
			unsigned long b = __atomic_load_n(&sh->w[w].heartbeat, __ATOMIC_RELAXED);

			if (!pids[w])
				continue;
			running++;
			if (b != last_beat[w]) {
				last_beat[w] = b;
				last_progress[w] = now;
			} else if (now - last_progress[w] >= (time_t)opt_stall && !stalled) {
				int op = sh->w[w].op;

				printf("fuzz-mshare: FAIL: worker %d (pid %d) made no call for %lu s, in %s\n",
				       w, (int)pids[w], opt_stall, op >= 0 && op < NOPS ? op_names[op] : "(between calls)");
				print_stack(pids[w]);
				stalled = 1;
				stalled_at = now;
				__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
			}
		}
		/* Now and then a worker is killed mid-call. */
		if (!sh->stop && below(100) < 2) {
			int w = (int)below(opt_procs);

			if (pids[w])
				kill(pids[w], SIGKILL);
		}
		if (now - last_line >= 10) {
			last_line = now;
			printf("fuzz-mshare: %lds, %lu calls, %d workers running, %lu replaced\n",
			       (long)(now - start), sh->calls, running, respawned);
		}
		if (!running)
			break;
		if (stalled && now - stalled_at > 30) {
			/* A stalled worker may be unkillable (D state): do not wait for it. */
			for (int w = 0; w < opt_procs; w++)
				if (pids[w])
					kill(pids[w], SIGKILL);
			break;
		}
		if (sh->stop && now - start > (time_t)opt_seconds + (time_t)opt_stall) {
			for (int w = 0; w < opt_procs; w++)
				if (pids[w]) {
					printf("fuzz-mshare: FAIL: worker %d (pid %d) did not stop\n", w, (int)pids[w]);
					print_stack(pids[w]);
					kill(pids[w], SIGKILL);
					stalled = 1;
				}
			break;
		}
	}
	/* Leftover regions: unlink every name still listed (as root). */
	{
		DIR *d = opendir(MSHARE_FS_DIR);
		struct dirent *e;
		int left = 0, removed = 0;

		while (d && (e = readdir(d)) != NULL) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			left++;
			for (int k = 0; k < 4 && mshare_unlink(e->d_name) == 0; k++)
				;
			if (!in_msharefs(e->d_name))
				removed++;
		}
		if (d)
			closedir(d);
		printf("fuzz-mshare: %d msharefs entries left at the end, %d removed by mshare_unlink\n",
		       left, removed);
	}

	printf("fuzz-mshare: %lu calls in %ld s (seed %lu, %d processes, %lu workers replaced)\n",
	       sh->calls, (long)(time(NULL) - start), opt_seed, opt_procs, respawned);
	for (int op = 0; op < NOPS; op++) {
		unsigned long total = 0;
		char line[2048];
		int len = 0;

		for (int c = 0; c < NOUT; c++)
			total += sh->counts[op][c];
		if (!total)
			continue;
		for (int c = 0; c < NOUT && len < (int)sizeof(line) - 64; c++)
			if (sh->counts[op][c])
				len += snprintf(line + len, sizeof(line) - (size_t)len, " %s=%lu",
						outcome_name(c), sh->counts[op][c]);
		printf("fuzz-mshare:   %-15s %7lu:%s\n", op_names[op], total, line);
	}
	{
		char line[512];
		int len = 0;

		for (int s = 0; s < 65; s++)
			if (sh->worker_deaths[s])
				len += snprintf(line + len, sizeof(line) - (size_t)len, " %s=%lu",
						s ? strsignal(s) : "exit", sh->worker_deaths[s]);
		printf("fuzz-mshare: worker ends:%s\n", len ? line : " none");
	}
	if (opt_dry_run) {
		char path[96];

		for (int i = 0; i < 8; i++) {
			snprintf(path, sizeof(path), "%s/f%d", FUZZ_DIR_TMP, i);
			unlink(path);
		}
		rmdir(FUZZ_DIR_TMP);
	}
	return stalled ? 1 : 0;
}
