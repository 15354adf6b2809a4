/* selftest_bench.c - the harness measuring its own overhead.
 *
 *   selftest-bench fault-rate [--size S]
 *       First-touch write faults per second over one shm mapping, 2 MiB
 *       chunks alternating (ABBA) between a bare loop (one clock read per chunk)
 *       and workload_touch_page (two clock reads and a histogram update per
 *       page), in the same process and run. Prints both rates and the ratio.
 *   selftest-bench fork-barrier --workers N
 *       A bare fork-and-wait loop: fork N children that each increment a
 *       shared counter and sleep on a futex; time from the first fork until
 *       all have arrived. The harness's own figure is time_s.barrier of a
 *       `run` (see bench/harness-overhead.sh).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "futex.h"
#include "opts.h"
#include "parse.h"
#include "procfs.h"
#include "selftest_bench.h"
#include "workload.h"

#define CHUNK (2u << 20)
#define PAGE 4096u

static int fault_rate(uint64_t size)
{
	int fd = open("/dev/shm", O_TMPFILE | O_RDWR, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)size) != 0) {
		fprintf(stderr, "selftest-bench: cannot create a %llu-byte file in /dev/shm: %s\n",
			(unsigned long long)size, strerror(errno));
		return 1;
	}
	char *base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		fprintf(stderr, "selftest-bench: mmap: %s\n", strerror(errno));
		return 1;
	}
	madvise(base, size, MADV_NOHUGEPAGE);
	static struct workload_slot slot;
	histogram_init(&slot.fault_ns);
	histogram_init(&slot.op_ns);
	fault_cost_slot_init(&slot.fault_cost);
	struct workload_ctx ctx = { .base = base, .size = size, .page_bytes = PAGE, .write = true, .slot = &slot };

	uint64_t bare_ns = 0, harness_ns = 0, bare_pages = 0;
	for (uint64_t off = 0; off + CHUNK <= size; off += CHUNK) {
		char *chunk = base + off;
		uint64_t t0 = clock_now_ns();
		/* ABBA order: within each pair of chunks the bare loop goes first,
		 * then second, so position effects cancel. */
		uint64_t c = off / CHUNK;
		bool bare = (c % 2 == 0) == ((c / 2) % 2 == 0);
		if (bare) {
			for (unsigned p = 0; p < CHUNK; p += PAGE)
				*(volatile char *)(chunk + p) = 1;
			bare_ns += clock_now_ns() - t0;
			bare_pages += CHUNK / PAGE;
		} else {
			for (unsigned p = 0; p < CHUNK; p += PAGE)
				workload_touch_page(&ctx, chunk + p);
			harness_ns += clock_now_ns() - t0;
		}
	}
	double bare_rate = bare_pages / (bare_ns / 1e9);
	double harness_rate = slot.pages_touched / (harness_ns / 1e9);
	printf("fault-rate: %llu MiB shm, write first touch, 4 KiB pages, 2 MiB chunks alternating ABBA\n",
	       (unsigned long long)(size >> 20));
	printf("  bare loop:          %llu pages in %.3f s = %.0f faults/s\n", (unsigned long long)bare_pages,
	       bare_ns / 1e9, bare_rate);
	printf("  workload_touch_page: %llu pages in %.3f s = %.0f faults/s (p50 %llu ns, p99 %llu ns)\n",
	       (unsigned long long)slot.pages_touched, harness_ns / 1e9, harness_rate,
	       (unsigned long long)histogram_percentile(&slot.fault_ns, 50),
	       (unsigned long long)histogram_percentile(&slot.fault_ns, 99));
	printf("  ratio harness/bare: %.3f\n", harness_rate / bare_rate);
	munmap(base, size);
	close(fd);
	return 0;
}

static int fork_barrier(unsigned workers)
{
	uint32_t *words = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t *pids = calloc(workers, sizeof(pid_t));
	if (words == MAP_FAILED || !pids)
		return 1;
	uint32_t *ready = &words[0], *go = &words[16];
	pid_t parent = getpid();
	uint64_t t0 = clock_now_ns();
	unsigned forked = 0;
	for (; forked < workers; forked++) {
		pid_t pid = fork();
		if (pid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != parent)
				_exit(1);
			if (__atomic_add_fetch(ready, 1, __ATOMIC_ACQ_REL) == workers)
				futex_wake_all(ready);
			while (!__atomic_load_n(go, __ATOMIC_ACQUIRE))
				futex_wait_u32(go, 0, 0);
			_exit(0);
		}
		if (pid < 0) {
			fprintf(stderr, "selftest-bench: fork %u failed: %s\n", forked, strerror(errno));
			break;
		}
		pids[forked] = pid;
	}
	uint64_t t_forked = clock_now_ns();
	uint32_t seen;
	while ((seen = __atomic_load_n(ready, __ATOMIC_ACQUIRE)) < forked)
		futex_wait_u32(ready, seen, 20000000);
	uint64_t t_ready = clock_now_ns();
	/* What a bare forked child costs, measured like the harness's
	 * results.worker_memory (first child, at the barrier). */
	int64_t pte = forked ? procfs_status_bytes(pids[0], "VmPTE") : -1;
	int64_t dirty = forked ? procfs_private_dirty_bytes(pids[0]) : -1;
	__atomic_store_n(go, 1, __ATOMIC_RELEASE);
	futex_wake_all(go);
	for (unsigned i = 0; i < forked; i++)
		waitpid(pids[i], NULL, 0);
	uint64_t t_reaped = clock_now_ns();
	printf("fork-barrier: bare fork-and-wait loop, %u workers\n", forked);
	printf("  fork loop %.3f s, all at the barrier %.3f s, all reaped %.3f s\n", (t_forked - t0) / 1e9,
	       (t_ready - t0) / 1e9, (t_reaped - t0) / 1e9);
	printf("  barrier_s %.6f\n", (t_ready - t0) / 1e9);
	printf("  bare child memory: Private_Dirty %lld B + VmPTE %lld B = %lld B\n", (long long)dirty,
	       (long long)pte, (long long)(dirty + pte));
	free(pids);
	return forked == workers ? 0 : 1;
}

enum { S_SIZE, S_WORKERS, S_COUNT };

/* The options of `selftest-bench`: the parser and the usage text both come from here. */
static const struct opt selftest_options[S_COUNT + 1] = {
	[S_SIZE] = { "size", "S", "fault-rate: bytes of shm to fault in (default 1G, at least 4M)", false },
	[S_WORKERS] = { "workers", "N", "fork-barrier: children to fork (default 1000, 1 to 4000000)", false },
	[S_COUNT] = { NULL, NULL, NULL, false },
};

static void selftest_usage(FILE *out)
{
	fprintf(out, "usage: mshare-bench selftest-bench fault-rate|fork-barrier [options]\n"
		     "  fault-rate     first-touch faults/s, a bare loop against workload_touch_page\n"
		     "  fork-barrier   a bare fork-and-wait loop of N children\n");
	opts_help(out, selftest_options, 19);
}

struct selftest_args {
	uint64_t size, workers;
};

static int selftest_option(void *data, int i, const struct opt *o, const char *v, char *err, size_t err_len)
{
	struct selftest_args *a = data;
	char why[256];

	(void)o;
	if (i == S_SIZE && (parse_size(v, &a->size, why, sizeof(why)) || a->size < 2 * CHUNK)) {
		snprintf(err, err_len, "--size '%s': at least 4M", v);
		return -1;
	}
	if (i == S_WORKERS && (parse_count(v, &a->workers, why, sizeof(why)) || a->workers > 4000000)) {
		snprintf(err, err_len, "--workers '%s' is not a number from 1 to 4000000", v);
		return -1;
	}
	return 0;
}

int selftest_bench_main(int argc, char **argv)
{
	char err[256];
	struct selftest_args a = { .size = 1ull << 30, .workers = 1000 };

	if (argc < 2 || strncmp(argv[1], "-", 1) == 0) {
		bool help = argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0);
		selftest_usage(help ? stdout : stderr);
		return help ? 0 : 2;
	}
	int rc = opts_parse(selftest_options, NULL, argc - 1, argv + 1, selftest_option, &a, err, sizeof(err));
	if (rc == 1) {
		selftest_usage(stdout);
		return 0;
	}
	if (rc) {
		fprintf(stderr, "selftest-bench: %s\n", err);
		return 2;
	}
	if (strcmp(argv[1], "fault-rate") == 0)
		return fault_rate(a.size);
	if (strcmp(argv[1], "fork-barrier") == 0)
		return fork_barrier((unsigned)a.workers);
	fprintf(stderr, "selftest-bench: unknown benchmark '%s' (fault-rate, fork-barrier)\n", argv[1]);
	return 2;
}
