/* environment.h - where a run happened, written as the record's
 * "environment" object. */
#ifndef MSHARE_BENCH_ENVIRONMENT_H
#define MSHARE_BENCH_ENVIRONMENT_H

#include "json.h"

/* "host" or "guest". */
const char *environment_platform(void);
/* How its times run and their unit (platform.h: platform_clock). */
const char *environment_clock(void);
const char *environment_time_unit(void);
/* The tool's version (git describe at build time). */
const char *environment_version(void);
struct pmem_namespace;
/* The "environment" object; pmem: the namespace the run's region is on
 * (environment.pmem), or NULL/not known: null. */
void environment_write_json(struct json_writer *w, const struct pmem_namespace *pmem);

#endif
