#!/usr/bin/env bash
# test_trace_perfetto.sh — the Perfetto trace a person can open (docs/cli.md, "Traces"): the
# trace-event schema (every event's ph/pid/ts, slices with a tid and a duration, per-queue slices
# that do not overlap, numeric counters), kernel-level slices named by the report's kernels and
# adding up to the instruction-level trace, DDR bandwidth counters whose integral is the report's
# DDR bytes, the window, the option errors, and the size of ResNet-50 batch 64's default trace.
set -u
. "$(dirname "$0")/lib.sh"

g="$tmp/m.gtg"
cat >"$g" <<'G'
gtg 1
model small batch=4 dtype=fp16
input x: fp16[N, 32, 16, 16]
c1 = conv2d(x) units=32 kernel=3 pad=1 bias=0
r1 = relu(c1)
c2 = conv2d(r1) units=32 kernel=3 pad=1 bias=0
r2 = relu(c2)
p = global_avgpool(r2)
f = reshape(p) shape=N,32
y = dense(f) units=10 bias=1
G

# validate TRACE REPORT_JSON [WINDOW_FROM WINDOW_TO]: prints one line per failed property
validate() {
  "$PY" - "$@" <<'P'
import json, sys
t = json.load(open(sys.argv[1])); r = json.load(open(sys.argv[2]))
lo = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
hi = float(sys.argv[4]) if len(sys.argv) > 4 else float("inf")
ev = t["traceEvents"]
bad = []
for e in ev:
    if e.get("ph") not in ("M", "X", "C") or e.get("pid") != 1: bad.append("bad ph/pid: %s" % e)
    if e["ph"] in ("X", "C") and not isinstance(e.get("ts"), (int, float)): bad.append("no ts: %s" % e)
    if e["ph"] == "X" and (not isinstance(e.get("tid"), int) or e.get("dur", -1) < 0): bad.append("bad slice: %s" % e)
    if e["ph"] == "C" and not all(isinstance(v, (int, float)) for v in e["args"].values()): bad.append("counter: %s" % e)
xs = [e for e in ev if e["ph"] == "X"]
by = {}
for e in xs: by.setdefault(e["tid"], []).append(e)
for tid, v in by.items():
    v.sort(key=lambda e: e["ts"])
    for a, b in zip(v, v[1:]):
        if a["ts"] + a["dur"] > b["ts"] + 1e-6: bad.append("overlap on tid %d: %s / %s" % (tid, a, b))
for e in xs:
    if "start_cycle" in e["args"] and (e["args"]["start_cycle"] >= hi or e["args"]["end_cycle"] < lo):
        bad.append("outside the window: %s" % e)
print("\n".join(bad[:5]))
P
  [ $? = 0 ] || echo "the validator failed on $1"
}

for s in tvm graphturbo; do
  "$GTSIM" --arch configs/tiny.cfg "$g" --sched $s --json -o "$tmp/$s.json" --perfetto "$tmp/$s.k.json" 2>"$tmp/err"
  check_rc "$s: kernel-level trace written" $? "$(head -3 "$tmp/err")"
  "$GTSIM" --arch configs/tiny.cfg "$g" --sched $s --json -o "$tmp/$s.i.rep" --perfetto "$tmp/$s.i.json" \
    --trace-detail instruction 2>"$tmp/err"
  check_rc "$s: instruction-level trace written" $? "$(head -3 "$tmp/err")"
  for d in k i; do
    out=$(validate "$tmp/$s.$d.json" "$tmp/$s.json")
    check_eval "$s ($d): schema, no overlapping slices" '[ -z "$out" ]' || echo "# $out"
  done
  # kernel slices are named by the report's kernels (or the set-up), and fold every instruction
  res=$("$PY" - "$tmp/$s.k.json" "$tmp/$s.i.json" "$tmp/$s.json" <<'P'
import json, sys
k = json.load(open(sys.argv[1]))["traceEvents"]; i = json.load(open(sys.argv[2]))["traceEvents"]
rep = json.load(open(sys.argv[3]))
names = {row["name"] for row in rep["kernels"]}
ks = [e for e in k if e["ph"] == "X"]
unknown = sorted({e["name"].split(" ")[-1] for e in ks} - names - {"set-up"})
folded = sum(e["args"]["instructions"] for e in ks)
print(len(unknown), folded, sum(1 for e in i if e["ph"] == "X"), len(ks) < sum(1 for e in i if e["ph"] == "X"))
P
)
  read -r unknown folded inst fewer <<<"$res"
  check_eval "$s: every slice named by a kernel of the report" '[ "$unknown" = 0 ]'
  check_eval "$s: kernel slices fold all $inst instruction slices ($folded)" '[ "$folded" = "$inst" ] && [ "$inst" -gt 0 ]'
  check_eval "$s: fewer slices at kernel level" '[ "$fewer" = True ]'
  # the DDR counter is a step function of GB/s per episode: its integral is the report's bytes
  res=$("$PY" - "$tmp/$s.k.json" "$tmp/$s.json" configs/tiny.cfg <<'P'
import json, sys, configparser
t = json.load(open(sys.argv[1])); rep = json.load(open(sys.argv[2]))
cfg = configparser.ConfigParser(inline_comment_prefixes=("#", ";")); cfg.read(sys.argv[3])
mhz = float(cfg["chip"]["clock_mhz"].split()[0])
cyc = t["otherData"]["cycles"]; us_end = cyc / mhz
c = [e for e in t["traceEvents"] if e["ph"] == "C" and e["name"] == "DDR GB/s"]
total = 0.0
for a, b in zip(c, c[1:] + [{"ts": us_end}]):
    total += a["args"]["GB/s"] * 1e9 * (b["ts"] - a["ts"]) * 1e-6
want = rep.get("ddr_read_bytes", 0) + rep.get("ddr_write_bytes", 0)
print("%.0f %.0f" % (total, want))
P
)
  read -r got want <<<"$res"
  check_eval "$s: DDR counter integrates to the report's DDR bytes ($got vs $want)" \
    "awk -v g=$got -v w=$want 'BEGIN { exit !(w > 0 && g / w > 0.999 && g / w < 1.001) }'"
done

# the window keeps [A, B) only
"$GTSIM" --arch configs/tiny.cfg "$g" --sched tvm --json -o "$tmp/w.rep" --perfetto "$tmp/w.json" \
  --trace-detail instruction --trace-window 20000:60000 --trace "$tmp/w.gtt.gz" 2>"$tmp/err"
check_rc "window: written" $? "$(head -3 "$tmp/err")"
out=$(validate "$tmp/w.json" "$tmp/w.rep" 20000 60000)
check_eval "window: only cycles [20000, 60000)" '[ -z "$out" ]' || echo "# $out"
check_eval "window: the .gtt too" \
  "zcat '$tmp/w.gtt.gz' | awk '\$1 == \"a\" { n++ } \$1 == \"a\" && (\$2 < 20000 || \$3 > 60000) { bad = 1 } END { exit bad || !n }'"

# option errors: exit 1 with a message
for args in "--trace-detail all --perfetto $tmp/x.json" "--trace-window 5:3 --perfetto $tmp/x.json" \
    "--trace-window 5 --perfetto $tmp/x.json" "--trace-detail kernel" "--trace-window 0:10"; do
  "$GTSIM" --arch configs/tiny.cfg "$g" $args >/dev/null 2>"$tmp/err"
  rc=$?
  check_eval "rejects $args (exit 1, a message)" '[ $rc = 1 ] && [ -s "$tmp/err" ]'
done

# size: the default trace of ResNet-50 at batch 64 on stcp920-hw opens in ui.perfetto.dev
if shard 0 heavy; then
  "$GTSIM" --arch configs/stcp920-hw.cfg workloads/resnet50.gtg --sched tvm --perfetto "$tmp/r50.json" \
    >/dev/null 2>"$tmp/err"
  check_rc "resnet50 batch 64: traced" $? "$(head -3 "$tmp/err")"
  size=$(command stat -c %s "$tmp/r50.json" 2>/dev/null || echo 0)
  check_eval "resnet50 batch 64: default trace under 100 MB ($size bytes)" '[ "$size" -gt 0 ] && [ "$size" -lt 100000000 ]'
fi
done_testing
