#!/usr/bin/env bash
# bench_paper.sh — wall time and peak RSS of the paper reproduction (scripts/paper: 120 runs,
# both configs, the machine's cores in parallel) into a scratch directory, so nothing cached is
# reused. Prints a markdown section (make bench collects it into bench/RESULTS.md).
set -u
GTSIM=${GTSIM:-build/gtsim}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "## The paper's evaluation (scripts/bench_paper.sh)"
echo
echo "\`scripts/paper --out DIR\` from scratch: 10 models x 6 strategies per config, $(nproc) runs"
echo "at a time (the memory of single runs is in the scheduling table below)."
echo
echo "| configs | runs | wall s | graphturbo:full over tvm (geomean) |"
echo "|---|---|---|---|"
for cfgs in stcp920-hw stcp920-hw,stcp920; do
  start=$(date +%s.%N)
  if scripts/paper --configs "$cfgs" --out "$tmp/$cfgs" --gtsim "$GTSIM" >"$tmp/log" 2>&1; then
    end=$(date +%s.%N)
    wall=$(/usr/bin/python3 -c "print('%.1f' % ($end - $start))")
    runs=$(sed -n 's/^scripts\/paper: \([0-9]*\) runs, .*/\1/p' "$tmp/log")
    gm=$(sed -n 's/^\(stcp920[^:]*\): graphturbo:full over tvm, geomean \(.*\)/\1 \2/p' "$tmp/log" | tr '\n' ' ' | sed 's/ *$//')
    echo "| $cfgs | $runs | $wall | $gm |"
  else
    echo "| $cfgs | failed: $(tail -c 160 "$tmp/log" | tr '\n|' '  ') | | |"
  fi
done
