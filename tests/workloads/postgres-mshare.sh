#!/bin/sh
# test-timeout: 2400
# PostgreSQL 15 (Debian's postgresql-15, unmodified) with its main shared
# memory on mshare through workloads/postgres/pg-mshare.so (issue 15), TAP.
# Host: without mshare the library makes PostgreSQL refuse to start, with
#   the library's message and PostgreSQL's FATAL in the server log (and
#   without the library the same cluster starts: the refusal is the
#   library's).
# Guest (the patched kernel under QEMU, workloads/postgres/guest/pg-test.sh):
#   the library without PostgreSQL (fork attach, process-shared semaphore and
#   FUTEX_WAKE on the region); PostgreSQL on mshare with 64 MiB of buffers;
#   20 connections each read every table filling the buffers; the sum of
#   their region page tables (growth of their VmPTE from before the reads to
#   after) is at most 1% of the same run in `4k` mode; a row written through
#   one connection is read through another; after shutdown (pg_ctl -m fast,
#   i.e. SIGINT) no msharefs entry and no backing file is left; a backend
#   SIGKILLed makes the postmaster's crash restart replace the region; after
#   the postmaster is SIGKILLed nothing is left either.
# PG_MSHARE_TEST_MODE=mshare-2025-dax (tests/workloads/postgres-mshare-2025.sh)
# runs the same on the mshare-2025 kernel (KERNEL_TEST_IMAGE) with the
# library's 2025 design; the host part then checks its refusal without
# msharefs.
set -u
MMODE=${PG_MSHARE_TEST_MODE:-mshare-dax}
case $MMODE in
mshare-dax) design=2022 nomshare="mshare not available on this kernel: /proc/sys/vm/mshare_size missing" ;;
mshare-2025-dax) design=2025 nomshare="mshare (2025 design) not available on this kernel: msharefs not registered in /proc/filesystems" ;;
*) echo "PG_MSHARE_TEST_MODE '$MMODE' (mshare-dax or mshare-2025-dax)" >&2; exit 2 ;;
esac
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
. tests/lib/tap.sh
PGBIN=/usr/lib/postgresql/15/bin
SO=build/postgres/pg-mshare.so

if ! make -s --no-print-directory pg-mshare >/dev/null 2>&1; then
	not_ok "building $SO"
	finish
fi
ok "$SO builds (C11, -Wall -Wextra -Werror)"

# --- host: no mshare, PostgreSQL must refuse to start --------------------------
if [ ! -x "$PGBIN/postgres" ] && [ "$(id -u)" = 0 ] && [ "${PLANNER_TEST_INSTALL_PG:-1}" = 1 ] &&
   command -v apt-get >/dev/null; then
	echo "# installing postgresql-15 for this test (tests only; PLANNER_TEST_INSTALL_PG=0 to skip)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql-15 >/dev/null 2>&1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pg-mshare.XXXXXX") || exit 2
chmod 755 "$tmp"
pg_up=""
cleanup() {
	[ -n "$pg_up" ] && as_pg "$PGBIN/pg_ctl" -D "$tmp/data" -m immediate -w stop >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
. tests/lib/postgres.sh
if [ ! -x "$PGBIN/postgres" ]; then
	skip "host: PostgreSQL refuses to start without mshare" "postgresql-15 is not installed ($PGBIN/postgres missing)"
elif [ -e /proc/sys/vm/mshare_size ] || grep -qw msharefs /proc/filesystems; then
	skip "host: PostgreSQL refuses to start without mshare" "this kernel has mshare"
else
	pg_owner "$tmp"
	cp "$SO" "$tmp/pg-mshare.so" && chmod 644 "$tmp/pg-mshare.so"
	opts="-c listen_addresses='' -c unix_socket_directories='$tmp' -c port=5499 -c shared_buffers=16MB"
	if ! as_pg "$PGBIN/initdb" -D "$tmp/data" -A trust -U postgres --no-locale -E UTF8 >"$tmp/initdb.log" 2>&1; then
		sed 's/^/# initdb: /' "$tmp/initdb.log" | tail -5
		not_ok "host: initdb a throw-away cluster"
	else
		for hp in off try; do
			as_pg env LD_PRELOAD="$tmp/pg-mshare.so" PGMSHARE_DESIGN=$design "$PGBIN/pg_ctl" -D "$tmp/data" -l "$tmp/refused-$hp.log" -w -t 60 \
				-o "$opts -c huge_pages=$hp" start >"$tmp/pg_ctl.log" 2>&1
			rc=$?
			# The refusal is expected: its FATAL lines are checked here and
			# the server log shown only when they are not what they should be.
			if [ $rc != 0 ] && [ ! -f "$tmp/data/postmaster.pid" ] &&
				grep -qF "FATAL: $nomshare" "$tmp/refused-$hp.log" && grep -q "pg-mshare\[[0-9]*\]: FATAL: " "$tmp/refused-$hp.log" &&
				grep -q "FATAL:  could not map anonymous shared memory" "$tmp/refused-$hp.log"; then
				ok "host, huge_pages=$hp, design $design: with the library PostgreSQL refuses to start, saying mshare is missing (pg_ctl exit $rc; the library's FATAL and PostgreSQL's are in the server log)"
			else
				not_ok "host, huge_pages=$hp, design $design: with the library PostgreSQL refuses to start, saying mshare is missing (pg_ctl exit $rc)"
				sed 's/^/# server: /' "$tmp/refused-$hp.log"
			fi
		done
		as_pg "$PGBIN/pg_ctl" -D "$tmp/data" -l "$tmp/plain.log" -w -t 60 -o "$opts" start >/dev/null 2>&1 && pg_up=1
		check_status $? "host: the same cluster starts without the library"
		[ -n "$pg_up" ] && as_pg "$PGBIN/pg_ctl" -D "$tmp/data" -m fast -w stop >/dev/null 2>&1 && pg_up=""
	fi
fi

# --- guest ------------------------------------------------------------------
. tests/kernel/lib/guest.sh
why=$(guest_blocker)
if [ -n "$why" ]; then
	guest_tap "PostgreSQL on mshare in the guest" "$why"
	finish
fi
if [ ! -x "$PGBIN/postgres" ]; then
	not_ok "guest: PostgreSQL on mshare: postgresql-15 is not installed on the host (the guest gets its files)"
	finish
fi
mkdir -p build/vm
out=$(mktemp -d build/vm/pg-test.XXXXXX) || exit 1
chmod 755 "$out"
if ! make -s --no-print-directory pg-initramfs >"$out.build.log" 2>&1; then
	sed 's/^/# /' "$out.build.log" | tail -5
	not_ok "guest: building the PostgreSQL initramfs (make pg-initramfs)"
	finish
fi
echo "# guest: booting the patched kernel with PostgreSQL (TCG; its steps and a line a minute follow; log $out.vm.log)"
t0=$(date +%s)
kernel/vm/run.sh --no-build --kernel "${KERNEL_TEST_IMAGE:-build/kernel/bzImage}" --initrd build/vm/initramfs-pg.cpio \
	--mem 2G --timeout 2000 --out "$out" -- /guest/pg/pg-test.sh 20 "$MMODE" >"$out.vm.log" 2>&1 &
vm_pid=$!
trap 'kill -TERM $vm_pid 2>/dev/null; wait $vm_pid; exit 143' TERM INT
seen=0 beat=$t0
while kill -0 $vm_pid 2>/dev/null; do
	sleep 3
	now=$(date +%s)
	lines=$(cat "$out/console.log" 2>/dev/null | grep -c '^pg-test: ')
	if [ "$lines" -gt "$seen" ] || [ $((now - beat)) -ge 60 ]; then
		grep '^pg-test: ' "$out/console.log" 2>/dev/null | tail -n +$((seen + 1)) | sed 's/^/# /'
		[ "$lines" -gt "$seen" ] || echo "# guest: still running ($((now - t0)) s)"
		seen=$lines beat=$now
	fi
done
wait $vm_pid
rc=$?
trap - TERM INT
if [ $rc -ne 0 ] || [ ! -f "$out/pgtest/facts.txt" ]; then
	not_ok "guest: pg-test.sh ran (run.sh exit $rc, log $out.vm.log)"
	tail -20 "$out.vm.log" | sed 's/^/# /'
	finish
fi
ok "guest: pg-test.sh ran ($(($(date +%s) - t0)) s)"
python3 - "$out/pgtest" "$MMODE" >"$out/verdicts.txt" 2>&1 <<'PY'
import os, re, sys
d, mm = sys.argv[1], sys.argv[2]
f = {}
for line in open(os.path.join(d, "facts.txt")):
    k, _, v = line.rstrip("\n").partition("=")
    f[k] = v
res = []
def t(ok, what):
    res.append((bool(ok), what))
check = open(os.path.join(d, "check.txt")).read()
t(f.get("check.rc") == "0" and "FAIL" not in check and check.count("check: ok") >= 7,
  "library without PostgreSQL: children attach at the same address, sem_wait/sem_post and FUTEX_WAKE work on the region")
t(f.get("check.left", "x").strip() == "", f"library without PostgreSQL: munmap left no msharefs entry ({f.get('check.left')!r})")
t(f.get("init") == "ok", "initdb on the DAX mount")
log = open(os.path.join(d, f"server-{mm}.log")).read() if os.path.exists(os.path.join(d, f"server-{mm}.log")) else ""
m = re.search(r"pg-mshare\[\d+\]: main shared memory: (\d+) bytes at 0x20000000000 on mshare region (\S+) .*backed by DAX file", log)
design_ok = ("2025 design, mshare-2025 v3, the file mapped into it by ioctl MSHAREFS_CREATE_MAPPING" in log) == (mm == "mshare-2025-dax")
t(f.get(f"{mm}.start") == "ok" and m and design_ok and f.get(f"{mm}.msharefs_running", "").strip() == (m.group(2) if m else None),
  f"{mm}: PostgreSQL starts with its main shared memory on mshare ({m.group(0) if m else 'no pg-mshare line in the server log'})")
if mm == "mshare-2025-dax":
    t("patches-2025v3" in f.get("kernel", ""), f"{mm}: the guest ran the mshare-2025 v3 kernel ({f.get('kernel')!r})")
blocks = [int(x) for x in f.get("blocks", "0").split()]
nbuf = int(f.get("nbuffers", "0") or 0)
t(nbuf == 8192 and sum(blocks) >= 0.85 * nbuf and all(b < nbuf // 4 for b in blocks),
  f"the tables fill {sum(blocks)} of the {nbuf} buffers, each under a quarter ({blocks})")
for mode in ("4k", mm):
    t(f.get(f"{mode}.readers_read") == "ok" and f.get(f"{mode}.readers") == "20",
      f"{mode}: 20 connections waited at the gate, were woken and read every table ({f.get(mode + '.readers_read')})")
    full = 0
    for i in range(20):
        p = os.path.join(d, f"{mode}.reader{i}.out")
        if os.path.exists(p) and open(p).read().split().count("13000000") == 4:
            full += 1
    t(full == 20, f"{mode}: {full} of 20 connections printed the sum of all 65000 rows of each of the 4 tables")
    row = f.get(f"{mode}.row", "").split("|")
    ok = len(row) == 3 and row[1] and row[2].split(" ")[0] == row[0] and row[2].split(" ")[1] != row[1]
    t(ok, f"{mode}: a row written through one connection (pid {row[1] if len(row) > 1 else '?'}) is read through another ({row[2] if len(row) > 2 else '?'})")
    t(f.get(f"{mode}.stopped") == "yes", f"{mode}: pg_ctl stop -m fast (SIGINT) stops the server")
pt4 = int(f.get("4k.region_pt_kb", "0") or 0)
ptm = int(f.get(f"{mm}.region_pt_kb", "-1") or -1)
t(pt4 >= 20 * 64, f"4k: the 20 connections built {pt4} KiB of region page tables reading (at least 64 KiB each expected for 64 MiB of 4 KiB pages)")
t(0 <= ptm <= pt4 / 100, f"{mm}: the 20 connections' region page tables {ptm} KiB <= 1% of 4k's {pt4} KiB")
left = f.get(f"{mm}.left_after_stop", "x")
t(left.strip(" |") == "", f"{mm}: after shutdown no msharefs entry and no backing file ({left!r})")
rb, ra = f.get("restart.msharefs_before", "").split(), f.get("restart.msharefs_after", "").split()
t(len(rb) == 1 and rb[0].endswith("-0") and len(ra) == 1 and ra[0] == rb[0][:-2] + "-1" and
  f.get("restart.query") == "2" and f.get("restart.backing_files", "x").strip() == "",
  f"a backend SIGKILLed: the crash restart unlinks region {rb} and maps a new one {ra}, the server answers "
  f"({f.get('restart.query')!r} rows), no backing file ({f.get('restart.backing_files')!r})")
t(f.get("crash.msharefs_before", "").startswith("pg-mshare-") and f.get("crash.left_after_kill", "x").strip(" |") == "",
  f"postmaster SIGKILLed: region {f.get('crash.msharefs_before')!r} removed once its processes are gone, no backing file ({f.get('crash.left_after_kill')!r})")
for ok, what in res:
    print(("ok: " if ok else "FAIL: ") + what)
PY
python_rc=$?
while IFS= read -r line; do
	case "$line" in
	"ok: "*) ok "guest: ${line#ok: }" ;;
	"FAIL: "*) not_ok "guest: ${line#FAIL: }" ;;
	*) echo "# $line" ;;
	esac
done <"$out/verdicts.txt"
[ $python_rc = 0 ] || not_ok "guest: the facts could be judged (python exit $python_rc, $out/pgtest)"
sed 's/^/# facts: /' "$out/pgtest/facts.txt"
finish
