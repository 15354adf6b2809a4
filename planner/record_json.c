/* record_json.c - dotted-path lookups over libjansson (record_json.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record_json.h"

static json_t *checked(json_t *root, const json_error_t *e, const char *what, char *err, size_t err_len)
{
	if (!root)
		snprintf(err, err_len, "%s: line %d column %d: %s", what, e->line, e->column, e->text);
	return root;
}

json_t *jr_load_file(const char *path, char *err, size_t err_len)
{
	json_error_t e;
	struct stat st;
	/* Never blocks on what is not a regular file (a FIFO named like a
	 * record would hang the read for ever): opened without waiting, then
	 * refused unless regular. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0) {
		snprintf(err, err_len, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, err_len, "%s: not a regular file (%s); not read", path,
			 S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISDIR(st.st_mode) ? "a directory"
			 : S_ISSOCK(st.st_mode) ? "a socket" : "a device or other special file");
		close(fd);
		return NULL;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	FILE *f = fdopen(fd, "r");
	if (!f) {
		snprintf(err, err_len, "%s: %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	/* One whole document; a NUL byte or a second value is an error. */
	json_t *root = json_loadf(f, JSON_REJECT_DUPLICATES, &e);
	fclose(f);
	return checked(root, &e, path, err, err_len);
}

json_t *jr_load_text(const char *text, char *err, size_t err_len)
{
	json_error_t e;

	return checked(json_loads(text, JSON_REJECT_DUPLICATES, &e), &e, "text", err, err_len);
}

const json_t *jr_get(const json_t *root, const char *path)
{
	const json_t *v = root;
	char key[128];

	while (v && *path) {
		size_t n = strcspn(path, ".");
		if (n >= sizeof(key) || !json_is_object(v))
			return NULL;
		memcpy(key, path, n);
		key[n] = '\0';
		v = json_object_get(v, key);
		path += n + (path[n] == '.');
	}
	return v;
}

bool jr_get_number(const json_t *root, const char *path, double *out)
{
	const json_t *v = jr_get(root, path);

	if (!json_is_number(v))
		return false;
	*out = json_number_value(v);
	return true;
}

bool jr_get_u64(const json_t *root, const char *path, uint64_t *out)
{
	const json_t *v = jr_get(root, path);

	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		*out = (uint64_t)json_integer_value(v);
		return true;
	}
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		char *end;
		if (s[0] < '0' || s[0] > '9')
			return false;
		errno = 0;
		unsigned long long u = strtoull(s, &end, 0);
		if (errno || *end)
			return false;
		*out = u;
		return true;
	}
	/* A whole number written as a real ("139264.0"). */
	if (json_is_real(v) && json_real_value(v) >= 0 && json_real_value(v) < 18446744073709551616.0 &&
	    json_real_value(v) == (double)(uint64_t)json_real_value(v)) {
		*out = (uint64_t)json_real_value(v);
		return true;
	}
	return false;
}

const char *jr_get_string(const json_t *root, const char *path)
{
	const json_t *v = jr_get(root, path);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

bool jr_get_bool(const json_t *root, const char *path, bool *out)
{
	const json_t *v = jr_get(root, path);

	if (!json_is_boolean(v))
		return false;
	*out = json_is_true(v);
	return true;
}
