/* record_files.h - the outputs of a run (record_files.c): write the JSON
 * text and the CSV header and row to --out (or stdout) and --csv; what
 * record_write returns (run.h). */
#ifndef MSHARE_BENCH_RECORD_FILES_H
#define MSHARE_BENCH_RECORD_FILES_H

#include <signal.h>
#include <stddef.h>

#include "run.h"

int record_files_write(const struct run_config *cfg, volatile sig_atomic_t *stop, const char *json,
		       size_t json_len, const char *header, size_t hlen, const char *row, size_t rlen, char *err,
		       size_t err_len);

/* handler for the stop signals (SIGINT, SIGTERM, SIGHUP: the ones held
 * back during a commit), without SA_RESTART. */
void record_catch_stop_signals(void (*handler)(int));

#endif
