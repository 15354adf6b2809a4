/* record_json.h - reading run records for `plan --calibrate`.
 *
 * The parsing is Debian's libjansson (libjansson-dev), a well-kept JSON
 * library; this file only adds lookups by dotted path
 * ("results.pagetables.vmpte_sum_bytes"), which is how the run record
 * schema names its keys. Integers keep their exact 64-bit value.
 */
#ifndef MSHARE_BENCH_PLANNER_RECORD_JSON_H
#define MSHARE_BENCH_PLANNER_RECORD_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* Read and parse a file; NULL on error with "PATH: line L column C: what"
 * (or the system's reason) in err. Free with json_decref(). */
json_t *jr_load_file(const char *path, char *err, size_t err_len);
/* Parse text (the tests); NULL on error as above. */
json_t *jr_load_text(const char *text, char *err, size_t err_len);

/* Member of an object by dotted path; NULL if any step is missing. */
const json_t *jr_get(const json_t *root, const char *path);
/* Typed lookups: true and *out set when the path holds that type. */
bool jr_get_number(const json_t *root, const char *path, double *out);
/* A non-negative integer, or a string holding one in decimal or 0x hex
 * (addresses are written "0x20000000000"). */
bool jr_get_u64(const json_t *root, const char *path, uint64_t *out);
const char *jr_get_string(const json_t *root, const char *path);
bool jr_get_bool(const json_t *root, const char *path, bool *out);

#endif
