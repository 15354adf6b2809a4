/* environment.c - kernel, platform, CPU, NUMA, memory, THP of the machine. */
#include <hwloc.h>
#include <numa.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "environment.h"
#include "mshare_detect.h"
#include "platform.h"
#include "procfs.h"
#include "version.h"

const char *environment_platform(void)
{
	return platform_from_marker(GUEST_MARKER_PATH, BOOT_ID_PATH);
}

const char *environment_clock(void)
{
	return platform_clock(environment_platform(), GUEST_CLOCK_PATH);
}

const char *environment_time_unit(void)
{
	return platform_time_unit(environment_clock());
}

const char *environment_version(void)
{
	return MSHARE_BENCH_VERSION;
}

/* The bracketed choice of a sysfs "a [b] c" setting. */
static void bracketed(const char *path, char *out, size_t len)
{
	char buf[256];
	snprintf(out, len, "unknown");
	if (procfs_read(path, buf, sizeof(buf)) < 0)
		return;
	char *l = strchr(buf, '['), *r = l ? strchr(l, ']') : NULL;
	if (l && r) {
		*r = '\0';
		snprintf(out, len, "%s", l + 1);
	}
}

static void cpu_model(char *out, size_t len)
{
	static char buf[1 << 16];
	snprintf(out, len, "unknown");
	if (procfs_read("/proc/cpuinfo", buf, sizeof(buf)) < 0)
		return;
	char *p = strstr(buf, "model name");
	if (!p)
		return;
	p = strchr(p, ':');
	if (!p)
		return;
	p++;
	while (*p == ' ')
		p++;
	char *nl = strchr(p, '\n');
	if (nl)
		*nl = '\0';
	snprintf(out, len, "%s", p);
}

void environment_write_json(struct json_writer *w)
{
	struct utsname u;
	struct mshare_support ms;
	char buf[256], host[256];

	json_begin_object(w, "environment");
	if (uname(&u) == 0) {
		json_key_string(w, "kernel", u.release);
		json_key_string(w, "kernel_version", u.version);
		json_key_string(w, "machine", u.machine);
	}
	json_key_string(w, "platform", environment_platform());
	json_key_string(w, "clock", environment_clock());
	json_key_string(w, "time_unit", environment_time_unit());
	mshare_detect(&ms);
	json_key_bool(w, "mshare_available", ms.available);
	if (ms.size >= 0)
		json_key_i64(w, "mshare_size", ms.size);
	else
		json_key_null(w, "mshare_size");
	cpu_model(buf, sizeof(buf));
	json_key_string(w, "cpu", buf);
	json_key_i64(w, "cpus", sysconf(_SC_NPROCESSORS_ONLN));

	hwloc_topology_t topo;
	int packages = -1, cores = -1, pus = -1;
	if (hwloc_topology_init(&topo) == 0) {
		if (hwloc_topology_load(topo) == 0) {
			packages = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
			cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
			pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
		}
		hwloc_topology_destroy(topo);
	}
	json_key_i64(w, "numa_nodes", numa_available() >= 0 ? numa_num_configured_nodes() : 1);
	json_key_i64(w, "packages", packages);
	json_key_i64(w, "cores", cores);
	json_key_i64(w, "pus", pus);
	json_key_i64(w, "mem_total_bytes", procfs_meminfo_bytes("MemTotal"));
	json_key_i64(w, "page_size_bytes", sysconf(_SC_PAGESIZE));
	bracketed("/sys/kernel/mm/transparent_hugepage/enabled", buf, sizeof(buf));
	json_key_string(w, "thp", buf);
	bracketed("/sys/kernel/mm/transparent_hugepage/shmem_enabled", buf, sizeof(buf));
	json_key_string(w, "thp_shmem", buf);
	long v;
	json_key_i64(w, "pid_max", procfs_read_long("/proc/sys/kernel/pid_max", &v) ? -1 : v);
	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1] = '\0';
	json_key_string(w, "hostname", host);
	json_key_string(w, "tool_version", environment_version());
	json_end_object(w);
}
