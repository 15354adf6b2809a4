/* oom_victims.c - which SIGKILLed workers the OOM killer took.
 *
 * A worker that dies of SIGKILL the harness did not send was killed by
 * the OOM killer or by someone else. /proc/vmstat's oom_kill counter tells
 * the two apart when the kernel has VM event counters; a small kernel
 * (the benchmark VM's tinyconfig) has none, so the kernel log is read
 * instead and each such worker's pid looked up in its "Killed process"
 * lines. A log that wrapped during a run with many kills undercounts; the
 * rest stay "SIGKILLed, not known to be OOM".
 */
#include "oom_victims.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/wait.h>

#include "run.h"

enum { SYSLOG_READ_ALL = 3, SYSLOG_SIZE_BUFFER = 10 };

static int compare_pids(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return (x > y) - (x < y);
}

long oom_victims_in_kernel_log(const struct run_state *rs)
{
	int size = klogctl(SYSLOG_SIZE_BUFFER, NULL, 0);
	if (size <= 0)
		return -1;
	char *log = malloc((size_t)size + 1);
	if (!log)
		return -1;
	int len = klogctl(SYSLOG_READ_ALL, log, size);
	if (len < 0) {
		free(log);
		return -1;
	}
	log[len] = '\0';

	size_t cap = 64, n = 0;
	pid_t *victims = malloc(cap * sizeof(*victims));
	static const char marker[] = "Killed process ";
	for (const char *p = log; victims && (p = strstr(p, marker)); p += sizeof(marker) - 1) {
		if (n == cap) {
			pid_t *bigger = realloc(victims, 2 * cap * sizeof(*victims));
			if (!bigger)
				break;
			victims = bigger;
			cap *= 2;
		}
		victims[n++] = (pid_t)strtol(p + sizeof(marker) - 1, NULL, 10);
	}
	free(log);
	if (!victims)
		return -1;
	qsort(victims, n, sizeof(*victims), compare_pids);

	long found = 0;
	for (unsigned i = 0; i < rs->forked; i++) {
		int st = rs->wait_status[i];
		if (rs->reaped[i] && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL &&
		    bsearch(&rs->pids[i], victims, n, sizeof(*victims), compare_pids))
			found++;
	}
	free(victims);
	return found;
}

unsigned oom_victims(const struct run_state *rs, const char **source)
{
	if (rs->oom_kill_before >= 0 && rs->oom_kill_after >= 0) {
		*source = "vmstat oom_kill";
		return rs->oom_kill_after > rs->oom_kill_before ? rs->oom_suspects : 0;
	}
	if (rs->oom_victims_logged >= 0) {
		*source = "kernel log (Killed process <pid>)";
		return (unsigned)rs->oom_victims_logged;
	}
	*source = "none (no vmstat oom_kill counter, kernel log unreadable)";
	return 0;
}
