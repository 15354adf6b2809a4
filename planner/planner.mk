# Capacity planner (`mshare-bench plan`): its test binaries and figure.
#   make plan-plot [RUN=RUN_DIR] [SGA=300G PROCESSES=1500 RAM=512G]
#                                  draw plots/planner.gp: the scenario (default
#                                  the cover letter's) and, with RUN, the run's
#                                  measured points (build/plots/planner.{png,svg});
#                                  `plan ... --plot FILE.svg` draws one plan
PLANNER_SRCS := $(wildcard planner/*.c)
# harness/parse.c: the suite's one parser of sizes, addresses and counts; harness/opts.c: the option tables.
PLANNER_OBJS := $(PLANNER_SRCS:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/harness/parse.o $(BUILD)/obj/harness/opts.o \
	$(BUILD)/obj/harness/json.o

# A driver that calls plan_main() alone, so the planner is testable
# without the harness; and the model's unit test.
$(BUILD)/tests/planner/plan-driver: tests/planner/plan_driver.c $(PLANNER_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Iplanner -o $@ $^ -ljansson -lm

$(BUILD)/tests/planner/test-pt-model: tests/planner/test-pt-model.c tests/lib/tap.h $(PLANNER_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Iplanner -o $@ $< $(PLANNER_OBJS) -ljansson -lm

$(BUILD)/tests/planner/test-json-read: tests/planner/test-json-read.c tests/lib/tap.h $(PLANNER_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Iplanner -o $@ $< $(PLANNER_OBJS) -ljansson -lm

test-build:: $(BUILD)/tests/planner/plan-driver $(BUILD)/tests/planner/test-pt-model \
	$(BUILD)/tests/planner/test-json-read

# The same with AddressSanitizer + UBSan (as in tests/tests.mk): the model's unit test runs as test-pt-model-asan, the
# driver serves plan --pid in tests/planner/pid-postgres.sh.
# (tests/tests.mk is read after this file: the same two settings here.)
PLANNER_ASAN_SRCS := $(PLANNER_SRCS) harness/parse.c harness/opts.c harness/json.c
SANITIZE_FLAGS ?= -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
SANITIZE_OK ?= $(shell echo 'int main(void){return 0;}' | $(CC) $(SANITIZE_FLAGS) -x c - -o /dev/null 2>/dev/null && echo yes)
ifeq ($(SANITIZE_OK),yes)
$(BUILD)/tests/planner/test-pt-model-asan: tests/planner/test-pt-model.c tests/lib/tap.h $(PLANNER_ASAN_SRCS) planner/*.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -O1 $(SANITIZE_FLAGS) -Iplanner -o $@ $< $(PLANNER_ASAN_SRCS) -ljansson -lm

$(BUILD)/tests/planner/plan-driver-asan: tests/planner/plan_driver.c $(PLANNER_ASAN_SRCS) planner/*.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -O1 $(SANITIZE_FLAGS) -Iplanner -o $@ $< $(PLANNER_ASAN_SRCS) -ljansson -lm

$(BUILD)/tests/planner/test-json-read-asan: tests/planner/test-json-read.c tests/lib/tap.h $(PLANNER_ASAN_SRCS) planner/*.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -O1 $(SANITIZE_FLAGS) -Iplanner -o $@ $< $(PLANNER_ASAN_SRCS) -ljansson -lm

test-build:: $(BUILD)/tests/planner/test-pt-model-asan $(BUILD)/tests/planner/plan-driver-asan \
	$(BUILD)/tests/planner/test-json-read-asan
endif

.PHONY: plan-plot
plan-plot: $(BIN)
	@mkdir -p $(BUILD)/plots
	@for fmt in png svg; do \
		gnuplot -e "rundir='$(RUN)'" -e "out='$(abspath $(BUILD))/plots/planner'" -e "fmt='$$fmt'" \
			-e "sga='$(SGA)'" -e "processes='$(PROCESSES)'" -e "ram='$(RAM)'" \
			-e "common='$(abspath plots/common.gp)'" -e "root='$(abspath .)'" plots/planner.gp || exit 1; \
		echo "$(BUILD)/plots/planner.$$fmt"; \
	done
