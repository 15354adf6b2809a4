/* backend_file.c - MAP_SHARED of a file at --path (ext4, xfs, a DAX mount).
 *
 * --path DIR: an unnamed O_TMPFILE in DIR (a named temporary file where
 *             the filesystem lacks O_TMPFILE, removed at teardown);
 * --path FILE, existing: refused unless --reuse-path, then used as is
 *             (at least --size long);
 * --path that is a symbolic link: refused (never followed);
 * --path FILE, missing: created, sized, removed at teardown.
 * The file is preallocated where the filesystem allows (fallocate), which
 * on DAX is what makes 2 MiB-aligned extents, hence PMD mappings,
 * possible. DAX is detected with statx STATX_ATTR_DAX and recorded. A
 * file that accepts MAP_SYNC (DAX) is mapped MAP_SHARED_VALIDATE|MAP_SYNC
 * and persisted with pmem_persist; any other with msync (backend_fd_persist).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend_map.h"

static int file_probe(const struct region *r, char *why, size_t why_len)
{
	const char *p;

	if (!r->path) {
		snprintf(why, why_len, "needs --path FILE or --path DIR");
		return -1;
	}
	struct stat st;
	if (stat(p = r->path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		snprintf(why, why_len, "--path %s is neither a regular file nor a directory%s", p,
			 S_ISCHR(st.st_mode) ? " (a device-DAX device is the devdax backend's)" : "");
		return -1;
	}
	return 0;
}

static int file_open(struct region *r, struct fd_backing *b, char *err, size_t err_len)
{
	struct stat st;

	if (backend_path_refuse_symlink(r->path, err, err_len) != 0)
		return -1;
	if (stat(r->path, &st) == 0 && S_ISDIR(st.st_mode)) {
		b->fd = open(r->path, O_TMPFILE | O_RDWR, 0600);
		if (b->fd >= 0) {
			snprintf(r->backing, sizeof(r->backing), "%s (unnamed O_TMPFILE)", r->path);
			return 0;
		}
	}
	b->fd = backend_open_path(r, "mshare-bench", b->unlink_path, sizeof(b->unlink_path), err, err_len);
	if (b->fd < 0)
		return -1;
	snprintf(r->backing, sizeof(r->backing), "%s", b->unlink_path[0] ? b->unlink_path : r->path);
	return 0;
}

static int file_setup(struct region *r, char *err, size_t err_len)
{
	struct fd_backing *b = fd_backing_new(r);

	struct stat st;
	if (file_open(r, b, err, err_len))
		return -1;
	/* An existing regular file (--reuse-path) is used as is; anything
	 * else was created here. */
	bool fresh = !r->reused;
	if (fstat(b->fd, &st) == 0 && (uint64_t)st.st_size < r->size &&
	    ftruncate(b->fd, (off_t)r->size) != 0) {
		snprintf(err, err_len, "cannot size %s to %zu bytes: %s", r->backing, r->size, strerror(errno));
		return -1;
	}
	int rc = fallocate(b->fd, 0, 0, (off_t)r->size);
	if (rc != 0 && errno == ENOSPC) {
		snprintf(err, err_len, "not enough space for %zu bytes in %s", r->size, r->backing);
		return -1;
	}
	r->backend_page_bytes = 4096;
	backend_fd_persist(r, b->fd);
	/* A file it created is all zeros: written once for MAP_SYNC. An
	 * existing --path FILE is used as it is. */
	if (fresh && backend_fd_initialize(r, b->fd, err, err_len) != 0)
		return -1;
	if (!fresh)
		snprintf(r->preparation, sizeof(r->preparation), "%s", BACKEND_PREP_EXISTING);
	return 0;
}

const struct backend_ops backend_file = {
	.name = "file",
	.planner_mode = BACKEND_MODEL_BY_PAGE,
	.data = BACKEND_DATA_FILE,
	.description = "MAP_SHARED of a file at --path FILE|DIR (ext4, xfs, DAX); DAX detected with statx "
		       "and mapped MAP_SYNC",
	.probe = file_probe,
	.setup = file_setup,
	.attach = backend_fd_attach,
	.detach = backend_fd_detach,
	.teardown = backend_fd_teardown,
};
