// SPDX-License-Identifier: GPL-2.0
/*
 * The harness's mshare detection (harness/mshare_detect.c, compiled in here
 * as the harness compiles it) on the mshare-2025 kernel: msharefs without
 * the 2022 sysctl is the 2025 design, available, its size the alignment
 * msharefs states. Before the detection knew the 2025 design, every record
 * made on this kernel said mshare_available: false (results/designs-v3-*).
 * The same answer on a real machine booted with such a kernel.
 */
#include <stdio.h>
#include <string.h>

#include "kselftest_harness.h"
#include "msharefs-test.h"
#include "../../harness/mshare_detect.c"

TEST(design_2025_available_with_its_alignment)
{
	struct mshare_support ms;
	unsigned long align = read_align();

	if (!align)
		SKIP(return, "%s unreadable: not the mshare-2025 kernel, or msharefs not mounted", MSHAREFS_INFO);
	mshare_detect(&ms);
	ASSERT_TRUE(ms.available) TH_LOG("why: %s", ms.why);
	ASSERT_NE(NULL, ms.design);
	EXPECT_STREQ("2025", ms.design);
	EXPECT_EQ((long)align, ms.size);
	EXPECT_TRUE(ms.msharefs);
	EXPECT_EQ(0, ms.why[0]) TH_LOG("why: %s", ms.why);
}

TEST(no_2022_sysctl_here)
{
	struct mshare_support ms;

	/* The 2022 sysctl would make it the 2022 design; this kernel has none. */
	EXPECT_NE(0, access(MSHARE_SIZE_PATH, F_OK));
	mshare_detect_at(MSHARE_SIZE_PATH, "/proc/filesystems", "/nonexistent/mshare_info", &ms);
	ASSERT_TRUE(ms.available);
	EXPECT_STREQ("2025", ms.design);
	EXPECT_EQ(-1, ms.size);
	EXPECT_NE(NULL, strstr(ms.why, "not mounted")) TH_LOG("why: %s", ms.why);
}

TEST_HARNESS_MAIN
