#!/usr/bin/env bash
# test_sweep.sh — gtsim-sweep (docs/sweep.md): the spec's cartesian product (lists, step,
# factor and log ranges, levels, options) with point counts computed here; every point's
# metrics equal a direct gtsim run of the same arguments; config hash and version per point;
# failed points recorded with exit code and error, not retried unless --retry-failed; Ctrl-C
# (exit 130) and kill -9 both resume to the same results as an uninterrupted sweep; export as
# CSV and JSON; the three plots as PNG files, and the Pareto front equal to one computed here.
set -u
GTSIM=${GTSIM:-$PWD/build/gtsim}
. "$(dirname "$0")/lib.sh"
GTSIM=$(cd "$(dirname "$GTSIM")" && pwd)/$(basename "$GTSIM")
export GTSIM TMPDIR=$tmp
SW="$PWD/scripts/gtsim-sweep"
CNN="$PWD/tests/cases/gtg/tiny_cnn.gtg"
q() { "$PY" - "$@"; }  # a Python check reading argv; exit status = the verdict

# 1. the grid: 2 LB sizes (factor) x 3 GB sizes (step) x (tvm + graphturbo at 2 levels) x 2
# stitch values (an option axis, which only graphturbo reads: tvm points fail, exit 1)
cat >"$tmp/g.toml" <<EOF
name = "grid"
[grid]
arch = "tiny"
model = "$CNN"
batch = 4
strategy = ["tvm", "graphturbo"]
level = ["lb", "full"]
[grid.set]
core.pe.lb_kib = {from = 32, to = 64, factor = 2}
"cluster.gb_kib" = {from = 128, to = 384, step = 128}
[grid.option]
"gt-stitch" = [0.5, 0.75]
EOF
"$SW" run "$tmp/g.toml" -j 2 >"$tmp/out" 2>"$tmp/err"; rc=$?
check_eval "a grid with failing points: exit 1" '[ $rc -eq 1 ]'
"$SW" export "$tmp/g.toml" --format json -o "$tmp/g.json"
msg=$(q "$tmp/g.json" <<'PYEOF'
import json, sys
rows = json.load(open(sys.argv[1]))
want = 2 * 3 * 3 * 2
ok = [r for r in rows if r["status"] == "ok"]
bad = [r for r in rows if r["status"] == "failed"]
err = []
if len(rows) != want: err.append("%d points, want %d" % (len(rows), want))
if sorted({r["set:core.pe.lb_kib"] for r in rows}) != ["32", "64"]: err.append("lb values")
if sorted({r["set:cluster.gb_kib"] for r in rows}, key=int) != ["128", "256", "384"]: err.append("gb values")
if {r["strategy"] for r in rows} != {"tvm", "graphturbo:lb", "graphturbo:full"}: err.append("strategies")
if {r["strategy"] for r in bad} != {"tvm"} or len(bad) != 12: err.append("%d failed" % len(bad))
if any(r["exit_code"] != 1 or "--gt-stitch is not used" not in r["error"] for r in bad): err.append("failure record")
if any(r["exit_code"] != 0 or r["cycles"] is None for r in ok): err.append("ok record")
print("; ".join(err) or "%d points, %d failed as expected" % (len(rows), len(bad)))
sys.exit(1 if err else 0)
PYEOF
)
check_rc "grid: 36 points expanded as written; tvm + --gt-stitch fails with exit 1 and the error" $? "$msg"

# 2. metrics equal a direct gtsim run of the point; config hash per config; the version
"$GTSIM" --arch tiny "$CNN" --batch 4 --sched graphturbo:lb --set core.pe.lb_kib=64 \
  --set cluster.gb_kib=256 --gt-stitch 0.5 --json -o "$tmp/direct.json"
version=$("$GTSIM" --version | awk '{print $2}')
msg=$(q "$tmp/g.json" "$tmp/direct.json" "$version" <<'PYEOF'
import json, sys
rows = json.load(open(sys.argv[1])); d = json.load(open(sys.argv[2]))
r = [x for x in rows if x["strategy"] == "graphturbo:lb" and x["set:core.pe.lb_kib"] == "64"
     and x["set:cluster.gb_kib"] == "256" and x["option:gt-stitch"] == "0.5"][0]
err = []
for k in ("cycles", "ddr_read_bytes", "ddr_write_bytes", "throughput_samples_per_s"):
    if r[k] != d[k]: err.append("%s %r vs %r" % (k, r[k], d[k]))
if r.get("energy.total_j") != d["energy"]["total_j"] or r.get("energy.part.ddr_j") != d["energy"]["parts_j"]["ddr"]:
    err.append("energy %r vs %r" % (r.get("energy.total_j"), d["energy"]["total_j"]))
hashes = {}
for x in rows:
    if x["status"] == "ok":
        hashes.setdefault((x["set:core.pe.lb_kib"], x["set:cluster.gb_kib"]), set()).add(x["config_hash"])
if any(len(h) != 1 for h in hashes.values()) or len({min(h) for h in hashes.values()}) != 6:
    err.append("config hashes %r" % hashes)
if {x["gtsim_version"] for x in rows if x["status"] == "ok"} != {sys.argv[3]}: err.append("version")
print("; ".join(err) or "cycles %d" % r["cycles"])
sys.exit(1 if err else 0)
PYEOF
)
check_rc "a point's metrics (energy too) = direct gtsim; one hash per config, six configs; version" $? "$msg"

# 3. failed points are not retried; --retry-failed retries them
"$SW" run "$tmp/g.toml" -j 2 >/dev/null 2>"$tmp/err2"
att() { "$PY" -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT sum(attempts), count(*) FROM points WHERE status = ?", (sys.argv[2],)).fetchone()[0])' "$1" "$2"; }
check_eval "rerun: nothing runs again (failed attempts stay 12)" '[ "$(att "$tmp/g.db" failed)" = 12 ] && grep -q "0 to run" "$tmp/err2"'
"$SW" run "$tmp/g.toml" -j 2 --retry-failed >/dev/null 2>&1
check_eval "--retry-failed: the 12 failed points ran again" '[ "$(att "$tmp/g.db" failed)" = 24 ]'
"$SW" status "$tmp/g.toml" >"$tmp/st"
check_eval "status: counts and the failed points' errors" \
  'grep -q "^36 points: 24 ok, 12 failed" "$tmp/st" && [ "$(grep -c "^failed (exit 1):.*--gt-stitch" "$tmp/st")" = 12 ]'

# 4. interrupt and resume: Ctrl-C after a few points (exit 130, nothing left running), then
# kill -9 the next run; a third run finishes; results equal an uninterrupted sweep's
cat >"$tmp/r.toml" <<EOF
[grid]
arch = "tiny"
model = "resnet50"
batch = 2
strategy = ["tvm", "astitch"]
[grid.set]
"ddr.channels" = [1, 2, 4, 8]
EOF
cp "$tmp/r.toml" "$tmp/fresh.toml"
done_n() { "$PY" -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1], timeout=30).execute("SELECT count(*) FROM points WHERE status = ?", (sys.argv[2],)).fetchone()[0])' "$1" "$2" 2>/dev/null || echo 0; }
wait_done() { local i; for i in $(seq 600); do [ "$(done_n "$1" ok)" -ge "$2" ] && return 0; sleep 0.1; done; return 1; }
"$SW" run "$tmp/r.toml" -j 2 >/dev/null 2>"$tmp/int.err" & pid=$!
wait_done "$tmp/r.db" 2; kill -INT $pid; wait $pid; rc=$?
ok1=$(done_n "$tmp/r.db" ok); run1=$(done_n "$tmp/r.db" running)
check_eval "Ctrl-C: exit 130, $ok1 of 8 done, none left running" '[ $rc -eq 130 ] && [ "$ok1" -lt 8 ] && [ "$run1" = 0 ] && grep -q "interrupted" "$tmp/int.err"'
# the same, with Ctrl-C landing at the worst moment: right after a point's 'running' is
# committed (the signal used to raise there, before the loop knew the point, which then stayed
# 'running'); execute() is replaced by a function returning a fixed ok record, so only the
# loop's bookkeeping is under test
msg=$(q "$PWD/scripts" "$tmp/r.toml" "$tmp/race.db" 2>/dev/null <<'PYEOF'
import os, signal, sys
sys.path.insert(0, sys.argv[1])
from gs_sweep import db as sdb, run as srun, spec as sspec
spec = sspec.load(sys.argv[2]); ids = [sspec.point_id(p) for p in spec["points"]]
db = sdb.open_db(sys.argv[3]); sdb.add_points(db, spec, spec["points"], sspec.point_id, sspec.params)
mark, started = sdb.mark_running, []
def mark_then_interrupt(db_, pid, backend, host):
    mark(db_, pid, backend, host); started.append(pid)
    if len(started) == 3: os.kill(os.getpid(), signal.SIGINT)
sdb.mark_running = mark_then_interrupt
srun.execute = lambda ctx, p: {"id": sspec.point_id(p), "status": "ok", "exit_code": 0, "error": None,
    "config_hash": "h", "gtsim_version": "v", "backend": "local", "host": "x", "started": 0.0,
    "finished": 0.0, "seconds": 0.0, "metrics": {"cycles": 1}, "report": None}
try:
    srun.run_local(db, {"backend": "local", "procs": srun.Procs()}, spec["points"], 2, srun.Progress(8, {}))
    got = "returned"
except srun.Interrupted:
    got = "interrupted"
c = sdb.counts(db, set(ids))
print("%s after %d started: %d running, %d ok, %d pending" % (got, len(started), c["running"], c["ok"], c["pending"]))
sys.exit(0 if got == "interrupted" and c["running"] == 0 and c["ok"] + c["pending"] == 8 else 1)
PYEOF
)
check_rc "Ctrl-C just after a point is marked running: it goes back to pending" $? "$msg"
"$SW" run "$tmp/r.toml" -j 2 >/dev/null 2>&1 & pid=$!
wait_done "$tmp/r.db" $((ok1 + 1)); kill -9 $pid; wait $pid 2>/dev/null
ok2=$(done_n "$tmp/r.db" ok)
"$SW" run "$tmp/r.toml" -j 2 >/dev/null 2>"$tmp/res.err"; rc=$?
check_eval "kill -9 ($ok2 done), then resume: exit 0, 8 ok" '[ $rc -eq 0 ] && [ "$(done_n "$tmp/r.db" ok)" = 8 ]'
"$SW" run "$tmp/fresh.toml" -j 2 >/dev/null 2>&1
"$SW" export "$tmp/r.db" -o "$tmp/r.csv"; "$SW" export "$tmp/fresh.db" -o "$tmp/f.csv"
msg=$(q "$tmp/r.csv" "$tmp/f.csv" <<'PYEOF'
import csv, sys
a, b = (list(csv.DictReader(open(p))) for p in sys.argv[1:3])
key = lambda r: (r["strategy"], r["set:ddr.channels"])
da = {key(r): (r["cycles"], r["ddr_read_bytes"], r["id"]) for r in a}
db = {key(r): (r["cycles"], r["ddr_read_bytes"], r["id"]) for r in b}
print("resumed %d rows, fresh %d; differing: %s" % (len(da), len(db), [k for k in db if da.get(k) != db[k]]))
sys.exit(0 if da == db and len(da) == 8 else 1)
PYEOF
)
check_rc "interrupted twice and resumed = uninterrupted: same ids and cycles" $? "$msg"
check_eval "progress lines with counts and an ETA" 'grep -q "^\[[0-9]*/8\] ok .*(ETA [0-9:]*)" "$tmp/res.err"'

# 5. export: CSV header, atomic (a missing directory is an error and writes nothing)
head -1 "$tmp/f.csv" | grep -q '^id,status,exit_code,error,arch,model,batch,strategy,set:ddr.channels,config_hash,gtsim_version,backend,seconds,' &&
  ok "CSV header: identity, status, parameters, provenance, metrics" || nok "CSV header" "$(head -1 "$tmp/f.csv")"
"$SW" export "$tmp/fresh.db" -o "$tmp/nodir/x.csv" 2>"$tmp/err"; rc=$?
check_eval "export into a missing directory: exit 1, nothing written" '[ $rc -ne 0 ] && [ ! -e "$tmp/nodir" ]'

# 6. plots: PNG files; an unfixed varying parameter is an error; the Pareto front
png() { [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; }
"$SW" plot "$tmp/g.toml" lines --x set:core.pe.lb_kib --panel set:cluster.gb_kib --where option:gt-stitch=0.5 -o "$tmp/l.png"
check "lines: a PNG" png "$tmp/l.png"
"$SW" plot "$tmp/g.toml" heatmap --x set:core.pe.lb_kib --y set:cluster.gb_kib --baseline strategy=graphturbo:lb \
  --target strategy=graphturbo:full --where option:gt-stitch=0.75 -o "$tmp/h.png"
check "heatmap: a PNG" png "$tmp/h.png"
"$SW" plot "$tmp/g.toml" lines --x set:core.pe.lb_kib -o "$tmp/bad.png" 2>"$tmp/err"; rc=$?
check_eval "lines with an unfixed parameter: exit 1 naming it, no file" \
  '[ $rc -eq 1 ] && grep -q "parameter option:gt-stitch varies (0.5, 0.75)" "$tmp/err" && [ ! -e "$tmp/bad.png" ]'
"$SW" plot "$tmp/g.toml" pareto -o "$tmp/p.png" >"$tmp/front"
check "pareto: a PNG" png "$tmp/p.png"
"$SW" export "$tmp/g.toml" -o "$tmp/g.csv"
msg=$(q "$tmp/g.csv" "$tmp/front" <<'PYEOF'
import csv, re, sys
pts = [(float(r["onchip_bytes"]), float(r["throughput_samples_per_s"])) for r in csv.DictReader(open(sys.argv[1]))
       if r["status"] == "ok"]
# the front by definition: no other point has x <= and y >= with one strict
front = sorted({p for p in pts if not any(q[0] <= p[0] and q[1] >= p[1] and q != p for q in pts)})
got = sorted((float(m.group(1)), float(m.group(2))) for m in
             re.finditer(r"onchip_bytes=(\S+) throughput_samples_per_s=(\S+)", open(sys.argv[2]).read()))
same = len(got) == len(front) and all(abs(a[0] - b[0]) <= 1e-6 * b[0] and abs(a[1] - b[1]) <= 1e-5 * b[1]
                                      for a, b in zip(got, front))
print("front %s, printed %s" % (front, got))
sys.exit(0 if same and front else 1)
PYEOF
)
check_rc "pareto: the printed front = the non-dominated points computed here" $? "$msg"

# 7. spec errors name the file and the key
printf '[grid]\narch = "tiny"\nmodel = "x"\nstrategy = "tvm"\nbatchs = 2\n' >"$tmp/e1.toml"
"$SW" run "$tmp/e1.toml" 2>"$tmp/err"; rc=$?
check_eval "unknown key: exit 1 naming it" '[ $rc -eq 1 ] && grep -q "e1.toml: grid: unknown key batchs" "$tmp/err"'
printf '[grid]\narch = "tiny"\nmodel = "x"\nstrategy = "tvm"\n[grid.set]\n"ddr.channels" = {from = 4, to = 1, step = 1}\n' >"$tmp/e2.toml"
"$SW" run "$tmp/e2.toml" 2>"$tmp/err"; rc=$?
check_eval "a backwards range: exit 1 naming the key" '[ $rc -eq 1 ] && grep -q "grid.set.ddr.channels: step must be > 0 and from <= to" "$tmp/err"'
printf '[grid]\narch = "tiny"\nmodel = "x"\nstrategy = "tvm:lb"\n' >"$tmp/e3.toml"
"$SW" run "$tmp/e3.toml" 2>"$tmp/err"; rc=$?
check_eval "a bad strategy: exit 1" '[ $rc -eq 1 ] && grep -q "unknown strategy .tvm:lb." "$tmp/err"'

# 8. a Python without matplotlib (-S: no site packages): a copy of the interpreter at another
# path re-runs the script under /usr/bin/python3; /usr/bin/python3 itself says how to get it
cp "$(readlink -f "$PY")" "$tmp/py3"
"$tmp/py3" -S "$SW" plot "$tmp/g.toml" pareto -o "$tmp/p2.png" >/dev/null 2>"$tmp/err"; rc=$?
check_eval "another python3 without matplotlib: re-run under /usr/bin/python3, plot written" '[ $rc -eq 0 ] && png "$tmp/p2.png"'
"$PY" -S "$SW" plot "$tmp/g.toml" pareto -o "$tmp/p3.png" >/dev/null 2>"$tmp/err"; rc=$?
check_eval "/usr/bin/python3 without matplotlib: exit 1 with the install command, no file" \
  '[ $rc -eq 1 ] && grep -q "lacks matplotlib" "$tmp/err" && grep -q "apt-get install -y python3-matplotlib" "$tmp/err" && [ ! -e "$tmp/p3.png" ]'
done_testing
