/* results_area.c - create the shared results area before forking. */
#include <sys/mman.h>

#include "results_area.h"

int results_area_create(struct results_area *a, unsigned workers)
{
	size_t page = 4096;
	size_t ctl = (sizeof(struct results_control) + page - 1) & ~(page - 1);
	/* The fault-cost histograms follow the control block, within the
	 * same 2 MiB as it: a worker maps them with no page table of their own. */
	size_t fc = (sizeof(struct fault_cost_shared) + page - 1) & ~(page - 1);
	size_t bytes = ctl + fc + (size_t)workers * sizeof(struct worker_area);

	bytes = (bytes + page - 1) & ~(page - 1);
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	a->base = p;
	a->bytes = bytes;
	a->control = p;
	a->fault_cost = (struct fault_cost_shared *)((char *)p + ctl);
	a->workers = (struct worker_area *)((char *)p + ctl + fc);
	return 0;
}

void results_area_destroy(struct results_area *a)
{
	if (a->base)
		munmap(a->base, a->bytes);
	a->base = NULL;
}
