/* backend_map.c - fixed-address mapping shared by the backends. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "backend_map.h"
#include "linux_compat.h"
#include "parse.h"
#include "pmem_ns.h"

int backend_map_fixed(struct region *r, int fd, char *err, size_t err_len)
{
	int prot = PROT_READ | (r->read_only ? 0 : PROT_WRITE);
	int share = fd >= 0 && r->map_sync ? MAP_SHARED_VALIDATE | MAP_SYNC : MAP_SHARED;
	/* MAP_SHARED_VALIDATE refuses MAP_FIXED_NOREPLACE (EOPNOTSUPP on 6.1:
	 * not in LEGACY_MAP_MASK), and MAP_FIXED would replace whatever is
	 * there: with MAP_SYNC the address is a hint, checked below. */
	int fixed = share == MAP_SHARED ? MAP_FIXED_NOREPLACE : 0;
	int flags = share | fixed | (fd < 0 ? MAP_ANONYMOUS : 0);
	void *want = (void *)r->addr;
	void *p = mmap(want, r->size, prot, flags, fd, 0);

	if (p == MAP_FAILED) {
		snprintf(err, err_len, "mmap%s of %zu bytes at %p failed: %s%s",
			 share == MAP_SHARED ? "" : " (MAP_SHARED_VALIDATE|MAP_SYNC)", r->size, want, strerror(errno),
			 errno == EEXIST ? " (something is already mapped there; try another --addr)" : "");
		return -1;
	}
	if (p != want) { /* a hint (MAP_SYNC, or a kernel without MAP_FIXED_NOREPLACE) */
		munmap(p, r->size);
		snprintf(err, err_len, "the kernel placed the region at %p instead of %p%s", p, want,
			 fixed ? "" : " (something is mapped there; try another --addr)");
		return -1;
	}
	if (r->page == PAGE_MODE_4K && madvise(p, r->size, MADV_NOHUGEPAGE) != 0) {
		snprintf(err, err_len, "madvise(MADV_NOHUGEPAGE) failed: %s", strerror(errno));
		munmap(p, r->size);
		return -1;
	}
	r->base = p;
	return 0;
}

int backend_unmap(struct region *r, char *err, size_t err_len)
{
	if (!r->base)
		return 0;
	if (munmap(r->base, r->size) != 0) {
		snprintf(err, err_len, "munmap failed: %s", strerror(errno));
		return -1;
	}
	r->base = NULL;
	return 0;
}

void backend_fs_name(int fd, char *out, size_t len)
{
	static const struct { long magic; const char *name; } known[] = {
		{ 0x01021994, "tmpfs" }, { 0xEF53, "ext4" }, { 0x58465342, "xfs" },
		{ 0x958458f6, "hugetlbfs" }, { 0x9123683E, "btrfs" }, { 0x6969, "nfs" },
		{ 0x794c7630, "overlayfs" }, { 0x2fc12fc1, "zfs" },
	};
	struct statfs sf;

	if (fstatfs(fd, &sf) != 0) {
		snprintf(out, len, "unknown");
		return;
	}
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if ((long)sf.f_type == known[i].magic) {
			snprintf(out, len, "%s", known[i].name);
			return;
		}
	snprintf(out, len, "0x%lx", (unsigned long)sf.f_type);
}

bool backend_fd_is_dax(int fd)
{
	struct statx sx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &sx) != 0)
		return false;
	return (sx.stx_attributes_mask & STATX_ATTR_DAX) && (sx.stx_attributes & STATX_ATTR_DAX);
}

int backend_path_data(const char *path, char *fs, size_t fs_len, bool *dax, bool *ram)
{
	char dir[4096];
	struct stat st;
	struct statfs sf;
	int fd;

	if (stat(path, &st) == 0 && S_ISCHR(st.st_mode)) {
		/* A device (device-DAX): its data stays on the device. */
		struct pmem_namespace ns;
		char why[256];
		bool devdax = pmem_ns_of_devdax(path, &ns, why, sizeof(why)) == 0;

		snprintf(fs, fs_len, "%s", devdax ? "devdax" : "chardev");
		*dax = devdax;
		*ram = false;
		return 0;
	}
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
		fd = open(path, O_PATH | O_CLOEXEC);
	} else {
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
			snprintf(dir, sizeof(dir), "%s", path);
		else
			path_dir(path, dir, sizeof(dir));
		/* A file with no name and no data: what a new file there gets. */
		fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
		if (fd < 0)
			fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	}
	if (fd < 0)
		return -1;
	backend_fs_name(fd, fs, fs_len);
	*dax = backend_fd_is_dax(fd);
	*ram = fstatfs(fd, &sf) == 0 && ((long)sf.f_type == 0x01021994 /* tmpfs */ ||
					 (long)sf.f_type == 0x858458f6 /* ramfs */);
	close(fd);
	return 0;
}

void backend_fd_persist(struct region *r, int fd)
{
	struct statfs sf;
	int prot = PROT_READ | (r->read_only ? 0 : PROT_WRITE);
	void *p;

	backend_fs_name(fd, r->fs_type, sizeof(r->fs_type));
	r->dax = backend_fd_is_dax(fd);
	r->map_sync = false;
	if (fstatfs(fd, &sf) == 0 && ((long)sf.f_type == 0x01021994 /* tmpfs */ ||
				      (long)sf.f_type == 0x858458f6 /* ramfs */)) {
		r->persist = PERSIST_VOLATILE;
		snprintf(r->persist_why, sizeof(r->persist_why),
			 "%s: RAM, nothing outlives a reboot; msync(MS_SYNC) has nothing to write back",
			 r->fs_type);
		return;
	}
	p = mmap(NULL, 4096, prot, MAP_SHARED_VALIDATE | MAP_SYNC, fd, 0);
	if (p != MAP_FAILED) {
		munmap(p, 4096);
		r->map_sync = true;
		r->persist = PERSIST_PMEM;
		snprintf(r->persist_why, sizeof(r->persist_why),
			 "%s file%s mapped MAP_SHARED_VALIDATE|MAP_SYNC: CPU cache flushes from user space "
			 "(pmem_persist) are durable", r->fs_type, r->dax ? " on DAX" : "");
		return;
	}
	r->persist = PERSIST_MSYNC;
	snprintf(r->persist_why, sizeof(r->persist_why),
		 "%s file%s: mmap(MAP_SHARED_VALIDATE|MAP_SYNC) refused (%s%s); msync(MS_SYNC) writes it back",
		 r->fs_type, r->dax ? " on DAX" : ", not DAX", strerror(errno),
		 errno == EOPNOTSUPP ? ": MAP_SYNC needs DAX" : "");
}

int backend_fd_initialize(struct region *r, int fd, char *err, size_t err_len)
{
	const size_t chunk = 1u << 20;
	char *zeros;
	size_t n = strlen(r->persist_why);

	if (r->read_only) {
		snprintf(r->preparation, sizeof(r->preparation),
			 "%s: not written (the run maps it read-only)", BACKEND_PREP_FILE_RULE);
		return 0;
	}
	zeros = calloc(1, chunk);
	if (!zeros) {
		snprintf(err, err_len, "out of memory");
		return -1;
	}
	for (size_t off = 0; off < r->size; off += chunk) {
		size_t len = r->size - off < chunk ? r->size - off : chunk;
		ssize_t w = pwrite(fd, zeros, len, (off_t)off);

		if (w != (ssize_t)len) {
			snprintf(err, err_len, "cannot write the %zu-byte backing %s once before mapping it MAP_SYNC: %s",
				 r->size, r->backing, w < 0 ? strerror(errno) : "short write");
			free(zeros);
			return -1;
		}
	}
	free(zeros);
	if (fdatasync(fd) != 0) {
		snprintf(err, err_len, "fdatasync of %s: %s", r->backing, strerror(errno));
		return -1;
	}
	snprintf(r->preparation, sizeof(r->preparation), "%s", BACKEND_PREP_WRITTEN);
	if (r->map_sync)
		snprintf(r->persist_why + n, sizeof(r->persist_why) - n,
			 "; written once (zeros) at set-up, as a database initializes its files, so that no "
			 "MAP_SYNC write fault has to commit filesystem metadata");
	return 0;
}

int backend_devdax_open(struct region *r, char *err, size_t err_len)
{
	struct pmem_namespace *ns = &r->pmem;
	int fd;

	if (pmem_ns_of_devdax(r->path, ns, err, err_len) != 0 ||
	    pmem_ns_check_fit(ns, r->path, r->size, r->addr, err, err_len) != 0)
		return -1;
	fd = open(r->path, (r->read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, err_len, "cannot open --path %s: %s", r->path, strerror(errno));
		return -1;
	}
	snprintf(r->backing, sizeof(r->backing), "%s", r->path);
	snprintf(r->fs_type, sizeof(r->fs_type), "devdax");
	r->dax = true;
	r->map_sync = false;
	r->backend_page_bytes = ns->align;
	snprintf(r->preparation, sizeof(r->preparation), "%s", BACKEND_PREP_DEVDAX);
	r->persist = PERSIST_PMEM;
	snprintf(r->persist_why, sizeof(r->persist_why),
		 "device-DAX %s (%s, no filesystem): its mappings are synchronous, CPU cache flushes from user "
		 "space (pmem_persist) are durable", r->path, ns->name[0] ? ns->name : "no nd namespace");
	return fd;
}

int backend_fd_attach(struct region *r, char *err, size_t err_len)
{
	struct fd_backing *b = r->backend_private;

	if (!b || b->fd < 0) {
		snprintf(err, err_len, "backend %s was not set up", r->backend_name);
		return -1;
	}
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", b->fd);
	int fd = open(path, (r->read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, err_len, "cannot open the backing again through %s: %s", path, strerror(errno));
		return -1;
	}
	if (backend_map_fixed(r, fd, err, err_len) != 0) {
		close(fd);
		return -1;
	}
	if (b->attach_fd >= 0) /* attached twice without a detach: keep one descriptor */
		close(b->attach_fd);
	b->attach_fd = fd;
	return 0;
}

int backend_fd_detach(struct region *r, char *err, size_t err_len)
{
	struct fd_backing *b = r->backend_private;

	if (backend_unmap(r, err, err_len) != 0)
		return -1;
	if (b && b->attach_fd >= 0) {
		close(b->attach_fd);
		b->attach_fd = -1;
	}
	return 0;
}

void backend_fd_teardown(struct region *r)
{
	struct fd_backing *b = r->backend_private;

	if (!b)
		return;
	if (b->fd >= 0)
		close(b->fd);
	if (b->attach_fd >= 0)
		close(b->attach_fd);
	if (b->unlink_path[0])
		unlink(b->unlink_path);
	r->backend_private = NULL;
}

BACKEND_STATE_FITS(struct fd_backing);

struct fd_backing *fd_backing_new(struct region *r)
{
	struct fd_backing *b = backend_state_new(r, sizeof(*b));

	b->fd = -1;
	b->attach_fd = -1;
	return b;
}

int backend_path_refuse_symlink(const char *path, char *err, size_t err_len)
{
	struct stat st;

	if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode))
		return 0;
	char target[256];
	ssize_t n = readlink(path, target, sizeof(target) - 1);
	target[n > 0 ? n : 0] = '\0';
	snprintf(err, err_len, "--path %s is a symbolic link (to %s); refusing to follow it: give the file or "
			       "directory it names", path, target);
	return -1;
}

int backend_open_path(struct region *r, const char *prefix, char *unlink_path, size_t len, char *err,
		      size_t err_len)
{
	struct stat st;
	int fd;

	unlink_path[0] = '\0';
	if (backend_path_refuse_symlink(r->path, err, err_len) != 0)
		return -1;
	if (stat(r->path, &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(unlink_path, len, "%s/%s.XXXXXX", r->path, prefix);
		fd = mkostemp(unlink_path, O_CLOEXEC);
		if (fd < 0) {
			snprintf(err, err_len, "cannot create a file in --path %s: %s", r->path, strerror(errno));
			unlink_path[0] = '\0';
		}
		return fd;
	}
	if (stat(r->path, &st) == 0) {
		if (!S_ISREG(st.st_mode)) {
			snprintf(err, err_len, "--path %s is neither a regular file nor a directory", r->path);
			return -1;
		}
		/* A file this run did not create is written only when asked
		 * for: a run writes into its region (and sizes it). */
		if (!r->reuse_path) {
			snprintf(err, err_len, "--path %s already exists and this run would write into it; "
					       "refusing: give a new file name or a directory, or --reuse-path to "
					       "use the file as it is", r->path);
			return -1;
		}
		if ((uint64_t)st.st_size < r->size) {
			snprintf(err, err_len, "--path %s is %lld bytes, smaller than --size %zu", r->path,
				 (long long)st.st_size, r->size);
			return -1;
		}
		fd = open(r->path, (r->read_only ? O_RDONLY : O_RDWR) | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0)
			r->reused = true;
	} else {
		fd = open(r->path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0)
			snprintf(unlink_path, len, "%s", r->path);
	}
	if (fd < 0)
		snprintf(err, err_len, "cannot open --path %s: %s", r->path, strerror(errno));
	return fd;
}
