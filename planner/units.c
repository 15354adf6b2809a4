/* units.c - strict parsing and human formatting of sizes and counts. */
#include <ctype.h>
#include <stdbool.h>
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

int units_parse_size_unit(const char *text, uint64_t *bytes, bool *had_unit)
{
	const char *dot, *u;
	uint64_t whole = 0, frac = 0, scale = 1, unit, r;
	char head[32];
	size_t n;

	if (!text || !text[0])
		return -1;
	dot = strchr(text, '.');
	if (!dot) {
		size_t len = strlen(text);

		if (units_parse_size(text, bytes) < 0)
			return -1;
		*had_unit = isalpha((unsigned char)text[len - 1]) || (text[0] == '0' && (text[1] == 'x' || text[1] == 'X'));
		return 0;
	}
	/* "255.5G": digits, '.', digits, then a unit (K, M, G, T, P, with an
	 * optional "iB" or "B"); the bytes must come out whole. */
	if (dot == text || !isdigit((unsigned char)dot[1]))
		return -1;
	for (const char *c = text; c < dot; c++) {
		if (!isdigit((unsigned char)*c) || __builtin_mul_overflow(whole, 10, &whole) ||
		    __builtin_add_overflow(whole, (uint64_t)(*c - '0'), &whole))
			return -1;
	}
	for (u = dot + 1; isdigit((unsigned char)*u); u++) {
		if (scale >= 1000000000000ull)
			return -1; /* more than 12 decimals */
		frac = frac * 10 + (uint64_t)(*u - '0');
		scale *= 10;
	}
	n = strlen(u);
	if (n == 0 || n >= sizeof(head))
		return -1; /* a decimal needs a unit */
	head[0] = '1';
	memcpy(head + 1, u, n + 1);
	if (units_parse_size(head, &unit) < 0 || unit < 1024)
		return -1;
	/* frac * unit / scale must be whole: unit is a power of two >= 1024,
	 * scale a power of ten; compute in 128 bits. */
	{
		unsigned __int128 f = (unsigned __int128)frac * unit;

		if (f % scale)
			return -1;
		if (__builtin_mul_overflow(whole, unit, &r) || __builtin_add_overflow(r, (uint64_t)(f / scale), &r))
			return -1;
	}
	*bytes = r;
	*had_unit = true;
	return 0;
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
