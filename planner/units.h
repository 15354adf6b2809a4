/* units.h - sizes, addresses and counts as the planner reads and prints them.
 *
 * Sizes are binary: 4K = 4096, 256M = 256 MiB, 300G = 300 GiB, 1T = 1 TiB,
 * as a DBA writes them on the command line. Parsing is strict (no trailing
 * junk, no overflow, no negative numbers) so a typo never becomes a plan.
 */
#ifndef MSHARE_BENCH_PLANNER_UNITS_H
#define MSHARE_BENCH_PLANNER_UNITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KIB (1ull << 10)
#define MIB (1ull << 20)
#define GIB (1ull << 30)
#define TIB (1ull << 40)

/* "4096", "4K", "256M", "300G", "1T", "0x1000" (suffix case-insensitive,
 * optional trailing "iB" or "B"; zero accepted): harness/parse.c's
 * parse_size_or_zero, the suite's one size grammar. 0 on success; -1 if the
 * text is not a size. */
int units_parse_size(const char *text, uint64_t *bytes);

/* The planner's sizes (--sga, --ram, --private): as above, and also a
 * decimal with a unit ("255.5G", "1.5T") whose bytes are whole. *had_unit
 * is false for a plain number (bytes: the plan says so). 0 or -1. */
int units_parse_size_unit(const char *text, uint64_t *bytes, bool *had_unit);

/* A size as above, or a hexadecimal address "0x20000000000". */
int units_parse_addr(const char *text, uint64_t *addr);

/* A whole decimal number >= 1. */
int units_parse_count(const char *text, uint64_t *count);

/* A decimal fraction 0 < f <= 1 ("0.25", "1"). */
int units_parse_fraction(const char *text, double *fraction);

/* "600 MiB", "878.9 GiB", "4 KiB", "0 B": harness/parse.c's format_bytes,
 * the suite's one rendering of a byte count. */
const char *units_format_bytes(uint64_t bytes, char *buf, size_t len);

/* Saturating arithmetic: a plan that overflows 64 bits certainly does not
 * fit, and saturating keeps that verdict right without special cases. */
uint64_t units_sat_add(uint64_t a, uint64_t b);
uint64_t units_sat_mul(uint64_t a, uint64_t b);

static inline uint64_t units_align_down(uint64_t x, uint64_t a)
{
	return x - x % a;
}

/* Saturates at the largest multiple of a that fits in 64 bits. */
static inline uint64_t units_align_up(uint64_t x, uint64_t a)
{
	uint64_t r = x % a;

	if (r == 0)
		return x;
	if (x > UINT64_MAX - (a - r))
		return units_align_down(UINT64_MAX, a);
	return x + (a - r);
}

#endif
