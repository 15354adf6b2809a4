/* csv.h - a run record as one CSV row (RFC 4180 quoting), and the check
 * that a --csv file can take one more.
 *
 * The columns are the flat fields a json_writer collected, in order, so
 * the CSV and the JSON of one run always agree.
 */
#ifndef MSHARE_BENCH_CSV_H
#define MSHARE_BENCH_CSV_H

#include <stdio.h>

#include "json.h"

/* Write one field, quoted if it holds a comma, quote, CR or LF. */
void csv_write_field(FILE *out, const char *s);
void csv_write_header(FILE *out, const struct json_writer *w);
void csv_write_row(FILE *out, const struct json_writer *w);
/* The header and the row as two malloc()ed strings (the caller frees
 * them), or -1 (out of memory). */
int csv_strings(const struct json_writer *jw, char **header, size_t *hlen, char **row, size_t *rlen);

/* Whether the --csv file open on fd (read access) can take one more row:
 * a regular file, empty (the row then goes with the header) or beginning
 * with header (hlen bytes, with its newline) and ending in a newline (no
 * cut-off row). header NULL (before the run, when the record's columns are
 * not known yet): beginning like any CSV of records ("schema_version,").
 * 0 (*size: the file's size), or -1 with a message naming path; then is
 * added to the message after the problem (e.g. "; no row appended"). */
int csv_check_fd(int fd, const char *path, const char *header, size_t hlen, const char *then, long long *size,
		 char *err, size_t err_len);
/* The same for a file by name; a file that does not exist is fine. */
int csv_check_path(const char *path, char *err, size_t err_len);

#endif
