# Patched mshare kernel (see kernel/README.md).
#   make kernel          build or reuse the cached image; leaves build/kernel/bzImage
#   make kernel DEBUG=1  the debug flavour (KASAN, lockdep, DEBUG_VM, SLUB debug,
#                        PAGE_TABLE_CHECK, hung tasks); leaves build/kernel-debug/bzImage
#                        (FLAVOUR=debug and `make kernel-debug` do the same)
#   make kernel-clean    remove build/kernel and build/kernel-debug (the shared
#                        cache stays; kernel/build.sh --purge drops it)
KERNEL_FLAVOUR := $(if $(filter 1 yes y,$(DEBUG)),debug,$(if $(FLAVOUR),$(FLAVOUR),normal))
.PHONY: kernel kernel-debug kernel-clean
kernel:
	@MSHARE_KERNEL_FLAVOUR=$(KERNEL_FLAVOUR) kernel/build.sh

kernel-debug:
	@kernel/build.sh --debug

kernel-clean:
	@kernel/build.sh --clean
	@kernel/build.sh --debug --clean
