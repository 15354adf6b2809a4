/* json_read.h - a small JSON reader for run records.
 *
 * Parses a whole document into a tree and looks values up by dotted path
 * ("results.pagetables.vmpte_sum_bytes"), which is how the run record
 * schema names its keys. Integers keep their exact 64-bit value (page-table
 * byte counts exceed a double's 53 bits only in theory, but exact is free).
 */
#ifndef MSHARE_BENCH_PLANNER_JSON_READ_H
#define MSHARE_BENCH_PLANNER_JSON_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum jr_type { JR_NULL, JR_BOOL, JR_NUMBER, JR_STRING, JR_ARRAY, JR_OBJECT };

struct jr_value {
	enum jr_type type;
	char *key;               /* member name when inside an object */
	char *string;            /* JR_STRING */
	double number;           /* JR_NUMBER */
	bool is_integer;         /* JR_NUMBER written as an integer that fits */
	int64_t integer;
	bool boolean;            /* JR_BOOL */
	struct jr_value *child;  /* first member / element */
	struct jr_value *next;   /* next sibling */
};

/* Parse text; NULL on error with "line L column C: what" in err. */
struct jr_value *jr_parse(const char *text, char *err, size_t err_len);
/* Read and parse a file; NULL on error with the reason in err. */
struct jr_value *jr_parse_file(const char *path, char *err, size_t err_len);
void jr_free(struct jr_value *v);

/* Member of an object by dotted path; NULL if any step is missing. */
const struct jr_value *jr_get(const struct jr_value *root, const char *path);
/* Typed lookups: true and *out set when the path holds that type. A number
 * also reads as a string of digits "0x..." for addresses, see jr_get_u64. */
bool jr_get_number(const struct jr_value *root, const char *path, double *out);
/* A non-negative integer, or a string holding one in decimal or 0x hex. */
bool jr_get_u64(const struct jr_value *root, const char *path, uint64_t *out);
const char *jr_get_string(const struct jr_value *root, const char *path);
bool jr_get_bool(const struct jr_value *root, const char *path, bool *out);

#endif
