/* placement.h - where workers run (--cpus), where memory comes from
 * (--mem-policy), and page-table memory per NUMA node.
 *
 * Parsing (numa_parse_*) checks the syntax only, so that `run --check`
 * needs nothing of this host. place_prepare() checks the values against this
 * host (CPUs that exist and are allowed, nodes that have memory) before
 * anything is set up or forked, and computes the CPU of every worker.
 */
#ifndef MSHARE_BENCH_PLACEMENT_H
#define MSHARE_BENCH_PLACEMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json.h"

#define NUMA_MAX_NODES 64
#define NUMA_MAX_CPUS 4096

enum cpu_placement {
	CPUS_NONE = 0, /* not given: the scheduler places workers */
	CPUS_SPREAD,   /* worker i on the next node in turn, the next CPU of that node */
	CPUS_COMPACT,  /* every worker on the first node with CPUs, its CPUs in turn */
	CPUS_LIST,     /* the CPUs given, in turn */
};

enum mem_policy {
	MEMPOL_NONE = 0,   /* not given: the task's policy is left as it is */
	MEMPOL_LOCAL,      /* MPOL_LOCAL: the node of the CPU that allocates */
	MEMPOL_BIND,       /* MPOL_BIND to the nodes given */
	MEMPOL_INTERLEAVE, /* MPOL_INTERLEAVE over the nodes given (default: all with memory) */
};

struct numa_options {
	const char *cpus_arg, *mem_policy_arg;
	enum cpu_placement cpus;
	enum mem_policy policy;
	uint64_t cpu_set[NUMA_MAX_CPUS / 64]; /* CPUS_LIST */
	uint64_t node_set;                    /* MEMPOL_BIND, MEMPOL_INTERLEAVE; 0 = all with memory */
};

/* Syntax only. 0, or -1 with a message naming the value. */
int place_parse_cpus(const char *v, struct numa_options *o, char *err, size_t err_len);
int place_parse_mem_policy(const char *v, struct numa_options *o, char *err, size_t err_len);

/* Per-node page-table figures at one point: each node's PageTables
 * (/sys/devices/system/node/nodeN/meminfo) read around the system's
 * (/proc/meminfo), repeated until both reads of the nodes agree. */
struct numa_pt_point {
	int64_t node[NUMA_MAX_NODES]; /* bytes, -1 = node absent */
	int64_t system;
	bool consistent; /* the nodes did not change while the system figure was read */
};

struct numa_plan {
	int max_node;                 /* highest node id present */
	int nodes;                    /* nodes present */
	bool sysfs_nodes;             /* /sys/devices/system/node exists (CONFIG_NUMA) */
	uint64_t node_present;        /* bit per node */
	uint64_t node_has_memory;     /* bit per node (N_MEMORY) */
	unsigned npus;
	int pus[NUMA_MAX_CPUS];       /* worker i runs on CPU pus[i % npus] */
	int pu_node[NUMA_MAX_CPUS];
	char cpus_text[256];          /* the CPUs used, as a list */
	char policy_text[96];         /* the policy set, e.g. "bind:1" */
	uint64_t policy_nodes;        /* nodes of the policy set */
	bool policy_set;
	int data_device_node;         /* node of the DAX device backing the region; -1 unknown/none */
	char data_device[64];
	void *topology;               /* hwloc topology, NULL without --cpus */
};

/* Check the options against this host and plan the CPUs; nothing is
 * changed yet. 0, or -1 with one line naming the value. */
int place_prepare(const struct numa_options *o, struct numa_plan *p, char *err, size_t err_len);
/* Set the memory policy of this (the parent) process; workers inherit it
 * with fork. 0, or -1 with a message. */
int place_apply_policy(const struct numa_options *o, struct numa_plan *p, char *err, size_t err_len);
/* In worker i, right after fork: bind it to its CPU (hwloc). */
int place_bind_worker(const struct numa_plan *p, unsigned index, char *err, size_t err_len);
/* The node of the block device holding path when it is DAX-capable
 * persistent memory; -1 if unknown. dev names it ("pmem0"). */
int place_device_node(const char *path, char *dev, size_t dev_len);
/* Read page tables per node and system-wide at one point; call after
 * vm/stat_refresh. */
void place_read_pagetables(const struct numa_plan *p, struct numa_pt_point *pt);
/* The node of CPU cpu (-1 if unknown). */
int place_cpu_node(int cpu);
/* "0-3,8" for a bit set. */
void place_format_set(const uint64_t *set, unsigned bits, char *out, size_t len);
void place_free(struct numa_plan *p);

#endif
