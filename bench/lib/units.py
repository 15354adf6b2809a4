"""Sizes as the suite reads and prints them: the Python copy of
harness/parse.c's parse_size_or_zero and format_bytes.

tests/corpus/sizes.txt holds parse_size, and tests/corpus/bytes.txt holds
format_bytes, to the same answers as the C functions (tests/bench/sizes_test.py
and build/tests/harness/test-parse), so a size reads and prints the same in
the binary, the planner and every tool.
"""

import re

# The suite's one size grammar (harness/parse.c parse_size; the planner
# uses it too): DIGITS [K|M|G|T|P [iB|B]] | DIGITS B | 0x HEX, units binary
# and case-insensitive, at most 2**64 - 1.
SIZE_RE = re.compile(r"\A(?:0[xX]([0-9a-fA-F]+)|([0-9]+)(?:([KMGTPkmgtp])(?:[iI][bB]|[bB])?|[bB])?)\Z")
SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40, "P": 1 << 50}
BYTE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")


def parse_size(text):
    """'256M' -> 268435456, '0x1000' -> 4096, '0' -> 0; None if it is not a
    size (the harness's grammar, see SIZE_RE)."""
    m = SIZE_RE.match(text)
    if not m:
        return None
    if m.group(1) is not None:
        n = int(m.group(1), 16)
    else:
        n = int(m.group(2)) * SIZE_UNITS[(m.group(3) or "").upper()]
    return n if n < 1 << 64 else None


def size_label(nbytes):
    """268435456 -> '256M': the largest unit that divides exactly (a size
    in the grammar above, for point ids and file names)."""
    for unit in ("T", "G", "M", "K"):
        if nbytes % SIZE_UNITS[unit] == 0 and nbytes >= SIZE_UNITS[unit]:
            return "%d%s" % (nbytes // SIZE_UNITS[unit], unit)
    return str(nbytes)


def format_bytes(n):
    """A byte count for people, as harness/parse.c format_bytes writes it:
    below 1 KiB the exact count ('100 B'); above, in the largest binary unit
    that leaves 1 or more, to 4 significant digits without trailing zeros
    ('4 KiB', '1.5 GiB', '878.9 GiB'). A fraction is dropped as the C
    function's uint64_t drops it; a negative count (a difference) keeps
    its sign."""
    n = int(n)
    if n < 0:
        return "-" + format_bytes(-n)
    v, u = float(n), 0
    while v >= 1024 and u + 1 < len(BYTE_UNITS):
        v /= 1024
        u += 1
    return "%d B" % n if u == 0 else "%.4g %s" % (v, BYTE_UNITS[u])
