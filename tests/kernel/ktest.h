/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ktest.h: a small test harness in the style of the kernel's kselftest
 * harness (fixtures, ASSERT_* / EXPECT_*, TAP output), written for the
 * conformance tests that run inside the benchmark guest.
 *
 *   TEST(name) { ... }                       a test without fixture
 *   TEST_TIMEOUT(name, seconds) { ... }      same, with its own time limit
 *   FIXTURE(f) { fields };                   per-test state, reached as self->
 *   FIXTURE_SETUP(f) { ... }                 runs before each TEST_F(f, ...)
 *   FIXTURE_TEARDOWN(f) { ... }              runs after it, also after a failed ASSERT
 *   TEST_F(f, name) { ... }  TEST_F_TIMEOUT(f, name, seconds) { ... }
 *   ASSERT_EQ/NE/LT/LE/GT/GE(a, b)           stop the test when false
 *   EXPECT_EQ/NE/LT/LE/GT/GE(a, b)           record the failure and go on
 *   ASSERT_TRUE/FALSE(x), EXPECT_TRUE/FALSE(x), ASSERT_STREQ/EXPECT_STREQ(a, b)
 *   ASSERT_SYS(expr)     expr must not return -1 (prints errno otherwise)
 *   ASSERT_ERRNO(expr, E) expr must fail (-1) with errno == E
 *   SKIP(statement, fmt, ...)  mark the test skipped with a reason, then run
 *                              statement (usually `return`)
 *   TH_LOG(fmt, ...)     a diagnostic line ("# ..."), kept out of the TAP count
 *   TEST_HARNESS_MAIN    defines main()
 *
 * Each test runs in its own forked process (its own process group, so that
 * helper processes it forks are killed with it), under a time limit.  A
 * failing ASSERT in a helper process the test forked ends that process with
 * status KT_FAIL; the test decides what that means.  Output: "TAP version 13",
 * "1..N", one "ok N - fixture.test" / "not ok N - ..." / "ok N - ... # SKIP
 * reason" per test, then a plain "N passed, N failed, N skipped" line.  The
 * exit status is 1 when a test failed, else 0.
 */
#ifndef KTEST_H
#define KTEST_H

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KT_PASS 0
#define KT_FAIL 1
#define KT_SKIP 4
#define KT_DEFAULT_TIMEOUT 300
#define KT_MAX_TESTS 128

struct kt_test {
	const char *fixture;
	const char *name;
	int line;
	unsigned int timeout_s;
	void (*run)(void);
};

struct kt_state {
	pid_t test_pid;		/* the process running the test body */
	int failed;
	int skipped;
	int skip_fd;		/* reason goes to the parent through this pipe */
	int jump_ok;		/* kt.jmp is valid in this process */
	int in_teardown;
	sigjmp_buf jmp;
};

static struct kt_test kt_tests[KT_MAX_TESTS];
static int kt_ntests;
static struct kt_state kt;

static void kt_register(const char *fixture, const char *name, int line,
			unsigned int timeout_s, void (*run)(void))
{
	if (kt_ntests == KT_MAX_TESTS) {
		fprintf(stderr, "ktest: more than %d tests\n", KT_MAX_TESTS);
		exit(2);
	}
	kt_tests[kt_ntests++] = (struct kt_test){ fixture, name, line, timeout_s, run };
}

#define TH_LOG(...) do { \
	printf("# "); printf(__VA_ARGS__); printf("\n"); fflush(stdout); \
} while (0)

/* Ends the test body: back to the harness in the test process (which then
 * runs the teardown), or exit in a helper process the test forked. */
__attribute__((noreturn)) static void kt_abort(void)
{
	fflush(stdout);
	if (kt.jump_ok && !kt.in_teardown && getpid() == kt.test_pid)
		siglongjmp(kt.jmp, 1);
	_exit(KT_FAIL);
}

static void kt_skip_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void kt_skip_note(const char *fmt, ...)
{
	char reason[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	kt.skipped = 1;
	if (getpid() == kt.test_pid && kt.skip_fd >= 0) {
		ssize_t n = write(kt.skip_fd, reason, strlen(reason));
		(void)n;
		close(kt.skip_fd);
		kt.skip_fd = -1;
	}
}

#define SKIP(statement, ...) do { kt_skip_note(__VA_ARGS__); statement; } while (0)

#define KT_CMP(a, op, b, sa, sb, fatal) do { \
	__typeof__(a) kt_a_ = (a); \
	__typeof__(b) kt_b_ = (b); \
	if (!(kt_a_ op kt_b_)) { \
		printf("# %s:%d: expected %s (%lld) %s %s (%lld)\n", __FILE__, __LINE__, \
		       sa, (long long)kt_a_, #op, sb, (long long)kt_b_); \
		kt.failed = 1; \
		if (fatal) \
			kt_abort(); \
	} \
} while (0)

#define ASSERT_EQ(a, b) KT_CMP(a, ==, b, #a, #b, 1)
#define ASSERT_NE(a, b) KT_CMP(a, !=, b, #a, #b, 1)
#define ASSERT_LT(a, b) KT_CMP(a, <, b, #a, #b, 1)
#define ASSERT_LE(a, b) KT_CMP(a, <=, b, #a, #b, 1)
#define ASSERT_GT(a, b) KT_CMP(a, >, b, #a, #b, 1)
#define ASSERT_GE(a, b) KT_CMP(a, >=, b, #a, #b, 1)
#define EXPECT_EQ(a, b) KT_CMP(a, ==, b, #a, #b, 0)
#define EXPECT_NE(a, b) KT_CMP(a, !=, b, #a, #b, 0)
#define EXPECT_LT(a, b) KT_CMP(a, <, b, #a, #b, 0)
#define EXPECT_LE(a, b) KT_CMP(a, <=, b, #a, #b, 0)
#define EXPECT_GT(a, b) KT_CMP(a, >, b, #a, #b, 0)
#define EXPECT_GE(a, b) KT_CMP(a, >=, b, #a, #b, 0)

#define KT_BOOL(x, sx, want, fatal) do { \
	if (!(x) != !(want)) { \
		printf("# %s:%d: expected %s to be %s\n", __FILE__, __LINE__, sx, \
		       (want) ? "true" : "false"); \
		kt.failed = 1; \
		if (fatal) \
			kt_abort(); \
	} \
} while (0)

#define ASSERT_TRUE(x)  KT_BOOL(x, #x, 1, 1)
#define ASSERT_FALSE(x) KT_BOOL(x, #x, 0, 1)
#define EXPECT_TRUE(x)  KT_BOOL(x, #x, 1, 0)
#define EXPECT_FALSE(x) KT_BOOL(x, #x, 0, 0)

#define KT_STREQ(a, b, sa, sb, fatal) do { \
	const char *kt_sa_ = (a), *kt_sb_ = (b); \
	if (strcmp(kt_sa_, kt_sb_) != 0) { \
		printf("# %s:%d: expected %s (\"%s\") == %s (\"%s\")\n", __FILE__, \
		       __LINE__, sa, kt_sa_, sb, kt_sb_); \
		kt.failed = 1; \
		if (fatal) \
			kt_abort(); \
	} \
} while (0)

#define ASSERT_STREQ(a, b) KT_STREQ(a, b, #a, #b, 1)
#define EXPECT_STREQ(a, b) KT_STREQ(a, b, #a, #b, 0)

#define KT_SYS(expr, sexpr, fatal) do { \
	long kt_r_ = (long)(expr); \
	if (kt_r_ == -1) { \
		printf("# %s:%d: %s failed: %s\n", __FILE__, __LINE__, sexpr, \
		       strerror(errno)); \
		kt.failed = 1; \
		if (fatal) \
			kt_abort(); \
	} \
} while (0)

#define ASSERT_SYS(expr) KT_SYS(expr, #expr, 1)
#define EXPECT_SYS(expr) KT_SYS(expr, #expr, 0)

#define KT_ERRNO(expr, err, sexpr, serr, fatal) do { \
	errno = 0; \
	long kt_r_ = (long)(expr); \
	int kt_e_ = errno; \
	if (kt_r_ != -1 || kt_e_ != (err)) { \
		printf("# %s:%d: expected %s to fail with %s, got %ld (errno %d: %s)\n", \
		       __FILE__, __LINE__, sexpr, serr, kt_r_, kt_e_, \
		       kt_e_ ? strerror(kt_e_) : "none"); \
		kt.failed = 1; \
		if (fatal) \
			kt_abort(); \
	} \
} while (0)

#define ASSERT_ERRNO(expr, err) KT_ERRNO(expr, err, #expr, #err, 1)
#define EXPECT_ERRNO(expr, err) KT_ERRNO(expr, err, #expr, #err, 0)

/* ---- test definitions ---- */

#define TEST_TIMEOUT(name, secs) \
	static void kt_body_##name(void); \
	static void kt_run_##name(void) \
	{ \
		if (sigsetjmp(kt.jmp, 0) == 0) { \
			kt.jump_ok = 1; \
			kt_body_##name(); \
		} \
		kt.jump_ok = 0; \
	} \
	__attribute__((constructor)) static void kt_reg_##name(void) \
	{ \
		kt_register("global", #name, __LINE__, secs, kt_run_##name); \
	} \
	static void kt_body_##name(void)

#define TEST(name) TEST_TIMEOUT(name, KT_DEFAULT_TIMEOUT)

#define FIXTURE(f) struct kt_fixture_##f
#define FIXTURE_SETUP(f) static void kt_setup_##f(struct kt_fixture_##f *self)
#define FIXTURE_TEARDOWN(f) static void kt_teardown_##f(struct kt_fixture_##f *self)

#define TEST_F_TIMEOUT(f, name, secs) \
	static void kt_body_##f##_##name(struct kt_fixture_##f *self); \
	static void kt_run_##f##_##name(void) \
	{ \
		static struct kt_fixture_##f self_; \
		static volatile int setup_ran_; \
		memset(&self_, 0, sizeof(self_)); \
		setup_ran_ = 0; \
		if (sigsetjmp(kt.jmp, 0) == 0) { \
			kt.jump_ok = 1; \
			setup_ran_ = 1; \
			kt_setup_##f(&self_); \
			if (!kt.skipped && !kt.failed) \
				kt_body_##f##_##name(&self_); \
		} \
		kt.jump_ok = 0; \
		if (setup_ran_) { \
			kt.in_teardown = 1; \
			kt_teardown_##f(&self_); \
		} \
	} \
	__attribute__((constructor)) static void kt_reg_##f##_##name(void) \
	{ \
		kt_register(#f, #name, __LINE__, secs, kt_run_##f##_##name); \
	} \
	static void kt_body_##f##_##name(struct kt_fixture_##f *self)

#define TEST_F(f, name) TEST_F_TIMEOUT(f, name, KT_DEFAULT_TIMEOUT)

/* ---- runner ---- */

static int kt_by_line(const void *a, const void *b)
{
	return ((const struct kt_test *)a)->line - ((const struct kt_test *)b)->line;
}

static double kt_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Runs one test in a child process; returns KT_PASS, KT_FAIL or KT_SKIP and
 * fills reason (skip reason or how the child died). */
static int kt_run_one(const struct kt_test *t, char *reason, size_t reason_len)
{
	int pipefd[2];
	pid_t pid;
	int status = 0;
	double deadline;

	reason[0] = '\0';
	if (pipe(pipefd) != 0) {
		snprintf(reason, reason_len, "pipe: %s", strerror(errno));
		return KT_FAIL;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		snprintf(reason, reason_len, "fork: %s", strerror(errno));
		return KT_FAIL;
	}
	if (pid == 0) {
		setpgid(0, 0);
		close(pipefd[0]);
		setvbuf(stdout, NULL, _IOLBF, 0);
		kt.test_pid = getpid();
		kt.skip_fd = pipefd[1];
		kt.failed = kt.skipped = kt.in_teardown = 0;
		t->run();
		fflush(stdout);
		_exit(kt.failed ? KT_FAIL : kt.skipped ? KT_SKIP : KT_PASS);
	}
	setpgid(pid, pid);
	close(pipefd[1]);
	deadline = kt_now() + t->timeout_s;
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR) {
			snprintf(reason, reason_len, "waitpid: %s", strerror(errno));
			close(pipefd[0]);
			return KT_FAIL;
		}
		if (kt_now() > deadline) {
			kill(-pid, SIGKILL);
			waitpid(pid, &status, 0);
			snprintf(reason, reason_len, "timed out after %u s", t->timeout_s);
			close(pipefd[0]);
			return KT_FAIL;
		}
		usleep(20000);
	}
	/* Helper processes the test left behind go with it. */
	kill(-pid, SIGKILL);
	{
		char buf[256];
		ssize_t n = read(pipefd[0], buf, sizeof(buf) - 1);

		if (n > 0) {
			buf[n] = '\0';
			snprintf(reason, reason_len, "%s", buf);
		}
	}
	close(pipefd[0]);
	if (WIFSIGNALED(status)) {
		snprintf(reason, reason_len, "killed by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
		return KT_FAIL;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == KT_SKIP)
		return KT_SKIP;
	if (WIFEXITED(status) && WEXITSTATUS(status) == KT_PASS)
		return KT_PASS;
	return KT_FAIL;
}

/* argv[1], when given, runs only the tests whose "fixture.name" contains it. */
static int kt_main(int argc, char **argv)
{
	int passed = 0, failed = 0, skipped = 0, n = 0, selected = 0;
	const char *filter = argc > 1 ? argv[1] : NULL;
	char full[256], reason[256];

	setvbuf(stdout, NULL, _IOLBF, 0);
	qsort(kt_tests, kt_ntests, sizeof(kt_tests[0]), kt_by_line);
	for (int i = 0; i < kt_ntests; i++) {
		snprintf(full, sizeof(full), "%s.%s", kt_tests[i].fixture, kt_tests[i].name);
		if (!filter || strstr(full, filter))
			selected++;
	}
	printf("TAP version 13\n1..%d\n", selected);
	for (int i = 0; i < kt_ntests; i++) {
		const struct kt_test *t = &kt_tests[i];
		double start;
		int r;

		snprintf(full, sizeof(full), "%s.%s", t->fixture, t->name);
		if (filter && !strstr(full, filter))
			continue;
		n++;
		printf("# RUN %s\n", full);
		start = kt_now();
		r = kt_run_one(t, reason, sizeof(reason));
		if (r == KT_SKIP) {
			skipped++;
			printf("ok %d - %s # SKIP %s\n", n, full, reason[0] ? reason : "no reason given");
		} else if (r == KT_PASS) {
			passed++;
			printf("ok %d - %s (%.1f s)\n", n, full, kt_now() - start);
		} else {
			failed++;
			if (reason[0])
				printf("# %s: %s\n", full, reason);
			printf("not ok %d - %s (%.1f s)\n", n, full, kt_now() - start);
		}
	}
	printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
	return failed ? 1 : 0;
}

#define TEST_HARNESS_MAIN \
	int main(int argc, char **argv) { return kt_main(argc, argv); }

#endif /* KTEST_H */
