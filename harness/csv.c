/* csv.c - CSV header and row from a json_writer's flat fields. */
#include <string.h>

#include "csv.h"

void csv_write_field(FILE *out, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

void csv_write_header(FILE *out, const struct json_writer *w)
{
	for (size_t i = 0; i < w->nfields; i++) {
		if (i)
			fputc(',', out);
		csv_write_field(out, w->fields[i].key);
	}
	fputc('\n', out);
}

void csv_write_row(FILE *out, const struct json_writer *w)
{
	for (size_t i = 0; i < w->nfields; i++) {
		if (i)
			fputc(',', out);
		csv_write_field(out, w->fields[i].value);
	}
	fputc('\n', out);
}
