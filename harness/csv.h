/* csv.h - a run record as one CSV row (RFC 4180 quoting).
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

#endif
