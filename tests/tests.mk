# Tests: `make test` builds every test binary (test-build) and runs
# tests/run-tests.sh. This fragment builds the harness unit tests, once
# plainly and once with AddressSanitizer + UndefinedBehaviorSanitizer where
# the compiler supports them.
HARNESS_TEST_SRCS := $(wildcard tests/harness/test-*.c)
HARNESS_TEST_BINS := $(HARNESS_TEST_SRCS:tests/%.c=$(BUILD)/tests/%)
# The harness units the tests exercise, compiled into each test.
HARNESS_TEST_UNITS := harness/histogram.c harness/fault_cost.c harness/parse.c harness/json.c harness/csv.c harness/platform.c harness/ktrace.c harness/mshare_detect.c
HARNESS_TEST_CFLAGS := -O2 -g $(CSTD) $(WARN) -Iharness

SANITIZE_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
SANITIZE_OK := $(shell echo 'int main(void){return 0;}' | $(CC) $(SANITIZE_FLAGS) -x c - -o /dev/null 2>/dev/null && echo yes)
ifeq ($(SANITIZE_OK),yes)
HARNESS_TEST_BINS += $(HARNESS_TEST_SRCS:tests/%.c=$(BUILD)/tests/%-asan)
endif

$(BUILD)/tests/harness/test-%: tests/harness/test-%.c tests/lib/tap.h $(HARNESS_TEST_UNITS) harness/*.h
	@mkdir -p $(dir $@)
	$(CC) $(HARNESS_TEST_CFLAGS) -o $@ $< $(HARNESS_TEST_UNITS) -lm

$(BUILD)/tests/harness/test-%-asan: tests/harness/test-%.c tests/lib/tap.h $(HARNESS_TEST_UNITS) harness/*.h
	@mkdir -p $(dir $@)
	$(CC) $(HARNESS_TEST_CFLAGS) -O1 $(SANITIZE_FLAGS) -o $@ $< $(HARNESS_TEST_UNITS) -lm

test-build:: $(HARNESS_TEST_BINS)

# test-ktrace parses hist text captured in the guest (a C string literal).
$(BUILD)/tests/harness/test-ktrace $(BUILD)/tests/harness/test-ktrace-asan: tests/harness/ktrace-hist-captured.txt.h

# The guest side of harness/ktrace.c: tests/kernel/fault-time.sh runs it in
# the guest (static, under build/guest/ like the other guest binaries, so it
# goes into the initramfs and the host runner never starts it).
KTRACE_GUEST := $(BUILD)/guest/tests/harness/ktrace-guest
$(KTRACE_GUEST): tests/harness/ktrace-guest.c harness/ktrace.c harness/json.c harness/histogram.c harness/ktrace.h harness/json.h harness/histogram.h tests/lib/tap.h
	@mkdir -p $(dir $@)
	$(CC) -O2 -g $(CSTD) $(WARN) -static -Iharness -Ikernel/include -o $@ tests/harness/ktrace-guest.c harness/ktrace.c harness/json.c harness/histogram.c -lm
guest-tests: $(KTRACE_GUEST)
$(INITRAMFS): $(KTRACE_GUEST)
test-build:: $(KTRACE_GUEST)

# The harness with one more backend and one more workload
# (tests/harness/backend_dummy.c and workload_dummy.c, each listed by its one
# line in harness/backends.c or cli/workloads.c under
# MSHARE_BENCH_TEST_BACKEND / MSHARE_BENCH_TEST_WORKLOAD), for
# tests/harness/dummy-backend.sh: adding either is its file and that line.
DUMMY_SRCS := tests/harness/backend_dummy.c tests/harness/workload_dummy.c harness/backends.c cli/workloads.c
DUMMY_OBJS := $(filter-out $(BUILD)/obj/harness/backends.o $(BUILD)/obj/cli/workloads.o,$(OBJS))
$(BUILD)/tests/harness/mshare-bench-dummy: $(DUMMY_SRCS) $(DUMMY_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -MMD -MP,$(CFLAGS)) $(LDFLAGS) -DMSHARE_BENCH_TEST_BACKEND -DMSHARE_BENCH_TEST_WORKLOAD -o $@ \
		$(DUMMY_SRCS) $(DUMMY_OBJS) $(LDLIBS)

test-build:: $(BUILD)/tests/harness/mshare-bench-dummy

# test-record-external: the writer of records the harness did not run
# (harness/record_external.c) with the files code it commits through and
# jansson, which the other unit tests do not need.
RECORD_EXTERNAL_UNITS := harness/record_external.c harness/record_files.c
$(BUILD)/tests/harness/test-record-external: tests/harness/test-record-external.c $(RECORD_EXTERNAL_UNITS) $(HARNESS_TEST_UNITS) harness/*.h
	@mkdir -p $(dir $@)
	$(CC) $(HARNESS_TEST_CFLAGS) -o $@ $< $(RECORD_EXTERNAL_UNITS) $(HARNESS_TEST_UNITS) -ljansson -lm

$(BUILD)/tests/harness/test-record-external-asan: tests/harness/test-record-external.c $(RECORD_EXTERNAL_UNITS) $(HARNESS_TEST_UNITS) harness/*.h
	@mkdir -p $(dir $@)
	$(CC) $(HARNESS_TEST_CFLAGS) -O1 $(SANITIZE_FLAGS) -o $@ $< $(RECORD_EXTERNAL_UNITS) $(HARNESS_TEST_UNITS) -ljansson -lm
