/* record_files.c - the outputs of a run record.
 *
 * --out is written in two steps: prepare (a temporary file
 * NAME.mshare-bench-tmp.PID beside it, written and fsynced, flock()ed while it exists) and commit
 * (renamed with RENAME_NOREPLACE), so a record is either complete or absent
 * and an existing file is never replaced. --csv is appended under an
 * exclusive flock in one write at the file's old end; on any failure the
 * file is cut back to that size, so earlier rows are never touched. The
 * commit happens with SIGINT/SIGTERM/SIGHUP blocked: a signal then cannot
 * make the run say "no record" about a record that exists.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "csv.h"
#include "parse.h"
#include "record_files.h"

/* The temporary files of --out: NAME.mshare-bench-tmp.PID. */
#define CSV_LOCK_WAIT_S 60
#define CSV_LOCK_WAIT_TEXT "60 s"
#define RECORD_TMP_TAG ".mshare-bench-tmp."

/* 0, or the errno of a failed write: a write that stores nothing without
 * an error means a full device (errno is stale then). */
static int write_all(int fd, const char *data, size_t len, off_t at)
{
	size_t off = 0;
	while (off < len) {
		ssize_t n = pwrite(fd, data + off, len - off, at + (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno;
		if (n == 0)
			return ENOSPC;
		off += (size_t)n;
	}
	return 0;
}

struct prepared {
	char tmp[PATH_MAX];
	int fd;
};

/* The temporary file for path holding the n parts, written and fsynced. */
static int prepare_new_file(struct prepared *pf, const char *path, const char *const *part, const size_t *part_len,
			    int n, char *err, size_t err_len)
{
	snprintf(pf->tmp, sizeof(pf->tmp), "%s" RECORD_TMP_TAG "%d", path, (int)getpid());
	pf->fd = open(pf->tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (pf->fd < 0) {
		snprintf(err, err_len, "--out %s: cannot create %s: %s", path, pf->tmp, strerror(errno));
		return -1;
	}
	/* Held until this process ends: a later run knows the file is not
	 * an orphan while it is locked. */
	flock(pf->fd, LOCK_EX);
	int e = 0;
	off_t at = 0;
	for (int i = 0; i < n && !e; at += (off_t)part_len[i], i++)
		e = write_all(pf->fd, part[i], part_len[i], at);
	if (!e && fsync(pf->fd) != 0)
		e = errno;
	if (e) {
		snprintf(err, err_len, "--out %s: cannot write: %s (nothing left behind)", path, strerror(e));
		unlink(pf->tmp);
		close(pf->fd);
		pf->fd = -1;
		return -1;
	}
	return 0;
}

static void discard_prepared(struct prepared *pf)
{
	if (pf->fd >= 0) {
		unlink(pf->tmp);
		close(pf->fd);
		pf->fd = -1;
	}
}

/* Rename the prepared file to path unless path exists. */
static int commit_new_file(struct prepared *pf, const char *path, char *err, size_t err_len)
{
	int rc = 0;
	if (renameat2(AT_FDCWD, pf->tmp, AT_FDCWD, path, RENAME_NOREPLACE) != 0) {
		int e = errno;
		if (e == EINVAL && link(pf->tmp, path) == 0) { /* filesystem without RENAME_NOREPLACE */
			unlink(pf->tmp);
		} else {
			if (e == EINVAL)
				e = errno;
			unlink(pf->tmp);
			snprintf(err, err_len, "--out %s: cannot create: %s%s", path, strerror(e),
				 e == EEXIST ? " (it appeared during the run; not overwritten)" : "");
			rc = -1;
		}
	}
	close(pf->fd);
	pf->fd = -1;
	return rc;
}

/* "NAME.mshare-bench-tmp.PID" (the names prepare_new_file makes, and no
 * other tool's): the PID, else 0. A name such as x.json.tmp.123 is not
 * this tool's and is never touched. */
static pid_t orphan_pid(const char *name)
{
	const char *t = strstr(name, RECORD_TMP_TAG), *next;
	while (t && (next = strstr(t + 1, RECORD_TMP_TAG)))
		t = next;
	if (!t || t == name)
		return 0;
	const char *d = t + strlen(RECORD_TMP_TAG);
	if (!*d || strlen(d) > 10)
		return 0;
	long long v = 0;
	for (; *d; d++) {
		if (*d < '0' || *d > '9')
			return 0;
		v = v * 10 + (*d - '0');
	}
	return v > 0 && v <= INT32_MAX ? (pid_t)v : 0;
}

void record_clean_orphans(const char *out)
{
	char dir[PATH_MAX];
	path_dir(out, dir, sizeof(dir));
	DIR *d = opendir(dir);
	if (!d)
		return;
	int dfd = dirfd(d);
	struct dirent *e;
	while ((e = readdir(d))) {
		pid_t pid = orphan_pid(e->d_name);
		/* Only a temporary file whose writer is gone: no such process
		 * here, and nobody holds its lock (a writer in another PID
		 * namespace still does). */
		if (!pid || pid == getpid() || kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		int fd = openat(dfd, e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			continue;
		struct stat st;
		/* And only one of this user's: another user's file of that
		 * name is not ours to remove. */
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
		    flock(fd, LOCK_EX | LOCK_NB) == 0 &&
		    unlinkat(dfd, e->d_name, 0) == 0)
			fprintf(stderr, "mshare-bench: removed %s/%s, left by run %d that was killed before "
					"committing it\n", dir, e->d_name, (int)pid);
		close(fd);
	}
	closedir(d);
}

/* Test hook (test-only, used by tests/harness/commit.sh): with
 * MSHARE_BENCH_TEST_COMMIT_GATE=PATH set, wait at the commit of the outputs
 * (temporary file written, signals blocked) until PATH exists, at most 60 s,
 * so that a test can deliver signals at that moment. */
static void test_commit_gate(const char *tmp)
{
	const char *gate = getenv("MSHARE_BENCH_TEST_COMMIT_GATE");
	if (!gate || !*gate)
		return;
	fprintf(stderr, "mshare-bench: test hook: at commit (%s), waiting for %s\n", tmp ? tmp : "stdout", gate);
	for (int i = 0; i < 6000 && access(gate, F_OK) != 0; i++) {
		struct timespec nap = { 0, 10000000 };
		nanosleep(&nap, NULL);
	}
}

/* Append one row to a CSV file (with the header when the file is empty),
 * in one write at its end, under an exclusive lock; a file csv_check_fd
 * refuses (another header, a cut-off row) is left alone. On failure the
 * file is cut back to its size before, so earlier rows stay intact. */
static int append_csv(const char *path, const char *header, size_t hlen, const char *row, size_t rlen,
		      char *err, size_t err_len)
{
	static const char then[] = "; no row appended";
	long long size = 0;
	int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(err, err_len, "--csv %s: cannot open: %s%s", path, strerror(errno), then);
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, err_len, "--csv %s is not a regular file%s", path, then);
		close(fd);
		return -1;
	}
	/* Waited for at most CSV_LOCK_WAIT_S: anyone who can read the file can
	 * flock() it, and must not hold a run up for ever. */
	int waited = 0, rc;
	bool stopped = false;
	while ((rc = flock(fd, LOCK_EX | LOCK_NB)) != 0 && (errno == EWOULDBLOCK || errno == EINTR) &&
	       waited < CSV_LOCK_WAIT_S * 10) {
		/* The commit holds SIGINT/SIGTERM/SIGHUP back: one pending ends
		 * the wait (the row is given up, the signal then delivered). */
		sigset_t pending;
		if (sigpending(&pending) == 0 && (sigismember(&pending, SIGINT) || sigismember(&pending, SIGTERM) ||
						  sigismember(&pending, SIGHUP))) {
			stopped = true;
			break;
		}
		struct timespec nap = { 0, 100000000 };
		nanosleep(&nap, NULL);
		waited++;
	}
	if (rc != 0) {
		snprintf(err, err_len, "--csv %s: %s%s", path,
			 stopped ? "interrupted while waiting for its lock (held by another process)"
			 : errno == EWOULDBLOCK ? "still locked by another process after " CSV_LOCK_WAIT_TEXT
			 : strerror(errno), then);
		close(fd);
		return -1;
	}
	if (csv_check_fd(fd, path, header, hlen, then, &size, err, err_len) != 0) {
		close(fd);
		return -1;
	}
	/* The header goes with the row into an empty file. */
	size_t skip = size ? hlen : 0;
	char *buf = malloc(hlen + rlen);
	int e = buf ? 0 : ENOMEM;
	if (buf) {
		memcpy(buf, header, hlen);
		memcpy(buf + hlen, row, rlen);
		e = write_all(fd, buf + skip, hlen + rlen - skip, (off_t)size);
	}
	if (!e && fsync(fd) != 0)
		e = errno;
	free(buf);
	if (e) {
		bool back = ftruncate(fd, (off_t)size) == 0 && fsync(fd) == 0;
		snprintf(err, err_len, "--csv %s: cannot append the row: %s; %s", path, strerror(e),
			 back ? "the file is as it was before this run" :
				"cutting it back to its size before this run failed too: its last row may be cut off");
	}
	close(fd);
	return e ? -1 : 0;
}

void record_catch_stop_signals(void (*handler)(int))
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: a signal must cut short the futex sleeps. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

static void block_stop_signals(sigset_t *old)
{
	sigset_t block;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, old);
}

static void append(char *err, size_t err_len, const char *fmt, const char *arg)
{
	size_t n = strlen(err);
	if (n < err_len)
		snprintf(err + n, err_len - n, fmt, arg);
}

int record_files_write(const struct run_config *cfg, volatile sig_atomic_t *stop, const char *json,
		       size_t json_len, const char *header, size_t hlen, const char *row, size_t rlen, char *err,
		       size_t err_len)
{
	struct prepared pf = { .fd = -1 };
	sigset_t old;
	const char *out = cfg->out, *csv = cfg->csv;
	char csv_err[1024] = "";
	bool out_ok = false, csv_ok = false;

	/* Prepare --out: CSV with header if FILE ends in .csv, else JSON. A
	 * failure here still leaves --csv to keep the record. */
	bool out_prepared = true;
	if (out && record_out_is_csv(out)) {
		const char *const parts[] = { header, row };
		const size_t lens[] = { hlen, rlen };
		out_prepared = prepare_new_file(&pf, out, parts, lens, 2, err, err_len) == 0;
	} else if (out) {
		out_prepared = prepare_new_file(&pf, out, &json, &json_len, 1, err, err_len) == 0;
	}

	/* Commit, with the stop signals held back until it is done. */
	block_stop_signals(&old);
	if (*stop) {
		discard_prepared(&pf);
		sigprocmask(SIG_SETMASK, &old, NULL);
		return RECORD_INTERRUPTED;
	}
	if (out_prepared) {
		test_commit_gate(out ? pf.tmp : NULL);
		if (out) {
			out_ok = commit_new_file(&pf, out, err, err_len) == 0;
		} else {
			out_ok = fwrite(json, 1, json_len, stdout) == json_len && fflush(stdout) == 0;
			if (!out_ok)
				snprintf(err, err_len, "cannot write the record to stdout: %s", strerror(errno));
		}
	}
	if (csv)
		csv_ok = append_csv(csv, header, hlen, row, rlen, csv_err, sizeof(csv_err)) == 0;
	sigprocmask(SIG_SETMASK, &old, NULL); /* a held-back signal is taken here */
	discard_prepared(&pf);

	if (out_ok && (!csv || csv_ok))
		return RECORD_WRITTEN;
	if (out_ok) {
		snprintf(err, err_len, "%s", csv_err);
		append(err, err_len, "; the record is in %s", out ? out : "the JSON on stdout");
		return RECORD_PARTLY;
	}
	if (csv_ok) {
		append(err, err_len, "; the record is only in --csv %s (row appended)", csv);
		return RECORD_PARTLY;
	}
	if (csv)
		append(err, err_len, "; %s", csv_err);
	append(err, err_len, "%s", "; no record written");
	return RECORD_NOTHING;
}

bool record_out_is_csv(const char *out)
{
	size_t n = strlen(out);
	return n >= 4 && strcasecmp(out + n - 4, ".csv") == 0;
}
