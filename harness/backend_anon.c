/* backend_anon.c - MAP_SHARED|MAP_ANONYMOUS created before the fork.
 *
 * The only backend whose sharing comes from fork itself: the parent maps
 * the region in setup (untouched, so fork copies no page table for it) and
 * every worker inherits the mapping. A worker that detaches cannot attach
 * again: nothing names the memory.
 */
#include <stdio.h>

#include "backend_map.h"

static int anon_probe(const struct region *r, char *why, size_t why_len)
{
	(void)r;
	(void)why;
	(void)why_len;
	return 0;
}

static int anon_setup(struct region *r, char *err, size_t err_len)
{
	r->backend_page_bytes = 4096;
	snprintf(r->backing, sizeof(r->backing), "shared anonymous memory (inherited over fork)");
	snprintf(r->fs_type, sizeof(r->fs_type), "shmem");
	r->persist = PERSIST_VOLATILE;
	snprintf(r->preparation, sizeof(r->preparation), "%s", BACKEND_PREP_ANON);
	snprintf(r->persist_why, sizeof(r->persist_why),
		 "shared anonymous memory: RAM, nothing outlives a reboot; msync(MS_SYNC) has nothing to write back");
	return backend_map_fixed(r, -1, err, err_len);
}

static int anon_attach(struct region *r, char *err, size_t err_len)
{
	if (r->base)
		return 0; /* inherited from the parent */
	snprintf(err, err_len, "the anon region cannot be re-attached after detach: it is shared only through fork");
	return -1;
}

static int anon_detach(struct region *r, char *err, size_t err_len)
{
	return backend_unmap(r, err, err_len);
}

static void anon_teardown(struct region *r)
{
	char err[128];
	backend_unmap(r, err, sizeof(err));
}

const struct backend_ops backend_anon = {
	.name = "anon",
	.planner_mode = BACKEND_MODEL_BY_PAGE,
	.data = BACKEND_DATA_SHMEM,
	.description = "MAP_SHARED|MAP_ANONYMOUS mapped by the parent before fork, inherited by workers",
	.probe = anon_probe,
	.setup = anon_setup,
	.attach = anon_attach,
	.detach = anon_detach,
	.teardown = anon_teardown,
};
