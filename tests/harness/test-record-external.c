/* Unit test of harness/record_external.c under the sanitizers (its
 * behaviour through `mshare-bench record` is tests/harness/record-external.sh):
 * every path, written or refused, frees what it read (LeakSanitizer), and a
 * refusal writes nothing. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record_external.h"
#include "run.h"
#include "run_result.h"
#include "../lib/tap.h"

static char dir[] = "/tmp/test-record-external.XXXXXX";

static const char *file(const char *name, const char *text)
{
	static char path[8][256];
	static int k;
	char *p = path[k++ % 8];
	snprintf(p, 256, "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	return p;
}

#define FRAME "{\"schema_version\": %d, \"tool\": \"mshare-bench\", \"environment\": {\"platform\": \"guest\", " \
	      "\"clock\": \"guest-instructions\"}}"
#define CONFIG "\"config\": {\"backend\": \"anon\", \"backend_facts\": null, \"workers\": 3, \"size_bytes\": 1, " \
	       "\"workload\": \"postgres\", \"workload_facts\": {}, \"page_mode\": \"4k\", \"write\": false, " \
	       "\"addr\": null, \"path\": null, \"seed\": 0, \"duration_s\": 5, \"ops\": 0, \"cpus\": null, " \
	       "\"mem_policy\": null, \"params\": {}}"

int main(void)
{
	volatile sig_atomic_t stop = 0;
	char err[1024], frame[512], out[300], text[4096];
	int rc;

	if (!mkdtemp(dir))
		return 1;
	snprintf(frame, sizeof(frame), FRAME, RECORD_SCHEMA_VERSION);
	const char *fp = file("frame.json", frame);
	const char *bp = file("body.json", "{" CONFIG ", \"results\": {\"x\": [1, 2.5, \"s\", null, true]}}");
	snprintf(out, sizeof(out), "%s/rec.json", dir);

	rc = record_external_write(fp, bp, out, NULL, &stop, err, sizeof(err));
	TAP_OK(rc == RECORD_WRITTEN, "a frame and a body make a record (%s)", err);
	FILE *f = fopen(out, "r");
	size_t n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
	text[n] = '\0';
	if (f)
		fclose(f);
	TAP_OK(strstr(text, "\"schema_version\": ") && strstr(text, "\"clock\": \"guest-instructions\"") &&
		       strstr(text, "2.5") && strstr(text, "\"workers\": 3"),
	       "the record holds the frame's and the body's values");

	rc = record_external_write(fp, bp, out, NULL, &stop, err, sizeof(err));
	TAP_OK(rc == RECORD_REFUSED && strstr(err, out) && strstr(err, "exists"), "not over an existing record: %s", err);

	snprintf(frame, sizeof(frame), FRAME, RECORD_SCHEMA_VERSION + 1);
	const char *old = file("frame-other.json", frame);
	snprintf(out, sizeof(out), "%s/refused.json", dir);
	rc = record_external_write(old, bp, out, NULL, &stop, err, sizeof(err));
	TAP_OK(rc == RECORD_REFUSED && strstr(err, "schema_version") && access(out, F_OK) != 0,
	       "another schema's frame is refused, nothing written: %s", err);
	rc = record_external_write(fp, file("bad.json", "{\"config\": {}, \"results\": {}}"), out, NULL, &stop, err,
				   sizeof(err));
	TAP_OK(rc == RECORD_REFUSED && strstr(err, "config has no 'backend'") && access(out, F_OK) != 0,
	       "a config without a run's keys is refused: %s", err);
	rc = record_external_write(fp, file("trunc.json", "{" CONFIG ", \"results\": {\"x\": ["), out, NULL, &stop,
				   err, sizeof(err));
	TAP_OK(rc == RECORD_REFUSED && strstr(err, "not JSON") && access(out, F_OK) != 0,
	       "a truncated body is refused: %s", err);
	stop = SIGTERM;
	rc = record_external_write(fp, bp, out, NULL, &stop, err, sizeof(err));
	TAP_OK(rc == RECORD_INTERRUPTED && access(out, F_OK) != 0, "a stop before the commit writes nothing");
	const char *names[] = { "frame.json", "body.json", "rec.json", "frame-other.json", "bad.json", "trunc.json" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(out, sizeof(out), "%s/%s", dir, names[i]);
		unlink(out);
	}
	rmdir(dir);
	return tap_done();
}
