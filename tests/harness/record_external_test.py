import csv
import json
import os
import subprocess
import tempfile

import tap

t = tap.harness_test("mshare-bench record")
H = tap.HARNESS
d = tempfile.mkdtemp(prefix="record-external.")


def rec_cmd(frame, body, out, *extra, stdin=None):
    return subprocess.run([H, "record", "--frame", frame, "--body", body, "--out", out] + list(extra),
                          input=stdin, capture_output=True, text=True)


def put(name, obj):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write(obj if isinstance(obj, str) else json.dumps(obj))
    return path


# A harness run's record: its config keys are the ones `record` demands.
run_out = os.path.join(d, "run.json")
r = subprocess.run([H, "run", "--backend", "shm", "--workers", "1", "--size", "4M", "--workload", "pt-footprint",
                    "--quiet", "--out", run_out], capture_output=True, text=True)
t.ok(r.returncode == 0, "a harness run writes its record", r.stderr)
run_rec = json.load(open(run_out)) if r.returncode == 0 else {"config": {}}
helptext = subprocess.run([H, "record", "--help"], capture_output=True, text=True).stdout
listed = [line for line in helptext.replace("\n", " ").split("config:")[1].split(".")[0].split()] \
    if "config:" in helptext else []
t.ok(listed == list(run_rec["config"]), "record's required config keys are a harness run's, in its order",
     (listed, list(run_rec["config"])))

env = subprocess.run([H, "environment", "--json"], capture_output=True, text=True)
frame = json.loads(env.stdout)
t.ok(frame.get("schema_version") == run_rec.get("schema_version"),
     "environment --json carries the schema version a run's record has", frame.get("schema_version"))
frame_path = put("frame.json", frame)

config = dict(run_rec["config"], backend="anon", workload="postgres", postgres={"mode": "4k"})
results = {"int": 2 ** 62, "neg": -7, "real": 0.1, "tiny": 1e-300, "big_real": 1.5e300, "whole_real": 3.0,
           "none": None, "yes": True, "no": False, "text": "caf\u00e9 \"q\" \\ tab\t nl\n",
           "list": [1, [2, {"a": None}], "x"], "nested": {"b": {"c": {"d": 1}}}, "empty": {}, "empty_list": []}
body = {"config": config, "results": results}
out = os.path.join(d, "pg.json")
r = rec_cmd(frame_path, "-", out, "--csv", os.path.join(d, "pg.csv"), stdin=json.dumps(body))
t.ok(r.returncode == 0 and os.path.exists(out), "a frame and a body (on stdin) make a record", r.stderr)
got = json.load(open(out)) if os.path.exists(out) else {}
t.ok(list(got) == ["schema_version", "tool", "config", "environment", "results"],
     "its keys are a run's, in a run's order (no preflight in the body: none in the record)", list(got))
t.ok(got.get("schema_version") == frame["schema_version"] and got.get("environment") == frame["environment"]
     and got.get("tool") == "mshare-bench", "schema, tool and environment are the frame's, unchanged")
t.ok(got.get("config") == config and list(got.get("config", {})) == list(config),
     "config is the body's, keys in order")
t.ok(got.get("results") == results, "results are the body's, every value equal", got.get("results"))
gr = got.get("results", {})
t.ok(type(gr.get("int")) is int and type(gr.get("real")) is float and type(gr.get("whole_real")) is float
     and gr.get("int") == 2 ** 62, "integers stay integers, reals reals (3.0 is not written 3)",
     {k: gr.get(k) for k in ("int", "real", "whole_real")})
raw = open(out).read() if os.path.exists(out) else ""
t.ok('"real": 0.1,' in raw, "0.1 is written 0.1 (the shortest text that reads back equal)")
rows = list(csv.reader(open(os.path.join(d, "pg.csv")))) if os.path.exists(os.path.join(d, "pg.csv")) else []
t.ok(len(rows) == 2 and "results.nested.b.c.d" in rows[0] and "config.postgres.mode" in rows[0]
     and rows[1][rows[0].index("config.workers")] == str(config["workers"]),
     "--csv appends the same record as one row (header first)", rows[:1])

# Body via a file, with a preflight block: it goes between environment and results.
body_pf = dict(body, preflight={"ok": True})
out2 = os.path.join(d, "pf.json")
r = rec_cmd(frame_path, put("body-pf.json", body_pf), out2)
t.ok(r.returncode == 0 and list(json.load(open(out2))) == ["schema_version", "tool", "config", "environment",
                                                             "preflight", "results"],
     "a body's preflight sits where a run's does", r.stderr)

# Never over an existing record.
before = open(out).read()
r = rec_cmd(frame_path, put("body.json", body), out)
t.ok(r.returncode == 2 and out in r.stderr and "never replaced" in r.stderr and open(out).read() == before,
     "an existing record is neither replaced nor touched (exit 2, named)", (r.returncode, r.stderr))
t.ok(not [f for f in os.listdir(d) if "tmp" in f], "no temporary file left", os.listdir(d))

# Refusals: exit 2, the message names the file and what is wrong, nothing written.
def refused(what, frame_obj, body_obj, needle):
    fp = put("f-bad.json", frame_obj)
    bp = put("b-bad.json", body_obj)
    o = os.path.join(d, "refused.json")
    r = rec_cmd(fp, bp, o)
    t.ok(r.returncode == 2 and needle in r.stderr and "no record written" in r.stderr and not os.path.exists(o),
         "refused: %s (exit 2, says %r)" % (what, needle), (r.returncode, r.stderr))


refused("a frame of another schema version", dict(frame, schema_version=frame["schema_version"] - 1), body,
        "schema_version %d, this writer's is %d" % (frame["schema_version"] - 1, frame["schema_version"]))
refused("a frame without a clock", dict(frame, environment={k: v for k, v in frame["environment"].items()
                                                             if k != "clock"}), body, "platform and clock")
refused("a frame with a key of its own", dict(frame, results={}), body, "unknown key 'results'")
refused("a frame that is not JSON", "{\"schema_version\": 8,", body, "f-bad.json: not JSON at line 1")
refused("a body giving the schema version", frame, dict(body, schema_version=1), "key 'schema_version' is not the body's")
refused("a body without config.seed", frame, {"config": {k: v for k, v in config.items() if k != "seed"},
                                               "results": results}, "config has no 'seed'")
refused("a body without results", frame, {"config": config}, "no results object")
refused("a body whose workers is a string", frame, {"config": dict(config, workers="10"), "results": results},
        "config.workers an integer")
refused("a body with a duplicate key", frame, '{"config": {}, "config": {}, "results": {}}', "duplicate")
def nested(levels):
    """An object nested `levels` deep ({} is 1)."""
    v = {}
    for _ in range(levels - 1):
        v = {"x": v}
    return v


r = rec_cmd(frame_path, put("b-16.json", {"config": config, "results": nested(15)}), os.path.join(d, "deep16.json"))
t.ok(r.returncode == 0, "a record 16 levels deep (the writer's limit) is written", r.stderr)
refused("a body nested 17 levels deep", frame, {"config": config, "results": nested(16)},
        "nested deeper than the writer's 16 levels")
refused("a body that is an array", frame, [], "not a JSON object")
# Two values that would flatten to one CSV column: the row could not say
# which is which (it wrote the column twice in the header).
refused("a body with keys 'a.b' and a: {b}", frame, {"config": config, "results": {"a.b": 1, "a": {"b": 2}}},
        "two values are CSV column 'results.a.b'")
refused("a frame nested 17 levels deep", dict(frame, environment=dict(frame["environment"], deep=nested(15))), body,
        "f-bad.json: nested deeper than the writer's 16 levels")
# As deep as the parser takes (jansson: 2,048): the check walks the body once
# and stops at the limit (it used to walk each path twice per level: 2^2000
# calls, a hang, which the timeout turns into a failure).
deep_body = '{"config": %s, "results": {"x": %s}}' % (json.dumps(config), "[" * 2000 + "]" * 2000)
try:
    r = subprocess.run([H, "record", "--frame", frame_path, "--body", put("b-2000.json", deep_body), "--out",
                        os.path.join(d, "deep2000.json")], capture_output=True, text=True, timeout=120)
    t.ok(r.returncode == 2 and "nested deeper than the writer's 16 levels" in r.stderr,
         "refused: a body nested 2,000 levels deep (exit 2, named)", (r.returncode, r.stderr))
except subprocess.TimeoutExpired:
    t.ok(False, "refused: a body nested 2,000 levels deep (exit 2, named)", "no answer in 120 s: hangs")

r = subprocess.run([H, "record", "--frame", frame_path, "--body", "-"], input="{}", capture_output=True, text=True)
t.ok(r.returncode == 2 and "give --out FILE" in r.stderr, "no --out: exit 2, says so", r.stderr)
r = rec_cmd(frame_path, put("body.json", body), os.path.join(d, "no-such-dir", "x.json"))
t.ok(r.returncode == 3 and "no-such-dir" in r.stderr, "a directory that does not exist: exit 3, named", r.stderr)
r = rec_cmd(os.path.join(d, "missing-frame.json"), "-", os.path.join(d, "m.json"), stdin="{}")
t.ok(r.returncode == 2 and "missing-frame.json" in r.stderr, "a missing frame file: exit 2, named", r.stderr)

# Outputs that cannot take this record are refused before anything is
# written (exit 2), as `run` refuses them before it runs: a refusal after
# --out is written left the record without its row, and a second try was
# refused because --out then existed.
bp = put("body.json", body)
same = os.path.join(d, "same.csv")
r = rec_cmd(frame_path, bp, same, "--csv", os.path.join(d, ".", "same.csv"))
t.ok(r.returncode == 2 and "also the --out file" in r.stderr and not os.path.exists(same),
     "refused: --csv that is the --out file (it got the row twice, exit 0)", (r.returncode, r.stderr))
other_csv = os.path.join(d, "other.csv")
with open(other_csv, "w") as f:
    f.write("schema_version,tool,config.backend\n8,mshare-bench,anon\n")
other_before = open(other_csv).read()
o = os.path.join(d, "other-cols.json")
r = rec_cmd(frame_path, bp, o, "--csv", other_csv)
t.ok(r.returncode == 2 and "other columns" in r.stderr and "no record written" in r.stderr and not os.path.exists(o)
     and open(other_csv).read() == other_before,
     "refused: a --csv of other columns, before --out is written (it wrote --out, exit 1)", (r.returncode, r.stderr))
link_csv = os.path.join(d, "link.csv")
os.symlink(os.path.join(d, "pg.csv"), link_csv)
o = os.path.join(d, "link-csv.json")
r = rec_cmd(frame_path, bp, o, "--csv", link_csv)
t.ok(r.returncode == 2 and "symbolic link" in r.stderr and not os.path.exists(o),
     "refused: a --csv that is a symbolic link, before --out is written", (r.returncode, r.stderr))
# Input larger than the writer takes (64 MiB): refused as the body's fault
# (exit 2), read no further (it was parsed whole, then refused, exit 3); a
# body that cannot be read says why (a directory was "not JSON").
big = os.path.join(d, "big-body.json")
with open(big, "w") as f:
    f.write('{"config": %s, "results": {"pad": "' % json.dumps(config))
    chunk = "x" * (1 << 20)
    for _ in range(65):
        f.write(chunk)
    f.write('"}}')
r = rec_cmd(frame_path, big, os.path.join(d, "big.json"))
t.ok(r.returncode == 2 and "larger than" in r.stderr and not os.path.exists(os.path.join(d, "big.json")),
     "refused: a body over 64 MiB (exit 2, said)", (r.returncode, r.stderr[-300:]))
with open(big, "rb") as f:
    r = subprocess.run([H, "record", "--frame", frame_path, "--body", "-", "--out", os.path.join(d, "big.json")],
                       stdin=f, capture_output=True, text=True)
t.ok(r.returncode == 2 and "larger than" in r.stderr, "refused: a body over 64 MiB on stdin (exit 2, said)",
     (r.returncode, r.stderr[-300:]))
os.unlink(big)
r = rec_cmd(frame_path, d, os.path.join(d, "dir-body.json"))
t.ok(r.returncode == 2 and "Is a directory" in r.stderr, "refused: a body that is a directory, saying so", r.stderr)
nd_csv = os.path.join(d, "nd.csv")
r = rec_cmd(frame_path, bp, os.path.join(d, "no-such-dir", "x.json"), "--csv", nd_csv)
t.ok(r.returncode == 3 and "no-such-dir" in r.stderr and not os.path.exists(nd_csv),
     "--out in a directory that does not exist: exit 3, and no row in --csv either (it was appended, exit 1: a "
     "second try added the row again)", (r.returncode, r.stderr))
o = os.path.join(d, "nd-csv.json")
r = rec_cmd(frame_path, bp, o, "--csv", os.path.join(d, "no-such-dir", "x.csv"))
t.ok(r.returncode == 2 and "no-such-dir" in r.stderr and not os.path.exists(o),
     "refused: --csv in a directory that does not exist, before --out is written", (r.returncode, r.stderr))
dangling = os.path.join(d, "dangling.json")
os.symlink(os.path.join(d, "nowhere.json"), dangling)
r = rec_cmd(frame_path, bp, dangling)
t.ok(r.returncode == 2 and "exists" in r.stderr and "appeared during" not in r.stderr and os.path.islink(dangling)
     and not os.path.exists(os.path.join(d, "nowhere.json")),
     "refused: --out that is a dangling symbolic link (exit 2; it said 'appeared during the run', exit 3)",
     (r.returncode, r.stderr))

# SIGKILL and SIGTERM at the worst moment: the temporary file written, the
# commit not yet done (MSHARE_BENCH_TEST_COMMIT_GATE holds the writer there).
import signal  # noqa: E402
import time  # noqa: E402


def at_gate(sig, out):
    gate = os.path.join(d, "gate")
    if os.path.exists(gate):
        os.unlink(gate)
    p = subprocess.Popen([H, "record", "--frame", frame_path, "--body", put("body.json", body), "--out", out],
                         env=dict(os.environ, MSHARE_BENCH_TEST_COMMIT_GATE=gate), stderr=subprocess.PIPE, text=True)
    tmp = []
    for _ in range(300):
        tmp = [f for f in os.listdir(d) if f.startswith(os.path.basename(out) + ".mshare-bench-tmp.")]
        if tmp:
            break
        time.sleep(0.05)
    time.sleep(0.2)
    p.send_signal(sig)
    if sig != signal.SIGKILL:
        open(gate, "w").close()
    err = p.communicate(timeout=60)[1]
    return p.returncode, tmp, err


killed = os.path.join(d, "killed.json")
rc, tmp, err = at_gate(signal.SIGKILL, killed)
t.ok(rc == -signal.SIGKILL and tmp and not os.path.exists(killed) and os.path.exists(os.path.join(d, tmp[0])),
     "SIGKILL before the commit: no record, the temporary file left", (rc, tmp, err))
r = rec_cmd(frame_path, put("body.json", body), killed)
t.ok(r.returncode == 0 and os.path.exists(killed) and not [f for f in os.listdir(d) if ".mshare-bench-tmp." in f]
     and "removed" in r.stderr, "the next writer removes the orphan, saying so, and writes the record", r.stderr)
termed = os.path.join(d, "termed.json")
rc, tmp, err = at_gate(signal.SIGTERM, termed)
t.ok(rc == 0 and os.path.exists(termed) and json.load(open(termed))["results"] == results,
     "SIGTERM during the commit: held back, the record complete (exit 0)", (rc, err))

# The sweep's side: pgpoint.write goes through the writer and says why it did not write.
import pgpoint  # noqa: E402
why = pgpoint.write({"config": config, "results": results}, out, frame_path, H)
t.ok(why is not None and out in why, "pgpoint.write reports the writer's refusal (existing record)", why)
why = pgpoint.write({"config": config, "results": results}, os.path.join(d, "via-pgpoint.json"), frame_path, H)
t.ok(why is None and json.load(open(os.path.join(d, "via-pgpoint.json")))["results"] == results,
     "pgpoint.write writes through the harness's writer", why)
# A path whose bytes are not UTF-8 (os.fsdecode's surrogates): the writer's
# message names it; reading that message is no exception (it was a
# UnicodeDecodeError out of pgpoint.write).
odd = os.fsdecode(os.fsencode(d) + b"/odd-\xff.json")
why1 = pgpoint.write({"config": config, "results": results}, odd, frame_path, H)
try:
    why2 = pgpoint.write({"config": config, "results": results}, odd, frame_path, H)
except UnicodeDecodeError as e:
    why2 = e
t.ok(why1 is None and isinstance(why2, str) and "never replaced" in why2,
     "pgpoint.write to a path that is not UTF-8: written, then the refusal is read and returned", (why1, why2))
import shutil  # noqa: E402
shutil.rmtree(d)
t.done()
