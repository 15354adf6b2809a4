/* opts.h - one option table per command: it feeds getopt_long and --help.
 *
 * A command (run, plan, selftest-bench) describes its options once, in a
 * table of struct opt; opts_parse() builds getopt_long's long options from
 * it and opts_help() prints the --help lines from it, so the parser and the
 * help text cannot disagree. Both "--x=v" and "--x v" are accepted; a
 * missing or empty value, a value given to a flag, an abbreviated name, a
 * repeat of an option that is not repeatable, and any argument that is not
 * an option are refused with a message naming the option.
 */
#ifndef MSHARE_BENCH_OPTS_H
#define MSHARE_BENCH_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define OPTS_MAX 64

struct opt {
	const char *name;     /* long name without "--"; NULL ends a table */
	const char *metavar;  /* "SIZE", "N"...; NULL: a flag, no value */
	const char *help;     /* lines separated by '\n' */
	bool repeatable;      /* may be given more than once (else: a mistake) */
};

/* Called for each option in command-line order: index into the table (or
 * n_table + k for extra[k]), the value (NULL for a flag). 0 to go on; non-zero
 * stops the parse and is returned (a message in err, if the callback wrote one). */
typedef int (*opt_fn)(void *data, int index, const struct opt *o, const char *value, char *err,
		      size_t err_len);

/* Parse argv[1..] (argv[0] is the command's name) against table and, when
 * not NULL, extra (a second table, e.g. a workload's own options).
 * Returns 0 when all options were handled, 1 when -h or --help was given
 * (nothing else handled; the caller prints its help), -1 on bad input
 * (message in err naming the option or value), or what fn returned. */
int opts_parse(const struct opt *table, const struct opt *extra, int argc, char **argv, opt_fn fn,
	       void *data, char *err, size_t err_len);

/* Print "  --name METAVAR   help" lines, the help starting at column width. */
void opts_help(FILE *out, const struct opt *table, int width);

#endif
