/* Unit tests of the JSON writer, the CSV row built from it and the check
 * of an existing --csv file. */
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "csv.h"
#include "json.h"
#include "../lib/tap.h"

static char *render(void (*fill)(struct json_writer *), struct json_writer *w, char **csv)
{
	char *buf = NULL, *cbuf = NULL;
	size_t len = 0, clen = 0;
	FILE *f = open_memstream(&buf, &len);
	json_init(w, f);
	fill(w);
	fclose(f);
	f = open_memstream(&cbuf, &clen);
	csv_write_header(f, w);
	csv_write_row(f, w);
	fclose(f);
	*csv = cbuf;
	return buf;
}

static void fill_record(struct json_writer *w)
{
	json_begin_object(w, NULL);
	json_key_u64(w, "schema_version", 1);
	json_begin_object(w, "config");
	json_key_string(w, "backend", "shm");
	json_key_u64(w, "workers", 18446744073709551615ull);
	json_end_object(w);
	json_begin_object(w, "results");
	json_key_double(w, "p50", 0.25);
	json_key_double(w, "nan", NAN);
	json_key_i64(w, "neg", -5);
	json_key_bool(w, "dax", false);
	json_key_string(w, "text", "a \"quoted\", comma\nnewline\\ and \x01");
	json_key_string(w, "missing", NULL);
	json_begin_object(w, "empty");
	json_end_object(w);
	json_begin_array(w, "list");
	json_key_u64(w, NULL, 7);
	json_key_u64(w, NULL, 8);
	json_end_array(w);
	json_end_object(w);
	json_end_object(w);
}

static const char *const expected_json =
	"{\n"
	"  \"schema_version\": 1,\n"
	"  \"config\": {\n"
	"    \"backend\": \"shm\",\n"
	"    \"workers\": 18446744073709551615\n"
	"  },\n"
	"  \"results\": {\n"
	"    \"p50\": 0.25,\n"
	"    \"nan\": null,\n"
	"    \"neg\": -5,\n"
	"    \"dax\": false,\n"
	"    \"text\": \"a \\\"quoted\\\", comma\\nnewline\\\\ and \\u0001\",\n"
	"    \"missing\": null,\n"
	"    \"empty\": {},\n"
	"    \"list\": [\n"
	"      7,\n"
	"      8\n"
	"    ]\n"
	"  }\n"
	"}\n";

static const char *const expected_csv =
	"schema_version,config.backend,config.workers,results.p50,results.nan,results.neg,results.dax,"
	"results.text,results.missing,results.list.0,results.list.1\n"
	"1,shm,18446744073709551615,0.25,,-5,false,\"a \"\"quoted\"\", comma\nnewline\\ and \x01\",,7,8\n";

static void fill_unbalanced(struct json_writer *w)
{
	json_begin_object(w, NULL);
	json_end_array(w);
}

static void fill_doubles(struct json_writer *w)
{
	json_begin_object(w, NULL);
	json_key_double(w, "a", 0.1);
	json_key_double(w, "b", 1.0 / 3.0);
	json_key_double(w, "c", 1e300);
	json_key_double(w, "d", 0.014579057);
	json_end_object(w);
}

/* The planner's forms: fixed decimals, significant digits, addresses. */
static void fill_formats(struct json_writer *w)
{
	json_begin_object(w, NULL);
	json_key_fixed(w, "mean", 1234.56, 1);
	json_key_fixed(w, "pct", 2.0, 4);
	json_key_fixed(w, "bytes", 1048576.4, 0);
	json_key_fixed(w, "inf", INFINITY, 0);
	json_key_double_digits(w, "frac", 0.123456789, 6);
	json_key_double_digits(w, "whole", 1.0, 6);
	json_key_hex(w, "addr", 0x20000000000ull);
	json_end_object(w);
}

static const char *const expected_formats =
	"{\n  \"mean\": 1234.6,\n  \"pct\": 2.0000,\n  \"bytes\": 1048576,\n  \"inf\": null,\n"
	"  \"frac\": 0.123457,\n  \"whole\": 1,\n  \"addr\": \"0x20000000000\"\n}\n";

/* csv_check_fd on a file holding text (NULL: a directory), against header. */
static int check_csv(const char *text, const char *header, char *err, size_t err_len)
{
	char path[] = "/tmp/test-json-csv.XXXXXX";
	long long size = -1;
	int fd, rc;
	if (!text) {
		if (!mkdtemp(path))
			return -2;
		fd = open(path, O_RDONLY | O_DIRECTORY);
	} else {
		fd = mkstemp(path);
		if (fd >= 0 && write(fd, text, strlen(text)) != (ssize_t)strlen(text))
			return -2;
	}
	if (fd < 0)
		return -2;
	rc = csv_check_fd(fd, path, header, header ? strlen(header) : 0, "; then", &size, err, err_len);
	if (rc == 0 && size != (long long)strlen(text))
		rc = -3;
	close(fd);
	text ? unlink(path) : rmdir(path);
	return rc;
}

static void test_csv_check(void)
{
	static const char header[] = "schema_version,tool\n";
	char err[512];
	TAP_OK(check_csv("", header, err, sizeof(err)) == 0, "csv check: an empty file takes the header and a row");
	TAP_OK(check_csv("schema_version,tool\n2,x\n", header, err, sizeof(err)) == 0,
	       "csv check: a file with this header and whole rows takes a row");
	TAP_OK(check_csv("schema_version,tool\n2,x\n", NULL, err, sizeof(err)) == 0,
	       "csv check: before the run, any CSV of records passes");
	TAP_OK(check_csv("schema_version,other\n2,x\n", header, err, sizeof(err)) == -1 &&
		       strstr(err, "other columns") && strstr(err, "; then"),
	       "csv check: another header is refused, naming it: %s", err);
	TAP_OK(check_csv("schema_version,tool\n2,x", header, err, sizeof(err)) == -1 && strstr(err, "cut-off row"),
	       "csv check: a cut-off last row is refused: %s", err);
	TAP_OK(check_csv("name,value\nx,1\n", NULL, err, sizeof(err)) == -1 && strstr(err, "not a CSV file of mshare"),
	       "csv check: another tool's CSV is refused before the run: %s", err);
	TAP_OK(check_csv("sch", header, err, sizeof(err)) == -1 && strstr(err, "not a CSV file of mshare"),
	       "csv check: a file shorter than the first column is refused: %s", err);
	TAP_OK(check_csv(NULL, header, err, sizeof(err)) == -1 && strstr(err, "not a regular file"),
	       "csv check: a directory is refused: %s", err);
}

int main(void)
{
	struct json_writer w;
	char *csv;
	char *json = render(fill_record, &w, &csv);

	TAP_OK(!json_failed(&w), "writer reports no error");
	TAP_OK(strcmp(json, expected_json) == 0, "JSON output is exactly as expected");
	if (strcmp(json, expected_json) != 0)
		printf("# got:\n%s", json);
	TAP_OK(strcmp(csv, expected_csv) == 0, "CSV header and row are the flat JSON fields, RFC 4180 quoted");
	if (strcmp(csv, expected_csv) != 0)
		printf("# got:\n%s", csv);
	json_free(&w);
	free(json);
	free(csv);

	json = render(fill_unbalanced, &w, &csv);
	TAP_OK(json_failed(&w), "closing an object with ] is reported as an error");
	json_free(&w);
	free(json);
	free(csv);

	json = render(fill_doubles, &w, &csv);
	int roundtrip = 1;
	static const double want[] = { 0.1, 1.0 / 3.0, 1e300, 0.014579057 };
	for (size_t i = 0; i < w.nfields; i++)
		roundtrip &= strtod(w.fields[i].value, NULL) == want[i];
	TAP_OK(w.nfields == 4 && roundtrip, "doubles read back exactly");
	TAP_OK(strstr(json, "\"a\": 0.1,") && strstr(json, "\"d\": 0.014579057\n"), "doubles are written short when exact");
	json_free(&w);
	free(json);
	free(csv);

	json = render(fill_formats, &w, &csv);
	TAP_OK(strcmp(json, expected_formats) == 0,
	       "fixed decimals (1, 4, 0), 6 significant digits, non-finite as null, addresses as \"0x...\"");
	if (strcmp(json, expected_formats) != 0)
		printf("# got:\n%s", json);
	json_free(&w);
	free(json);
	free(csv);

	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	csv_write_field(f, "plain");
	fputc('|', f);
	csv_write_field(f, "has,comma");
	fputc('|', f);
	csv_write_field(f, "cr\rhere");
	fclose(f);
	TAP_OK(strcmp(buf, "plain|\"has,comma\"|\"cr\rhere\"") == 0, "CSV fields quoted only when needed");
	free(buf);

	test_csv_check();
	return tap_done();
}
