/* backend_map.h - what file-backed backends share: mapping a descriptor
 * at the region's fixed address, and naming the filesystem under it. */
#ifndef MSHARE_BENCH_BACKEND_MAP_H
#define MSHARE_BENCH_BACKEND_MAP_H

#include <stddef.h>

#include "backend.h"

/* Per-run state of a descriptor-backed backend (backend_private). */
struct fd_backing {
	int fd;                /* the backing, opened by setup; workers inherit it */
	int attach_fd;         /* this process's own descriptor while attached, or -1 */
	char unlink_path[256]; /* file to remove at teardown, or "" */
};

/* A new struct fd_backing (no descriptor yet) in r's backend_state, set as
 * its backend_private, so teardown finds it whatever fails next. Cannot
 * fail. */
struct fd_backing *fd_backing_new(struct region *r);

/* mmap fd (or anonymous memory when fd < 0) at r->addr with
 * MAP_FIXED_NOREPLACE, then apply r->page. Sets r->base. */
int backend_map_fixed(struct region *r, int fd, char *err, size_t err_len);
/* munmap r->base; clears it. */
int backend_unmap(struct region *r, char *err, size_t err_len);
/* Name of the filesystem holding fd ("tmpfs", "ext4", "xfs", ...). */
void backend_fs_name(int fd, char *out, size_t len);
/* STATX_ATTR_DAX of fd. */
bool backend_fd_is_dax(int fd);

/* Where a backing file at path keeps its data, found before it exists:
 * path is an existing regular file (that file), a directory (a new file
 * in it) or a new file (in its directory). fs as backend_fs_name; *dax as
 * backend_fd_is_dax; *ram when the filesystem is tmpfs or ramfs. 0, or -1
 * with errno when the path cannot be opened. */
int backend_path_data(const char *path, char *fs, size_t fs_len, bool *dax, bool *ram);

/* States how writes to a mapping of fd (sized, not yet mapped) are made
 * durable: r->persist, r->persist_why, r->map_sync. RAM filesystems
 * (tmpfs, ramfs) are PERSIST_VOLATILE. Any other file is first tried with
 * a one-page mmap(MAP_SHARED_VALIDATE|MAP_SYNC), which only a DAX file
 * accepts: PERSIST_PMEM, and every mapping of the region then uses
 * MAP_SYNC; refused (EOPNOTSUPP: not DAX, or a filesystem without it),
 * PERSIST_MSYNC with the refusal recorded. Sets r->dax and r->fs_type. */
void backend_fd_persist(struct region *r, int fd);

/* The preparation rule of every file-backed backend (issue 46): a file the
 * run creates is allocated (fallocate) and written once with zeros, then
 * fdatasync'ed, before any worker starts, as a database initializes its
 * files: no fault inside the timer allocates blocks, converts unwritten
 * extents or zeroes them, on any backend. */
#define BACKEND_PREP_FILE_RULE "file-backed: fallocated and written once with zeros before the workers start"
#define BACKEND_PREP_WRITTEN \
	"fallocated, written once with zeros and fdatasync'ed before the workers start (the file-backed rule)"
#define BACKEND_PREP_ANON \
	"none possible: shared anonymous pages are allocated and zeroed at their first fault, inside the timer"
#define BACKEND_PREP_DEVDAX "none needed: device-DAX memory is mapped as it is, no allocation or zeroing at a fault"
#define BACKEND_PREP_EXISTING \
	"an existing file used as it is (--path FILE): not written by the run; its blocks are whatever it holds"
/* For a file the backend created (all zeros, fallocated): write its first
 * r->size bytes once (zeros) and fdatasync, so that its extents are
 * written ones and r->preparation says so (BACKEND_PREP_WRITTEN). A write
 * fault on a block never written (an unwritten extent from fallocate, or a
 * hole) converts and zeroes it inside the timer; under MAP_SYNC it must
 * also make the filesystem's metadata durable before it returns (measured
 * in the guest, about 2 s per such fault under TCG, a journal commit).
 * A database avoids both by initializing its files. Read-only runs: not
 * written (said in r->preparation). 0, or -1 with err. */
int backend_fd_initialize(struct region *r, int fd, char *err, size_t err_len);

/* Open the device-DAX device at r->path for a mapping of r->size at
 * r->addr: r->pmem from sysfs, the fit checked (pmem_ns_check_fit), and
 * the region's backing, fs_type ("devdax"), dax, persist (pmem: device-DAX
 * mappings are synchronous, no MAP_SYNC) and backend_page_bytes (its
 * alignment) set. The descriptor (O_CLOEXEC), or -1 with err. */
int backend_devdax_open(struct region *r, char *err, size_t err_len);

/* attach/detach/teardown for backends whose state is a struct fd_backing.
 * attach opens the backing again (through /proc/self/fd: the backing may
 * have no name) and maps it, as a process that connects opens and maps the
 * shared file; detach unmaps it and closes that descriptor. */
/* The data file at r->path of a file-backed region: in a directory, a new
 * file DIR/PREFIX.XXXXXX (mkstemp); an existing regular file as it is (at
 * least --size bytes; read-only with r->read_only); a missing path created
 * (O_EXCL, 0600). unlink_path (len bytes) gets the path of a file this call
 * created, to be removed at teardown, or "". Returns the descriptor
 * (O_CLOEXEC), or -1 with err naming --path. */
/* --path's last component is a symbolic link: -1 with the message (the
 * link is never followed; naming its target is the way to ask for it). */
int backend_path_refuse_symlink(const char *path, char *err, size_t err_len);
int backend_open_path(struct region *r, const char *prefix, char *unlink_path, size_t len, char *err,
		      size_t err_len);

int backend_fd_attach(struct region *r, char *err, size_t err_len);
int backend_fd_detach(struct region *r, char *err, size_t err_len);
void backend_fd_teardown(struct region *r);

#endif
