/* test-json-read.c - reading run records (planner/record_json.c over
 * libjansson): dotted paths, exact integers, addresses, refusals (TAP). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record_json.h"
#include "../lib/tap.h"

int main(void)
{
	const char *doc =
		"{\"config\": {\"backend\": \"shm\", \"workers\": 8, \"addr\": \"0x20000000000\"},\n"
		" \"results\": {\"pagetables\": {\"region_bytes_per_worker\": 139264.0,\n"
		"   \"meminfo_delta_bytes\": -4096, \"big\": 18014398509481985},\n"
		"   \"ok\": true, \"none\": null, \"list\": [1, 2, {\"x\": \"a\\\"b\\u00e9\"}]}}";
	char err[300];
	json_t *root = jr_load_text(doc, err, sizeof(err));
	uint64_t u = 0;
	double d = 0;
	bool b = false;

	TAP_OK(root != NULL, "a run-record-like document parses");
	if (!root) {
		printf("# %s\n", err);
		return tap_done();
	}
	TAP_OK(jr_get_string(root, "config.backend") && strcmp(jr_get_string(root, "config.backend"), "shm") == 0,
	      "string by dotted path");
	TAP_OK(jr_get_u64(root, "config.workers", &u) && u == 8, "integer by dotted path");
	TAP_OK(jr_get_u64(root, "config.addr", &u) && u == 0x20000000000ull, "hex address string as integer");
	TAP_OK(jr_get_number(root, "results.pagetables.region_bytes_per_worker", &d) && d == 139264.0 &&
	      jr_get_u64(root, "results.pagetables.region_bytes_per_worker", &u) && u == 139264,
	      "fractional-looking whole number: a number and a u64");
	TAP_OK(jr_get_u64(root, "results.pagetables.big", &u) && u == 18014398509481985ull,
	      "integer above 2^53 kept exact");
	TAP_OK(!jr_get_u64(root, "results.pagetables.meminfo_delta_bytes", &u) &&
	      jr_get_number(root, "results.pagetables.meminfo_delta_bytes", &d) && d == -4096,
	      "negative number: not a u64, still a number");
	TAP_OK(jr_get_bool(root, "results.ok", &b) && b, "true");
	TAP_OK(json_is_null(jr_get(root, "results.none")) && !jr_get_string(root, "results.none"), "null");
	TAP_OK(jr_get(root, "results.missing") == NULL && jr_get(root, "config.backend.x") == NULL &&
	      jr_get(root, "results..ok") == NULL, "missing paths give NULL");
	const json_t *x = json_array_get(jr_get(root, "results.list"), 2);
	TAP_OK(x && strcmp(json_string_value(json_object_get(x, "x")), "a\"b\xc3\xa9") == 0,
	      "arrays and escapes (\\\" and \\u00e9 as UTF-8)");
	json_decref(root);

	static const char *const bad[] = { "{", "{\"a\" 1}", "[1,]", "{\"a\": tru}", "\"abc", "1 2",
					   "{\"a\": \"\\q\"}", "", "{\"a\": 1, \"a\": 2}" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char what[400];
		json_t *v = jr_load_text(bad[i], err, sizeof(err));

		snprintf(what, sizeof(what), "invalid JSON '%s' rejected (%s)", bad[i], v ? "accepted" : err);
		TAP_OK(v == NULL && strstr(err, "line ") != NULL, "%s", what);
		json_decref(v);
	}

	char path[] = "/tmp/test-json-read.XXXXXX";
	int fd = mkstemp(path);
	TAP_OK(fd >= 0 && write(fd, "{\"a\":\0 1}", 9) == 9, "a file with a NUL byte is written");
	json_t *v = jr_load_file(path, err, sizeof(err));
	TAP_OK(v == NULL && strstr(err, path) != NULL, "a file with a NUL byte is refused, the message names it");
	json_decref(v);
	unlink(path);
	v = jr_load_file("/nonexistent/x.json", err, sizeof(err));
	TAP_OK(v == NULL && strstr(err, "/nonexistent/x.json: No such file") != NULL, "a missing file: the reason");
	if (fd >= 0)
		close(fd);
	return tap_done();
}
