// SPDX-License-Identifier: GPL-2.0
/*
 * The mshare() / mshare_unlink() user API as the series documents it: the
 * cover letter's donor/consumer example, argument errors, the msharefs
 * file (contents and mode), and read-only regions.
 *
 * Consumers are forked before the donor creates the region: a child forked
 * afterwards would inherit the donor's shared VMA instead of attaching
 * through mshare() itself.
 */
#include <dirent.h>
#include <sys/mount.h>

#include "mshare-test.h"

static const char donor_text[] = "Some random shared text";
static const char consumer_text[] = "written by the consumer";

FIXTURE(region)
{
	unsigned long unit;	/* /proc/sys/vm/mshare_size */
	unsigned long addr;
	char name[64];
	int created;		/* this process still holds a reference */
};

FIXTURE_SETUP(region)
{
	MT_SETUP_REGION(self, 0, "api");
}

FIXTURE_TEARDOWN(region)
{
	if (self->created)
		mshare_unlink(self->name);
}

/* Maps the whole region in the donor and creates it with the given flags. */
static void create_region(struct __test_metadata *_metadata, FIXTURE_DATA(region) *self,
			  int oflags, mode_t mode)
{
	ASSERT_NE(mt_map_anon_at(self->addr, self->unit), MAP_FAILED);
	ASSERT_SYS(mshare(self->name, self->addr, self->unit, O_CREAT | O_EXCL | oflags, mode));
	self->created = 1;
}

/*
 * Consumer of the cover letter's example: waits for 'g', reads the region
 * description from msharefs, attaches, checks the donor's text, writes its
 * own text one page further, replies 'w'; on 'u' it detaches and replies
 * 'u' (or 'e' when mshare_unlink failed).
 */
static int cover_letter_consumer(struct mt_peer *p, const struct mshare_info *region, void *name)
{
	char *start = (char *)region->start;

	if (strcmp(start, donor_text) != 0) {
		mt_log("consumer read \"%.40s\" instead of the donor's text", start);
		return 13;
	}
	strcpy(start + 4096, consumer_text);
	mt_reply(p, 'w');
	return mt_detach_on_u(p, name);
}

TEST_F(region, cover_letter_donor_and_consumer)
{
	struct mt_peer consumer;
	int status;

	ASSERT_SYS(mt_spawn_sharer(&consumer, self->name, O_RDWR, cover_letter_consumer, self->name));
	create_region(_metadata, self, O_RDWR, 0600);
	memcpy((char *)self->addr, donor_text, sizeof(donor_text));

	ASSERT_EQ(mt_ask(&consumer, 'g'), 'w');
	/* The consumer's write is visible to the donor. */
	EXPECT_STREQ((char *)self->addr + 4096, consumer_text);
	EXPECT_EQ(mt_ask(&consumer, 'u'), 'u');
	status = mt_finish(&consumer);
	mt_log_status("consumer", status);
	EXPECT_TRUE(mt_exited_ok(status));

	/* The donor's unlink is the last one: the file goes away. */
	EXPECT_TRUE(mt_file_exists(self->name));
	ASSERT_SYS(mshare_unlink(self->name));
	self->created = 0;
	EXPECT_FALSE(mt_file_exists(self->name));
}

TEST_F(region, unaligned_addr_is_einval)
{
	ASSERT_NE(mt_map_anon_at(self->addr, self->unit), MAP_FAILED);
	EXPECT_ERRNO(mshare(self->name, self->addr + 4096, self->unit,
			    O_CREAT | O_EXCL | O_RDWR, 0600), EINVAL);
	EXPECT_ERRNO(mshare(self->name, self->addr + self->unit / 2, self->unit,
			    O_CREAT | O_EXCL | O_RDWR, 0600), EINVAL);
	EXPECT_FALSE(mt_file_exists(self->name));
}

TEST_F(region, unaligned_len_is_einval)
{
	ASSERT_NE(mt_map_anon_at(self->addr, self->unit), MAP_FAILED);
	EXPECT_ERRNO(mshare(self->name, self->addr, self->unit - 4096,
			    O_CREAT | O_EXCL | O_RDWR, 0600), EINVAL);
	EXPECT_ERRNO(mshare(self->name, self->addr, self->unit + 4096,
			    O_CREAT | O_EXCL | O_RDWR, 0600), EINVAL);
	EXPECT_ERRNO(mshare(self->name, self->addr, 0,
			    O_CREAT | O_EXCL | O_RDWR, 0600), EINVAL);
	EXPECT_FALSE(mt_file_exists(self->name));
}

TEST_F(region, second_exclusive_create_is_eexist)
{
	create_region(_metadata, self, O_RDWR, 0600);
	EXPECT_ERRNO(mshare(self->name, self->addr, self->unit, O_CREAT | O_EXCL | O_RDWR, 0600),
		     EEXIST);
	EXPECT_TRUE(mt_file_exists(self->name));
}

/*
 * msharefs is a single global superblock: the test unmounts it (only when
 * no region exists, so nothing is torn down under another test), expects
 * ENOENT from both syscalls, and mounts it again.
 */
TEST_F(region, unmounted_msharefs_is_enoent)
{
	long entries = 0;
	struct dirent *de;
	DIR *dir;

	dir = opendir(MSHARE_FS_DIR);
	ASSERT_TRUE(dir != NULL);
	while ((de = readdir(dir)) != NULL)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			entries++;
	closedir(dir);
	if (entries)
		SKIP(return, "%ld regions exist in %s; not unmounting it", entries, MSHARE_FS_DIR);

	ASSERT_NE(mt_map_anon_at(self->addr, self->unit), MAP_FAILED);
	ASSERT_SYS(umount(MSHARE_FS_DIR));
	EXPECT_FALSE(mshare_fs_mounted());
	EXPECT_ERRNO(mshare(self->name, self->addr, self->unit, O_CREAT | O_EXCL | O_RDWR, 0600),
		     ENOENT);
	EXPECT_ERRNO(mshare_unlink(self->name), ENOENT);
	ASSERT_SYS(mount(MSHARE_FS_TYPE, MSHARE_FS_DIR, MSHARE_FS_TYPE, 0, NULL));
	ASSERT_TRUE(mshare_fs_mounted());
	/* And it works again after the remount. */
	EXPECT_SYS(mshare(self->name, self->addr, self->unit, O_CREAT | O_EXCL | O_RDWR, 0600));
	self->created = mt_file_exists(self->name);
}

TEST_F(region, msharefs_file_reads_start_and_size)
{
	struct mshare_info info = { 0, 0 };
	char path[256];
	struct stat st;

	create_region(_metadata, self, O_RDWR, 0600);
	ASSERT_SYS(mt_read_info(self->name, &info));
	EXPECT_EQ(info.start, self->addr);
	EXPECT_EQ(info.size, self->unit);
	mt_path(path, sizeof(path), self->name);
	ASSERT_SYS(stat(path, &st));
	EXPECT_TRUE(S_ISREG(st.st_mode));
	EXPECT_EQ((long)st.st_size, (long)sizeof(struct mshare_info));
}

/* Readers such as cat(1) stop at end of file: a second read returns 0. */
TEST_F(region, msharefs_file_read_reaches_eof)
{
	struct mshare_info info;
	char path[256];
	ssize_t first, second;
	int fd;

	create_region(_metadata, self, O_RDWR, 0600);
	mt_path(path, sizeof(path), self->name);
	fd = open(path, O_RDONLY);
	ASSERT_SYS(fd);
	first = read(fd, &info, sizeof(info));
	second = read(fd, &info, sizeof(info));
	close(fd);
	EXPECT_EQ(first, (ssize_t)sizeof(info));
	EXPECT_EQ(second, 0);
}

/*
 * The file's permission bits are the read and write bits of `mode`, plus
 * owner read ((mode & 0666) | 0400): they decide who may attach for
 * reading and for writing (the series kept only the read bits).  An
 * unprivileged user can open it only when `mode` grants others read.
 */
static int open_as_nobody(void *name)
{
	char path[256];
	int fd;

	mt_path(path, sizeof(path), name);
	if (setgid(65534) != 0 || setuid(65534) != 0)
		return 20;
	fd = open(path, O_RDONLY);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return errno == EACCES ? 1 : 21;
}

static int open_as_nobody_child(const char *name)
{
	int status = mt_run_child(open_as_nobody, (void *)name);

	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_F(region, msharefs_file_mode_comes_from_mode)
{
	char path[256], name2[80];
	struct stat st;
	unsigned long addr2 = mt_region(self->unit, 1);

	create_region(_metadata, self, O_RDWR, 0600);
	mt_path(path, sizeof(path), self->name);
	ASSERT_SYS(stat(path, &st));
	EXPECT_EQ(st.st_mode & 07777, 0600u);
	EXPECT_EQ(open_as_nobody_child(self->name), 1);		/* EACCES */

	snprintf(name2, sizeof(name2), "%s-b", self->name);
	ASSERT_NE(mt_map_anon_at(addr2, self->unit), MAP_FAILED);
	ASSERT_SYS(mshare(name2, addr2, self->unit, O_CREAT | O_EXCL | O_RDWR, 0644));
	mt_path(path, sizeof(path), name2);
	EXPECT_SYS(stat(path, &st));
	EXPECT_EQ(st.st_mode & 07777, 0644u);
	EXPECT_EQ(open_as_nobody_child(name2), 0);		/* readable by others */
	EXPECT_SYS(mshare_unlink(name2));
	EXPECT_FALSE(mt_file_exists(name2));
}

/*
 * O_RDONLY consumer of a read-write region: reads the donor's data (reply
 * 'r'), then writes, which must raise SIGSEGV.  Exit status 0 means the
 * write went through.
 */
static int rdonly_consumer(struct mt_peer *p, const struct mshare_info *region, void *arg)
{
	char *start = (char *)region->start;

	(void)arg;
	if (strcmp(start, donor_text) != 0)
		return 13;
	mt_reply(p, 'r');
	*(volatile char *)start = 'X';
	return 0;
}

TEST_F(region, rdonly_consumer_write_faults)
{
	struct mt_peer consumer;
	int status;

	ASSERT_SYS(mt_spawn_sharer(&consumer, self->name, O_RDONLY, rdonly_consumer, NULL));
	create_region(_metadata, self, O_RDWR, 0600);
	strcpy((char *)self->addr, donor_text);
	/* 'r' proves the read worked, so the SIGSEGV below comes from the write. */
	EXPECT_EQ(mt_ask(&consumer, 'g'), 'r');
	status = mt_finish(&consumer);
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSEGV) {
		if (mt_exited_ok(status))
			TH_LOG("the read-only consumer's write went through");
		mt_log_status("read-only consumer", status);
	}
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV);
	EXPECT_STREQ((char *)self->addr, donor_text);
}

/* Asks O_RDWR of a region created O_RDONLY (must be EPERM), then O_RDONLY
 * (must work and read the data). */
static int rdwr_of_rdonly_consumer(struct mt_peer *p, void *arg)
{
	const char *name = arg;
	struct mshare_info info;

	if (mt_next(p) != 'g')
		return 10;
	if (mt_read_info(name, &info) != 0)
		return 11;
	MT_CHILD_ERRNO(mshare(name, info.start, info.size, O_RDWR, 0), EPERM, 12,
		       "consumer: mshare(O_RDWR) of an O_RDONLY region");
	if (mshare(name, info.start, info.size, O_RDONLY, 0) != 0) {
		mt_log("consumer: mshare(O_RDONLY) of an O_RDONLY region: %s", strerror(errno));
		return 13;
	}
	if (strcmp((char *)info.start, donor_text) != 0)
		return 14;
	mshare_unlink(name);
	return 0;
}

TEST_F(region, rdwr_of_rdonly_region_is_eperm)
{
	struct mt_peer consumer;
	int status;

	ASSERT_SYS(mt_spawn(&consumer, rdwr_of_rdonly_consumer, self->name));
	ASSERT_NE(mt_map_anon_at(self->addr, self->unit), MAP_FAILED);
	strcpy((char *)self->addr, donor_text);
	ASSERT_SYS(mshare(self->name, self->addr, self->unit, O_CREAT | O_EXCL | O_RDONLY, 0600));
	self->created = 1;
	EXPECT_EQ(mt_ask(&consumer, 'g'), -1);	/* no reply: it just exits */
	status = mt_finish(&consumer);
	mt_log_status("consumer", status);
	EXPECT_TRUE(mt_exited_ok(status));
}

MSHARE_TEST_MAIN
