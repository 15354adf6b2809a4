# workloads/postgres/postgres.mk - PostgreSQL on mshare (issue 15; workloads/postgres/README.md).
#   make pg-mshare        build/postgres/pg-mshare.so, the LD_PRELOAD library
#   make pg-initramfs     build/vm/initramfs-pg.cpio: the guest initramfs plus PostgreSQL 15
PG_MSHARE_SO := $(BUILD)/postgres/pg-mshare.so
# The library's check without PostgreSQL (a dynamic guest binary: it runs
# under LD_PRELOAD; mkinitramfs.sh copies its libraries).
PG_MSHARE_CHECK := $(GUEST_DIR)/bin/pg-mshare-check
# Each backend's pages and 2 MiB spans of the segment (a static guest tool).
PG_TOUCH := $(GUEST_DIR)/bin/pg-touch
PG_INITRAMFS := $(BUILD)/vm/initramfs-pg.cpio
PG_GUEST_SCRIPTS := $(wildcard workloads/postgres/guest/*.sh)

$(PG_MSHARE_SO): workloads/postgres/pg_mshare.c harness/mshare_detect.c harness/mshare_detect.h kernel/include/mshare-uapi.h harness/linux_compat.h
	@mkdir -p $(dir $@)
	$(CC) -O2 -g $(CSTD) $(WARN) -fPIC -shared -o $@ $< harness/mshare_detect.c

$(PG_TOUCH): workloads/postgres/pg-touch.c
	@mkdir -p $(dir $@)
	$(CC) $(GUEST_CFLAGS) -o $@ $<

$(PG_MSHARE_CHECK): workloads/postgres/pg-mshare-check.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g $(CSTD) $(WARN) -pthread -o $@ $<

.PHONY: pg-mshare pg-initramfs
pg-mshare: $(PG_MSHARE_SO)
pg-initramfs: $(PG_INITRAMFS)
$(PG_INITRAMFS): kernel/vm/mkinitramfs.sh kernel/vm/init workloads/postgres/initramfs-extra.sh \
		$(PG_GUEST_SCRIPTS) $(PG_MSHARE_SO) $(PG_MSHARE_CHECK) $(PG_TOUCH) $(GUEST_FILES) $(BENCH_STAMP)
	@mkdir -p $(dir $@)
	PG_MSHARE_SO=$(PG_MSHARE_SO) kernel/vm/mkinitramfs.sh $@ $(GUEST_DIR) $(BIN) workloads/postgres/initramfs-extra.sh

test-build:: $(PG_MSHARE_SO) $(PG_MSHARE_CHECK) $(PG_TOUCH)

# A PostgreSQL sweep (bench/sweeps/postgres*.sweep: workload postgres,
# ordinary specs run by bench/sweep, issue 45) with what its guest points
# boot built first (the kernel, the PostgreSQL initramfs):
#   make pg-sweep [PG_SPEC=NAME|FILE]
PG_SPEC ?= postgres
.PHONY: pg-sweep
pg-sweep: $(BIN) $(PG_INITRAMFS)
	@$(MAKE) --no-print-directory kernel
	@run=$$(bench/sweep $(PG_SPEC)); rc=$$?; [ -n "$$run" ] && echo "run directory: $$run"; exit $$rc
