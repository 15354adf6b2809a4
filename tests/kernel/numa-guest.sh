#!/bin/sh
# test-timeout: 1500
# NUMA in a 2-node guest (kernel/vm/run.sh --numa 2: one vCPU and half the RAM
# per node, the NVDIMM on node 1): the guest sees two nodes; runs with
# --cpus spread put half the workers on each node; the page tables per node
# sum to the system-wide PageTables delta (the check `make test` makes of the
# per-node view); private MAP_SHARED 4 KiB page tables follow their workers
# (all on node 1 with --cpus 1; none on node 1 with --mem-policy bind:0);
# the DAX file's device is recorded on node 1; mshare's one shared set goes
# where its faulting workers allocate (node 0 with --cpus compact, node 1
# with --mem-policy bind:1); hugetlb-2m with --mem-policy bind:1 grows the
# pool on node 1 (without nr_hugepages_mempolicy its pages were spread and
# the region could not be allocated). What it measures (where
# mshare's one set of page tables lands, the MAP_SHARED split with spread
# workers) is printed as TAP comments, not asserted: the kernel decides.
# Fails when the guest cannot run; skips only with MSHARE_SKIP_GUEST=1.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
. tests/kernel/lib/guest.sh
guest_require "NUMA in a 2-node guest"
guest_setup numa-guest
c="--size 64M --page 4k --workload pt-footprint --quiet"
echo "# numa-guest: booting a 2-node guest under QEMU (TCG); a line a minute while it runs (log $out.vm.log)"
kernel/vm/run.sh --numa 2 --cpus 2 --pmem-node 1 --mem 2G --pmem 1 --timeout 1200 --out "$out" -- sh -c "
ls -d /sys/devices/system/node/node[0-9]* >/out/nodes.txt
mshare-bench run --backend mshare --workers 100 --cpus spread --mem-policy local $c --out /out/mshare.json &&
mshare-bench run --backend file --path /mnt/pmem --workers 100 --cpus spread --mem-policy local $c --out /out/dax4k.json &&
mshare-bench run --backend file --path /mnt/pmem --workers 20 --cpus 1 $c --out /out/dax4k-cpu1.json &&
mshare-bench run --backend file --path /mnt/pmem --workers 20 --cpus spread --mem-policy bind:0 $c --out /out/dax4k-bind0.json &&
mshare-bench run --backend mshare --workers 20 --cpus compact $c --out /out/mshare-compact.json &&
mshare-bench run --backend mshare --workers 20 --cpus spread --mem-policy bind:1 $c --out /out/mshare-bind1.json &&
mshare-bench run --backend hugetlb-2m --workers 8 --size 256M --workload pt-footprint --cpus spread --mem-policy bind:1 \
	--quiet --out /out/hugetlb-bind1.json &&
cat /sys/devices/system/node/node*/hugepages/hugepages-2048kB/nr_hugepages >/out/hugepages-after.txt &&
{ mshare-bench run --backend shm --workers 2 --size 4M --workload touch --cpus 2 --out /out/never.json 2>/out/cpu2.err; echo \$? >/out/cpu2.rc; }
" >"$out.vm.log" 2>&1 &
guest_wait $! guest_heartbeat
guest_ran $? "the NUMA runs in a 2-node guest ($_gw_secs s)" "$out.vm.log"
PYTHONPATH=tests/lib python3 - "$out" "$TAP_N" <<'PY'
import os, sys
import tap
t, out, rec = tap.guest_results(sys.argv)
def per_node(r):
    return [x["delta_bytes"] for x in r["results"]["pagetables"]["nodes"]]

t.ok(len(open(os.path.join(out, "nodes.txt")).read().split()) == 2,
     "the guest has two NUMA nodes")
for name in ("mshare.json", "dax4k.json", "dax4k-cpu1.json", "dax4k-bind0.json", "mshare-compact.json",
             "mshare-bind1.json"):
    r = rec(name)
    p = r["results"]["pagetables"]
    t.ok(len(p["nodes"]) == 2 and p["nodes_consistent"],
         f"{name}: two nodes in the record, read consistently")
    t.ok(sum(per_node(r)) == p["meminfo_delta_bytes"] and
         sum(x["parked_bytes"] for x in p["nodes"]) == p["meminfo_parked_bytes"],
         f"{name}: per-node PageTables deltas {per_node(r)} sum to the system delta {p['meminfo_delta_bytes']}")
    t.ok(r["environment"]["platform"] == "guest" and "TCG" in r["results"]["numa"]["latency_note"],
         f"{name}: the record says guest and the TCG latency caveat")
    t.ok(r["results"]["numa"]["data_device_node"] == 1,
         f"{name}: the DAX file's device is on node 1")
for name in ("mshare.json", "dax4k.json"):
    r = rec(name)
    t.ok(r["results"]["numa"]["workers_per_node"] == [50, 50],
         f"{name}: --cpus spread put 50 workers on each node ({r['results']['numa']['workers_per_node']})")
ms, dax = rec("mshare.json"), rec("dax4k.json")
t.ok(sum(per_node(dax)) >= 100 * 33 * 4096,
     "MAP_SHARED 4K: 100 workers' private page tables (>= 100 x 33 pages) are in the per-node view")
c1, b0 = rec("dax4k-cpu1.json"), rec("dax4k-bind0.json")
t.ok(c1["results"]["numa"]["workers_per_node"] == [0, 20] and per_node(c1)[1] >= 20 * 33 * 4096 and
     per_node(c1)[0] < per_node(c1)[1] / 10,
     f"--cpus 1: all 20 workers on node 1, their page tables too (node deltas {per_node(c1)})")
t.ok(b0["results"]["numa"]["workers_per_node"] == [10, 10] and per_node(b0)[0] >= 20 * 33 * 4096 and
     per_node(b0)[1] < per_node(b0)[0] / 10,
     f"--cpus spread --mem-policy bind:0: page tables on node 0 only (node deltas {per_node(b0)})")
mc, mb = rec("mshare-compact.json"), rec("mshare-bind1.json")
t.ok(mc["results"]["numa"]["workers_per_node"] == [20, 0] and per_node(mc)[0] >= 33 * 4096 and per_node(mc)[1] == 0,
     f"mshare, --cpus compact: all 20 workers on node 0, the one shared set (33 pages) too (node deltas {per_node(mc)})")
t.ok(mb["results"]["numa"]["workers_per_node"] == [10, 10] and per_node(mb)[1] >= 33 * 4096 and per_node(mb)[0] == 0,
     f"mshare, --cpus spread --mem-policy bind:1: the shared set on node 1 only (node deltas {per_node(mb)})")
hb = rec("hugetlb-bind1.json")
t.ok(hb["results"]["hugepages_added_to_pool"] == 128 and hb["results"]["workers_measured"] == 8 and
     per_node(hb) == [0, 8 * 4096],
     f"hugetlb-2m --mem-policy bind:1: the pool grew on node 1 (nr_hugepages_mempolicy), 128 pages, the run "
     f"worked and its PMD pages are on node 1 (node deltas {per_node(hb)})")
after = open(os.path.join(out, "hugepages-after.txt")).read().split()
t.ok(after == ["0", "0"], f"the pool is given back on both nodes afterwards ({after})")
err = open(os.path.join(out, "cpu2.err")).read().strip()
t.ok(open(os.path.join(out, "cpu2.rc")).read().strip() == "2" and "CPU 2" in err and
     not os.path.exists(os.path.join(out, "never.json")),
     f"--cpus 2 on a 2-vCPU guest refused before anything forks: {err!r}")
for name, r in (("mshare", ms), ("MAP_SHARED DAX 4K", dax)):
    d = per_node(r)
    print(f"# measured: {name}, 100 workers spread over 2 nodes, 64 MiB pt-footprint: PageTables delta "
          f"node 0 {d[0]} B, node 1 {d[1]} B (system {r['results']['pagetables']['meminfo_delta_bytes']} B)")
t.done()
PY
