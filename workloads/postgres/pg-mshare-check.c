/* pg-mshare-check.c - what PostgreSQL needs from pg-mshare.so, without
 * PostgreSQL: run in the guest as
 *     LD_PRELOAD=pg-mshare.so PGMSHARE_PROGRAM=pg-mshare-check pg-mshare-check [CHILDREN]
 * it maps 4 MiB with mmap(MAP_SHARED|MAP_ANONYMOUS) as the postmaster maps
 * its main segment (the library puts it on mshare), writes a pattern, forks
 * CHILDREN (default 8) processes that check the pattern at the same address
 * (attached by the library's fork handler), then
 *   - wait on a process-shared POSIX semaphore in the region (PostgreSQL's
 *     PGSemaphore: sem_wait, a FUTEX_WAIT on shared memory) until the parent
 *     posts it once per child, and
 *   - wait with FUTEX_WAIT (shared, not private) on a word of the region
 *     until the parent's FUTEX_WAKE, whose return value counts the waiters
 *     the kernel matched;
 * then munmaps the region (the library detaches and unlinks its name).
 * Prints one "check: ..." line per fact ("ok" or "FAIL"); exit 0 when all
 * hold. A 60 s alarm ends a hang (a wake that never arrives) as a failure.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LEN (4UL << 20)

struct shared {
	sem_t sem;
	_Atomic int at_sem;
	_Atomic int past_sem;
	_Atomic uint32_t word;
	_Atomic int at_futex;
	_Atomic int woken;
	_Atomic int eagain;
};

static int failed;

static void check(int ok, const char *what)
{
	printf("check: %s %s\n", ok ? "ok" : "FAIL", what);
	fflush(stdout);
	if (!ok)
		failed = 1;
}

static long futex(_Atomic uint32_t *w, int op, uint32_t val)
{
	return syscall(SYS_futex, (uint32_t *)w, op, val, NULL, NULL, 0);
}

static void nap(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void wait_count(_Atomic int *c, int want)
{
	while (atomic_load(c) < want)
		nap(10);
}

int main(int argc, char **argv)
{
	int children = argc > 1 ? atoi(argv[1]) : 8;
	unsigned char *p;
	struct shared *s;
	char msg[200];
	long woken;
	int bad = 0;

	if (children < 1 || children > 1000) {
		fprintf(stderr, "pg-mshare-check: CHILDREN '%s' (1..1000)\n", argv[1]);
		return 2;
	}
	alarm(60);
	p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		printf("check: FAIL mmap of the segment: %s\n", strerror(errno));
		return 1;
	}
	snprintf(msg, sizeof(msg), "segment at %p", (void *)p);
	check((uintptr_t)p % (512UL << 30) == 0, msg);
	for (unsigned long i = 4096; i < LEN; i += 4096)
		p[i] = (unsigned char)(i >> 12);
	s = (struct shared *)p;
	check(sem_init(&s->sem, 1, 0) == 0, "sem_init(pshared) in the region");
	for (int c = 0; c < children; c++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			int rc = 0;

			for (unsigned long i = 4096; i < LEN; i += 4096)
				if (p[i] != (unsigned char)(i >> 12))
					rc = 3;
			atomic_fetch_add(&s->at_sem, 1);
			if (sem_wait(&s->sem) != 0)
				rc = 4;
			atomic_fetch_add(&s->past_sem, 1);
			atomic_fetch_add(&s->at_futex, 1);
			if (futex(&s->word, FUTEX_WAIT, 0) == 0)
				atomic_fetch_add(&s->woken, 1);
			else if (errno == EAGAIN)
				atomic_fetch_add(&s->eagain, 1);
			else
				rc = 5;
			_exit(rc);
		}
	}
	wait_count(&s->at_sem, children);
	nap(500); /* the children are (most likely) asleep in sem_wait now */
	check(atomic_load(&s->past_sem) == 0, "children block in sem_wait until the post");
	for (int c = 0; c < children; c++)
		sem_post(&s->sem);
	wait_count(&s->past_sem, children);
	check(1, "every child woke from sem_wait (process-shared semaphore in the region)");
	wait_count(&s->at_futex, children);
	nap(500);
	atomic_store(&s->word, 1);
	woken = futex(&s->word, FUTEX_WAKE, INT_MAX);
	for (int c = 0; c < children; c++) {
		int st;

		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			bad++;
	}
	snprintf(msg, sizeof(msg), "children saw the parent's data and exited 0 (%d of %d did not)", bad,
		 children);
	check(bad == 0, msg);
	snprintf(msg, sizeof(msg), "FUTEX_WAKE matched the waiters: woke %ld, children woken %d, EAGAIN %d, of %d",
		 woken, atomic_load(&s->woken), atomic_load(&s->eagain), children);
	check(woken >= 1 && woken == atomic_load(&s->woken) &&
		      atomic_load(&s->woken) + atomic_load(&s->eagain) == children, msg);
	check(munmap(p, LEN) == 0, "munmap of the segment (mshare_unlink by the library)");
	return failed;
}
