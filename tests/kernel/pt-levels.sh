#!/bin/sh
# test-timeout: 1200
# Every page-table level counted (issue 46), in the guest on Linux 6.1, whose
# /proc/meminfo PageTables leaves PUD pages out. The harness measures that
# (its probe: one page in an empty 512 GiB slot grows VmPTE by 3 pages,
# PageTables by 2) and adds the PUD pages a kprobe on __pud_alloc counted
# between the baseline and the parked point. Exact counts, each worker's
# region being alone in its 512 GiB slot (at 2 TiB):
#   - MAP_SHARED DAX 4K, 10 workers over 256 MiB: 10 PUD pages added
#     (one per worker), all levels = PageTables growth + 40 KiB;
#   - hugetlb-2m over 1 GiB (whole, aligned: the PMD page shared), 20
#     workers: PageTables grows by the one shared PMD page, 4 KiB, and
#     all levels by 4 KiB + 20 PUD pages: the "4 KiB at 10,000 workers" of
#     the records before schema 8 was an accounting artefact;
#   - mshare over the DAX file, 10 workers: the region's tables are the host
#     mm's, so at most its own PUD page or two are added, never one per
#     worker;
#   - mshare with 2 MiB leaves over the DAX file at 1 GiB: the shared tables
#     hold one PMD page and no PTE page, and the record says 2 MiB leaves.
# Fails when the guest cannot run; skips only with MSHARE_SKIP_GUEST=1.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
. tests/kernel/lib/guest.sh
guest_require "page-table levels in the guest"
guest_setup pt-levels
echo "# pt-levels: booting the patched kernel (log $out.vm.log)"
t0=$(date +%s)
kernel/vm/run.sh --mem 3G --pmem 2 --align 2M --timeout 1000 --out "$out" -- sh -c "
r() { name=\$1; shift; mshare-bench run --workload pt-footprint --quiet \"\$@\" --out /out/\$name.json || echo \$name >>/out/failed.txt; }
r dax4k --backend file --path /mnt/pmem --page 4k --size 256M --workers 10
r huge1g --backend hugetlb-2m --size 1G --workers 20
r mshare4k --backend mshare --path /mnt/pmem --page 4k --size 256M --workers 10
r mshare2m --backend mshare --path /mnt/pmem --page any --size 1G --workers 10
" >"$out.vm.log" 2>&1 &
progress_name=pt-levels
guest_wait $! guest_progress
guest_ran $? "pt-levels runs in the guest ($(($(date +%s) - t0)) s)" "$out.vm.log"
PYTHONPATH=tests/lib python3 - "$out" "$TAP_N" <<'PY'
import json, os, sys
import tap
t, out, rec = tap.guest_results(sys.argv)
failed = open(os.path.join(out, "failed.txt")).read().split() if os.path.exists(os.path.join(out, "failed.txt")) else []
t.ok(not failed, "every run wrote its record (failed: %s)" % failed)

def pt(name):
    r = rec(name + ".json") or {}
    return r, (r.get("results") or {}).get("pagetables") or {}

r, p = pt("dax4k")
lv = p.get("levels") or {}
t.ok(lv.get("meminfo") == "pte+pmd" and "PageTables by 2" in lv.get("probe", ""),
     "Linux 6.1: the probe measures that PageTables holds PTE and PMD pages only: %s" % lv.get("probe"))
t.ok(lv.get("pud_pages_added") == 10 and p.get("all_levels_delta_bytes") == p.get("meminfo_delta_bytes", 0) + 10 * 4096,
     "DAX 4K, 10 workers: 10 PUD pages counted (one per worker), all levels = PageTables + 40 KiB (%s, %s, %s)"
     % (lv.get("pud_pages_added"), p.get("meminfo_delta_bytes"), p.get("all_levels_delta_bytes")))
t.ok(p.get("region_bytes_per_worker") == (128 + 1 + 1) * 4096,
     "DAX 4K: each worker's VmPTE holds the region's 128 PTE, 1 PMD and 1 PUD pages (%s)" % p.get("region_bytes_per_worker"))
r, p = pt("huge1g")
lv = p.get("levels") or {}
t.ok(p.get("meminfo_delta_bytes") == 4096 and lv.get("pud_pages_added") == 20
     and p.get("all_levels_delta_bytes") == 4096 + 20 * 4096,
     "hugetlb-2m at 1 GiB, 20 workers: PageTables +4 KiB (the shared PMD page), all levels +84 KiB with a PUD page per "
     "worker (%s, %s, %s)" % (p.get("meminfo_delta_bytes"), lv.get("pud_pages_added"), p.get("all_levels_delta_bytes")))
r, p = pt("mshare4k")
lv = p.get("levels") or {}
t.ok(lv.get("pud_pages_added") is not None and lv.get("pud_pages_added") <= 2
     and p.get("all_levels_delta_bytes") == p.get("meminfo_delta_bytes", 0) + 4096 * lv.get("pud_pages_added", 0)
     and p.get("meminfo_delta_bytes", 0) >= 129 * 4096,
     "mshare, 10 workers over 256 MiB: one shared set (129 PTE and PMD pages or more) and at most 2 PUD pages, "
     "not one per worker (%s PUD pages, %s)" % (lv.get("pud_pages_added"), p.get("all_levels_delta_bytes")))
r, p = pt("mshare2m")
res = r.get("results") or {}
t.ok(p.get("meminfo_delta_bytes") == 4096 and res.get("page_size_bytes") == 2 << 20
     and res.get("page_size_source", "").startswith("page tables: "),
     "mshare with 2 MiB leaves at 1 GiB: one shared PMD page, no PTE page; the record says 2 MiB from its page tables "
     "(%s, %s, %s)" % (p.get("meminfo_delta_bytes"), res.get("page_size_bytes"), res.get("page_size_source")))
t.ok(all("fallocated, written once" in ((rec(n + ".json") or {}).get("results") or {}).get("preparation", "")
         for n in ("dax4k", "mshare4k", "mshare2m")),
     "the DAX file of MAP_SHARED and of mshare is prepared by one rule (written once before the workers)")
t.done()
PY
