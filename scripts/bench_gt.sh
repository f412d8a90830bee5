#!/usr/bin/env bash
# bench_gt.sh — wall time of the GraphTurbo graph-pass pipeline (sched/gt.c: splitinfo ..
# concat, with the invariant checker on, excluding model loading and dumping) for every zoo
# model on the paper's STCP920 (64 KiB LB per core) and the hardware's (1.5 MiB), at each
# model's own batch. Prints a markdown section (collected by `make bench`). Best of 3 runs.
# Target: under 100 ms for resnet50 (the graph passes must not slow a sweep down).
set -eu
BUILD=${BUILD:-build}
GTSIM=${GTSIM:-$BUILD/gtsim}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
echo "## GraphTurbo graph passes (scripts/bench_gt.sh)"
echo
echo "Time of \`gt_schedule()\` (all six passes and their invariant checks) as reported by"
echo "\`gtsim --arch CFG MODEL --dump-schedule --gt-time\`, best of 3; groups / instances / extra"
echo "ops of the resulting schedule. Batch: the model file's, split over the 4 clusters."
echo
echo "| model | ops | stcp920: groups | instances | extra ops | ms | stcp920-hw: groups | instances | extra ops | ms |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for m in workloads/*.gtg; do
  row="| $(basename "$m" .gtg)"
  first=1
  for cfg in configs/stcp920.cfg configs/stcp920-hw.cfg; do
    best=""
    for r in 1 2 3; do
      "$GTSIM" --arch "$cfg" "$m" --dump-schedule --gt-time >"$tmp/out" 2>"$tmp/err"
      t=$(sed -n 's/^graphturbo: .*, \([0-9.]*\) ms:.*/\1/p' "$tmp/err")
      if [ -z "$best" ] || awk "BEGIN{exit !($t < $best)}"; then best=$t; fi
    done
    if [ $first = 1 ]; then
      row="$row | $(sed -n 's/.*, \([0-9]*\) ops$/\1/p' "$tmp/out" | head -1)"
      first=0
    fi
    g=$(sed -n 's/^groups \([0-9]*\)$/\1/p' "$tmp/out")
    i=$(sed -n 's/^instances \([0-9]*\),.*/\1/p' "$tmp/out")
    x=$(sed -n 's/^extra ops \([0-9]*\)$/\1/p' "$tmp/out")
    row="$row | $g | $i | $x | $(printf '%.1f' "$best")"
  done
  echo "$row |"
done
echo
echo "Reproduce one row: \`build/gtsim --arch configs/stcp920-hw.cfg workloads/resnet50.gtg --dump-schedule --gt-time >/dev/null\`."
