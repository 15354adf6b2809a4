/* platform.c - is this run in the benchmark VM? */
#include <stdio.h>
#include <string.h>

#include "platform.h"

static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* The VM's init writes the boot id of the guest's boot into the marker. A
 * marker that exists but holds anything else (an empty file left on a host
 * by a guest script run there, a copy from another boot) is not a guest:
 * records made on the host must never say "guest". */
const char *platform_from_marker(const char *marker_path, const char *boot_id_path)
{
	char marker[128], boot[128];
	if (read_line(marker_path, marker, sizeof(marker)) != 0 || read_line(boot_id_path, boot, sizeof(boot)) != 0)
		return "host";
	return boot[0] != '\0' && strcmp(marker, boot) == 0 ? "guest" : "host";
}

const char *platform_clock(const char *platform, const char *clock_path)
{
	static const char *const guest_clocks[] = { "guest-instructions", "guest-tcg-ns", "guest-kvm-ns" };
	char buf[64];

	if (strcmp(platform, "guest") != 0)
		return "host-ns";
	if (read_line(clock_path, buf, sizeof(buf)) == 0)
		for (size_t i = 0; i < sizeof(guest_clocks) / sizeof(guest_clocks[0]); i++)
			if (strcmp(buf, guest_clocks[i]) == 0)
				return guest_clocks[i];
	return "guest-unknown";
}

const char *platform_time_unit(const char *clock)
{
	return strcmp(clock, "guest-instructions") == 0 ? "instructions" : "ns";
}
