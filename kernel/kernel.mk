# Patched mshare kernel (see kernel/README.md).
#   make kernel        build or reuse the cached image; leaves build/kernel/bzImage
#   make kernel-clean  remove build/kernel (the shared cache stays; kernel/build.sh --purge drops it)
.PHONY: kernel kernel-clean
kernel:
	@kernel/build.sh

kernel-clean:
	@kernel/build.sh --clean
