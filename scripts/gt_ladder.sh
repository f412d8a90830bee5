#!/usr/bin/env bash
# gt_ladder.sh — GraphTurbo's ablation ladder against the baselines: every zoo model at its
# batch (the .gtg's batch=) under tvm, astitch and graphturbo at the levels gb, lb, instances
# and full, on the given configs (default: stcp920-hw and stcp920), one process per run.
# Prints a markdown table: cycles, speedup over tvm, DDR bytes relative to tvm, Table-3 counts
# (op outputs whose values live in DDR/GB/LB between kernels) and graphturbo's spilled slices.
# docs/graphturbo.md, "Results", is this script's output; regenerate it after a change:
#   bash scripts/gt_ladder.sh > /tmp/ladder.md    (about half an hour on two cores)
# Usage: scripts/gt_ladder.sh [CONFIG...]; MODELS="resnet50 dlrm" to restrict the models.
set -u
GTSIM=${GTSIM:-build/gtsim}
PY=/usr/bin/python3
configs=${*:-stcp920-hw stcp920}
models=${MODELS:-resnet50 bert-128 bert-256 bert-384 bert-512 dlrm mobilenetv2 vit-b16 densenet121 conformer}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
strategies="tvm astitch graphturbo:gb graphturbo:lb graphturbo:instances graphturbo:full"
for cfg in $configs; do
  echo "### $cfg"
  echo
  echo "| model | batch | strategy | cycles | speedup vs tvm | DDR bytes vs tvm | outputs ddr/gb/lb | spills |"
  echo "|---|---|---|---|---|---|---|---|"
  for m in $models; do
    batch=$(sed -n 's/^model [^ ]* batch=\([0-9]*\).*/\1/p' "workloads/$m.gtg")
    rm -f "$tmp"/*.json
    for s in $strategies; do
      if ! "$GTSIM" --arch "configs/$cfg.cfg" "workloads/$m.gtg" --sched "$s" --json \
          -o "$tmp/$s.json" 2>"$tmp/err"; then
        echo "| $m | $batch | $s | failed: $(head -c 160 "$tmp/err" | tr '\n|' '  ') | | | | |"
      fi
    done
    "$PY" - "$tmp" "$m" "$batch" $strategies <<'PYEOF'
import json, os, sys
d, m, batch, names = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
rows = [json.load(open(os.path.join(d, n + ".json"))) for n in names
        if os.path.exists(os.path.join(d, n + ".json"))]
base = rows[0] if rows and rows[0]["strategy"] == "tvm" else None
for r in rows:
    b = r["ddr_read_bytes"] + r["ddr_write_bytes"]
    sp = base["cycles"] / r["cycles"] if base else 0
    db = b / (base["ddr_read_bytes"] + base["ddr_write_bytes"]) if base else 0
    o = r["outputs"]
    spills = r.get("graphturbo", {}).get("spills", 0)
    print("| %s | %s | %s | %d | %.2fx | %.2f | %d/%d/%d | %d |" % (
        m, batch, r["strategy"], r["cycles"], sp, db, o["ddr"], o["gb"], o["lb"], spills))
PYEOF
  done
  echo
done
