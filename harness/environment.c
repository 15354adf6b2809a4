/* environment.c - kernel, platform, CPU, NUMA, memory, THP of the machine. */
#include <hwloc.h>
#include <numa.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "environment.h"
#include "layout.h"
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

/* 1 when the first CPU's flags in cpuinfo carry "hypervisor" (the CPU
 * says it runs under one: this "host" is itself a virtual machine), 0 when
 * they do not, -1 when there are no flags to read. */
static int cpu_hypervisor(const char *cpuinfo)
{
	const char *f = cpuinfo ? strstr(cpuinfo, "\nflags") : NULL;
	if (!f)
		return -1;
	const char *end = strchr(f + 1, '\n');
	size_t n = end ? (size_t)(end - f) : strlen(f);
	for (const char *p = f; (p = strstr(p, " hypervisor")) && (size_t)(p - f) < n; p++)
		if (p[11] == ' ' || p[11] == '\n' || p[11] == '\0')
			return 1;
	return 0;
}

/* The first "model name" of cpuinfo (which it cuts at that line's end). */
static void cpu_model(char *cpuinfo, char *out, size_t len)
{
	snprintf(out, len, "unknown");
	char *p = cpuinfo ? strstr(cpuinfo, "model name") : NULL;
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
	json_key_string(w, "aslr", layout_aslr());
	json_key_string(w, "clock", environment_clock());
	json_key_string(w, "time_unit", environment_time_unit());
	mshare_detect(&ms);
	json_key_bool(w, "mshare_available", ms.available);
	json_key_string(w, "mshare_design", ms.design);
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
	/* On the heap for this record only: a static buffer would sit in
	 * every worker's address space (results/README.md, worker_memory). */
	enum { CPUINFO_MAX = 1 << 16 };
	char *cpuinfo = malloc(CPUINFO_MAX);
	if (cpuinfo && procfs_read("/proc/cpuinfo", cpuinfo, CPUINFO_MAX) < 0) {
		free(cpuinfo);
		cpuinfo = NULL;
	}
	int hv = cpu_hypervisor(cpuinfo);
	cpu_model(cpuinfo, buf, sizeof(buf));
	free(cpuinfo);
	json_key_string(w, "cpu", buf);
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
	/* Which Slurm job and node ran it (bench/sweep --slurm): the values
	 * slurmd gives the job, null outside Slurm. Always the same keys, so
	 * CSV columns do not depend on where the run was. */
	static const struct { const char *key, *var; } slurm[] = {
		{ "node", "SLURMD_NODENAME" },
		{ "cluster", "SLURM_CLUSTER_NAME" },
		{ "partition", "SLURM_JOB_PARTITION" },
		{ "job_id", "SLURM_JOB_ID" },
		{ "array_job_id", "SLURM_ARRAY_JOB_ID" },
		{ "array_task_id", "SLURM_ARRAY_TASK_ID" },
	};
	json_begin_object(w, "slurm");
	for (size_t i = 0; i < sizeof(slurm) / sizeof(slurm[0]); i++) {
		const char *val = getenv(slurm[i].var);
		json_key_string(w, slurm[i].key, val && *val ? val : NULL);
	}
	json_end_object(w);
	json_end_object(w);
}
