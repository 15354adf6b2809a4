/* touch_map.c - reading and writing touch maps (see touch_map.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "touch_map.h"
#include "units.h"

static int by_start(const void *a, const void *b)
{
	const struct pt_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int touch_map_read(const char *path, struct pt_range **out, size_t *count, char *err, size_t err_len)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0, n = 0, rcap = 0;
	unsigned lineno = 0;
	struct pt_range *r = NULL;
	int rc = 0;

	*out = NULL;
	*count = 0;
	if (!f) {
		snprintf(err, err_len, "--touch-map '%s': %s", path, strerror(errno));
		return -1;
	}
	while (rc == 0 && getline(&line, &cap, f) > 0) {
		char a[64], b[64], extra[2];
		uint64_t off, size;
		int k;

		lineno++;
		line[strcspn(line, "#\n")] = '\0';
		k = sscanf(line, "%63s %63s %1s", a, b, extra);
		if (k <= 0)
			continue;
		if (k != 2 || units_parse_size(a, &off) < 0 || units_parse_size(b, &size) < 0 || size == 0 ||
		    off > UINT64_MAX - size) {
			snprintf(err, err_len, "--touch-map '%s' line %u: '%s' is not \"OFFSET SIZE\" (e.g. 0x200000 2M)",
				 path, lineno, line);
			rc = -1;
			break;
		}
		if (n == rcap) {
			size_t nc = rcap ? rcap * 2 : 64;
			struct pt_range *m = realloc(r, nc * sizeof(*m));

			if (!m) {
				snprintf(err, err_len, "--touch-map '%s': out of memory", path);
				rc = -1;
				break;
			}
			r = m;
			rcap = nc;
		}
		r[n++] = (struct pt_range){ off, off + size, NULL };
	}
	if (rc == 0 && ferror(f)) {
		snprintf(err, err_len, "--touch-map '%s': read error", path);
		rc = -1;
	}
	if (rc == 0 && n == 0) {
		snprintf(err, err_len, "--touch-map '%s': no range in it (a region nobody touches has no page tables)",
			 path);
		rc = -1;
	}
	free(line);
	fclose(f);
	if (rc < 0) {
		free(r);
		return -1;
	}
	/* Sorted and merged: the order of touches does not matter. */
	qsort(r, n, sizeof(*r), by_start);
	{
		size_t w = 0;

		for (size_t i = 1; i < n; i++) {
			if (r[i].start <= r[w].end) {
				if (r[i].end > r[w].end)
					r[w].end = r[i].end;
			} else {
				r[++w] = r[i];
			}
		}
		n = w + 1;
	}
	*out = r;
	*count = n;
	return 0;
}

int touch_map_write(const char *path, const struct pt_range *r, size_t count, const char *header,
		    char *err, size_t err_len)
{
	char *tmp = NULL;
	FILE *f;
	int ok;

	if (access(path, F_OK) == 0) {
		snprintf(err, err_len, "--save-touch-map '%s': exists; not replacing it", path);
		return -1;
	}
	if (asprintf(&tmp, "%s.tmp.%d", path, (int)getpid()) < 0) {
		snprintf(err, err_len, "--save-touch-map: out of memory");
		return -1;
	}
	if (!(f = fopen(tmp, "wxe"))) {
		snprintf(err, err_len, "--save-touch-map '%s': %s", tmp, strerror(errno));
		free(tmp);
		return -1;
	}
	fprintf(f, "# mshare-bench touch map: OFFSET SIZE per line, offsets from the region's start\n");
	if (header)
		fprintf(f, "# %s\n", header);
	for (size_t i = 0; i < count; i++)
		fprintf(f, "0x%" PRIx64 " 0x%" PRIx64 "\n", r[i].start, r[i].end - r[i].start);
	ok = fflush(f) == 0 && fsync(fileno(f)) == 0;
	ok = (fclose(f) == 0) && ok;
	/* link() fails if path appeared meanwhile: never replaces a file. */
	if (!ok || link(tmp, path) < 0) {
		snprintf(err, err_len, "--save-touch-map '%s': %s", path, strerror(errno));
		unlink(tmp);
		free(tmp);
		return -1;
	}
	unlink(tmp);
	free(tmp);
	return 0;
}
