/* lifecycle.c - what each operation on a shared region costs while many
 * processes map it (issue 42): its time, the TLB flushes and shootdown
 * interrupts it causes, the lock contention it meets and the page-table
 * pages it allocates or frees.
 *
 * Every worker is attached (the harness did it) and touches the region
 * (one page per --touch-stride, so that its page tables span the region);
 * then worker 0 performs, one at a time, each operation of the list below
 * while workers 1..--spinners busy-wait in user space on their own CPUs
 * (their mm stays loaded there, so a flush of it has a remote CPU to
 * reach: run with --cpus to spread them) and the other workers sleep. Around
 * each operation worker 0 reads:
 *   /proc/vmstat      nr_tlb_remote_flush, nr_tlb_remote_flush_received,
 *                     nr_tlb_local_flush_all, nr_tlb_local_flush_one (they
 *                     exist only with CONFIG_DEBUG_TLBFLUSH and the VM event
 *                     counters: the mshare-counters kernel flavour), pgfault,
 *                     nr_page_table_pages;
 *   /proc/interrupts  the TLB (TLB shootdowns) and CAL (function calls)
 *                     rows, summed over the CPUs;
 *   kprobe hits       of flush_tlb_all, flush_tlb_mm_range, __pte_alloc and
 *                     ___pte_free_tlb (tracefs kprobe_profile), when the
 *                     kernel has kprobe events and we may add them;
 *   /proc/lock_stat   cleared before, read after (CONFIG_LOCK_STAT): the
 *                     contentions, wait time and acquisitions of the lock
 *                     classes named mmap_lock, i_mmap_rwsem, and the
 *                     page-table locks (ptlock, page_table_lock).
 * The counters are system-wide: anything else the guest does meanwhile
 * counts too (a quiet guest does little; the tests state the spread).
 *
 * The operations, in order, per round (--rounds):
 *   mprotect_ro, mprotect_rw   the whole region RW -> RO -> RW
 *   madv_dontneed              MADV_DONTNEED of --range bytes at the start
 *   msync                      msync(MS_SYNC) of the whole region
 *   fork                       fork() of worker 0 (a new sharer, by
 *                              inheritance); the child waits
 *   exit                       that child's exit, until waitpid returns
 *   munmap                     the backend's detach (munmap; mshare:
 *                              mshare_unlink)
 *   attach                     the backend's attach (mmap; mshare: mshare())
 *   punch_hole                 fallocate(PUNCH_HOLE) of --range bytes at the
 *                              start of the file behind the mapping
 *   truncate                   ftruncate of that file to 0 (then, not
 *                              counted, back to its size)
 * The file is opened through /proc/self/map_files (the workload knows no
 * backend), or, where this process's mapping has none (an mshare consumer),
 * through the map_files entry of another process mapping the same range
 * (the mshare donor); where none has one or the file refuses, the
 * operation's record says why (its errno) instead of figures. Between operations worker 0 touches
 * again what the last one took away (not counted).
 *
 * This workload forks (the fork operation): its child only waits for its
 * exit, touches nothing and is always reaped before run() returns.
 * Its figures live in a shared mapping made by prepare() in the parent
 * (the slot's sixteen counters cannot hold them), which report() reads.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <unistd.h>

#include "clock.h"
#include "futex.h"
#include "json.h"
#include "lock_stat.h"
#include "workload.h"

enum { P_RANGE, P_SPINNERS, P_ROUNDS, P_TOUCH_STRIDE, P_FILE };
enum { C_ROUNDS, C_OPS_DONE, C_OPS_REFUSED, C_SPINNERS };

enum lc_op {
	OP_MPROTECT_RO, OP_MPROTECT_RW, OP_MADV_DONTNEED, OP_MSYNC, OP_FORK, OP_EXIT, OP_MUNMAP, OP_ATTACH,
	OP_PUNCH_HOLE, OP_TRUNCATE, OP_COUNT
};
static const char *const op_names[OP_COUNT] = {
	"mprotect_ro", "mprotect_rw", "madv_dontneed", "msync", "fork", "exit", "munmap", "attach",
	"punch_hole", "truncate",
};

/* What is read around an operation. */
enum lc_counter {
	K_TLB_REMOTE_FLUSH, K_TLB_REMOTE_FLUSH_RECEIVED, K_TLB_LOCAL_FLUSH_ALL, K_TLB_LOCAL_FLUSH_ONE, K_PGFAULT,
	K_PT_PAGES,       /* nr_page_table_pages: a level, its delta may be negative */
	K_IRQ_TLB, K_IRQ_CAL,
	K_KP_FLUSH_TLB_ALL, K_KP_DO_FLUSH_TLB_ALL, K_KP_FLUSH_TLB_MM_RANGE, K_KP_PTE_ALLOC, K_KP_PTE_FREE,
	K_MMAP_LOCK_CON, K_MMAP_LOCK_WAIT_NS, K_MMAP_LOCK_ACQ,
	K_I_MMAP_CON, K_I_MMAP_WAIT_NS, K_I_MMAP_ACQ,
	K_PTL_CON, K_PTL_WAIT_NS, K_PTL_ACQ,
	K_COUNT
};
static const char *const counter_names[K_COUNT] = {
	"nr_tlb_remote_flush", "nr_tlb_remote_flush_received", "nr_tlb_local_flush_all", "nr_tlb_local_flush_one",
	"pgfault", "page_table_pages", "irq_tlb_shootdowns", "irq_function_calls",
	"kprobe_flush_tlb_all", "kprobe_do_flush_tlb_all", "kprobe_flush_tlb_mm_range", "kprobe_pte_alloc",
	"kprobe_pte_free_tlb",
	"mmap_lock_contentions", "mmap_lock_wait_ns", "mmap_lock_acquisitions",
	"i_mmap_rwsem_contentions", "i_mmap_rwsem_wait_ns", "i_mmap_rwsem_acquisitions",
	"ptl_contentions", "ptl_wait_ns", "ptl_acquisitions",
};
/* Which source each counter comes from (for "available"). */
enum lc_source { S_VMSTAT_TLB, S_VMSTAT_EVENTS, S_VMSTAT, S_IRQ, S_KPROBE, S_LOCK_STAT, S_COUNT };
static const enum lc_source counter_source[K_COUNT] = {
	S_VMSTAT_TLB, S_VMSTAT_TLB, S_VMSTAT_TLB, S_VMSTAT_TLB, S_VMSTAT_EVENTS, S_VMSTAT, S_IRQ, S_IRQ,
	S_KPROBE, S_KPROBE, S_KPROBE, S_KPROBE, S_KPROBE,
	S_LOCK_STAT, S_LOCK_STAT, S_LOCK_STAT, S_LOCK_STAT, S_LOCK_STAT, S_LOCK_STAT, S_LOCK_STAT, S_LOCK_STAT,
	S_LOCK_STAT,
};
static const char *const source_names[S_COUNT] = {
	"vmstat_tlb (CONFIG_DEBUG_TLBFLUSH)", "vmstat_events (CONFIG_VM_EVENT_COUNTERS)", "vmstat",
	"interrupts", "kprobes", "lock_stat (CONFIG_LOCK_STAT)",
};

#define LC_MAX_ROUNDS 64
#define KPROBE_GROUP "mshare_bench_lc"

struct lc_op_result {
	uint32_t rounds_done;   /* rounds in which the operation succeeded */
	int32_t err;            /* errno of the first refusal, 0 if none */
	char what[128];         /* what was refused, and how */
	uint64_t ns[LC_MAX_ROUNDS];
	int64_t delta[LC_MAX_ROUNDS][K_COUNT];
};

/* Shared by every worker and the parent (mapped by prepare()). */
struct lc_shared {
	uint32_t arrived;    /* workers that finished touching, over all rounds */
	uint32_t spinning;   /* spinners spinning, over all rounds */
	uint32_t ops_done;   /* rounds worker 0 finished */
	uint32_t stop;       /* worker 0 failed: everybody leaves */
	uint32_t retouch;    /* asked by worker 0: every worker touches the region again */
	uint32_t retouched;  /* workers (but 0) that did, over all asks */
	uint32_t wake;       /* bumped (and woken) at every ask and every round's end */
	bool available[S_COUNT];
	char unavailable_why[S_COUNT][200];
	int cpus_online;
	int worker0_cpu;
	uint64_t spinner_cpus; /* bit per CPU a spinner ran on */
	uint64_t file_bytes;
	char file[160];      /* what /proc/.../map_files gave */
	char file_via[96];   /* the map_files entry that gave it */
	bool kprobe_ok[8];
	char kprobes_missing[200];
	struct lc_op_result op[OP_COUNT];
};

#define LC_FILE_MAX 160

struct lc_config {
	struct lc_shared *sh;
	uint64_t range;
	uint64_t touch_stride;
	unsigned spinners;
	unsigned rounds;
	char file[LC_FILE_MAX]; /* --file: the file behind the region, "" to find it through map_files */
};

static int lc_prepare(const union workload_value *v, const char *const *text, size_t region_size, void *config,
		      char *err, size_t err_len)
{
	struct lc_config *c = config;

	c->range = v[P_RANGE].u;
	snprintf(c->file, sizeof(c->file), "%s", v[P_FILE].u ? text[P_FILE] : "");
	c->spinners = (unsigned)v[P_SPINNERS].u;
	c->rounds = (unsigned)v[P_ROUNDS].u;
	c->touch_stride = v[P_TOUCH_STRIDE].u;
	if (c->range > region_size) {
		snprintf(err, err_len, "--range %llu is larger than the region (%zu bytes)",
			 (unsigned long long)c->range, region_size);
		return -1;
	}
	c->sh = mmap(NULL, sizeof(*c->sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (c->sh == MAP_FAILED) {
		c->sh = NULL;
		snprintf(err, err_len, "lifecycle: cannot map its shared results: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------- reading */

static int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t got = 0;

	if (fd < 0)
		return -1;
	while (got + 1 < len) {
		ssize_t n = read(fd, buf + got, len - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	return (int)got;
}

static int write_file(const char *path, const char *s, int flags)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | flags);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, s, strlen(s));
	int e = errno;
	close(fd);
	errno = e;
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

/* The value after "name " at the start of a line of /proc/vmstat. */
static bool vmstat_value(const char *text, const char *name, int64_t *v)
{
	size_t n = strlen(name);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, name, n) == 0 && p[n] == ' ') {
			*v = strtoll(p + n + 1, NULL, 10);
			return true;
		}
	}
	return false;
}

/* The sum over CPUs of the /proc/interrupts row labelled "name:". */
static bool irq_row(const char *text, const char *name, int cpus, int64_t *v)
{
	size_t n = strlen(name);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		const char *q = p;
		while (*q == ' ')
			q++;
		if (strncmp(q, name, n) == 0 && q[n] == ':') {
			char *e;
			int64_t sum = 0;
			q += n + 1;
			for (int i = 0; i < cpus; i++) {
				long long x = strtoll(q, &e, 10);
				if (e == q)
					break;
				sum += x;
				q = e;
			}
			*v = sum;
			return true;
		}
	}
	return false;
}

static char tracefs[64];

static bool kprobe_hits(const char *text, const char *event, int64_t *v)
{
	size_t n = strlen(event);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		const char *q = p;
		while (*q == ' ')
			q++;
		if (strncmp(q, event, n) == 0 && q[n] == ' ') {
			*v = strtoll(q + n, NULL, 10);
			return true;
		}
	}
	return false;
}

/* flush_tlb_all is also inlined into flush_tlb_mm_range (6.1 with mshare
 * patch 0026): its IPI callback do_flush_tlb_all counts every CPU that
 * ran one (calls x CPUs), whoever called it. */
#define N_KPROBES 5
static const char *const kprobe_events[N_KPROBES][2] = {
	{ "lc_flush_tlb_all", "flush_tlb_all" },
	{ "lc_do_flush_tlb_all", "do_flush_tlb_all" },
	{ "lc_flush_tlb_mm_range", "flush_tlb_mm_range" },
	{ "lc_pte_alloc", "__pte_alloc" },
	{ "lc_pte_free_tlb", "___pte_free_tlb" },
};

static void kprobes_remove(void)
{
	char path[128], line[128];

	if (!tracefs[0])
		return;
	snprintf(path, sizeof(path), "%s/events/" KPROBE_GROUP "/enable", tracefs);
	write_file(path, "0", 0);
	snprintf(path, sizeof(path), "%s/kprobe_events", tracefs);
	for (int i = 0; i < N_KPROBES; i++) {
		snprintf(line, sizeof(line), "-:" KPROBE_GROUP "/%s\n", kprobe_events[i][0]);
		write_file(path, line, O_APPEND);
	}
}

/* Add and enable the kprobes (hits are counted while they are enabled). */
static void kprobes_add(struct lc_shared *sh)
{
	char path[128], line[160];
	const char *roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };

	for (int i = 0; i < 2 && !tracefs[0]; i++) {
		snprintf(path, sizeof(path), "%s/kprobe_events", roots[i]);
		if (access(path, F_OK) == 0)
			snprintf(tracefs, sizeof(tracefs), "%s", roots[i]);
	}
	if (!tracefs[0] && mount("tracefs", roots[0], "tracefs", 0, NULL) == 0 &&
	    access("/sys/kernel/tracing/kprobe_events", F_OK) == 0)
		snprintf(tracefs, sizeof(tracefs), "%s", roots[0]);
	if (!tracefs[0]) {
		snprintf(sh->unavailable_why[S_KPROBE], sizeof(sh->unavailable_why[S_KPROBE]),
			 "no tracefs kprobe_events (not root, or no CONFIG_KPROBE_EVENTS)");
		return;
	}
	kprobes_remove(); /* a run killed before it cleaned up */
	snprintf(path, sizeof(path), "%s/kprobe_events", tracefs);
	int added = 0;
	for (int i = 0; i < N_KPROBES; i++) {
		snprintf(line, sizeof(line), "p:" KPROBE_GROUP "/%s %s\n", kprobe_events[i][0], kprobe_events[i][1]);
		sh->kprobe_ok[i] = write_file(path, line, O_APPEND) == 0;
		if (sh->kprobe_ok[i]) {
			added++;
		} else {
			size_t l = strlen(sh->kprobes_missing);
			snprintf(sh->kprobes_missing + l, sizeof(sh->kprobes_missing) - l, "%s%s (%s)", l ? ", " : "",
				 kprobe_events[i][1], strerror(errno));
		}
	}
	if (!added) {
		snprintf(sh->unavailable_why[S_KPROBE], sizeof(sh->unavailable_why[S_KPROBE]),
			 "no kprobe could be added: %.90s", sh->kprobes_missing);
		tracefs[0] = '\0';
		return;
	}
	snprintf(path, sizeof(path), "%s/events/" KPROBE_GROUP "/enable", tracefs);
	if (write_file(path, "1", 0) != 0) {
		snprintf(sh->unavailable_why[S_KPROBE], sizeof(sh->unavailable_why[S_KPROBE]),
			 "cannot enable the kprobes: %s", strerror(errno));
		kprobes_remove();
		tracefs[0] = '\0';
		return;
	}
	sh->available[S_KPROBE] = true;
}

/* lock_stat: the sums of the class lines whose name holds one of pats[]
 * (lock_stat.h). */
static void lock_group(const char *text, const char *const *pats, int64_t *con, int64_t *wait_ns, int64_t *acq)
{
	struct lock_stat_figures f;
	lock_stat_group(text, pats, NULL, &f);
	*con = f.contentions;
	*wait_ns = f.wait_ns;
	*acq = f.acquisitions;
}

static char big[4 << 20]; /* /proc/lock_stat is long; worker 0 only (touched before the first operation) */

static void snapshot(struct lc_shared *sh, int64_t *k, bool after)
{
	char buf[16384];
	int64_t v;

	if (read_file("/proc/vmstat", buf, sizeof(buf)) > 0) {
		static const char *const tlb[4] = { "nr_tlb_remote_flush", "nr_tlb_remote_flush_received",
						    "nr_tlb_local_flush_all", "nr_tlb_local_flush_one" };
		bool all = true;
		for (int i = 0; i < 4; i++) {
			if (vmstat_value(buf, tlb[i], &v))
				k[K_TLB_REMOTE_FLUSH + i] = v;
			else
				all = false;
		}
		sh->available[S_VMSTAT_TLB] = all;
		sh->available[S_VMSTAT_EVENTS] = vmstat_value(buf, "pgfault", &k[K_PGFAULT]);
		sh->available[S_VMSTAT] = vmstat_value(buf, "nr_page_table_pages", &k[K_PT_PAGES]);
	}
	if (read_file("/proc/interrupts", big, sizeof(big)) > 0) {
		sh->available[S_IRQ] = irq_row(big, "TLB", sh->cpus_online, &k[K_IRQ_TLB]) &&
				       irq_row(big, "CAL", sh->cpus_online, &k[K_IRQ_CAL]);
	}
	static const char *const why[] = {
		[S_VMSTAT_TLB] = "/proc/vmstat has no nr_tlb_* lines (a kernel without CONFIG_DEBUG_TLBFLUSH or "
				 "CONFIG_VM_EVENT_COUNTERS: the mshare-counters flavour has both)",
		[S_VMSTAT_EVENTS] = "/proc/vmstat has no pgfault line (CONFIG_VM_EVENT_COUNTERS off)",
		[S_VMSTAT] = "/proc/vmstat has no nr_page_table_pages line",
		[S_IRQ] = "/proc/interrupts has no TLB and CAL rows (not x86?)",
	};
	for (int s = S_VMSTAT_TLB; s <= S_IRQ; s++)
		if (!sh->available[s])
			snprintf(sh->unavailable_why[s], sizeof(sh->unavailable_why[s]), "%s", why[s]);
	if (sh->available[S_KPROBE]) {
		char path[128];
		snprintf(path, sizeof(path), "%s/kprobe_profile", tracefs);
		if (read_file(path, buf, sizeof(buf)) > 0)
			for (int i = 0; i < N_KPROBES; i++)
				kprobe_hits(buf, kprobe_events[i][0], &k[K_KP_FLUSH_TLB_ALL + i]);
	}
	if (sh->available[S_LOCK_STAT]) {
		if (!after) {
			write_file("/proc/lock_stat", "0", 0); /* clear: the deltas are the values after */
		} else if (read_file("/proc/lock_stat", big, sizeof(big)) > 0) {
			static const char *const mm[] = { "mmap_lock", NULL };
			static const char *const im[] = { "i_mmap_rwsem", NULL };
			static const char *const ptl[] = { "ptlock", "page_table_lock", NULL };
			lock_group(big, mm, &k[K_MMAP_LOCK_CON], &k[K_MMAP_LOCK_WAIT_NS], &k[K_MMAP_LOCK_ACQ]);
			lock_group(big, im, &k[K_I_MMAP_CON], &k[K_I_MMAP_WAIT_NS], &k[K_I_MMAP_ACQ]);
			lock_group(big, ptl, &k[K_PTL_CON], &k[K_PTL_WAIT_NS], &k[K_PTL_ACQ]);
		}
	}
}

/* ------------------------------------------------------------ touching */

static void touch_range(struct workload_ctx *ctx, const struct lc_config *c, size_t off, size_t len)
{
	volatile char *base = ctx->base;
	size_t step = c->touch_stride ? c->touch_stride : ctx->page_bytes;

	if (!base)
		return;
	for (size_t o = off; o < off + len && o < ctx->size; o += step) {
		if (ctx->write)
			base[o] = 1;
		else
			(void)base[o];
	}
}

static void spin_until(const uint32_t *word, uint32_t value, const uint32_t *stop)
{
	uint64_t start = clock_now_ns();
	for (unsigned long i = 0;; i++) {
		if (__atomic_load_n(word, __ATOMIC_ACQUIRE) >= value || __atomic_load_n(stop, __ATOMIC_ACQUIRE))
			return;
		__builtin_ia32_pause();
		/* A guard against a dead worker 0: ten minutes. */
		if ((i & 0xfffff) == 0 && clock_now_ns() - start > 600000000000ull)
			return;
	}
}

/* A worker other than 0 until worker 0 ends round `round`: spinning (in
 * user space, its mm loaded on its CPU) or asleep, and touching the region
 * again whenever worker 0 asks (before the truncate: a hole punch on a DAX
 * file unmaps the whole file from every process). */
static void wait_round(struct workload_ctx *ctx, const struct lc_config *c, struct lc_shared *sh, uint32_t round,
		       bool spinner, uint32_t *seen)
{
	uint64_t start = clock_now_ns();
	for (unsigned long i = 0;; i++) {
		uint32_t w = __atomic_load_n(&sh->wake, __ATOMIC_ACQUIRE);
		if (__atomic_load_n(&sh->ops_done, __ATOMIC_ACQUIRE) >= round || __atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE))
			return;
		uint32_t ask = __atomic_load_n(&sh->retouch, __ATOMIC_ACQUIRE);
		if (ask != *seen) {
			*seen = ask;
			touch_range(ctx, c, 0, ctx->size);
			__atomic_add_fetch(&sh->retouched, 1, __ATOMIC_ACQ_REL);
			continue;
		}
		if (spinner) {
			__builtin_ia32_pause();
			/* A guard against a dead worker 0: ten minutes. */
			if ((i & 0xfffff) == 0 && clock_now_ns() - start > 600000000000ull)
				return;
		} else {
			/* Worker 0 wakes every sleeper at each ask and round's
			 * end (and a changed word returns at once): the timeout
			 * only notices a dead worker 0. 30 s, not 1 s: 10,000
			 * sleepers waking every second kept 4 TCG vCPUs busy
			 * (an RCU stall at 10,000 sharers, issue 42). */
			futex_wait_u32(&sh->wake, w, 30000000000ull);
		}
	}
}

/* Worker 0: every other worker touches the region again; back when all did. */
static void retouch_all(struct workload_ctx *ctx, const struct lc_config *c, struct lc_shared *sh)
{
	uint32_t asks = __atomic_add_fetch(&sh->retouch, 1, __ATOMIC_ACQ_REL);
	__atomic_add_fetch(&sh->wake, 1, __ATOMIC_ACQ_REL);
	futex_wake_all(&sh->wake);
	touch_range(ctx, c, 0, ctx->size);
	while (__atomic_load_n(&sh->retouched, __ATOMIC_ACQUIRE) < asks * (ctx->workers - 1) &&
	       !__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE))
		usleep(2000);
}

/* ---------------------------------------------------------- operations */

/* The file behind the region: through this process's /proc/self/map_files
 * entry for it, else through another process's (mshare: a consumer's VMA
 * has no file; the donor's maps the backing file itself). */
static int map_file_open(struct workload_ctx *ctx, const struct lc_config *c, struct lc_shared *sh)
{
	char path[96];
	char name[32];
	uintptr_t a = (uintptr_t)ctx->base;
	int fd = -1, e = ENOENT;

	if (c->file[0]) {
		/* Named by --file (the 2025 design maps its file in the region's
		 * host mm only: no process's map_files has it). */
		fd = open(c->file, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			return -1;
		snprintf(sh->file, sizeof(sh->file), "%s", c->file);
		snprintf(sh->file_via, sizeof(sh->file_via), "--file");
		struct stat st;
		if (fstat(fd, &st) == 0)
			sh->file_bytes = (uint64_t)st.st_size;
		return fd;
	}
	snprintf(name, sizeof(name), "%lx-%lx", (unsigned long)a, (unsigned long)(a + ctx->size));
	snprintf(path, sizeof(path), "/proc/self/map_files/%s", name);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		DIR *d = opendir("/proc");
		struct dirent *de;
		pid_t self = getpid();
		while (d && fd < 0 && (de = readdir(d))) {
			char *end;
			long pid = strtol(de->d_name, &end, 10);
			if (*end || pid <= 0 || pid == self)
				continue;
			snprintf(path, sizeof(path), "/proc/%ld/map_files/%s", pid, name);
			fd = open(path, O_RDWR | O_CLOEXEC);
		}
		if (d)
			closedir(d);
	}
	if (fd < 0) {
		errno = e;
		return -1;
	}
	ssize_t n = readlink(path, sh->file, sizeof(sh->file) - 1);
	sh->file[n > 0 ? n : 0] = '\0';
	snprintf(sh->file_via, sizeof(sh->file_via), "%s", path);
	struct stat st;
	if (fstat(fd, &st) == 0)
		sh->file_bytes = (uint64_t)st.st_size;
	return fd;
}

static void refuse(struct lc_op_result *o, const char *what, int e)
{
	if (!o->err) {
		o->err = e ? e : EINVAL;
		snprintf(o->what, sizeof(o->what), "%s", what);
	}
}

/* One operation: -1 (and errno) when it was refused. */
static int do_op(struct workload_ctx *ctx, const struct lc_config *c, enum lc_op op, pid_t *child, int *pipe_w,
		 int fd, char *what, size_t what_len)
{
	char err[160];
	int rc = 0;

	switch (op) {
	case OP_MPROTECT_RO:
		snprintf(what, what_len, "mprotect(PROT_READ)");
		rc = mprotect(ctx->base, ctx->size, PROT_READ);
		break;
	case OP_MPROTECT_RW:
		snprintf(what, what_len, "mprotect(PROT_READ|PROT_WRITE)");
		rc = mprotect(ctx->base, ctx->size, PROT_READ | PROT_WRITE);
		break;
	case OP_MADV_DONTNEED:
		snprintf(what, what_len, "madvise(MADV_DONTNEED)");
		rc = madvise(ctx->base, c->range, MADV_DONTNEED);
		break;
	case OP_MSYNC:
		snprintf(what, what_len, "msync(MS_SYNC)");
		rc = msync(ctx->base, ctx->size, MS_SYNC);
		break;
	case OP_FORK: {
		int p[2];
		snprintf(what, what_len, "fork");
		if (pipe(p) != 0)
			return -1;
		pid_t pid = fork();
		if (pid == 0) {
			char b;
			close(p[1]);
			while (read(p[0], &b, 1) < 0 && errno == EINTR)
				;
			_exit(0);
		}
		close(p[0]);
		if (pid < 0) {
			int e = errno;
			close(p[1]);
			errno = e;
			return -1;
		}
		*child = pid;
		*pipe_w = p[1];
		break;
	}
	case OP_EXIT: {
		int st;
		snprintf(what, what_len, "exit of the forked sharer");
		if (*child <= 0) {
			errno = ECHILD;
			return -1;
		}
		close(*pipe_w);
		*pipe_w = -1;
		while (waitpid(*child, &st, 0) < 0 && errno == EINTR)
			;
		*child = 0;
		break;
	}
	case OP_MUNMAP:
		snprintf(what, what_len, "the backend's detach");
		if (ctx->detach(ctx, err, sizeof(err)) != 0) {
			snprintf(what, what_len, "detach: %.80s", err);
			errno = EIO;
			return -1;
		}
		break;
	case OP_ATTACH:
		snprintf(what, what_len, "the backend's attach");
		if (ctx->attach(ctx, err, sizeof(err)) != 0) {
			snprintf(what, what_len, "attach: %.80s", err);
			errno = EIO;
			return -1;
		}
		break;
	case OP_PUNCH_HOLE:
		snprintf(what, what_len, "fallocate(PUNCH_HOLE|KEEP_SIZE)");
		if (fd < 0) {
			snprintf(what, what_len, "open /proc/self/map_files/... (the file behind the mapping)");
			errno = fd == -1 ? errno : EBADF;
			return -1;
		}
		rc = fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)c->range);
		break;
	case OP_TRUNCATE:
		snprintf(what, what_len, "ftruncate(0)");
		if (fd < 0) {
			snprintf(what, what_len, "open /proc/self/map_files/... (the file behind the mapping)");
			errno = EBADF;
			return -1;
		}
		rc = ftruncate(fd, 0);
		break;
	case OP_COUNT:
		break;
	}
	return rc;
}

static int lc_run(struct workload_ctx *ctx, char *err, size_t err_len)
{
	const struct lc_config *c = ctx->config;
	struct lc_shared *sh = c->sh;
	unsigned spinners = c->spinners < ctx->workers ? c->spinners : ctx->workers - 1;
	uint64_t *cnt = ctx->slot->counters;

	uint32_t seen = 0;

	if (!sh) {
		snprintf(err, err_len, "no shared results (prepare did not run)");
		return -1;
	}
	for (unsigned r = 0; r < c->rounds; r++) {
		touch_range(ctx, c, 0, ctx->size);
		__atomic_add_fetch(&sh->arrived, 1, __ATOMIC_ACQ_REL);
		if (ctx->worker != 0) {
			bool spinner = ctx->worker <= spinners;
			if (spinner) {
				int cpu = sched_getcpu();
				if (cpu >= 0 && cpu < 64)
					__atomic_fetch_or(&sh->spinner_cpus, 1ull << cpu, __ATOMIC_RELAXED);
				__atomic_add_fetch(&sh->spinning, 1, __ATOMIC_ACQ_REL);
			}
			wait_round(ctx, c, sh, r + 1, spinner, &seen);
			if (__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE))
				return 0;
			continue;
		}

		/* Worker 0: everybody touched; the spinners spin. */
		while (__atomic_load_n(&sh->arrived, __ATOMIC_ACQUIRE) < (r + 1) * ctx->workers)
			usleep(2000);
		spin_until(&sh->spinning, (r + 1) * spinners, &sh->stop);
		if (r == 0) {
			memset(big, 0, sizeof(big)); /* no fault on it inside a measured window */
			sh->cpus_online = (int)sysconf(_SC_NPROCESSORS_ONLN);
			sh->worker0_cpu = sched_getcpu();
			sh->available[S_LOCK_STAT] = access("/proc/lock_stat", W_OK) == 0;
			if (!sh->available[S_LOCK_STAT])
				snprintf(sh->unavailable_why[S_LOCK_STAT], sizeof(sh->unavailable_why[0]),
					 "no writable /proc/lock_stat (CONFIG_LOCK_STAT off, or not root)");
			kprobes_add(sh);
			cnt[C_SPINNERS] = spinners;
		}
		pid_t child = 0;
		int pipe_w = -1;
		int fd = -1;
		for (int op = 0; op < OP_COUNT; op++) {
			struct lc_op_result *o = &sh->op[op];
			int64_t k0[K_COUNT] = { 0 }, k1[K_COUNT] = { 0 };
			char what[96];

			if (op == OP_PUNCH_HOLE) {
				fd = map_file_open(ctx, c, sh);
				if (fd < 0) {
					/* mshare v3 maps the file in the region's host mm only. */
					static const char no_file[] = "no process's /proc/PID/map_files has the region's "
								      "range: no file to punch or truncate (--file names it)";
					const char *why = c->file[0] ? "cannot open the --file" : no_file;
					refuse(o, why, errno);
					refuse(&sh->op[OP_TRUNCATE], why, errno);
					cnt[C_OPS_REFUSED] += 2;
					break;
				}
			}
			snapshot(sh, k0, false);
			uint64_t t0 = clock_now_ns();
			int rc = do_op(ctx, c, (enum lc_op)op, &child, &pipe_w, fd, what, sizeof(what));
			int e = errno;
			uint64_t t1 = clock_now_ns();
			snapshot(sh, k1, true);
			if (rc != 0) {
				refuse(o, what, e);
				cnt[C_OPS_REFUSED]++;
				if (op == OP_MUNMAP || op == OP_ATTACH) {
					snprintf(err, err_len, "%s (%s)", what, strerror(e));
					goto fail;
				}
				continue;
			}
			o->ns[r] = t1 - t0;
			for (int i = 0; i < K_COUNT; i++)
				o->delta[r][i] = counter_source[i] == S_LOCK_STAT ? k1[i] : k1[i] - k0[i];
			o->rounds_done++;
			cnt[C_OPS_DONE]++;
			/* Give back what the operation took, not counted. */
			if (op == OP_MPROTECT_RW || op == OP_MADV_DONTNEED)
				touch_range(ctx, c, 0, c->range);
			if (op == OP_ATTACH)
				touch_range(ctx, c, 0, ctx->size);
			if (op == OP_PUNCH_HOLE)
				retouch_all(ctx, c, sh);
		}
		if (fd >= 0) {
			if (ftruncate(fd, (off_t)ctx->size) != 0 && !sh->op[OP_TRUNCATE].err)
				refuse(&sh->op[OP_TRUNCATE], "ftruncate back to the region's size", errno);
			close(fd);
		}
		if (pipe_w >= 0)
			close(pipe_w);
		if (child > 0)
			waitpid(child, NULL, 0);
		cnt[C_ROUNDS]++;
		__atomic_store_n(&sh->ops_done, r + 1, __ATOMIC_RELEASE);
		__atomic_add_fetch(&sh->wake, 1, __ATOMIC_ACQ_REL);
		futex_wake_all(&sh->wake);
	}
	if (ctx->worker == 0)
		kprobes_remove();
	return 0;
fail:
	kprobes_remove();
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
	__atomic_add_fetch(&sh->wake, 1, __ATOMIC_ACQ_REL);
	futex_wake_all(&sh->wake);
	return -1;
}

/* -------------------------------------------------------------- report */

static void lc_report(struct json_writer *w, const struct workload_slot *merged, const void *config,
		      unsigned workers, double wall_s)
{
	const struct lc_config *c = config;
	const struct lc_shared *sh = c->sh;

	(void)merged;
	(void)workers;
	(void)wall_s;
	if (!sh)
		return;
	json_key_u64(w, "rounds", c->rounds);
	json_key_u64(w, "range_bytes", c->range);
	json_key_u64(w, "touch_stride_bytes", c->touch_stride);
	json_key_u64(w, "spinners", merged->counters[C_SPINNERS]);
	json_key_i64(w, "cpus_online", sh->cpus_online);
	json_key_i64(w, "worker0_cpu", sh->worker0_cpu);
	json_key_hex(w, "spinner_cpus", sh->spinner_cpus);
	json_key_string(w, "file", sh->file[0] ? sh->file : NULL);
	json_key_string(w, "file_via", sh->file_via[0] ? sh->file_via : NULL);
	json_begin_object(w, "counters_available");
	for (int s = 0; s < S_COUNT; s++)
		json_key_bool(w, source_names[s], sh->available[s]);
	json_end_object(w);
	json_begin_object(w, "counters_unavailable_why");
	for (int s = 0; s < S_COUNT; s++)
		if (!sh->available[s] && sh->unavailable_why[s][0])
			json_key_string(w, source_names[s], sh->unavailable_why[s]);
	json_end_object(w);
	json_key_string(w, "kprobes_missing", sh->kprobes_missing[0] ? sh->kprobes_missing : NULL);
	json_key_string(w, "counters_meaning",
			"per operation, the change of each system-wide counter from just before to just after "
			"it (lock_stat: cleared before, read after), per round; min, max and mean over the rounds "
			"it succeeded in. page_table_pages is a level (nr_page_table_pages): its change may be "
			"negative. kprobe_do_flush_tlb_all counts CPUs that ran flush_tlb_all's IPI callback (calls x "
			"CPUs; flush_tlb_all may be inlined into its callers, so kprobe_flush_tlb_all misses those). "
			"Wait times are lock_stat's, in ns (it prints us with two decimals). Times "
			"(ns) are the guest's clock: see environment.clock.");
	json_begin_object(w, "ops");
	for (int op = 0; op < OP_COUNT; op++) {
		const struct lc_op_result *o = &sh->op[op];
		unsigned n = o->rounds_done;
		json_begin_object(w, op_names[op]);
		json_key_u64(w, "rounds", n);
		if (o->err) {
			json_key_string(w, "refused", o->what);
			json_key_string(w, "errno", strerrorname_np(o->err) ? strerrorname_np(o->err) : "?");
			json_key_string(w, "error", strerror(o->err));
		}
		if (n) {
			uint64_t mn = UINT64_MAX, mx = 0, sum = 0;
			for (unsigned r = 0; r < n; r++) {
				mn = o->ns[r] < mn ? o->ns[r] : mn;
				mx = o->ns[r] > mx ? o->ns[r] : mx;
				sum += o->ns[r];
			}
			json_begin_object(w, "ns");
			json_key_u64(w, "min", mn);
			json_key_u64(w, "max", mx);
			json_key_double(w, "mean", (double)sum / n);
			json_end_object(w);
			json_begin_object(w, "counts");
			for (int i = 0; i < K_COUNT; i++) {
				if (!sh->available[counter_source[i]])
					continue;
				if (counter_source[i] == S_KPROBE && !sh->kprobe_ok[i - K_KP_FLUSH_TLB_ALL])
					continue;
				int64_t kmn = INT64_MAX, kmx = INT64_MIN, ksum = 0;
				for (unsigned r = 0; r < n; r++) {
					int64_t d = o->delta[r][i];
					kmn = d < kmn ? d : kmn;
					kmx = d > kmx ? d : kmx;
					ksum += d;
				}
				json_begin_object(w, counter_names[i]);
				json_key_i64(w, "min", kmn);
				json_key_i64(w, "max", kmx);
				json_key_double(w, "mean", (double)ksum / n);
				json_end_object(w);
			}
			json_end_object(w);
		}
		json_end_object(w);
	}
	json_end_object(w);
}

const struct workload_ops workload_lifecycle = {
	.name = "lifecycle",
	.description = "worker 0 runs each lifecycle operation (mprotect, madvise, msync, fork, exit, munmap, attach, "
		       "punch hole, truncate) while the others map the region; per operation its time, TLB flushes, "
		       "shootdown IPIs, lock contention and page-table pages",
	.params = {
		{ .name = "range", .type = WP_SIZE, .min = 4096, .max = UINT64_MAX, .default_value = "2M",
		  .help = "bytes at the region's start that MADV_DONTNEED and the hole punch cover" },
		{ .name = "spinners", .type = WP_UINT, .min = 0, .max = 4096, .default_value = "3",
		  .help = "workers 1..N busy-wait in user space during the operations (their CPUs then hold their mm; "
			  "spread them with --cpus); the rest sleep" },
		{ .name = "rounds", .type = WP_UINT, .min = 1, .max = LC_MAX_ROUNDS, .default_value = "1",
		  .help = "times the whole sequence runs (every worker touches the region again before each)" },
		{ .name = "touch-stride", .type = WP_SIZE, .min = 0, .max = UINT64_MAX, .default_value = "0",
		  .help = "each worker touches one page per this many bytes (0: every page), so that its page "
			  "tables span the region at less cost" },
		{ .name = "file", .type = WP_PATH, .max = LC_FILE_MAX, .default_value = "",
		  .help = "the file behind the region, for the hole punch and the truncate (default: found through "
			  "/proc/PID/map_files; the 2025 design's file is in none: name it, e.g. the backend's --path "
			  "FILE)" },
	},
	.counter_names = { "rounds", "ops_done", "ops_refused", "spinners", NULL },
	.config_bytes = sizeof(struct lc_config),
	.prepare = lc_prepare,
	.run = lc_run,
	.report = lc_report,
};
