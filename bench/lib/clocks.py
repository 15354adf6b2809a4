"""Which clock a record's times are in, and their unit, named the same way
by every tool (headline, summary, side-by-side, compare, plots).

environment.clock (schema 5 and up): "guest-instructions" (QEMU icount,
one guest instruction per tick, 1 vCPU), "guest-tcg-ns" (plain TCG wall
time), "guest-kvm-ns" (KVM, hardware time), "host-ns". Older records have
no clock: their times are ns of whatever clock the platform had, said as
"clock not recorded (schema N)", never guessed.
"""



def lookup(record, dotted):
    """record['a']['b'] for 'a.b'; None when any part is missing. The one
    copy: runrecords (which imports this module) exports it as its own."""
    node = record
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node

CLOCK_TEXT = {
    "guest-instructions": "guest, instruction clock",
    "guest-tcg-ns": "guest, plain TCG wall clock",
    "guest-kvm-ns": "guest, KVM clock",
    "host-ns": "host, wall clock",
}


def clock(record):
    """The record's clock id, or 'unrecorded (schema N)'."""
    c = lookup(record, "environment.clock")
    if isinstance(c, str) and c:
        return c
    return "unrecorded (schema %s)" % lookup(record, "schema_version")


def clock_text(clock_id):
    """'guest, instruction clock' for a known id; the id itself otherwise."""
    if clock_id.startswith("unrecorded"):
        return "clock not recorded" + clock_id[len("unrecorded"):]
    return CLOCK_TEXT.get(clock_id, "clock " + clock_id)


def unit(record):
    """The unit of the record's times: results.fault_cost.unit, else
    environment.time_unit, else ns (older records name their keys *_ns)."""
    for key in ("results.fault_cost.unit", "environment.time_unit"):
        u = lookup(record, key)
        if isinstance(u, str) and u:
            return u
    return "ns"


def unit_short(u):
    return "instr" if u == "instructions" else u


def label(record):
    """'instructions, guest-instructions clock' for column headers."""
    return "%s, %s clock" % (unit(record), clock(record))


def fmt_time(value, u):
    """4,383 instructions / 830 ns / 1.234 us: a time in its unit."""
    if value is None:
        return "-"
    if u == "instructions":
        return "{:,} instructions".format(int(round(value)))
    if u == "ns":
        v = float(value)
        if abs(v) < 1e4:
            return "{:,} ns".format(int(round(v)))
        if abs(v) < 1e7:
            return "%.4g us" % (v / 1e3)
        return "%.4g ms" % (v / 1e6)
    return "%g %s" % (value, u)
