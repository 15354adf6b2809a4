"""What sharing costs (issue 42), in plain words, from a run's records of
the lifecycle workload (each operation on a region N processes map, with
its TLB flushes, shootdown interrupts, full flushes and lock counts) and
of the fault-locks workload (N workers first-touching one region at once,
with lock_stat around the touch). Used by bench/headline (its "what
sharing costs" block), bench/report (the page's section), plots/plot-run
(the figure of counts against sharers) and bench/compare (two runs, per
operation per backend).

Every figure is read from the records: counts are the minimum over a
record's rounds (lifecycle) and exact; times are in the record's clock
(environment.clock; under plain TCG, guest-tcg-ns, emulated wall time that
follows the host's load, never hardware time).
"""

from runrecords import human, lookup, number
import clocks

# The operations in the words of the headline, with what they cover.
OPS = [
    ("munmap", "munmap of {size}"),
    ("punch_hole", "hole punch of {range} of the file"),
    ("truncate", "truncate of the file to 0"),
    ("msync", "msync of {size}"),
    ("mprotect_ro", "mprotect RW->RO of {size}"),
    ("mprotect_rw", "mprotect RO->RW of {size}"),
    ("madv_dontneed", "MADV_DONTNEED of {range}"),
    ("fork", "fork of a sharer"),
    ("exit", "exit of that sharer"),
    ("attach", "attach of {size}"),
]
# The counts each line names, in order, and their words.
COUNTS = [
    ("kprobe_flush_tlb_mm_range", ("flush_tlb_mm_range call", "flush_tlb_mm_range calls")),
    ("nr_tlb_remote_flush", ("remote flush", "remote flushes")),
    ("irq_tlb_shootdowns", ("TLB shootdown IPI", "TLB shootdown IPIs")),
    ("kprobe_do_flush_tlb_all", ("CPU full flush (flush_tlb_all)", "CPUs' full flushes (flush_tlb_all)")),
]
# Backend labels, in the order they are listed (backend, page mode).
LABELS = [
    (("file", "4k"), "MAP_SHARED DAX 4K"),
    (("file", "any"), "MAP_SHARED DAX 2M"),
    (("hugetlb-2m", "any"), "hugetlb-2m"),
    (("devdax", "any"), "devdax"),
    (("mshare", "4k"), "mshare"),
    (("mshare-2025", "4k"), "mshare 2025 design"),
    (("mshare-2025-file", "any"), "mshare 2025 design (over the DAX file)"),
]
# The figure's panels (plots/sharing-costs.gp): (operation, count, title).
FIGURE_PANELS = [
    ("truncate", "kprobe_flush_tlb_mm_range", "truncate of the file: flush_tlb_mm_range calls"),
    ("truncate", "ptl_acquisitions", "truncate of the file: page-table lock acquisitions"),
    ("msync", "irq_tlb_shootdowns", "msync of the region: TLB shootdown IPIs"),
    ("msync", "kprobe_do_flush_tlb_all", "msync of the region: CPUs' full flushes (flush_tlb_all)"),
]


def label(backend, page):
    for k, text in LABELS:
        if k == (backend, page):
            return text
    if str(backend).startswith("mshare-2025"):
        return "mshare 2025 design (%s)" % backend
    return "%s %s" % (backend, page)


def _order(key):
    keys = [k for k, _ in LABELS]
    return (keys.index(key) if key in keys else len(keys), key)


def _records(run, workload):
    """[(backend, page, workers, size, record)] of one workload: every
    repeat of every point (the first repeat of a point is used)."""
    out = []
    for pid, reps in sorted(run.records.items()):
        for _, r in reps[:1]:
            w = lookup(r, "results.workload") or {}
            if w.get("name") != workload:
                continue
            c = r.get("config") or {}
            out.append((c.get("backend"), c.get("page_mode"), int(c.get("workers") or 0),
                        int(c.get("size_bytes") or 0), r))
    return out


def lifecycle_records(run):
    return [x for x in _records(run, "lifecycle") if (lookup(x[4], "results.workload.ops") or {})]


def fault_locks_records(run):
    return _records(run, "fault-locks")


def fmt_time(v, unit):
    """clocks.fmt_time, with seconds from 1 s on (waits summed over a
    thousand workers run to minutes)."""
    if unit == "ns" and v is not None and abs(float(v)) >= 1e9:
        return "%.4g s" % (float(v) / 1e9)
    return clocks.fmt_time(v, unit)


def count(v):
    return "{:,}".format(int(round(v))) if v is not None else "?"


def op_count(record, op, key):
    """The minimum over the rounds of one count of one operation, or None."""
    return number(lookup(record, "results.workload.ops.%s.counts.%s.min" % (op, key)))


def op_time(record, op):
    return number(lookup(record, "results.workload.ops.%s.ns.min" % op))


def environment_text(record):
    e = record.get("environment") or {}
    k = e.get("kernel")
    return "%s (%s), kernel %s %s, %s CPUs in the guest" % (
        clocks.clock_text(clocks.clock(record)), clocks.clock(record),
        k if isinstance(k, str) else "?", e.get("kernel_version") or "", count(
            number(lookup(record, "results.workload.cpus_online"))))


def op_text(record, op):
    """"1.2 ms, 1,000 flush_tlb_mm_range calls, ..." or "refused (EINVAL)"."""
    o = lookup(record, "results.workload.ops.%s" % op) or {}
    if not o.get("rounds"):
        return "refused (%s)" % o.get("errno", "?") if o.get("refused") else "not done"
    unit = clocks.unit(record)
    parts = [fmt_time(op_time(record, op), unit)]
    for key, words in COUNTS:
        v = op_count(record, op, key)
        if v is None or (key == "kprobe_do_flush_tlb_all" and v == 0):
            continue
        parts.append("%s %s" % (count(v), words[0] if v == 1 else words[1]))
    con = sum(op_count(record, op, k) or 0 for k in ("mmap_lock_contentions", "i_mmap_rwsem_contentions",
                                                    "ptl_contentions"))
    if con:
        parts.append("%s lock contention%s" % (count(con), "" if con == 1 else "s"))
    return ", ".join(parts)


def lifecycle_table(run):
    """{(workers, size): {(backend, page): record}}."""
    t = {}
    for backend, page, workers, size, r in lifecycle_records(run):
        t.setdefault((workers, size), {})[(backend, page)] = r
    return t


def lifecycle_lines(run):
    """The headline's block on the lifecycle operations, at the most sharers
    with the most backends; [] when the run has no lifecycle records."""
    t = lifecycle_table(run)
    if not t:
        return []
    (workers, size) = max(t, key=lambda k: (len(t[k]), k[0], k[1]))
    row = t[(workers, size)]
    first = row[sorted(row, key=_order)[0]]
    rounds = number(lookup(first, "results.workload.rounds"))
    rng = number(lookup(first, "results.workload.range_bytes"))
    spinners = number(lookup(first, "results.workload.spinners"))
    lines = ["what sharing costs (lifecycle: worker 0 runs each operation while %s processes map %s, %s of them "
             "spinning on other CPUs; min over %s round(s); %s; counts exact, times %s):" % (
                 count(workers), human(size, "bytes"), count(spinners), count(rounds), environment_text(first),
                 "emulated, not hardware time" if clocks.clock(first) == "guest-tcg-ns" else
                 "in that clock")]
    for op, words in OPS:
        if not any(lookup(r, "results.workload.ops.%s" % op) for r in row.values()):
            continue
        what = words.format(size=human(size, "bytes"), range=human(rng or 0, "bytes"))
        parts = ["%s %s" % (label(*k), op_text(row[k], op)) for k in sorted(row, key=_order)]
        lines.append("  %s mapped by %s processes: %s" % (what, count(workers), "; ".join(parts))
                     if op not in ("fork", "exit", "attach") else
                     "  %s (%s sharers): %s" % (what, count(workers), "; ".join(parts)))
    others = sorted(w for (w, s) in t if s == size and w != workers)
    if others:
        lines.append("  the same at %s sharers: bench/lifecycle-table %s" % (
            ", ".join(count(w) for w in others), run.path))
    return lines


def fault_locks_lines(run):
    """The headline's block on concurrent first touches: per backend, per
    worker count, the faults, those that slept, and the lock contention;
    [] when the run has no fault-locks records."""
    recs = fault_locks_records(run)
    if not recs:
        return []
    by = {}
    for backend, page, workers, size, r in recs:
        by.setdefault((backend, page, size), []).append((workers, r))
    first = recs[0][4]
    unit = clocks.unit(first)
    lines = ["concurrent first touches (fault-locks: N workers first-touch every page of one region at once; "
             "lock_stat cleared just before, read after; %s; counts exact, times %s):" % (
                 environment_text(first), "emulated, not hardware time"
                 if clocks.clock(first) == "guest-tcg-ns" else "in that clock")]
    for (backend, page, size) in sorted(by, key=lambda k: (_order(k[:2]), k[2])):
        parts = []
        for workers, r in sorted(by[(backend, page, size)], key=lambda x: x[0]):
            fc = lookup(r, "results.fault_cost") or {}
            faults = (number(lookup(fc, "faults.count")) or 0) + (number(lookup(fc, "preempted.faults")) or 0)
            slept = number(lookup(fc, "slept_faults.count"))
            ls = lookup(r, "results.workload.lock_stat")
            text = "%s: %s faults, %s slept" % (count(workers), count(faults), count(slept))
            if slept:
                text += " (p50 %s)" % fmt_time(number(lookup(fc, "slept_faults.p50")), unit)
            if isinstance(ls, dict):
                text += ", mmap_lock %s contentions" % count(ls.get("mmap_lock_contentions"))
                if backend.startswith("mshare"):
                    text += " (host mm's, nested: %s acquisitions)" % count(ls.get("mmap_lock_nested_acquisitions"))
                text += ", page-table locks %s" % count(ls.get("ptl_contentions"))
                top = (ls.get("most_contended") or [None])[0]
                if top:
                    text += ", most contended %s %s (wait %s)" % (top.get("class"), count(top.get("lock_contentions")),
                                                                 fmt_time(top.get("lock_wait_ns"), unit))
            else:
                text += ", no lock_stat (%s)" % lookup(r, "results.workload.lock_stat_unavailable_why")
            parts.append(text)
        lines.append("  %s over %s, by workers: %s" % (label(backend, page), human(size, "bytes"), "; ".join(parts)))
    return lines


def figure_series(run):
    """The figure's series: {(backend, page, size): [(workers, [value of
    each panel or None])]}, sorted by workers."""
    out = {}
    for backend, page, workers, size, r in lifecycle_records(run):
        vals = [op_count(r, op, key) for op, key, _ in FIGURE_PANELS]
        out.setdefault((backend, page, size), []).append((workers, vals))
    return {k: sorted(v, key=lambda x: x[0]) for k, v in sorted(out.items(), key=lambda kv: (_order(kv[0][:2]),
                                                                                             kv[0][2]))}


def compare_rows(run_a, run_b):
    """Per operation, backend and sharer count present in both runs: the
    time and the counts of each (min over rounds). [(op, label, workers,
    key, a, b)]; keys without a value in either run are left out, and so
    is the time when the two records name different clocks."""
    ta, tb = lifecycle_table(run_a), lifecycle_table(run_b)
    out = []
    keys = ["ns"] + [k for k, _ in COUNTS] + ["ptl_acquisitions", "mmap_lock_contentions", "i_mmap_rwsem_contentions",
                                            "ptl_contentions"]
    for ws in sorted(set(ta) & set(tb)):
        for bk in sorted(set(ta[ws]) & set(tb[ws]), key=_order):
            ra, rb = ta[ws][bk], tb[ws][bk]
            same_clock = clocks.clock(ra) == clocks.clock(rb)
            for op, _ in OPS:
                for k in keys:
                    if k == "ns" and not same_clock:
                        continue  # times of different clocks are not compared; counts are
                    a = op_time(ra, op) if k == "ns" else op_count(ra, op, k)
                    b = op_time(rb, op) if k == "ns" else op_count(rb, op, k)
                    if a is None and b is None:
                        continue
                    out.append((op, label(*bk), ws[0], k, a, b))
    return out
