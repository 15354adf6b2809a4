"""The DBA preset of the PostgreSQL points (`--preset dba`, issue 27; bench/lib/pgpoint.py): what its guest output
says, turned into record figures, and the projection to a production
configuration. No guest needed: tests/bench/pg_dba_test.py runs this on a
recorded fixture.

Guest output per point (workloads/postgres/guest/pg-bench.sh, preset dba; TAG = <point id>.r<k>):
  TAG.passes       one line per backend's first pass, tab-separated:
                   pid, minflt before, minflt after, pass in ms (the
                   backend's own /proc/self/stat, read by dba_pass())
  TAG.pid.json     `mshare-bench plan --pid POSTMASTER --json` right after
                   the last pass: every process mapping the segment, its
                   VmPTE (MEASURED) and the segment's part of it (from the
                   pages present in /proc/PID/pagemap: the page-table pages
                   those pages need, MODELLED at the real address)
"""

import json


class DbaError(ValueError):
    pass


def parse_passes(text, where="passes"):
    """[(pid, minflt_before, minflt_after, ms)] from a .passes file."""
    rows = []
    for no, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 4:
            raise DbaError("%s:%d: expected 4 tab-separated fields (pid, minflt before, after, ms), got %r"
                           % (where, no, line))
        try:
            pid, a, b, ms = (int(p) for p in parts)
        except ValueError:
            raise DbaError("%s:%d: not whole numbers: %r" % (where, no, line)) from None
        if b < a:
            raise DbaError("%s:%d: minflt after the pass (%d) below before (%d)" % (where, no, b, a))
        rows.append((pid, a, b, ms))
    return rows


def stats(values):
    if not values:
        return None
    return {"count": len(values), "mean": round(sum(values) / len(values), 1), "min": min(values),
            "max": max(values), "sum": sum(values)}


def first_pass(rows):
    """Minor faults and time of every backend's first full pass (MEASURED)."""
    return {"kind": "measured",
            "source": "each backend's /proc/self/stat minflt read by dba_pass() before and after its pass",
            "backends": len(rows),
            "minflt_per_backend": stats([b - a for _, a, b, _ in rows]),
            "ms_per_backend": stats([ms for *_, ms in rows])}


def vmpte_split(pid_json, backend_pids):
    """Per backend: VmPTE (MEASURED), the segment's part (page-table pages
    the segment's present pages need, MODELLED from the MEASURED pagemap by
    plan --pid) and the rest, the backend's own (private) page tables.
    backend_pids: the client backends (other server processes are left out)."""
    try:
        procs = {p["pid"]: p for p in pid_json["measured"]["per_process"]}
    except (KeyError, TypeError):
        raise DbaError("plan --pid JSON has no measured.per_process") from None
    want = set(backend_pids)
    rows = [procs[p] for p in sorted(want) if p in procs]
    if not rows:
        return None
    # A plan --pid JSON of another shape (another version of plan) is the
    # plan's error, never an exception.
    def number(r, key):
        v = r[key]
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            raise TypeError("%s %r is not a number" % (key, v))
        return v
    try:
        vm = [number(r, "vmpte_bytes") for r in rows]
        seg = [number(r, "segment_model_bytes") for r in rows]
        own = [v - s for v, s in zip(vm, seg)]
        return {"backends": len(rows), "backends_missing": len(want - set(procs)),
                "segment": {"start": pid_json["segment"]["start"], "size_bytes": pid_json["segment"]["size_bytes"],
                            "mode": pid_json["segment"]["mode"]},
                "vmpte_bytes": dict(stats(vm), kind="measured"),
                "segment_bytes": dict(stats(seg), kind="modelled from the measured pages present (plan --pid)"),
                "own_bytes": dict(stats(own), kind="measured VmPTE minus the segment's part"),
                "touched_spans_2m_mean": round(sum(number(r, "touched_spans_2m") for r in rows) / len(rows), 1)}
    except KeyError as e:
        raise DbaError("plan --pid JSON has no %s" % e) from None
    except TypeError as e:
        raise DbaError("plan --pid JSON: %s" % e) from None


MSHARE_SEGMENT = ("0 by construction: mshare keeps the region's page tables in the mshare region's own mm, "
                  "outside every backend's VmPTE (plan --pid lists no mshare consumer: they map the region "
                  "through mshare(), not as the postmaster's mapping), so VmPTE is all the backend's own")


MSHARE_2025_SEGMENT = ("0 by construction: in the 2025 design the region's page tables belong to the region's "
                       "host mm; a backend's P4D entry links them, and VmPTE counts only the backend's own page-table "
                       "pages, so VmPTE is all the backend's own")


def vmpte_split_mshare(vmpte_sum_bytes, backends, vmin_bytes, vmax_bytes, design=2022):
    """The split for an mshare mode, from the backends' VmPTE (MEASURED in
    the snapshot of their /proc/PID/status): the segment's part is 0.
    design: 2022 (the series' v1, mshare()) or 2025 (msharefs, v3)."""
    if vmpte_sum_bytes is None or not backends:
        return None
    mean = round(vmpte_sum_bytes / backends, 1)
    vm = {"count": backends, "mean": mean, "min": vmin_bytes, "max": vmax_bytes, "sum": vmpte_sum_bytes}
    return {"backends": backends, "backends_missing": 0, "segment": None, "source": "the window's /proc/PID/status snapshot",
            "vmpte_bytes": dict(vm, kind="measured"),
            "segment_bytes": {"count": backends, "mean": 0, "min": 0, "max": 0, "sum": 0,
                              "kind": MSHARE_2025_SEGMENT if design == 2025 else MSHARE_SEGMENT},
            "own_bytes": dict(vm, kind="measured VmPTE (the segment's part is 0)"),
            "touched_spans_2m_mean": None}


def backend_pids_from(pass_rows):
    return [pid for pid, *_ in pass_rows]


def window_tps(transactions, window_s):
    if transactions is None or not window_s:
        return None
    return transactions / window_s


def instructions_per_tx(clock, window_s, transactions):
    """Guest instructions per transaction in the window: under the
    instruction clock (1 vCPU, icount shift 0) one guest ns is one
    instruction, so window ns / transactions; None under any other clock."""
    if clock != "guest-instructions" or not transactions or window_s is None:
        return None
    return window_s * 1e9 / transactions


# J. Wartak's published figures (issue 27's text quotes them): QUOTED, not ours.
WARTAK = {
    "source": "J. Wartak, 2025, mshare v2 on Linux 6.14, 4-socket Xeon, PostgreSQL shared_buffers 32 GB, "
              "pgbench -S scale 2000 -j64 -T60, 4 KiB pages (as quoted in issue 27)",
    "shared_buffers_bytes": 32 << 30,
    "connections": 16000,
    "figures": [
        ("connect 16,000 clients", "50-70 s", "6 s"),
        ("connect 8,000 clients", "~4 s", "3 s"),
        ("TPS at 16,000 clients", "130-140k", "~189k"),
        ("TPS at 8,000 clients", "143-150k", "~189k"),
        ("minor faults/s at 16,000 clients (perf stat, 1 s)", "256k", "34k"),
    ],
}


def projection_rows(plan_json, first_pass_by_mode, segment_bytes_measured):
    """Rows (mode, figure, value, label) for the projection to Wartak's
    configuration. plan_json: `plan --json` for his segment and
    connections; first_pass_by_mode: {mode: mean minflt per backend's first
    pass MEASURED at segment_bytes_measured}; faults scale with the segment
    (each backend faults every page of the segment it reads), labelled
    modelled."""
    rows = []
    for m in plan_json["modes"]:
        name = m["mode"]
        rows.append((name, "page tables, all processes", m["pagetable_bytes_total"], "modelled"))
        rows.append((name, "page tables per process", m["pagetable_bytes_per_process"], "modelled"))
        meas = first_pass_by_mode.get({"mshare": "mshare-dax"}.get(name, name))
        if meas is not None and segment_bytes_measured:
            rows.append((name, "minor faults, a backend's first pass",
                         meas * plan_json["inputs"]["sga_bytes"] / segment_bytes_measured, "modelled"))
    return rows


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise DbaError("%s: %s" % (path, e)) from None
