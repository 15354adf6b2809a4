/* backend_dummy.c - a backend that exists only in the test build
 * (build/tests/harness/mshare-bench-dummy), to show that adding a backend
 * is its file plus its one line in harness/backends.c: tests/harness/
 * dummy-backend.sh finds it in --help, `backends --json`, sweep validation
 * and side-by-side with nothing else edited.
 *
 * A memfd mapped MAP_SHARED, with a made-up fixed page size of 64 KiB (a
 * fact the tools must take from the table: --size must be a multiple of
 * it, and the sweep's page axis does not apply to it).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "backend_map.h"

static int dummy_probe(const struct region *r, char *why, size_t why_len)
{
	(void)r, (void)why, (void)why_len;
	return 0;
}

static int dummy_setup(struct region *r, char *err, size_t err_len)
{
	struct fd_backing *b = fd_backing_new(r);

	b->fd = memfd_create("mshare-bench-dummy", 0);
	if (b->fd < 0 || ftruncate(b->fd, (off_t)r->size) != 0) {
		snprintf(err, err_len, "dummy: memfd of %zu bytes: %s", r->size, strerror(errno));
		return -1;
	}
	r->backend_page_bytes = 4096;
	backend_fs_name(b->fd, r->fs_type, sizeof(r->fs_type));
	snprintf(r->backing, sizeof(r->backing), "memfd (dummy backend)");
	return 0;
}

const struct backend_ops backend_dummy = {
	.name = "dummy",
	.data = BACKEND_DATA_SHMEM,
	.description = "test-build-only backend: a memfd with a fixed 64 KiB page",
	.page_bytes = 64u << 10,
	.probe = dummy_probe,
	.setup = dummy_setup,
	.attach = backend_fd_attach,
	.detach = backend_fd_detach,
	.teardown = backend_fd_teardown,
};
