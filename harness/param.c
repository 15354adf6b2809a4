/* param.c - workload parameter parsing with errors that name the value. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "param.h"
#include "parse.h"

int param_range(const char *option, const char *text, uint64_t value, uint64_t min, uint64_t max,
		const char *unit, char *err, size_t err_len)
{
	if (value >= min && value <= max)
		return 0;
	snprintf(err, err_len, "--%s: '%s' is out of range [%" PRIu64 ", %" PRIu64 "]%s", option, text, min, max,
		 unit);
	return -1;
}

int param_size(const char *option, const char *value, uint64_t min, uint64_t max,
	       uint64_t *out, char *err, size_t err_len)
{
	char why[160];

	/* min 0: "0" is a value (it means "derive it", as --stride 0). */
	if ((min ? parse_size(value, out, why, sizeof(why)) : parse_size_or_zero(value, out, why, sizeof(why))) < 0) {
		snprintf(err, err_len, "--%s: %s", option, why);
		return -1;
	}
	return param_range(option, value, *out, min, max, " bytes", err, err_len);
}

int param_uint(const char *option, const char *value, uint64_t min, uint64_t max,
	       uint64_t *out, char *err, size_t err_len)
{
	char why[160];

	if (parse_u64(value, out, why, sizeof(why)) < 0) {
		snprintf(err, err_len, "--%s: %s", option, why);
		return -1;
	}
	return param_range(option, value, *out, min, max, "", err, err_len);
}

int param_double_open(const char *option, const char *value, double lo, double hi,
		      double *out, char *err, size_t err_len)
{
	char *end;

	errno = 0;
	*out = strtod(value, &end);
	if (end == value || *end != '\0' || errno == ERANGE || !isfinite(*out)) {
		snprintf(err, err_len, "--%s: '%s' is not a number", option, value);
		return -1;
	}
	if (!(*out > lo && *out < hi)) {
		snprintf(err, err_len, "--%s: '%s' must be greater than %g and less than %g",
			 option, value, lo, hi);
		return -1;
	}
	return 0;
}

int param_choice(const char *option, const char *value, const char *const *choices,
		 unsigned *out, char *err, size_t err_len)
{
	char list[160] = "";

	for (unsigned i = 0; choices[i]; i++) {
		if (strcmp(value, choices[i]) == 0) {
			*out = i;
			return 0;
		}
		if (i)
			strncat(list, "|", sizeof(list) - strlen(list) - 1);
		strncat(list, choices[i], sizeof(list) - strlen(list) - 1);
	}
	snprintf(err, err_len, "--%s: '%s' is not one of %s", option, value, list);
	return -1;
}
