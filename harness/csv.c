/* csv.c - CSV header and row from a json_writer's flat fields; the check
 * of an existing --csv file. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "csv.h"

void csv_write_field(FILE *out, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

static void write_line(FILE *out, const struct json_writer *w, bool keys)
{
	for (size_t i = 0; i < w->nfields; i++) {
		if (i)
			fputc(',', out);
		csv_write_field(out, keys ? w->fields[i].key : w->fields[i].value);
	}
	fputc('\n', out);
}

void csv_write_header(FILE *out, const struct json_writer *w)
{
	write_line(out, w, true);
}

void csv_write_row(FILE *out, const struct json_writer *w)
{
	write_line(out, w, false);
}

/* Whether the file on fd begins with the n bytes of want. */
static bool begins_with(int fd, const char *want, size_t n)
{
	char *have = malloc(n ? n : 1);
	bool same = have && pread(fd, have, n, 0) == (ssize_t)n && memcmp(have, want, n) == 0;
	free(have);
	return same;
}

int csv_check_fd(int fd, const char *path, const char *header, size_t hlen, const char *then, long long *size,
		 char *err, size_t err_len)
{
	static const char first[] = "schema_version,"; /* every record's first column */
	struct stat st;
	char last = 0;

	if (fstat(fd, &st) != 0) {
		snprintf(err, err_len, "--csv %s: cannot stat: %s%s", path, strerror(errno), then);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, err_len, "--csv %s is not a regular file%s: give a new file", path, then);
		return -1;
	}
	*size = st.st_size;
	if (st.st_size == 0)
		return 0;
	if (!begins_with(fd, first, sizeof(first) - 1)) {
		snprintf(err, err_len, "--csv %s is not a CSV file of mshare-bench records%s: give a new file", path,
			 then);
		return -1;
	}
	if (header && !begins_with(fd, header, hlen)) {
		snprintf(err, err_len, "--csv %s has other columns than this run's record (another workload, or "
			 "another version of the record)%s: use a new file", path, then);
		return -1;
	}
	if (pread(fd, &last, 1, st.st_size - 1) != 1 || last != '\n') {
		snprintf(err, err_len, "--csv %s ends in a cut-off row (no newline at the end)%s: repair or move it",
			 path, then);
		return -1;
	}
	return 0;
}

int csv_check_path(const char *path, char *err, size_t err_len)
{
	struct stat st;
	long long size;
	if (lstat(path, &st) != 0)
		return 0; /* created with the row */
	/* As --out: an output is never written through a link (one planted
	 * at the name would make the run append to whatever it names). */
	if (S_ISLNK(st.st_mode)) {
		snprintf(err, err_len, "--csv %s is a symbolic link; refusing to follow it: give the file itself",
			 path);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, err_len, "--csv %s is not a regular file: give a new file", path);
		return -1;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	if (fd < 0) {
		snprintf(err, err_len, "--csv %s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	int rc = csv_check_fd(fd, path, NULL, 0, "", &size, err, err_len);
	close(fd);
	return rc;
}

int csv_strings(const struct json_writer *jw, char **header, size_t *hlen, char **row, size_t *rlen)
{
	FILE *hf = open_memstream(header, hlen);
	if (!hf)
		return -1;
	csv_write_header(hf, jw);
	if (fclose(hf) != 0)
		return -1;
	FILE *rf = open_memstream(row, rlen);
	if (!rf)
		return -1;
	csv_write_row(rf, jw);
	return fclose(rf) != 0 ? -1 : 0;
}
