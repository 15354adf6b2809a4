/* tlb-counters-guest.c - known operations against the counters of the
 * mshare-counters kernel flavour (issue 42; tests/kernel/lifecycle-counters.sh).
 *
 *   tlb-counters [N]
 *
 * Prints key=value lines, one per measurement:
 *   alone        N munmaps of a 2 MiB anonymous region this process touched
 *                on CPU 0 only (the process never ran elsewhere): the
 *                vmstat and /proc/interrupts deltas summed over the N
 *                munmaps (expected: no remote flush);
 *   other_cpu    the same, the region touched by a thread on CPU 1 that
 *                spins in user space meanwhile (its CPU holds the mm): each
 *                munmap must reach CPU 1 (expected: at least N remote
 *                flushes, N received, N TLB shootdown interrupts);
 *   lock         two threads on CPUs 0 and 1 each mmap and munmap a page
 *                N*50 times; /proc/lock_stat cleared before and read after:
 *                the acquisitions and contentions of the mmap_lock classes
 *                (expected: at least 2 * 2 * N*50 acquisitions).
 * Exit 2 when the kernel lacks the counters (it names the one missing),
 * 1 on a failed system call.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define REGION (2u << 20)

static char buf[4 << 20];

static int slurp(const char *path)
{
	int fd = open(path, O_RDONLY);
	size_t got = 0;
	if (fd < 0)
		return -1;
	for (;;) {
		ssize_t n = read(fd, buf + got, sizeof(buf) - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	return 0;
}

static long long vm(const char *name)
{
	size_t n = strlen(name);
	for (char *p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, name, n) == 0 && p[n] == ' ')
			return atoll(p + n + 1);
	fprintf(stderr, "tlb-counters: /proc/vmstat has no %s (a kernel without CONFIG_DEBUG_TLBFLUSH?)\n", name);
	exit(2);
}

static long long irq_row(const char *name)
{
	size_t n = strlen(name);
	for (char *p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		char *q = p;
		while (*q == ' ')
			q++;
		if (strncmp(q, name, n) == 0 && q[n] == ':') {
			long long sum = 0;
			char *e;
			q += n + 1;
			for (;;) {
				long long x = strtoll(q, &e, 10);
				if (e == q)
					break;
				sum += x;
				q = e;
			}
			return sum;
		}
	}
	fprintf(stderr, "tlb-counters: /proc/interrupts has no %s row\n", name);
	exit(2);
}

struct snap {
	long long remote, received, local_all, local_one, irq_tlb;
};

static void snap(struct snap *s)
{
	if (slurp("/proc/vmstat") != 0)
		exit(1);
	s->remote = vm("nr_tlb_remote_flush");
	s->received = vm("nr_tlb_remote_flush_received");
	s->local_all = vm("nr_tlb_local_flush_all");
	s->local_one = vm("nr_tlb_local_flush_one");
	if (slurp("/proc/interrupts") != 0)
		exit(1);
	s->irq_tlb = irq_row("TLB");
}

static void add(struct snap *sum, const struct snap *a, const struct snap *b)
{
	sum->remote += b->remote - a->remote;
	sum->received += b->received - a->received;
	sum->local_all += b->local_all - a->local_all;
	sum->local_one += b->local_one - a->local_one;
	sum->irq_tlb += b->irq_tlb - a->irq_tlb;
}

static void print(const char *what, int n, const struct snap *s)
{
	printf("%s munmaps=%d nr_tlb_remote_flush=%lld nr_tlb_remote_flush_received=%lld "
	       "nr_tlb_local_flush_all=%lld nr_tlb_local_flush_one=%lld irq_tlb_shootdowns=%lld\n",
	       what, n, s->remote, s->received, s->local_all, s->local_one, s->irq_tlb);
}

static void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0) {
		fprintf(stderr, "tlb-counters: cannot run on CPU %d: %s\n", cpu, strerror(errno));
		exit(1);
	}
}

static void *map_region(void)
{
	void *p = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("tlb-counters: mmap");
		exit(1);
	}
	return p;
}

static void touch(volatile char *p)
{
	for (size_t o = 0; o < REGION; o += 4096)
		p[o] = 1;
}

/* The thread on CPU 1: touches each region it is given (a new generation:
 * mmap after munmap may return the same address), then spins. */
static char *volatile given;
static unsigned generation, touched;
static volatile int quit;

static void *other(void *arg)
{
	unsigned seen = 0;
	(void)arg;
	pin(1);
	while (!quit) {
		unsigned g = __atomic_load_n(&generation, __ATOMIC_ACQUIRE);
		if (g != seen) {
			touch(given);
			seen = g;
			__atomic_store_n(&touched, g, __ATOMIC_RELEASE);
		}
		__builtin_ia32_pause();
	}
	return NULL;
}

static int lock_rounds;

static void *mmap_loop(void *arg)
{
	pin((int)(intptr_t)arg);
	for (int i = 0; i < lock_rounds; i++) {
		void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			exit(1);
		munmap(p, 4096);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20;
	struct snap a, b, sum;
	pthread_t t;

	if (n < 1 || sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		fprintf(stderr, "tlb-counters: needs N >= 1 and 2 CPUs or more\n");
		return 2;
	}
	pin(0);
	/* Not counted: a CPU this process ran on before pin() may still hold
	 * its mm lazily; the first munmap's flush (page tables freed) reaches
	 * it and it lets the mm go. */
	char *w = map_region();
	touch(w);
	munmap(w, REGION);

	memset(&sum, 0, sizeof(sum));
	for (int i = 0; i < n; i++) {
		char *p = map_region();
		touch(p);
		snap(&a);
		munmap(p, REGION);
		snap(&b);
		add(&sum, &a, &b);
	}
	print("alone", n, &sum);

	memset(&sum, 0, sizeof(sum));
	if (pthread_create(&t, NULL, other, NULL) != 0)
		return 1;
	for (int i = 0; i < n; i++) {
		char *p = map_region();
		given = p;
		__atomic_store_n(&generation, (unsigned)i + 1, __ATOMIC_RELEASE);
		while (__atomic_load_n(&touched, __ATOMIC_ACQUIRE) != (unsigned)i + 1)
			__builtin_ia32_pause();
		snap(&a);
		munmap(p, REGION);
		snap(&b);
		add(&sum, &a, &b);
	}
	quit = 1;
	pthread_join(t, NULL);
	print("other_cpu", n, &sum);

	/* lock_stat: mmap_lock acquisitions and contentions. */
	int fd = open("/proc/lock_stat", O_WRONLY);
	if (fd < 0) {
		fprintf(stderr, "tlb-counters: no writable /proc/lock_stat (a kernel without CONFIG_LOCK_STAT?)\n");
		return 2;
	}
	if (write(fd, "0", 1) != 1)
		return 1;
	close(fd);
	lock_rounds = n * 50;
	pthread_t t0, t1;
	pthread_create(&t0, NULL, mmap_loop, (void *)0);
	pthread_create(&t1, NULL, mmap_loop, (void *)1);
	pthread_join(t0, NULL);
	pthread_join(t1, NULL);
	if (slurp("/proc/lock_stat") != 0)
		return 1;
	long long con = 0, acq = 0;
	int classes = 0;
	for (char *p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		char *colon = strstr(p, ": "), *eol = strchr(p, '\n');
		char *m = strstr(p, "mmap_lock");
		if (!colon || !m || m > colon || (eol && colon > eol))
			continue;
		double f[12];
		char *q = colon + 1, *e;
		int i;
		for (i = 0; i < 12; i++) {
			f[i] = strtod(q, &e);
			if (e == q)
				break;
			q = e;
		}
		if (i < 12)
			continue;
		classes++;
		con += (long long)f[1];
		acq += (long long)f[7];
	}
	printf("lock mmap_calls=%d mmap_lock_classes=%d mmap_lock_acquisitions=%lld mmap_lock_contentions=%lld\n",
	       4 * lock_rounds, classes, acq, con);
	return 0;
}
