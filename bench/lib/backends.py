"""The harness's backends as it describes them (`mshare-bench backends --json`).

The harness's table of backends (harness/backends.c, each backend's
backend_ops) is the one list of backends and of their facts: whether each
is usable here (and why not), its fixed page size, whether its page tables
are shared, its planner model, where its data lives. The tools read it from
the binary instead of naming backends.
"""

import functools
import json
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_HARNESS = os.path.join(ROOT, "build", "mshare-bench")


class BackendsError(Exception):
    pass


def parse_backends_json(text):
    """`mshare-bench backends --json` output -> {name: facts dict}."""
    try:
        listing = json.loads(text)
    except ValueError as e:
        raise BackendsError("not the JSON of `backends --json`: %s" % e)
    if not isinstance(listing, list) or not all(isinstance(b, dict) and isinstance(b.get("name"), str)
                                                for b in listing):
        raise BackendsError("not the JSON of `backends --json`: expected a list of backends with names")
    return {b["name"]: b for b in listing}


@functools.lru_cache(maxsize=None)
def facts(harness=None):
    """{name: facts} from the harness binary (default build/mshare-bench)."""
    harness = harness or os.environ.get("MSHARE_BENCH_HARNESS") or DEFAULT_HARNESS
    try:
        out = subprocess.run([harness, "backends", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise BackendsError("cannot run %s backends --json: %s (build it with `make`)" % (
            harness, getattr(e, "strerror", None) or e))
    if out.returncode != 0:
        raise BackendsError("%s backends --json: exit %d: %s" % (harness, out.returncode, out.stderr.strip()))
    return parse_backends_json(out.stdout)


def usable(listing):
    """{name: (usable, reason)} of a facts listing."""
    return {name: (bool(b.get("usable")), "" if b.get("usable") else (b.get("why_not") or "not usable here"))
            for name, b in listing.items()}


def host_backends(harness):
    try:
        return usable(facts(harness))
    except BackendsError as e:
        raise SystemExit("sweep: %s" % e)


def fixed_page(backend, harness=None, record=None):
    """True when the backend's page size is its own (hugetlbfs): the page
    axis does not apply to it. From a record's config.backend_facts when it
    has them, else from the harness's table."""
    f = ((record or {}).get("config") or {}).get("backend_facts")
    if not isinstance(f, dict):
        f = facts(harness).get(backend) or {}
    return bool(f.get("fixed_page_bytes"))
