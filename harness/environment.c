/* environment.c - kernel, platform, CPU, NUMA, memory, THP of the machine. */
#include <hwloc.h>
#include <numa.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "environment.h"
#include "mshare_detect.h"
#include "pmem_ns.h"
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

/* cpu_model's reading of /proc/cpuinfo, also for cpu_hypervisor. */
static char cpuinfo[1 << 16];
static int cpuinfo_read = -1;

static const char *cpuinfo_text(void)
{
	if (cpuinfo_read < 0)
		cpuinfo_read = procfs_read("/proc/cpuinfo", cpuinfo, sizeof(cpuinfo)) < 0 ? 0 : 1;
	return cpuinfo_read ? cpuinfo : NULL;
}

/* 1 when the first CPU's flags carry "hypervisor" (the CPU says it runs
 * under one: this "host" is itself a virtual machine), 0 when they do
 * not, -1 when there are no flags to read. */
static int cpu_hypervisor(void)
{
	const char *t = cpuinfo_text();
	const char *f = t ? strstr(t, "\nflags") : NULL;
	if (!f)
		return -1;
	const char *end = strchr(f + 1, '\n');
	size_t n = end ? (size_t)(end - f) : strlen(f);
	for (const char *p = f; (p = strstr(p, " hypervisor")) && (size_t)(p - f) < n; p++)
		if (p[11] == ' ' || p[11] == '\n' || p[11] == '\0')
			return 1;
	return 0;
}

static void cpu_model(char *out, size_t len)
{
	static char buf[sizeof(cpuinfo)];
	snprintf(out, len, "unknown");
	if (!cpuinfo_text())
		return;
	memcpy(buf, cpuinfo, sizeof(buf));
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

void environment_write_json(struct json_writer *w, const struct pmem_namespace *pmem)
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
	if (pmem && pmem->known) {
		json_begin_object(w, "pmem");
		json_key_string(w, "region", pmem->region[0] ? pmem->region : NULL);
		json_key_string(w, "namespace", pmem->name[0] ? pmem->name : NULL);
		json_key_string(w, "mode", pmem->mode);
		json_key_string(w, "device", pmem->device);
		json_key_u64(w, "align", pmem->align);
		json_key_u64(w, "size", pmem->size);
		if (pmem->numa_node >= 0)
			json_key_i64(w, "numa_node", pmem->numa_node);
		else
			json_key_null(w, "numa_node");
		json_end_object(w);
	} else {
		json_key_null(w, "pmem");
	}
	cpu_model(buf, sizeof(buf));
	json_key_string(w, "cpu", buf);
	int hv = cpu_hypervisor();
	if (hv < 0)
		json_key_null(w, "cpu_hypervisor");
	else
		json_key_bool(w, "cpu_hypervisor", hv);
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
	/* The load averages when the record was written (the run's own
	 * workers included): what else the machine was doing shows in
	 * host-ns times, not in the guest's instruction clock. */
	if (procfs_read("/proc/loadavg", buf, sizeof(buf)) >= 0) {
		char *sp = buf;
		for (int k = 0; k < 3 && sp; k++)
			sp = strchr(sp + 1, ' ');
		if (sp)
			*sp = '\0';
		json_key_string(w, "loadavg", buf);
	} else {
		json_key_null(w, "loadavg");
	}
	json_key_string(w, "tool_version", environment_version());
	json_end_object(w);
}
