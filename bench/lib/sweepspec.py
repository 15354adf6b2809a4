"""Sweep spec files: parse, validate and expand into points.

The format is documented in bench/README.md. In short: one `key = value`
per line, `#` starts a comment, list values are comma-separated, and
`exclude` / `args[...]` lines take conditions on a point's fields.

Every error names the file, the line and what is wrong (SpecError), so a
typo in a spec never starts a sweep.
"""

import os
import re
import shlex
import subprocess

import backends
import pgpoint
from units import SIZE_UNITS, parse_size, size_label  # noqa: F401 (the suite's size grammar)

LIST_KEYS = ("backends", "workers", "sizes", "workloads", "page", "write", "platform")
SCALAR_KEYS = ("name", "description", "repeats", "args", "timeout", "vm-args", "clock")
MULTI_KEYS = ("exclude",)  # may appear more than once
REQUIRED_KEYS = ("backends", "workers", "sizes", "workloads")

DEFAULTS = {
    "page": ["4k"],
    "write": ["no"],
    "platform": ["host"],
    "repeats": 1,
    "args": "",
    "timeout": 3600,
    "vm-args": "",
}

# Fields of a point that exclude/args conditions can test, and whether
# they compare as numbers (so <, <=, >, >= make sense).
FIELDS = {
    "backend": False,
    "workers": True,
    "size": True,
    "workload": False,
    "page": False,
    "write": False,
    "platform": False,
}

PAGE_MODES = ("4k", "any")
PLATFORMS = ("host", "guest")
# kernel/vm/run.sh --clock: how QEMU runs the guest points (no key: the VM
# runner's default, tcg).
CLOCKS = ("instructions", "tcg", "kvm", "auto")
WRITE_VALUES = ("no", "yes")
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
DURATION_RE = re.compile(r"^([0-9]+)(s|m|h)?$")
COND_RE = re.compile(r"^([a-z]+)(<=|>=|!=|=|<|>)(.+)$")
KEY_RE = re.compile(r"^([a-z][a-z-]*)(?:\[(.*)\])?$")


class SpecError(Exception):
    """A spec problem, already formatted as `file:line: message`."""


class Condition:
    """One `field OP value` test; value may list alternatives with `|`."""

    def __init__(self, field, op, values, text):
        self.field, self.op, self.values, self.text = field, op, values, text

    def holds(self, point):
        actual = point[self.field if self.field != "size" else "size_bytes"]
        if self.op == "=":
            return actual in self.values
        if self.op == "!=":
            return actual not in self.values
        v = self.values[0]
        return {"<": actual < v, "<=": actual <= v, ">": actual > v, ">=": actual >= v}[self.op]


def parse_conditions(text, where):
    """'workload=touch workers>=1000' -> [Condition, ...] (all must hold)."""
    conds = []
    words = text.split()
    if not words:
        raise SpecError("%s: expected one or more conditions like 'workers>=1000 backend=shm'" % where)
    for word in words:
        m = COND_RE.match(word)
        if not m:
            raise SpecError("%s: bad condition '%s' (expected FIELD OP VALUE, OP one of = != < <= > >=, "
                            "no spaces inside)" % (where, word))
        field, op, raw = m.groups()
        if field not in FIELDS:
            raise SpecError("%s: unknown field '%s' in condition '%s' (fields: %s)"
                            % (where, field, word, ", ".join(FIELDS)))
        numeric = FIELDS[field]
        if op in ("<", "<=", ">", ">=") and not numeric:
            raise SpecError("%s: '%s' compares '%s', which is not a number; use = or !="
                            % (where, word, field))
        alternatives = raw.split("|")
        if op not in ("=", "!=") and len(alternatives) > 1:
            raise SpecError("%s: '%s': alternatives with | only work with = and !=" % (where, word))
        values = []
        for alt in alternatives:
            if field == "workers":
                if not alt.isdigit():
                    raise SpecError("%s: '%s': workers must be a whole number, not '%s'" % (where, word, alt))
                values.append(int(alt))
            elif field == "size":
                n = parse_size(alt)
                if n is None:
                    raise SpecError("%s: '%s': '%s' is not a size (e.g. 64M, 1G)" % (where, word, alt))
                values.append(n)
            else:
                values.append(alt)
        conds.append(Condition(field, op, values, word))
    return conds


class Spec:
    """A parsed sweep spec: axes, options, excludes, and its own text."""

    def __init__(self, path, text):
        self.path = path
        self.text = text
        self.values = {}
        self.lines = {}          # key -> line number, for later error messages
        self.excludes = []       # list of (line, [Condition])
        self.cond_args = []      # list of (line, [Condition], args string)
        self.cond_repeats = []   # list of (line, [Condition], repeats)
        self.cond_clocks = []    # list of (line, [Condition], clock)

    def get(self, key):
        return self.values.get(key, DEFAULTS.get(key))

    @property
    def name(self):
        return self.get("name")

    def where(self, key):
        return "%s:%s" % (self.path, self.lines.get(key, "?"))

    def expand(self):
        """All points of the sweep, in a stable order, excluded ones dropped.

        Order: platform, workload, backend, page, size, write, workers, so
        that a listing reads naturally and a small worker count runs first.
        """
        points = []
        seen = set()
        for platform in self.get("platform"):
            for workload in self.get("workloads"):
                for backend in self.get("backends"):
                    for page in self.get("page"):
                        for size in self.get("sizes"):
                            for write in self.get("write"):
                                for workers in self.get("workers"):
                                    p = make_point(platform, workload, backend, page, size, write, workers)
                                    if any(all(c.holds(p) for c in conds) for _, conds in self.excludes):
                                        continue
                                    if p["id"] in seen:
                                        continue
                                    seen.add(p["id"])
                                    p["args"] = self.args_for(p)
                                    p["repeats"] = self.repeats_for(p)
                                    clock = self.clock_for(p)
                                    if clock:
                                        p["clock"] = clock
                                    points.append(p)
        return points

    def repeats_for(self, point):
        """`repeats`, or the last matching `repeats[...]` line's value."""
        n = self.get("repeats")
        for _, conds, value in self.cond_repeats:
            if all(c.holds(point) for c in conds):
                n = value
        return n

    def clock_for(self, point):
        """A guest point's clock (kernel/vm/run.sh --clock): `clock`, or
        the last matching `clock[...]` line's value; None for host points
        and when neither is set (the VM runner's default). The guest part
        boots once per clock."""
        if point["platform"] != "guest":
            return None
        clock = self.values.get("clock")
        for _, conds, value in self.cond_clocks:
            if all(c.holds(point) for c in conds):
                clock = value
        return clock

    def total_runs(self, points=None):
        return sum(p["repeats"] for p in (self.expand() if points is None else points))

    def args_for(self, point):
        """Global `args` then every matching `args[...]`, in file order,
        each split as a shell would (shlex)."""
        args = split_args(self.get("args"), self.where("args"))
        for lineno, conds, extra in self.cond_args:
            if all(c.holds(point) for c in conds):
                args += split_args(extra, "%s:%d" % (self.path, lineno))
        return args


# Backends whose page size is the backend's own (hugetlbfs; the harness's
# backends --json says which): the page axis does not apply to them. Their
# points run with --page any, their ids have no page part, and a page list
# gives them one point, not one per mode.
def fixed_page(backend):
    try:
        return backends.fixed_page(backend)
    except backends.BackendsError as e:
        raise SpecError("cannot ask the harness which backends have a fixed page size: %s" % e)


def make_point(platform, workload, backend, page, size_bytes, write, workers):
    if fixed_page(backend):
        page = "any"
    point = {
        "platform": platform,
        "workload": workload,
        "backend": backend,
        "page": page,
        "size_bytes": size_bytes,
        "size": size_label(size_bytes),
        "write": write,
        "workers": workers,
    }
    point["id"] = point_id(point)
    return point


def point_id(p):
    """Stable, readable id, e.g. shm-4k-w100-s256M-pt-footprint
    (hugetlb-2m-w100-s256M-pt-footprint: no page part, see above).

    Guest points start with 'guest-' so that one run directory can hold
    both platforms; write runs end with '-write'.
    """
    if fixed_page(p["backend"]):
        pid = "%s-w%d-s%s-%s" % (p["backend"], p["workers"], p["size"], p["workload"])
    else:
        pid = "%s-%s-w%d-s%s-%s" % (p["backend"], p["page"], p["workers"], p["size"], p["workload"])
    if p["write"] == "yes":
        pid += "-write"
    if p["platform"] == "guest":
        pid = "guest-" + pid
    return pid


def _split_list(value, where, key):
    items = [v.strip() for v in value.split(",")]
    if any(not v for v in items):
        raise SpecError("%s: '%s' has an empty item (stray comma?): '%s'" % (where, key, value))
    if len(set(items)) != len(items):
        dup = [v for v in items if items.count(v) > 1][0]
        raise SpecError("%s: '%s' lists '%s' twice" % (where, key, dup))
    return items


def _check_list(key, items, where):
    if key == "workers":
        out = []
        for v in items:
            if not v.isdigit() or int(v) < 1:
                raise SpecError("%s: workers: '%s' is not a positive whole number" % (where, v))
            out.append(int(v))
        return out
    if key == "sizes":
        out = []
        for v in items:
            n = parse_size(v)
            if n is None or n == 0:
                raise SpecError("%s: sizes: '%s' is not a size above zero (bytes, 0x hex, or a number "
                                "with K, M, G, T or P, e.g. 256M; at most 2^64 - 1)" % (where, v))
            out.append(n)
        return out
    allowed = {"page": PAGE_MODES, "platform": PLATFORMS, "write": WRITE_VALUES}.get(key)
    for v in items:
        if allowed and v not in allowed:
            raise SpecError("%s: %s: '%s' is not one of %s" % (where, key, v, ", ".join(allowed)))
        if not allowed and not NAME_RE.match(v):
            raise SpecError("%s: %s: '%s' is not a valid name (lower-case letters, digits, - _ .)"
                            % (where, key, v))
    return items


def _check_scalar(key, value, where):
    if key == "repeats":
        if not value.isdigit() or int(value) < 1:
            raise SpecError("%s: repeats: '%s' is not a positive whole number" % (where, value))
        return int(value)
    if key == "timeout":
        m = DURATION_RE.match(value)
        if not m or int(m.group(1)) == 0:
            raise SpecError("%s: timeout: '%s' is not a duration (e.g. 600, 600s, 10m, 1h)" % (where, value))
        return int(m.group(1)) * {None: 1, "s": 1, "m": 60, "h": 3600}[m.group(2)]
    if key in ("args", "vm-args"):
        split_args(value, where)
    if key == "clock" and value not in CLOCKS:
        raise SpecError("%s: clock: '%s' is not one of %s (kernel/vm/run.sh --clock)"
                        % (where, value, ", ".join(CLOCKS)))
    if key == "name" and not NAME_RE.match(value):
        raise SpecError("%s: name: '%s' is not a valid name (lower-case letters, digits, - _ .)"
                        % (where, value))
    return value


def split_args(text, where):
    """Options as a shell would split them; a SpecError for a stray quote."""
    try:
        return shlex.split(text)
    except ValueError as e:
        raise SpecError("%s: args: cannot split '%s' as a shell would: %s" % (where, text, e))


def strip_comment(line):
    """Drop a comment: '#' at the start or after white space."""
    m = re.search(r"(^|\s)#", line)
    return line[:m.start()] if m else line


def parse(text, path="<spec>", default_name=None):
    spec = Spec(path, text)
    for lineno, raw in enumerate(text.splitlines(), 1):
        where = "%s:%d" % (path, lineno)
        line = strip_comment(raw).strip()
        if not line:
            continue
        if "=" not in line:
            raise SpecError("%s: expected 'key = value', got '%s'" % (where, line))
        # Split on the first '=' that is followed by a space or ends the
        # key; conditions inside [...] contain '=' themselves.
        m = re.match(r"^([a-z][a-z-]*(?:\[[^\]]*\])?)\s*=\s*(.*)$", line)
        if not m:
            raise SpecError("%s: cannot read the key in '%s' (keys are lower-case words, "
                            "optionally with [conditions])" % (where, line))
        keypart, value = m.group(1), m.group(2).strip()
        km = KEY_RE.match(keypart)
        key, conds_text = km.group(1), km.group(2)
        known = LIST_KEYS + SCALAR_KEYS + MULTI_KEYS
        if key not in known:
            raise SpecError("%s: unknown key '%s' (known keys: %s)" % (where, key, ", ".join(known)))
        if conds_text is not None:
            if key not in ("args", "repeats", "clock"):
                raise SpecError("%s: only 'args', 'repeats' and 'clock' take [conditions], not '%s'" % (where, key))
            conds = parse_conditions(conds_text, where)
            if key == "clock":
                if any(c.field == "platform" and c.op == "=" and "guest" not in c.values for c in conds):
                    raise SpecError("%s: clock[...] applies to guest points only (the host has one clock)" % where)
                spec.cond_clocks.append((lineno, conds, _check_scalar(key, value, where)))
                spec.lines.setdefault("clock[]", lineno)
            elif key == "repeats":
                spec.cond_repeats.append((lineno, conds, _check_scalar(key, value, where)))
            else:
                split_args(value, where)
                spec.cond_args.append((lineno, conds, value))
            continue
        if key == "exclude":
            spec.excludes.append((lineno, parse_conditions(value, where)))
            continue
        if not value and key not in ("args", "vm-args", "description"):
            raise SpecError("%s: '%s' has no value" % (where, key))
        if key in spec.values:
            raise SpecError("%s: '%s' is set twice (first on line %d)" % (where, key, spec.lines[key]))
        if key in LIST_KEYS:
            spec.values[key] = _check_list(key, _split_list(value, where, key), where)
        else:
            spec.values[key] = _check_scalar(key, value, where)
        spec.lines[key] = lineno
    for key in REQUIRED_KEYS:
        if key not in spec.values:
            raise SpecError("%s: missing required key '%s' (required: %s)"
                            % (path, key, ", ".join(REQUIRED_KEYS)))
    if ("clock" in spec.values or spec.cond_clocks) and any(a == "--clock" or a.startswith("--clock=")
                                      for a in split_args(spec.get("vm-args") or "", path)):
        raise SpecError("%s: both 'clock' and a --clock in 'vm-args' (line %d): set it once"
                        % (spec.where("clock" if "clock" in spec.values else "clock[]"),
                           spec.lines.get("vm-args", 0)))
    if "name" not in spec.values:
        spec.values["name"] = default_name or "sweep"
    if not spec.expand():
        raise SpecError("%s: every point is excluded; nothing to run" % path)
    return spec


def load(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise SpecError("%s: cannot read spec: %s" % (path, e.strerror))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SpecError("%s: not a text spec: byte 0x%02x at offset %d is not UTF-8" % (path, data[e.start], e.start))
    if "\0" in text:
        raise SpecError("%s: not a text spec: NUL byte at offset %d" % (path, text.index("\0")))
    base = os.path.basename(path)
    if base.endswith(".sweep"):
        base = base[: -len(".sweep")]
    return parse(text, path, default_name=base)


def harness_args(p):
    """`mshare-bench run` options of a point, without --out."""
    cmd = ["--backend", p["backend"], "--workers", str(p["workers"]), "--size", p["size"],
           "--workload", p["workload"], "--page", p["page"]]
    if p["write"] == "yes":
        cmd.append("--write")
    return cmd + list(p.get("args", []))


def blame_key(msg):
    """The spec key whose value the harness's message is about."""
    if "option --" in msg or "unknown option" in msg:
        return "args"
    for needle, key in (("--backend", "backends"), ("backend '", "backends"), ("--workers", "workers"),
                        ("--size", "sizes"), ("region ", "sizes"), ("workload", "workloads"), ("--page", "page")):
        if needle in msg:
            return key
    return "args"


def check_with_harness(spec, harness):
    """Ask the harness (`run --check`) about every point: the binary is the
    one list of what it accepts. A SpecError names the spec line, the point
    and the harness's own message."""
    tried = set()
    for p in spec.expand():
        if pgpoint.is_pg(p):
            # A PostgreSQL point (bench/lib/pgpoint.py): pg-bench.sh runs
            # it, not the harness; its axes and args are checked here.
            why = pgpoint.check(p)
            if why:
                blame = "args" if why.startswith(("option", "--")) else \
                    {"backend": "backends", "page": "page", "write": "write", "size": "sizes"}.get(why.split()[0], "backends")
                raise SpecError("%s: point %s: %s" % (spec.where(blame), p["id"], why))
            continue
        args = harness_args(p)
        key = tuple(args)
        if key in tried:
            continue
        tried.add(key)
        try:
            r = subprocess.run([harness, "run", "--check"] + args, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, errors="replace", timeout=60)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise SpecError("%s: cannot ask the harness %s to check the points: %s" % (spec.path, harness, e))
        if r.returncode != 0:
            msg = (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]
            msg = msg.replace("mshare-bench run: ", "")
            blame = blame_key(msg)
            raise SpecError("%s: point %s: the harness refuses it: %s" % (spec.where(blame), p["id"], msg))
