/* param.h - parsing of workload parameter values (--theta 0.99,
 * --block-size 8K, --distribution zipf).
 *
 * Each parser names the option and the bad value in err[] and returns -1;
 * 0 on success. The harness parses a workload's typed params with them
 * (workload_prepare()); a workload's prepare() checks what depends on
 * other params with param_range().
 */
#ifndef MSHARE_BENCH_PARAM_H
#define MSHARE_BENCH_PARAM_H

#include <stddef.h>
#include <stdint.h>

/* A size with K/M/G/T suffix, within [min, max]. */
int param_size(const char *option, const char *value, uint64_t min, uint64_t max,
	       uint64_t *out, char *err, size_t err_len);
/* value (given as text) within [min, max]; unit: " bytes" or "". */
int param_range(const char *option, const char *text, uint64_t value, uint64_t min, uint64_t max,
		const char *unit, char *err, size_t err_len);
/* A plain unsigned integer within [min, max]. */
int param_uint(const char *option, const char *value, uint64_t min, uint64_t max,
	       uint64_t *out, char *err, size_t err_len);
/* A real number strictly between lo and hi. */
int param_double_open(const char *option, const char *value, double lo, double hi,
		      double *out, char *err, size_t err_len);
/* One of the NULL-terminated choices; *out is its index. */
int param_choice(const char *option, const char *value, const char *const *choices,
		 unsigned *out, char *err, size_t err_len);

#endif
