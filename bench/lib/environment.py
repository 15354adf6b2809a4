"""What a run was made on: kernel, CPU, memory, tool versions.

Recorded in every run directory's manifest.json so that a figure can
always be traced back to its conditions.
"""

import os
import platform
import subprocess


def _mshare_design():
    """As harness/mshare_detect.c decides it, from files only: "2022" (the
    v1 series: /proc/sys/vm/mshare_size and msharefs), "2025" (msharefs
    without the sysctl) or None. Never from the syscall numbers."""
    try:
        with open("/proc/filesystems") as f:
            registered = any(line.rstrip("\n").split("\t")[-1] == "msharefs" for line in f)
    except OSError:
        return None
    if not registered:
        return None
    return "2022" if os.path.exists("/proc/sys/vm/mshare_size") else "2025"


def _first_line(cmd, cwd=None):
    try:
        out = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = out.stdout.strip().splitlines()
    return lines[0].strip() if out.returncode == 0 and lines else None


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def _meminfo_kib(field):
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def read_text(path):
    """The text of a file, or None when it cannot be read."""
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def _read(path):
    text = read_text(path)
    return None if text is None else text.strip()


def collect(repo_root, harness):
    """The host's environment; guest runs add the guest's own in records."""
    uname = os.uname()
    return {
        "kernel": uname.release,
        "kernel_version": uname.version,
        "machine": uname.machine,
        "hostname": uname.nodename,
        "cpu": _cpu_model(),
        "cpus_online": os.cpu_count(),
        "mem_total_kib": _meminfo_kib("MemTotal"),
        "hugepages_total": _meminfo_kib("HugePages_Total"),
        "thp_enabled": _read("/sys/kernel/mm/transparent_hugepage/enabled"),
        "shmem_thp_enabled": _read("/sys/kernel/mm/transparent_hugepage/shmem_enabled"),
        "mshare_available": _mshare_design() is not None,
        "mshare_design": _mshare_design(),
        "tool_version": _first_line(["git", "describe", "--always", "--dirty", "--tags"], cwd=repo_root),
        "harness": harness,
        "harness_version": _first_line([harness, "--version"]) if os.path.exists(harness) else None,
        "compiler": _first_line([os.environ.get("CC", "cc"), "--version"]),
        "gnuplot": _first_line(["gnuplot", "--version"]),
        "python": platform.python_version(),
    }
