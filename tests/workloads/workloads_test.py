#!/usr/bin/env python3
"""Database workloads, run for real through build/mshare-bench (TAP output).

Each check runs the harness with a few workers on a small region and reads
the JSON record. Operation budgets (--ops) and seeds are fixed, so the
counts are reproducible; nothing here depends on timing.
"""
import json
import os
import subprocess
import tempfile

import tap

BIN = os.path.join("build", "mshare-bench")
WORKERS = 4
SIZE = "64M"                      # 8192 blocks of 8 KiB, 16384 pages of 4 KiB
WORKLOADS = ["sga-read", "oltp", "scan", "redo", "connect-storm"]

t = tap.Tap()


def run(workload, *args, backend="shm", workers=WORKERS, size=SIZE, env=None, args_after=()):
    """Run one workload; returns (exit status, record or None, stderr)."""
    cmd = [BIN, "run", "--backend", backend, "--workers", str(workers), "--size", size,
           "--workload", workload, "--quiet", *args, *args_after]
    e = dict(os.environ)
    e.pop("PMEM_IS_PMEM_FORCE", None)
    e.update(env or {})
    p = subprocess.run(cmd, capture_output=True, text=True, env=e, timeout=300)
    record = None
    if p.returncode in (0, 3) and p.stdout.strip():
        try:
            record = json.loads(p.stdout)
        except json.JSONDecodeError:
            pass
    return p.returncode, record, p.stderr.strip()


def wl(record):
    return record["results"]["workload"]


def counters(record):
    return wl(record)["counters"]


def hugetlb_2m_usable():
    p = subprocess.run([BIN, "backends"], capture_output=True, text=True)
    for line in (p.stdout + p.stderr).splitlines():
        f = line.split()
        if f and f[0] == "hugetlb-2m":
            return f[1] == "yes", " ".join(f[2:])
    return False, "hugetlb-2m not listed by `mshare-bench backends`"


def budget(workload):
    return {"connect-storm": ["--ops", "20"], "scan": ["--ops", "2000"]}.get(workload, ["--ops", "2000"])


def test_every_backend():
    huge_ok, huge_why = hugetlb_2m_usable()
    for backend in ["shm", "anon", "hugetlb-2m"]:
        for w in WORKLOADS:
            what = f"{w} runs on {backend} with {WORKERS} workers"
            if backend == "hugetlb-2m" and not huge_ok:
                t.skip(what, f"hugetlb-2m unusable here: {huge_why}")
                continue
            rc, rec, err = run(w, *budget(w), backend=backend)
            if backend == "hugetlb-2m" and rc == 1 and ("huge pages" in err or "pool of" in err):
                t.skip(what, f"no 2 MiB pages could be reserved: {err.splitlines()[-1] if err else rc}")
                continue
            if w == "connect-storm" and backend == "anon":
                # An anon region is shared only through fork: a worker that
                # detached cannot map it again, and the record says so (the
                # workload's error channel), not only stderr.
                why = ((rec or {}).get("results") or {}).get("first_worker_error") or ""
                t.ok(rc == 3 and "cannot be re-attached after detach" in why,
                    f"connect-storm on anon fails with the reason in the record (rc {rc}: {why!r})")
                continue
            ok = rc == 0 and rec is not None and wl(rec)["ops"] > 0 and \
                rec["config"]["backend"] == backend and rec["results"]["workload"]["name"] == w
            t.ok(ok, f"{what}: rc {rc}, ops {wl(rec)['ops'] if rec else '-'}" + (f" ({err})" if rc else ""))


def test_sga_read_distribution():
    rc, rec, err = run("sga-read", "--ops", "50000", "--seed", "1")
    w = wl(rec) if rec else {}
    ok = rc == 0 and abs(w["hot1_share"] - w["hot1_share_model"]) < 0.03 and w["hot1_share"] > 0.3
    t.ok(ok, "sga-read zipf 0.99: hottest 1%% of blocks get %.4f of reads, exact zipfian %.4f (uniform would be 0.01)"
        % (w.get("hot1_share", -1), w.get("hot1_share_model", -1)))
    ok = rc == 0 and abs(w["hot10_share"] - w["hot10_share_model"]) < 0.03
    t.ok(ok, "sga-read zipf 0.99: hottest 10%% get %.4f, exact %.4f" % (w.get("hot10_share", -1), w.get("hot10_share_model", -1)))

    rc, rec, err = run("sga-read", "--ops", "50000", "--seed", "1", "--theta", "0.5")
    w = wl(rec) if rec else {}
    ok = rc == 0 and abs(w["hot1_share"] - w["hot1_share_model"]) < 0.03
    t.ok(ok, "sga-read zipf 0.5: hottest 1%% get %.4f, exact %.4f" % (w.get("hot1_share", -1), w.get("hot1_share_model", -1)))

    rc, rec, err = run("sga-read", "--ops", "50000", "--seed", "1", "--distribution", "uniform")
    w = wl(rec) if rec else {}
    ok = rc == 0 and abs(w["hot1_share"] - 0.01) < 0.002 and abs(w["hot10_share"] - 0.10) < 0.005
    t.ok(ok, "sga-read uniform: hottest 1%% get %.4f (want 0.01), hottest 10%% get %.4f (want 0.10)"
        % (w.get("hot1_share", -1), w.get("hot10_share", -1)))

    a = run("sga-read", "--ops", "20000", "--seed", "7")[1]
    b = run("sga-read", "--ops", "20000", "--seed", "7")[1]
    c = run("sga-read", "--ops", "20000", "--seed", "8")[1]
    ok = a and b and c and counters(a) == counters(b) and counters(a)["hot1_ops"] != counters(c)["hot1_ops"]
    t.ok(ok, "sga-read: the same --seed repeats the same choices (hot1_ops %s, %s), another seed does not (%s)"
        % tuple(counters(x)["hot1_ops"] if x else "-" for x in (a, b, c)))


def check_oltp(env, path):
    rc, rec, err = run("oltp", "--ops", "20000", "--write-pct", "50", env=env)
    c = counters(rec) if rec else {}
    w = wl(rec) if rec else {}
    t.ok(rc == 0 and w.get("persist_path") == path and c.get("persist_%s_workers" % path) == WORKERS,
        f"oltp: persistence path is {path} in every worker (got {w.get('persist_path')})")
    t.ok(rc == 0 and c["verified_foreign"] > 0 and c["checksum_failures"] == 0,
        "oltp (%s): %s block reads validated writes made durable by another worker, %s checksum failures"
        % (path, c.get("verified_foreign"), c.get("checksum_failures")))
    t.ok(rc == 0 and c["writes"] + c["reads"] == WORKERS * 20000 and abs(w["write_share"] - 0.5) < 0.02,
        "oltp (%s): %s reads + %s writes, write share %.3f for --write-pct 50"
        % (path, c.get("reads"), c.get("writes"), w.get("write_share", -1)))


def test_oltp():
    check_oltp({}, "msync")
    check_oltp({"PMEM_IS_PMEM_FORCE": "1"}, "pmem")


def test_libpmem_not_linked():
    # libpmem (and libndctl, libdaxctl, libkmod, libcrypto... behind it) is
    # loaded with dlopen() by the runs that persist with it (the pmem path
    # above works), not mapped by every worker of every run.
    p = subprocess.run(["ldd", BIN], capture_output=True, text=True)
    libs = [l.split()[0] for l in p.stdout.splitlines() if l.strip()]
    t.ok(p.returncode == 0 and "libc.so.6" in libs and not any(l.startswith("libpmem") for l in libs),
        "the binary does not link libpmem (needs: %s)" % " ".join(libs))


def test_persist_is_stated():
    # The backend states how a write is made durable, and why; the workers
    # act on it (no guess from the mapping). tmpfs is volatile; a file on a
    # disk filesystem is msync (MAP_SYNC refused: not DAX) or, on DAX, pmem
    # with MAP_SYNC; PMEM_IS_PMEM_FORCE=1 forces pmem and says so.
    rc, rec, err = run("oltp", "--ops", "500", "--write-pct", "50")
    r = rec["results"] if rec else {}
    t.ok(rc == 0 and r.get("persist") == "volatile" and r.get("map_sync") is False and
        "tmpfs" in r.get("persist_why", "") and wl(rec)["persist_path"] == "msync",
        f"oltp on shm: persist {r.get('persist')}, map_sync {r.get('map_sync')}: {r.get('persist_why')}")
    with tempfile.TemporaryDirectory(dir="build") as d:
        rc, rec, err = run("redo", "--ops", "500", "--writers", "2", backend="file", args_after=["--path", d])
        r = rec["results"] if rec else {}
        fs = r.get("fs_type")
        if fs in ("tmpfs", "ramfs"):
            want = "volatile"
        elif r.get("dax"):
            want = "pmem"
        else:
            want = "msync"
        why = r.get("persist_why", "")
        ok = rc == 0 and r.get("persist") == want and r.get("map_sync") == (want == "pmem") and \
            wl(rec)["persist_path"] == ("pmem" if want == "pmem" else "msync") and \
            (want != "msync" or "MAP_SYNC" in why)
        t.ok(ok, f"redo on a file in build/ ({fs}): persist {r.get('persist')} (want {want}), "
                f"map_sync {r.get('map_sync')}: {why}")
    rc, rec, err = run("oltp", "--ops", "500", env={"PMEM_IS_PMEM_FORCE": "1"})
    r = rec["results"] if rec else {}
    t.ok(rc == 0 and r.get("persist") == "pmem" and r.get("persist_why", "").startswith("PMEM_IS_PMEM_FORCE=1"),
        f"PMEM_IS_PMEM_FORCE=1 is recorded as the reason: {r.get('persist_why')}")


def test_write_touch_keeps_data_intact():
    # --write makes first touches stores; oltp and redo must still touch by
    # reading, or a stored byte would take a block latch or corrupt the log.
    rc, rec, err = run("oltp", "--ops", "5000", "--write-pct", "50", "--write")
    c = counters(rec) if rec else {}
    t.ok(rc == 0 and c["checksum_failures"] == 0 and c["verified_foreign"] > 0,
        f"oltp --write: rc {rc}, {c.get('verified_foreign')} foreign blocks verified, "
        f"{c.get('checksum_failures')} checksum failures")
    rc, rec, err = run("redo", "--ops", "5000", "--write")
    c = counters(rec) if rec else {}
    t.ok(rc == 0 and c["checksum_failures"] == 0 and c["records_verified"] == 3 * 5000,
        f"redo --write: rc {rc}, {c.get('records_verified')} of 15000 records verified, "
        f"{c.get('checksum_failures')} checksum failures")


def test_redo():
    for env, path in [({}, "msync"), ({"PMEM_IS_PMEM_FORCE": "1"}, "pmem")]:
        # The log is larger than all that is written: no reader can be
        # lapped, so every reader must validate every record.
        rc, rec, err = run("redo", "--ops", "5000", "--writers", "2", env=env)
        c = counters(rec) if rec else {}
        readers = WORKERS - 2
        ok = rc == 0 and c["records_written"] == 2 * 5000 and \
            c["records_verified"] == readers * c["records_written"] and \
            c["checksum_failures"] == 0 and c["sequence_errors"] == 0 and wl(rec)["persist_path"] == path
        t.ok(ok, "redo (%s): %s records appended durably by 2 writers, each of %d readers validated all "
            "(%s verified, %s checksum failures, %s sequence errors)"
            % (path, c.get("records_written"), readers, c.get("records_verified"),
               c.get("checksum_failures"), c.get("sequence_errors")))
    # A 16 KiB log laps constantly: writers wait for space, readers get
    # overrun, and still no torn record is ever accepted.
    rc, rec, err = run("redo", "--ops", "5000", "--writers", "2", "--log-size", "16K")
    c = counters(rec) if rec else {}
    ok = rc == 0 and c["records_verified"] > 0 and c["checksum_failures"] == 0 and c["sequence_errors"] == 0
    t.ok(ok, "redo with a 16 KiB log: %s verified, %s overruns, %s space waits, %s checksum failures"
        % (c.get("records_verified"), c.get("overruns"), c.get("space_waits"), c.get("checksum_failures")))


def test_connect_storm():
    rc, rec, err = run("connect-storm", "--ops", "25", "--working-set", "256K")
    c = counters(rec) if rec else {}
    n = WORKERS * 25
    ok = rc == 0 and c["attaches"] == c["detaches"] == c["connections"] == n and wl(rec)["attach_detach_balanced"]
    t.ok(ok, f"connect-storm: {c.get('attaches')} attaches == {c.get('detaches')} detaches == {n} connections")
    faults = rec["results"]["fault_latency_ns"]["count"] if rec else -1
    t.ok(rc == 0 and c["working_set_pages"] == n * 64 and faults == n * 64,
        f"connect-storm: every connection first-touched its 64 pages ({c.get('working_set_pages')} pages, "
        f"{faults} timed touches)")


PHASES = ["attach", "first_touch", "detach"]


def test_connect_storm_phases():
    """Every connection's attach, first touch and detach are each a sample
    of their own histogram, on every backend that can reconnect."""
    huge_ok, huge_why = hugetlb_2m_usable()
    n = WORKERS * 25
    with tempfile.TemporaryDirectory() as d:
        for backend, extra in [("shm", []), ("file", ["--path", d]), ("hugetlb-2m", [])]:
            what = f"connect-storm on {backend}: attach, first_touch and detach histograms"
            if backend == "hugetlb-2m" and not huge_ok:
                t.skip(what, f"hugetlb-2m unusable here: {huge_why}")
                continue
            rc, rec, err = run("connect-storm", "--ops", "25", "--working-set", "2M", *extra, backend=backend)
            if backend == "hugetlb-2m" and rc == 1 and ("huge pages" in err or "pool of" in err):
                t.skip(what, f"no 2 MiB pages could be reserved: {err.splitlines()[-1] if err else rc}")
                continue
            w = wl(rec) if rec else {}
            ph = w.get("phase_latency_ns", {})
            ok = rc == 0 and sorted(ph) == sorted(PHASES) and "phase_meaning" in w
            for name, mean_key in zip(PHASES, ["attach_mean_ns", "first_touch_mean_ns", "detach_mean_ns"]):
                h = ph.get(name, {})
                ok = ok and h.get("count") == n and \
                    h["min"] <= h["p50"] <= h["p90"] <= h["p99"] <= h["max"] and \
                    abs(h["mean"] - w[mean_key]) <= 1e-9 * max(1.0, w[mean_key])
            p50s = ", ".join("%s p50 %s ns" % (k, ph[k]["p50"]) for k in PHASES if k in ph)
            t.ok(ok, f"{what}: {n} samples each, percentiles ordered, means == the counters' ({p50s})"
                + (f" rc {rc} ({err})" if rc else ""))
    # Workloads without phases write none.
    rc, rec, err = run("sga-read", "--ops", "100")
    t.ok(rc == 0 and "phase_latency_ns" not in wl(rec),
        "sga-read (no phases declared) writes no phase_latency_ns")


def test_connect_storm_closes_descriptors():
    """Attach opens the backing again and detach closes it: 300 connections
    per worker under a limit of 40 descriptors only work if none leaks."""
    import resource

    def low_nofile():
        resource.setrlimit(resource.RLIMIT_NOFILE, (40, 40))

    cmd = [BIN, "run", "--backend", "shm", "--workers", "2", "--size", "16M", "--workload",
           "connect-storm", "--ops", "300", "--working-set", "4K", "--quiet"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, preexec_fn=low_nofile)
    c = {}
    if p.returncode == 0:
        c = json.loads(p.stdout)["results"]["workload"]["counters"]
    t.ok(p.returncode == 0 and c.get("attaches") == c.get("detaches") == 600,
        f"connect-storm: 600 attach/detach cycles under RLIMIT_NOFILE 40 (rc {p.returncode}, "
        f"{c.get('attaches')} attaches{', ' + p.stderr.strip().splitlines()[-1] if p.returncode and p.stderr.strip() else ''})")


def test_scan():
    pages = (64 << 20) // 4096
    # dop 0: the four workers split the table; 4096 blocks each = 2 passes
    # over their 2048-block share.
    rc, rec, err = run("scan", "--ops", "4096", "--page", "4k")
    c = counters(rec) if rec else {}
    faults = rec["results"]["fault_latency_ns"]["count"] if rec else -1
    t.ok(rc == 0 and c["passes"] == WORKERS and faults == pages,
        f"scan dop 0: {c.get('passes')} passes, {faults} first touches == {pages} pages of the table, each once")
    rc, rec, err = run("scan", "--ops", "8192", "--dop", "1", "--page", "4k")
    faults = rec["results"]["fault_latency_ns"]["count"] if rec else -1
    t.ok(rc == 0 and faults == WORKERS * pages,
        f"scan dop 1: every worker scans the whole table ({faults} first touches == {WORKERS} x {pages})")
    rc, rec, err = run("scan", "--ops", "64", "--dop", "1", "--stride", "2M")
    c = counters(rec) if rec else {}
    t.ok(rc == 0 and c["passes"] == WORKERS and wl(rec)["ops"] == WORKERS * 64,
        f"scan --stride 2M: 32 blocks per pass, {c.get('passes')} passes of {WORKERS} workers for 64 ops each")


def test_bad_params():
    bad = [
        ("sga-read", "--theta", "1.5"), ("sga-read", "--theta", "abc"),
        ("sga-read", "--distribution", "zipfian"), ("sga-read", "--block-size", "3K"),
        ("sga-read", "--scramble", "maybe"),
        ("oltp", "--write-pct", "101"), ("oltp", "--row-size", "12"),
        ("scan", "--stride", "4K"), ("scan", "--dop", "x"), ("scan", "--granule", "1K"),
        ("redo", "--writers", "0"), ("redo", "--record-size", "100"), ("redo", "--log-size", "999G"),
        ("connect-storm", "--working-set", "0"), ("connect-storm", "--working-set", "1T"),
        ("lifecycle", "--file", "relative/data"),
    ]
    with tempfile.TemporaryDirectory() as d:
        for w, opt, value in bad:
            out = os.path.join(d, "r.json")
            rc, rec, err = run(w, opt, value, "--ops", "10", "--out", out)
            ok = rc not in (0, 3) and value in err and not os.path.exists(out) and not os.listdir(d)
            t.ok(ok, f"{w} {opt} {value} rejected (rc {rc}): {err.splitlines()[-1] if err else ''}")


def test_lifecycle():
    """The lifecycle workload on the host (issue 42): every operation is
    either done in each round or refused with its errno; the counters this
    host's kernel lacks are said to be unavailable, with why; a second round
    is counted; the forked sharer is reaped (no process left)."""
    with tempfile.TemporaryDirectory(prefix="mshare-bench-lifecycle.") as d:
        rc, rec, err = run("lifecycle", "--path", d, "--write", "--rounds", "2", "--spinners", "1",
                           "--range", "1M", backend="file", size="4M")
        if not rec:
            t.ok(False, f"lifecycle on file runs (rc {rc}): {err[-300:]}")
            return
        w = wl(rec)
        ops = w.get("ops") or {}
        names = ["mprotect_ro", "mprotect_rw", "madv_dontneed", "msync", "fork", "exit", "munmap", "attach",
                 "punch_hole", "truncate"]
        t.ok(rc == 0 and list(ops) == names,
             f"lifecycle on file: every operation in order ({list(ops)})")
        done = [n for n in names if (ops.get(n) or {}).get("rounds") == 2 and "ns" in ops[n]]
        t.ok(done == names, f"lifecycle on file: each operation done in both rounds, with its time ({done})")
        avail = w.get("counters_available") or {}
        why = w.get("counters_unavailable_why") or {}
        t.ok(avail.get("interrupts") is True and all(k in why for k, v in avail.items() if not v),
             f"lifecycle: /proc/interrupts read; every missing counter source says why ({avail}, {why})")
        c = (ops.get("fork") or {}).get("counts") or {}
        t.ok("irq_tlb_shootdowns" in c and "page_table_pages" in c
             and all(k not in c for k, v in [("nr_tlb_remote_flush", avail.get("vmstat_tlb (CONFIG_DEBUG_TLBFLUSH)"))] if not v),
             f"lifecycle: counts only from the sources available ({sorted(c)})")
        t.ok(w.get("file", "").startswith(d) and counters(rec).get("rounds") == 2,
             f"lifecycle: the file behind the mapping found through map_files ({w.get('file')}), 2 rounds counted")
        data = os.path.join(d, "named-data")
        rc, rec, err = run("lifecycle", "--path", data, "--file", data, "--write", "--spinners", "0",
                           "--range", "1M", backend="file", size="4M", workers=2)
        w = wl(rec) if rec else {}
        ops = w.get("ops") or {}
        t.ok(rc == 0 and w.get("file_via") == "--file" and w.get("file") == data
             and all((ops.get(n) or {}).get("rounds") == 1 for n in ("punch_hole", "truncate")),
             f"lifecycle --file: the named file is punched and truncated ({w.get('file')} via {w.get('file_via')})")
        rc, rec, err = run("lifecycle", "--path", data + "2", "--file", os.path.join(d, "missing"), "--spinners", "0",
                           backend="file", size="4M", workers=2)
        ops = (wl(rec).get("ops") or {}) if rec else {}
        t.ok(rc == 0 and (ops.get("punch_hole") or {}).get("errno") == "ENOENT"
             and "--file" in (ops.get("truncate") or {}).get("refused", ""),
             f"lifecycle --file of a missing file: punch and truncate refused with ENOENT, saying --file "
             f"({ops.get('punch_hole')})")
        rc, rec, err = run("lifecycle", "--rounds", "1", "--spinners", "0", backend="anon", workers=2, size="4M")
        t.ok(rc != 0 and "attach" in err + json.dumps(rec or {}),
             f"lifecycle on anon: the attach after munmap is refused (shared only through fork) and the run says so "
             f"(rc {rc})")


def test_fault_locks():
    """The fault-locks workload on the host (issue 42): every worker touched
    every page once (touches = workers x pages); lock_stat is either read
    (an object with mmap_lock acquisitions, on a kernel with a writable
    /proc/lock_stat) or false with the reason naming /proc/lock_stat,
    never zeros; a touch stride larger than the region is refused naming it."""
    with tempfile.TemporaryDirectory(prefix="mshare-bench-fault-locks.") as d:
        rc, rec, err = run("fault-locks", "--path", d, "--write", backend="file", workers=4, size="4M")
        if not rec:
            t.ok(False, f"fault-locks on file runs (rc {rc}): {err[-300:]}")
            return
        w = wl(rec)
        t.ok(rc == 0 and w.get("workers_done") == 4 and counters(rec).get("touches") == 4 * 1024,
             f"fault-locks: 4 workers each touched the 1,024 pages of 4 MiB ({counters(rec)}, "
             f"done {w.get('workers_done')})")
        fc = rec["results"].get("fault_cost") or {}
        t.ok("slept_faults" in fc and "first_faults" in fc and w.get("window_ns", 0) > 0,
             f"fault-locks: the record has the fault split (first, populated, slept) and the touch window "
             f"({sorted(fc)[:8]}, window {w.get('window_ns')} ns)")
        ls = w.get("lock_stat")
        if os.access("/proc/lock_stat", os.W_OK):
            t.ok(isinstance(ls, dict) and ls.get("mmap_lock_acquisitions", 0) > 0,
                 f"fault-locks: this kernel has lock_stat: mmap_lock acquisitions counted ({ls})")
        else:
            why = w.get("lock_stat_unavailable_why") or ""
            t.ok(ls is False and "/proc/lock_stat" in why and "mmap_lock_acquisitions" not in json.dumps(w),
                 f"fault-locks: no writable /proc/lock_stat here: lock_stat false with why, no zeros ({ls}, {why})")
        rc, rec, err = run("fault-locks", "--touch-stride", "8M", "--path", d, backend="file", workers=2,
                           size="4M")
        t.ok(rc not in (0, 3) and "8388608" in err and "touch-stride" in err,
             f"fault-locks: --touch-stride 8M over a 4 MiB region refused naming it (rc {rc}): "
             f"{err.splitlines()[-1] if err else ''}")


def main():
    if not os.access(BIN, os.X_OK):
        t.ok(False, f"{BIN} is missing: run make first")
        t.done()
    test_every_backend()
    test_sga_read_distribution()
    test_oltp()
    test_libpmem_not_linked()
    test_persist_is_stated()
    test_write_touch_keeps_data_intact()
    test_redo()
    test_connect_storm()
    test_connect_storm_phases()
    test_connect_storm_closes_descriptors()
    test_scan()
    test_bad_params()
    test_lifecycle()
    test_fault_locks()
    t.done()


if __name__ == "__main__":
    main()
