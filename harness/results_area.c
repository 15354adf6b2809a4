/* results_area.c - the shared results area: created before forking, and
 * narrowed to its own entry in each worker (results_area.h). */
#include <sys/mman.h>
#include <unistd.h>

#include "results_area.h"

#define AREA_PAGE ((size_t)4096)

static size_t page_up(size_t n)
{
	return (n + AREA_PAGE - 1) & ~(AREA_PAGE - 1);
}

int results_area_create(struct results_area *a, unsigned workers, size_t region_bytes)
{
	size_t ctl = page_up(sizeof(struct results_control));
	size_t pages = region_bytes / AREA_PAGE, map = page_up((pages + 7) / 8);

	*a = (struct results_area){ .fd = -1 };
	if (map > RESULTS_POPULATED_MAX)
		map = pages = 0;
	a->head_bytes = ctl + page_up(sizeof(struct fault_cost_shared)) + map;
	a->table_bytes = page_up((size_t)workers * sizeof(struct worker_area));
	a->fd = memfd_create("mshare-bench results", MFD_CLOEXEC);
	if (a->fd < 0)
		return -1;
	if (ftruncate(a->fd, (off_t)(a->head_bytes + a->table_bytes)) != 0)
		goto fail;
	/* The head first: mmap places it highest, right below the libraries. */
	a->head = mmap(NULL, a->head_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, a->fd, 0);
	if (a->head == MAP_FAILED)
		goto fail;
	a->table = mmap(NULL, a->table_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, a->fd, (off_t)a->head_bytes);
	if (a->table == MAP_FAILED) {
		munmap(a->head, a->head_bytes);
		goto fail;
	}
	a->control = a->head;
	a->fault_cost = (struct fault_cost_shared *)((char *)a->head + ctl);
	a->populated = map ? (uint8_t *)a->head + ctl + page_up(sizeof(struct fault_cost_shared)) : NULL;
	a->populated_bytes = map;
	a->populated_pages = pages;
	a->workers = a->table;
	return 0;
fail:
	close(a->fd);
	*a = (struct results_area){ .fd = -1 };
	return -1;
}

struct worker_area *results_area_own(struct results_area *a, unsigned index)
{
	size_t at = (size_t)index * sizeof(struct worker_area);
	size_t first = at & ~(AREA_PAGE - 1);
	size_t len = page_up(at + sizeof(struct worker_area)) - first;

	/* Unmapped first, so that the hole it leaves below the head is where
	 * mmap puts this worker's entry. */
	munmap(a->table, a->table_bytes);
	a->workers = NULL;
	a->table = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, a->fd, (off_t)(a->head_bytes + first));
	close(a->fd);
	a->fd = -1;
	if (a->table == MAP_FAILED) {
		a->table = NULL;
		a->table_bytes = 0;
		return NULL;
	}
	a->table_bytes = len;
	return (struct worker_area *)((char *)a->table + (at - first));
}

void results_area_destroy(struct results_area *a)
{
	if (a->head)
		munmap(a->head, a->head_bytes);
	if (a->table)
		munmap(a->table, a->table_bytes);
	if (a->fd >= 0)
		close(a->fd);
	*a = (struct results_area){ .fd = -1 };
}
