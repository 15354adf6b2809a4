/* parse.h - strict parsing of command-line numbers, sizes, durations.
 *
 * Every parser rejects garbage, trailing characters, overflow and (where
 * it matters) zero, and writes a message naming the bad value into err[].
 */
#ifndef MSHARE_BENCH_PARSE_H
#define MSHARE_BENCH_PARSE_H

#include <stddef.h>
#include <stdint.h>

/* "4096", "4K", "256M", "1G", "300G", "2T", "0x1000" (binary units; an
 * optional trailing "B" or "iB" is accepted; a hex size takes no unit).
 * Zero is rejected. The suite's one size grammar: the planner calls it,
 * bench/lib/units.py mirrors it, tests/corpus/sizes.txt checks both. */
int parse_size(const char *s, uint64_t *out, char *err, size_t err_len);
/* The same, zero accepted. */
int parse_size_or_zero(const char *s, uint64_t *out, char *err, size_t err_len);
/* Decimal whole number >= 1 (no hex, no unit): counts of workers, ops. */
int parse_count(const char *s, uint64_t *out, char *err, size_t err_len);
/* Unsigned decimal integer (or 0x hex), no suffix. */
int parse_u64(const char *s, uint64_t *out, char *err, size_t err_len);
/* "10s", "500ms", "2m", "1h", "250us", or a plain number of seconds. */
int parse_duration_ns(const char *s, uint64_t *out, char *err, size_t err_len);
/* Virtual address: "0x20000000000" or a size such as "2T". */
int parse_addr(const char *s, uint64_t *out, char *err, size_t err_len);
/* The suite's one human form of a byte count, into buf: below 1 KiB the
 * exact count ("100 B"); above, in the largest binary unit (KiB .. EiB)
 * that leaves 1 or more, to 4 significant digits without trailing zeros
 * ("4 KiB", "1.5 GiB", "878.9 GiB", "1.172 MiB"; 1048575 B is "1024 KiB").
 * The planner prints through it too (units_format_bytes); bench/lib/units.py
 * format_bytes is the Python copy, tests/corpus/bytes.txt holds both to it. */
const char *format_bytes(uint64_t bytes, char *buf, size_t len);
/* The directory part of a path into dir: "a/b" -> "a", "/b" -> "/", "b" -> ".". */
void path_dir(const char *path, char *dir, size_t len);

#endif
