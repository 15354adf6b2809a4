/* backend_hugetlb.c - hugetlbfs memory through memfd_create(MFD_HUGETLB).
 *
 * One file serves hugetlb-2m and hugetlb-1g. Setup borrows exactly the
 * pages the region needs from the pool (raising nr_hugepages for this
 * size if needed) and allocates them all with fallocate, so a worker can
 * never hit SIGBUS on a missing page; teardown closes the memfd and gives
 * back what setup added. Runs at once and runs that die are handled in
 * hugepool.c (a lock, and a ledger of what each run added). The memfd has
 * no name: nothing to clean up on disk. MAP_SHARED hugetlb mappings whose 1 GiB-aligned ranges lie wholly
 * inside the region share PMD pages between processes (huge_pmd_share).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend_map.h"
#include "hugepool.h"

#ifndef MFD_HUGETLB
#define MFD_HUGETLB 0x0004U
#endif
#define MFD_HUGE_SHIFT_ 26

/* The page size is a fact of the backend's table entry. */
static size_t page_bytes_of(const struct region *r)
{
	return backend_find(r->backend_name)->page_bytes;
}

static int hugetlb_probe(const struct region *r, char *why, size_t why_len)
{
	size_t page = page_bytes_of(r);
	char dir[128];
	long avail = hugepool_available(page);

	hugepool_dir(page, dir, sizeof(dir));
	if (avail < 0) {
		snprintf(why, why_len, "no %zu kB huge page pool on this kernel (%s missing)", page / 1024, dir);
		return -1;
	}
	char path[192];
	snprintf(path, sizeof(path), "%s/nr_hugepages", dir);
	if (access(path, W_OK) != 0 && avail == 0) {
		snprintf(why, why_len, "pool empty and %s is not writable (needs root)", path);
		return -1;
	}
	return 0;
}

/* This run's hold on the pool: one region per process, given back by
 * teardown. */
static struct hugepool_claim claim = { .lock_fd = -1 };

/* Under the pool lock: reserve the pages and allocate them all. */
static int hugetlb_allocate(struct region *r, struct fd_backing *b, long pages, char *err, size_t err_len)
{
	size_t page = claim.page_bytes;
	unsigned log2 = (unsigned)__builtin_ctzl(page);

	if (hugepool_reserve(&claim, pages, err, err_len))
		return -1;
	b->fd = memfd_create("mshare-bench", MFD_HUGETLB | (log2 << MFD_HUGE_SHIFT_));
	if (b->fd < 0) {
		snprintf(err, err_len, "memfd_create(MFD_HUGETLB, %zu kB) failed: %s", page / 1024, strerror(errno));
		return -1;
	}
	if (ftruncate(b->fd, (off_t)r->size) != 0) {
		snprintf(err, err_len, "cannot size the hugetlb memfd to %zu bytes: %s", r->size, strerror(errno));
		return -1;
	}
	/* A process that does not take the lock (another tool, an older
	 * mshare-bench) may take free pages before the allocation: raise the
	 * pool by what is still missing and retry (the pages already
	 * allocated stay in the file). */
	for (int attempt = 1;; attempt++) {
		if (fallocate(b->fd, 0, 0, (off_t)r->size) == 0)
			break;
		int e = errno;
		struct stat st;
		long have = 0;
		if (fstat(b->fd, &st) == 0)
			have = (long)((uint64_t)st.st_blocks * 512 / page);
		if (e != ENOSPC || attempt == 5 || hugepool_reserve(&claim, pages - have, err, err_len) != 0) {
			snprintf(err, err_len, "cannot allocate %ld huge pages of %zu kB for the region (%ld allocated, "
				 "%ld added to the pool): %s", pages, page / 1024, have, claim.added, strerror(e));
			return -1;
		}
	}
	return 0;
}

static int hugetlb_setup(struct region *r, char *err, size_t err_len)
{
	size_t page = page_bytes_of(r);
	struct fd_backing *b = fd_backing_new(r);

	r->backend_page_bytes = page;
	if (r->size % page) {
		snprintf(err, err_len, "--size %zu is not a multiple of the %zu kB huge page", r->size, page / 1024);
		return -1;
	}
	long pages = (long)(r->size / page);
	/* From the check of what is free until the pages are allocated to
	 * the memfd, no other run may count the same free pages: the pool
	 * lock is held across both. */
	hugepool_claim_init(&claim, page);
	if (hugepool_lock(&claim, err, err_len) != 0)
		return -1;
	int rc = hugetlb_allocate(r, b, pages, err, err_len);
	r->hugepages_reserved = claim.added;
	hugepool_unlock(&claim); /* before any fork: a child must not hold it */
	if (rc != 0)
		return -1;
	snprintf(r->backing, sizeof(r->backing), "memfd (MFD_HUGETLB, %zu kB pages)", page / 1024);
	snprintf(r->fs_type, sizeof(r->fs_type), "hugetlbfs");
	r->persist = PERSIST_VOLATILE;
	snprintf(r->persist_why, sizeof(r->persist_why),
		 "hugetlbfs: RAM, nothing outlives a reboot; msync(MS_SYNC) has nothing to write back");
	snprintf(r->preparation, sizeof(r->preparation),
		 "fallocated before the workers start: the kernel allocates and zeroes every huge page then");
	return 0;
}

static void hugetlb_teardown(struct region *r)
{
	/* Under the lock from freeing the pages to giving back what this run
	 * added: no other run may take them for free pool pages meanwhile. */
	hugepool_lock_to_release(&claim);
	backend_fd_teardown(r); /* closes the memfd: its pages go back to the pool */
	hugepool_release(&claim);
	r->hugepages_reserved = 0;
}

/* The two pool sizes differ only in their name (which is also the planner's
 * model) and page size. */
#define HUGETLB_BACKEND(backend_name, page_text, bytes)                                                  \
	{                                                                                                \
		.name = backend_name, .planner_mode = backend_name, .data = BACKEND_DATA_HUGETLB,        \
		.description = "hugetlbfs memfd with " page_text " pages (pool raised for the run, given " \
			       "back after)",                                                            \
		.page_bytes = bytes, .probe = hugetlb_probe, .setup = hugetlb_setup,                     \
		.attach = backend_fd_attach, .detach = backend_fd_detach, .teardown = hugetlb_teardown,  \
	}

const struct backend_ops backend_hugetlb_2m = HUGETLB_BACKEND("hugetlb-2m", "2 MiB", 2ul << 20);
const struct backend_ops backend_hugetlb_1g = HUGETLB_BACKEND("hugetlb-1g", "1 GiB", 1ul << 30);
