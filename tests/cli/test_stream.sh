#!/usr/bin/env bash
# test_stream.sh — weights staged in chunks (graphturbo full, docs/graphturbo.md "Weights staged
# in chunks"), at two levels.
#   1. Simulator: hand-written .gtasm programs on one cluster of configs/tiny.cfg. The cluster
#      DMA copies a layer's weights DDR -> GB, in C chunks (a GB region and a semaphore each) or
#      whole; core 0's dma_in waits for a chunk, copies it GB -> LB and hands it to the matrix
#      unit, which multiplies by it. Oracle: the exact cycle count of the max-plus pipeline,
#      derived below from the formulas of docs/timing.md and tiny.cfg's figures. Without the
#      wait for one chunk, the simulator stops with exit 2 (the copy reads a region being written).
#   2. Scheduler: a 1x1 conv whose weights are staged at its own start, under graphturbo:full and
#      graphturbo:instances. Oracle: the emitted program (several GB regions for the weights,
#      their bytes adding up to the weights'), the Perfetto trace (the matrix unit starts before
#      the last chunk has landed) and the reports (full faster than instances).
# Run from the repo root with $GTSIM set (tests/run.sh).
set -u
. "$(dirname "$0")/lib.sh"

# ---- 1. Simulator level: exact cycles --------------------------------------------------------
# prog C M K N [SKIP]: weights W (K x N fp16, column chunk i = bytes [i*B, (i+1)*B) with
# B = K*(N/C)*2) in DDR; chunk i goes to GB region g<i>, then to LB region l<i>; gemm
# y<i> = x (M x K, already in LB) . W chunk i (K x N/C). With SKIP = i, dma_in does not wait for
# chunk i's semaphore.
prog() {
  local C=$1 M=$2 K=$3 N=$4 skip=${5:--1} i
  local nc=$((N / C)) B=$((K * (N / C) * 2)) xb=$((M * K * 2)) yb=$((M * (N / C) * 2)) off=0
  echo "gtasm 1"
  echo ".region w"; echo ".tile tw"; echo ".region x"; echo ".tile tx"
  for ((i = 0; i < C; i++)); do
    echo ".region g$i"; echo ".region l$i"; echo ".region y$i"
    echo ".tile tg$i"; echo ".tile tl$i"; echo ".tile ty$i"
  done
  echo ".queue c0.dma0"
  echo "  alloc region=w level=ddr offset=0 bytes=$((C * B)) init=tw"
  for ((i = 0; i < C; i++)); do echo "  alloc region=g$i level=gb cluster=0 offset=$((i * B)) bytes=$B"; done
  for ((i = 0; i < C; i++)); do
    echo "  mov dst=g$i dst_tile=tg$i src=w src_tile=tw bytes=$B src_off=$((i * B))"
    echo "  sempost scope=cluster id=$i"
  done
  echo ".queue c0.k0.dma_in"
  for ((i = 0; i < C; i++)); do
    echo "  alloc region=l$i level=lb cluster=0 core=0 offset=$off bytes=$B"; off=$((off + B))
  done
  for ((i = 0; i < C; i++)); do
    [ "$i" = "$skip" ] || echo "  semwait scope=cluster id=$i"
    echo "  mov dst=l$i dst_tile=tl$i src=g$i src_tile=tg$i bytes=$B"
    echo "  signal queue=mme flag=0"
  done
  echo ".queue c0.k0.mme"
  echo "  alloc region=x level=lb cluster=0 core=0 offset=$off bytes=$xb init=tx"; off=$((off + xb))
  for ((i = 0; i < C; i++)); do
    echo "  alloc region=y$i level=lb cluster=0 core=0 offset=$off bytes=$yb"; off=$((off + yb))
  done
  for ((i = 0; i < C; i++)); do
    echo "  wait flag=0"
    echo "  gemm dst=y$i dst_tile=ty$i a=x a_tile=tx b=l$i b_tile=tl$i m=$M n=$nc k=$K dtype=fp16"
  done
}
A1=(--arch configs/tiny.cfg --set chip.clusters=1)
# want C M K N DDR_BYTES_PER_CYCLE: the max-plus pipeline of docs/timing.md's formulas on tiny:
#   stage  S = dma 20 + DDR 100 + GB 10 latency + B / (DDR bandwidth; the GB port's 32 is wider)
#            (B a multiple of 2 x 256 B: both DDR channels carry half)
#   load   L = dma 20 + GB 10 + LB 2 + link 5 latency + B / 16 (the core's link, narrower than
#            the GB port's 32 and the LB port's 64)
#   gemm   G = ceil(M/4) * ceil((N/C)/4) * ceil(K/4) + 8 (4x4x4 cube, rate 1, latency 8)
# The cluster DMA stages chunk after chunk: chunk i lands at S_i = (i+1) S. The load of chunk i
# starts when it has landed and the previous load is done; the gemm when its chunk is in LB and
# the previous gemm is done:
#   L_i = max(S_i, L_{i-1}) + L        G_i = max(L_i, G_{i-1}) + G        run = G_{C-1}
# (semaphores, flags and allocs take no time; only two transfers at once, on two GB ports.)
want() {
  local C=$1 M=$2 K=$3 N=$4 bw=$5 i
  local B=$((K * (N / C) * 2))
  local S=$((130 + B / bw)) L=$((37 + B / 16)) G=$(( (M + 3) / 4 * ((N / C + 3) / 4) * ((K + 3) / 4) + 8 ))
  local l=0 g=0
  for ((i = 0; i < C; i++)); do
    local s=$(((i + 1) * S))
    l=$(( (s > l ? s : l) + L )); g=$(( (l > g ? l : g) + G ))
  done
  echo $g
}
# sim NAME C M K N BW: run the program with the DDR at BW bytes/cycle, check its cycles
sim() {
  local name=$1 C=$2 M=$3 K=$4 N=$5 bw=$6
  local w; w=$(want "$C" "$M" "$K" "$N" "$bw")
  prog "$C" "$M" "$K" "$N" >"$tmp/$name.gtasm"
  if "$GTSIM" "${A1[@]}" --set ddr.bandwidth_gb_per_s=$bw "$tmp/$name.gtasm" >"$tmp/$name.stats" 2>"$tmp/err"; then
    local got; got=$(stat cycles "$tmp/$name.stats")
    if [ "$got" = "$w" ]; then ok "$name: $w cycles"; else nok "$name: $w cycles" "got '$got'"; fi
  else
    nok "$name: $w cycles" "exit $?" "$(head -c 400 "$tmp/err")"
  fi
}
# Weights 64 x 128 fp16 = 16 KiB; x 16 x 64.
# Compute-bound (DDR 32 B/cycle): chunks of B = 4096: S = 130 + 128 = 258, L = 37 + 256 = 293,
#   G = 4*8*16 + 8 = 520; L_i = 551, 844, 1137, 1430; G_i = 1071, 1591, 2111, 2631.
#   Whole (C = 1, B = 16384): S = 130 + 512 = 642, L = 37 + 1024 = 1061, G = 4*32*16 + 8 = 2056:
#   642 + 1061 + 2056 = 3759.
sim chunks4_fast 4 16 64 128 32
sim whole_fast 1 16 64 128 32
# DDR-bound (8 B/cycle): S = 130 + 512 = 642 per chunk, the rest as above: L_i = 935, 1577,
#   2219, 2861; G_i = 1455, 2097, 2739, 3381. Whole: 130 + 2048 + 1061 + 2056 = 5295.
sim chunks4_slow 4 16 64 128 8
sim whole_slow 1 16 64 128 8
# Each chunk's semaphore is needed: without the wait for chunk 2, dma_in copies g2 at
# L_1 = 1577 while the cluster DMA writes it until S_2 = 1926 (DDR-bound case).
prog 4 16 64 128 2 >"$tmp/race.gtasm"
"$GTSIM" "${A1[@]}" --set ddr.bandwidth_gb_per_s=8 "$tmp/race.gtasm" >/dev/null 2>"$tmp/err"; rc=$?
if [ $rc -eq 2 ] && grep -q "region g2\|'g2'" "$tmp/err"; then
  ok "without chunk 2's wait the simulator stops (exit 2) at the read of g2"
else
  nok "without chunk 2's wait the simulator stops (exit 2) at the read of g2" "exit $rc" "$(head -c 400 "$tmp/err")"
fi

# ---- 2. Scheduler level ----------------------------------------------------------------------
# A 1x1 conv 256 -> 256 on 4x4 pixels: 128 KiB of weights (4096 cycles at tiny's 32 B/cycle)
# against 4*4*256*256 MACs on two 64-MAC/cycle cores (8192 cycles): staged whole, the cores wait
# for all of it; in chunks they start on the first.
cat >"$tmp/st.gtg" <<'G'
gtg 1
model stream batch=1 dtype=fp16
input x: fp16[N, 256, 4, 4]
b = conv2d(x) units=256 kernel=1 bias=0
r = relu(b)
G
fail=""
for lv in full instances; do
  "$GTSIM" "${A1[@]}" "$tmp/st.gtg" --sched graphturbo:$lv --json -o "$tmp/st.$lv.json" \
    --perfetto "$tmp/st.$lv.pf.json" --trace-detail instruction --emit "$tmp/st.$lv.gtasm" 2>"$tmp/err" || fail="$lv: exit $? $(head -c 300 "$tmp/err")"
done
if [ -n "$fail" ]; then
  nok "the conv runs under full and instances" "$fail"
else
  ok "the conv runs under full and instances (every simulator check on)"
  # alloc lines of the staged weights' GB regions: gbw0:b (whole) or "gbw0:b#i" (chunks)
  regions() { grep -E '^ *alloc region=("gbw0:b#[0-9]+"|gbw0:b) level=gb ' "$1" | sed 's/.*bytes=\([0-9]*\).*/\1/'; }
  nf=$(regions "$tmp/st.full.gtasm" | wc -l); sf=$(regions "$tmp/st.full.gtasm" | awk "{s += \$1} END {print s}")
  ni=$(regions "$tmp/st.instances.gtasm" | wc -l)
  if [ "$nf" -gt 1 ] && [ "$sf" = 131072 ] && [ "$ni" = 1 ]; then
    ok "full stages the weights in $nf GB regions of 131072 bytes in all; instances in one"
  else
    nok "full stages the weights in chunks" "full: $nf regions, $sf bytes; instances: $ni regions"
  fi
  if msg=$("$PY" - "$tmp/st.full.pf.json" "$tmp/st.full.json" "$tmp/st.instances.json" <<'PYEOF'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["tid"]: e["args"]["name"] for e in ev if e.get("name") == "thread_name"}
def spans(q, what):
    return [(e["args"]["start_cycle"], e["args"]["end_cycle"]) for e in ev
            if e.get("ph") == "X" and names.get(e.get("tid")) == q and e["name"].startswith(what)]
stage = spans("c0.dma0", "mov")
gemm = spans("c0.k0.mme", "gemm")
f, i = (json.load(open(p))["cycles"] for p in sys.argv[2:4])
print("%d staging movs, last ends at %d; first gemm at %d; full %d, instances %d cycles"
      % (len(stage), max(e for _, e in stage), min(s for s, _ in gemm), f, i))
sys.exit(0 if len(stage) > 1 and min(s for s, _ in gemm) < max(e for _, e in stage) and f < i else 1)
PYEOF
  ); then ok "the matrix unit starts before the last chunk lands ($msg)"
  else nok "the matrix unit starts before the last chunk lands" "$msg"; fi
fi
done_testing
