#!/bin/sh
# test-timeout: 1800
# The 6.12 counters kernel (issue 42; flavour mshare-2025-counters: 6.12 +
# the 2025 series v3 with CONFIG_DEBUG_TLBFLUSH's vmstat TLB counts,
# CONFIG_LOCK_STAT and kprobe events) in a 4-vCPU guest (plain TCG: counts
# exact, times emulated and not checked). Known operations against the
# counters, as tests/kernel/lifecycle-counters.sh checks them on 6.1, with
# 6.12's meaning of nr_tlb_remote_flush: it counts flush_tlb_multi() calls,
# whose cpumask is trimmed only once a second (should_trim_cpumask), so a
# process that ran on one CPU may still count them; what reached another CPU
# is nr_tlb_remote_flush_received and the TLB shootdown interrupts:
#   - munmaps of a region a thread on CPU 1 touched: at least one received
#     flush and one TLB shootdown interrupt each; the same munmaps by a
#     process that only ran on CPU 0: none received, no TLB interrupt;
#   - lock_stat: at least one mmap_lock acquisition per mmap/munmap call;
#   - lifecycle, 10 workers, 3 spinning on CPUs 1-3: MAP_SHARED DAX 4K, a
#     hole punch reaches the 3 spinners' CPUs (received >= 3, TLB >= 3); the
#     2025 design over the DAX file refuses mprotect (EINVAL) and cannot
#     punch its file (ENOENT, with the reason), recorded as refused, not
#     zeros;
#   - fault-locks, 8 workers first-touching one region at once over the 2025
#     design: lock_stat read, at least one mmap_lock acquisition per fault.
# Each check fails when its counter is missing or does not move.
#
# make test runs it when the kernel cache holds the mshare-2025-counters
# image (MSHARE_2025_COUNTERS_TESTS=1); make test-2025-counters builds or
# copies it first. Results: build/vm/counters-2025.XXXXXX/.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
. tests/kernel/lib/guest.sh

if [ "${MSHARE_SKIP_GUEST:-0}" != 1 ] && [ "${MSHARE_2025_COUNTERS_TESTS:-0}" != 1 ]; then
	skip "6.12 counters kernel (mshare-2025-counters): TLB flush and lock counts of known operations" \
		"the mshare-2025-counters kernel is not in the kernel cache (make kernel-2025-counters builds it: 54 min cold on the loaded 2-core host, Dec 7; make test runs this test when it is cached; make test-2025-counters builds it and runs this test)"
	finish
fi
KERNEL_TEST_IMAGE=${KERNEL_TEST_IMAGE:-build/kernel-2025-counters/bzImage}
guest_require "6.12 counters kernel (mshare-2025-counters)"
guest_setup counters-2025
echo "# counters-2025: booting $KERNEL_TEST_IMAGE (key $(cat "$(dirname "$KERNEL_TEST_IMAGE")/key" 2>/dev/null)), 4 vCPUs, --clock tcg (log $out.vm.log)"
t0=$(date +%s)
kernel/vm/run.sh --kernel "$KERNEL_TEST_IMAGE" --cpus 4 --clock tcg --mem 3G --pmem 2 --align 2M --timeout 1500 \
	--out "$out" -- sh -c "
/guest/bin/tlb-counters 20 >/out/tlb.txt 2>/out/tlb.err || echo tlb-counters >>/out/failed.txt
r() { name=\$1; shift; mshare-bench run --quiet --cpus 0-3 --write \"\$@\" --out /out/\$name.json 2>/out/\$name.err || echo \$name >>/out/failed.txt; }
r lc-dax4k --workload lifecycle --size 8M --touch-stride 64K --backend file --path /mnt/pmem --page 4k --workers 10
r lc-v3 --workload lifecycle --size 8M --touch-stride 64K --backend mshare-2025-file --path /mnt/pmem --page any --workers 10
r fl-v3 --workload fault-locks --size 4M --backend mshare-2025-file --path /mnt/pmem --page any --workers 8
" >"$out.vm.log" 2>&1 &
progress_name=counters-2025
guest_wait $! guest_progress
guest_ran $? "the known operations, lifecycle and fault-locks runs in the 4-vCPU 6.12 guest ($(($(date +%s) - t0)) s)" "$out.vm.log"
PYTHONPATH=tests/lib python3 - "$out" "$TAP_N" <<'PY'
import os, sys
import tap
t, out, rec = tap.guest_results(sys.argv)
tap.guest_commands_ok(t, out, "every guest command finished", {"tlb-counters": "tlb"})
tap.guest_had(t, out, 4, "guest-tcg-ns")
lines = tap.tlb_counter_lines(out)
oc, al, lk = lines.get("other_cpu", {}), lines.get("alone", {}), lines.get("lock", {})
n = oc.get("munmaps", 0)
t.ok(n > 0 and oc.get("nr_tlb_remote_flush_received", 0) >= n and oc.get("irq_tlb_shootdowns", 0) >= n,
     "%d munmaps of a region a thread on CPU 1 touched: at least one received flush and one TLB shootdown "
     "interrupt each (%s)" % (n, oc))
t.ok(al.get("munmaps", 0) > 0 and al.get("nr_tlb_remote_flush_received", -1) == 0
     and al.get("irq_tlb_shootdowns", -1) == 0,
     "the same munmaps by a process that only ran on CPU 0: none received, no TLB interrupt (6.12 may still count "
     "nr_tlb_remote_flush: %s; %s)" % (al.get("nr_tlb_remote_flush"), al))
t.ok(lk.get("mmap_lock_classes", 0) >= 1 and lk.get("mmap_lock_acquisitions", 0) >= lk.get("mmap_calls", 1),
     "lock_stat: %s mmap/munmap calls on two CPUs, at least one mmap_lock acquisition each (%s)"
     % (lk.get("mmap_calls"), lk))


def wl(name):
    try:
        r = rec(name + ".json")
        return r["results"]["workload"], r["results"].get("fault_cost") or {}
    except (OSError, KeyError, ValueError):
        return {}, {}


def count(o, op, key):
    return (((o.get(op) or {}).get("counts") or {}).get(key) or {}).get("min")


w, _ = wl("lc-dax4k")
o = w.get("ops") or {}
avail = w.get("counters_available") or {}
t.ok(len(avail) == 6 and all(avail.values()),
     "lifecycle on 6.12: every counter source available (%s; %s)" % (avail, w.get("counters_unavailable_why")))
rc, ti = count(o, "punch_hole", "nr_tlb_remote_flush_received"), count(o, "punch_hole", "irq_tlb_shootdowns")
t.ok(rc is not None and rc >= 3 and (ti or 0) >= 3,
     "MAP_SHARED DAX 4K: a hole punch under 10 mappings reaches the 3 spinners' CPUs (received %s, TLB interrupts %s)"
     % (rc, ti))
w, _ = wl("lc-v3")
o = w.get("ops") or {}
mp, ph = o.get("mprotect_ro") or {}, o.get("punch_hole") or {}
t.ok(mp.get("errno") == "EINVAL" and not mp.get("counts") and ph.get("errno") == "ENOENT" and ph.get("refused")
     and not ph.get("counts") and (o.get("munmap") or {}).get("rounds") == 1,
     "the 2025 design: mprotect refused (EINVAL), the hole punch refused with its reason (%s: %s), no counts for "
     "either; munmap done" % (ph.get("errno"), ph.get("refused")))
w, fc = wl("fl-v3")
ls = w.get("lock_stat") if isinstance(w.get("lock_stat"), dict) else {}
faults = ((fc.get("faults") or {}).get("faults_taken") or 0) + ((fc.get("preempted") or {}).get("faults") or 0)
t.ok(w.get("workers_done") == 8 and faults > 0 and ls.get("mmap_lock_acquisitions", 0) >= faults,
     "fault-locks over the 2025 design: 8 workers, %d faults, %s mmap_lock acquisitions (%s nested), %s "
     "contentions" % (faults, ls.get("mmap_lock_acquisitions"), ls.get("mmap_lock_nested_acquisitions"),
                      ls.get("mmap_lock_contentions")))
t.done()
PY
