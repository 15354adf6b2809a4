/* backends.c - the table of backends. Adding one: its file plus one line. */
#include <string.h>

#include "backend.h"
#include "json.h"

extern const struct backend_ops backend_shm;
extern const struct backend_ops backend_file;
extern const struct backend_ops backend_devdax;
extern const struct backend_ops backend_anon;
extern const struct backend_ops backend_hugetlb_2m;
extern const struct backend_ops backend_hugetlb_1g;
extern const struct backend_ops backend_mshare;
extern const struct backend_ops backend_mshare_anon;
extern const struct backend_ops backend_mshare2025;
extern const struct backend_ops backend_mshare2025_file;
extern const struct backend_ops backend_dummy;

const struct backend_ops *const backend_table[] = {
	&backend_shm,
	&backend_file,
	&backend_devdax,
	&backend_anon,
	&backend_hugetlb_2m,
	&backend_hugetlb_1g,
	&backend_mshare,
	&backend_mshare_anon,
	&backend_mshare2025,
	&backend_mshare2025_file,
#ifdef MSHARE_BENCH_TEST_BACKEND
	&backend_dummy, /* tests/harness/backend_dummy.c, in the test build only */
#endif
	NULL,
};

const struct backend_ops *backend_find(const char *name)
{
	for (const struct backend_ops *const *b = backend_table; *b; b++)
		if (strcmp((*b)->name, name) == 0)
			return *b;
	return NULL;
}

void backend_facts_json(struct json_writer *w, const struct backend_ops *b)
{
	static const char *const data[] = {
		[BACKEND_DATA_SHMEM] = "shmem",
		[BACKEND_DATA_FILE] = "file",
		[BACKEND_DATA_HUGETLB] = "hugetlb",
	};

	json_key_string(w, "name", b->name);
	json_key_string(w, "description", b->description);
	json_key_u64(w, "fixed_page_bytes", b->page_bytes);
	json_key_bool(w, "page_tables_shared", b->page_tables_shared);
	json_key_string(w, "planner_mode", b->planner_mode);
	json_key_string(w, "data", data[b->data]);
	json_key_string(w, "default_path", b->default_path);
	json_key_bool(w, "path_required", b->data == BACKEND_DATA_FILE && !b->default_path);
}
