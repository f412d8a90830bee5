#!/usr/bin/env bash
# flow_check.sh — how far a transfer model is from the chunk model at small chunk sizes, the
# reference: for resnet50, bert-128, vit-b16 and mobilenetv2 under tvm and graphturbo on stcp920
# and stcp920-hw (default batch 8), the cycles under the candidate and under chunks of each size
# in FLOW_CHUNKS (default "256 64"; GTSIM_CHUNK_BYTES sets it), and the candidate's cycles
# against each. The candidate (FLOW_MODEL) is the flow model (chip.transfer_model=flow, the
# default) or the chunk model at N bytes (FLOW_MODEL=N: how the default chunk size was chosen).
# docs/timing.md, "Flows" and "Chunks and sharing", quote these tables and say what the distance
# is made of. Each run is one process; FLOW_JOBS (default 2) run at once. Small chunks are slow:
# 64 B chunks take a few minutes a run on stcp920 (about ten minutes for the whole table on two
# cores). Cycles do not depend on the machine, so the table is the same on any.
# Prints a markdown table and a summary line per chunk size; exits 1 when a run fails.
# Usage: scripts/flow_check.sh   (FLOW_MODEL=flow|N, FLOW_BATCH=N or "paper" (each model file's
# own batch), FLOW_CHUNKS="256 64 16", FLOW_MODELS="m1 m2", FLOW_CONFIGS="stcp920",
# FLOW_JOBS=N, GTSIM=path)
set -u
GTSIM=${GTSIM:-build/gtsim}
batch=${FLOW_BATCH:-8}
cand=${FLOW_MODEL:-flow}
chunks=${FLOW_CHUNKS:-256 64}
models=${FLOW_MODELS:-resnet50 bert-128 vit-b16 mobilenetv2}
configs=${FLOW_CONFIGS:-stcp920 stcp920-hw}
jobs=${FLOW_JOBS:-2}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One run per line: CFG MODEL SCHED MODEL_OF_TRANSFER (flow, or a chunk size in bytes).
for cfg in $configs; do for m in $models; do for s in tvm graphturbo; do
  for x in $cand $chunks; do echo "$cfg $m $s $x"; done
done; done; done >"$tmp/runs"

# run CFG MODEL SCHED X: writes the run's cycles (or "failed") to $tmp/CFG.MODEL.SCHED.X
run() {
  local out="$tmp/$1.$2.$3.$4" cyc b=(--batch "$batch")
  [ "$batch" = paper ] && b=()
  if [ "$4" = flow ]; then
    cyc=$("$GTSIM" --arch "configs/$1.cfg" --sched "$3" "${b[@]}" \
      --set chip.transfer_model=flow "workloads/$2.gtg" 2>/dev/null |
      awk '$1 == "cycles" {print $2; exit}')
  else
    cyc=$(GTSIM_CHUNK_BYTES="$4" "$GTSIM" --arch "configs/$1.cfg" --sched "$3" "${b[@]}" \
      "workloads/$2.gtg" 2>/dev/null | awk '$1 == "cycles" {print $2; exit}')
  fi
  echo "${cyc:-failed}" >"$out"
}
export -f run
export GTSIM batch tmp
xargs -P "$jobs" -L 1 bash -c 'run "$@"' _ <"$tmp/runs"

/usr/bin/python3 - "$tmp" "$batch" "$chunks" "$configs" "$models" "$cand" <<'PYEOF'
import os, sys
tmp, batch, chunks = sys.argv[1], sys.argv[2], sys.argv[3].split()
configs, models, cand = sys.argv[4].split(), sys.argv[5].split(), sys.argv[6]
name = "flows" if cand == "flow" else f"{cand} B chunks"
at = "the paper's batches" if batch == "paper" else f"batch {batch}"
def get(*k):
    v = open(os.path.join(tmp, ".".join(k))).read().strip()
    return int(v) if v.isdigit() else None
print(f"{name[0].upper() + name[1:]} against chunks at {at} (`scripts/flow_check.sh`): each "
      f"chunk column is that size's cycles and the {name}' cycles against them.\n")
print(f"| config | model | strategy | {name} | "
      + " | ".join(f"chunks {c} B | vs {c} B" for c in chunks) + " |")
print("|---|---|---|---:|" + "---:|---:|" * len(chunks))
diffs = {c: [] for c in chunks}
failed = False
for cfg in configs:
    for m in models:
        for s in ["tvm", "graphturbo"]:
            f = get(cfg, m, s, cand)
            row = [cfg, m, s, str(f) if f else "failed"]
            for c in chunks:
                k = get(cfg, m, s, c)
                if f and k:
                    d = (f / k - 1) * 100
                    diffs[c].append(d)
                    row += [str(k), f"{d:+.2f}%"]
                else:
                    failed = True
                    row += [str(k) if k else "failed", ""]
            print("| " + " | ".join(row) + " |")
print()
for c in chunks:
    d = diffs[c]
    if d:
        print(f"- against {c} B chunks: {min(d):+.2f}% to {max(d):+.2f}%, "
              f"{sum(abs(x) <= 2 for x in d)} of {len(d)} runs within 2%")
sys.exit(1 if failed else 0)
PYEOF
