# workloads/workloads.mk - unit tests of the database workloads' helpers.
# The workloads themselves are globbed into build/mshare-bench by the top
# Makefile; their integration tests are tests/workloads/*.sh.

WORKLOADS_TEST_BIN := $(BUILD)/tests/workloads/test-zipf
WORKLOADS_TEST_SRC := tests/workloads/test-zipf.c workloads/zipf.c workloads/block_choice.c \
	workloads/param.c harness/parse.c harness/json.c

$(BUILD)/tests/workloads/test-zipf: $(WORKLOADS_TEST_SRC) $(wildcard workloads/*.h) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -MMD -MP,$(CFLAGS)) -Iworkloads -o $@ $(WORKLOADS_TEST_SRC) -lm

test-build:: $(WORKLOADS_TEST_BIN)
