/* hugepool.h - borrowing huge pages from the kernel's pool for one run.
 *
 * A run that needs N huge pages takes them from the free pool if there are
 * enough, else raises nr_hugepages by exactly the shortfall, and gives
 * back exactly what it added when it ends (every exit path calls
 * hugepool_release).
 */
#ifndef MSHARE_BENCH_HUGEPOOL_H
#define MSHARE_BENCH_HUGEPOOL_H

#include <stddef.h>

/* sysfs directory of the pool for pages of page_bytes. */
void hugepool_dir(size_t page_bytes, char *out, size_t len);
/* Free pages not already reserved; -1 if the pool does not exist. */
long hugepool_available(size_t page_bytes);
/* Make `pages` pages available; *added = how many were added to the pool. */
int hugepool_reserve(size_t page_bytes, long pages, long *added, char *err, size_t err_len);
/* Give back `added` pages (no-op for 0). */
void hugepool_release(size_t page_bytes, long added);

#endif
