# mshare-bench top-level Makefile.
#   make          build build/mshare-bench (installs Debian packages if missing)
#   make test     build (the patched kernel too) and run every test; ends with
#                 "N passed, N failed, N skipped" (MSHARE_SKIP_GUEST=1: no guest tests)
#   make bench    the main job: deps, build, default sweep, plots, summary
# Areas add their own targets in <area>/*.mk, included below, so that
# adding a piece of the suite does not mean editing this file.

CC      ?= cc
CSTD    := -std=c11 -D_GNU_SOURCE
WARN    := -Wall -Wextra -Werror
CFLAGS  ?= -O2 -g
CFLAGS  += $(CSTD) $(WARN) -Iharness -Iplanner -Icli -I$(BUILD)/gen -MMD -MP
# libpmem is not linked: harness/pmem_lib.c loads it for the runs that persist
# with it. -z now: every symbol is bound at start, in the parent, so a worker
# does not dirty its own copy of the GOT on its first calls (8 KiB less
# private memory per worker, measured).
LDLIBS  += -lnuma -lhwloc -ljansson -lm -ldl
LDFLAGS += -Wl,-z,now

BUILD   := build
BIN     := $(BUILD)/mshare-bench
SRCS    := $(wildcard cli/*.c) $(wildcard harness/*.c) $(wildcard workloads/*.c) $(wildcard planner/*.c)
OBJS    := $(SRCS:%.c=$(BUILD)/obj/%.o)

# Stamp that records the Debian packages are present; deps.sh checks
# with dpkg and installs only what is missing.
DEPS_STAMP := $(BUILD)/.deps-ok

.PHONY: all deps test test-build clean
all: $(BIN)

deps:
	@scripts/deps.sh

$(DEPS_STAMP): scripts/deps.sh
	@scripts/deps.sh
	@mkdir -p $(BUILD) && touch $@

# The tool's version, from git at build time; the header is rewritten only
# when the version changes, so it does not force rebuilds.
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo unknown)
VERSION_H := $(BUILD)/gen/version.h
.PHONY: version-check
version-check:
	@mkdir -p $(BUILD)/gen
	@echo '#define MSHARE_BENCH_VERSION "$(VERSION)"' > $(VERSION_H).new
	@cmp -s $(VERSION_H).new $(VERSION_H) && rm -f $(VERSION_H).new || mv $(VERSION_H).new $(VERSION_H)
$(VERSION_H): version-check

$(BUILD)/obj/%.o: %.c | $(DEPS_STAMP) $(VERSION_H)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BIN): $(OBJS)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Areas add their test binaries with `test-build:: <targets>` in their .mk.
test-build:: $(BIN)

# The kernel and guest tests boot the patched kernel: `make test` builds it
# (or copies it from the cache) first, and they fail when the guest cannot
# boot. MSHARE_SKIP_GUEST=1 skips them (and the kernel builds), saying so.
# The debug-kernel tier (tests/kernel/debug-kernel.sh: KASAN, lockdep, ...)
# is part of it: the debug flavour is built (or copied) too.
# MSHARE_SKIP_DEBUG=1 skips that tier and its build, saying so
# (make test-debug runs the tier alone).
# Set-up is quiet (scripts/step): one line per step, its output in build/logs/.
test:
	@scripts/deps.sh --tests
	@scripts/step test-build "build: compiling the harness and the test binaries" $(MAKE) --no-print-directory test-build
	@if [ "$(MSHARE_SKIP_GUEST)" = 1 ]; then \
		echo "make test: MSHARE_SKIP_GUEST=1: the kernel and guest tests are skipped, the patched kernel is not built"; \
	else \
		$(MAKE) --no-print-directory kernel || { echo "make test: make kernel failed (see above); the kernel and guest tests need it (MSHARE_SKIP_GUEST=1 make test runs the others)" >&2; exit 1; }; \
		if [ "$(MSHARE_SKIP_DEBUG)" != 1 ]; then case "tests/kernel/debug-kernel.sh" in *"$(TEST_FILTER)"*) \
			$(MAKE) --no-print-directory kernel-debug || echo "make test: make kernel-debug failed (see above); tests/kernel/debug-kernel.sh will fail (MSHARE_SKIP_DEBUG=1 make test skips the debug tier)" >&2 ;; \
		esac; else echo "make test: MSHARE_SKIP_DEBUG=1: the debug-kernel tier is skipped, the debug kernel is not built"; fi; \
	fi; \
	$(call cached_tier,mshare-2025,MSHARE_2025_TESTS,test-2025) \
	$(call cached_tier,mshare-2025-debug,MSHARE_2025_DEBUG_TESTS,test-2025-debug) \
	$(call cached_tier,mshare-deb,MSHARE_DEB_TESTS,test-deb) \
	$(call cached_tier,mshare-counters,MSHARE_COUNTERS_TESTS,test-counters) \
	$(call cached_tier,mshare-2025-counters,MSHARE_2025_COUNTERS_TESTS,test-2025-counters) \
	tests/run-tests.sh

# $(call cached_tier,FLAVOUR,VARIABLE,TARGET): shell text for the test recipe.
# The tier of kernel FLAVOUR runs (VARIABLE=1 exported) when the kernel cache
# holds its image, copied by kernel/quiet-build.sh with
# MSHARE_KERNEL_CACHED_ONLY=1; its exit 3 (not cached) is a skip said in one
# line, not a make error; another failure prints its output and skips too.
cached_tier = \
	if [ "$(MSHARE_SKIP_GUEST)" != 1 ] && [ -z "$($(2))" ]; then \
		rc=0; msg=$$(MSHARE_KERNEL_CACHED_ONLY=1 MSHARE_KERNEL_FLAVOUR=$(1) kernel/quiet-build.sh 2>&1) || rc=$$?; \
		case $$rc in \
		0) echo "$$msg"; export $(2)=1 ;; \
		3) echo "make test: the $(1) tier is skipped: its kernel is not in the kernel cache (make $(3) builds it, then runs the tier)" ;; \
		*) echo "$$msg" >&2; echo "make test: the $(1) tier is skipped: copying its kernel from the cache failed (exit $$rc, see above)" >&2 ;; \
		esac; \
	fi;

# The debug-kernel tier alone (KASAN, lockdep, ...; tests/kernel/debug-kernel.sh).
.PHONY: test-debug
test-debug: test-build
	@$(MAKE) --no-print-directory test MSHARE_SKIP_DEBUG=0 TEST_FILTER=kernel/debug-kernel

# The 2025 mshare series on Linux 6.12 (issue 17). `make test` runs its tier
# when the kernel cache holds its image (copied, never built there: a cold
# build would push a cold CI run past its time); `make test-2025` builds (or
# copies) build/kernel-2025/bzImage, boots it and runs tests/kernel-2025/
# (conformance and reboot persistence; the debug tier skips, saying so).
.PHONY: test-2025
test-2025: test-build
	@$(MAKE) --no-print-directory kernel-2025
	@MSHARE_2025_TESTS=1 TEST_FILTER=kernel-2025/ tests/run-tests.sh

# The same series under KASAN, lockdep, DEBUG_VM, ... (kernel flavour
# mshare-2025-debug; tests/kernel-2025/debug.sh). `make test` runs it when
# the cache holds the image; this target builds (or copies) it first.
.PHONY: test-2025-debug
test-2025-debug: test-build
	@$(MAKE) --no-print-directory kernel-2025-debug
	@MSHARE_2025_DEBUG_TESTS=1 TEST_FILTER=kernel-2025/debug tests/run-tests.sh

# The packaged kernel for a real machine (issue 28; kernel flavour
# mshare-deb, .debs from make bindeb-pkg). `make test` runs
# tests/kernel/deb-boot.sh when the kernel cache holds its image (copied,
# never built there: its cold build took 32 min on 2 cores); `make test-deb`
# builds (or copies) build/kernel-deb/ first, then runs it.
.PHONY: test-deb
test-deb: test-build
	@$(MAKE) --no-print-directory kernel-deb
	@MSHARE_DEB_TESTS=1 TEST_FILTER=kernel/deb-boot tests/run-tests.sh

# The counters flavour (issue 42; kernel flavour mshare-counters: vmstat TLB
# flush counts and LOCK_STAT on 6.1 + v1). `make test` runs
# tests/kernel/lifecycle-counters.sh and lifecycle-fault-locks.sh when the
# kernel cache holds its image;
# `make test-counters` builds (or copies) build/kernel-counters/ first.
.PHONY: test-counters
test-counters: test-build
	@$(MAKE) --no-print-directory kernel-counters
	@MSHARE_COUNTERS_TESTS=1 TEST_FILTER=kernel/lifecycle tests/run-tests.sh

# The 6.12 counters flavour (issue 42; mshare-2025-counters: 6.12 + v3 with
# the vmstat TLB counts, LOCK_STAT and kprobe events). `make test` runs
# tests/kernel-2025/counters.sh when the kernel cache holds its image;
# `make test-2025-counters` builds (or copies) build/kernel-2025-counters/ first.
.PHONY: test-2025-counters
test-2025-counters: test-build
	@$(MAKE) --no-print-directory kernel-2025-counters
	@MSHARE_2025_COUNTERS_TESTS=1 TEST_FILTER=kernel-2025/counters tests/run-tests.sh

clean:
	rm -rf $(BUILD)/obj $(BUILD)/tests $(BIN)

-include $(OBJS:.o=.d)
-include $(wildcard */*.mk)
