/* backend.h - how the shared region is created and mapped.
 *
 * One file per backend (harness/backend_<name>.c) defines one
 * `const struct backend_ops`; harness/backends.c lists them. Adding a
 * backend is that file plus one line in the list: its facts below (page
 * size, sharing, planner model, where the data lives) are all the rest of
 * the suite knows of it (`run --help`, `backends --json`, which the Python
 * tools read, the record's config.backend_facts, which calibration reads).
 *
 * Life cycle (the harness owns forking; a backend never forks workers):
 *   probe()    parent: can this backend run here? If not, why (for
 *              `mshare-bench backends` and a clear error).
 *   setup()    parent, before fork: create the backing (file, hugepage pool
 *              reservation, mshare donor, anonymous mapping...). Must not
 *              leave the region mapped in the parent unless the backend
 *              is one whose sharing comes only from fork (anon).
 *   attach()   worker: map the region at region->addr (timed by the harness).
 *   detach()   worker: unmap it (timed by the harness).
 *   teardown() parent, on every exit path including signals: undo setup
 *              (remove files, give back reserved hugepages, unlink names).
 *              Must be safe to call after a partial setup, and more than once.
 */
#ifndef MSHARE_BENCH_BACKEND_H
#define MSHARE_BENCH_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "persist_mode.h"
#include "pmem_ns.h"

enum page_mode {
	PAGE_MODE_ANY = 0, /* let the kernel choose (THP, DAX PMD...) */
	PAGE_MODE_4K,      /* force base pages: MADV_NOHUGEPAGE */
};

struct region {
	/* Requested by the user. */
	const char *backend_name;
	size_t size;          /* bytes, multiple of the backend's page size */
	uintptr_t addr;       /* fixed virtual address, 512 GiB-aligned by default */
	enum page_mode page;
	const char *path;     /* file or directory for file-backed backends */
	bool read_only;       /* workers attach read-only */
	bool reuse_path;      /* --reuse-path: an existing --path FILE may be used (and written) */
	uint64_t data_bytes;  /* region data the workload faults in, at most (pre-flight; 0: unknown, all) */

	/* Set by the backend: the region is an existing file used as it is
	 * (--reuse-path), so it may hold what an earlier run left (latches,
	 * log positions): workloads check it (workload_ops.check_region). */
	bool reused;

	/* Filled in by the backend. */
	void *base;                /* where the region is mapped in this process */
	size_t backend_page_bytes; /* page size the backend asked for (4096, 2M, 1G) */
	bool dax;                  /* the backing file has STATX_ATTR_DAX */
	char backing[256];         /* what backs it: file path, "memfd", ... */
	char fs_type[32];          /* filesystem of the backing, if any */
	/* The page-table sharing design and its version as the running
	 * kernel carries it ("mshare-2025 v3"), for the backends of one; ""
	 * for the others. */
	char design[160];
	long hugepages_reserved;   /* pages this run added to the pool */
	/* Mapped MAP_SHARED_VALIDATE|MAP_SYNC (a DAX file whose filesystem
	 * accepted it): backend_map_fixed() maps with it. */
	bool map_sync;
	/* How a write to the region is made durable, as the backend knows it
	 * (never guessed by the workloads), and why, in words for the record:
	 * e.g. why MAP_SYNC was refused, or why msync would be a no-op. */
	enum persist_mode persist;
	char persist_why[512];
	/* What the set-up did to the backing before any worker started
	 * (issue 46: one rule for every file-backed backend): the record's
	 * results.preparation. */
	char preparation[200];
	/* The persistent-memory namespace under the region, when the backend
	 * knows it (devdax): the record's environment.pmem. */
	struct pmem_namespace pmem;

	/* Backend state kept between calls: backend_private points into
	 * backend_state (backend_state_new), not at the heap. A worker writes
	 * this struct anyway (attach sets base), so the state it updates at
	 * attach costs it no page of its own; a heap block would be copied on
	 * its first write. NULL when the backend has no state. */
	void *backend_private;
	union {
		max_align_t align;
		unsigned char bytes[512];
	} backend_state;
};

/* Zeroed state of `bytes` for r's backend, in r->backend_state, set as
 * r->backend_private (a backend's state type must fit: check it with
 * BACKEND_STATE_FITS). */
static inline void *backend_state_new(struct region *r, size_t bytes)
{
	if (bytes > sizeof(r->backend_state.bytes))
		abort(); /* a backend forgot BACKEND_STATE_FITS */
	memset(r->backend_state.bytes, 0, sizeof(r->backend_state.bytes));
	r->backend_private = r->backend_state.bytes;
	return r->backend_private;
}
#define BACKEND_STATE_FITS(type) \
	_Static_assert(sizeof(type) <= sizeof(((struct region *)0)->backend_state), #type " fits backend_state")

/* Where the region's data lives, hence what faulting it in costs the host
 * (the memory pre-flight counts it from this). */
enum backend_data {
	/* Shared anonymous memory (shmem): RAM, once for all workers. */
	BACKEND_DATA_SHMEM,
	/* A file in --path, or in default_path: RAM if that filesystem is
	 * tmpfs, page cache on a disk filesystem, none on DAX (the data stays
	 * on the device). Which one is decided from the path before setup. */
	BACKEND_DATA_FILE,
	/* Huge pages of page_bytes from the kernel's pool, every page of the
	 * region allocated in setup. */
	BACKEND_DATA_HUGETLB,
};

struct backend_ops {
	const char *name;
	const char *description;
	enum backend_data data;
	/* BACKEND_DATA_FILE: directory of the backing file without --path
	 * (NULL: --path is required). */
	const char *default_path;
	/* The region's page tables exist once, whoever attaches (mshare): the
	 * memory pre-flight then expects one set, not one per worker. */
	bool page_tables_shared;
	/* The backend's own page size when it is fixed (hugetlbfs): --size and
	 * --addr must be multiples of it. 0 = base pages (4 KiB), which the
	 * kernel may map larger with --page any. */
	size_t page_bytes;
	/* The capacity planner's page-table model of this backend (a mode
	 * name of planner/pt_model.h: "hugetlb-2m", "hugetlb-1g", "mshare"),
	 * or BACKEND_MODEL_BY_PAGE: 4k or dax-2m by the page size the run
	 * obtained; NULL: no model (`plan --calibrate` skips its records). */
	const char *planner_mode;
	/* 0 if usable here; else -1 with a reason in why[]. */
	int (*probe)(const struct region *r, char *why, size_t why_len);
	/* 0 on success; else -1 with a message in err[]. */
	int (*setup)(struct region *r, char *err, size_t err_len);
	int (*attach)(struct region *r, char *err, size_t err_len);
	int (*detach)(struct region *r, char *err, size_t err_len);
	void (*teardown)(struct region *r);
};

#define BACKEND_MODEL_BY_PAGE "by-page"

/* The table of backends, NULL-terminated, in harness/backends.c. */
extern const struct backend_ops *const backend_table[];
const struct backend_ops *backend_find(const char *name);

struct json_writer;
/* Write b's facts as the members of the current JSON object: name,
 * description, fixed_page_bytes, page_tables_shared, planner_mode, data,
 * default_path, path_required (harness/backends.c). */
void backend_facts_json(struct json_writer *w, const struct backend_ops *b);

#endif
