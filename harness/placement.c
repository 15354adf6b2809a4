/* placement.c - worker placement (hwloc), memory policy (libnuma) and page
 * tables per NUMA node. See placement.h. */
#include <dirent.h>
#include <errno.h>
#include <hwloc.h>
#include <limits.h>
#include <numa.h>
#include <numaif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "placement.h"
#include "procfs.h"

#define NODE_DIR "/sys/devices/system/node"

static bool bit(const uint64_t *set, unsigned i)
{
	return set[i / 64] >> (i % 64) & 1;
}

static void set_bit(uint64_t *set, unsigned i)
{
	set[i / 64] |= 1ull << (i % 64);
}

void place_format_set(const uint64_t *set, unsigned bits, char *out, size_t len)
{
	size_t used = 0;
	out[0] = '\0';
	for (unsigned i = 0; i < bits; i++) {
		if (!bit(set, i))
			continue;
		unsigned j = i;
		while (j + 1 < bits && bit(set, j + 1))
			j++;
		int n = j > i ? snprintf(out + used, len - used, "%s%u-%u", used ? "," : "", i, j)
			      : snprintf(out + used, len - used, "%s%u", used ? "," : "", i);
		if (n < 0 || (size_t)n >= len - used)
			return;
		used += (size_t)n;
		i = j;
	}
}

/* "0,2-5" into set (bits below limit). 0, or -1 with what is wrong in why. */
static int parse_list(const char *v, uint64_t *set, unsigned limit, char *why, size_t why_len)
{
	const char *p = v;
	if (!*p) {
		snprintf(why, why_len, "is empty");
		return -1;
	}
	for (;;) {
		unsigned long a, b;
		char *end;
		if (*p < '0' || *p > '9') {
			snprintf(why, why_len, "has '%.20s' where a number should be", *p ? p : "(end)");
			return -1;
		}
		errno = 0;
		a = strtoul(p, &end, 10);
		b = a;
		if (*end == '-') {
			p = end + 1;
			if (*p < '0' || *p > '9') {
				snprintf(why, why_len, "has a range without an end");
				return -1;
			}
			b = strtoul(p, &end, 10);
		}
		if (errno || a >= limit || b >= limit) {
			snprintf(why, why_len, "names %lu, beyond the largest %u supported", errno ? ULONG_MAX : a > b ? a : b,
				 limit - 1);
			return -1;
		}
		if (b < a) {
			snprintf(why, why_len, "has the range %lu-%lu backwards", a, b);
			return -1;
		}
		for (unsigned long i = a; i <= b; i++)
			set_bit(set, (unsigned)i);
		if (*end == '\0')
			return 0;
		if (*end != ',') {
			snprintf(why, why_len, "has '%c' where ',' or '-' should be", *end);
			return -1;
		}
		p = end + 1;
	}
}

/* The value of an option's keyword form (a word alone), or -1. */
struct keyword {
	const char *word;
	int value;
};
static int keyword_value(const char *v, const struct keyword *k, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v, k[i].word) == 0)
			return k[i].value;
	return -1;
}

int place_parse_cpus(const char *v, struct numa_options *o, char *err, size_t err_len)
{
	static const struct keyword words[] = { { "spread", CPUS_SPREAD }, { "compact", CPUS_COMPACT } };
	char why[128];
	int k = keyword_value(v, words, sizeof(words) / sizeof(words[0]));
	o->cpus_arg = v;
	memset(o->cpu_set, 0, sizeof(o->cpu_set));
	if (k >= 0) {
		o->cpus = k;
		return 0;
	}
	o->cpus = CPUS_LIST;
	if (parse_list(v, o->cpu_set, NUMA_MAX_CPUS, why, sizeof(why)) != 0) {
		snprintf(err, err_len, "--cpus '%s' is not spread, compact or a CPU list such as 0,2-3: it %s", v, why);
		return -1;
	}
	return 0;
}

int place_parse_mem_policy(const char *v, struct numa_options *o, char *err, size_t err_len)
{
	static const struct keyword words[] = { { "local", MEMPOL_LOCAL }, { "interleave", MEMPOL_INTERLEAVE } };
	char why[128];
	const char *nodes = NULL;
	int k = keyword_value(v, words, sizeof(words) / sizeof(words[0]));
	o->mem_policy_arg = v;
	o->node_set = 0;
	if (k >= 0) {
		o->policy = k;
		return 0;
	}
	if (strncmp(v, "interleave:", 11) == 0) {
		o->policy = MEMPOL_INTERLEAVE;
		nodes = v + 11;
	} else if (strncmp(v, "bind:", 5) == 0) {
		o->policy = MEMPOL_BIND;
		nodes = v + 5;
	} else {
		snprintf(err, err_len, "--mem-policy '%s' is not local, bind:NODES or interleave[:NODES]", v);
		return -1;
	}
	if (parse_list(nodes, &o->node_set, NUMA_MAX_NODES, why, sizeof(why)) != 0) {
		snprintf(err, err_len, "--mem-policy '%s': the node list '%s' %s", v, nodes, why);
		return -1;
	}
	return 0;
}

/* A sysfs list file ("0-1,3") into a node set; -1 if unreadable. */
static int read_node_list(const char *path, uint64_t *set)
{
	char buf[256], why[128];
	ssize_t n = procfs_read(path, buf, sizeof(buf));
	if (n < 0)
		return -1;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	*set = 0;
	return n == 0 ? 0 : parse_list(buf, set, NUMA_MAX_NODES, why, sizeof(why));
}

int place_cpu_node(int cpu)
{
	if (numa_available() < 0)
		return 0;
	int n = numa_node_of_cpu(cpu);
	return n < 0 ? -1 : n;
}

static void nodes_of_host(struct numa_plan *p)
{
	struct stat st;
	p->sysfs_nodes = stat(NODE_DIR, &st) == 0;
	p->node_present = p->node_has_memory = 0;
	if (!p->sysfs_nodes || read_node_list(NODE_DIR "/online", &p->node_present) != 0 || !p->node_present) {
		/* A kernel without NUMA: one node, the machine. */
		p->node_present = 1;
		p->node_has_memory = 1;
	} else if (read_node_list(NODE_DIR "/has_memory", &p->node_has_memory) != 0) {
		p->node_has_memory = p->node_present;
	}
	p->nodes = __builtin_popcountll(p->node_present);
	p->max_node = 63 - __builtin_clzll(p->node_present);
}

/* CPUs this process may run on (its affinity), as a bit set. */
static int allowed_cpus(uint64_t *set)
{
	cpu_set_t cs;
	memset(set, 0, NUMA_MAX_CPUS / 8);
	if (sched_getaffinity(0, sizeof(cs), &cs) != 0)
		return -1;
	for (unsigned i = 0; i < NUMA_MAX_CPUS && i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &cs))
			set_bit(set, i);
	return 0;
}

static int plan_cpus(const struct numa_options *o, struct numa_plan *p, char *err, size_t err_len)
{
	uint64_t allowed[NUMA_MAX_CPUS / 64];
	char list[256];
	if (allowed_cpus(allowed) != 0) {
		snprintf(err, err_len, "--cpus %s: cannot read this process's CPU affinity: %s", o->cpus_arg,
			 strerror(errno));
		return -1;
	}
	place_format_set(allowed, NUMA_MAX_CPUS, list, sizeof(list));
	p->npus = 0;
	if (o->cpus == CPUS_LIST) {
		for (unsigned c = 0; c < NUMA_MAX_CPUS; c++) {
			if (!bit(o->cpu_set, c))
				continue;
			if (!bit(allowed, c)) {
				snprintf(err, err_len, "--cpus '%s': CPU %u is not one this process may run on here "
					 "(allowed: %s)", o->cpus_arg, c, list);
				return -1;
			}
			p->pus[p->npus] = (int)c;
			p->pu_node[p->npus++] = place_cpu_node((int)c);
		}
	} else {
		/* Allowed CPUs of each node, in order. */
		/* 1 MiB: on the heap for this call (in bss it would sit in every
		 * worker's address space). */
		int (*by_node)[NUMA_MAX_CPUS] = calloc(NUMA_MAX_NODES, sizeof(*by_node));
		if (!by_node) {
			snprintf(err, err_len, "--cpus: out of memory");
			return -1;
		}
		unsigned count[NUMA_MAX_NODES] = { 0 };
		for (unsigned c = 0; c < NUMA_MAX_CPUS; c++) {
			if (!bit(allowed, c))
				continue;
			int n = place_cpu_node((int)c);
			if (n < 0 || n >= NUMA_MAX_NODES)
				n = 0;
			by_node[n][count[n]++] = (int)c;
		}
		if (o->cpus == CPUS_COMPACT) {
			for (int n = 0; n < NUMA_MAX_NODES && !p->npus; n++)
				for (unsigned k = 0; k < count[n]; k++) {
					p->pus[p->npus] = by_node[n][k];
					p->pu_node[p->npus++] = n;
				}
		} else {
			/* spread: one CPU of each node in turn. */
			for (unsigned k = 0; p->npus < NUMA_MAX_CPUS; k++) {
				unsigned added = 0;
				for (int n = 0; n < NUMA_MAX_NODES; n++) {
					if (k >= count[n])
						continue;
					p->pus[p->npus] = by_node[n][k];
					p->pu_node[p->npus++] = n;
					added++;
				}
				if (!added)
					break;
			}
		}
		free(by_node);
	}
	if (!p->npus) {
		snprintf(err, err_len, "--cpus %s: no CPU to run on (allowed: %s)", o->cpus_arg, list);
		return -1;
	}
	uint64_t used[NUMA_MAX_CPUS / 64] = { 0 };
	for (unsigned i = 0; i < p->npus; i++)
		set_bit(used, (unsigned)p->pus[i]);
	place_format_set(used, NUMA_MAX_CPUS, p->cpus_text, sizeof(p->cpus_text));

	hwloc_topology_t topo;
	if (hwloc_topology_init(&topo) != 0 || hwloc_topology_load(topo) != 0) {
		snprintf(err, err_len, "--cpus %s: hwloc cannot read this machine's topology", o->cpus_arg);
		return -1;
	}
	p->topology = topo;
	return 0;
}

int place_prepare(const struct numa_options *o, struct numa_plan *p, char *err, size_t err_len)
{
	memset(p, 0, sizeof(*p));
	p->data_device_node = -1;
	nodes_of_host(p);
	if (o->policy != MEMPOL_NONE) {
		char have[128];
		uint64_t mem = p->node_has_memory;
		place_format_set(&mem, NUMA_MAX_NODES, have, sizeof(have));
		uint64_t want = o->node_set ? o->node_set : mem;
		for (int n = 0; n < NUMA_MAX_NODES; n++) {
			if (!(want >> n & 1))
				continue;
			if (!(p->node_present >> n & 1) || !(mem >> n & 1)) {
				snprintf(err, err_len, "--mem-policy '%s': node %d %s here (nodes with memory: %s)",
					 o->mem_policy_arg, n, p->node_present >> n & 1 ? "has no memory" : "does not exist",
					 have);
				return -1;
			}
			if (p->sysfs_nodes && numa_available() >= 0 && !numa_bitmask_isbitset(numa_get_mems_allowed(), (unsigned)n)) {
				snprintf(err, err_len, "--mem-policy '%s': node %d is not in this process's allowed memory "
					 "nodes (cpuset)", o->mem_policy_arg, n);
				return -1;
			}
		}
		p->policy_nodes = o->policy == MEMPOL_LOCAL ? 0 : want;
		if (o->policy == MEMPOL_LOCAL) {
			snprintf(p->policy_text, sizeof(p->policy_text), "local");
		} else {
			char nodes[64];
			place_format_set(&want, NUMA_MAX_NODES, nodes, sizeof(nodes));
			snprintf(p->policy_text, sizeof(p->policy_text), "%s:%s",
				 o->policy == MEMPOL_BIND ? "bind" : "interleave", nodes);
		}
	}
	if (o->cpus != CPUS_NONE && plan_cpus(o, p, err, err_len) != 0)
		return -1;
	return 0;
}

int place_apply_policy(const struct numa_options *o, struct numa_plan *p, char *err, size_t err_len)
{
	if (o->policy == MEMPOL_NONE)
		return 0;
	unsigned long mask[NUMA_MAX_NODES / (8 * sizeof(unsigned long))] = { 0 };
	for (int n = 0; n < NUMA_MAX_NODES; n++)
		if (p->policy_nodes >> n & 1)
			mask[n / (8 * sizeof(unsigned long))] |= 1ul << (n % (8 * sizeof(unsigned long)));
	int mode = o->policy == MEMPOL_LOCAL ? MPOL_LOCAL : o->policy == MEMPOL_BIND ? MPOL_BIND : MPOL_INTERLEAVE;
	long rc = o->policy == MEMPOL_LOCAL ? set_mempolicy(mode, NULL, 0)
					    : set_mempolicy(mode, mask, NUMA_MAX_NODES + 1);
	if (rc != 0) {
		snprintf(err, err_len, "--mem-policy %s: set_mempolicy failed: %s", o->mem_policy_arg, strerror(errno));
		return -1;
	}
	p->policy_set = true;
	return 0;
}

int place_bind_worker(const struct numa_plan *p, unsigned index, char *err, size_t err_len)
{
	if (!p->npus || !p->topology)
		return 0;
	int cpu = p->pus[index % p->npus];
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	if (!set) {
		snprintf(err, err_len, "out of memory binding to CPU %d", cpu);
		return -1;
	}
	hwloc_bitmap_only(set, (unsigned)cpu);
	int rc = hwloc_set_cpubind((hwloc_topology_t)p->topology, set, HWLOC_CPUBIND_PROCESS);
	int e = errno;
	hwloc_bitmap_free(set);
	if (rc != 0) {
		snprintf(err, err_len, "hwloc cannot bind worker %u to CPU %d: %s", index, cpu, strerror(e));
		return -1;
	}
	return 0;
}

int place_device_node(const char *path, char *dev, size_t dev_len)
{
	struct stat st;
	char link[128], real[PATH_MAX], file[PATH_MAX + 32];
	long node;
	dev[0] = '\0';
	if (!path || stat(path, &st) != 0)
		return -1;
	snprintf(link, sizeof(link), "/sys/dev/block/%u:%u", major(st.st_dev), minor(st.st_dev));
	if (!realpath(link, real))
		return -1;
	/* A partition's device is its disk's. */
	snprintf(file, sizeof(file), "%s/partition", real);
	if (access(file, F_OK) == 0) {
		char *slash = strrchr(real, '/');
		if (slash)
			*slash = '\0';
	}
	const char *name = strrchr(real, '/');
	snprintf(dev, dev_len, "%s", name ? name + 1 : real);
	snprintf(file, sizeof(file), "%s/device/numa_node", real);
	if (procfs_read_long(file, &node) != 0)
		return -1;
	return node < 0 ? -1 : (int)node;
}

/* "Node N PageTables:  123 kB" of node n, in bytes; -1 if absent. */
static int64_t node_pagetables(int n)
{
	char path[96], buf[8192];
	snprintf(path, sizeof(path), NODE_DIR "/node%d/meminfo", n);
	if (procfs_read(path, buf, sizeof(buf)) < 0)
		return -1;
	const char *p = strstr(buf, " PageTables:");
	if (!p)
		return -1;
	return strtoll(p + 12, NULL, 10) * 1024;
}

void place_read_pagetables(const struct numa_plan *p, struct numa_pt_point *pt)
{
	int64_t again[NUMA_MAX_NODES];
	for (int n = 0; n < NUMA_MAX_NODES; n++)
		pt->node[n] = -1;
	if (!p->sysfs_nodes) {
		pt->system = procfs_meminfo_bytes("PageTables");
		pt->node[0] = pt->system;
		pt->consistent = true;
		return;
	}
	pt->consistent = false;
	for (int attempt = 0; attempt < 10 && !pt->consistent; attempt++) {
		for (int n = 0; n <= p->max_node; n++)
			pt->node[n] = p->node_present >> n & 1 ? node_pagetables(n) : -1;
		pt->system = procfs_meminfo_bytes("PageTables");
		pt->consistent = true;
		for (int n = 0; n <= p->max_node; n++) {
			again[n] = p->node_present >> n & 1 ? node_pagetables(n) : -1;
			if (again[n] != pt->node[n])
				pt->consistent = false;
		}
	}
}

void place_free(struct numa_plan *p)
{
	if (p->topology)
		hwloc_topology_destroy((hwloc_topology_t)p->topology);
	p->topology = NULL;
}
