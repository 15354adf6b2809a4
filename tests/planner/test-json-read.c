/* test-json-read.c - the planner's JSON reader (TAP). */
#include <stdio.h>
#include <string.h>

#include "json_read.h"

static int test_no, failures;

static void check(int ok, const char *what)
{
	printf("%sok %d - %s\n", ok ? "" : "not ", ++test_no, what);
	if (!ok)
		failures++;
}

int main(void)
{
	const char *doc =
		"{\"config\": {\"backend\": \"shm\", \"workers\": 8, \"addr\": \"0x20000000000\"},\n"
		" \"results\": {\"pagetables\": {\"region_bytes_per_worker\": 139264.0,\n"
		"   \"meminfo_delta_bytes\": -4096, \"big\": 18014398509481985},\n"
		"   \"ok\": true, \"none\": null, \"list\": [1, 2, {\"x\": \"a\\\"b\\u00e9\"}]}}";
	char err[200];
	struct jr_value *root = jr_parse(doc, err, sizeof(err));
	uint64_t u = 0;
	double d = 0;
	bool b = false;
	const struct jr_value *list;

	check(root != NULL, "a run-record-like document parses");
	if (!root) {
		printf("# %s\n1..%d\n", err, test_no);
		return 1;
	}
	check(jr_get_string(root, "config.backend") && strcmp(jr_get_string(root, "config.backend"), "shm") == 0,
	      "string by dotted path");
	check(jr_get_u64(root, "config.workers", &u) && u == 8, "integer by dotted path");
	check(jr_get_u64(root, "config.addr", &u) && u == 0x20000000000ull, "hex address string as integer");
	check(jr_get_number(root, "results.pagetables.region_bytes_per_worker", &d) && d == 139264.0,
	      "fractional number");
	check(jr_get_u64(root, "results.pagetables.big", &u) && u == 18014398509481985ull,
	      "integer above 2^53 kept exact");
	check(!jr_get_u64(root, "results.pagetables.meminfo_delta_bytes", &u) &&
	      jr_get_number(root, "results.pagetables.meminfo_delta_bytes", &d) && d == -4096,
	      "negative number: not a u64, still a number");
	check(jr_get_bool(root, "results.ok", &b) && b, "true");
	check(jr_get(root, "results.none") && jr_get(root, "results.none")->type == JR_NULL, "null");
	check(jr_get(root, "results.missing") == NULL && jr_get(root, "config.backend.x") == NULL,
	      "missing paths give NULL");
	list = jr_get(root, "results.list");
	check(list && list->type == JR_ARRAY && list->child && list->child->next &&
	      list->child->next->next && strcmp(list->child->next->next->child->string, "a\"b\xc3\xa9") == 0,
	      "arrays and escapes (\\\" and \\u00e9 as UTF-8)");
	jr_free(root);

	{
		static const char *const bad[] = { "{", "{\"a\" 1}", "[1,]", "{\"a\": tru}", "\"abc", "1 2",
						   "{\"a\": \"\\q\"}", "" };

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			char what[400];
			struct jr_value *v = jr_parse(bad[i], err, sizeof(err));

			snprintf(what, sizeof(what), "invalid JSON '%s' rejected (%s)", bad[i], v ? "accepted" : err);
			check(v == NULL, what);
			jr_free(v);
		}
	}
	printf("1..%d\n", test_no);
	return failures ? 1 : 0;
}
