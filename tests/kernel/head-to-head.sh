#!/bin/sh
# In-guest head-to-head, small: 100 workers over a 64 MiB file on the DAX
# mount, once through mshare and once as plain MAP_SHARED with 4 KiB pages.
# Checks that mshare's region page tables per worker are at most 1% of
# MAP_SHARED's, that data one worker writes another reads (verify workload
# under mshare), that no msharefs entry outlives the runs, and that the
# memory pre-flight counts mshare's page tables once: 500 workers over 2 GiB
# (500 x 4 MiB of 4 KiB page tables if each had its own, more than the
# guest's 2 GiB) run under mshare and are refused as plain MAP_SHARED; and
# that a DAX file is mapped MAP_SYNC (by the mshare donor and by every
# MAP_SHARED worker) and oltp persists there with pmem_persist in every
# worker; that the page size recorded for a DAX file is the one the mappings got
# (4 KiB with --page 4k, 2 MiB PMD mappings on the 2M-aligned namespace);
# and that a run stopped by SIGINT, or its parent killed outright, leaves no
# msharefs entry and no backing file behind.
# Fails when the guest cannot run (no kernel built, no QEMU); skips only
# with MSHARE_SKIP_GUEST=1.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
. tests/kernel/lib/guest.sh
guest_require "head-to-head in the guest"
guest_setup head-to-head
common="--workers 100 --size 64M --page 4k --workload pt-footprint --quiet"
echo "# head-to-head: booting the patched kernel under QEMU (TCG); a line when the guest is up, then a line a minute (log $out.vm.log)"
t0=$(date +%s)
kernel/vm/run.sh --mem 2G --timeout 600 --out "$out" -- sh -c "
mshare-bench run --backend mshare $common --out /out/mshare.json &&
mshare-bench run --backend file --path /mnt/pmem $common --out /out/dax4k.json &&
mshare-bench run --backend file --path /mnt/pmem --workers 10 --size 64M --page any --workload pt-footprint --quiet --out /out/dax2m.json &&
mshare-bench run --backend mshare --workers 4 --size 64M --workload verify --quiet --out /out/verify.json &&
mshare-bench run --backend mshare --workers 500 --size 2G --page 4k --workload pt-footprint --quiet --out /out/big.json &&
{ mshare-bench run --backend file --path /mnt/pmem --workers 500 --size 2G --page 4k --workload pt-footprint \
	--quiet --out /out/big-file.json 2>/out/big-file.err; echo \$? >/out/big-file.rc; } &&
mshare-bench run --backend mshare --workers 4 --size 16M --workload oltp --ops 2000 --write-pct 50 --quiet --out /out/oltp-mshare.json &&
mshare-bench run --backend file --path /mnt/pmem --page 4k --workers 4 --size 16M --workload oltp --ops 2000 --write-pct 50 --quiet --out /out/oltp-dax.json &&
ls -A /sys/fs/mshare > /out/leftover.txt &&
for how in INT KILL; do
	mshare-bench run --backend mshare --workers 200 --size 64M --workload sga-read --duration 120s --quiet \
		--out /out/stopped-\$how.json 2>/dev/null & pid=\$!
	sleep 4; ls -A /sys/fs/mshare >/out/stopped-\$how.during; kill -\$how \$pid; wait \$pid; echo \$? >/out/stopped-\$how.rc
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		[ -z \"\$(ls -A /sys/fs/mshare)\" ] && break; sleep 0.5
	done
	ls -A /sys/fs/mshare >/out/stopped-\$how.left; { ls -A /mnt/pmem | grep -v lost+found || true; } >>/out/stopped-\$how.left
done" >"$out.vm.log" 2>&1 &
progress_name=head-to-head progress_up="running the comparisons"
guest_wait $! guest_progress
guest_ran $? "head-to-head runs in the guest" "$out.vm.log"
PYTHONPATH=tests/lib python3 - "$out" "$TAP_N" <<'PY'
import os, sys
import tap
t, out, rec = tap.guest_results(sys.argv)
ms, dax, ver = rec("mshare.json"), rec("dax4k.json"), rec("verify.json")
m = ms["results"]["pagetables"]["region_bytes_per_worker"]
d = dax["results"]["pagetables"]["region_bytes_per_worker"]
ok = d > 0 and m <= d / 100
t.ok(ok, "mshare region page tables per worker %d B <= 1%% of MAP_SHARED DAX 4K's %d B" % (m, d))
ok_dax = dax["results"].get("dax") is True and ms["results"].get("dax") is True
t.ok(ok_dax, "both runs were on a DAX file")
c = ver["results"]["workload"]["counters"]
ok_v = c["pages_checked"] > 0 and c["mismatches"] == 0
t.ok(ok_v, "data written by one mshare worker is read by the others (%d pages checked, %d mismatches)" % (c["pages_checked"], c["mismatches"]))
left = open(os.path.join(out, "leftover.txt")).read().split()
t.ok(not left, "no msharefs entry left after the runs %s" % (left,))
for name, want in (("dax4k.json", 4096), ("dax2m.json", 2 << 20)):
    r = rec(name)["results"]
    got = r["page_size_bytes"]
    ok_p = got == want and r["page_probe"].startswith("probe:") and r["page_size_mixed"] is False
    t.ok(ok_p, "%s: page size recorded %d B, expected %d B, not mixed (%s)" % (name, got, want, r["page_probe"]))
d2 = rec("dax2m.json")["results"]["pagetables"]["region_bytes_per_worker"]
ok_pt = d2 < d / 10
t.ok(ok_pt, "DAX 2 MiB mappings need far fewer page tables than 4 KiB ones (%d B vs %d B per worker)" % (d2, d))
big = rec("big.json")
ok_big = (big["preflight"]["estimated_pt_bytes_per_worker"] == 0 and big["results"]["workers_measured"] == 500
          and big["results"]["pagetables"]["region_bytes_per_worker"] == 0)
t.ok(ok_big, "500 mshare workers over 2 GiB pass the memory pre-flight (page tables expected once) and run")
rc_file = open(os.path.join(out, "big-file.rc")).read().strip()
err_file = open(os.path.join(out, "big-file.err")).read()
ok_ref = rc_file == "1" and "MemAvailable" in err_file and not os.path.exists(os.path.join(out, "big-file.json"))
t.ok(ok_ref, "the same as plain MAP_SHARED 4 KiB is refused by the pre-flight (exit %s)" % (rc_file,))
for how, want_rc in (("INT", "130"), ("KILL", "137")):
    rc_s = open(os.path.join(out, "stopped-%s.rc" % how)).read().strip()
    left_s = open(os.path.join(out, "stopped-%s.left" % how)).read().split()
    no_rec = not os.path.exists(os.path.join(out, "stopped-%s.json" % how))
    during = open(os.path.join(out, "stopped-%s.during" % how)).read().split()
    ok_s = len(during) == 1 and rc_s == want_rc and not left_s and no_rec
    t.ok(ok_s, "SIG%s during a 200-worker mshare run (msharefs then held %s): exit %s, no record, nothing left in msharefs or /mnt/pmem %s" % (how, during, rc_s, left_s))
for name in ("oltp-mshare.json", "oltp-dax.json"):
    r = rec(name)["results"]
    w = r["workload"]
    c = w["counters"]
    ok_o = (r["persist"] == "pmem" and r["map_sync"] is True and w["persist_path"] == "pmem" and
            c["persist_pmem_workers"] == 4 and c["persist_msync_workers"] == 0 and
            c["checksum_failures"] == 0 and c["verified_foreign"] > 0)
    t.ok(ok_o, "%s: DAX mapped MAP_SYNC (%s), every worker persisted with pmem_persist (%d pmem, %d msync), %d checksum failures, %d foreign blocks verified; why: %s" % (name, r["map_sync"], c["persist_pmem_workers"], c["persist_msync_workers"], c["checksum_failures"], c["verified_foreign"], r["persist_why"]))
t.done()
PY
