# Guest side of the kernel work: initramfs, the QEMU launcher, conformance
# tests that run inside the guest.
#   make initramfs        build/vm/initramfs.cpio (rebuilt only when an input changes)
#   make vm [CMD='...'] [VM_OPTS='--mem 4G --align 4K ...']
#                         boot build/kernel/bzImage and run CMD (default: a smoke check)
#   make guest-tests      the in-guest test binaries under build/guest/
#   make test-kernel      build the kernel, then boot it and run the conformance tests
#   make fuzz [FUZZ_MINUTES=60] [FUZZ_SEED=N] [FUZZ_PROCS=4] [FUZZ_KERNEL=debug|normal]
#             [FUZZ_AVOID=private,mbind,readonly]  (known open bugs to leave out: fuzz-mshare --help)
#                         the mshare syscall fuzzer in the guest of the debug
#                         kernel (default) with --fail-on-warning; results in
#                         build/vm/fuzz-<time>-seed<N>/ (seed: the time unless given)
# Guest binaries live under build/guest/, never build/tests/: the host test
# runner executes build/tests/*/test-* on the host, where syscalls 451/452
# are something else.

GUEST_DIR      := $(BUILD)/guest
VM_DIR         := $(BUILD)/vm
INITRAMFS      := $(VM_DIR)/initramfs.cpio
# The conformance tests use the kernel's own kselftest_harness.h, taken from
# the linux-source-6.1 tarball into build/kselftest (KSFT_HDRS; not under
# build/guest, which goes into the initramfs); -isystem:
# its own code is not held to our -Wextra (its macros in our code are).
KSFT_DIR       := $(BUILD)/kselftest
KSFT_HDRS      := $(KSFT_DIR)/kselftest_harness.h $(KSFT_DIR)/kselftest.h
GUEST_CFLAGS   := -O2 -g $(CSTD) $(WARN) -static -Ikernel/include -Itests/kernel -isystem $(KSFT_DIR)
KTEST_SRCS     := $(wildcard tests/kernel/test-*.c)
KTEST_BINS     := $(KTEST_SRCS:tests/kernel/%.c=$(GUEST_DIR)/tests/kernel/%)
# Conformance of the 2025 series (the mshare-2025 flavour): their own guest
# directory, so the 2022 kernel's conformance run never starts them.
KTEST25_SRCS   := $(wildcard tests/kernel-2025/test-*.c)
KTEST25_BINS   := $(KTEST25_SRCS:tests/kernel-2025/%.c=$(GUEST_DIR)/tests/kernel-2025/%)
KTEST_HDRS     := $(wildcard tests/kernel/*.h) $(wildcard kernel/include/*.h) $(KSFT_HDRS)
GUEST_TOOLS    := $(GUEST_DIR)/bin/statx-dax $(GUEST_DIR)/bin/vm-smoke $(GUEST_DIR)/bin/fuzz-mshare \
                  $(GUEST_DIR)/bin/persist-guest $(GUEST_DIR)/bin/pt-accounting \
                  $(GUEST_DIR)/bin/tlb-counters
GUEST_FILES    := $(KTEST_BINS) $(KTEST25_BINS) $(GUEST_TOOLS)
# The benchmark binary goes in as `make` last built it (make vm does not
# rebuild it: a half-edited harness must not stop the VM from booting); a
# stamp holding its mtime and size triggers a new initramfs when it changes.
BENCH_STAMP    := $(VM_DIR)/bench-version
VM_INPUTS      := kernel/vm/mkinitramfs.sh kernel/vm/init $(GUEST_FILES) $(BENCH_STAMP)

CMD     ?= /guest/bin/vm-smoke
VM_OPTS ?=

.PHONY: guest-tests initramfs vm test-kernel FORCE
FORCE:

guest-tests: $(GUEST_FILES)

# Both headers come out of one extraction (about 30 s: the tarball is read
# until they are found); a new linux-source-6.1 package extracts them again.
$(KSFT_DIR)/kselftest.h: $(KSFT_DIR)/kselftest_harness.h
$(KSFT_DIR)/kselftest_harness.h: tests/kernel/lib/kselftest-headers.sh $(wildcard /usr/src/linux-source-6.1.tar.xz)
	tests/kernel/lib/kselftest-headers.sh $(KSFT_DIR)

$(GUEST_DIR)/tests/kernel/%: tests/kernel/%.c $(KTEST_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(GUEST_CFLAGS) -o $@ $<

$(GUEST_DIR)/tests/kernel-2025/%: tests/kernel-2025/%.c $(KTEST_HDRS) $(wildcard tests/kernel-2025/*.h) harness/mshare_detect.c harness/mshare_detect.h
	@mkdir -p $(dir $@)
	$(CC) $(GUEST_CFLAGS) -o $@ $<

$(GUEST_DIR)/bin/statx-dax: kernel/vm/statx-dax.c
	@mkdir -p $(dir $@)
	$(CC) $(GUEST_CFLAGS) -o $@ $<

# The mshare syscall fuzzer (not a TAP test: tests/kernel/debug-kernel.sh and
# make fuzz run it in the guest).
$(GUEST_DIR)/bin/pt-accounting: kernel/vm/pt-accounting.c kernel/include/proc-kb.h
	@mkdir -p $(dir $@)
	$(CC) $(GUEST_CFLAGS) -o $@ $<

$(GUEST_DIR)/bin/fuzz-mshare: tests/kernel/fuzz-mshare.c $(KTEST_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(GUEST_CFLAGS) -o $@ $<

# Writes through an mshare region over a DAX file, and reads the file back
# after a reboot (tests/kernel/reboot-persist.sh; either design).
$(GUEST_DIR)/bin/persist-guest: tests/kernel/persist-guest.c $(KTEST_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(GUEST_CFLAGS) -o $@ $<

# Known operations against the counters kernel's TLB and lock counters
# (tests/kernel/lifecycle-counters.sh).
$(GUEST_DIR)/bin/tlb-counters: tests/kernel/tlb-counters-guest.c
	@mkdir -p $(dir $@)
	$(CC) $(GUEST_CFLAGS) -pthread -o $@ $<

$(GUEST_DIR)/bin/vm-smoke: kernel/vm/smoke.sh
	@mkdir -p $(dir $@)
	cp $< $@ && chmod 755 $@

initramfs: $(INITRAMFS)

$(BENCH_STAMP): FORCE
	@mkdir -p $(VM_DIR)
	@v=$$(stat -c '%Y %s' $(BIN) 2>/dev/null || echo none); \
	[ "$$(cat $@ 2>/dev/null)" = "$$v" ] || echo "$$v" >$@

$(INITRAMFS): $(VM_INPUTS)
	@mkdir -p $(VM_DIR)
	kernel/vm/mkinitramfs.sh $@ $(GUEST_DIR) $(BIN)

vm: $(INITRAMFS)
	kernel/vm/run.sh --no-build $(VM_OPTS) -- '$(subst ','\'',$(CMD))'

test-kernel:
	$(MAKE) kernel
	tests/kernel/conformance.sh

FUZZ_MINUTES ?= 60
FUZZ_PROCS   ?= 4
FUZZ_KERNEL  ?= debug
.PHONY: fuzz
fuzz: guest-tests initramfs
	@case '$(FUZZ_MINUTES)' in ''|*[!0-9]*|0) echo "make fuzz: FUZZ_MINUTES='$(FUZZ_MINUTES)' is not a positive number of minutes" >&2; exit 2 ;; esac
	@case '$(FUZZ_KERNEL)' in debug) $(MAKE) --no-print-directory kernel-debug ;; normal) $(MAKE) --no-print-directory kernel ;; \
		*) echo "make fuzz: FUZZ_KERNEL='$(FUZZ_KERNEL)' (expected debug or normal)" >&2; exit 2 ;; esac
	@seed='$(FUZZ_SEED)'; [ -n "$$seed" ] || seed=$$(date +%s); \
	case "$$seed" in *[!0-9]*) echo "make fuzz: FUZZ_SEED='$$seed' is not a number" >&2; exit 2 ;; esac; \
	image=build/kernel/bzImage; [ '$(FUZZ_KERNEL)' = debug ] && image=build/kernel-debug/bzImage; \
	out=$(VM_DIR)/fuzz-$$(date -u +%Y%m%dT%H%M%SZ)-seed$$seed; mkdir -p "$$out"; \
	echo "make fuzz: $(FUZZ_MINUTES) min, seed $$seed, $(FUZZ_PROCS) processes, $$image; results in $$out"; \
	kernel/vm/run.sh --no-build --kernel "$$image" --mem 2G --fail-on-warning --crash-grace 300 \
		--timeout $$(( $(FUZZ_MINUTES) * 60 + 900 )) --out "$$out" -- \
		fuzz-mshare --seed "$$seed" --seconds $$(( $(FUZZ_MINUTES) * 60 )) --procs '$(FUZZ_PROCS)' \
		$(if $(FUZZ_AVOID),--avoid '$(FUZZ_AVOID)')

# The guest tests are compiled with everything else so a build error shows
# up in `make test`; they run only inside the guest.
test-build:: guest-tests
