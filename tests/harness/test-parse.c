/* Unit tests of size, count, duration and address parsing. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "../lib/tap.h"

static void size_ok(const char *s, uint64_t want)
{
	char err[256] = "";
	uint64_t v = 0;
	int rc = parse_size(s, &v, err, sizeof(err));
	TAP_OK(rc == 0 && v == want, "size '%s' = %llu (got %llu %s)", s, (unsigned long long)want,
	       (unsigned long long)v, err);
}

static void size_bad(const char *s, const char *why)
{
	char err[256] = "";
	uint64_t v = 0;
	int rc = parse_size(s, &v, err, sizeof(err));
	TAP_OK(rc != 0 && strstr(err, s) != NULL, "size '%s' rejected (%s): \"%s\"", s, why, err);
}

/* One case of a corpus: true when the code agrees with the line's two
 * columns; otherwise what it gave, in got[]. */
typedef bool corpus_case(const char *left, const char *right, char *got, size_t got_len);

/* Every "LEFT<TAB>RIGHT" line of tests/corpus/NAME (# comments skipped)
 * through check(); one TAP line for the file, a comment per disagreement. */
static void corpus(const char *name, int at_least, const char *what, corpus_case *check)
{
	char path[128], line[256], got[300];
	int cases = 0, agree = 0;

	snprintf(path, sizeof(path), "tests/corpus/%s", name);
	FILE *f = fopen(path, "r");
	TAP_OK(f != NULL, "%s opens (run from the top directory)", path);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		char *tab = strrchr(line, '\t');
		if (line[0] == '#' || !tab)
			continue;
		*tab = '\0';
		bool good = check(line, tab + 1, got, sizeof(got));
		cases++;
		agree += good;
		if (!good)
			printf("# %s: '%s' should be '%s', %s gives %s\n", name, line, tab + 1, what, got);
	}
	fclose(f);
	TAP_OK(cases > at_least && agree == cases, "%s agrees with %s on %d of %d cases", what, path, agree, cases);
}

/* sizes.txt: TEXT<TAB>BYTES|bad, the suite's size grammar ("" is the empty text). */
static bool size_case(const char *left, const char *want, char *got, size_t got_len)
{
	const char *text = strcmp(left, "\"\"") == 0 ? "" : left;
	char err[256] = "";
	uint64_t v = 0;
	int rc = parse_size_or_zero(text, &v, err, sizeof(err));
	snprintf(got, got_len, "rc %d value %llu '%s'", rc, (unsigned long long)v, err);
	return strcmp(want, "bad") == 0 ? rc != 0 && strstr(err, text) != NULL : rc == 0 && v == strtoull(want, NULL, 10);
}

/* bytes.txt: BYTES<TAB>TEXT, the suite's rendering of a byte count. */
static bool bytes_case(const char *left, const char *want, char *got, size_t got_len)
{
	format_bytes(strtoull(left, NULL, 10), got, got_len);
	return strcmp(got, want) == 0;
}

static void dir_ok(const char *path, const char *want)
{
	char dir[64];
	path_dir(path, dir, sizeof(dir));
	TAP_OK(strcmp(dir, want) == 0, "path_dir(\"%s\") = \"%s\" (got \"%s\")", path, want, dir);
}

int main(void)
{
	dir_ok("a/b.json", "a");
	dir_ok("/b.json", "/");
	dir_ok("b.json", ".");
	dir_ok("/x/y/z.csv", "/x/y");

	corpus("sizes.txt", 40, "parse_size_or_zero", size_case);
	size_ok("4096", 4096);
	size_ok("4K", 4096);
	size_ok("4k", 4096);
	size_ok("256M", 256ull << 20);
	size_ok("1G", 1ull << 30);
	size_ok("300G", 300ull << 30);
	size_ok("2T", 2ull << 40);
	size_ok("64MiB", 64ull << 20);
	size_ok("1GB", 1ull << 30);
	size_ok("0x1000", 4096);
	size_bad("0", "zero");
	size_bad("0G", "zero");
	size_bad("", "empty");
	size_bad("abc", "garbage");
	size_bad("12Q", "unknown unit");
	size_bad("1G2", "trailing characters");
	size_bad("-1G", "negative");
	size_bad(" 1G", "leading space");
	size_bad("99999999999999999999", "overflow");
	size_bad("20000000T", "overflow after the unit");

	char err[256];
	uint64_t v;
	TAP_OK(parse_u64("10000", &v, err, sizeof(err)) == 0 && v == 10000, "count 10000");
	TAP_OK(parse_u64("10k", &v, err, sizeof(err)) != 0 && strstr(err, "10k"), "count '10k' rejected: %s", err);
	TAP_OK(parse_u64("", &v, err, sizeof(err)) != 0, "empty count rejected");
	TAP_OK(parse_count("10000", &v, err, sizeof(err)) == 0 && v == 10000, "count 10000");
	TAP_OK(parse_count("0x10", &v, err, sizeof(err)) != 0 && strstr(err, "0x10"), "count '0x10' rejected: %s", err);
	TAP_OK(parse_count("0", &v, err, sizeof(err)) != 0 && strstr(err, "'0'"), "count '0' rejected: %s", err);
	TAP_OK(parse_count("99999999999999999999", &v, err, sizeof(err)) != 0, "count overflow rejected");

	TAP_OK(parse_duration_ns("10s", &v, err, sizeof(err)) == 0 && v == 10000000000ull, "duration 10s");
	TAP_OK(parse_duration_ns("500ms", &v, err, sizeof(err)) == 0 && v == 500000000ull, "duration 500ms");
	TAP_OK(parse_duration_ns("2m", &v, err, sizeof(err)) == 0 && v == 120000000000ull, "duration 2m");
	TAP_OK(parse_duration_ns("1.5", &v, err, sizeof(err)) == 0 && v == 1500000000ull, "duration 1.5 (seconds)");
	TAP_OK(parse_duration_ns("10x", &v, err, sizeof(err)) != 0 && strstr(err, "10x"), "duration '10x' rejected: %s", err);
	TAP_OK(parse_duration_ns("0s", &v, err, sizeof(err)) != 0 && strstr(err, "0s"), "duration '0s' rejected: %s", err);
	TAP_OK(parse_duration_ns("-1s", &v, err, sizeof(err)) != 0, "negative duration rejected");

	TAP_OK(parse_addr("0x20000000000", &v, err, sizeof(err)) == 0 && v == 0x20000000000ull, "address 0x20000000000");
	TAP_OK(parse_addr("2T", &v, err, sizeof(err)) == 0 && v == 0x20000000000ull, "address 2T");
	TAP_OK(parse_addr("0xzz", &v, err, sizeof(err)) != 0 && strstr(err, "0xzz"), "address '0xzz' rejected: %s", err);

	corpus("bytes.txt", 30, "format_bytes", bytes_case);
	char buf[8];
	TAP_OK(strcmp(format_bytes(1536ull << 20, buf, sizeof(buf)), "1.5 GiB") == 0, "format 1.5 GiB in 8 bytes");
	TAP_OK(strcmp(format_bytes(UINT64_MAX, buf, 4), "16 ") == 0, "a short buffer is cut, not overrun");
	return tap_done();
}
