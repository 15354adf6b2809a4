/* Unit tests of the guest/host decision (harness/platform.c): only a marker
 * holding this boot's id makes a run a guest run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "platform.h"
#include "../lib/tap.h"

static char dir[] = "/tmp/mshare-bench-test-platform.XXXXXX";

static void put(const char *name, const char *text)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
}

static const char *platform(const char *marker, const char *boot)
{
	static char m[256], b[256];
	snprintf(m, sizeof(m), "%s/%s", dir, marker);
	snprintf(b, sizeof(b), "%s/%s", dir, boot);
	return platform_from_marker(m, b);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	put("boot", "0034ca84-f225-4719-a591-48cba0d95b04\n");
	put("this-boot", "0034ca84-f225-4719-a591-48cba0d95b04\n");
	put("other-boot", "11111111-2222-3333-4444-555555555555\n");
	put("empty", "");
	put("empty-boot", "");

	TAP_OK(strcmp(platform("this-boot", "boot"), "guest") == 0, "marker with this boot's id: guest");
	TAP_OK(strcmp(platform("empty", "boot"), "host") == 0,
	       "empty marker (a guest script run on a host left it): host");
	TAP_OK(strcmp(platform("other-boot", "boot"), "host") == 0, "marker of another boot: host");
	TAP_OK(strcmp(platform("missing", "boot"), "host") == 0, "no marker: host");
	TAP_OK(strcmp(platform("empty", "empty-boot"), "host") == 0, "empty marker and empty boot id: host");
	TAP_OK(strcmp(platform("this-boot", "missing"), "host") == 0, "boot id unreadable: host");

	/* The clock of a run's times (issue 31): only a guest reads the file,
	 * and only a known name counts. */
	put("clock-icount", "guest-instructions\n");
	put("clock-tcg", "guest-tcg-ns\n");
	put("clock-kvm", "guest-kvm-ns");
	put("clock-junk", "instructions-ish\n");
	char c[256];
#define CLOCK(platform_, file_) (snprintf(c, sizeof(c), "%s/%s", dir, file_), platform_clock(platform_, c))
	TAP_OK(strcmp(CLOCK("guest", "clock-icount"), "guest-instructions") == 0, "guest, icount: guest-instructions");
	TAP_OK(strcmp(CLOCK("guest", "clock-tcg"), "guest-tcg-ns") == 0, "guest, plain TCG: guest-tcg-ns");
	TAP_OK(strcmp(CLOCK("guest", "clock-kvm"), "guest-kvm-ns") == 0, "guest, KVM (no newline): guest-kvm-ns");
	TAP_OK(strcmp(CLOCK("guest", "clock-junk"), "guest-unknown") == 0, "guest, unknown name: guest-unknown, not a guess");
	TAP_OK(strcmp(CLOCK("guest", "missing"), "guest-unknown") == 0, "guest, no clock file: guest-unknown");
	TAP_OK(strcmp(CLOCK("host", "clock-icount"), "host-ns") == 0, "host with a stray clock file: host-ns");
	TAP_OK(strcmp(platform_time_unit("guest-instructions"), "instructions") == 0, "unit of guest-instructions");
	TAP_OK(strcmp(platform_time_unit("guest-tcg-ns"), "ns") == 0 && strcmp(platform_time_unit("host-ns"), "ns") == 0 &&
		       strcmp(platform_time_unit("guest-unknown"), "ns") == 0,
	       "unit of the others: ns");

	const char *names[] = {"boot", "this-boot", "other-boot", "empty", "empty-boot",
			       "clock-icount", "clock-tcg", "clock-kvm", "clock-junk"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char path[256];
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
	return tap_done();
}
