/* ktrace-guest - harness/ktrace.c in the guest (run by tests/kernel/fault-time.sh,
 * as root, under the patched 6.1 kernel): arms the kernel fault timing over a
 * mapping it makes, touches its pages, and checks that the kernel's count of
 * handle_mm_fault() calls in the range equals the rise of this process's
 * minor + major faults (getrusage) exactly, for shared anonymous memory, a
 * DAX file, hugetlbfs and an mshare region (donor and a consumer); that the
 * address filter leaves out faults outside the range; that tracefs holds
 * nothing of ours afterwards (and is unmounted again when ktrace mounted
 * it); and estimates the probes' cost per fault from first-touch times
 * with and without them. Prints TAP.
 *
 *   ktrace-guest [PAGES]      (default 1024 4 KiB pages; hugetlb: 8 2 MiB pages)
 * Environment: KTRACE_DAX_DIR (default /mnt/pmem), KTRACE_HUGETLB_DIR (/dev/hugepages),
 * KTRACE_GUEST_KEEP=DIR (each case's raw hist text kept in DIR).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ktrace.h"
#include "mshare-uapi.h"
#include "../lib/tap.h"

#define PG 4096ul
#define HPG (2ul << 20)

static size_t pages = 1024;
static uint64_t *touch_ns; /* pre-faulted: the loop takes no fault of its own */

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static long faults_now(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt + ru.ru_majflt;
}

/* Writes one byte per `step` over [p, p+len); returns this process's fault
 * rise over the loop; each touch's time in touch_ns[]. */
static long touch(char *p, size_t len, size_t step)
{
	long f0 = faults_now();
	size_t i = 0;

	for (size_t off = 0; off < len; off += step, i++) {
		uint64_t t0 = now_ns();
		*(volatile char *)(p + off) = 1;
		touch_ns[i] = now_ns() - t0;
	}
	return faults_now() - f0;
}

/* A child's copy-on-write faults on the array and the stack, before it counts. */
static void prefault_after_fork(void)
{
	volatile char stack[16384];

	memset(touch_ns, 0, (8 * pages + 16) * sizeof(*touch_ns));
	for (size_t i = 0; i < sizeof(stack); i += 512)
		stack[i] = 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t median_touch(size_t n)
{
	qsort(touch_ns, n, sizeof(*touch_ns), cmp_u64);
	return touch_ns[n / 2];
}

static long mem_available_kb(void)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %ld kB", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

static bool tracefs_mounted(void)
{
	char line[512];
	bool m = false;
	FILE *f = fopen("/proc/mounts", "r");

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, " tracefs "))
			m = true;
	if (f)
		fclose(f);
	return m;
}

/* Nothing of ours in tracefs (mounted at /sys/kernel/tracing). */
static bool no_leftovers(char *why, size_t len)
{
	char path[256], line[512];
	FILE *f;
	int pid = (int)getpid();
	char a[64], b[64], c[64];

	snprintf(a, sizeof(a), "fault_entry_%d", pid);
	snprintf(b, sizeof(b), "fault_exit_%d", pid);
	snprintf(c, sizeof(c), "mshare_bench_fault_lat_%d", pid);
	why[0] = '\0';
	const char *files[] = { "/sys/kernel/tracing/kprobe_events", "/sys/kernel/tracing/synthetic_events",
				"/sys/kernel/tracing/dynamic_events" };
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		f = fopen(files[i], "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (strstr(line, a) || strstr(line, b) || strstr(line, c))
				snprintf(why, len, "%s still holds: %s", files[i], line);
		fclose(f);
	}
	snprintf(path, sizeof(path), "/sys/kernel/tracing/instances/mshare-bench-%d", pid);
	if (access(path, F_OK) == 0)
		snprintf(why, len, "%s still exists", path);
	return why[0] == '\0';
}

/* KTRACE_GUEST_KEEP=DIR: each case's raw latency hist text in DIR/<case>.txt. */
static void keep_hist_as(const char *what)
{
	const char *dir = getenv("KTRACE_GUEST_KEEP");
	char path[256];
	size_t n;

	if (!dir)
		return;
	n = (size_t)snprintf(path, sizeof(path), "%s/", dir);
	for (const char *c = what; *c && n + 5 < sizeof(path); c++)
		path[n++] = (char)(((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9')) ? *c : (*c >= 'A' && *c <= 'Z') ? *c - 'A' + 'a' : '-');
	snprintf(path + n, sizeof(path) - n, ".txt");
	setenv("MSHARE_BENCH_KTRACE_HIST", path, 1);
}

static void print_result(const char *what, const struct ktrace_result *r)
{
	printf("# %s: kernel count %" PRIu64 " min %" PRIu64 " p50 %" PRIu64 " p90 %" PRIu64 " p99 %" PRIu64
	       " p99.9 %" PRIu64 " max %" PRIu64 " mean %.1f %s, dropped %" PRIu64 ", missed %" PRIu64 "\n",
	       what, r->count, r->min, r->p50, r->p90, r->p99, r->p999, r->max, r->mean, r->unit, r->entries_dropped,
	       r->probe_missed);
}

/* One case: arm over [p+lo_off, p+hi_off), touch [p, p+len) every step,
 * stop; expect kernel count == want (or the fault rise when want < 0). */
static void one_case(const char *what, char *p, size_t len, size_t step, size_t lo_off, size_t hi_off, long want,
		     uint64_t *median_out, struct ktrace_result *out)
{
	struct ktrace_state st;
	struct ktrace_result r;
	char err[300], why[600];
	long rise;

	keep_hist_as(what);
	if (ktrace_start(&st, (uintptr_t)p + lo_off, (uintptr_t)p + hi_off, 4, err, sizeof(err)) != 0) {
		TAP_OK(0, "%s: ktrace_start: %s", what, err);
		return;
	}
	rise = touch(p, len, step);
	if (median_out)
		*median_out = median_touch(len / step);
	int stopped = ktrace_stop(&st, &r, err, sizeof(err));
	unsetenv("MSHARE_BENCH_KTRACE_HIST");
	if (stopped != 0) {
		TAP_OK(0, "%s: ktrace_stop: %s", what, err);
		return;
	}
	print_result(what, &r);
	if (want < 0) {
		TAP_OK(r.count == (uint64_t)rise && r.count > 0,
		       "%s: kernel fault count %" PRIu64 " == minflt+majflt rise %ld", what, r.count, rise);
	} else {
		TAP_OK(r.count == (uint64_t)want, "%s: kernel fault count %" PRIu64 " == %ld (faults taken in all: %ld)",
		       what, r.count, want, rise);
	}
	TAP_OK(r.entries_dropped == 0 && r.probe_missed == 0, "%s: nothing dropped (%" PRIu64 "), no probe missed (%" PRIu64 ")",
	       what, r.entries_dropped, r.probe_missed);
	TAP_OK(no_leftovers(why, sizeof(why)), "%s: tracefs holds nothing of ours after ktrace_stop%s%s", what,
	       why[0] ? ": " : "", why);
	if (out)
		*out = r;
}

static char *map_file(const char *dir, const char *tag, size_t len, int *fd_out, char *path, size_t path_len)
{
	snprintf(path, path_len, "%s/ktrace-guest-%s.%d", dir, tag, (int)getpid());
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return NULL;
	if (ftruncate(fd, (off_t)len) != 0) {
		close(fd);
		unlink(path);
		return NULL;
	}
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		close(fd);
		unlink(path);
		return NULL;
	}
	*fd_out = fd;
	return p;
}

int main(int argc, char **argv)
{
	const char *dax = getenv("KTRACE_DAX_DIR") ? getenv("KTRACE_DAX_DIR") : "/mnt/pmem";
	const char *huge = getenv("KTRACE_HUGETLB_DIR") ? getenv("KTRACE_HUGETLB_DIR") : "/dev/hugepages";
	char err[300], path[256];
	struct ktrace_state st;
	struct ktrace_result r;
	uint64_t med_probe_anon = 0, med_plain_anon = 0, med_probe_dax = 0, med_plain_dax = 0;
	struct ktrace_result r_anon, r_dax;
	int fd;

	if (argc > 1)
		pages = strtoul(argv[1], NULL, 0);
	if (pages < 16)
		pages = 16;
	setvbuf(stdout, NULL, _IOLBF, 0);
	touch_ns = calloc(8 * pages + 16, sizeof(*touch_ns));
	memset(touch_ns, 1, (8 * pages + 16) * sizeof(*touch_ns));
	memset(&r_anon, 0, sizeof(r_anon));
	memset(&r_dax, 0, sizeof(r_dax));

	/* Refusals. */
	TAP_OK(ktrace_start(&st, 2, 1, 4, err, sizeof(err)) != 0 && strstr(err, "empty address range"),
	       "an empty range is refused: %s", err);
	pid_t c = fork();
	if (c == 0) {
		if (setuid(65534) != 0)
			_exit(3);
		int rc = ktrace_start(&st, 1, 2, 4, err, sizeof(err));
		_exit(rc != 0 && strstr(err, "not root") ? 0 : 1);
	}
	int status = 0;
	waitpid(c, &status, 0);
	TAP_OK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "not root: ktrace_start refuses, saying so");

	/* 1. Shared anonymous memory, tracefs not mounted beforehand: ktrace
	 * mounts it and unmounts it again. */
	bool was_mounted = tracefs_mounted();
	size_t len = pages * PG;
	char *anon = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (anon == MAP_FAILED) {
		TAP_OK(0, "mmap of %zu bytes shared anonymous: %s", len, strerror(errno));
		return tap_done();
	}
	one_case("anon MAP_SHARED 4K", anon, len, PG, 0, len, (long)pages, &med_probe_anon, &r_anon);
	TAP_OK(tracefs_mounted() == was_mounted, "tracefs left as it was (%s)", was_mounted ? "mounted" : "not mounted");
	/* The same without probes: first touches of a fresh mapping. */
	munmap(anon, len);
	anon = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	long rise = touch(anon, len, PG);
	med_plain_anon = median_touch(pages);
	printf("# anon without probes: %ld faults, first-touch median %" PRIu64 " ns; with probes %" PRIu64 " ns\n",
	       rise, med_plain_anon, med_probe_anon);
	munmap(anon, len);

	/* What arming costs in guest memory (the hist maps are preallocated). */
	{
		long a0 = mem_available_kb(), a1;
		anon = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		for (unsigned ma = 4; ma <= KTRACE_MAXACTIVE_MAX; ma = ma == 4 ? KTRACE_MAXACTIVE_MAX : ma + 1) {
			a0 = mem_available_kb();
			if (ktrace_start(&st, (uintptr_t)anon, (uintptr_t)anon + len, ma, err, sizeof(err)) != 0) {
				printf("# maxactive %u: %s\n", ma, err);
				break;
			}
			a1 = mem_available_kb();
			ktrace_stop(&st, &r, err, sizeof(err));
			printf("# armed with maxactive %u: MemAvailable %ld kB lower (back to %+ld kB after stop)\n", ma,
			       a0 - a1, mem_available_kb() - a0);
		}
		munmap(anon, len);
	}

	/* From here on tracefs stays mounted (ours), for the leftover checks. */
	if (!tracefs_mounted() && mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) != 0)
		printf("# mount tracefs: %s\n", strerror(errno));

	/* 2. The range filter: touch 2x the range, count only the range. */
	anon = mmap(NULL, 2 * len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	one_case("anon, range = first half of the touched pages", anon, 2 * len, PG, 0, len, (long)pages, NULL, NULL);
	munmap(anon, 2 * len);

	/* 3. A DAX file. */
	char *f = map_file(dax, "dax", len, &fd, path, sizeof(path));
	if (!f) {
		TAP_OK(0, "DAX file in %s: %s", dax, strerror(errno));
	} else {
		one_case("DAX file MAP_SHARED", f, len, PG, 0, len, -1, &med_probe_dax, &r_dax);
		munmap(f, len);
		close(fd);
		unlink(path);
		f = map_file(dax, "dax2", len, &fd, path, sizeof(path));
		rise = touch(f, len, PG);
		med_plain_dax = median_touch(pages);
		printf("# DAX without probes: %ld faults, first-touch median %" PRIu64 " ns; with probes %" PRIu64 " ns\n",
		       rise, med_plain_dax, med_probe_dax);
		munmap(f, len);
		close(fd);
		unlink(path);
	}

	/* 4. hugetlbfs, 2 MiB pages. */
	size_t hlen = 8 * HPG;
	f = map_file(huge, "huge", hlen, &fd, path, sizeof(path));
	if (!f) {
		TAP_OK(0, "hugetlbfs file in %s: %s", huge, strerror(errno));
	} else {
		one_case("hugetlbfs 2M", f, hlen, HPG, 0, hlen, 8, NULL, NULL);
		munmap(f, hlen);
		close(fd);
		unlink(path);
	}

	/* 5. mshare (v1): the donor touches the region, then a consumer. */
	unsigned long unit = 0;
	char name[64];
	if (!mshare_kernel_supported() || mshare_read_size_unit(&unit) != 0) {
		TAP_OK(0, "mshare: kernel without mshare or msharefs");
	} else {
		uintptr_t base = 0x20000000000ull; /* 2 TiB, as the harness */
		base = (base + unit - 1) / unit * unit;
		snprintf(name, sizeof(name), "ktrace-guest-%d", (int)getpid());
		char *m = mmap((void *)base, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			       -1, 0);
		if (m != (char *)base || mshare(name, base, unit, O_CREAT | O_RDWR | O_EXCL, 0600) != 0) {
			TAP_OK(0, "mshare region at 0x%lx: %s", (unsigned long)base, strerror(errno));
		} else {
			/* The donor's first touch installs the shared upper-level
			 * entry: one handle_mm_fault() call more, which returns
			 * VM_FAULT_NOPAGE from find_shared_vma() before
			 * mm_account_fault() (patch 0008), so minflt does not
			 * count it: kernel count == pages + 1. */
			one_case("mshare donor (first toucher; + 1 call installing the shared P4D, not in minflt)", m, len,
				 PG, 0, len, (long)pages + 1, NULL, NULL);
			/* A consumer: attach, touch everything (already present). */
			int pfd[2];
			if (pipe(pfd) != 0)
				return 1;
			if (ktrace_start(&st, base, base + len, 4, err, sizeof(err)) != 0) {
				TAP_OK(0, "mshare consumer: ktrace_start: %s", err);
			} else {
				pid_t k = fork();
				if (k == 0) {
					long fr = -1;
					prefault_after_fork();
					if (mshare(name, base, unit, O_RDWR, 0600) == 0)
						fr = touch((char *)base, len, PG);
					if (write(pfd[1], &fr, sizeof(fr)) != sizeof(fr))
						_exit(1);
					_exit(0);
				}
				long fr = -1;
				if (read(pfd[0], &fr, sizeof(fr)) != sizeof(fr))
					fr = -1;
				waitpid(k, NULL, 0);
				if (ktrace_stop(&st, &r, err, sizeof(err)) != 0) {
					TAP_OK(0, "mshare consumer: ktrace_stop: %s", err);
				} else {
					print_result("mshare consumer", &r);
					/* Its one call installs the shared P4D (not in minflt). */
					TAP_OK(fr >= 0 && r.count == 1,
					       "mshare consumer: kernel fault count %" PRIu64 " == 1 (the shared P4D; minflt+majflt rise %ld, outside the range)",
					       r.count, fr);
				}
			}
			mshare_unlink(name);
		}
	}

	/* 6. maxactive 1 and two tasks faulting at once on two vCPUs: a
	 * fault whose kretprobe found no free instance is missed (counted in
	 * probe_missed, which counts such misses system-wide, in the range or
	 * not); none is counted wrongly: count <= faults <= count + missed. */
	size_t clen = 4 * len;
	anon = mmap(NULL, 2 * clen, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ktrace_start(&st, (uintptr_t)anon, (uintptr_t)anon + 2 * clen, 1, err, sizeof(err)) != 0) {
		TAP_OK(0, "maxactive 1: ktrace_start: %s", err);
	} else {
		int pfd[2];
		long total = 0;
		if (pipe(pfd) != 0)
			return 1;
		for (int k = 0; k < 2; k++) {
			if (fork() == 0) {
				prefault_after_fork();
				long fr = touch(anon + (size_t)k * clen, clen, PG);
				if (write(pfd[1], &fr, sizeof(fr)) != sizeof(fr))
					_exit(1);
				_exit(0);
			}
		}
		for (int k = 0; k < 2; k++) {
			long fr = 0;
			if (read(pfd[0], &fr, sizeof(fr)) == sizeof(fr))
				total += fr;
			wait(NULL);
		}
		if (ktrace_stop(&st, &r, err, sizeof(err)) != 0) {
			TAP_OK(0, "maxactive 1: ktrace_stop: %s", err);
		} else {
			print_result("maxactive 1, two tasks", &r);
			/* Each page of the range takes exactly one fault (a write to
			 * shared anonymous memory); the children's minflt may add a
			 * few outside it (their stacks), which the probes' range
			 * filter rightly leaves out. */
			uint64_t pages = 2 * clen / PG;
			TAP_OK(r.count <= pages && pages <= r.count + r.probe_missed && (uint64_t)total >= pages,
			       "maxactive 1, two tasks faulting at once: count %" PRIu64 " <= faults in the range %" PRIu64
			       " <= count + missed %" PRIu64 " (minflt rise %ld)",
			       r.count, pages, r.count + r.probe_missed, total);
		}
	}
	munmap(anon, 2 * clen);

	/* 7. Two at once in one process: the second is refused, the first unharmed. */
	anon = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct ktrace_state st2;
	if (ktrace_start(&st, (uintptr_t)anon, (uintptr_t)anon + len, 4, err, sizeof(err)) != 0) {
		TAP_OK(0, "first of two: %s", err);
	} else {
		int rc2 = ktrace_start(&st2, (uintptr_t)anon, (uintptr_t)anon + len, 4, err, sizeof(err));
		TAP_OK(rc2 != 0, "a second ktrace_start in the same process is refused: %s", err);
		rise = touch(anon, len, PG);
		TAP_OK(ktrace_stop(&st, &r, err, sizeof(err)) == 0 && r.count == (uint64_t)pages,
		       "the first still counts every fault after the refused second: %" PRIu64 " == %zu (faults in all %ld)",
		       r.count, pages, rise);
		char why[600];
		TAP_OK(no_leftovers(why, sizeof(why)), "nothing left after both%s%s", why[0] ? ": " : "", why);
	}
	munmap(anon, len);

	/* What the probes put inside the interval: the same chain on getppid. */
	if (ktrace_probe_overhead(1000, &r, err, sizeof(err)) != 0) {
		TAP_OK(0, "probe overhead (getppid): %s", err);
	} else {
		print_result("probes on getppid (1000 calls)", &r);
		TAP_OK(r.count >= 1000, "probe overhead: %" PRIu64 " getppid calls timed (>= 1000), p50 %" PRIu64 " %s",
		       r.count, r.p50, r.unit);
	}

	/* The probes' cost per fault, from the user side. */
	if (med_plain_anon && med_probe_anon)
		printf("# probe cost per fault (first-touch median with - without): anon %" PRId64 " ns (kernel p50 %" PRIu64
		       "), DAX %" PRId64 " ns (kernel p50 %" PRIu64 ")\n",
		       (int64_t)(med_probe_anon - med_plain_anon), r_anon.p50, (int64_t)(med_probe_dax - med_plain_dax),
		       r_dax.p50);
	return tap_done();
}
