/* persist-guest.c - data written through an mshare region over a DAX file
 * outlives a reboot (tests/kernel/reboot-persist.sh runs it in the guest,
 * once per boot, on a pmem image kept between the boots).
 *
 *   persist-guest write FILE   a region over FILE (created, 8 MiB): a
 *                              second process attaches and writes a pattern
 *                              through the region's shared page tables;
 *                              the region goes, FILE is fsync'ed
 *   persist-guest check FILE   read(2) of FILE: the pattern, page by page
 *
 * The design is the kernel's: the 2022 series (mshare() system call,
 * /proc/sys/vm/mshare_size) or the 2025 series v3 (a file object in an
 * msharefs region, MSHAREFS_CREATE_MAPPING); detected, never guessed.
 * Prints "design ..." and one "result ..." line; exit 0 only when the step
 * worked and, for check, every page holds its pattern.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mshare-uapi.h"
#include "msharefs-uapi.h"

#define FILE_BYTES (8UL << 20)
#define PAGE 4096UL
#define MAGIC 0x70657273697374ULL /* "persist" */
#define REGION_ADDR (2UL << 40)   /* 2 TiB: aligned for either design */

static uint64_t pattern(unsigned long page)
{
	return MAGIC ^ (page * 0x9e3779b97f4a7c15ULL);
}

static int die(const char *what)
{
	printf("result error: %s: %s\n", what, strerror(errno));
	return 1;
}

/* In a child: the pattern into every page of the region at addr. */
static void write_pages(char *addr)
{
	for (unsigned long p = 0; p < FILE_BYTES / PAGE; p++)
		*(volatile uint64_t *)(addr + p * PAGE) = pattern(p);
}

static int wait_child(pid_t pid, const char *who)
{
	int st;

	if (pid < 0)
		return die("fork");
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return die("waitpid");
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		printf("result error: %s ended with status 0x%x\n", who, st);
		return 1;
	}
	return 0;
}

/* The 2022 series: the donor (this process) maps the file and creates the
 * region; a sharer attaches by name and writes through it. */
static int write_v1(int fd, unsigned long unit)
{
	char name[64];
	pid_t pid;

	snprintf(name, sizeof(name), "persist-%d", (int)getpid());
	if (mmap((void *)REGION_ADDR, FILE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0) ==
	    MAP_FAILED)
		return die("mmap of the file at 2 TiB");
	if (mshare(name, REGION_ADDR, unit, O_CREAT | O_RDWR | O_EXCL, 0600) != 0)
		return die("mshare(O_CREAT)");
	pid = fork();
	if (pid == 0) {
		/* A fresh process: mshare's VMAs are not inherited by fork. */
		if (munmap((void *)REGION_ADDR, FILE_BYTES) != 0 && errno != EINVAL)
			_exit(2);
		if (mshare(name, REGION_ADDR, unit, O_RDWR, 0) != 0) {
			printf("# sharer: mshare(O_RDWR): %s\n", strerror(errno));
			_exit(3);
		}
		write_pages((char *)REGION_ADDR);
		mshare_unlink(name);
		_exit(0);
	}
	if (wait_child(pid, "the sharer"))
		return 1;
	if (mshare_unlink(name) != 0)
		return die("mshare_unlink");
	return 0;
}

/* The 2025 series v3: the creator puts the file in a region; a second
 * process maps the region and writes through it. */
static int write_v3(int fd, unsigned long align)
{
	char path[256];
	size_t size = (FILE_BYTES + align - 1) / align * align;
	pid_t pid;
	int rfd;

	snprintf(path, sizeof(path), "%s/persist-%d", MSHAREFS_DIR, (int)getpid());
	rfd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (rfd < 0)
		return die("creating the msharefs region");
	if (ftruncate(rfd, (off_t)size) != 0)
		return die("ftruncate of the region");
	struct mshare_create mc = {
		.region_offset = 0, .size = FILE_BYTES, .offset = 0, .prot = PROT_READ | PROT_WRITE,
		.flags = MAP_SHARED | MAP_FIXED, .fd = (__u32)fd,
	};
	if (ioctl(rfd, MSHAREFS_CREATE_MAPPING, &mc) != 0)
		return die("MSHAREFS_CREATE_MAPPING of the file");
	pid = fork();
	if (pid == 0) {
		int cfd = open(path, O_RDWR);
		char *p = cfd < 0 ? MAP_FAILED
				  : mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, cfd, 0);
		if (p == MAP_FAILED) {
			printf("# sharer: mapping the region: %s\n", strerror(errno));
			_exit(3);
		}
		write_pages(p);
		munmap(p, size);
		_exit(0);
	}
	if (wait_child(pid, "the sharer"))
		return 1;
	unlink(path);
	close(rfd);
	return 0;
}

static int do_write(const char *file)
{
	unsigned long v = 0;
	FILE *f;
	int fd, rc;

	fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return die(file);
	if (ftruncate(fd, (off_t)FILE_BYTES) != 0)
		return die("ftruncate of the file");
	if ((f = fopen(MSHARE_SIZE_SYSCTL, "r"))) {
		rc = fscanf(f, "%lu", &v) == 1 ? 0 : -1;
		fclose(f);
		if (rc)
			return die(MSHARE_SIZE_SYSCTL);
		printf("design mshare-2022 (v1), unit %lu\n", v);
		rc = write_v1(fd, v);
	} else if ((f = fopen(MSHAREFS_INFO, "r"))) {
		rc = fscanf(f, "%lu", &v) == 1 ? 0 : -1;
		fclose(f);
		if (rc || v == 0)
			return die(MSHAREFS_INFO);
		printf("design mshare-2025 (v3 file objects), alignment %lu\n", v);
		rc = write_v3(fd, v);
	} else {
		printf("result error: this kernel has no mshare (neither %s nor %s)\n", MSHARE_SIZE_SYSCTL,
		       MSHAREFS_INFO);
		return 1;
	}
	if (rc)
		return rc;
	if (fsync(fd) != 0)
		return die("fsync of the file");
	close(fd);
	printf("result written %lu pages through the region\n", FILE_BYTES / PAGE);
	return 0;
}

static int do_check(const char *file)
{
	unsigned long bad = 0, first_bad = 0;
	uint64_t word;
	int fd = open(file, O_RDONLY);

	if (fd < 0)
		return die(file);
	for (unsigned long p = 0; p < FILE_BYTES / PAGE; p++) {
		if (pread(fd, &word, sizeof(word), (off_t)(p * PAGE)) != (ssize_t)sizeof(word))
			return die("pread");
		if (word != pattern(p) && bad++ == 0)
			first_bad = p;
	}
	close(fd);
	if (bad) {
		printf("result mismatch: %lu of %lu pages, first page %lu\n", bad, FILE_BYTES / PAGE, first_bad);
		return 1;
	}
	printf("result intact %lu pages\n", FILE_BYTES / PAGE);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && strcmp(argv[1], "write") == 0)
		return do_write(argv[2]);
	if (argc == 3 && strcmp(argv[1], "check") == 0)
		return do_check(argv[2]);
	fprintf(stderr, "usage: persist-guest write|check FILE\n");
	return 2;
}
