/* json_read.c - recursive-descent JSON parser (RFC 8259) into a tree. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_read.h"

#define JR_MAX_DEPTH 64
#define JR_MAX_FILE (64u << 20)

struct parser {
	const char *text, *p;
	char *err;
	size_t err_len;
	int depth;
	bool failed;
};

static void fail(struct parser *ps, const char *fmt, ...)
{
	int line = 1, col = 1;
	char what[160];
	va_list ap;

	if (ps->failed)
		return;
	ps->failed = true;
	for (const char *q = ps->text; q < ps->p; q++) {
		if (*q == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(ps->err, ps->err_len, "line %d column %d: %s", line, col, what);
}

static void skip_space(struct parser *ps)
{
	while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
		ps->p++;
}

static struct jr_value *new_value(struct parser *ps, enum jr_type type)
{
	struct jr_value *v = calloc(1, sizeof(*v));

	if (!v)
		fail(ps, "out of memory");
	else
		v->type = type;
	return v;
}

static void put_utf8(char **out, unsigned cp)
{
	char *o = *out;

	if (cp < 0x80) {
		*o++ = (char)cp;
	} else if (cp < 0x800) {
		*o++ = (char)(0xc0 | cp >> 6);
		*o++ = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*o++ = (char)(0xe0 | cp >> 12);
		*o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*o++ = (char)(0x80 | (cp & 0x3f));
	} else {
		*o++ = (char)(0xf0 | cp >> 18);
		*o++ = (char)(0x80 | ((cp >> 12) & 0x3f));
		*o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*o++ = (char)(0x80 | (cp & 0x3f));
	}
	*out = o;
}

static int hex4(struct parser *ps, unsigned *cp)
{
	*cp = 0;
	for (int i = 0; i < 4; i++) {
		char c = *ps->p;

		if (!isxdigit((unsigned char)c)) {
			fail(ps, "bad \\u escape");
			return -1;
		}
		*cp = *cp << 4 | (unsigned)(isdigit((unsigned char)c) ? c - '0' : (tolower((unsigned char)c) - 'a' + 10));
		ps->p++;
	}
	return 0;
}

/* At the opening quote; returns a malloc'd, unescaped string. The output
 * is never longer than the input (an escape shrinks or keeps its length). */
static char *parse_string(struct parser *ps)
{
	const char *start = ++ps->p;
	char *out, *o;

	while (*ps->p && *ps->p != '"')
		ps->p += (*ps->p == '\\' && ps->p[1]) ? 2 : 1;
	if (*ps->p != '"') {
		fail(ps, "unterminated string");
		return NULL;
	}
	out = malloc((size_t)(ps->p - start) + 1);
	if (!out) {
		fail(ps, "out of memory");
		return NULL;
	}
	ps->p = start;
	for (o = out; *ps->p != '"';) {
		unsigned char c = (unsigned char)*ps->p++;
		unsigned cp, lo;

		if (c < 0x20) {
			fail(ps, "control character in string");
			free(out);
			return NULL;
		}
		if (c != '\\') {
			*o++ = (char)c;
			continue;
		}
		switch (*ps->p++) {
		case '"': *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case '/': *o++ = '/'; break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u':
			if (hex4(ps, &cp) < 0) {
				free(out);
				return NULL;
			}
			if (cp >= 0xd800 && cp < 0xdc00 && ps->p[0] == '\\' && ps->p[1] == 'u') {
				ps->p += 2;
				if (hex4(ps, &lo) < 0) {
					free(out);
					return NULL;
				}
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			}
			put_utf8(&o, cp);
			break;
		default:
			ps->p--;
			fail(ps, "bad escape in string");
			free(out);
			return NULL;
		}
	}
	ps->p++;
	*o = '\0';
	return out;
}

static struct jr_value *parse_value(struct parser *ps);

static struct jr_value *parse_number(struct parser *ps)
{
	const char *start = ps->p;
	bool integer = true;
	struct jr_value *v;
	char *end;

	if (*ps->p == '-')
		ps->p++;
	if (!isdigit((unsigned char)*ps->p)) {
		fail(ps, "unexpected character '%c'", *start);
		return NULL;
	}
	while (isdigit((unsigned char)*ps->p))
		ps->p++;
	if (*ps->p == '.' || *ps->p == 'e' || *ps->p == 'E') {
		integer = false;
		if (*ps->p == '.')
			for (ps->p++; isdigit((unsigned char)*ps->p); ps->p++)
				;
		if (*ps->p == 'e' || *ps->p == 'E') {
			ps->p++;
			if (*ps->p == '+' || *ps->p == '-')
				ps->p++;
			while (isdigit((unsigned char)*ps->p))
				ps->p++;
		}
	}
	if (!(v = new_value(ps, JR_NUMBER)))
		return NULL;
	v->number = strtod(start, NULL);
	if (integer) {
		errno = 0;
		v->integer = strtoll(start, &end, 10);
		v->is_integer = errno == 0 && end == ps->p;
	}
	return v;
}

static bool literal(struct parser *ps, const char *word)
{
	size_t n = strlen(word);

	if (strncmp(ps->p, word, n) != 0)
		return false;
	ps->p += n;
	return true;
}

/* Elements of an array or members of an object, up to the closing bracket. */
static struct jr_value *parse_container(struct parser *ps, enum jr_type type)
{
	char close = type == JR_OBJECT ? '}' : ']';
	struct jr_value *v = new_value(ps, type), **tail;

	if (!v)
		return NULL;
	if (++ps->depth > JR_MAX_DEPTH) {
		fail(ps, "nested deeper than %d", JR_MAX_DEPTH);
		return v;
	}
	tail = &v->child;
	ps->p++;
	skip_space(ps);
	if (*ps->p == close) {
		ps->p++;
		ps->depth--;
		return v;
	}
	for (;;) {
		char *key = NULL;
		struct jr_value *item;

		skip_space(ps);
		if (type == JR_OBJECT) {
			if (*ps->p != '"') {
				fail(ps, "expected a member name");
				return v;
			}
			if (!(key = parse_string(ps)))
				return v;
			skip_space(ps);
			if (*ps->p != ':') {
				free(key);
				fail(ps, "expected ':'");
				return v;
			}
			ps->p++;
		}
		item = parse_value(ps);
		if (!item) {
			free(key);
			return v;
		}
		item->key = key;
		*tail = item;
		tail = &item->next;
		if (ps->failed)
			return v;
		skip_space(ps);
		if (*ps->p == ',') {
			ps->p++;
			continue;
		}
		if (*ps->p == close) {
			ps->p++;
			ps->depth--;
			return v;
		}
		fail(ps, "expected ',' or '%c'", close);
		return v;
	}
}

static struct jr_value *parse_value(struct parser *ps)
{
	struct jr_value *v;

	skip_space(ps);
	switch (*ps->p) {
	case '{': return parse_container(ps, JR_OBJECT);
	case '[': return parse_container(ps, JR_ARRAY);
	case '"':
		if (!(v = new_value(ps, JR_STRING)))
			return NULL;
		if (!(v->string = parse_string(ps))) {
			free(v);
			return NULL;
		}
		return v;
	case '\0':
		fail(ps, "unexpected end of input");
		return NULL;
	default:
		break;
	}
	if (literal(ps, "true")) {
		if ((v = new_value(ps, JR_BOOL)))
			v->boolean = true;
		return v;
	}
	if (literal(ps, "false"))
		return new_value(ps, JR_BOOL);
	if (literal(ps, "null"))
		return new_value(ps, JR_NULL);
	return parse_number(ps);
}

struct jr_value *jr_parse(const char *text, char *err, size_t err_len)
{
	struct parser ps = { .text = text, .p = text, .err = err, .err_len = err_len };
	struct jr_value *root = parse_value(&ps);

	if (!ps.failed) {
		skip_space(&ps);
		if (*ps.p != '\0')
			fail(&ps, "text after the JSON value");
	}
	if (ps.failed) {
		jr_free(root);
		return NULL;
	}
	return root;
}

struct jr_value *jr_parse_file(const char *path, char *err, size_t err_len)
{
	FILE *f = fopen(path, "r");
	struct jr_value *root;
	char *text, perr[200];
	size_t n;

	if (!f) {
		snprintf(err, err_len, "%s: %s", path, strerror(errno));
		return NULL;
	}
	text = malloc(JR_MAX_FILE + 1);
	if (!text) {
		fclose(f);
		snprintf(err, err_len, "%s: out of memory", path);
		return NULL;
	}
	n = fread(text, 1, JR_MAX_FILE + 1, f);
	if (ferror(f) || n > JR_MAX_FILE) {
		snprintf(err, err_len, "%s: %s", path, ferror(f) ? "read error" : "larger than 64 MiB");
		fclose(f);
		free(text);
		return NULL;
	}
	fclose(f);
	text[n] = '\0';
	if (memchr(text, '\0', n)) {
		snprintf(err, err_len, "%s: contains a NUL byte, not JSON text", path);
		free(text);
		return NULL;
	}
	root = jr_parse(text, perr, sizeof(perr));
	free(text);
	if (!root)
		snprintf(err, err_len, "%s: not valid JSON: %s", path, perr);
	return root;
}

void jr_free(struct jr_value *v)
{
	while (v) {
		struct jr_value *next = v->next;

		jr_free(v->child);
		free(v->key);
		free(v->string);
		free(v);
		v = next;
	}
}

const struct jr_value *jr_get(const struct jr_value *root, const char *path)
{
	const struct jr_value *v = root;
	const char *p = path;

	while (v && *p) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);
		const struct jr_value *c;

		if (v->type != JR_OBJECT)
			return NULL;
		for (c = v->child; c; c = c->next)
			if (strlen(c->key) == n && strncmp(c->key, p, n) == 0)
				break;
		v = c;
		p += n;
		if (*p == '.')
			p++;
	}
	return v;
}

bool jr_get_number(const struct jr_value *root, const char *path, double *out)
{
	const struct jr_value *v = jr_get(root, path);

	if (!v || v->type != JR_NUMBER)
		return false;
	*out = v->number;
	return true;
}

bool jr_get_u64(const struct jr_value *root, const char *path, uint64_t *out)
{
	const struct jr_value *v = jr_get(root, path);
	char *end;

	if (!v)
		return false;
	if (v->type == JR_NUMBER) {
		if (v->is_integer && v->integer >= 0) {
			*out = (uint64_t)v->integer;
			return true;
		}
		if (v->number >= 0 && v->number < 18446744073709551616.0 && v->number == floor(v->number)) {
			*out = (uint64_t)v->number;
			return true;
		}
		return false;
	}
	if (v->type == JR_STRING && v->string[0] && v->string[0] != '-' && !isspace((unsigned char)v->string[0])) {
		errno = 0;
		*out = strtoull(v->string, &end, 0);
		return errno == 0 && *end == '\0';
	}
	return false;
}

const char *jr_get_string(const struct jr_value *root, const char *path)
{
	const struct jr_value *v = jr_get(root, path);

	return v && v->type == JR_STRING ? v->string : NULL;
}

bool jr_get_bool(const struct jr_value *root, const char *path, bool *out)
{
	const struct jr_value *v = jr_get(root, path);

	if (!v || v->type != JR_BOOL)
		return false;
	*out = v->boolean;
	return true;
}
