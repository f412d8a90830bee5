#!/usr/bin/env bash
# bench_sched.sh — scheduling time, simulation wall time and peak RSS of every zoo model at its
# paper batch (the .gtg's batch=) on stcp920 under the tvm, astitch and graphturbo strategies,
# one process per run (gtsim --timing reports the two phases; /usr/bin/time the RSS). Prints a
# markdown section with a table (make bench collects it into bench/RESULTS.md).
# Usage: scripts/bench_sched.sh [MODEL...]   (default: the ten zoo models)
set -u
GTSIM=${GTSIM:-build/gtsim}
cfg=configs/stcp920.cfg
models=${*:-resnet50 bert-128 bert-256 bert-384 bert-512 dlrm mobilenetv2 vit-b16 densenet121 conformer}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "## Scheduling + simulation (tvm, astitch, graphturbo) on stcp920 at the paper's batches"
echo
echo "Target: resnet50 at batch 64 in under 10 s wall on one core. Simulated figures are in the"
echo "throughput column (samples/s at the chip clock)."
echo
echo "| model | batch | strategy | kernels | instructions | schedule s | simulate s | wall s | peak RSS MiB | samples/s |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for m in $models; do
  batch=$(sed -n 's/^model [^ ]* batch=\([0-9]*\).*/\1/p' "workloads/$m.gtg")
  for s in tvm astitch graphturbo; do
    if /usr/bin/time -f "%e %M" -o "$tmp/time" "$GTSIM" --arch "$cfg" "workloads/$m.gtg" --sched "$s" \
        --timing --json -o "$tmp/r.json" 2>"$tmp/err"; then
      read -r wall rss <"$tmp/time"
      sched=$(sed -n "s/^timing $s: schedule \([0-9.]*\) s.*/\1/p" "$tmp/err")
      simt=$(sed -n "s/^timing $s: .*simulate \([0-9.]*\) s.*/\1/p" "$tmp/err")
      insts=$(sed -n "s/^timing $s: .*, \([0-9]*\) instructions.*/\1/p" "$tmp/err")
      read -r nk tput < <(/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d["kernels"]), "%.1f" % d["throughput_samples_per_s"])' "$tmp/r.json")
      echo "| $m | $batch | $s | $nk | $insts | $sched | $simt | $wall | $((rss / 1024)) | $tput |"
    else
      echo "| $m | $batch | $s | failed: $(head -c 120 "$tmp/err" | tr '\n|' '  ') | | | | | | |"
    fi
  done
done
