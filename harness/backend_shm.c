/* backend_shm.c - MAP_SHARED of a file on tmpfs (default /dev/shm).
 *
 * The file is created with O_TMPFILE: it has no name, so nothing is left
 * behind whatever way the run ends; workers inherit the descriptor and
 * map it themselves (the parent never maps it).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "backend_map.h"

#define SHM_DEFAULT_DIR "/dev/shm"
#define SHM_TMPFS_MAGIC 0x01021994

static const char *shm_dir(const struct region *r)
{
	return r->path ? r->path : SHM_DEFAULT_DIR;
}

static int shm_probe(const struct region *r, char *why, size_t why_len)
{
	struct stat st;
	const char *dir = shm_dir(r);

	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		snprintf(why, why_len, "%s is not a directory", dir);
		return -1;
	}
	if (access(dir, W_OK) != 0) {
		snprintf(why, why_len, "%s is not writable: %s", dir, strerror(errno));
		return -1;
	}
	/* The run is recorded as "shm", tmpfs: a directory elsewhere would
	 * measure another filesystem under that name. */
	struct statfs fs;
	if (statfs(dir, &fs) == 0 && (unsigned long)fs.f_type != SHM_TMPFS_MAGIC) {
		snprintf(why, why_len, "%s is not on tmpfs (filesystem magic 0x%lx); backend shm is tmpfs, use "
				       "backend file for other filesystems", dir, (unsigned long)fs.f_type);
		return -1;
	}
	return 0;
}

static int shm_setup(struct region *r, char *err, size_t err_len)
{
	const char *dir = shm_dir(r);
	struct fd_backing *b = fd_backing_new(r);

	b->fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (b->fd < 0) {
		snprintf(err, err_len, "cannot create a file in %s: %s", dir, strerror(errno));
		return -1;
	}
	/* tmpfs allocates on first touch: a region larger than its room
	 * would end in workers killed by SIGBUS, not in a measurement. */
	struct statfs fs;
	uint64_t need = r->data_bytes && r->data_bytes < r->size ? r->data_bytes : r->size;
	if (fstatfs(b->fd, &fs) == 0 && (uint64_t)fs.f_bavail * (uint64_t)fs.f_bsize < need) {
		snprintf(err, err_len, "not enough room in tmpfs %s: %llu bytes free, the workload faults in up to "
				       "%llu of --size %zu (workers would die of SIGBUS); free some, or remount it larger",
			 dir, (unsigned long long)fs.f_bavail * (unsigned long long)fs.f_bsize,
			 (unsigned long long)need, r->size);
		return -1;
	}
	if (ftruncate(b->fd, (off_t)r->size) != 0) {
		snprintf(err, err_len, "cannot size the file in %s to %zu bytes: %s", dir, r->size, strerror(errno));
		return -1;
	}
	/* Workers inherit the descriptor across fork; exec is never used. */
	fcntl(b->fd, F_SETFD, 0);
	r->backend_page_bytes = 4096;
	backend_fd_persist(r, b->fd);
	snprintf(r->backing, sizeof(r->backing), "%s (unnamed O_TMPFILE)", dir);
	/* The file-backed rule (backend_map.h): its pages exist before the
	 * workers start, as on every file backend. */
	if (fallocate(b->fd, 0, 0, (off_t)r->size) != 0) {
		snprintf(err, err_len, "cannot allocate %zu bytes in %s: %s", r->size, dir, strerror(errno));
		return -1;
	}
	return backend_fd_initialize(r, b->fd, err, err_len);
}

const struct backend_ops backend_shm = {
	.name = "shm",
	.planner_mode = BACKEND_MODEL_BY_PAGE,
	.data = BACKEND_DATA_FILE,
	.default_path = SHM_DEFAULT_DIR,
	.description = "MAP_SHARED of a file on tmpfs (default /dev/shm, or --path DIR)",
	.probe = shm_probe,
	.setup = shm_setup,
	.attach = backend_fd_attach,
	.detach = backend_fd_detach,
	.teardown = backend_fd_teardown,
};
