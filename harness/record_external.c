/* record_external.c - the record of a point the harness did not drive
 * itself, written by the harness's record writer.
 *
 * A PostgreSQL point runs pgbench against a server in the guest
 * (workloads/postgres/guest/pg-bench.sh); its figures are read from what
 * that left by its stats parser (bench/lib/pgpoint.py), LKP-style. The
 * record itself is made here, by the same code as a harness run's:
 *   - the frame (schema_version, tool, environment) is what `mshare-bench
 *     environment --json` printed where and when the point ran (the guest's
 *     platform, clock and Slurm ids, never inferred on the host); it must
 *     carry this writer's RECORD_SCHEMA_VERSION: a point run with another
 *     build of the harness is refused, not relabelled;
 *   - the body is {config, results[, preflight]}; config must hold every key
 *     a harness run's config holds (record_config_keys, the tools read
 *     them), a point's own block may follow;
 *   - the JSON text and the CSV row come from json.c, the files from
 *     record_files_write: atomic, never over an existing record.
 * Nothing is computed here: the body's values are written as they are
 * (numbers keep their type: integers as integers, reals read back equal).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "csv.h"
#include "environment.h"
#include "json.h"
#include "parse.h"
#include "record_external.h"
#include "record_files.h"
#include "run.h"
#include "run_result.h"

const char *const record_config_keys[] = {
	"backend", "backend_facts", "workers", "size_bytes", "workload", "workload_facts", "page_mode", "write",
	"addr", "path", "seed", "duration_s", "ops", "cpus", "mem_policy", "params", NULL,
};

/* The largest input taken: a record of 1,000 PostgreSQL backends with
 * touch snapshots is about 100 KiB. */
#define RECORD_INPUT_MAX (64u << 20)

/* Reads a frame or body for jansson, at most RECORD_INPUT_MAX bytes: a
 * larger input is refused when it is read, not parsed whole first. */
struct input {
	FILE *f;
	size_t total;
	bool over;
	int err;
};

static size_t read_input(void *buf, size_t len, void *data)
{
	struct input *in = data;
	size_t n;

	if (in->total >= RECORD_INPUT_MAX) {
		char c;
		if (fread(&c, 1, 1, in->f) == 0 && !ferror(in->f))
			return 0; /* ends at the limit */
		in->over = true;
		return (size_t)-1;
	}
	if (len > RECORD_INPUT_MAX - in->total)
		len = RECORD_INPUT_MAX - in->total;
	n = fread(buf, 1, len, in->f);
	if (n == 0 && ferror(in->f)) {
		in->err = errno ? errno : EIO;
		return (size_t)-1;
	}
	in->total += n;
	return n;
}

static json_t *load(const char *path, const char *what, char *err, size_t err_len)
{
	json_error_t je;
	json_t *v;
	struct input in = { .f = strcmp(path, "-") ? fopen(path, "r") : stdin };

	if (!in.f) {
		snprintf(err, err_len, "%s %s: %s", what, path, strerror(errno));
		return NULL;
	}
	errno = 0;
	v = json_load_callback(read_input, &in, JSON_REJECT_DUPLICATES, &je);
	if (in.f != stdin)
		fclose(in.f);
	if (!v && in.over) {
		snprintf(err, err_len, "%s %s: larger than the writer takes (%u bytes)", what, path, RECORD_INPUT_MAX);
		return NULL;
	}
	if (!v && in.err) {
		snprintf(err, err_len, "%s %s: cannot read: %s", what, path, strerror(in.err));
		return NULL;
	}
	if (!v) {
		snprintf(err, err_len, "%s %s: not JSON at line %d column %d: %s", what, path, je.line, je.column,
			 je.text);
		return NULL;
	}
	if (!json_is_object(v)) {
		snprintf(err, err_len, "%s %s: not a JSON object", what, path);
		json_decref(v);
		return NULL;
	}
	return v;
}

static int check_frame(const json_t *frame, const char *path, char *err, size_t err_len)
{
	const json_t *sv = json_object_get(frame, "schema_version"), *tool = json_object_get(frame, "tool");
	const json_t *env = json_object_get(frame, "environment");
	const char *key;
	const json_t *v;

	if (!json_is_integer(sv)) {
		snprintf(err, err_len, "frame %s: no integer schema_version (is it `mshare-bench environment --json`?)",
			 path);
		return -1;
	}
	if (json_integer_value(sv) != RECORD_SCHEMA_VERSION) {
		snprintf(err, err_len,
			 "frame %s: schema_version %lld, this writer's is %d: the point ran with another build of the "
			 "harness (rebuild the guest's initramfs)",
			 path, (long long)json_integer_value(sv), RECORD_SCHEMA_VERSION);
		return -1;
	}
	if (!json_is_string(tool) || strcmp(json_string_value(tool), "mshare-bench")) {
		snprintf(err, err_len, "frame %s: tool is not \"mshare-bench\"", path);
		return -1;
	}
	if (!json_is_object(env) || !json_is_string(json_object_get(env, "platform")) ||
	    !json_is_string(json_object_get(env, "clock"))) {
		snprintf(err, err_len, "frame %s: no environment object with platform and clock", path);
		return -1;
	}
	json_object_foreach((json_t *)frame, key, v) {
		if (strcmp(key, "schema_version") && strcmp(key, "tool") && strcmp(key, "environment")) {
			snprintf(err, err_len, "frame %s: unknown key '%s' (schema_version, tool, environment)", path,
				 key);
			return -1;
		}
	}
	return 0;
}

static int check_body(const json_t *body, const char *path, char *err, size_t err_len)
{
	const json_t *config = json_object_get(body, "config"), *results = json_object_get(body, "results");
	const char *key;
	const json_t *v;

	json_object_foreach((json_t *)body, key, v) {
		if (strcmp(key, "config") && strcmp(key, "results") && strcmp(key, "preflight")) {
			snprintf(err, err_len,
				 "body %s: key '%s' is not the body's (config, results, preflight; the frame "
				 "gives schema_version, tool and environment)",
				 path, key);
			return -1;
		}
		if (!json_is_object(v)) {
			snprintf(err, err_len, "body %s: %s is not an object", path, key);
			return -1;
		}
	}
	if (!config || !results) {
		snprintf(err, err_len, "body %s: no %s object", path, config ? "results" : "config");
		return -1;
	}
	for (int i = 0; record_config_keys[i]; i++) {
		if (!json_object_get(config, record_config_keys[i])) {
			snprintf(err, err_len, "body %s: config has no '%s' (every record's config has it)", path,
				 record_config_keys[i]);
			return -1;
		}
	}
	if (!json_is_string(json_object_get(config, "backend")) || !json_is_string(json_object_get(config, "workload")) ||
	    !json_is_integer(json_object_get(config, "workers"))) {
		snprintf(err, err_len, "body %s: config.backend and config.workload must be strings, config.workers an "
			 "integer", path);
		return -1;
	}
	return 0;
}

/* Whether v nests deeper than limit levels (a scalar: 0, an object or
 * array: one more than its deepest member). Stops at the limit, so a body
 * nested as deep as the parser allows costs one walk, not one per path. */
static bool deeper_than(const json_t *v, int limit)
{
	const char *k;
	const json_t *x;
	size_t i;

	if (!json_is_object(v) && !json_is_array(v))
		return false;
	if (limit < 1)
		return true;
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, x)
			if (deeper_than(x, limit - 1))
				return true;
	} else {
		json_array_foreach(v, i, x)
			if (deeper_than(x, limit - 1))
				return true;
	}
	return false;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

/* Whether a and b name the same file: the same text, or the same last
 * component in the same directory (./x.csv and x.csv). */
static bool same_name(const char *a, const char *b)
{
	char da[PATH_MAX], db[PATH_MAX];
	struct stat sa, sb;

	if (!strcmp(a, b))
		return true;
	if (strcmp(base_name(a), base_name(b)))
		return false;
	path_dir(a, da, sizeof(da));
	path_dir(b, db, sizeof(db));
	return stat(da, &sa) == 0 && stat(db, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Whether a file can be made beside path (its directory is there and
 * writable), so that a missing or read-only directory is found before any
 * output is written. */
static int check_dir(const char *opt, const char *path, char *err, size_t err_len)
{
	char dir[PATH_MAX];

	path_dir(path, dir, sizeof(dir));
	if (access(dir, W_OK | X_OK) != 0) {
		snprintf(err, err_len, "%s %s: directory %s: %s", opt, path, dir, strerror(errno));
		return -1;
	}
	return 0;
}

/* Whether --csv can take this record's row, checked before anything is
 * written (as `run` checks it before it runs; the append checks again
 * under its lock): not the --out file, not a link, a writable file of
 * records with this record's columns whose last row is whole, or no file
 * yet in a writable directory. A refusal after --out was written would
 * leave the record without its row, and --out, then existing, refuses a
 * second try. */
static int check_csv(const char *csv, const char *out, const char *header, size_t hlen, char *err, size_t err_len)
{
	long long size;
	int fd, rc;

	if (same_name(csv, out)) {
		snprintf(err, err_len, "--csv %s is also the --out file; give two files", csv);
		return -1;
	}
	if (csv_check_path(csv, err, err_len) != 0)
		return -1;
	fd = open(csv, O_RDWR | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	if (fd < 0) {
		if (errno == ENOENT)
			return check_dir("--csv", csv, err, err_len); /* created with the row */
		snprintf(err, err_len, "--csv %s: cannot open: %s", csv, strerror(errno));
		return -1;
	}
	rc = csv_check_fd(fd, csv, header, hlen, "", &size, err, err_len);
	close(fd);
	return rc;
}

static void append_text(char *err, size_t err_len, const char *text)
{
	size_t n = strlen(err);
	if (n < err_len)
		snprintf(err + n, err_len - n, "%s", text);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A CSV column name two of the record's values share (the flat names of
 * "a.b": 1 and "a": {"b": 2} are both a.b; a path longer than the writer
 * keeps is cut), NULL when every value has its own column. *failed: no
 * memory to look. */
static const char *duplicate_column(const struct json_writer *jw, bool *failed)
{
	const char **names, *dup = NULL;
	size_t i;

	*failed = false;
	if (jw->nfields < 2)
		return NULL;
	names = malloc(jw->nfields * sizeof(*names));
	if (!names) {
		*failed = true;
		return NULL;
	}
	for (i = 0; i < jw->nfields; i++)
		names[i] = jw->fields[i].key;
	qsort(names, jw->nfields, sizeof(*names), cmp_names);
	for (i = 1; i < jw->nfields && !dup; i++)
		if (!strcmp(names[i - 1], names[i]))
			dup = names[i];
	free(names);
	return dup;
}

/* One value under key (NULL: an array element or the top). */
static void put(struct json_writer *w, const char *key, const json_t *v)
{
	const char *k;
	const json_t *x;
	size_t i;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		json_begin_object(w, key);
		json_object_foreach((json_t *)v, k, x)
			put(w, k, x);
		json_end_object(w);
		break;
	case JSON_ARRAY:
		json_begin_array(w, key);
		json_array_foreach(v, i, x)
			put(w, NULL, x);
		json_end_array(w);
		break;
	case JSON_STRING:
		json_key_string(w, key, json_string_value(v));
		break;
	case JSON_INTEGER:
		json_key_i64(w, key, (int64_t)json_integer_value(v));
		break;
	case JSON_REAL:
		json_key_real(w, key, json_real_value(v));
		break;
	case JSON_TRUE:
	case JSON_FALSE:
		json_key_bool(w, key, json_is_true(v));
		break;
	case JSON_NULL:
		json_key_null(w, key);
		break;
	}
}

int record_external_write(const char *frame_path, const char *body_path, const char *out, const char *csv,
			  volatile sig_atomic_t *stop, char *err, size_t err_len)
{
	struct run_config cfg;
	struct json_writer jw;
	json_t *frame = NULL, *body = NULL;
	char *json = NULL, *header = NULL, *row = NULL;
	size_t json_len = 0, hlen = 0, rlen = 0;
	int rc = RECORD_REFUSED;
	FILE *mem;
	struct stat st;
	const char *dup = NULL;
	bool dup_failed = false;

	err[0] = '\0';
	/* lstat: a link is there even when what it names is not (the commit's
	 * rename never replaces it). */
	if (lstat(out, &st) == 0) {
		snprintf(err, err_len, "--out %s exists%s: a record is never replaced", out,
			 S_ISLNK(st.st_mode) ? " (a symbolic link)" : "");
		return RECORD_REFUSED;
	}
	frame = load(frame_path, "frame", err, err_len);
	if (!frame || check_frame(frame, frame_path, err, err_len))
		goto out;
	body = load(body_path, "body", err, err_len);
	if (!body || check_body(body, body_path, err, err_len))
		goto out;
	/* The record's object takes the place of the body's and the frame's:
	 * it nests as deep as the deeper of the two. */
	if (deeper_than(body, JSON_MAX_DEPTH)) {
		snprintf(err, err_len, "body %s: nested deeper than the writer's %d levels", body_path,
			 JSON_MAX_DEPTH);
		goto out;
	}
	if (deeper_than(frame, JSON_MAX_DEPTH)) {
		snprintf(err, err_len, "frame %s: nested deeper than the writer's %d levels", frame_path,
			 JSON_MAX_DEPTH);
		goto out;
	}
	rc = RECORD_NOTHING;
	/* The temporary files of writers killed before their commit (as a
	 * run's --out: record_files.c). */
	record_clean_orphans(out);
	mem = open_memstream(&json, &json_len);
	if (!mem) {
		snprintf(err, err_len, "out of memory; no record written");
		goto out;
	}
	json_init(&jw, mem);
	json_begin_object(&jw, NULL);
	put(&jw, "schema_version", json_object_get(frame, "schema_version"));
	put(&jw, "tool", json_object_get(frame, "tool"));
	put(&jw, "config", json_object_get(body, "config"));
	put(&jw, "environment", json_object_get(frame, "environment"));
	if (json_object_get(body, "preflight"))
		put(&jw, "preflight", json_object_get(body, "preflight"));
	put(&jw, "results", json_object_get(body, "results"));
	json_end_object(&jw);
	fclose(mem);
	if (json_failed(&jw)) {
		snprintf(err, err_len, "out of memory while writing the record of body %s; no record written",
			 body_path);
	} else if (json_len > RECORD_INPUT_MAX) {
		snprintf(err, err_len, "body %s: a record of %zu bytes (at most %u)", body_path, json_len,
			 RECORD_INPUT_MAX);
		rc = RECORD_REFUSED; /* the body's: "; no record written" follows */
	} else if ((dup = duplicate_column(&jw, &dup_failed)) != NULL || dup_failed) {
		if (dup_failed)
			snprintf(err, err_len, "out of memory while checking the CSV columns; no record written");
		else
			snprintf(err, err_len,
				 "body %s: two values are CSV column '%s' (a key holding '.', or a path cut at %zu "
				 "characters)", body_path, dup, sizeof(jw.path) - 1);
		rc = dup_failed ? RECORD_NOTHING : RECORD_REFUSED;
	} else if (csv_strings(&jw, &header, &hlen, &row, &rlen) != 0) {
		snprintf(err, err_len, "out of memory while writing the CSV row; no record written");
	} else if (check_dir("--out", out, err, err_len) != 0) {
		/* nothing written, --csv included (its row was appended, and a
		 * second try appended it again) */
		append_text(err, err_len, "; no record written");
	} else if (csv && check_csv(csv, out, header, hlen, err, err_len) != 0) {
		rc = RECORD_REFUSED;
	} else {
		memset(&cfg, 0, sizeof(cfg));
		cfg.out = out;
		cfg.csv = csv;
		rc = record_files_write(&cfg, stop, json, json_len, header, hlen, row, rlen, err, err_len);
	}
	json_free(&jw);
out:
	json_decref(frame);
	json_decref(body);
	free(json);
	free(header);
	free(row);
	return rc;
}
