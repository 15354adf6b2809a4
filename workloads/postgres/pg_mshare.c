/* pg_mshare.c - LD_PRELOAD library: PostgreSQL's main shared memory on mshare.
 *
 * PostgreSQL (15, mmap shared_memory_type, the default) creates its main
 * shared memory in the postmaster with one
 *     mmap(NULL, size, PROT_READ|PROT_WRITE, MAP_SHARED|MAP_ANONYMOUS, -1, 0)
 * and forks every backend, which inherits it. This library, loaded into the
 * postmaster with LD_PRELOAD, recognises that call and instead
 *   1. backs the segment with a file in PGMSHARE_DIR (an fsdax mount; or
 *      shared anonymous memory with PGMSHARE_BACKING=shmem),
 *   2. maps it at a 512 GiB-aligned address (PGMSHARE_ADDR, default 2 TiB),
 *   3. declares the whole mshare unit around it shared as the donor:
 *      mshare(name, addr, unit, O_CREAT|O_RDWR|O_EXCL, 0600), and removes the
 *      backing file's name at once (the mapping holds the file),
 * and returns that address to PostgreSQL. Shared VMAs are not inherited
 * across fork in this port, so a pthread_atfork() child handler attaches
 * every forked child as a consumer at the same address before fork()
 * returns in it (before PostgreSQL can touch the segment).
 *
 * Recognition of the main segment (all must hold, else the call goes to the
 * kernel untouched): flags are MAP_SHARED|MAP_ANONYMOUS (MAP_NORESERVE
 * allowed), no address hint, fd -1, offset 0, PROT_READ|PROT_WRITE, length
 * at least PGMSHARE_MIN_SIZE (default 1 MiB), the executable is
 * PGMSHARE_PROGRAM (default "postgres", from /proc/self/exe), the process is
 * not a child forked after the library loaded (i.e. it is the postmaster or
 * a stand-alone postgres), and no segment of ours is live in it.
 *
 * Also intercepted:
 *   - mmap with MAP_HUGETLB of the same shape: refused (EINVAL) with a
 *     message; hugetlbfs mappings cannot be donated. huge_pages=try then
 *     falls back to the mmap above; huge_pages=on fails to start.
 *   - munmap of the segment (PostgreSQL's AnonymousShmemDetach at shutdown
 *     and before a crash restart): mshare_unlink(name) instead; a partial
 *     munmap of it is EINVAL.
 *   - shmget of PGMSHARE_MIN_SIZE or more in that process
 *     (shared_memory_type=sysv): refused (EINVAL) with a message; the small
 *     SysV interlock segment PostgreSQL always creates passes through.
 * Lifetime: a process that still holds the segment at exit() detaches
 * (mshare_unlink in a destructor). For crashes, the postmaster forks (twice,
 * so it is never its child) a reaper holding the read end of a pipe whose
 * write end the postmaster and every process forked from it inherit: when
 * all of them are gone, however they died, the reaper unlinks every name
 * "pg-mshare-<postmaster pid>-*" left in /sys/fs/mshare and removes any
 * backing file of that prefix left in PGMSHARE_DIR.
 *
 * PGMSHARE_DESIGN=2025 (mode mshare-2025-dax; default 2022): the 2025
 * design (series v3, the mshare-2025 kernel) instead: the DAX backing file
 * is mapped into a new msharefs region file (open, ftruncate to the
 * alignment in mshare_info, ioctl MSHAREFS_CREATE_MAPPING) and the region
 * is mmap()ed at the address in the postmaster; forked backends inherit
 * the mapping (no attach); munmap unmaps the whole region and the
 * postmaster removes the region file (segment_create_2025 below).
 *
 * When the kernel has no mshare (checked as harness/mshare_detect.c does:
 * /proc/sys/vm/mshare_size and msharefs in /proc/filesystems, never by trying
 * syscall numbers) or anything in the set-up fails, the mmap fails with a
 * message on stderr ("pg-mshare: FATAL: ...") and PostgreSQL refuses to
 * start; nothing falls back to plain shared memory.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../harness/linux_compat.h"
#include "../../harness/mshare_detect.h"
#include "../../kernel/include/mshare-uapi.h"
#include "../../kernel/include/msharefs-uapi.h"

#define DEFAULT_ADDR 0x20000000000UL /* 2 TiB: a whole PGD slot of its own */
#define DEFAULT_DIR "/mnt/pmem"
#define DEFAULT_MIN_SIZE (1UL << 20)
#define NAME_PREFIX "pg-mshare-"
#define MAX_UNLINKS 1000000

static struct {
	bool active;       /* this executable is the one to serve */
	bool child;        /* forked after the library loaded */
	bool in_own_fork;  /* forking the reaper: no attach */
	bool live;         /* a segment of ours is mapped here */
	bool shmem;        /* PGMSHARE_BACKING=shmem */
	bool v2025;        /* PGMSHARE_DESIGN=2025: an msharefs region file */
	char name[64];
	char region_path[sizeof(MSHAREFS_DIR) + 64]; /* 2025: the region file */
	size_t region_bytes; /* 2025: the region's size (what is mapped) */
	char dir[PATH_MAX];
	uintptr_t addr;    /* 0: PGMSHARE_ADDR was bad (message in bad_env) */
	size_t size;
	size_t min_size;
	unsigned long unit;
	unsigned gen;
	pid_t owner;       /* pid of the donor (postmaster) */
	int reaper_fd;     /* write end held by the postmaster and its children */
	char bad_env[200];
} st = { .reaper_fd = -1 };

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n = snprintf(buf, sizeof(buf), "pg-mshare[%ld]: ", (long)getpid());

	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(2, buf, (size_t)n) < 0) {
		/* nothing else to report it on */
	}
}

static void *real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

static int real_munmap(void *addr, size_t len)
{
	return (int)syscall(SYS_munmap, addr, len);
}

static bool parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return false;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	default: break;
	}
	if (*end)
		return false;
	*out = (size_t)v;
	return true;
}

static void atfork_child(void);

__attribute__((constructor)) static void pg_mshare_init(void)
{
	char exe[PATH_MAX];
	const char *prog = getenv("PGMSHARE_PROGRAM");
	const char *e;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const char *base;

	if (n <= 0)
		return;
	exe[n] = '\0';
	base = strrchr(exe, '/');
	base = base ? base + 1 : exe;
	if (strcmp(base, prog && *prog ? prog : "postgres") != 0)
		return;
	st.active = true;
	st.min_size = DEFAULT_MIN_SIZE;
	st.addr = DEFAULT_ADDR;
	snprintf(st.dir, sizeof(st.dir), "%s", DEFAULT_DIR);
	if ((e = getenv("PGMSHARE_DIR")) && *e)
		snprintf(st.dir, sizeof(st.dir), "%s", e);
	if ((e = getenv("PGMSHARE_MIN_SIZE")) && *e && !parse_size(e, &st.min_size))
		snprintf(st.bad_env, sizeof(st.bad_env), "PGMSHARE_MIN_SIZE '%s' is not a size", e);
	if ((e = getenv("PGMSHARE_ADDR")) && *e) {
		size_t a;

		if (!parse_size(e, &a) || a == 0)
			snprintf(st.bad_env, sizeof(st.bad_env), "PGMSHARE_ADDR '%s' is not an address", e);
		else
			st.addr = a;
	}
	if ((e = getenv("PGMSHARE_DESIGN")) && *e) {
		if (strcmp(e, "2025") == 0)
			st.v2025 = true;
		else if (strcmp(e, "2022") != 0)
			snprintf(st.bad_env, sizeof(st.bad_env),
				 "PGMSHARE_DESIGN '%s' (expected 2022 or 2025)", e);
	}
	if ((e = getenv("PGMSHARE_BACKING")) && *e) {
		if (strcmp(e, "shmem") == 0)
			st.shmem = true;
		else if (strcmp(e, "dax") != 0)
			snprintf(st.bad_env, sizeof(st.bad_env),
				 "PGMSHARE_BACKING '%s' (expected dax or shmem)", e);
	}
	pthread_atfork(NULL, NULL, atfork_child);
}

/* Attach a freshly forked child as a consumer at the same address. */
static void atfork_child(void)
{
	char path[128];
	struct mshare_info info;
	ssize_t n;
	int fd;

	st.child = true;
	/* 2025 design: the child inherited the region's mapping (its first
	 * touch links the region's page tables); nothing to attach. */
	if (!st.live || st.in_own_fork || st.v2025)
		return;
	snprintf(path, sizeof(path), "%s/%s", MSHARE_FS_DIR, st.name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		say("FATAL: forked child cannot open %s: %s", path, strerror(errno));
		abort();
	}
	n = read(fd, &info, sizeof(info));
	close(fd);
	if (n != (ssize_t)sizeof(info) || info.start != st.addr) {
		say("FATAL: %s: read %zd bytes, start 0x%lx (expected %zu bytes, 0x%lx)", path, n,
		    n == (ssize_t)sizeof(info) ? info.start : 0UL, sizeof(info), (unsigned long)st.addr);
		abort();
	}
	if (mshare(st.name, info.start, info.size, O_RDWR, 0600) != 0) {
		say("FATAL: forked child cannot attach to mshare region %s at 0x%lx: %s", st.name,
		    info.start, strerror(errno));
		abort();
	}
}

/* The reaper: waits until every holder of the pipe's write end is gone,
 * then removes whatever the postmaster `owner` left behind. */
static void reaper_main(int rfd, pid_t owner)
{
	char prefix[64], path[PATH_MAX + 300], buf;
	struct dirent *d;
	DIR *dir;

	setsid();
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	prctl(PR_SET_NAME, "pg-mshare-reap", 0, 0, 0);
	if (chdir("/") != 0) {
		/* not needed for anything below */
	}
	/* Keep only the pipe and stderr (the server log). */
	for (int fd = 0; fd < 1024; fd++)
		if (fd != rfd && fd != 2)
			close(fd);
	for (;;) {
		ssize_t r = read(rfd, &buf, 1);

		if (r == 0 || (r < 0 && errno != EINTR))
			break;
	}
	snprintf(prefix, sizeof(prefix), NAME_PREFIX "%ld-", (long)owner);
	/* 2025 design: a region is a file; its name goes with unlink(). */
	if (st.v2025 && (dir = opendir(MSHAREFS_DIR))) {
		while ((d = readdir(dir))) {
			if (strncmp(d->d_name, prefix, strlen(prefix)) != 0)
				continue;
			snprintf(path, sizeof(path), "%s/%s", MSHAREFS_DIR, d->d_name);
			if (unlink(path) == 0)
				say("reaper: removed msharefs region %s left by postmaster %ld", path, (long)owner);
		}
		closedir(dir);
	} else if (!st.v2025 && mshare_kernel_supported() && (dir = opendir(MSHARE_FS_DIR))) {
		while ((d = readdir(dir))) {
			long i;

			if (strncmp(d->d_name, prefix, strlen(prefix)) != 0)
				continue;
			for (i = 0; i < MAX_UNLINKS; i++)
				if (mshare_unlink(d->d_name) != 0)
					break;
			if (i > 0)
				say("reaper: removed mshare region %s left by postmaster %ld", d->d_name,
				    (long)owner);
		}
		closedir(dir);
	}
	if (!st.shmem && (dir = opendir(st.dir))) {
		while ((d = readdir(dir))) {
			if (strncmp(d->d_name, prefix, strlen(prefix)) != 0)
				continue;
			snprintf(path, sizeof(path), "%s/%s", st.dir, d->d_name);
			if (unlink(path) == 0)
				say("reaper: removed backing file %s", path);
		}
		closedir(dir);
	}
	_exit(0);
}

/* Start the reaper once per postmaster; a grandchild, so the postmaster's
 * SIGCHLD handling never sees it. Signals are blocked meanwhile so that
 * PostgreSQL's handlers cannot reap the intermediate child. */
static int start_reaper(void)
{
	sigset_t all, old;
	int p[2], status;
	pid_t pid;

	if (st.reaper_fd >= 0)
		return 0;
	if (pipe2(p, O_CLOEXEC) != 0) {
		say("FATAL: pipe for the reaper: %s", strerror(errno));
		return -1;
	}
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	st.in_own_fork = true;
	pid = fork();
	if (pid == 0) {
		pid_t owner = getppid();

		close(p[1]);
		if (fork() == 0) {
			sigprocmask(SIG_SETMASK, &old, NULL);
			reaper_main(p[0], owner);
		}
		_exit(0);
	}
	st.in_own_fork = false;
	if (pid > 0)
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(p[0]);
	if (pid < 0) {
		say("FATAL: fork of the reaper: %s", strerror(errno));
		close(p[1]);
		return -1;
	}
	st.reaper_fd = p[1];
	return 0;
}

/* Something mapped in [a, b) of this process? Names the first mapping. */
static bool range_busy(uintptr_t a, uintptr_t b, char *what, size_t what_len)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	bool busy = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e;

		if (sscanf(line, "%lx-%lx", &s, &e) == 2 && s < b && e > a) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(what, what_len, "%s", line);
			busy = true;
			break;
		}
	}
	fclose(f);
	return busy;
}

static bool fd_is_dax(int fd)
{
	struct statx sx;

	return statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &sx) == 0 &&
	       (sx.stx_attributes_mask & STATX_ATTR_DAX) && (sx.stx_attributes & STATX_ATTR_DAX);
}

static void *fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void *fail(int err, const char *fmt, ...)
{
	char buf[800];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	say("FATAL: %s; PostgreSQL's main shared memory is not created (no fallback to plain shared memory; run without LD_PRELOAD=...pg-mshare.so for that)",
	    buf);
	errno = err;
	return MAP_FAILED;
}

/* ---- the 2025 design (msharefs regions, series v3; PGMSHARE_DESIGN=2025) ----
 * Detected by harness/mshare_detect.c (linked in), as the harness does, from
 * files only: no /proc/sys/vm/mshare_size (the 2022 series), msharefs in
 * /proc/filesystems, and MSHAREFS_INFO holding the alignment. 0 with the
 * alignment, or -1 and why. */
static int m25_detect(unsigned long *align, char *why, size_t why_len)
{
	return mshare_2025_ready(align, why, why_len);
}


/* The segment as a DAX file mapped into a new msharefs region, the region
 * mapped here at st.addr (fork passes the mapping on to every backend). */
static void *segment_create_2025(size_t len)
{
	char path[PATH_MAX + 80], what[PATH_MAX + 200], why[1400], design[160];
	size_t obj = (len + 4095) & ~(size_t)4095;
	struct mshare_create mc;
	unsigned long align;
	int dfd = -1, rfd = -1, e;
	void *p = MAP_FAILED;

	if (st.bad_env[0])
		return fail(EINVAL, "%s", st.bad_env);
	if (st.shmem)
		return fail(EINVAL, "PGMSHARE_DESIGN=2025 maps a DAX file into the region: PGMSHARE_BACKING=shmem is not supported with it");
	if (m25_detect(&align, why, sizeof(why)) != 0)
		return fail(ENOSYS, "%s", why);
	if (st.addr % align != 0)
		return fail(EINVAL, "PGMSHARE_ADDR 0x%lx is not a multiple of the msharefs alignment %lu (%s)",
			    (unsigned long)st.addr, align, MSHAREFS_INFO);
	if (range_busy(st.addr, st.addr + align, what, sizeof(what)))
		return fail(EEXIST, "the msharefs range 0x%lx-0x%lx is not free: %s (set PGMSHARE_ADDR)",
			    (unsigned long)st.addr, (unsigned long)(st.addr + align), what);
	if (start_reaper() != 0)
		return fail(EAGAIN, "cannot start the clean-up process");
	st.owner = getpid();
	snprintf(st.name, sizeof(st.name), NAME_PREFIX "%ld-%u", (long)st.owner, st.gen++);
	snprintf(st.region_path, sizeof(st.region_path), "%s/%s", MSHAREFS_DIR, st.name);
	st.region_bytes = (obj + align - 1) / align * align;
	snprintf(path, sizeof(path), "%s/%s.shm", st.dir, st.name);
	dfd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (dfd < 0)
		return fail(errno, "cannot create the backing file %s (PGMSHARE_DIR): %s", path, strerror(errno));
	if (!fd_is_dax(dfd)) {
		e = EINVAL;
		snprintf(why, sizeof(why), "backing file %.300s is not DAX (STATX_ATTR_DAX clear): PGMSHARE_DIR must be on an fsdax mount", path);
		goto out;
	}
	if (fallocate(dfd, 0, 0, (off_t)obj) != 0) {
		e = errno;
		snprintf(why, sizeof(why), "cannot allocate %zu bytes for %.300s: %s", obj, path, strerror(e));
		goto out;
	}
	rfd = open(st.region_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (rfd < 0) {
		e = errno;
		snprintf(why, sizeof(why), "cannot create the msharefs region %s: %s", st.region_path, strerror(e));
		goto out;
	}
	if (ftruncate(rfd, (off_t)st.region_bytes) != 0) {
		e = errno;
		snprintf(why, sizeof(why), "ftruncate(%s, %zu): %s", st.region_path, st.region_bytes, strerror(e));
		goto out;
	}
	memset(&mc, 0, sizeof(mc));
	mc.region_offset = 0;
	mc.size = obj;
	mc.offset = 0;
	mc.prot = PROT_READ | PROT_WRITE;
	mc.flags = MAP_SHARED | MAP_FIXED;
	mc.fd = (__u32)dfd;
	if (ioctl(rfd, MSHAREFS_CREATE_MAPPING, &mc) != 0) {
		e = errno;
		snprintf(why, sizeof(why), "ioctl(%s, MSHAREFS_CREATE_MAPPING, %zu bytes of the DAX file %.300s): %s%s",
			 st.region_path, obj, path, strerror(e),
			 e == EINVAL ? " (a kernel whose regions take anonymous memory only: the v2 port?)" : "");
		goto out;
	}
	p = real_mmap((void *)st.addr, st.region_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED_NOREPLACE,
		      rfd, 0);
	if (p != (void *)st.addr) {
		e = p == MAP_FAILED ? errno : EEXIST;
		snprintf(why, sizeof(why), "mmap of the msharefs region %s (%zu bytes) at 0x%lx: %s", st.region_path,
			 st.region_bytes, (unsigned long)st.addr, p == MAP_FAILED ? strerror(e) : "placed elsewhere");
		if (p != MAP_FAILED)
			real_munmap(p, st.region_bytes);
		p = MAP_FAILED;
		goto out;
	}
	e = 0;
out:
	/* Success: the region's host mapping holds the file, this mapping the
	 * region; neither name nor descriptor of the data file is needed. */
	if (rfd >= 0)
		close(rfd);
	close(dfd);
	unlink(path);
	if (e) {
		if (rfd >= 0)
			unlink(st.region_path);
		return fail(e, "%s", why);
	}
	st.size = len;
	st.live = true;
	mshare_2025_version(design, sizeof(design));
	say("main shared memory: %zu bytes at 0x%lx on mshare region %s (%s, an msharefs region file of %zu bytes: "
	    "2025 design, %s, the file mapped into it by ioctl MSHAREFS_CREATE_MAPPING), backed by DAX file %s "
	    "(removed once mapped)",
	    len, (unsigned long)st.addr, st.name, st.region_path, st.region_bytes, design, path);
	return p;
}

static void *segment_create(size_t len)
{
	char path[PATH_MAX + 80], what[PATH_MAX + 200];
	void *p;
	int fd = -1;

	if (st.v2025)
		return segment_create_2025(len);

	if (st.bad_env[0])
		return fail(EINVAL, "%s", st.bad_env);
	if (mshare_read_size_unit(&st.unit) != 0)
		return fail(ENOSYS, "mshare not available on this kernel: %s missing", MSHARE_SIZE_SYSCTL);
	if (!mshare_kernel_supported())
		return fail(ENOSYS, "mshare not available on this kernel: %s not registered in /proc/filesystems",
			    MSHARE_FS_TYPE);
	if (!mshare_fs_mounted())
		return fail(ENOSYS, "msharefs is not mounted at %s (mount -t %s %s %s)", MSHARE_FS_DIR,
			    MSHARE_FS_TYPE, MSHARE_FS_TYPE, MSHARE_FS_DIR);
	if (st.addr % st.unit != 0)
		return fail(EINVAL, "PGMSHARE_ADDR 0x%lx is not a multiple of mshare_size %lu",
			    (unsigned long)st.addr, st.unit);
	if (len > st.unit)
		return fail(EINVAL, "the segment (%zu bytes) is larger than one mshare unit (%lu bytes)", len,
			    st.unit);
	if (range_busy(st.addr, st.addr + st.unit, what, sizeof(what)))
		return fail(EEXIST, "the mshare range 0x%lx-0x%lx is not free: %s (set PGMSHARE_ADDR)",
			    (unsigned long)st.addr, (unsigned long)(st.addr + st.unit), what);
	if (start_reaper() != 0)
		return fail(EAGAIN, "cannot start the clean-up process");
	st.owner = getpid();
	snprintf(st.name, sizeof(st.name), NAME_PREFIX "%ld-%u", (long)st.owner, st.gen++);
	if (st.shmem) {
		snprintf(what, sizeof(what), "shared anonymous memory (shmem)");
		p = real_mmap((void *)st.addr, len, PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	} else {
		snprintf(path, sizeof(path), "%s/%s.shm", st.dir, st.name);
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0)
			return fail(errno, "cannot create the backing file %s (PGMSHARE_DIR): %s", path,
				    strerror(errno));
		if (!fd_is_dax(fd)) {
			close(fd);
			unlink(path);
			return fail(EINVAL, "backing file %s is not DAX (STATX_ATTR_DAX clear): PGMSHARE_DIR must be on an fsdax mount, or set PGMSHARE_BACKING=shmem",
				    path);
		}
		if (fallocate(fd, 0, 0, (off_t)len) != 0) {
			int e = errno;

			close(fd);
			unlink(path);
			return fail(e, "cannot allocate %zu bytes for %s: %s", len, path, strerror(e));
		}
		snprintf(what, sizeof(what), "DAX file %s (removed once shared)", path);
		p = real_mmap((void *)st.addr, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED_NOREPLACE,
			      fd, 0);
	}
	if (p != (void *)st.addr) {
		int e = errno;

		if (p != MAP_FAILED)
			real_munmap(p, len);
		if (fd >= 0) {
			close(fd);
			unlink(path);
		}
		return fail(p == MAP_FAILED ? e : EEXIST, "mmap of %zu bytes at 0x%lx: %s", len,
			    (unsigned long)st.addr, p == MAP_FAILED ? strerror(e) : "placed elsewhere");
	}
	if (mshare(st.name, st.addr, st.unit, O_CREAT | O_RDWR | O_EXCL, 0600) != 0) {
		int e = errno;

		real_munmap(p, len);
		if (fd >= 0) {
			close(fd);
			unlink(path);
		}
		return fail(e, "mshare(%s, 0x%lx, %lu, O_CREAT|O_RDWR|O_EXCL) as donor: %s", st.name,
			    (unsigned long)st.addr, st.unit, strerror(e));
	}
	if (fd >= 0) {
		close(fd);
		unlink(path); /* the donated mapping holds the file */
	}
	st.size = len;
	st.live = true;
	say("main shared memory: %zu bytes at 0x%lx on mshare region %s (%s/%s), backed by %s", len,
	    (unsigned long)st.addr, st.name, MSHARE_FS_DIR, st.name, what);
	return p;
}

static bool is_main_segment(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	int extra = flags & ~(MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE);

	return st.active && !st.child && !st.live && addr == NULL && fd == -1 && off == 0 &&
	       (flags & MAP_TYPE) == MAP_SHARED && (flags & MAP_ANONYMOUS) &&
	       prot == (PROT_READ | PROT_WRITE) && len >= st.min_size &&
	       (extra == 0 || (extra & ~(MAP_HUGETLB | (0x3f << MAP_HUGE_SHIFT))) == 0);
}

/* The interposers. Each has a C name of its own and is exported under the
 * libc name it stands in front of (the asm label), so LD_PRELOAD puts it
 * ahead of libc's while no reader, and no tool, takes this file for the
 * definition of mmap(2) that the rest of the tree calls. */
void *pg_mshare_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) __asm__("mmap");
int pg_mshare_munmap(void *addr, size_t len) __asm__("munmap");
int pg_mshare_shmget(key_t key, size_t size, int shmflg) __asm__("shmget");

void *pg_mshare_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (is_main_segment(addr, len, prot, flags, fd, off)) {
		if (flags & MAP_HUGETLB) {
			say("refusing MAP_HUGETLB for the main shared memory (%zu bytes): hugetlbfs mappings cannot be donated to mshare; use huge_pages=off (huge_pages=try falls back by itself)",
			    len);
			errno = EINVAL;
			return MAP_FAILED;
		}
		return segment_create(len);
	}
	return real_mmap(addr, len, prot, flags, fd, off);
}

int pg_mshare_munmap(void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr;

	if (st.live && a < st.addr + st.size && a + len > st.addr) {
		if (a != st.addr || len < st.size) {
			errno = EINVAL;
			return -1;
		}
		st.live = false;
		if (st.v2025) {
			/* The whole region (an msharefs mapping cannot be split);
			 * the region's name goes with its creator's unmap. */
			if (real_munmap((void *)st.addr, st.region_bytes) != 0)
				return -1;
			if (getpid() == st.owner && unlink(st.region_path) != 0)
				say("unlink(%s): %s", st.region_path, strerror(errno));
			return 0;
		}
		if (mshare_unlink(st.name) != 0) {
			say("mshare_unlink(%s): %s", st.name, strerror(errno));
			return -1;
		}
		return 0;
	}
	return real_munmap(addr, len);
}

int pg_mshare_shmget(key_t key, size_t size, int shmflg)
{
	if (st.active && !st.child && size >= st.min_size) {
		say("FATAL: refusing shmget of %zu bytes: shared_memory_type=sysv puts the main shared memory where mshare cannot share it; use shared_memory_type=mmap (the default)",
		    size);
		errno = EINVAL;
		return -1;
	}
	return (int)syscall(SYS_shmget, key, size, shmflg);
}

__attribute__((destructor)) static void pg_mshare_fini(void)
{
	if (st.live) {
		st.live = false;
		if (!st.v2025)
			mshare_unlink(st.name);
		else if (getpid() == st.owner)
			unlink(st.region_path); /* the creator's exit unmaps the region */
	}
}
