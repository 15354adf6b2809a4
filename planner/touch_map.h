/* touch_map.h - which parts of a region each process touches, as a file.
 *
 * Text, one touched range per line: "OFFSET SIZE", offsets from the
 * region's start, each a hex number (0x...) or a size (4K, 2M, 1G);
 * '#' starts a comment. `plan --pid ... --save-touch-map FILE` writes the
 * pages it found present; `plan --touch-map FILE` models exactly those.
 */
#ifndef MSHARE_BENCH_PLANNER_TOUCH_MAP_H
#define MSHARE_BENCH_PLANNER_TOUCH_MAP_H

#include <stddef.h>

#include "pt_model.h"

/* Read FILE into a sorted, merged array (*out, *count; free() it). 0, or
 * -1 with the reason (file and line) in err. */
int touch_map_read(const char *path, struct pt_range **out, size_t *count, char *err, size_t err_len);

/* Write the ranges to a new FILE: never replaces an existing file, never
 * leaves a partial one (written aside, then linked in place). 0, or -1
 * with the reason in err. */
int touch_map_write(const char *path, const struct pt_range *r, size_t count, const char *header,
		    char *err, size_t err_len);

#endif
