/* backends.c - the table of backends. Adding one: its file plus one line. */
#include <string.h>

#include "backend.h"

extern const struct backend_ops backend_shm;
extern const struct backend_ops backend_file;
extern const struct backend_ops backend_anon;
extern const struct backend_ops backend_hugetlb_2m;
extern const struct backend_ops backend_hugetlb_1g;
extern const struct backend_ops backend_mshare;
extern const struct backend_ops backend_mshare_anon;
extern const struct backend_ops backend_mshare2025;

const struct backend_ops *const backend_table[] = {
	&backend_shm,
	&backend_file,
	&backend_anon,
	&backend_hugetlb_2m,
	&backend_hugetlb_1g,
	&backend_mshare,
	&backend_mshare_anon,
	&backend_mshare2025,
	NULL,
};

const struct backend_ops *backend_find(const char *name)
{
	for (const struct backend_ops *const *b = backend_table; *b; b++)
		if (strcmp((*b)->name, name) == 0)
			return *b;
	return NULL;
}
