# workloads/workloads.mk - unit tests of the database workloads' helpers.
# The workloads themselves are globbed into build/mshare-bench by the top
# Makefile; their integration tests are tests/workloads/workloads.sh.
# The generator test is built plainly and, when tests/tests.mk found the
# compiler able to, with AddressSanitizer + UndefinedBehaviorSanitizer.

WORKLOADS_TEST_SRC := tests/workloads/test-zipf.c workloads/zipf.c workloads/block_choice.c \
	harness/param.c harness/workload_util.c harness/parse.c harness/json.c
WORKLOADS_TEST_BINS := $(BUILD)/tests/workloads/test-zipf
ifeq ($(SANITIZE_OK),yes)
WORKLOADS_TEST_BINS += $(BUILD)/tests/workloads/test-zipf-asan
endif

$(BUILD)/tests/workloads/test-zipf: $(WORKLOADS_TEST_SRC) tests/lib/tap.h $(wildcard workloads/*.h) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -MMD -MP,$(CFLAGS)) -Iworkloads -o $@ $(WORKLOADS_TEST_SRC) -lm

$(BUILD)/tests/workloads/test-zipf-asan: $(WORKLOADS_TEST_SRC) tests/lib/tap.h $(wildcard workloads/*.h) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -MMD -MP,$(CFLAGS)) -O1 $(SANITIZE_FLAGS) -Iworkloads -o $@ $(WORKLOADS_TEST_SRC) -lm

# workloads/lock_stat.c against lines of a real /proc/lock_stat.
WORKLOADS_TEST_BINS += $(BUILD)/tests/workloads/test-lock-stat
$(BUILD)/tests/workloads/test-lock-stat: tests/workloads/test-lock-stat.c workloads/lock_stat.c workloads/lock_stat.h tests/lib/tap.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -MMD -MP,$(CFLAGS)) -Iworkloads -o $@ tests/workloads/test-lock-stat.c workloads/lock_stat.c

test-build:: $(WORKLOADS_TEST_BINS)

include workloads/postgres/postgres.mk
