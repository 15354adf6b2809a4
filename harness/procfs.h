/* procfs.h - reading the kernel's figures from /proc and /sys.
 *
 * All readers use a stack buffer and raw read(2): they are called in the
 * parent for thousands of workers and must not allocate.
 */
#ifndef MSHARE_BENCH_PROCFS_H
#define MSHARE_BENCH_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Read a whole small file into buf (NUL-terminated). Bytes read or -1. */
ssize_t procfs_read(const char *path, char *buf, size_t len);
/* "Field:   123 kB" in /proc/meminfo or /proc/<pid>/status: value in
 * bytes (kB * 1024), or -1 if absent. */
int64_t procfs_meminfo_bytes(const char *field);
/* Make /proc/meminfo exact now: without this, counters such as PageTables
 * lag by up to the per-CPU vmstat thresholds (hundreds of pages per CPU)
 * until the next periodic fold. Needs root; false if it could not. */
bool procfs_stat_refresh(void);
int64_t procfs_status_bytes(pid_t pid, const char *field);
/* "name value" line of /proc/vmstat; -1 if absent. */
int64_t procfs_vmstat(const char *name);
/* A file holding one integer (sysctl, sysfs); -1 with errno on failure. */
int procfs_read_long(const char *path, long *out);
int procfs_write_long(const char *path, long value);

/* What /proc/<pid>/smaps says about the mapping that starts at addr. */
struct smaps_region {
	bool found;
	uint64_t size_bytes, rss_bytes;
	uint64_t kernel_page_bytes, mmu_page_bytes;
	uint64_t anon_huge_bytes, shmem_pmd_bytes, file_pmd_bytes;
	uint64_t private_dirty_bytes, shared_dirty_bytes;
	char vmflags[128];
};
int procfs_smaps_region(pid_t pid, uintptr_t addr, struct smaps_region *out);
/* Sum of Private_Dirty over all mappings of pid, in bytes; -1 on error. */
int64_t procfs_private_dirty_bytes(pid_t pid);

#endif
