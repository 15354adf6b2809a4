/* accuracy.c - the model's checked accuracy, printed with every plan. */
#include <inttypes.h>
#include <stdio.h>

#include "accuracy.h"
#include "units.h"

#define FMT(b) units_format_bytes((b), (char[32]){ 0 }, 32)

const struct accuracy_row accuracy_rows[] = {
#include "accuracy_table.inc"
};
const unsigned accuracy_row_count = sizeof(accuracy_rows) / sizeof(accuracy_rows[0]);

static const char *const view_names[3] = { "VmPTE region/worker", "VmPTE sum", "PageTables delta" };

void accuracy_print(FILE *out)
{
	fprintf(out, "\nHow far this model is checked (MEASURED runs under results/, `plan --calibrate`; worst error of "
		"each view, and how many of its comparisons came within 5%%):\n");
	for (unsigned i = 0; i < accuracy_row_count; i++) {
		const struct accuracy_row *r = &accuracy_rows[i];

		fprintf(out, "  %-10s %-5s %3u records of %2u runs, %s..%s, %u..%u processes:", r->shape, r->platform,
			r->records, r->runs, FMT(r->size_min), FMT(r->size_max), r->workers_min, r->workers_max);
		for (int v = 0, first = 1; v < 3; v++)
			if (r->compared[v]) {
				fprintf(out, "%s %s worst %+.2f%% (%u/%u within 5%%)", first ? "" : ";", view_names[v],
					r->worst_pct[v], r->within[v], r->compared[v]);
				first = 0;
			}
		fprintf(out, "\n");
	}
	fprintf(out, "  Shapes: 4k also stands for dax-4k; dax-2m for shm-thp and devdax-2m; dax-1g for devdax-1g; mshare "
		"for every mshare mode. hugetlb-1g, shm-thp and 5-level paging have no measured run. The misses: "
		"fsdax gave a mix of 2 MiB and 4 KiB mappings (dax-2m), and PageTables is system-wide (other jobs, "
		"per-CPU lag). plan --pid is checked exactly against PostgreSQL 15's backends "
		"(tests/planner/pid-postgres.sh).\n");
}

void accuracy_json(struct json_writer *w, const char *key)
{
	json_begin_array(w, key);
	for (unsigned i = 0; i < accuracy_row_count; i++) {
		const struct accuracy_row *r = &accuracy_rows[i];
		static const char *const keys[3] = { "vmpte_region_per_worker", "vmpte_sum", "meminfo_delta" };

		json_begin_object(w, NULL);
		json_key_string(w, "shape", r->shape);
		json_key_string(w, "platform", r->platform);
		json_key_u64(w, "records", r->records);
		json_key_u64(w, "runs", r->runs);
		json_key_u64(w, "size_min_bytes", r->size_min);
		json_key_u64(w, "size_max_bytes", r->size_max);
		json_key_u64(w, "workers_min", r->workers_min);
		json_key_u64(w, "workers_max", r->workers_max);
		for (int v = 0; v < 3; v++) {
			json_begin_object(w, keys[v]);
			json_key_fixed(w, "worst_error_pct", r->worst_pct[v], 4);
			json_key_u64(w, "compared", r->compared[v]);
			json_key_u64(w, "within_5pct", r->within[v]);
			json_end_object(w);
		}
		json_end_object(w);
	}
	json_end_array(w);
}
