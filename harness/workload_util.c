/* workload_util.c - helpers every workload uses (see workload.h;
 * workload_touch_page is inline there). */
#include <stdio.h>
#include <string.h>
#include "clock.h"
#include "param.h"
#include "workload.h"

int workload_prepare(const struct workload_ops *wl, const char *const *text, size_t region_size,
		     union workload_value *values, void *config, char *err, size_t err_len)
{
	for (int p = 0; p < WORKLOAD_MAX_PARAMS && wl->params[p].name; p++) {
		const struct workload_param *d = &wl->params[p];
		int rc = -1;

		switch (d->type) {
		case WP_UINT:
			rc = param_uint(d->name, text[p], d->min, d->max, &values[p].u, err, err_len);
			break;
		case WP_SIZE:
			rc = param_size(d->name, text[p], d->min, d->max, &values[p].u, err, err_len);
			break;
		case WP_REAL:
			rc = param_double_open(d->name, text[p], d->lo, d->hi, &values[p].d, err, err_len);
			break;
		case WP_CHOICE:
			rc = param_choice(d->name, text[p], d->choices, &values[p].choice, err, err_len);
			break;
		case WP_PATH: {
			size_t n = text[p] ? strlen(text[p]) : 0;
			if (n && (text[p][0] != '/' || n >= d->max || strchr(text[p], '\n'))) {
				snprintf(err, err_len, "--%s '%.80s': not an absolute path of fewer than %llu bytes",
					 d->name, text[p], (unsigned long long)d->max);
				break;
			}
			values[p].u = n;
			rc = 0;
			break;
		}
		}
		if (rc < 0)
			return -1;
	}
	if (wl->config_bytes > WORKLOAD_CONFIG_BYTES) {
		snprintf(err, err_len, "internal: its config takes %zu bytes, at most %d", wl->config_bytes,
			 WORKLOAD_CONFIG_BYTES);
		return -1;
	}
	return wl->prepare ? wl->prepare(values, text, region_size, config, err, err_len) : 0;
}

bool workload_budget_done(const struct workload_ctx *ctx, uint64_t start_ns, uint64_t ops)
{
	if (!ctx->max_ops && !ctx->duration_ns)
		return true;
	if (ctx->max_ops && ops >= ctx->max_ops)
		return true;
	if (ctx->duration_ns && clock_now_ns() - start_ns >= ctx->duration_ns)
		return true;
	return false;
}
