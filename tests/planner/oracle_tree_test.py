"""`plan --pid/--shmid/--file` on an Oracle-like instance (TAP): real
processes, no mocks.

The instance: three SysV segments (an SGA in several pieces, as Oracle's may
be) at fixed addresses, a file mapped MAP_SHARED (a datafile-like mapping),
four "background processes" (ora_pmon, ora_smon, ora_dbw0, ora_lgwr), each
double-forked so that its parent is PID 1 (or the nearest subreaper), and a
"listener", double-forked too, which forks two dedicated servers as its
children and a third through a double fork (parent PID 1). The listener
maps no segment. Every background process and server attaches A and B; only
dbw0 and lgwr attach C; only the background processes map the file.

    A  8 MiB  at 0x600000000000 (512 GiB-aligned: the three share a PUD page)
    B 64 MiB  at 0x600040000000 (the next GiB: a PMD page of its own)
    C  2 MiB  at 0x600080000000
    F 16 MiB  at 0x610000000000 (another 512 GiB slot)

Touches, in this order: A (background: all of it; servers: one page), then B
(background: the first 16 MiB; servers: all 64 MiB), then C (all) and F
(the first 4 MiB). Each process reads its own VmPTE just before and after
touching B: the page tables touching B allocated, MEASURED.

Hand arithmetic (4 KiB page-table pages; a PTE page maps 2 MiB, a PMD page
1 GiB, a PUD page 512 GiB):
  B, background: 16 MiB = 8 PTE pages + 1 PMD page (the PUD page is A's
     already) = 9 pages = 36,864 B; servers: 32 PTE + 1 PMD = 33 pages =
     135,168 B. The planner's model of B at its real address must give
     these (the PUD page left out: A and C need it anyway), and so must the
     VmPTE delta each process measured.
  A: background 4 PTE + 1 PMD = 20,480 B, servers 1 PTE + 1 PMD = 8,192 B
     (PUD left out: B and C lie in the same 512 GiB).
  C: 1 PTE + 1 PMD = 8,192 B (dbw0, lgwr).
  F: 2 PTE + 1 PMD + 1 PUD = 16,384 B (its 512 GiB holds nothing else).
  Processes: B and A 7 (nattch 7), C 2, F 4; from pmon none is a descendant,
  from the listener 2 are (its direct children).

As root, one more server runs as user nobody (segments are 0666) and
attaches B: root's plan then finds 8 of nattch 8; the same plan run as
nobody reads only that process and must warn that it found 1 of 8.
Processes are ended by their pids, segments removed, on any exit.
"""
import ctypes
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import tap

libc = ctypes.CDLL(None, use_errno=True)
libc.shmget.restype = ctypes.c_int
libc.shmget.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_int]
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
libc.shmctl.restype = ctypes.c_int
libc.shmctl.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.prctl.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
PR_SET_DUMPABLE = 4

IPC_PRIVATE, IPC_CREAT, IPC_RMID = 0, 0o1000, 0
PROT_RW, MAP_SHARED, MAP_FIXED_NOREPLACE = 3, 1, 0x100000
PR_SET_NAME = 15
MIB = 1 << 20
A_ADDR, B_ADDR, C_ADDR, F_ADDR = 0x600000000000, 0x600040000000, 0x600080000000, 0x610000000000
A_SIZE, B_SIZE, C_SIZE, F_SIZE = 8 * MIB, 64 * MIB, 2 * MIB, 16 * MIB
PAGE = 4096


def vmpte(fd):
    os.lseek(fd, 0, 0)
    for line in os.read(fd, 8192).decode().splitlines():
        if line.startswith("VmPTE:"):
            return int(line.split()[1]) * 1024
    return -1


def shmat(shmid, addr):
    got = libc.shmat(shmid, addr, 0)
    if got != addr:
        raise OSError(ctypes.get_errno(), "shmat %d at 0x%x gave %s" % (shmid, addr, got))


def worker(name, seg, attach_c, file_path, b_touch, a_touch, ready_w, hold_r, uid=None):
    """The body of one database process; never returns."""
    try:
        if uid is not None:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            # A process that changed its user is not dumpable: its /proc
            # files stay root's. A server started as that user is.
            libc.prctl(PR_SET_DUMPABLE, ctypes.cast(1, ctypes.c_char_p), 0, 0, 0)
        libc.prctl(PR_SET_NAME, name.encode()[:15], 0, 0, 0)
        status = os.open("/proc/self/status", os.O_RDONLY)
        if a_touch:
            shmat(seg["A"], A_ADDR)
        shmat(seg["B"], B_ADDR)
        if attach_c:
            shmat(seg["C"], C_ADDR)
        if file_path:
            fd = os.open(file_path, os.O_RDWR)
            got = libc.mmap(F_ADDR, F_SIZE, PROT_RW, MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0)
            if got != F_ADDR:
                raise OSError(ctypes.get_errno(), "mmap of the file gave %s" % got)
        if a_touch:
            ctypes.memset(A_ADDR, 1, a_touch)
        before = vmpte(status)
        ctypes.memset(B_ADDR, 2, b_touch)
        after = vmpte(status)
        if attach_c:
            ctypes.memset(C_ADDR, 3, C_SIZE)
        if file_path:
            ctypes.memset(F_ADDR, 4, 4 * MIB)
        os.write(ready_w, ("%s %d %d %d %d\n" % (name, os.getpid(), os.getppid(), before, after)).encode())
        os.read(hold_r, 1)  # until the test closes its end
    except BaseException as e:  # report and leave: the test sees a missing line
        os.write(ready_w, ("error %s %s\n" % (name, e)).encode())
    os._exit(0)


def double_fork(body):
    """Run body() in a grandchild whose parent dies at once (reparented to
    PID 1 or the nearest subreaper), as Oracle's processes are."""
    pid = os.fork()
    if pid == 0:
        if os.fork() == 0:
            body()
        os._exit(0)
    os.waitpid(pid, 0)


def plan(*args, user=None):
    kw = {}
    if user is not None:
        kw = {"user": user, "group": user, "extra_groups": []}
    return subprocess.run([tap.HARNESS, "plan"] + list(args), capture_output=True, text=True, timeout=300, **kw)


def main():
    t = tap.harness_test("plan on an Oracle-like process tree")
    root = os.geteuid() == 0
    seg = {}
    pids = []
    tmp = tempfile.mkdtemp(prefix="plan-oracle.")
    fpath = os.path.join(tmp, "datafile")
    ready_r, ready_w = os.pipe()
    hold_r, hold_w = os.pipe()
    try:
        for k, size in (("A", A_SIZE), ("B", B_SIZE), ("C", C_SIZE)):
            seg[k] = libc.shmget(IPC_PRIVATE, size, IPC_CREAT | 0o666)
            if seg[k] < 0:
                t.ok(False, "shmget %s" % k, os.strerror(ctypes.get_errno()))
                t.done()
        with open(fpath, "wb") as f:
            f.truncate(F_SIZE)
        os.chmod(tmp, 0o755)

        bg = [("ora_pmon_T", False, True), ("ora_smon_T", False, True), ("ora_dbw0_T", True, True),
              ("ora_lgwr_T", True, True)]
        for name, c, fmap in bg:
            double_fork(lambda name=name, c=c, fmap=fmap: worker(name, seg, c, fpath if fmap else None, 16 * MIB,
                                                                 A_SIZE, ready_w, hold_r))

        def listener():
            libc.prctl(PR_SET_NAME, b"tnslsnr_T", 0, 0, 0)
            for i in (1, 2):
                if os.fork() == 0:
                    worker("oracleT_srv%d" % i, seg, False, None, B_SIZE, PAGE, ready_w, hold_r)
            double_fork(lambda: worker("oracleT_srv3", seg, False, None, B_SIZE, PAGE, ready_w, hold_r))
            os.write(ready_w, ("listener %d %d 0 0\n" % (os.getpid(), os.getppid())).encode())
            os.read(hold_r, 1)
            os._exit(0)

        double_fork(listener)
        expect = 8
        if root:
            double_fork(lambda: worker("oracleT_remote", seg, False, None, PAGE, 0, ready_w, hold_r, uid=65534))
            expect += 1
        procs = {}
        buf = b""
        deadline = time.monotonic() + 60
        while len(procs) < expect and time.monotonic() < deadline:
            buf += os.read(ready_r, 4096)
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                w = line.decode().split()
                if w[0] == "error":
                    t.ok(False, "a database process started", line.decode())
                    continue
                procs[w[0]] = {"pid": int(w[1]), "ppid": int(w[2]), "before": int(w[3]), "after": int(w[4])}
                pids.append(int(w[1]))
        t.ok(len(procs) == expect, "%d processes of the instance started (%s)" % (len(procs), ", ".join(sorted(procs))))
        me = os.getpid()
        t.ok(all(p["ppid"] != me for p in procs.values()) and
             procs["oracleT_srv1"]["ppid"] == procs["listener"]["pid"] and
             procs["oracleT_srv3"]["ppid"] != procs["listener"]["pid"],
             "background processes and the listener are not the test's children (ppid %s); srv1, srv2 are the "
             "listener's, srv3 is not" % sorted({p["ppid"] for p in procs.values()}))

        # MEASURED by each process: what touching B added to its VmPTE.
        want_b = {n: 9 * PAGE if n.startswith("ora_") else 33 * PAGE for n in procs if n.startswith(("ora_", "oracleT_srv"))}
        got_b = {n: procs[n]["after"] - procs[n]["before"] for n in want_b}
        t.ok(got_b == want_b, "MEASURED VmPTE growth from touching B: 36,864 B per background process (8 PTE + 1 PMD "
             "pages), 135,168 B per server (32 PTE + 1 PMD)", "got %s" % got_b)

        pmon = procs["ora_pmon_T"]["pid"]
        r = plan("--pid", str(pmon), "--segment", hex(B_ADDR), "--mode", "4k", "--json")
        ok = r.returncode == 0
        d = json.loads(r.stdout) if ok else {}
        t.ok(ok, "plan --pid <pmon> --segment B runs", r.stderr)
        if ok:
            per = {p["pid"]: p for p in d["measured"]["per_process"]}
            names = {v["pid"]: n for n, v in procs.items()}
            found = sorted(names.get(p, "?%d" % p) for p in per)
            want = sorted(n for n in procs if n.startswith("ora_") or n.startswith("oracleT_"))
            t.ok(found == want, "--pid <pmon> finds every process attaching B whatever its parent: %d (%s)"
                 % (len(found), ", ".join(found)), "want %s" % want)
            t.ok(d["segment"]["nattch"] == len(want) and d["mappings_found"] == len(want) and
                 d["attach_count_matches"] and d["outside_tree"] == len(want) - 1,
                 "SysV attach count %d = mappings found %d; %d found outside pmon's tree"
                 % (d["segment"]["nattch"], d["mappings_found"], d["outside_tree"]))
            model = {names[p]: v["segment_model_bytes"] for p, v in per.items() if names.get(p) in want_b}
            t.ok(model == want_b, "MODELLED B per process at its real address equals the hand arithmetic and the "
                 "measured growth (36,864 / 135,168 B)", "model %s" % model)
            t.ok(sorted(s["shmid"] for s in d["sysv_segments"]) == sorted([seg["A"], seg["B"]]),
                 "the two SysV segments pmon attaches are listed (A %d, B %d)" % (seg["A"], seg["B"]))
        r = plan("--pid", str(procs["ora_lgwr_T"]["pid"]), "--segment", hex(B_ADDR), "--mode", "4k")
        t.ok(r.returncode == 0 and "attaches 3 SysV segment(s)" in r.stdout and "every attach found" in r.stdout
             and "planned here" in r.stdout, "text from lgwr: its three segments listed, the one planned marked, the attach count "
             "checked", r.stdout[-2000:] + r.stderr)

        r = plan("--pid", str(procs["listener"]["pid"]), "--mode", "4k", "--json")
        ok = r.returncode == 0
        d = json.loads(r.stdout) if ok else {}
        nb = len(want_b) + root
        t.ok(ok and d["segment"]["shmid"] == seg["B"] and d["measured"]["processes"] == nb and
             d["outside_tree"] == nb - 2,
             "--pid <listener> (maps nothing): the largest segment of its first child, B; all %d processes, 2 of "
             "them its children" % nb, r.stderr + (json.dumps({k: d.get(k) for k in ("outside_tree", "descendants")}) if ok else ""))

        cases = (("A", seg["A"], {n: (5 if n.startswith("ora_") else 2) * PAGE for n in want_b}),
                 ("C", seg["C"], {"ora_dbw0_T": 2 * PAGE, "ora_lgwr_T": 2 * PAGE}))
        for label, shmid, want in cases:
            r = plan("--shmid", str(shmid), "--mode", "4k", "--json")
            ok = r.returncode == 0
            d = json.loads(r.stdout) if ok else {}
            got = {}
            if ok:
                names = {v["pid"]: n for n, v in procs.items()}
                got = {names.get(p["pid"], p["pid"]): p["segment_model_bytes"] for p in d["measured"]["per_process"]
                       if names.get(p["pid"]) != "oracleT_remote"}
            extra = 0  # the nobody process attaches B only
            t.ok(ok and got == want and d["segment"]["nattch"] == len(want) + extra and d["attach_count_matches"],
                 "--shmid %s: %d process(es), nattch %d, the segment's page tables per process by hand (%s)"
                 % (label, len(want), len(want) + extra, ", ".join("%s %d" % kv for kv in sorted(want.items()))),
                 (r.stderr + " got %s" % got))

        r = plan("--file", fpath, "--mode", "4k,dax-4k", "--json")
        ok = r.returncode == 0
        d = json.loads(r.stdout) if ok else {}
        got = {}
        if ok:
            names = {v["pid"]: n for n, v in procs.items()}
            got = {names.get(p["pid"], p["pid"]): p["segment_model_bytes"] for p in d["measured"]["per_process"]}
        want = {n: 4 * PAGE for n in procs if n.startswith("ora_")}
        t.ok(ok and got == want and d["segment"]["nattch"] == -1,
             "--file: the 4 background processes mapping it by device and inode, 16,384 B each (2 PTE + 1 PMD "
             "+ 1 PUD)", r.stderr + " got %s" % got)

        r = plan("--file", "/nonexistent/datafile")
        t.ok(r.returncode == 2 and "/nonexistent/datafile" in r.stderr and not r.stdout,
             "--file of a missing path refused, named")
        free_id = libc.shmget(IPC_PRIVATE, MIB, IPC_CREAT | 0o600)
        r = plan("--shmid", str(free_id))
        libc.shmctl(free_id, IPC_RMID, None)
        t.ok(r.returncode == 2 and "no process" in r.stderr and str(free_id) in r.stderr,
             "--shmid of a segment nobody attaches refused, saying so", r.stderr)

        if not root:
            t.skip("as another user: the attach count differs and the plan warns", "not root")
        else:
            r = plan("--shmid", str(seg["B"]), "--mode", "4k", "--json")
            d = json.loads(r.stdout) if r.returncode == 0 else {}
            t.ok(r.returncode == 0 and d["measured"]["processes"] == 8 and d["segment"]["nattch"] == 8,
                 "as root: 8 of nattch 8 found (the nobody process too)", r.stderr)
            r = plan("--shmid", str(seg["B"]), "--mode", "4k", user=65534)
            t.ok(r.returncode == 0 and ("mshare-bench plan --shmid %d:" % seg["B"]) in r.stdout
                 and "WARNING: they differ" in r.stdout and "mappings found 1" in r.stdout
                 and "attach count (nattch, /proc/sysvipc/shm) 8" in r.stdout,
                 "as nobody: 1 found of nattch 8, and the plan warns", r.stdout[:3000] + r.stderr)
    finally:
        os.close(hold_w)
        for p in pids:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for k in seg:
            libc.shmctl(seg[k], IPC_RMID, None)
        subprocess.run(["rm", "-rf", tmp])
    t.done()


if __name__ == "__main__":
    sys.stdout.reconfigure(line_buffering=True)
    main()
