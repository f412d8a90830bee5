#!/usr/bin/env bash
# test_gt_example.sh — the GraphTurbo paper's running example through the command line
# (ResNet-50, batch 64, stcp920-hw: 8, 4, 2, 1 instances per stage), each expectation derived
# here: it runs with every simulator check on; the bytes the simulator moved from one core's
# LB to another's equal those of the program's LB-to-LB moves across cores (read from the
# emitted .gtasm); the writes behind copy to DDR exactly what the cores stored into GB for
# them; it keeps its promise over tvm (>= 2x throughput, <= 1/4 DDR bytes). (A program of its
# own, apart from test_gt_run.sh, so that the suite runs the two at once.)
set -u
. "$(dirname "$0")/lib.sh"

# Cross-core LB-to-LB bytes of a program, from its text: regions allocated in LB (cluster,
# core) anywhere in the file (a region may be allocated by a queue listed after its reader's),
# then the movs between two such regions of different cores.
lb_moves() {
  "$PY" - "$1" <<'PYEOF'
import shlex, sys
lines = [l.strip() for l in open(sys.argv[1])]
ops = [(l.split()[0], dict(t.split("=", 1) for t in shlex.split(l)[1:]))
       for l in lines if l.startswith("alloc ") or l.startswith("mov ")]
lb = {f["region"]: (f.get("cluster", "0"), f.get("core", "0"))
      for op, f in ops if op == "alloc" and f.get("level") == "lb"}
print(sum(int(f["bytes"]) for op, f in ops
          if op == "mov" and f["src"] in lb and f["dst"] in lb and lb[f["src"]] != lb[f["dst"]]))
PYEOF
}

# The running example.
R=(--arch configs/stcp920-hw.cfg workloads/resnet50.gtg)
if "$GTSIM" "${R[@]}" --emit "$tmp/r50.gtasm" --json -o "$tmp/r50.json" 2>"$tmp/err"; then
  ok "resnet50 on stcp920-hw, batch 64: the graphturbo program passes every check"
  counts=$("$PY" -c "
import json, collections
d = json.load(open('$tmp/r50.json'))['graphturbo']['instances']
c = collections.Counter(i['group'] for i in d)
print(' '.join(str(c[g]) for g in sorted(c)))")
  [ "$counts" = "8 4 2 1" ] && ok "running example: 8, 4, 2, 1 instances per stage" \
    || nok "running example instances" "got '$counts'"
  "$GTSIM" --arch configs/stcp920-hw.cfg "$tmp/r50.gtasm" >"$tmp/r50.stats" 2>"$tmp/err2"
  sim=$(stat noc.lb_to_lb_bytes "$tmp/r50.stats")
  prog=$(lb_moves "$tmp/r50.gtasm")
  if [ -n "$sim" ] && [ "$sim" = "$prog" ] && [ "$prog" -gt 0 ]; then
    ok "running example: LB-to-LB bytes across cores = the program's moves ($prog B)"
  else nok "running example LB-to-LB bytes" "simulator $sim, program $prog"; fi
  # Writes behind: the stage outputs that live in DDR are stored into GB blocks (regions gbd:)
  # and copied to DDR by each cluster's second DMA queue (c*.dma1); every byte a core stores
  # into such a block is copied out once, so the program's gbd-to-DDR bytes equal its
  # core-to-gbd bytes, and the DDR bytes written equal level instances' (where the cores write
  # DDR; reads may differ: full sizes some tiles smaller).
  drains=$("$PY" - "$tmp/r50.gtasm" <<'PYEOF'
import shlex, sys
q, into, out = None, 0, 0
for l in open(sys.argv[1]):
    if l.startswith(".queue"): q = l.split()[1]; continue
    l = l.strip()
    if not l.startswith("mov "): continue
    f = dict(t.split("=", 1) for t in shlex.split(l)[1:])
    if f["dst"].startswith("gbd:") and ".k" in q: into += int(f["bytes"])
    if f["src"].startswith("gbd:") and q.endswith(".dma1") and f["dst"].startswith("t:"): out += int(f["bytes"])
print(into, out)
PYEOF
)
  set -- $drains
  "$GTSIM" "${R[@]}" --sched graphturbo:instances --json -o "$tmp/r50i.json" 2>>"$tmp/err2"
  same=$("$PY" -c "
import json
a, b = (json.load(open(p)) for p in ('$tmp/r50.json', '$tmp/r50i.json'))
print(int(a['ddr_write_bytes'] == b['ddr_write_bytes']))")
  if [ "${1:-0}" -gt 0 ] && [ "$1" = "${2:-}" ] && [ "$same" = 1 ]; then
    ok "running example: $1 B written behind through GB, all copied to DDR by dma1; DDR bytes written = level instances'"
  else nok "writes behind" "into gbd $1, copied out ${2:-}, same DDR bytes written as instances: $same"; fi
else
  nok "resnet50 graphturbo program" "$(head -c 600 "$tmp/err")"
fi
if "$GTSIM" "${R[@]}" --compare tvm,graphturbo --json -o "$tmp/c.json" 2>"$tmp/err"; then
  if msg=$("$PY" - "$tmp/c.json" <<'PYEOF'
import json, sys
r = {x["strategy"]: x for x in json.load(open(sys.argv[1]))["rows"]}
t, g = r["tvm"], r["graphturbo:full"]
bt = t["ddr_read_bytes"] + t["ddr_write_bytes"]
bg = g["ddr_read_bytes"] + g["ddr_write_bytes"]
print("speedup %.2f, DDR bytes %.3f of tvm's" % (g["speedup"], bg / bt))
sys.exit(0 if g["speedup"] >= 2 and bg <= bt / 4 and g["time_s"] >= g["roofline_bound_s"] else 1)
PYEOF
  ); then ok "running example: >= 2x tvm, <= 1/4 of its DDR bytes, above the roofline ($msg)"
  else nok "running example vs tvm" "$msg"; fi
else
  nok "resnet50 compare" "$(head -c 600 "$tmp/err")"
fi
done_testing
