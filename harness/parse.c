/* parse.c - strict parsers for sizes, counts, durations and addresses. */
#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "parse.h"

/* Digits only (decimal, or hex after 0x); no sign, no spaces. */
static int parse_digits(const char *s, const char **end, uint64_t *out)
{
	int base = 10;
	const char *p = s;

	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	}
	if (!isxdigit((unsigned char)*p) || (base == 10 && !isdigit((unsigned char)*p)))
		return -1;
	errno = 0;
	char *e;
	unsigned long long v = strtoull(p, &e, base);
	if (errno == ERANGE)
		return -2;
	*end = e;
	*out = v;
	return 0;
}

int parse_u64(const char *s, uint64_t *out, char *err, size_t err_len)
{
	const char *end;
	int rc = parse_digits(s, &end, out);

	if (rc == -2) {
		snprintf(err, err_len, "number '%s' is too large", s);
		return -1;
	}
	if (rc < 0 || *end != '\0') {
		snprintf(err, err_len, "'%s' is not a non-negative integer", s);
		return -1;
	}
	return 0;
}

/* The one size grammar of the suite (the planner's units_parse_size and
 * bench/lib/units.py follow it; tests/corpus/sizes.txt holds both to it):
 *   DIGITS [K|M|G|T|P [iB|B]] | DIGITS B | 0x HEXDIGITS
 * units binary and case-insensitive; no sign, space, fraction or 64-bit
 * overflow. */
static int parse_size_any(const char *s, bool allow_zero, uint64_t *out, char *err, size_t err_len)
{
	const char *end;
	uint64_t v;
	int rc = parse_digits(s, &end, &v);
	bool hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');

	if (rc == -2) {
		snprintf(err, err_len, "size '%s' is too large", s);
		return -1;
	}
	if (rc < 0) {
		snprintf(err, err_len, "size '%s' is not a number with an optional K/M/G/T suffix", s);
		return -1;
	}
	unsigned shift = 0;
	if (*end && hex) {
		snprintf(err, err_len, "size '%s' has trailing characters '%s' (a hex size takes no unit)", s, end);
		return -1;
	}
	if (*end) {
		switch (toupper((unsigned char)*end)) {
		case 'K': shift = 10; break;
		case 'M': shift = 20; break;
		case 'G': shift = 30; break;
		case 'T': shift = 40; break;
		case 'P': shift = 50; break;
		case 'B': shift = 0; end--; break; /* plain bytes: "4096B" */
		default:
			snprintf(err, err_len, "size '%s' has an unknown unit (use K, M, G, T or P)", s);
			return -1;
		}
		end++;
		if (shift && (strcasecmp(end, "iB") == 0 || strcasecmp(end, "B") == 0))
			end += strlen(end);
		else if (!shift && toupper((unsigned char)*end) == 'B')
			end++;
		if (*end) {
			snprintf(err, err_len, "size '%s' has trailing characters '%s'", s, end);
			return -1;
		}
	}
	if (v == 0 && !allow_zero) {
		snprintf(err, err_len, "size '%s' is zero", s);
		return -1;
	}
	if (shift && v > (UINT64_MAX >> shift)) {
		snprintf(err, err_len, "size '%s' is too large", s);
		return -1;
	}
	*out = v << shift;
	return 0;
}

int parse_size(const char *s, uint64_t *out, char *err, size_t err_len)
{
	return parse_size_any(s, false, out, err, err_len);
}

int parse_size_or_zero(const char *s, uint64_t *out, char *err, size_t err_len)
{
	return parse_size_any(s, true, out, err, err_len);
}

int parse_count(const char *s, uint64_t *out, char *err, size_t err_len)
{
	const char *p = s;
	uint64_t v = 0;

	if (!isdigit((unsigned char)*p)) {
		snprintf(err, err_len, "'%s' is not a whole number", s);
		return -1;
	}
	for (; isdigit((unsigned char)*p); p++) {
		if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, (uint64_t)(*p - '0'), &v)) {
			snprintf(err, err_len, "number '%s' is too large", s);
			return -1;
		}
	}
	if (*p || v == 0) {
		snprintf(err, err_len, "'%s' is not a whole number of 1 or more", s);
		return -1;
	}
	*out = v;
	return 0;
}

int parse_duration_ns(const char *s, uint64_t *out, char *err, size_t err_len)
{
	char *end;
	double v;

	if (!isdigit((unsigned char)s[0]) && s[0] != '.') {
		snprintf(err, err_len, "duration '%s' is not a number with an optional unit (ms, s, m, h)", s);
		return -1;
	}
	errno = 0;
	v = strtod(s, &end);
	double mult = 1e9;
	if (*end) {
		if (strcmp(end, "ns") == 0) mult = 1;
		else if (strcmp(end, "us") == 0) mult = 1e3;
		else if (strcmp(end, "ms") == 0) mult = 1e6;
		else if (strcmp(end, "s") == 0) mult = 1e9;
		else if (strcmp(end, "m") == 0 || strcmp(end, "min") == 0) mult = 60e9;
		else if (strcmp(end, "h") == 0) mult = 3600e9;
		else {
			snprintf(err, err_len, "duration '%s' has an unknown unit '%s' (use ns, us, ms, s, m, h)", s, end);
			return -1;
		}
	}
	if (errno == ERANGE || !(v * mult < 1.8e19)) {
		snprintf(err, err_len, "duration '%s' is too large", s);
		return -1;
	}
	if (v * mult < 1) {
		snprintf(err, err_len, "duration '%s' is zero", s);
		return -1;
	}
	*out = (uint64_t)(v * mult);
	return 0;
}

int parse_addr(const char *s, uint64_t *out, char *err, size_t err_len)
{
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return parse_u64(s, out, err, err_len) ? (snprintf(err, err_len, "address '%s' is not a hex number", s), -1) : 0;
	if (parse_size(s, out, err, err_len)) {
		snprintf(err, err_len, "address '%s' is not a hex number (0x...) or a size such as 2T", s);
		return -1;
	}
	return 0;
}

const char *format_bytes(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)bytes;
	unsigned u = 0;

	while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
	else
		snprintf(buf, len, "%.4g %s", v, units[u]);
	return buf;
}

void path_dir(const char *path, char *dir, size_t len)
{
	snprintf(dir, len, "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash == dir)
		dir[1] = '\0';
	else if (slash)
		*slash = '\0';
	else
		snprintf(dir, len, ".");
}
