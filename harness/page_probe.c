/* page_probe.c - how large are the mappings a fault installs in the region?
 *
 * smaps reports THP and hugetlbfs page sizes, but not DAX PMD mappings: they
 * map device memory, which smaps leaves out of FilePmdMapped and Rss. So for
 * a DAX backing a short-lived child attaches the region the way a worker
 * does, accesses its first byte, then the byte 1 MiB further on, and counts
 * the faults of each access. If the second takes none, the first fault
 * mapped the whole 2 MiB (a PMD mapping); if it takes one, the region is
 * mapped with 4 KiB PTEs. A region of 1 GiB or more that got a PMD-sized
 * answer is asked once more, 512 MiB on: no fault there either means the
 * first fault mapped the whole GiB (a PUD mapping: device-DAX at 1 GiB
 * alignment). The accesses are reads, or writes when the run
 * writes: a DAX read of unwritten blocks maps the (huge) zero page, a write
 * needs 2 MiB of aligned blocks, so the two can differ. A write adds zero
 * atomically: the data stays as it was. 1 MiB is far beyond fault-around (64 KiB), which
 * DAX does not do anyway. The child's page tables go with it; the pages it
 * read stay allocated, as any worker's first touch would leave them.
 */
#include "page_probe.h"

#include <errno.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

enum { PROBE_EXIT_PMD = 10, PROBE_EXIT_PTE, PROBE_EXIT_INCONCLUSIVE, PROBE_EXIT_PUD };

/* Minor and major: a DAX write fault that allocates blocks counts as major. */
static long faults(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt + ru.ru_majflt;
}

static void access_byte(volatile char *p, bool write)
{
	if (write)
		__atomic_fetch_add(p, 0, __ATOMIC_RELAXED); /* a write fault, no read fault first */
	else
		(void)*p;
}

static void __attribute__((noreturn)) probe_child(const struct backend_ops *backend, struct region r, bool write)
{
	char err[256];
	if (backend->attach(&r, err, sizeof(err)) != 0)
		_exit(PROBE_EXIT_INCONCLUSIVE);
	volatile char *base = r.base;
	faults(); /* so that the stack getrusage uses is mapped */
	long f0 = faults();
	access_byte(base, write);
	long f1 = faults();
	access_byte(base + (1u << 20), write);
	long f2 = faults();
	if (f1 - f0 < 1)
		_exit(PROBE_EXIT_INCONCLUSIVE);
	if (f2 - f1 != 0)
		_exit(PROBE_EXIT_PTE);
	if (r.size < (1ul << 30))
		_exit(PROBE_EXIT_PMD);
	access_byte(base + (512ul << 20), write);
	_exit(faults() - f2 == 0 ? PROBE_EXIT_PUD : PROBE_EXIT_PMD);
}

enum page_probe_result page_probe_run(const struct backend_ops *backend, const struct region *r, bool write)
{
	if (r->size < (2u << 20))
		return PAGE_PROBE_NOT_RUN;
	pid_t pid = fork();
	if (pid < 0)
		return PAGE_PROBE_INCONCLUSIVE;
	if (pid == 0)
		probe_child(backend, *r, write);
	int status;
	pid_t got;
	while ((got = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		; /* the harness's signal handlers */
	if (got != pid || !WIFEXITED(status))
		return PAGE_PROBE_INCONCLUSIVE;
	switch (WEXITSTATUS(status)) {
	case PROBE_EXIT_PMD: return PAGE_PROBE_PMD;
	case PROBE_EXIT_PTE: return PAGE_PROBE_PTE;
	case PROBE_EXIT_PUD: return PAGE_PROBE_PUD;
	default: return PAGE_PROBE_INCONCLUSIVE;
	}
}

const char *page_probe_describe(enum page_probe_result result)
{
	switch (result) {
	case PAGE_PROBE_PMD:
		return "probe: after a fault at the region's start (read, or write if the run writes), an access 1 MiB on did not fault (2 MiB PMD mapping)";
	case PAGE_PROBE_PUD:
		return "probe: after a fault at the region's start (read, or write if the run writes), accesses 1 MiB and 512 MiB on did not fault (1 GiB PUD mapping)";
	case PAGE_PROBE_PTE:
		return "probe: after a fault at the region's start (read, or write if the run writes), an access 1 MiB on faulted again (4 KiB PTEs)";
	case PAGE_PROBE_INCONCLUSIVE:
		return "probe inconclusive (attach failed or the first access did not fault)";
	default:
		return "not probed";
	}
}
