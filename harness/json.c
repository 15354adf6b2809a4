/* json.c - streaming JSON writer with a flat view for CSV. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

void json_init(struct json_writer *w, FILE *out)
{
	memset(w, 0, sizeof(*w));
	w->out = out;
	w->depth = -1;
}

void json_free(struct json_writer *w)
{
	for (size_t i = 0; i < w->nfields; i++) {
		free(w->fields[i].key);
		free(w->fields[i].value);
	}
	free(w->fields);
	w->fields = NULL;
	w->nfields = w->cap = 0;
}

bool json_failed(const struct json_writer *w)
{
	return w->failed;
}

/* s as a JSON string literal, with its quotes. */
static void write_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", out); break;
		case '\\': fputs("\\\\", out); break;
		case '\n': fputs("\\n", out); break;
		case '\r': fputs("\\r", out); break;
		case '\t': fputs("\\t", out); break;
		default:
			if (*p < 0x20)
				fprintf(out, "\\u%04x", *p);
			else
				fputc(*p, out);
		}
	}
	fputc('"', out);
}

static void indent(struct json_writer *w)
{
	fputc('\n', w->out);
	for (int i = 0; i <= w->depth; i++)
		fputs("  ", w->out);
}

/* Separator, indentation and "key": for the next value. Builds the
 * value's dotted name into name[] (for the flat view). */
static void value_prefix(struct json_writer *w, const char *key, char *name, size_t name_len)
{
	name[0] = '\0';
	if (w->depth < 0) {
		return; /* top-level value */
	}
	if (!w->first[w->depth])
		fputc(',', w->out);
	w->first[w->depth] = false;
	indent(w);
	char elem[24];
	const char *leaf = key;
	if (w->in_array[w->depth]) {
		snprintf(elem, sizeof(elem), "%u", w->index[w->depth]++);
		leaf = elem;
	} else {
		write_string(w->out, key ? key : "");
		fputs(": ", w->out);
	}
	if (w->path[0])
		snprintf(name, name_len, "%s.%s", w->path, leaf ? leaf : "");
	else
		snprintf(name, name_len, "%s", leaf ? leaf : "");
}

static void add_field(struct json_writer *w, const char *name, const char *value)
{
	if (!name[0])
		return;
	if (w->nfields == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 64;
		struct json_field *f = realloc(w->fields, cap * sizeof(*f));
		if (!f) {
			w->failed = true;
			return;
		}
		w->fields = f;
		w->cap = cap;
	}
	char *k = strdup(name), *v = strdup(value);
	if (!k || !v) {
		free(k);
		free(v);
		w->failed = true;
		return;
	}
	w->fields[w->nfields].key = k;
	w->fields[w->nfields].value = v;
	w->nfields++;
}

static void begin(struct json_writer *w, const char *key, bool array)
{
	char name[sizeof(w->path)];

	if (w->depth + 1 >= JSON_MAX_DEPTH) {
		w->failed = true;
		return;
	}
	value_prefix(w, key, name, sizeof(name));
	fputc(array ? '[' : '{', w->out);
	w->depth++;
	w->first[w->depth] = true;
	w->in_array[w->depth] = array;
	w->index[w->depth] = 0;
	w->path_len[w->depth] = strlen(w->path);
	snprintf(w->path, sizeof(w->path), "%s", name);
}

static void end(struct json_writer *w, bool array)
{
	if (w->depth < 0 || w->in_array[w->depth] != array) {
		w->failed = true;
		return;
	}
	bool empty = w->first[w->depth];
	w->path[w->path_len[w->depth]] = '\0';
	w->depth--;
	if (!empty)
		indent(w);
	fputc(array ? ']' : '}', w->out);
	if (w->depth < 0)
		fputc('\n', w->out);
}

void json_begin_object(struct json_writer *w, const char *key) { begin(w, key, false); }
void json_end_object(struct json_writer *w) { end(w, false); }
void json_begin_array(struct json_writer *w, const char *key) { begin(w, key, true); }
void json_end_array(struct json_writer *w) { end(w, true); }

static void scalar(struct json_writer *w, const char *key, const char *json_text, const char *flat_text)
{
	char name[sizeof(w->path) + 64];

	value_prefix(w, key, name, sizeof(name));
	fputs(json_text, w->out);
	add_field(w, name, flat_text);
}

void json_key_u64(struct json_writer *w, const char *key, uint64_t v)
{
	if (w->null_numbers) {
		json_key_null(w, key);
		return;
	}
	char buf[32];
	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	scalar(w, key, buf, buf);
}

void json_key_i64(struct json_writer *w, const char *key, int64_t v)
{
	if (w->null_numbers) {
		json_key_null(w, key);
		return;
	}
	char buf[32];
	snprintf(buf, sizeof(buf), "%" PRId64, v);
	scalar(w, key, buf, buf);
}

/* v as the shortest of these precisions that reads back as the same
 * double (%.17g always does); as_real: with ".0" when that text would
 * read as an integer. false (nothing written) when v is null in the
 * record: not finite, or numbers are nulled. */
static bool shortest_double(const struct json_writer *w, double v, bool as_real, char *buf, size_t len)
{
	static const int precision[] = { 6, 9, 12, 15, 17 };

	if (!isfinite(v) || w->null_numbers)
		return false;
	for (size_t i = 0; i < sizeof(precision) / sizeof(precision[0]); i++) {
		snprintf(buf, len, "%.*g", precision[i], v);
		if (strtod(buf, NULL) == v)
			break;
	}
	if (as_real && !strpbrk(buf, ".eEn"))
		strcat(buf, ".0");
	return true;
}

static void key_double(struct json_writer *w, const char *key, double v, bool as_real)
{
	char buf[72];
	if (shortest_double(w, v, as_real, buf, sizeof(buf)))
		scalar(w, key, buf, buf);
	else
		json_key_null(w, key);
}

void json_key_double(struct json_writer *w, const char *key, double v) { key_double(w, key, v, false); }

void json_key_real(struct json_writer *w, const char *key, double v) { key_double(w, key, v, true); }

void json_key_double_digits(struct json_writer *w, const char *key, double v, int digits)
{
	char buf[64];
	if (!isfinite(v) || w->null_numbers) {
		json_key_null(w, key);
		return;
	}
	snprintf(buf, sizeof(buf), "%.*g", digits, v);
	scalar(w, key, buf, buf);
}

void json_key_fixed(struct json_writer *w, const char *key, double v, int decimals)
{
	char buf[400]; /* %.0f of DBL_MAX has 309 digits */
	if (!isfinite(v) || w->null_numbers) {
		json_key_null(w, key);
		return;
	}
	snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	scalar(w, key, buf, buf);
}

void json_key_string(struct json_writer *w, const char *key, const char *s)
{
	char name[sizeof(w->path) + 64];

	if (!s) {
		json_key_null(w, key);
		return;
	}
	value_prefix(w, key, name, sizeof(name));
	write_string(w->out, s);
	add_field(w, name, s);
}

void json_key_hex(struct json_writer *w, const char *key, uint64_t v)
{
	char buf[24];
	snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	json_key_string(w, key, buf);
}

void json_key_bool(struct json_writer *w, const char *key, bool v)
{
	scalar(w, key, v ? "true" : "false", v ? "true" : "false");
}

void json_key_null(struct json_writer *w, const char *key)
{
	scalar(w, key, "null", "");
}
