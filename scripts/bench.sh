#!/usr/bin/env bash
# make bench: runs every scripts/bench_*.sh (each prints a markdown section with a table to
# stdout) and writes them together to bench/RESULTS.md (through a temporary name).
set -eu
BUILD=${BUILD:-build}
export GTSIM="$PWD/$BUILD/gtsim" BUILD
mkdir -p bench
tmp=bench/RESULTS.md.tmp.$$
{
  echo "# gtsim benchmarks"
  echo
  echo "Machine: $(nproc) cores, $(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'). Date: $(date -u +%F)."
  echo "Command: \`make bench\`. Wall times are single runs on one core; RSS from /usr/bin/time."
  for s in scripts/bench_*.sh; do
    [ -e "$s" ] || continue
    echo
    bash "$s"
  done
} >"$tmp"
mv "$tmp" bench/RESULTS.md
cat bench/RESULTS.md
