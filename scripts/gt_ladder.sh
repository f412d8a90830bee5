#!/usr/bin/env bash
# gt_ladder.sh — GraphTurbo's ablation ladder against the baselines: every zoo model at its
# batch (the .gtg's batch=) under tvm, astitch and graphturbo at the levels gb, lb and
# instances, on the given configs (default: stcp920-hw and stcp920), one process per model and
# config (--compare). Prints a markdown table: cycles, speedup over tvm, DDR bytes relative to
# tvm, Table-3 counts (op outputs in DDR/GB/LB) and graphturbo's spilled slices.
# docs/graphturbo.md, "Results", is this script's output; regenerate it after a change:
#   bash scripts/gt_ladder.sh > /tmp/ladder.md    (about 15 minutes on two cores)
# Usage: scripts/gt_ladder.sh [CONFIG...]; MODELS="resnet50 dlrm" to restrict the models.
set -u
GTSIM=${GTSIM:-build/gtsim}
PY=/usr/bin/python3
configs=${*:-stcp920-hw stcp920}
models=${MODELS:-resnet50 bert-128 bert-256 bert-384 bert-512 dlrm mobilenetv2 vit-b16 densenet121 conformer}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
strategies=tvm,astitch,graphturbo:gb,graphturbo:lb,graphturbo:instances
for cfg in $configs; do
  echo "### $cfg"
  echo
  echo "| model | batch | strategy | cycles | speedup vs tvm | DDR bytes vs tvm | outputs ddr/gb/lb | spills |"
  echo "|---|---|---|---|---|---|---|---|"
  for m in $models; do
    batch=$(sed -n 's/^model [^ ]* batch=\([0-9]*\).*/\1/p' "workloads/$m.gtg")
    if "$GTSIM" --arch "configs/$cfg.cfg" "workloads/$m.gtg" --compare "$strategies" --json \
        -o "$tmp/c.json" 2>"$tmp/err"; then
      "$PY" - "$tmp/c.json" "$m" "$batch" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["rows"]
base = rows[0]
bb = base["ddr_read_bytes"] + base["ddr_write_bytes"]
for r in rows:
    b = r["ddr_read_bytes"] + r["ddr_write_bytes"]
    o = r["outputs"]
    print("| %s | %s | %s | %d | %.2fx | %.2f | %d/%d/%d | %d |" % (
        sys.argv[2], sys.argv[3], r["strategy"], r["cycles"], r["speedup"], b / bb if bb else 0,
        o["ddr"], o["gb"], o["lb"], r["spills"]))
PYEOF
    else
      echo "| $m | $batch | failed: $(head -c 160 "$tmp/err" | tr '\n|' '  ') | | | | | |"
    fi
  done
  echo
done
