/* hugepool.c - per-size huge page pool via /sys/kernel/mm/hugepages, shared
 * safely between runs (a lock) and across deaths (a ledger): see hugepool.h.
 *
 * Ledger entry, one line, written to NAME.tmp and renamed over NAME:
 *   mshare-bench-hugepool 1 boot=BOOT_ID pid=PID start=TICKS page_kb=KB
 *   added=N pending=K from=P
 * N: pages the run added and still owes. K, P: a change of the pool being
 * made (K > 0 raising by K, K < 0 giving back -K) from a pool of P
 * persistent pages; 0 when none. Every write of nr_hugepages is preceded
 * by an entry saying what is about to change and followed by one saying
 * it is done, and all of it happens under the lock, so whoever takes the
 * lock after a death knows exactly what the dead run owes: N, plus (or
 * minus) the part of K the pool shows was made (nobody else changed the
 * pool in between: every holder of the lock recovers dead entries first).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "hugepool.h"
#include "procfs.h"

#define LOCK_TIMEOUT_S 300
#define LOCK_PROGRESS_S 5
#define LEDGER_MAGIC "mshare-bench-hugepool 1"

static volatile sig_atomic_t *stop_flag;

void hugepool_set_stop_flag(volatile sig_atomic_t *flag)
{
	stop_flag = flag;
}

/* Test hook: MSHARE_BENCH_KILL_AT=NAME makes the run SIGKILL itself at
 * the point NAME, so that tests can stop it at exactly the bad moment. */
static void kill_point(const char *name)
{
	const char *at = getenv("MSHARE_BENCH_KILL_AT");
	if (at && strcmp(at, name) == 0)
		raise(SIGKILL);
}

void hugepool_dir(size_t page_bytes, char *out, size_t len)
{
	snprintf(out, len, "/sys/kernel/mm/hugepages/hugepages-%zukB", page_bytes / 1024);
}

static int pool_read(size_t page_bytes, const char *file, long *v)
{
	char dir[128], path[192];
	hugepool_dir(page_bytes, dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return procfs_read_long(path, v);
}

long hugepool_available(size_t page_bytes)
{
	long free_pages, resv;
	if (pool_read(page_bytes, "free_hugepages", &free_pages) || pool_read(page_bytes, "resv_hugepages", &resv))
		return -1;
	return free_pages - resv;
}

/* Persistent pages: what writing nr_hugepages sets (it reads back with
 * the surplus pages included). -1 on error. */
static long pool_persistent(size_t page_bytes)
{
	long nr, surplus;
	if (pool_read(page_bytes, "nr_hugepages", &nr) || pool_read(page_bytes, "surplus_hugepages", &surplus))
		return -1;
	return nr - surplus;
}

/* --mem-policy bind/interleave: the pool grows on the policy's nodes. */
static bool obey_mempolicy;

void hugepool_obey_mempolicy(bool on)
{
	obey_mempolicy = on;
}

/* The file that sets the persistent count: nr_hugepages_mempolicy (the
 * kernel allocates and frees only on the nodes of the writer's memory
 * policy) when asked and present, else nr_hugepages (every node). */
static void pool_count_path(size_t page_bytes, char *path, size_t len)
{
	char dir[128];
	hugepool_dir(page_bytes, dir, sizeof(dir));
	snprintf(path, len, "%s/nr_hugepages_mempolicy", dir);
	if (!obey_mempolicy || access(path, W_OK) != 0)
		snprintf(path, len, "%s/nr_hugepages", dir);
}

static int pool_set(size_t page_bytes, long persistent)
{
	char path[192];
	pool_count_path(page_bytes, path, sizeof(path));
	return procfs_write_long(path, persistent);
}

/* --- ledger entries ---------------------------------------------------- */

struct entry {
	char boot[40];
	long pid;
	unsigned long long start;
	unsigned long page_kb;
	long added, pending, from;
};

static void boot_id(char *out, size_t len)
{
	char buf[64];
	if (procfs_read("/proc/sys/kernel/random/boot_id", buf, sizeof(buf)) < 0)
		snprintf(buf, sizeof(buf), "unknown");
	buf[strcspn(buf, "\n")] = '\0';
	snprintf(out, len, "%.36s", buf);
}

/* Start time (clock ticks after boot) and state letter of pid; -1 if there
 * is no such process. */
static int proc_start(long pid, unsigned long long *start, char *state)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if (procfs_read(path, buf, sizeof(buf)) < 0)
		return -1;
	char *p = strrchr(buf, ')'); /* the command name may hold anything */
	if (!p)
		return -1;
	p++;
	/* Fields after the name: 3 state ... 22 starttime. */
	char *save = NULL, *tok = strtok_r(p, " ", &save);
	for (int field = 3; tok; field++, tok = strtok_r(NULL, " ", &save)) {
		if (field == 3)
			*state = tok[0];
		if (field == 22) {
			*start = strtoull(tok, NULL, 10);
			return 0;
		}
	}
	return -1;
}

/* The run of the entry is still running: same pid, same start time, not
 * a zombie (a zombie has closed its files: its pages are back). */
static bool entry_alive(const struct entry *e)
{
	unsigned long long start;
	char state = '?';
	return proc_start(e->pid, &start, &state) == 0 && start == e->start && state != 'Z' && state != 'X';
}

static int entry_write(const char *path, const struct entry *e)
{
	char tmp[300], line[256];
	int n = snprintf(line, sizeof(line), LEDGER_MAGIC " boot=%s pid=%ld start=%llu page_kb=%lu added=%ld pending=%ld from=%ld\n",
			 e->boot, e->pid, e->start, e->page_kb, e->added, e->pending, e->from);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -1;
	fchmod(fd, 0644); /* whatever the umask: users who are not root read it */
	ssize_t w = write(fd, line, (size_t)n);
	int e_w = errno;
	if (close(fd) != 0 || w != n) {
		unlink(tmp);
		errno = w < 0 ? e_w : ENOSPC;
		return -1;
	}
	if (rename(tmp, path) != 0) {
		int e_r = errno;
		unlink(tmp);
		errno = e_r;
		return -1;
	}
	return 0;
}

static int entry_read(const char *path, struct entry *e)
{
	char buf[512], rest[8];
	if (procfs_read(path, buf, sizeof(buf)) < 0)
		return -1;
	int n = sscanf(buf, LEDGER_MAGIC " boot=%39s pid=%ld start=%llu page_kb=%lu added=%ld pending=%ld from=%ld %7s",
		       e->boot, &e->pid, &e->start, &e->page_kb, &e->added, &e->pending, &e->from, rest);
	if (n != 7 || e->pid <= 0 || e->page_kb == 0 || e->added < 0 || e->from < 0)
		return -1;
	return 0;
}

/* --- the lock ------------------------------------------------------------ */

/* Root: open the lock file, a regular file of root's, mode 0600. One that
 * others could open (an earlier version made it 0644, and a descriptor
 * opened then lives on) is replaced by a new one, renamed over it. */
static int root_lock_open(char *err, size_t err_len)
{
	struct stat st;
	int fd = open(HUGEPOOL_LOCK, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);

	if (fd >= 0 && fstat(fd, &st) == 0 && (st.st_uid != 0 || !S_ISREG(st.st_mode))) {
		snprintf(err, err_len, "refusing the hugepage pool lock %s: not a regular file of root's",
			 HUGEPOOL_LOCK);
		close(fd);
		return -1;
	}
	if (fd >= 0 && (st.st_mode & 077)) {
		char tmp[sizeof(HUGEPOOL_LOCK) + 32];
		snprintf(tmp, sizeof(tmp), "%s.new.%d", HUGEPOOL_LOCK, (int)getpid());
		int nfd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (nfd >= 0 && fchmod(nfd, 0600) == 0 && rename(tmp, HUGEPOOL_LOCK) == 0) {
			close(fd);
			fd = nfd;
		} else {
			if (nfd >= 0) {
				unlink(tmp);
				close(nfd);
			}
			snprintf(err, err_len, "cannot replace the hugepage pool lock %s, which other users can "
					       "open: %s", HUGEPOOL_LOCK, strerror(errno));
			close(fd);
			return -1;
		}
	}
	if (fd < 0)
		snprintf(err, err_len, "cannot open the hugepage pool lock %s: %s", HUGEPOOL_LOCK, strerror(errno));
	return fd;
}

/* The descriptor's file is (still) the one at HUGEPOOL_LOCK: a lock taken
 * on a file replaced meanwhile locks nothing. */
static bool lock_is_current(int fd)
{
	struct stat a, b;
	return fstat(fd, &a) == 0 && stat(HUGEPOOL_LOCK, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* Take the lock into c->lock_fd. honour_stop: give up when a stop was
 * requested (not when giving pages back, which must still happen). */
static int lock_take(struct hugepool_claim *c, bool honour_stop, char *err, size_t err_len)
{
	int fd;

	if (geteuid() == 0) {
		/* The directories are root's and only root writes them; users
		 * who are not root read the ledger. */
		const char *dirs[] = { HUGEPOOL_STATE_DIR, HUGEPOOL_LEDGER_DIR };
		for (int i = 0; i < 2; i++) {
			struct stat st;
			if (mkdir(dirs[i], 0755) == 0)
				chmod(dirs[i], 0755);
			else if (errno != EEXIST) {
				snprintf(err, err_len, "cannot create %s: %s", dirs[i], strerror(errno));
				return -1;
			}
			if (lstat(dirs[i], &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != 0 ||
			    (st.st_mode & 022)) {
				snprintf(err, err_len, "refusing the hugepage pool state in %s: not a directory "
						       "that only root can write (owner %d, mode %03o)", dirs[i],
					 (int)st.st_uid, (unsigned)(st.st_mode & 0777));
				return -1;
			}
		}
		/* The lock is root's alone (0600): flock() works on any
		 * descriptor, so a lock file others can open is a lock any
		 * local user can hold, stalling every hugetlb run. */
		fd = root_lock_open(err, err_len);
		if (fd < 0)
			return -1;
	} else {
		/* Users who are not root cannot open the lock (0600) and take
		 * none: they never change the pool, only use its free pages. */
		fd = open(HUGEPOOL_LOCK, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0 && (errno == ENOENT || errno == EACCES))
			return 0;
	}
	if (fd < 0) {
		snprintf(err, err_len, "cannot open the hugepage pool lock %s: %s", HUGEPOOL_LOCK, strerror(errno));
		return -1;
	}
	uint64_t t0 = clock_now_ns(), next_note = LOCK_PROGRESS_S;
	while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		uint64_t waited = (clock_now_ns() - t0) / 1000000000ull;
		if ((errno != EWOULDBLOCK && errno != EINTR) || waited >= LOCK_TIMEOUT_S ||
		    (honour_stop && stop_flag && *stop_flag)) {
			snprintf(err, err_len, "%s the hugepage pool lock %s%s",
				 honour_stop && stop_flag && *stop_flag ? "interrupted while waiting for"
				 : errno == EWOULDBLOCK ? "gave up after " "300 s waiting for" : "cannot take",
				 HUGEPOOL_LOCK,
				 errno == EWOULDBLOCK ? " (held by another run all that time)" : "");
			close(fd);
			return -1;
		}
		if (waited >= next_note) {
			fprintf(stderr, "mshare-bench: waiting for the hugepage pool lock %s (another run is changing "
					"the pool): %llu s\n", HUGEPOOL_LOCK, (unsigned long long)waited);
			next_note += LOCK_PROGRESS_S;
		}
		struct timespec nap = { 0, 50 * 1000000 };
		nanosleep(&nap, NULL);
	}
	if (geteuid() == 0 && !lock_is_current(fd)) {
		/* Replaced (root_lock_open) while this run waited: again. */
		close(fd);
		return lock_take(c, honour_stop, err, err_len);
	}
	c->lock_fd = fd;
	return 0;
}

void hugepool_unlock(struct hugepool_claim *c)
{
	if (c->lock_fd >= 0) {
		flock(c->lock_fd, LOCK_UN);
		close(c->lock_fd);
		c->lock_fd = -1;
	}
}

/* --- giving back what dead runs left (lock held) ------------------------ */

static void note(FILE *report, const char *prefix, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void note(FILE *report, const char *prefix, const char *fmt, ...)
{
	va_list ap;
	if (!report)
		return;
	fputs(prefix, report);
	va_start(ap, fmt);
	vfprintf(report, fmt, ap);
	va_end(ap);
	fputc('\n', report);
}

/* One dead run's entry: settle its pending change, give back what is free
 * of what it owes. Returns 1 if something is still owed, else 0. */
static int recover_entry(const char *path, struct entry *e, FILE *report, const char *prefix)
{
	size_t page = (size_t)e->page_kb * 1024;
	long now = pool_persistent(page);

	if (now < 0) {
		note(report, prefix, "ledger entry %s is for a %lu kB pool this kernel lacks; removed", path, e->page_kb);
		unlink(path);
		return 0;
	}
	/* What of the pending change the pool shows was made. */
	if (e->pending > 0) {
		long made = now - e->from;
		e->added += made < 0 ? 0 : made > e->pending ? e->pending : made;
	} else if (e->pending < 0) {
		long made = e->from - now;
		made = made < 0 ? 0 : made > -e->pending ? -e->pending : made;
		e->added -= made < e->added ? made : e->added;
	}
	e->pending = 0;
	/* A run cannot own more pages than the pool holds: when someone shrank
	 * the pool by hand (echo 0 > nr_hugepages) after the run died, the
	 * rest is already gone, and an entry that waits for it would wait for
	 * ever (and speak on every later run). */
	if (e->added > now) {
		note(report, prefix, "run %ld (dead) had added %ld huge pages of %lu kB; the pool holds only %ld now "
			     "(shrunk by someone else): %ld of them are gone already",
		     e->pid, e->added, e->page_kb, now, e->added - now);
		e->added = now;
	}
	if (e->added == 0) {
		unlink(path);
		return 0;
	}
	long avail = hugepool_available(page);
	long give = avail < 0 ? 0 : avail < e->added ? avail : e->added;
	long owed = e->added;
	if (give > 0) {
		e->pending = -give;
		e->from = now;
		kill_point("hugepool-giving");
		if (entry_write(path, e) != 0 || pool_set(page, now - give) != 0) {
			note(report, prefix, "cannot give back the %ld huge pages of %lu kB left by dead run %ld (%s): %s",
			     owed, e->page_kb, e->pid, path, strerror(errno));
			return 1;
		}
		kill_point("hugepool-given");
		long after = pool_persistent(page);
		long made = after >= 0 && after <= now ? now - after : 0;
		e->added -= made;
		e->pending = 0;
		give = made;
	}
	if (e->added == 0) {
		unlink(path);
		note(report, prefix, "gave back %ld huge pages of %lu kB that run %ld (dead) had added to the pool "
			     "(nr_hugepages %ld -> %ld)", give, e->page_kb, e->pid, now, now - give);
		return 0;
	}
	entry_write(path, e);
	note(report, prefix, "run %ld (dead) added %ld huge pages of %lu kB; %ld given back, %ld still in use "
		     "(by its workers?), left in %s for the next run or `mshare-bench cleanup`",
	     e->pid, owed, e->page_kb, give, e->added, path);
	return 1;
}

/* The path of the next file in the ledger directory d (names starting with
 * '.' skipped) into path; 0 when there is none (or d is NULL). */
static int ledger_next(DIR *d, char *path, size_t len)
{
	struct dirent *de;

	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.') {
			snprintf(path, len, "%s/%s", HUGEPOOL_LEDGER_DIR, de->d_name);
			return 1;
		}
	return 0;
}

/* What a ledger entry is, seen from this boot. */
enum ledger_state {
	LEDGER_TMP,        /* a write cut short: the entry itself is intact */
	LEDGER_UNREADABLE,
	LEDGER_OLD_BOOT,   /* the pool was reset by the reboot */
	LEDGER_LIVE,       /* its run is still going */
	LEDGER_DEAD,       /* its run died owing the pool */
};

static enum ledger_state ledger_classify(const char *path, const char *my_boot, struct entry *e)
{
	size_t plen = strlen(path);

	if (plen > 4 && strcmp(path + plen - 4, ".tmp") == 0)
		return LEDGER_TMP;
	if (entry_read(path, e) != 0)
		return LEDGER_UNREADABLE;
	if (strcmp(e->boot, my_boot) != 0)
		return LEDGER_OLD_BOOT;
	return entry_alive(e) ? LEDGER_LIVE : LEDGER_DEAD;
}

/* Settle every dead run's entry. Returns the number still owing. */
static int recover_locked(FILE *report, const char *prefix)
{
	DIR *d = opendir(HUGEPOOL_LEDGER_DIR);
	char my_boot[40], path[512];
	int left = 0;

	if (!d)
		return 0;
	boot_id(my_boot, sizeof(my_boot));
	while (ledger_next(d, path, sizeof(path))) {
		struct entry e;

		switch (ledger_classify(path, my_boot, &e)) {
		case LEDGER_TMP:
		case LEDGER_OLD_BOOT:
			unlink(path);
			break;
		case LEDGER_UNREADABLE:
			note(report, prefix, "ledger entry %s is unreadable; left alone (remove it by hand once the pool "
					     "is right)", path);
			left++;
			break;
		case LEDGER_LIVE:
			break;
		case LEDGER_DEAD:
			left += recover_entry(path, &e, report, prefix);
			break;
		}
	}
	closedir(d);
	return left;
}

/* Entries in the ledger that are not live runs' (dead, unreadable, of an
 * earlier boot, temporary files), read without locking. */
static int ledger_unsettled(void)
{
	DIR *d = opendir(HUGEPOOL_LEDGER_DIR);
	char my_boot[40], path[512];
	int n = 0;

	if (!d)
		return 0;
	boot_id(my_boot, sizeof(my_boot));
	while (ledger_next(d, path, sizeof(path))) {
		struct entry e;

		n += ledger_classify(path, my_boot, &e) != LEDGER_LIVE;
	}
	closedir(d);
	return n;
}

int hugepool_recover(FILE *report, const char *prefix)
{
	struct hugepool_claim c;
	char err[256];

	/* Only live runs' entries (or none): nothing to do, no lock to wait for. */
	if (ledger_unsettled() == 0)
		return 0;
	if (geteuid() != 0) {
		/* Cannot change the pool: say what is left, if anything is dead. */
		DIR *d = opendir(HUGEPOOL_LEDGER_DIR);
		char path[512];
		int dead = 0;
		while (ledger_next(d, path, sizeof(path))) {
			struct entry e;
			if (entry_read(path, &e) == 0 && !entry_alive(&e)) {
				note(report, prefix, "run %ld (dead) left %ld huge pages of %lu kB in the pool; "
						     "`mshare-bench cleanup` as root gives them back", e.pid, e.added, e.page_kb);
				dead++;
			}
		}
		if (d)
			closedir(d);
		return dead;
	}
	hugepool_claim_init(&c, 0);
	if (lock_take(&c, false, err, sizeof(err)) != 0) {
		note(report, prefix, "%s", err);
		return -1;
	}
	int left = recover_locked(report, prefix);
	hugepool_unlock(&c);
	return left;
}

/* --- one run's claim ----------------------------------------------------- */

void hugepool_claim_init(struct hugepool_claim *c, size_t page_bytes)
{
	memset(c, 0, sizeof(*c));
	c->page_bytes = page_bytes;
	c->lock_fd = -1;
}

int hugepool_lock(struct hugepool_claim *c, char *err, size_t err_len)
{
	if (lock_take(c, true, err, err_len) != 0)
		return -1;
	if (c->lock_fd >= 0 && geteuid() == 0)
		recover_locked(stderr, "mshare-bench: ");
	return 0;
}

/* This run's entry, filled with its identity. */
static int claim_entry(struct hugepool_claim *c, struct entry *e)
{
	char state;
	memset(e, 0, sizeof(*e));
	boot_id(e->boot, sizeof(e->boot));
	e->pid = (long)getpid();
	if (proc_start(e->pid, &e->start, &state) != 0)
		return -1;
	e->page_kb = (unsigned long)(c->page_bytes / 1024);
	e->added = c->added;
	if (!c->ledger[0])
		snprintf(c->ledger, sizeof(c->ledger), "%s/%ld-%llu-%lukB", HUGEPOOL_LEDGER_DIR, e->pid, e->start,
			 e->page_kb);
	return 0;
}

int hugepool_reserve(struct hugepool_claim *c, long pages, char *err, size_t err_len)
{
	char dir[128], path[192];
	size_t page = c->page_bytes;
	long avail = hugepool_available(page);
	struct entry e;

	hugepool_dir(page, dir, sizeof(dir));
	pool_count_path(page, path, sizeof(path));
	if (avail < 0) {
		snprintf(err, err_len, "no pool of %zu kB huge pages on this kernel (%s missing)", page / 1024, dir);
		return -1;
	}
	if (avail >= pages)
		return 0;
	long want = pages - avail;
	long before = pool_persistent(page);
	if (before < 0) {
		snprintf(err, err_len, "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	if (c->lock_fd < 0 || access(path, W_OK) != 0) {
		snprintf(err, err_len, "the run needs %ld huge pages of %zu kB, %ld are free, and %s is not writable "
			 "(needs root)", pages, page / 1024, avail, path);
		return -1;
	}
	/* The ledger says what is about to change before it changes. */
	if (claim_entry(c, &e) != 0) {
		snprintf(err, err_len, "cannot read this run's start time from /proc/self/stat");
		return -1;
	}
	e.pending = want;
	e.from = before;
	if (entry_write(c->ledger, &e) != 0) {
		snprintf(err, err_len, "cannot write the hugepage ledger entry %s: %s", c->ledger, strerror(errno));
		return -1;
	}
	kill_point("hugepool-ledger");
	int werr = pool_set(page, before + want) != 0 ? errno : 0;
	kill_point("hugepool-raised");
	long now = pool_persistent(page);
	long got = now > before ? now - before : 0;
	if (got > want)
		got = want;
	if (werr || hugepool_available(page) < pages) {
		/* Give back the part we got; the run cannot go ahead. */
		if (got > 0)
			pool_set(page, before);
		long back = pool_persistent(page);
		got = back > before ? back - before : 0;
		e.added = c->added + got; /* normally c->added: all of it given back */
		e.pending = 0;
		if (e.added == 0)
			unlink(c->ledger);
		else
			entry_write(c->ledger, &e);
		c->added = e.added;
		if (werr)
			snprintf(err, err_len, "cannot raise %s from %ld to %ld: %s", path, before, before + want,
				 strerror(werr));
		else
			snprintf(err, err_len,
				 "the kernel could supply only %ld of the %ld extra %zu kB huge pages this run needs "
				 "(%ld needed, %ld were free; %s stays at %ld)",
				 now - before, want, page / 1024, pages, avail, path, before);
		return -1;
	}
	c->added += got;
	e.added = c->added;
	e.pending = 0;
	entry_write(c->ledger, &e);
	kill_point("hugepool-added");
	return 0;
}

int hugepool_lock_to_release(struct hugepool_claim *c)
{
	char err[256];

	if (c->added <= 0 || c->lock_fd >= 0)
		return 0;
	if (lock_take(c, false, err, sizeof(err)) != 0) {
		fprintf(stderr, "mshare-bench: %s\n", err);
		return -1;
	}
	return 0;
}

void hugepool_release(struct hugepool_claim *c)
{
	char err[256];
	struct entry e;

	if (c->added <= 0) {
		if (c->ledger[0])
			unlink(c->ledger);
		c->ledger[0] = '\0';
		hugepool_unlock(c);
		return;
	}
	if (c->lock_fd < 0) {
		if (lock_take(c, false, err, sizeof(err)) != 0) {
			fprintf(stderr, "mshare-bench: %s; the %ld huge pages this run added stay in the pool and in %s "
					"for the next run or `mshare-bench cleanup`\n", err, c->added, c->ledger);
			return;
		}
	}
	kill_point("hugepool-release");
	size_t page = c->page_bytes;
	long now = pool_persistent(page), avail = hugepool_available(page);
	/* Never below what others hold: only free, unreserved pages go. */
	long give = avail < 0 || now < 0 ? 0 : avail < c->added ? avail : c->added;
	if (give > 0 && claim_entry(c, &e) == 0) {
		e.pending = -give;
		e.from = now;
		if (entry_write(c->ledger, &e) == 0 && pool_set(page, now - give) == 0) {
			kill_point("hugepool-given");
			long after = pool_persistent(page);
			c->added -= after >= 0 && after <= now ? now - after : 0;
		}
	}
	if (c->added == 0) {
		unlink(c->ledger);
		c->ledger[0] = '\0';
	} else if (claim_entry(c, &e) == 0) {
		entry_write(c->ledger, &e);
		fprintf(stderr, "mshare-bench: %ld of the huge pages this run added are in use by others and stay in "
				"the pool; %s keeps them for the next run or `mshare-bench cleanup`\n", c->added, c->ledger);
	}
	hugepool_unlock(c);
}

/* --- mshare-bench cleanup ---------------------------------------------- */

int hugepool_cleanup_main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			printf("usage: mshare-bench cleanup\n"
			       "\n"
			       "Give back to the kernel the huge pages that runs killed before they could\n"
			       "(SIGKILL, a crash) added to the hugepage pool. Each hugetlb run that raises\n"
			       "nr_hugepages records what it added in %s/ (one file per run);\n"
			       "an entry whose process is gone (pid and start time no longer match a\n"
			       "running process) is settled: the pages that are free are given back, pages\n"
			       "still in use stay in the ledger. Live runs are left alone. Every run does\n"
			       "this too before it starts. Needs root to change the pool.\n"
			       "\n"
			       "Exit status: 0 nothing left by dead runs; 1 something could not be given\n"
			       "back (named on stderr); 2 bad usage.\n",
			       HUGEPOOL_LEDGER_DIR);
			return 0;
		}
		fprintf(stderr, "mshare-bench cleanup: unexpected argument '%s' (it takes none)\n", argv[i]);
		return 2;
	}
	int left = hugepool_recover(stdout, "mshare-bench cleanup: ");
	if (left < 0)
		return 1;
	if (left > 0) {
		fprintf(stderr, "mshare-bench cleanup: %d ledger %s in %s could not be settled (see above)%s\n", left,
			left == 1 ? "entry" : "entries", HUGEPOOL_LEDGER_DIR,
			geteuid() != 0 ? "; run it as root" : "");
		return 1;
	}
	printf("mshare-bench cleanup: no huge pages left by dead runs\n");
	return 0;
}
