/* units.c - strict parsing and human formatting of sizes and counts. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "parse.h"
#include "units.h"

uint64_t units_sat_add(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

uint64_t units_sat_mul(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

/* Sizes, addresses and counts use the harness's parsers (harness/parse.c):
 * one grammar for `run` and `plan`. */
int units_parse_size(const char *text, uint64_t *bytes)
{
	char err[256];

	return text && parse_size_or_zero(text, bytes, err, sizeof(err)) == 0 ? 0 : -1;
}

int units_parse_addr(const char *text, uint64_t *addr)
{
	char err[256];

	if (!text)
		return -1;
	/* An offset or address may be zero ("0 2M" in a touch map). */
	if (text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
		return parse_addr(text, addr, err, sizeof(err)) == 0 ? 0 : -1;
	return parse_size_or_zero(text, addr, err, sizeof(err)) == 0 ? 0 : -1;
}

int units_parse_count(const char *text, uint64_t *count)
{
	char err[256];

	return text && parse_count(text, count, err, sizeof(err)) == 0 ? 0 : -1;
}

int units_parse_fraction(const char *text, double *fraction)
{
	char *end;
	double f;

	if (!text || !(isdigit((unsigned char)text[0]) || text[0] == '.'))
		return -1;
	errno = 0;
	f = strtod(text, &end);
	if (errno || *end != '\0' || !(f > 0.0 && f <= 1.0))
		return -1;
	*fraction = f;
	return 0;
}

const char *units_format_bytes(uint64_t bytes, char *buf, size_t len)
{
	return format_bytes(bytes, buf, len);
}
