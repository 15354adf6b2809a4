# Patched mshare kernel (see kernel/README.md).
#   make kernel          build or reuse the cached image; leaves build/kernel/bzImage
#   make kernel DEBUG=1  the debug flavour (KASAN, lockdep, DEBUG_VM, SLUB debug,
#                        PAGE_TABLE_CHECK, hung tasks); leaves build/kernel-debug/bzImage
#                        (FLAVOUR=debug and `make kernel-debug` do the same)
#   make kernel FLAVOUR=mshare-2025 (or make kernel-2025)
#                        opt-in: the 2025 mshare series, v3, on linux-source-6.12
#                        (kernel/patches-2025, config/mshare-2025.config);
#                        leaves build/kernel-2025/bzImage; not built by make test
#   make kernel-2025-v2  the v2 port (kernel/patches-2025-v2) that made the
#                        Dec 3 mshare-2025 records; build/kernel-2025-v2/bzImage
#   make kernel FLAVOUR=mshare-2025-debug (or make kernel-2025-debug)
#                        the same under config/debug.config (KASAN, lockdep, ...);
#                        leaves build/kernel-2025-debug/bzImage; not built by make test
#   make kernel-deb      opt-in: mshare v1 on x86_64_defconfig + config/mshare-deb.config
#                        as Debian packages (bindeb-pkg) for a real machine; leaves
#                        build/kernel-deb/*.deb and bzImage; not built by make test
#   make kernel-counters (or FLAVOUR=mshare-counters), make kernel-2025-counters
#                        opt-in (issue 42): the normal or the mshare-2025 flavour with
#                        config/mshare-counters.config (vmstat TLB flush counts,
#                        LOCK_STAT); build/kernel-counters, build/kernel-2025-counters;
#                        not built by make test
#   make kernel-clean    remove build/kernel and build/kernel-debug (the shared
#                        cache stays; kernel/build.sh --purge drops it)
# They run kernel/build.sh through kernel/quiet-build.sh: a line per step,
# the whole output in build/logs/kernel-FLAVOUR.log, a labelled image line.
KERNEL_FLAVOUR := $(if $(filter 1 yes y,$(DEBUG)),debug,$(if $(FLAVOUR),$(FLAVOUR),normal))
.PHONY: kernel kernel-debug kernel-2025 kernel-2025-v2 kernel-2025-debug kernel-deb kernel-counters kernel-2025-counters kernel-clean
kernel:
	@MSHARE_KERNEL_FLAVOUR=$(KERNEL_FLAVOUR) kernel/quiet-build.sh

kernel-debug:
	@kernel/quiet-build.sh --debug

kernel-2025:
	@MSHARE_KERNEL_FLAVOUR=mshare-2025 kernel/quiet-build.sh

# The v2 port (patches-2025-v2/) that made the Dec 3 mshare-2025 records.
kernel-2025-v2:
	@MSHARE_KERNEL_FLAVOUR=mshare-2025-v2 kernel/build.sh

kernel-2025-debug:
	@MSHARE_KERNEL_FLAVOUR=mshare-2025-debug kernel/quiet-build.sh

kernel-counters:
	@MSHARE_KERNEL_FLAVOUR=mshare-counters kernel/quiet-build.sh

kernel-2025-counters:
	@MSHARE_KERNEL_FLAVOUR=mshare-2025-counters kernel/quiet-build.sh

kernel-clean:
	@kernel/build.sh --clean
	@kernel/build.sh --debug --clean
	@MSHARE_KERNEL_FLAVOUR=mshare-2025 kernel/build.sh --clean
	@MSHARE_KERNEL_FLAVOUR=mshare-2025-v2 kernel/build.sh --clean
	@MSHARE_KERNEL_FLAVOUR=mshare-2025-debug kernel/build.sh --clean
	@MSHARE_KERNEL_FLAVOUR=mshare-deb kernel/build.sh --clean
	@MSHARE_KERNEL_FLAVOUR=mshare-counters kernel/build.sh --clean
	@MSHARE_KERNEL_FLAVOUR=mshare-2025-counters kernel/build.sh --clean

# mshare v1 for a real machine (issue 28): x86_64_defconfig +
# config/mshare-deb.config as Debian packages (make bindeb-pkg); leaves the
# .debs and bzImage in build/kernel-deb/. Not built by make test.
.PHONY: kernel-deb
kernel-deb:
	@MSHARE_KERNEL_FLAVOUR=mshare-deb kernel/quiet-build.sh
