/* pid_probe.h - what a running deployment's page tables look like now.
 *
 * For `mshare-bench plan --pid PID`: the shared segment (chosen in
 * /proc/PID/maps), every process among PID and its descendants that maps
 * it, and for each: VmPTE (/proc/P/status), which pages of the segment are
 * present (/proc/P/pagemap: bit 63 present, bit 62 swapped; PFNs are not
 * needed, so the owner of the processes may read it without root), and
 * which pages of its other mappings are present.
 *
 * From presence the page-table pages are reconstructed by the paging rules
 * (a PTE page per 2 MiB span holding a present 4 KiB page, a PMD page per
 * 1 GiB span, a PUD page per 512 GiB span): for the process's other
 * mappings ("own" page tables) and for the segment on top of them (its
 * share: the pages only the segment needs). VmPTE is the kernel's count,
 * measured; the reconstruction is checked against it.
 */
#ifndef MSHARE_BENCH_PLANNER_PID_PROBE_H
#define MSHARE_BENCH_PLANNER_PID_PROBE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "pt_model.h"

/* A shared mapping of PID that could be the segment. */
struct probe_candidate {
	uint64_t start, end;
	char perms[5];
	char name[256];
};

struct probe_proc {
	pid_t pid, ppid;
	/* The segment in this process (processes may map it at different
	 * addresses); vmas: how many mappings of it the process has. */
	uint64_t seg_start, seg_end;
	unsigned vmas;
	bool descendant;                 /* of the --pid process */
	char comm[32];
	int64_t vmpte_bytes;             /* measured: /proc/P/status VmPTE */
	/* Present pages of the segment, as offsets from its start (merged). */
	struct pt_range *touch;
	size_t touch_count;
	uint64_t touched_bytes;
	/* Every other mapping with access rights (not PROT_NONE), absolute,
	 * named: what lies around the segment. */
	struct pt_range *around;
	size_t around_count;
	char **names;                    /* the around ranges' names */
	size_t name_count;
	/* Page-table pages (PTE, PMD, PUD) implied by presence: the other
	 * mappings alone, and with the segment. */
	uint64_t own_pages[3], all_pages[3];
	/* Per level (PTE, PMD, PUD): bit 0 set when other mappings have pages
	 * present in the segment's first span (below its start), bit 1 in its
	 * last span (above its end). */
	unsigned own_at_edges[3];
	/* Bytes of other mappings mapped by PMD (THP) or hugetlb: presence
	 * there needs no PTE page; THP is not seen per span, so the
	 * reconstruction may count PTE pages that do not exist. */
	uint64_t other_pmd_mapped_bytes;
};

struct pid_probe {
	pid_t pid;
	bool root;
	/* The segment, as PID (or the first descendant mapping it) has it. */
	uint64_t seg_start, seg_end;
	char seg_perms[5];
	char seg_name[256];
	char seg_dev_inode[64];          /* "fe:00 1234": to find it in children */
	uint64_t seg_page_bytes;         /* smaps KernelPageSize */
	bool seg_hugetlb;
	uint64_t seg_pmd_mapped_bytes;   /* ShmemPmdMapped/FilePmdMapped/AnonHugePages */
	enum pt_mode seg_mode;
	char why[512];                   /* why this mapping was chosen */
	struct probe_candidate *cands;   /* PID's shared mappings >= 1 MiB, largest first */
	size_t cand_count;
	struct probe_proc *procs;        /* processes mapping the segment, by pid */
	size_t proc_count;
	size_t descendants;              /* PID's descendants seen */
	size_t scanned;                  /* processes in /proc looked at */
	size_t maps_unreadable;          /* of them, whose maps could not be read */
	size_t outside_tree;             /* mapping processes that are not PID or its descendants */
	size_t vmas_found;               /* mappings of the segment in the processes read */
	/* SysV: the segment's id and attach count (/proc/sysvipc/shm); -1 when
	 * the segment is not a SysV one. */
	int64_t shmid, nattch;
	bool on_dax;                     /* the file is on a DAX filesystem or a /dev/dax device */
	/* Every SysV segment PID attaches (Oracle's SGA may be several). */
	struct probe_sysv { int64_t shmid, nattch; uint64_t size; bool hugetlb; } sysv[16];
	size_t sysv_count;
	size_t skipped_unmapped;         /* descendants not mapping the segment */
	size_t skipped_unreadable;       /* processes whose pagemap could not be read */
	char unreadable_example[256];

};

/* Which deployment: a process (and optionally an address inside the
 * mapping), a SysV segment id, or a file or device path. */
struct probe_target {
	pid_t pid;
	uint64_t segment;
	bool by_shmid;
	int64_t shmid;
	const char *file;
};

/* Fill *p: the segment, then every process on the host that maps it,
 * whatever its parent. 0 on success; -1 with the reason in err. */
int pid_probe_run(const struct probe_target *t, struct pid_probe *p, char *err, size_t err_len);
void pid_probe_free(struct pid_probe *p);

#endif
