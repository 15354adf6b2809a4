// SPDX-License-Identifier: GPL-2.0
/*
 * Region lifetime with sharers coming and going the way benchmark workers
 * do: the donor exits and a consumer is SIGKILLed, neither calling
 * mshare_unlink(), while other consumers keep using the region.  The others
 * must keep reading (and writing) correct data, the last mshare_unlink()
 * must remove the msharefs file, and the kernel must log no oops, BUG or
 * warning on the way.
 */
#include "mshare-test.h"

#define PAGE		4096UL
#define DATA_SIZE	(16UL << 20)
#define CONSUMERS	4
#define STAMP		0x73757276697665ULL	/* "survive" */

static uint64_t header(unsigned long i)
{
	return 0x6c69666574696d65ULL ^ i;	/* "lifetime" */
}

static long bad_page(const char *base)
{
	for (unsigned long i = 1; i < DATA_SIZE / PAGE; i++)	/* page 0 carries stamps */
		if (*(volatile const uint64_t *)(base + i * PAGE) != header(i))
			return (long)i;
	return -1;
}

/* Donor (a child, so that it can exit while the test watches): maps and
 * fills the data, creates the region, replies 'c'; on 'x' exits without
 * mshare_unlink(). */
static int donor(struct mt_peer *p, void *arg)
{
	const unsigned long *region = arg;	/* addr, unit */
	const char *name = (const char *)(region + 2);
	char *base = mt_map_anon_at(region[0], DATA_SIZE);

	if (base == MAP_FAILED)
		return 10;
	if (mshare(name, region[0], region[1], O_CREAT | O_EXCL | O_RDWR, 0600) != 0) {
		mt_log("donor: mshare: %s", strerror(errno));
		return 11;
	}
	for (unsigned long i = 0; i < DATA_SIZE / PAGE; i++)
		*(uint64_t *)(base + i * PAGE) = header(i);
	mt_reply(p, 'c');
	if (mt_next(p) != 'x')
		return 12;
	return 0;
}

/*
 * Consumer: 'a' attach and check (reply 'r' or 'f'); 'v' check again;
 * 'w' stamp page 0; 's' check the stamp ('r' or 'f'); 'u' mshare_unlink()
 * (reply 'u' or 'e'); EOF or anything else: exit.
 */
static int consumer(struct mt_peer *p, void *arg)
{
	const char *name = arg;
	struct mshare_info info;
	char *base = NULL;
	int c;

	while ((c = mt_next(p)) >= 0) {
		switch (c) {
		case 'a':
			if (mt_attach(NULL, name, O_RDWR, &info))
				return 10;
			base = (char *)info.start;
			/* fall through */
		case 'v':
			mt_reply(p, base && bad_page(base) < 0 ? 'r' : 'f');
			break;
		case 'w':
			*(volatile uint64_t *)base = STAMP;
			mt_reply(p, 'r');
			break;
		case 's':
			mt_reply(p, *(volatile uint64_t *)base == STAMP ? 'r' : 'f');
			break;
		case 'u':
			mt_reply(p, mshare_unlink(name) == 0 ? 'u' : 'e');
			break;
		default:
			return 0;
		}
	}
	return 0;
}

FIXTURE(lifetime)
{
	unsigned long region[2 + 8];	/* addr, unit, name */
	char *name;
	int kmsg;
};

FIXTURE_SETUP(lifetime)
{
	self->kmsg = -1;
	REQUIRE_MSHARE(&self->region[1]);
	self->region[0] = mt_region(self->region[1], 8);
	self->name = (char *)(self->region + 2);
	mt_name(self->name, 8 * sizeof(unsigned long), "life");
	self->kmsg = mt_kmsg_open();
}

FIXTURE_TEARDOWN(lifetime)
{
	if (self->kmsg >= 0)
		close(self->kmsg);
}

TEST_F(lifetime, donor_exit_and_killed_consumer_leave_others_intact)
{
	struct mt_peer d, c[CONSUMERS];
	int status, problems;

	for (int i = 0; i < CONSUMERS; i++)
		ASSERT_SYS(mt_spawn(&c[i], consumer, self->name));
	ASSERT_SYS(mt_spawn(&d, donor, self->region));
	ASSERT_EQ(mt_recv(&d), 'c');
	for (int i = 0; i < CONSUMERS; i++) {
		ASSERT_EQ(mt_ask(&c[i], 'a'), 'r');
	}

	/* The donor exits without unlinking; consumer 0 is killed. */
	ASSERT_EQ(mt_ask(&d, 'x'), -1);
	status = mt_finish(&d);
	mt_log_status("donor", status);
	EXPECT_TRUE(mt_exited_ok(status));
	kill(c[0].pid, SIGKILL);
	status = mt_finish(&c[0]);
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

	/* The others still read the donor's data, and see each other's writes. */
	for (int i = 1; i < CONSUMERS; i++) {
		EXPECT_EQ(mt_ask(&c[i], 'v'), 'r');
	}
	EXPECT_EQ(mt_ask(&c[1], 'w'), 'r');
	for (int i = 2; i < CONSUMERS; i++) {
		EXPECT_EQ(mt_ask(&c[i], 's'), 'r');
	}
	EXPECT_TRUE(mt_file_exists(self->name));

	/* The remaining consumers detach; the file must outlive all but the
	 * last and be gone after it. */
	for (int i = 1; i < CONSUMERS; i++) {
		EXPECT_EQ(mt_ask(&c[i], 'u'), 'u');
		if (i < CONSUMERS - 1) {
			EXPECT_TRUE(mt_file_exists(self->name));
			EXPECT_EQ(mt_ask(&c[i + 1], 'v'), 'r');
		}
	}
	if (mt_file_exists(self->name))
		TH_LOG("%s/%s still exists after every remaining sharer unlinked: the donor's or "
		       "the killed consumer's reference was not dropped at exit", MSHARE_FS_DIR, self->name);
	EXPECT_FALSE(mt_file_exists(self->name));
	for (int i = 1; i < CONSUMERS; i++) {
		status = mt_finish(&c[i]);
		mt_log_status("consumer", status);
		EXPECT_TRUE(mt_exited_ok(status));
	}

	if (self->kmsg < 0)
		TH_LOG("no /dev/kmsg: kernel log not checked");
	else {
		problems = mt_kmsg_problems(self->kmsg);
		self->kmsg = -1;
		EXPECT_EQ(problems, 0);
	}
}

/* A consumer, then the donor, exit normally without unlinking: neither
 * exit may tear the region down under the remaining consumer, whose
 * mshare_unlink() is then the last one and removes the file. */
TEST_F(lifetime, consumer_exit_without_unlink_keeps_region)
{
	struct mt_peer d, c[2];
	int status, problems;

	for (int i = 0; i < 2; i++)
		ASSERT_SYS(mt_spawn(&c[i], consumer, self->name));
	ASSERT_SYS(mt_spawn(&d, donor, self->region));
	ASSERT_EQ(mt_recv(&d), 'c');
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(mt_ask(&c[i], 'a'), 'r');
	}
	status = mt_finish(&c[0]);		/* EOF: exits, no unlink */
	EXPECT_TRUE(mt_exited_ok(status));
	EXPECT_EQ(mt_ask(&c[1], 'v'), 'r');
	EXPECT_EQ(mt_ask(&d, 'x'), -1);		/* the donor exits too */
	EXPECT_TRUE(mt_exited_ok(mt_finish(&d)));
	EXPECT_EQ(mt_ask(&c[1], 'v'), 'r');
	EXPECT_TRUE(mt_file_exists(self->name));
	EXPECT_EQ(mt_ask(&c[1], 'u'), 'u');
	EXPECT_TRUE(mt_exited_ok(mt_finish(&c[1])));
	EXPECT_FALSE(mt_file_exists(self->name));
	if (self->kmsg >= 0) {
		problems = mt_kmsg_problems(self->kmsg);
		self->kmsg = -1;
		EXPECT_EQ(problems, 0);
	}
}

MSHARE_TEST_MAIN
