#!/bin/sh
# test-timeout: 1200
# lock_stat around concurrent first-touch faults (issue 42, item 4;
# workloads/fault_locks.c) on the counters kernel (flavour mshare-counters:
# 6.1 + mshare v1 with CONFIG_LOCK_STAT) in a 4-vCPU guest (plain TCG:
# counts exact, times emulated and not checked). 8 workers on CPUs 0-3
# first-touch one 4 MiB region at once:
#   - mshare (v1): lock_stat is read (not false), and a sharer's fault takes
#     the host mm's mmap_lock nested (class &mm->mmap_lock/1, patch 0027):
#     its acquisitions are not zero;
#   - MAP_SHARED of the DAX file, 4 KiB pages: each worker faults every
#     page in its own mm, taking its own mmap_lock and a page-table lock:
#     at least one acquisition of each per fault the harness counted, and
#     no nested mmap_lock (there is no host mm);
#   - the workers ran on all 4 CPUs.
# Each check fails when lock_stat is not read or its parsing gives zeros.
# A kernel without LOCK_STAT (lock_stat false and why) is checked on the
# host (tests/workloads/workloads_test.py, test_fault_locks); the parser
# against a real lock_stat's lines by build/tests/workloads/test-lock-stat.
#
# Gated like tests/kernel/lifecycle-counters.sh (MSHARE_COUNTERS_TESTS=1;
# `make test` sets it when the kernel cache holds the image, `make
# test-counters` builds or copies it and runs both).
# Results: build/vm/lifecycle-fault-locks.XXXXXX/.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
. tests/kernel/lib/guest.sh

if [ "${MSHARE_SKIP_GUEST:-0}" != 1 ] && [ "${MSHARE_COUNTERS_TESTS:-0}" != 1 ]; then
	skip "counters kernel (mshare-counters): lock_stat around concurrent first-touch faults" \
		"the mshare-counters kernel is not in the kernel cache (make kernel-counters builds it: 28 min cold on the loaded 2-core host, 1686 s on Dec 7; make test runs this test when it is cached; make test-counters builds it and runs this test)"
	finish
fi
KERNEL_TEST_IMAGE=${KERNEL_TEST_IMAGE:-build/kernel-counters/bzImage}
guest_require "counters kernel (mshare-counters)"
guest_setup lifecycle-fault-locks
echo "# lifecycle-fault-locks: booting $KERNEL_TEST_IMAGE (key $(cat "$(dirname "$KERNEL_TEST_IMAGE")/key" 2>/dev/null)), 4 vCPUs, --clock tcg (log $out.vm.log)"
t0=$(date +%s)
kernel/vm/run.sh --kernel "$KERNEL_TEST_IMAGE" --cpus 4 --clock tcg --mem 3G --pmem 2 --align 2M --timeout 900 \
	--out "$out" -- sh -c "
r() { name=\$1; shift; mshare-bench run --workload fault-locks --quiet --cpus 0-3 --write --size 4M --workers 8 \"\$@\" --out /out/\$name.json 2>/out/\$name.err || echo \$name >>/out/failed.txt; }
r mshare --backend mshare --path /mnt/pmem --page 4k
r dax4k --backend file --path /mnt/pmem --page 4k
" >"$out.vm.log" 2>&1 &
progress_name=lifecycle-fault-locks
guest_wait $! guest_progress
guest_ran $? "8 workers first-touching one region at once, mshare and DAX 4K, in the 4-vCPU guest ($(($(date +%s) - t0)) s)" "$out.vm.log"
PYTHONPATH=tests/lib python3 - "$out" "$TAP_N" <<'PY'
import os, sys
import tap
t, out, rec = tap.guest_results(sys.argv)
tap.guest_commands_ok(t, out, "every guest run finished")
tap.guest_had(t, out, 4, "guest-tcg-ns")


def load(name):
    try:
        r = rec(name + ".json")
        return r["results"]["workload"], r["results"].get("fault_cost") or {}
    except (OSError, KeyError, ValueError):
        return {}, {}


def faults(fc):
    return ((fc.get("faults") or {}).get("faults_taken") or 0) + ((fc.get("preempted") or {}).get("faults") or 0)


w, fc = load("mshare")
ls = w.get("lock_stat")
t.ok(isinstance(ls, dict), "mshare: lock_stat read around the touch (%s)"
     % (ls if not isinstance(ls, dict) else "an object") + ("; why: %s" % w.get("lock_stat_unavailable_why")
                                                           if ls is False else ""))
ls = ls if isinstance(ls, dict) else {}
t.ok(ls.get("mmap_lock_nested_acquisitions", 0) > 0 and w.get("workers_done") == 8,
     "mshare (v1): 8 sharers faulting at once take the host mm's mmap_lock (nested class) %s times; %s faults "
     "(all mmap_lock classes: %s acquisitions, %s contentions)"
     % (ls.get("mmap_lock_nested_acquisitions"), faults(fc), ls.get("mmap_lock_acquisitions"),
        ls.get("mmap_lock_contentions")))
t.ok(w.get("worker_cpus") == "0xf", "the workers touched from all 4 CPUs (--cpus 0-3; worker_cpus %s)"
     % w.get("worker_cpus"))

w, fc = load("dax4k")
ls = w.get("lock_stat") if isinstance(w.get("lock_stat"), dict) else {}
n = faults(fc)
t.ok(n >= 8 * 1024 * 9 // 10 and ls.get("mmap_lock_acquisitions", 0) >= n and ls.get("ptl_acquisitions", 0) >= n,
     "MAP_SHARED DAX 4K: %d faults of 8 workers in their own mms, each with its mmap_lock (%s acquisitions) and a "
     "page-table lock (%s)" % (n, ls.get("mmap_lock_acquisitions"), ls.get("ptl_acquisitions")))
t.ok(ls.get("mmap_lock_nested_acquisitions") == 0,
     "MAP_SHARED DAX 4K: no nested mmap_lock (no host mm; %s)" % ls.get("mmap_lock_nested_acquisitions"))
top = ls.get("most_contended")
t.ok(isinstance(top, list) and all(c.get("lock_contentions", 0) > 0 and c.get("class") for c in top),
     "the most contended classes are listed with their contentions (%s)"
     % ", ".join("%s %s" % (c.get("class"), c.get("lock_contentions")) for c in (top or [])[:4]))
t.done()
PY
