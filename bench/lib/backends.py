"""The harness's `backends` listing: which backends can run here, and why not."""

import subprocess


def parse_backends_listing(text):
    """`mshare-bench backends` output -> {name: (usable, reason)}.

    Accepts one backend per line: NAME, then a word saying whether it is
    usable (yes/no/ok/usable/unavailable...), then the reason, e.g.
        shm         yes  MAP_SHARED of a file on tmpfs
        mshare      no   mshare not available on this kernel
    A header line (BACKEND USABLE ...) is ignored.
    """
    listing = {}
    for line in text.splitlines():
        words = line.replace("\t", " ").split(None, 2)
        if len(words) < 2 or words[0].lower() in ("backend", "name", "backends"):
            continue
        name, state = words[0].rstrip(":"), words[1].lower().strip("()[],:")
        rest = words[2].strip() if len(words) > 2 else ""
        if state in ("yes", "ok", "usable", "available", "y"):
            listing[name] = (True, "")
        elif state in ("no", "unusable", "unavailable", "n", "not"):
            if state == "not":  # "not usable: why"
                rest = rest.split(None, 1)[1] if len(rest.split(None, 1)) > 1 else rest
            listing[name] = (False, rest.lstrip("-: ").strip() or "not usable here")
    return listing


def host_backends(harness):
    try:
        out = subprocess.run([harness, "backends"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, timeout=60)
    except OSError as e:
        raise SystemExit("sweep: cannot run %s backends: %s (build it with `make`)" % (harness, e.strerror))
    listing = parse_backends_listing(out.stdout)
    if not listing:
        raise SystemExit("sweep: could not read the output of `%s backends`:\n%s" % (harness, out.stdout))
    return listing
