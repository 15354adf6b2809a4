/* msharefs-test.h - what the 2025 series' guest tests share. */
#ifndef MSHAREFS_TEST_H
#define MSHAREFS_TEST_H

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "msharefs-uapi.h"

/* The region alignment msharefs states (MSHAREFS_INFO), or 0 when it cannot
 * be read: not the mshare-2025 kernel, or msharefs not mounted. */
static inline unsigned long read_align(void)
{
	char buf[64] = "";
	int fd = open(MSHAREFS_INFO, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? strtoul(buf, NULL, 10) : 0;
}

#endif
