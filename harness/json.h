/* json.h - a small streaming JSON writer for run records.
 *
 * Writes pretty-printed JSON to a FILE and, at the same time, keeps every
 * scalar as a flat "dotted.key" -> text pair so that the same record can be
 * written as one CSV row (see csv.h) without a second code path.
 * Errors (nesting too deep, out of memory) are sticky: check json_failed().
 */
#ifndef MSHARE_BENCH_JSON_H
#define MSHARE_BENCH_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 16

struct json_field {
	char *key;   /* "results.pagetables.vmpte_sum_bytes" */
	char *value; /* the scalar as text, strings unquoted; "" for null */
};

struct json_writer {
	FILE *out;
	int depth;
	bool first[JSON_MAX_DEPTH];    /* nothing written yet at this level */
	bool in_array[JSON_MAX_DEPTH];
	unsigned index[JSON_MAX_DEPTH]; /* element count inside arrays */
	size_t path_len[JSON_MAX_DEPTH];
	char path[512];                 /* dotted path of the current object */
	struct json_field *fields;
	size_t nfields, cap;
	bool failed;
	/* While set, every number is written as null (the figures of a run
	 * that measured nothing); strings and booleans are written as given. */
	bool null_numbers;
};

void json_init(struct json_writer *w, FILE *out);
/* Frees the flat fields; does not close out. */
void json_free(struct json_writer *w);
bool json_failed(const struct json_writer *w);

/* key is NULL for the top-level value and for elements of arrays. */
void json_begin_object(struct json_writer *w, const char *key);
void json_end_object(struct json_writer *w);
void json_begin_array(struct json_writer *w, const char *key);
void json_end_array(struct json_writer *w);

void json_key_u64(struct json_writer *w, const char *key, uint64_t v);
void json_key_i64(struct json_writer *w, const char *key, int64_t v);
/* NaN and infinities are written as null (here and in the two below). */
void json_key_double(struct json_writer *w, const char *key, double v);
/* As json_key_double, but always a real: 3.0 is written "3.0", not "3"
 * (a value read from JSON keeps its type when written again). */
void json_key_real(struct json_writer *w, const char *key, double v);
/* v rounded to at most `digits` significant digits, as printf's %.*g. */
void json_key_double_digits(struct json_writer *w, const char *key, double v, int digits);
/* v with exactly `decimals` digits after the point, as printf's %.*f
 * (0: an integer, for byte counts held in a double). */
void json_key_fixed(struct json_writer *w, const char *key, double v, int decimals);
/* NULL is written as null. */
void json_key_string(struct json_writer *w, const char *key, const char *s);
/* v as the string "0x..." (an address). */
void json_key_hex(struct json_writer *w, const char *key, uint64_t v);
void json_key_bool(struct json_writer *w, const char *key, bool v);
void json_key_null(struct json_writer *w, const char *key);

#endif
