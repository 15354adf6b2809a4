/* deploy.h - the deployments the planner knows: how the region is mapped,
 * where its data lives, which kernel it needs and what to set for it.
 *
 * A deployment is what a DBA chooses ("MAP_SHARED of a file on a DAX
 * filesystem with 2 MiB pages"); its page tables take one of the shapes of
 * pt_model.h (enum pt_mode), which the calibration against measured run
 * records also uses. Each deployment knows whether the region's data lives
 * in RAM (shared memory, tmpfs, hugetlbfs) or on the device (persistent
 * or CXL memory through DAX), so the fit verdict counts it right without a
 * switch (--sga-in-ram still overrides it for every mode, and says so).
 */
#ifndef MSHARE_BENCH_PLANNER_DEPLOY_H
#define MSHARE_BENCH_PLANNER_DEPLOY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pt_model.h"

enum deploy_id {
	DEPLOY_4K,            /* shmem / SysV / tmpfs, 4 KiB pages (THP off) */
	DEPLOY_SHM_THP,       /* shmem / SysV / tmpfs with transparent huge pages */
	DEPLOY_HUGETLB_2M,
	DEPLOY_HUGETLB_1G,
	DEPLOY_DAX_4K,        /* MAP_SHARED of a file on a DAX filesystem, 4 KiB */
	DEPLOY_DAX_2M,        /* the same with 2 MiB PMD mappings */
	DEPLOY_DEVDAX_2M,     /* device-DAX namespace, 2 MiB alignment */
	DEPLOY_DEVDAX_1G,     /* device-DAX namespace, 1 GiB alignment */
	DEPLOY_MSHARE,        /* mshare v1 over shared memory in RAM, 4 KiB leaves */
	DEPLOY_MSHARE_DAX_4K, /* mshare v1 over a DAX file, 4 KiB leaves */
	DEPLOY_MSHARE_DAX_2M, /* mshare v1 over a DAX file or devdax 2M, 2 MiB leaves */
	DEPLOY_MSHARE_DEVDAX_1G,
	DEPLOY_MSHARE_2025,   /* the 2025 design (v3, Linux 6.12), anonymous shared memory */
	DEPLOY_MSHARE_2025_DAX_4K, /* the 2025 design holding a DAX file, 4 KiB leaves */
	DEPLOY_MSHARE_2025_DAX_2M,
	DEPLOY_COUNT
};

enum deploy_data { DATA_RAM, DATA_DEVICE };

/* What the deployment needs to be set up: selects the settings printed. */
enum deploy_setup {
	SETUP_SHMEM,      /* shared memory: shmmax/shmall for SysV */
	SETUP_THP,        /* shmem_enabled */
	SETUP_HUGETLB,    /* nr_hugepages, memlock, hugetlb_shm_group, PG/Oracle parameters */
	SETUP_FSDAX,      /* ndctl fsdax namespace, mount -o dax */
	SETUP_DEVDAX,     /* ndctl devdax namespace */
	SETUP_MSHARE_V1,  /* patched kernel (v1, Linux 6.1), msharefs */
	SETUP_MSHARE_2025 /* patched kernel (2025 design v3, Linux 6.12), msharefs */
};

struct deploy {
	const char *name;
	const char *alias;         /* an older or shorter name --mode also takes, or NULL */
	enum pt_mode shape;        /* the page tables' shape (pt_model.h) */
	uint64_t leaf_bytes;       /* the data's page size as mapped */
	enum deploy_data data;
	/* The mapping must sit at this alignment (device-DAX refuses anything
	 * else; hugetlbfs needs its page size); 0: any 4 KiB-aligned address,
	 * the kernel aligns it itself where it can (THP, fsdax). */
	uint64_t align_bytes;
	enum deploy_setup setup;
	const char *what;          /* one line: what it is */
	const char *kernel;        /* the kernel it needs */
};

const struct deploy *deploy_get(enum deploy_id id);
const char *deploy_name(enum deploy_id id);
/* By name or alias; -1 if none. */
int deploy_from_name(const char *name, enum deploy_id *id);
/* The deployment a measured mapping is in (plan --pid): by its page-table shape. */
enum deploy_id deploy_of_shape(enum pt_mode shape, bool on_dax);
/* "4k, shm-thp, ..." */
void deploy_list(char *buf, size_t len);

/* pt_model() of the region in deployment d (its shape, its leaves for
 * mshare, its alignment refusals). */
int deploy_model(enum deploy_id d, const struct pt_region *r, struct pt_cost *cost, char *err, size_t err_len);

/* The settings a deployment needs, for a region of sga_bytes mapped by
 * processes; nodes/sga_node as --nodes/--sga-node (0 / -1: none). */
struct deploy_setting {
	char key[96];     /* e.g. "vm.nr_hugepages", "postgresql.conf huge_pages" */
	char value[160];
	char why[320];
};
#define DEPLOY_MAX_SETTINGS 24
size_t deploy_settings(enum deploy_id d, uint64_t sga_bytes, uint64_t processes, unsigned nodes, int sga_node,
		       struct deploy_setting *out, size_t max);

#endif
