/* units.c - strict parsing and human formatting of sizes and counts. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

/* Digits only: strtoull alone would accept "-1", " 7" and "0x10". */
static int parse_digits(const char *text, const char **end, uint64_t *value)
{
	const char *p = text;
	uint64_t v = 0;

	if (!isdigit((unsigned char)*p))
		return -1;
	for (; isdigit((unsigned char)*p); p++) {
		if (__builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, (uint64_t)(*p - '0'), &v))
			return -1;
	}
	*end = p;
	*value = v;
	return 0;
}

int units_parse_size(const char *text, uint64_t *bytes)
{
	const char *p;
	uint64_t v, mult = 1;

	if (!text || parse_digits(text, &p, &v) < 0)
		return -1;
	switch (toupper((unsigned char)*p)) {
	case '\0':
		break;
	case 'K': mult = KIB; p++; break;
	case 'M': mult = MIB; p++; break;
	case 'G': mult = GIB; p++; break;
	case 'T': mult = TIB; p++; break;
	case 'P': mult = 1024 * TIB; p++; break;
	case 'B': break;
	default:
		return -1;
	}
	if (mult > 1 && strcasecmp(p, "iB") == 0)
		p += 2;
	else if (strcasecmp(p, "B") == 0)
		p += 1;
	if (*p != '\0')
		return -1;
	if (__builtin_mul_overflow(v, mult, bytes))
		return -1;
	return 0;
}

int units_parse_addr(const char *text, uint64_t *addr)
{
	if (text && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
		const char *p = text + 2;
		uint64_t v = 0;

		if (!isxdigit((unsigned char)*p))
			return -1;
		for (; isxdigit((unsigned char)*p); p++) {
			unsigned d = isdigit((unsigned char)*p) ? (unsigned)(*p - '0')
				: (unsigned)(toupper((unsigned char)*p) - 'A' + 10);
			if (v >> 60)
				return -1;
			v = v << 4 | d;
		}
		if (*p != '\0')
			return -1;
		*addr = v;
		return 0;
	}
	return units_parse_size(text, addr);
}

int units_parse_count(const char *text, uint64_t *count)
{
	const char *p;
	uint64_t v;

	if (!text || parse_digits(text, &p, &v) < 0 || *p != '\0' || v == 0)
		return -1;
	*count = v;
	return 0;
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
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)bytes;
	unsigned u = 0;

	while (v >= 1024.0 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
		v /= 1024.0;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%" PRIu64 " B", bytes);
	else if (v == (double)(uint64_t)v)
		snprintf(buf, len, "%.0f %s", v, unit[u]);
	else
		snprintf(buf, len, "%.1f %s", v, unit[u]);
	return buf;
}
