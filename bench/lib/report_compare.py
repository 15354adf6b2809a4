"""One HTML page comparing two or more run directories (bench/report
RUN_A RUN_B ... --out DIR), like mmtests' compare-kernels: the conditions
that differ between the runs at the top, then per figure the same points
side by side with the change against the first run (the baseline) and
Welch's t-test over the repeats, as `bench/compare --csv` computes them
(run as a subprocess: one test, one set of numbers). Rendered from
bench/templates/compare.html.j2 with autoescape on; deterministic.
"""

import csv
import io
import os
import subprocess

import report
import runrecords

ALPHA = 0.05


def condition_items(run):
    """(label, value) pairs that describe how a run was made."""
    m = run.manifest
    menv = m.get("environment") if isinstance(m.get("environment"), dict) else {}
    items = [("sweep", m.get("sweep")), ("spec", m.get("spec_path")), ("command", m.get("command")),
             ("repeats", m.get("repeats")), ("VM options", m.get("vm_args")),
             ("sweep machine: kernel", menv.get("kernel")), ("sweep machine: CPU", menv.get("cpu")),
             ("tool version (manifest)", menv.get("tool_version"))]
    for c in report.conditions(run):
        p = c["platform"]
        for key, label in (("kernel", "kernel release"), ("build", "build key"), ("clock_shown", "clock"),
                           ("unit", "time unit"), ("cpu", "CPU"), ("cpus", "CPUs"), ("memory", "memory"),
                           ("numa_nodes", "NUMA nodes"), ("tool_version", "tool version"),
                           ("backing", "file systems"), ("slurm_nodes", "Slurm nodes")):
            # Sorted: two runs that met the same values in another order agree.
            items.append(("%s: %s" % (p, label), ", ".join(sorted(c.get(key) or [])) or None))
    for v in report.vm_envs(run):
        items.append(("guest %s: pmem" % v["boot"], v["pmem"]))
        items.append(("guest %s: accelerator" % v["boot"], v["accel"]))
    return [(k, "" if v is None else str(v)) for k, v in items]


def conditions_table(runs):
    per_run = [dict(condition_items(r)) for r in runs]
    labels = []
    for r in runs:
        for k, _ in condition_items(r):
            if k not in labels:
                labels.append(k)
    differ, same = [], []
    for k in labels:
        vals = [d.get(k, "") for d in per_run]
        if not any(vals):
            continue
        (differ if len(set(vals)) > 1 else same).append({"label": k, "vals": [v or "-" for v in vals]})
    return differ, same


def run_compare(run_args):
    metrics = ",".join(m[0] for m in runrecords.METRICS)
    r = subprocess.run([os.path.join(report.ROOT, "bench", "compare"), "--csv", "--metrics", metrics,
                        "--alpha", str(ALPHA)] + run_args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, cwd=report.ROOT)
    if r.returncode != 0:
        return None, "\n".join(x.strip() for x in (r.stdout, r.stderr) if x.strip()) or \
            "bench/compare exited %d" % r.returncode
    return list(csv.DictReader(io.StringIO(r.stdout))), None


def fmt_p(p):
    if p in ("", None):
        return "-"
    p = float(p)
    return "%.3f" % p if p >= 0.001 else "<0.001"


def tables(runs, rows):
    """One table per figure: point, baseline mean (n), then per other run
    mean (n), change, p, significant."""
    names = [r.name for r in runs]
    by_metric = {}
    for row in rows:
        t = by_metric.setdefault(row["metric"], {"rows": {}, "unit": row["unit"]})
        entry = t["rows"].setdefault(row["point_id"], {
            "point": row["point_id"],
            "base": "%s (%s)" % (runrecords.human(float(row["baseline_mean"]), row["unit"]), row["baseline_n"]),
            "base_raw": row["baseline_mean"], "cmp": [None] * (len(runs) - 1)})
        i = names.index(row["run"]) - 1 if row["run"] in names[1:] else None
        if i is None:
            continue
        entry["cmp"][i] = {
            "mean": "%s (%s)" % (runrecords.human(float(row["mean"]), row["unit"]), row["n"]),
            "raw": row["mean"],
            "change": "-" if row["change_pct"] == "" else "%+.1f%%" % float(row["change_pct"]),
            "p": fmt_p(row["p_welch"]), "significant": row["significant"] == "yes"}
    out = []
    for name, _, unit, label in runrecords.METRICS:
        t = by_metric.get(name)
        if not t:
            continue
        rows_ = list(t["rows"].values())
        nsig = sum(1 for e in rows_ for c in e["cmp"] if c and c["significant"])
        out.append({"name": name, "label": label, "unit": unit, "rows": rows_, "significant": nsig})
    return out


def significant_list(tabs, runs):
    out = []
    for t in tabs:
        for e in t["rows"]:
            for i, c in enumerate(e["cmp"]):
                if c and c["significant"]:
                    out.append({"metric": t["label"], "point": e["point"], "run": runs[i + 1].name,
                                "base": e["base"], "mean": c["mean"], "change": c["change"], "p": c["p"]})
    return out


def only_in_some(runs):
    ids = {}
    for i, run in enumerate(runs):
        for pid in run.records:
            ids.setdefault(pid, set()).add(i)
    return [{"point": pid, "runs": [runs[i].name for i in sorted(s)]}
            for pid, s in sorted(ids.items()) if len(s) < len(runs)]


def page(runs, run_args, out_dir):
    rows, error = run_compare(run_args)
    tabs = tables(runs, rows or [])
    differ, same = conditions_table(runs)
    heads = [report.headline(a) for a in run_args]
    links = []
    for run, head in zip(runs, heads):
        own = os.path.join(run.path, "report", "index.html")
        links.append({"name": run.name, "path": os.path.relpath(run.path, out_dir),
                      "report": os.path.relpath(own, out_dir) if os.path.exists(own) else None,
                      "headline": head,
                      "description": run.manifest.get("description") or ""})
    return {"runs": links, "differ": differ, "same": same, "tables": tabs, "error": error,
            "significant": significant_list(tabs, runs), "alpha": ALPHA, "only": only_in_some(runs),
            "others": [r.name for r in runs[1:]]}


def render(context):
    j = report.jinja()
    env = j.Environment(loader=j.FileSystemLoader(report.TEMPLATES), autoescape=True,
                        undefined=j.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                        keep_trailing_newline=True)
    return env.get_template("compare.html.j2").render(**context)


def write_compare(run_dirs, run_args, out_dir):
    """Write OUT_DIR/index.html (see report.publish)."""
    runs = [runrecords.Run(p) for p in run_dirs]
    out_dir = os.path.abspath(out_dir)
    return report.publish(out_dir, lambda tmp: render(page(runs, run_args, out_dir)))
