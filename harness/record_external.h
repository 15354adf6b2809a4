/* record_external.h - the record of a point the harness did not drive
 * itself (a PostgreSQL point), written by the harness's own record writer
 * (record_external.c; `mshare-bench record`). */
#ifndef MSHARE_BENCH_RECORD_EXTERNAL_H
#define MSHARE_BENCH_RECORD_EXTERNAL_H

#include <signal.h>
#include <stddef.h>

/* The keys every record's config holds (a harness run's: record_schema.c's
 * write_config), in that order; NULL-terminated. */
extern const char *const record_config_keys[];

/* Write the record made of frame_path (what `mshare-bench environment
 * --json` printed where the point ran: schema_version, tool, environment)
 * and body_path ("-": standard input; an object with config and results,
 * and preflight if the point has one) to out (atomically, never over an
 * existing file) and, if csv is not NULL, one row appended to csv, as
 * record_files_write does for a harness run. Returns RECORD_WRITTEN,
 * RECORD_PARTLY, RECORD_NOTHING or RECORD_INTERRUPTED (run.h), or
 * RECORD_REFUSED, with nothing written, when the frame or body is not one
 * this writer takes (over 64 MiB included), --out exists or --csv cannot
 * take the row; err names the file, the key and what is wrong. */
enum { RECORD_REFUSED = -3 };
int record_external_write(const char *frame_path, const char *body_path, const char *out, const char *csv,
			  volatile sig_atomic_t *stop, char *err, size_t err_len);

#endif
