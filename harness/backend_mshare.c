/* backend_mshare.c - the region shared at page-table level with mshare().
 *
 * A donor process, forked in setup(), maps the backing at the region's
 * address and declares the whole mshare unit around it shared:
 *   mshare(name, addr, unit, O_CREAT|O_RDWR|O_EXCL, 0600).
 * Workers attach as consumers, as the series' cover letter describes: read
 * struct mshare_info from /sys/fs/mshare/<name>, then mshare(name, start,
 * size, O_RDWR or O_RDONLY, 0600); they detach with mshare_unlink(name).
 *
 * Why a separate donor and not the harness parent: a process forked after
 * the region exists inherits a VMA that points at its parent's mm, not a
 * consumer attachment, so the parent must never hold the region across
 * fork. The donor also owns clean-up: when the parent closes the stop pipe
 * (teardown, or the parent dying for any reason) the donor drops every
 * reference still held on the name, including those of workers that were
 * killed before they could detach, so no msharefs entry outlives the run.
 *
 * Backings: `mshare` maps a file in --path (default /mnt/pmem, the DAX
 * mount of the benchmark VM), or, when --path is a device-DAX device
 * (/dev/daxX.Y), that device itself (--size a multiple of its alignment);
 * `mshare-anon` maps shared anonymous memory.
 * The syscalls are issued only after mshare_kernel_supported() has proved
 * the running kernel carries the series (on other kernels 451 and 452 are
 * cachestat and fchmodat2).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kernel/include/mshare-uapi.h"
#include "backend.h"
#include "backend_map.h"
#include "clock.h"
#include "pmem_ns.h"

#define MSHARE_DEFAULT_DIR "/mnt/pmem"
/* Bound on the clean-up loop: one reference per attach never detached. */
#define MSHARE_MAX_UNLINKS 1000000

struct mshare_state {
	char name[64];
	char file_path[256]; /* backing file to remove at teardown, or "" */
	pid_t donor;
	int stop_fd;         /* write end; closing it tells the donor to finish */
	unsigned long unit;  /* /proc/sys/vm/mshare_size */
};

BACKEND_STATE_FITS(struct mshare_state);

static int mshare_probe_common(char *why, size_t why_len)
{
	unsigned long unit;

	if (mshare_read_size_unit(&unit) != 0) {
		snprintf(why, why_len, "mshare not available on this kernel: %s missing",
			 MSHARE_SIZE_SYSCTL);
		return -1;
	}
	if (!mshare_kernel_supported()) {
		snprintf(why, why_len, "mshare not available on this kernel: %s not registered",
			 MSHARE_FS_TYPE);
		return -1;
	}
	if (!mshare_fs_mounted()) {
		snprintf(why, why_len, "msharefs is not mounted at %s (mount -t %s none %s)",
			 MSHARE_FS_DIR, MSHARE_FS_TYPE, MSHARE_FS_DIR);
		return -1;
	}
	return 0;
}

static int mshare_probe(const struct region *r, char *why, size_t why_len)
{
	struct pmem_namespace ns;

	if (pmem_path_is_chardev(r->path) && pmem_ns_of_devdax(r->path, &ns, why, why_len) != 0)
		return -1;
	return mshare_probe_common(why, why_len);
}

/* Drop every reference still held on the name: the donor's own and any a
 * killed worker left behind. Stops when the name is gone. */
static void donor_release_name(const char *name)
{
	for (long i = 0; i < MSHARE_MAX_UNLINKS; i++)
		if (mshare_unlink(name) != 0)
			break;
}

/* The donor: map, declare shared, report, wait for the stop pipe. */
static void donor_main(struct region *r, struct mshare_state *s, int backing_fd, int ready_fd,
		       int stop_fd)
{
	int status = 0;
	char msg[200] = "";
	char buf;

	/* ^C reaches the whole process group; the parent decides when we stop. */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	if (backend_map_fixed(r, backing_fd, msg, sizeof(msg)) != 0) {
		status = -1;
	} else if (mshare(s->name, r->addr, s->unit, O_CREAT | O_RDWR | O_EXCL, 0600) != 0) {
		status = -1;
		snprintf(msg, sizeof(msg), "mshare(%.63s, 0x%lx, %lu, O_CREAT|O_RDWR|O_EXCL) failed: %s",
			 s->name, (unsigned long)r->addr, s->unit, strerror(errno));
	}
	if (write(ready_fd, msg, sizeof(msg)) != (ssize_t)sizeof(msg))
		_exit(1);
	close(ready_fd);
	if (status != 0)
		_exit(1);
	/* Returns 0 when the parent closes its end, or dies. */
	while (read(stop_fd, &buf, 1) < 0 && errno == EINTR)
		;
	donor_release_name(s->name);
	_exit(0);
}

static int open_backing(struct region *r, struct mshare_state *s, bool anon, char *err,
			size_t err_len)
{
	const char *dir = r->path ? r->path : MSHARE_DEFAULT_DIR;
	int fd;

	if (!anon && pmem_path_is_chardev(r->path)) {
		/* A device-DAX device: the donor maps the device itself. */
		fd = backend_devdax_open(r, err, err_len);
		return fd < 0 ? -2 : fd;
	}
	if (anon) {
		snprintf(r->backing, sizeof(r->backing), "anonymous (MAP_SHARED|MAP_ANONYMOUS)");
		snprintf(r->preparation, sizeof(r->preparation), "%s", BACKEND_PREP_ANON);
		r->persist = PERSIST_VOLATILE;
		snprintf(r->persist_why, sizeof(r->persist_why),
			 "shared anonymous memory: RAM, nothing outlives a reboot; msync(MS_SYNC) has nothing "
			 "to write back");
		return -1; /* no descriptor: backend_map_fixed maps anonymous memory */
	}
	snprintf(s->file_path, sizeof(s->file_path), "%s/%.63s.region", dir, s->name);
	fd = open(s->file_path, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0) {
		snprintf(err, err_len, "cannot create the backing file in --path %s: %s", dir,
			 strerror(errno));
		s->file_path[0] = '\0';
		return -2;
	}
	if (fallocate(fd, 0, 0, (off_t)r->size) != 0 && ftruncate(fd, (off_t)r->size) != 0) {
		snprintf(err, err_len, "cannot size %s to %zu bytes: %s", s->file_path, r->size,
			 strerror(errno));
		close(fd);
		return -2;
	}
	snprintf(r->backing, sizeof(r->backing), "%s", s->file_path);
	/* The donor maps it MAP_SYNC when it is DAX: the host mm's copy of
	 * its VMA keeps VM_SYNC, so consumers' write faults are synchronous
	 * too, and their cache flushes (by virtual address, on the same
	 * physical pages) are durable. */
	backend_fd_persist(r, fd);
	if (backend_fd_initialize(r, fd, err, err_len) != 0) {
		close(fd);
		return -2;
	}
	return fd;
}

/*
 * Does msync() of a consumer's range reach the host mm's file VMAs (mshare
 * patch 0028)? Without it, msync() sees the consumer's anonymous
 * placeholder VMA and returns 0 having written nothing back. A kernel that
 * carries msync() to the host mm treats a hole of the region (no host VMA
 * behind the data) as unmapped: msync(MS_ASYNC) over it is ENOMEM. A child
 * attaches read-only, asks, and exits (its attachment goes with it).
 * 1 yes, 0 no, -1 cannot tell (why in why[]).
 */
static int mshare_msync_reaches_host(struct region *r, struct mshare_state *s, char *why,
				     size_t why_len)
{
	int status;
	pid_t pid;

	if (r->size + 4096 > s->unit) {
		snprintf(why, why_len, "the data fills the mshare unit: no hole to probe msync() on");
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		snprintf(why, why_len, "fork of the msync probe: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		if (mshare(s->name, r->addr, s->unit, O_RDONLY, 0) != 0)
			_exit(3);
		if (msync((void *)(r->addr + ((r->size + 4095) & ~(size_t)4095)), 4096, MS_ASYNC) == 0)
			_exit(1);
		_exit(errno == ENOMEM ? 0 : 2);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) <= 1)
		return WEXITSTATUS(status) == 0;
	snprintf(why, why_len, "the msync probe %s",
		 WIFEXITED(status) && WEXITSTATUS(status) == 3 ? "could not attach to the region"
		 : WIFEXITED(status) ? "got an error other than ENOMEM" : "died");
	return -1;
}

static int mshare_setup_common(struct region *r, bool anon, char *err, size_t err_len)
{
	struct mshare_state *s = backend_state_new(r, sizeof(*s));
	int ready[2], stop[2], fd;
	char msg[200];

	s->donor = -1;
	s->stop_fd = -1;
	if (mshare_probe_common(err, err_len) != 0)
		return -1;
	mshare_read_size_unit(&s->unit);
	if (r->addr % s->unit != 0) {
		snprintf(err, err_len, "--addr 0x%lx is not a multiple of mshare_size %lu",
			 (unsigned long)r->addr, s->unit);
		return -1;
	}
	if (r->size > s->unit) {
		snprintf(err, err_len, "--size %zu exceeds one mshare unit (%lu bytes)", r->size,
			 s->unit);
		return -1;
	}
	/* Unique per run: pid and clock. */
	snprintf(s->name, sizeof(s->name), "mshare-bench-%ld-%llx", (long)getpid(),
		 (unsigned long long)clock_now_ns());
	fd = open_backing(r, s, anon, err, err_len);
	if (fd == -2)
		return -1;
	r->backend_page_bytes = r->pmem.known ? r->pmem.align : 4096;
	if (pipe2(ready, O_CLOEXEC) != 0 || pipe2(stop, O_CLOEXEC) != 0) {
		snprintf(err, err_len, "pipe: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	s->donor = fork();
	if (s->donor < 0) {
		snprintf(err, err_len, "fork of the mshare donor failed: %s", strerror(errno));
		return -1;
	}
	if (s->donor == 0) {
		close(ready[0]);
		close(stop[1]);
		donor_main(r, s, fd, ready[1], stop[0]);
	}
	close(ready[1]);
	close(stop[0]);
	s->stop_fd = stop[1];
	if (fd >= 0)
		close(fd);
	if (read(ready[0], msg, sizeof(msg)) != (ssize_t)sizeof(msg)) {
		snprintf(err, err_len, "the mshare donor died before creating the region");
		close(ready[0]);
		return -1;
	}
	close(ready[0]);
	if (msg[0]) {
		snprintf(err, err_len, "%s", msg);
		return -1;
	}
	if (r->persist == PERSIST_MSYNC) {
		char why[160] = "";
		size_t n = strlen(r->persist_why);
		int reaches = mshare_msync_reaches_host(r, s, why, sizeof(why));

		if (reaches == 1) {
			snprintf(r->persist_why + n, sizeof(r->persist_why) - n,
				 "; msync() of a consumer's range reaches the host mm's file VMAs (probed)");
		} else {
			r->persist = PERSIST_NONE;
			snprintf(r->persist_why + n, sizeof(r->persist_why) - n,
				 reaches == 0
				 ? "; but this kernel's msync() of a consumer's range stops at its placeholder "
				   "VMA (probed; mshare patch 0028 missing): a persist would be a silent no-op%s"
				 : "; but whether msync() of a consumer's range reaches the host mm cannot be "
				   "told (%s)", why);
		}
	}
	/* The backing file is no longer needed by name: the donor's mapping
	 * (and the msharefs host mm) hold it. Removing it now means nothing
	 * is left behind whatever happens next. */
	if (s->file_path[0] && unlink(s->file_path) == 0)
		s->file_path[0] = '\0';
	return 0;
}

static int mshare_setup_file(struct region *r, char *err, size_t err_len)
{
	return mshare_setup_common(r, false, err, err_len);
}

static int mshare_setup_anon(struct region *r, char *err, size_t err_len)
{
	return mshare_setup_common(r, true, err, err_len);
}

static int mshare_attach(struct region *r, char *err, size_t err_len)
{
	struct mshare_state *s = r->backend_private;
	struct mshare_info info;
	char path[128];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", MSHARE_FS_DIR, s->name);
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		snprintf(err, err_len, "open %s: %s", path, strerror(errno));
		return -1;
	}
	n = read(fd, &info, sizeof(info));
	close(fd);
	if (n != (ssize_t)sizeof(info)) {
		snprintf(err, err_len, "read %s: got %zd bytes, expected %zu", path, n, sizeof(info));
		return -1;
	}
	if (info.start != r->addr) {
		snprintf(err, err_len, "%s says the region starts at 0x%lx, expected 0x%lx", path,
			 info.start, (unsigned long)r->addr);
		return -1;
	}
	if (mshare(s->name, info.start, info.size, r->read_only ? O_RDONLY : O_RDWR, 0600) != 0) {
		snprintf(err, err_len, "mshare(%s, 0x%lx, %lu) as consumer failed: %s", s->name,
			 info.start, info.size, strerror(errno));
		return -1;
	}
	r->base = (void *)info.start;
	return 0;
}

static int mshare_detach(struct region *r, char *err, size_t err_len)
{
	struct mshare_state *s = r->backend_private;

	if (mshare_unlink(s->name) != 0) {
		snprintf(err, err_len, "mshare_unlink(%s) failed: %s", s->name, strerror(errno));
		return -1;
	}
	r->base = NULL;
	return 0;
}

static void mshare_teardown(struct region *r)
{
	struct mshare_state *s = r->backend_private;

	if (!s)
		return;
	if (s->stop_fd >= 0) {
		close(s->stop_fd);
		s->stop_fd = -1;
	}
	if (s->donor > 0) {
		while (waitpid(s->donor, NULL, 0) < 0 && errno == EINTR)
			;
		s->donor = -1;
	}
	if (s->file_path[0]) {
		unlink(s->file_path);
		s->file_path[0] = '\0';
	}
	r->backend_private = NULL;
}

const struct backend_ops backend_mshare = {
	.name = "mshare",
	.planner_mode = "mshare",
	.data = BACKEND_DATA_FILE,
	.default_path = MSHARE_DEFAULT_DIR,
	.description = "mshare()d region backed by a file in --path (default " MSHARE_DEFAULT_DIR
		       "), or by a device-DAX device at --path /dev/daxX.Y; page tables shared by all workers",
	.page_tables_shared = true,
	.probe = mshare_probe,
	.setup = mshare_setup_file,
	.attach = mshare_attach,
	.detach = mshare_detach,
	.teardown = mshare_teardown,
};

const struct backend_ops backend_mshare_anon = {
	.name = "mshare-anon",
	.planner_mode = "mshare",
	.data = BACKEND_DATA_SHMEM,
	.description = "mshare()d region of shared anonymous memory; page tables shared by all workers",
	.page_tables_shared = true,
	.probe = mshare_probe,
	.setup = mshare_setup_anon,
	.attach = mshare_attach,
	.detach = mshare_detach,
	.teardown = mshare_teardown,
};
