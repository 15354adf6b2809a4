/* plan_plot.c - draw the plan into an SVG through gnuplot; see plan_plot.h. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plan_plot.h"
#include "units.h"

#define FMT(b) units_format_bytes((b), (char[32]){ 0 }, 32)

static const char *const colors[] = { "#1f77b4", "#ff7f0e", "#2ca02c", "#006d2c", "#9467bd", "#8c564b",
				      "#e377c2", "#7f7f7f", "#d62728", "#bcbd22", "#17becf", "#aec7e8",
				      "#ff9896", "#98df8a", "#c5b0d5" };

/* gnuplot string: no quotes or backslashes in what we print. */
static void quote(FILE *g, const char *s)
{
	fputc('"', g);
	for (; *s; s++)
		if (*s != '"' && *s != '\\')
			fputc(*s, g);
	fputc('"', g);
}

int plan_plot(const char *path, const struct plan_request *req, const struct plan_row *rows)
{
	uint64_t n_max = req->inputs.processes, last = 0;
	size_t len = strlen(path);
	FILE *g;
	int status, col = 2, nvalid = 0;
	char title[512];

	if (len < 5 || strcmp(path + len - 4, ".svg") != 0) {
		fprintf(stderr, "mshare-bench plan: --plot %s: the figure is an SVG file (FILE.svg)\n", path);
		return 2;
	}
	if (access(path, F_OK) == 0 && access(path, W_OK) != 0) {
		fprintf(stderr, "mshare-bench plan: --plot %s: not writable\n", path);
		return 2;
	}
	if (n_max < 10)
		n_max = 10;
	g = popen("gnuplot 1>&2", "w");
	if (!g) {
		fprintf(stderr, "mshare-bench plan: --plot: cannot run gnuplot: %s\n", strerror(errno));
		return 2;
	}
	fprintf(g, "set terminal svg size 1100,720 dynamic enhanced font 'sans,12'\nset output ");
	quote(g, path);
	fprintf(g, "\n$plan << EOD\n");
	/* 80 log-spaced counts from 1 to 2 x the largest asked. */
	for (int s = 0; s <= 80; s++) {
		uint64_t n = (uint64_t)llround(pow((double)(2 * n_max), s / 80.0));

		if (n <= last)
			continue;
		last = n;
		fprintf(g, "%" PRIu64, n);
		for (int i = 0; i < req->mode_count; i++) {
			struct capacity c;

			if (!rows[i].valid) {
				fprintf(g, " NaN NaN");
				continue;
			}
			plan_capacity_at(req, &rows[i], req->modes[i], n, &c);
			fprintf(g, " %" PRIu64 " %" PRIu64, c.pt_total_bytes, c.demand_bytes);
		}
		fprintf(g, "\n");
	}
	fprintf(g, "EOD\n");
	snprintf(title, sizeof(title), "MODELLED by mshare-bench plan (not measured): %s region, touch %.4g%%, RAM %s%s",
		 FMT(req->region.size), (req->region.touch_count ? 0 : req->region.touch_fraction * 100.0),
		 FMT(req->inputs.ram_bytes), req->ram_from_host ? " (this host's)" : "");
	fprintf(g, "set title ");
	quote(g, title);
	fprintf(g, " noenhanced\nset logscale xy 10\nset xlabel 'processes mapping the region'\n"
		"set ylabel 'bytes (log scale)'\nset grid\nset format y '%%.0s %%cB'\n"
		"set key outside right top noenhanced\n");
	for (int k = 0; k < req->count_n; k++)
		fprintf(g, "set arrow from %" PRIu64 ", graph 0 to %" PRIu64 ", graph 1 nohead dt 3 lc rgb '#888888'\n",
			req->counts[k], req->counts[k]);
	fprintf(g, "plot ");
	for (int i = 0; i < req->mode_count; i++, col += 2) {
		char t[96];

		if (!rows[i].valid)
			continue;
		snprintf(t, sizeof(t), "%s page tables", deploy_name(req->modes[i]));
		fprintf(g, "%s$plan using 1:%d with lines lw 2 lc rgb '%s' title ", nvalid++ ? ", " : "", col,
			colors[i % (sizeof(colors) / sizeof(colors[0]))]);
		quote(g, t);
		snprintf(t, sizeof(t), "%s demand (page tables + data in RAM + private)", deploy_name(req->modes[i]));
		fprintf(g, ", $plan using 1:%d with lines lw 1 dt 2 lc rgb '%s' title ", col + 1,
			colors[i % (sizeof(colors) / sizeof(colors[0]))]);
		quote(g, t);
	}
	fprintf(g, ", %" PRIu64 " with lines lw 2 lc rgb 'black' title ", req->inputs.ram_bytes);
	snprintf(title, sizeof(title), "RAM %s", FMT(req->inputs.ram_bytes));
	quote(g, title);
	fprintf(g, "\n");
	status = pclose(g);
	if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "mshare-bench plan: --plot %s: gnuplot failed (is it installed?)\n", path);
		return 2;
	}
	if (access(path, R_OK) != 0) {
		fprintf(stderr, "mshare-bench plan: --plot %s: gnuplot wrote nothing\n", path);
		return 2;
	}
	return 0;
}
