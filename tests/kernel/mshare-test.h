/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the mshare conformance tests: detection (the tests skip
 * on a kernel without mshare and never issue syscalls 451/452 there), region
 * addresses, helper processes driven over pipes, /proc/meminfo and /dev/kmsg.
 *
 * The tests use the kernel's own harness, kselftest_harness.h of
 * linux-source-6.1 (FIXTURE, TEST_F, ASSERT_* / EXPECT_*, SKIP, TH_LOG;
 * tests/kernel/lib/kselftest-headers.sh puts it in build/kselftest).
 * Added here, on top of it:
 *   ASSERT_SYS(expr) / EXPECT_SYS(expr)   expr must not return -1 (logs errno)
 *   ASSERT_ERRNO(expr, E) / EXPECT_ERRNO  expr must fail (-1) with errno E
 *   SETUP_SKIP(fmt, ...)                  SKIP from a FIXTURE_SETUP
 *   mt_log(fmt, ...)                      a "# " line from code that has no
 *                                         _metadata (helper processes)
 *   MSHARE_TEST_MAIN                      TEST_HARNESS_MAIN with a name filter
 * In a helper process a test forks, report through the exit status, never
 * ASSERT_* / EXPECT_* (their longjmp lands in the harness's copy of the test):
 *   MT_CHILD_ERRNO(expr, E, code, fmt...) expr must fail with E, else return code
 *   mt_attach / mt_detach_on_u            attach on 'g', detach on 'u'
 *   mt_spawn / mt_spawn_sharer            a helper driven over pipes
 *   mt_run_child / mt_run_sharer          a one-shot helper, waited for
 * and for the fixtures: MT_SETUP_REGION (skip without mshare, the region's
 * address and name), mt_meminfo_kb / mt_proc_kb, mt_kmsg_open / _problems.
 */
#ifndef MSHARE_TEST_H
#define MSHARE_TEST_H

#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "kselftest_harness.h"
#include "mshare-uapi.h"
#include "proc-kb.h"

/* Logs from code outside a test function (no _metadata for TH_LOG). */
#define mt_log(fmt, ...) fprintf(stderr, "# " fmt "\n", ##__VA_ARGS__)

/* check is ASSERT or EXPECT; the texts are stringified before expansion */
#define MT_SYS(check, expr, text) do { \
	long mt_r_ = (long)(expr); \
	int mt_e_ = errno; \
	check##_NE(-1, mt_r_) TH_LOG("%s failed: %s", text, strerror(mt_e_)); \
} while (0)
#define ASSERT_SYS(expr) MT_SYS(ASSERT, expr, #expr)
#define EXPECT_SYS(expr) MT_SYS(EXPECT, expr, #expr)

#define MT_ERRNO(check, expr, err, text, errtext) do { \
	errno = 0; \
	long mt_r_ = (long)(expr); \
	int mt_e_ = errno; \
	check##_TRUE(mt_r_ == -1 && mt_e_ == (err)) \
		TH_LOG("expected %s to fail with %s, got %ld (%s)", text, errtext, mt_r_, \
		       mt_e_ ? strerror(mt_e_) : "no error"); \
} while (0)
#define ASSERT_ERRNO(expr, err) MT_ERRNO(ASSERT, expr, err, #expr, #err)
#define EXPECT_ERRNO(expr, err) MT_ERRNO(EXPECT, expr, err, #expr, #err)

/*
 * SKIP() in a FIXTURE_SETUP: the 6.1 harness runs the test body after a
 * skipped setup (later kernels stop there), so this ends the test process
 * the way the harness reports a skip (exit status 255; the reason is
 * already in its shared results).  Nothing is set up yet to tear down.
 */
#define SETUP_SKIP(fmt, ...) SKIP(_exit(255), fmt, ##__VA_ARGS__)

static inline void mt_log_errno(long r, int e, int want, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static inline void mt_log_errno(long r, int e, int want, const char *fmt, ...)
{
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	mt_log("%s: %ld (%s), want %s", what, r, e ? strerror(e) : "no error", strerror(want));
}

/* In a helper process (no ASSERT there): expr must fail with errno err;
 * otherwise this logs what it gave (the rest: a printf format saying what
 * expr is, and its arguments) and returns code from the calling function. */
#define MT_CHILD_ERRNO(expr, err, code, ...) do { \
	errno = 0; \
	long mt_r_ = (long)(expr); \
	int mt_e_ = errno; \
	if (mt_r_ != -1 || mt_e_ != (err)) { \
		mt_log_errno(mt_r_, mt_e_, err, __VA_ARGS__); \
		return code; \
	} \
} while (0)

/* Regions start at 2 TiB, as in the cover letter's example, one mshare unit
 * (PGDIR_SIZE) apart so that tests never overlap. */
#define MT_BASE (2UL << 40)

/* In a FIXTURE_SETUP: skips the test unless the kernel has mshare and
 * msharefs is mounted. */
#define REQUIRE_MSHARE(unitp) do { \
	if (!mshare_kernel_supported()) \
		SETUP_SKIP("kernel has no mshare (" MSHARE_SIZE_SYSCTL \
			   " missing or msharefs not registered)"); \
	if (!mshare_fs_mounted()) \
		SETUP_SKIP("msharefs is not mounted on " MSHARE_FS_DIR); \
	ASSERT_SYS(mshare_read_size_unit(unitp)); \
} while (0)

static inline unsigned long mt_region(unsigned long unit, int slot)
{
	return MT_BASE + (unsigned long)slot * unit;
}

/* In a FIXTURE_SETUP: skips the test without mshare; else fills in the
 * fixture's unit, the address of region slot `slot` and the region's name
 * (kt-TAG-PID). */
#define MT_SETUP_REGION(self, slot, tag) do { \
	REQUIRE_MSHARE(&(self)->unit); \
	(self)->addr = mt_region((self)->unit, slot); \
	mt_name((self)->name, sizeof((self)->name), tag); \
} while (0)

static inline void mt_name(char *buf, size_t len, const char *tag)
{
	snprintf(buf, len, "kt-%s-%d", tag, (int)getpid());
}

static inline void mt_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", MSHARE_FS_DIR, name);
}

static inline int mt_file_exists(const char *name)
{
	char path[512];

	mt_path(path, sizeof(path), name);
	return access(path, F_OK) == 0;
}

/* Maps len bytes of anonymous shared memory exactly at addr. */
static inline void *mt_map_anon_at(unsigned long addr, size_t len)
{
	return mmap((void *)addr, len, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
}

/* ---- helper processes driven by one-byte commands over two pipes ---- */

struct mt_peer {
	pid_t pid;
	int to_child;		/* parent writes commands */
	int from_child;		/* parent reads replies */
	int cmd_in;		/* in the child: commands */
	int reply_out;		/* in the child: replies */
};

/* The next byte from fd, or -1 at EOF (the other side went away). */
static inline int mt_read_byte(int fd)
{
	unsigned char c;

	for (;;) {
		ssize_t n = read(fd, &c, 1);

		if (n == 1)
			return c;
		if (n < 0 && errno == EINTR)
			continue;
		return -1;
	}
}

/* In the child: waits for the next command; returns it, or -1 when the
 * parent went away (EOF). */
static inline int mt_next(struct mt_peer *p)
{
	return mt_read_byte(p->cmd_in);
}

static inline void mt_reply(struct mt_peer *p, int c)
{
	unsigned char b = (unsigned char)c;

	if (write(p->reply_out, &b, 1) != 1)
		_exit(1);
}

/* Forks a helper that runs fn(peer, arg) and exits with its return value.
 * The helper starts right away: fn decides when to wait for commands. */
static inline int mt_spawn(struct mt_peer *p, int (*fn)(struct mt_peer *, void *), void *arg)
{
	int down[2], up[2];

	if (pipe(down) || pipe(up))
		return -1;
	fflush(stdout);
	p->pid = fork();
	if (p->pid < 0)
		return -1;
	if (p->pid == 0) {
		int lo, hi;

		close(down[1]);
		close(up[0]);
		/* Drop every other descriptor, in particular the command pipes
		 * of helpers forked earlier: they would never see EOF. */
		lo = down[0] < up[1] ? down[0] : up[1];
		hi = down[0] < up[1] ? up[1] : down[0];
		if (lo > 3)
			close_range(3, lo - 1, 0);
		if (hi > lo + 1)
			close_range(lo + 1, hi - 1, 0);
		close_range(hi + 1, ~0U, 0);
		p->cmd_in = down[0];
		p->reply_out = up[1];
		p->to_child = p->from_child = -1;
		_exit(fn(p, arg));
	}
	close(down[0]);
	close(up[1]);
	p->to_child = down[1];
	p->from_child = up[0];
	p->cmd_in = p->reply_out = -1;
	return 0;
}

/* In the parent: sends a command without waiting for the reply. */
static inline int mt_send(struct mt_peer *p, int cmd)
{
	unsigned char b = (unsigned char)cmd;

	return write(p->to_child, &b, 1) == 1 ? 0 : -1;
}

/* In the parent: the child's next one-byte reply, or -1 when it exited
 * without replying. */
static inline int mt_recv(struct mt_peer *p)
{
	return mt_read_byte(p->from_child);
}

/* In the parent: sends a command and returns the reply (-1: none). */
static inline int mt_ask(struct mt_peer *p, int cmd)
{
	if (mt_send(p, cmd) != 0)
		return -1;
	return mt_recv(p);
}

/* In the parent: closes the command pipe and reaps the child; returns the
 * raw wait status. */
static inline int mt_finish(struct mt_peer *p)
{
	int status = 0;

	if (p->to_child >= 0)
		close(p->to_child);
	if (p->from_child >= 0)
		close(p->from_child);
	p->to_child = p->from_child = -1;
	while (waitpid(p->pid, &status, 0) < 0 && errno == EINTR)
		;
	return status;
}

static inline int mt_exited_ok(int status)
{
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static inline void mt_log_status(const char *who, int status)
{
	if (WIFSIGNALED(status))
		mt_log("%s killed by signal %d (%s)", who, WTERMSIG(status), strsignal(WTERMSIG(status)));
	else if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
		mt_log("%s exited with status %d", who, WEXITSTATUS(status));
}

/* Writes `size` bytes (a multiple of 1 MiB) to a new file at `path`, the
 * first 8 bytes of page i being header(i, arg), and fsyncs it when `sync`
 * (its blocks are then allocated and written). 0, or -1 with errno. */
static inline int mt_write_pattern_file(const char *path, size_t size,
					uint64_t (*header)(unsigned long index, uint64_t arg), uint64_t arg, int sync)
{
	const size_t chunk = 1UL << 20, page = (size_t)sysconf(_SC_PAGESIZE);
	char *buf = calloc(1, chunk);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	int err = 0;

	if (fd < 0 || !buf) {
		free(buf);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	for (size_t off = 0; off < size && !err; off += chunk) {
		for (size_t p = 0; p < chunk; p += page)
			*(uint64_t *)(buf + p) = header((off + p) / page, arg);
		if (pwrite(fd, buf, chunk, off) != (ssize_t)chunk)
			err = -1;
	}
	if (!err && sync && fsync(fd) != 0)
		err = -1;
	free(buf);
	close(fd);
	return err;
}

/* Reads the region description from MSHARE_FS_DIR/<name>. */
static inline int mt_read_info(const char *name, struct mshare_info *info)
{
	char path[512];
	ssize_t n;
	int fd;

	mt_path(path, sizeof(path), name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, info, sizeof(*info));
	close(fd);
	if (n != (ssize_t)sizeof(*info)) {
		errno = n < 0 ? errno : EIO;
		return -1;
	}
	return 0;
}

/* In a helper process: waits for the command 'g' when p is given, then
 * attaches to the region `name` (its start and size from msharefs) with
 * oflag.  0, or the exit code of the step that failed: 10 another command,
 * 80 reading the msharefs file, 81 mshare(). */
static inline int mt_attach(struct mt_peer *p, const char *name, int oflag, struct mshare_info *info)
{
	if (p && mt_next(p) != 'g')
		return 10;
	if (mt_read_info(name, info) != 0) {
		mt_log("helper %d: reading %s/%s: %s", (int)getpid(), MSHARE_FS_DIR, name, strerror(errno));
		return 80;
	}
	if (mshare(name, info->start, info->size, oflag, 0) != 0) {
		mt_log("helper %d: mshare(%s, %s): %s", (int)getpid(), name,
		       (oflag & O_ACCMODE) == O_RDONLY ? "O_RDONLY" : "O_RDWR", strerror(errno));
		return 81;
	}
	return 0;
}

/* In a helper process: waits for 'u', detaches with mshare_unlink(name)
 * and replies 'u' (or 'e' when that failed).  0, or 16 for another
 * command. */
static inline int mt_detach_on_u(struct mt_peer *p, const char *name)
{
	if (mt_next(p) != 'u')
		return 16;
	mt_reply(p, mshare_unlink(name) == 0 ? 'u' : 'e');
	return 0;
}

/* A helper that attaches on 'g' (mt_attach) and then runs
 * fn(peer, region, arg): mt_spawn_sharer() forks it. */
typedef int (*mt_sharer_fn)(struct mt_peer *p, const struct mshare_info *region, void *arg);

struct mt_sharer_args {
	const char *name;
	int oflag;
	mt_sharer_fn fn;
	void *arg;
};

static inline int mt_sharer_main(struct mt_peer *p, void *arg)
{
	const struct mt_sharer_args *s = arg;
	struct mshare_info info;
	int rc = mt_attach(p, s->name, s->oflag, &info);

	return rc ? rc : s->fn(p, &info, s->arg);
}

/* Forks a helper that waits for 'g', attaches to the region `name` with
 * oflag and runs fn; it exits with fn's value (or mt_attach's exit code). */
static inline int mt_spawn_sharer(struct mt_peer *p, const char *name, int oflag, mt_sharer_fn fn, void *arg)
{
	struct mt_sharer_args s = { name, oflag, fn, arg };

	return mt_spawn(p, mt_sharer_main, &s);
}

/* Runs fn(arg) in a child, which exits with its value, and waits for it:
 * its wait status, -1 when it could not be forked. */
static inline int mt_run_child(int (*fn)(void *), void *arg)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
		_exit(fn(arg));
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return status;
}

/* What a one-shot sharer runs once attached (mt_run_sharer). */
typedef int (*mt_child_fn)(const struct mshare_info *region, void *arg);

struct mt_child_args {
	const char *name;
	int oflag;
	mt_child_fn fn;
	void *arg;
};

static inline int mt_child_main(void *arg)
{
	const struct mt_child_args *c = arg;
	struct mshare_info info;
	int rc = mt_attach(NULL, c->name, c->oflag, &info);

	return rc ? rc : c->fn(&info, c->arg);
}

/* Runs fn(region, arg) in a child attached to the region `name` with oflag
 * (mt_attach), which exits with fn's value (or mt_attach's exit code), and
 * waits for it (mt_run_child). */
static inline int mt_run_sharer(const char *name, int oflag, mt_child_fn fn, void *arg)
{
	struct mt_child_args c = { name, oflag, fn, arg };

	return mt_run_child(mt_child_main, &c);
}

/* ---- /proc/meminfo ---- */


static inline long mt_meminfo_kb(const char *field)
{
	/* the per-CPU counts folded in first (a test's PageTables delta of a
	 * few pages drowned in their lag: kernel-2025's file.ext4 read 36 kB
	 * where nothing was allocated) */
	mt_vmstat_refresh();
	return mt_proc_kb("/proc/meminfo", field);
}

/* ---- kernel log ---- */

/* Opens /dev/kmsg positioned after the records already logged, so that
 * mt_kmsg_problems() sees only what the test caused.  -1 when unavailable. */
static inline int mt_kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

/* Counts new kernel log records that report an oops, BUG, warning or bad
 * page, printing each; closes fd. */
static inline int mt_kmsg_problems(int fd)
{
	static const char *const bad[] = {
		"BUG", "Oops", "WARNING", "general protection", "Bad page",
		"Unable to handle", "Kernel panic", "refcount_t", "list_del corruption",
	};
	char rec[8192];
	int problems = 0;

	for (;;) {
		ssize_t n = read(fd, rec, sizeof(rec) - 1);

		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten records: keep reading */
		if (n <= 0)
			break;
		rec[n] = '\0';
		const char *msg = strchr(rec, ';');

		msg = msg ? msg + 1 : rec;
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			if (strstr(msg, bad[i])) {
				char *nl = strchr(msg, '\n');

				if (nl)
					*nl = '\0';
				mt_log("kernel log: %s", msg);
				problems++;
				break;
			}
		}
	}
	close(fd);
	return problems;
}

/*
 * main(): TEST_HARNESS_MAIN's, plus a filter, which the 6.1 harness has not:
 * argv[1], when given, keeps only the tests whose "fixture.test" name
 * contains it (KERNEL_TEST_FILTER of tests/kernel/conformance.sh).
 */
static inline void mt_filter_tests(const char *filter)
{
	char full[512];

	for (struct __fixture_metadata *f = __fixture_list; f; f = f->next) {
		struct __test_metadata *keep = NULL, *next;

		for (struct __test_metadata *t = f->tests; t; t = next) {
			next = t->next;
			snprintf(full, sizeof(full), "%s.%s", f->name, t->name);
			if (!strstr(full, filter))
				continue;
			/* the harness's list: next ends in NULL, only prev is circular */
			t->next = NULL;
			if (!keep) {
				keep = t;
				t->prev = t;
			} else {
				t->prev = keep->prev;
				keep->prev->next = t;
				keep->prev = t;
			}
		}
		f->tests = keep;
	}
}

#define MSHARE_TEST_MAIN \
	static void __attribute__((constructor)) __constructor_order_last(void) \
	{ \
		if (!__constructor_order) \
			__constructor_order = _CONSTRUCTOR_ORDER_BACKWARD; \
	} \
	int main(int argc, char **argv) \
	{ \
		if (argc > 1) \
			mt_filter_tests(argv[1]); \
		return test_harness_run(argc, argv); \
	}

#endif /* MSHARE_TEST_H */
