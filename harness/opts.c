/* opts.c - getopt_long driven by a command's option table (opts.h). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "opts.h"

#define VAL_BASE 1000 /* getopt_long's value for option i: VAL_BASE + i */

static const struct opt *opt_at(const struct opt *table, int n_table, const struct opt *extra, int i)
{
	return i < n_table ? &table[i] : &extra[i - n_table];
}

static int count(const struct opt *t)
{
	int n = 0;

	while (t && t[n].name)
		n++;
	return n;
}

int opts_parse(const struct opt *table, const struct opt *extra, int argc, char **argv, opt_fn fn,
	       void *data, char *err, size_t err_len)
{
	int n_table = count(table), n = n_table + count(extra);
	struct option longopts[OPTS_MAX + 1];
	const char *seen[OPTS_MAX];
	bool given[OPTS_MAX];

	if (n > OPTS_MAX) {
		snprintf(err, err_len, "internal: %d options, at most %d", n, OPTS_MAX);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		const struct opt *o = opt_at(table, n_table, extra, i);
		longopts[i] = (struct option){ o->name, o->metavar ? required_argument : no_argument, NULL,
					       VAL_BASE + i };
		given[i] = false;
		seen[i] = NULL;
	}
	longopts[n] = (struct option){ NULL, 0, NULL, 0 };

	/* --help anywhere wins, as it did before the table. */
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return 1;

	/* "-": non-options come back in order (as value 1), so that they are
	 * refused where they stand; ":": a missing value comes back as ':'. */
	opterr = 0;
	optind = 0;
	for (;;) {
		int at = optind ? optind : 1;
		int c = getopt_long(argc, argv, "-:h", longopts, NULL);
		if (c == -1)
			break;
		const char *arg = at < argc ? argv[at] : "";
		if (c == 1) {
			snprintf(err, err_len, "unexpected argument '%s' (options start with --)", optarg);
			return -1;
		}
		if (c == 'h')
			return 1;
		if (c == ':' && optopt >= VAL_BASE) {
			snprintf(err, err_len, "option --%s needs a value", longopts[optopt - VAL_BASE].name);
			return -1;
		}
		if (c == '?' && optopt >= VAL_BASE) {
			const char *eq = strchr(arg, '=');
			snprintf(err, err_len, "option --%s takes no value (got '%s')", longopts[optopt - VAL_BASE].name,
				 eq ? eq + 1 : "");
			return -1;
		}
		if (c < VAL_BASE) {
			size_t len = strncmp(arg, "--", 2) == 0 && strchr(arg, '=') ? (size_t)(strchr(arg, '=') - arg)
										 : strlen(arg);
			if (optopt > 0 && optopt < 256 && strncmp(arg, "--", 2) != 0)
				snprintf(err, err_len, "unknown option '-%c'", optopt);
			else
				snprintf(err, err_len, "unknown option '%.*s'", (int)len, arg);
			return -2;
		}
		int i = c - VAL_BASE;
		const struct opt *o = opt_at(table, n_table, extra, i);
		/* getopt_long takes unique prefixes (--work for --workers): a
		 * spec or script must name options whole. */
		size_t nlen = strlen(o->name);
		if (strncmp(arg, "--", 2) != 0 || strncmp(arg + 2, o->name, nlen) != 0 ||
		    (arg[2 + nlen] != '\0' && arg[2 + nlen] != '=')) {
			size_t len = strchr(arg, '=') ? (size_t)(strchr(arg, '=') - arg) : strlen(arg);
			snprintf(err, err_len, "unknown option '%.*s' (did you mean --%s? give options whole)", (int)len,
				 arg, o->name);
			return -2;
		}
		const char *v = o->metavar ? optarg : NULL;
		/* "--size --workload touch": the next option is not a value. */
		if (v && arg[2 + nlen] == '\0' && strncmp(v, "--", 2) == 0) {
			snprintf(err, err_len, "option --%s needs a value", o->name);
			return -1;
		}
		/* Every option once unless repeatable: a repeat is a mistake, not an override. */
		if (given[i] && !o->repeatable) {
			if (v)
				snprintf(err, err_len, "option --%s is given twice ('%s', then '%s'); give it once", o->name,
					 seen[i], v);
			else
				snprintf(err, err_len, "option --%s is given twice; give it once", o->name);
			return -1;
		}
		given[i] = true;
		seen[i] = v;
		if (v && !*v) {
			snprintf(err, err_len, "option --%s has an empty value", o->name);
			return -1;
		}
		int rc = fn(data, i, o, v, err, err_len);
		if (rc)
			return rc;
	}
	/* getopt_long ends at "--"; nothing here takes arguments after it. */
	if (optind < argc || (optind > 1 && optind <= argc && strcmp(argv[optind - 1], "--") == 0)) {
		snprintf(err, err_len, "unexpected argument '--' (options start with --, and none is empty)");
		return -1;
	}
	return 0;
}

void opts_help(FILE *out, const struct opt *table, int width)
{
	for (const struct opt *o = table; o->name; o++) {
		int col = fprintf(out, "  --%s%s%s", o->name, o->metavar ? " " : "", o->metavar ? o->metavar : "");
		const char *h = o->help;
		fprintf(out, "%*s", col < width ? width - col : 2, "");
		for (;;) {
			const char *nl = strchr(h, '\n');
			fprintf(out, "%.*s\n", nl ? (int)(nl - h) : (int)strlen(h), h);
			if (!nl || !nl[1])
				break;
			h = nl + 1;
			fprintf(out, "%*s", width, "");
		}
	}
}
