#!/usr/bin/env bash
# test_overlap.sh — matrix/vector overlap on a conv + relu chain, at two levels.
#   1. Simulator: hand-written .gtasm programs for c0.k0 of configs/tiny.cfg (conv as gemm on the
#      cube, relu on the vector unit, tiles already in LB). Oracle: the exact cycle count derived
#      below from the formulas of docs/timing.md and tiny.cfg's figures — the max-plus pipeline
#      when the units overlap, the sum when they are serialized.
#   2. Scheduler: conv2d + relu models under --sched graphturbo:full and graphturbo:instances
#      with --perfetto. Oracle: properties of the Chrome trace and the reports (Python's json):
#      under full, a vec of c0.k0 runs while a gemm of c0.k0 runs (the tail of one tile under the
#      head of the next), and full is no slower than instances.
# Run from the repo root with $GTSIM set (tests/run.sh).
set -u
. "$(dirname "$0")/lib.sh"

# ---- 1. Simulator level: exact cycles --------------------------------------------------------
# The program (one core, c0.k0; every tile already in LB through alloc init=, so no transfer):
# tile i of the conv's output is gemm y_i = x_i (M x K im2col rows) . w (K x N), then relu
# z_i = max(y_i, 0) over M*N fp16 values. Every tile has its own x_i, y_i, z_i regions, so the
# only ordering is the flags:
#   overlap: mme: gemm i, signal vec           vec: wait, relu i            (a 2-stage pipeline)
#   ack:     mme: [wait,] gemm i, signal vec   vec: wait, relu i, signal mme (gemm i+1 waits for
#                                                                            relu i)
#   all:     mme: gemm 0..T-1, signal vec once vec: wait, relu 0..T-1       (relu waits for all)
# signal/wait/alloc cost 0 cycles (docs/timing.md, "Synchronisation and bookkeeping"), so no
# constant is added to any figure below.
prog() {  # prog MODE T M N K
  local mode=$1 T=$2 M=$3 N=$4 K=$5 i off=0
  local ab=$((M * K * 2)) wb=$((K * N * 2)) yb=$((M * N * 2))
  echo "gtasm 1"
  echo ".region w"
  echo ".tile tw"
  for ((i = 0; i < T; i++)); do
    echo ".region x$i"; echo ".region y$i"; echo ".region z$i"
    echo ".tile tx$i"; echo ".tile ty$i"; echo ".tile tz$i"
  done
  echo ".queue c0.k0.mme"
  echo "  alloc region=w level=lb cluster=0 core=0 offset=$off bytes=$wb init=tw"; off=$((off + wb))
  for ((i = 0; i < T; i++)); do
    echo "  alloc region=x$i level=lb cluster=0 core=0 offset=$off bytes=$ab init=tx$i"; off=$((off + ab))
    echo "  alloc region=y$i level=lb cluster=0 core=0 offset=$off bytes=$yb"; off=$((off + yb))
  done
  for ((i = 0; i < T; i++)); do
    [ "$mode" = ack ] && [ $i -gt 0 ] && echo "  wait flag=0"
    echo "  gemm dst=y$i dst_tile=ty$i a=x$i a_tile=tx$i b=w b_tile=tw m=$M n=$N k=$K dtype=fp16"
    if [ "$mode" != all ] || [ $i -eq $((T - 1)) ]; then echo "  signal queue=vec flag=0"; fi
  done
  echo ".queue c0.k0.vec"
  for ((i = 0; i < T; i++)); do
    echo "  alloc region=z$i level=lb cluster=0 core=0 offset=$off bytes=$yb"; off=$((off + yb))
  done
  for ((i = 0; i < T; i++)); do
    if [ "$mode" != all ] || [ $i -eq 0 ]; then echo "  wait flag=0"; fi
    echo "  vec op=relu dst=z$i dst_tile=tz$i a=y$i a_tile=ty$i elems=$((M * N)) dtype=fp16"
    [ "$mode" = ack ] && [ $i -lt $((T - 1)) ] && echo "  signal queue=mme flag=0"
  done
  return 0
}
A1=(--arch configs/tiny.cfg --set chip.clusters=1)
# sim NAME MODE T M N K WANT [--set ...]: run the program, check its cycles; stats in $tmp/NAME.stats
sim() {
  local name=$1 mode=$2 T=$3 M=$4 N=$5 K=$6 want=$7; shift 7
  prog "$mode" "$T" "$M" "$N" "$K" >"$tmp/$name.gtasm"
  if "$GTSIM" "${A1[@]}" "$@" "$tmp/$name.gtasm" >"$tmp/$name.stats" 2>"$tmp/err"; then
    local got; got=$(stat cycles "$tmp/$name.stats")
    if [ "$got" = "$want" ]; then ok "$name: $want cycles"
    else nok "$name: $want cycles" "got '$got'"; fi
  else
    nok "$name: $want cycles" "exit $?" "$(head -c 400 "$tmp/err")"
  fi
}
# expect NAME STAT WANT WHAT
expect() {
  local got; got=$(stat "$2" "$tmp/$1.stats")
  if [ "$got" = "$3" ]; then ok "$1: $2 = $3 ($4)"; else nok "$1: $2 = $3 ($4)" "got '$got'"; fi
}

# Compute-bound tail (R <= G). A tile is 32 output pixels (two 16-pixel rows) x 32 output
# channels of a 3x3 conv with 4 input channels: im2col M = 32, N = 32, K = 4*3*3 = 36.
#   G = gemm on tiny's cube (4x4x4, rate_fp16 1, matrix_latency 8):
#       ceil(ceil(32/4) * ceil(32/4) * ceil(36/4) / 1) + 8 = 8*8*9 + 8 = 584
#   R = relu over 32*32 = 1024 fp16 (vector_latency 4, lanes_fp16 16, relu = 1 simple pass,
#       cost_simple 1): 4 + ceil(1024/16) * 1*1 = 4 + 64 = 68
# Overlapped, gemm i ends at (i+1)G and relu i at max((i+1)G, end of relu i-1) + R; with R <= G
# each relu finds the vector unit free, so the run ends at the last relu: T*G + R.
#   T = 2: 2*584 + 68 = 1236          T = 4: 4*584 + 68 = 2404
# Serialized (either variant) nothing overlaps: T*(G + R).
#   T = 2: 2*(584 + 68) = 1304        T = 4: 4*652 = 2608
sim overlap_T2 overlap 2 32 32 36 1236
sim overlap_T4 overlap 4 32 32 36 2404
sim ack_T2 ack 2 32 32 36 1304
sim ack_T4 ack 4 32 32 36 2608
sim all_T2 all 2 32 32 36 1304
sim all_T4 all 4 32 32 36 2608
# Who waits (docs/timing.md, Stats: a wait on a flag set by a unit queue is stall_flag):
#   overlap_T4: mme never waits, busy 4G = 2336; vec busy 4R = 272, waits the rest of the run
#               until its last relu ends: 2404 - 272 = 2132
#   ack_T4:     mme waits for each of relus 0..2: 3R = 204; vec waits during every gemm: 4G = 2336
expect overlap_T4 q.c0.k0.mme.busy_cycles 2336 "4 x 584"
expect overlap_T4 q.c0.k0.mme.stall_flag_cycles 0 "the matrix unit never waits"
expect overlap_T4 q.c0.k0.vec.stall_flag_cycles 2132 "2404 - 4 x 68"
expect ack_T4 q.c0.k0.mme.stall_flag_cycles 204 "3 x 68: gemm i+1 waits for relu i"
expect ack_T4 q.c0.k0.vec.stall_flag_cycles 2336 "4 x 584"

# Vector-bound tail (R > G), the other branch of the max-plus formula: a 1x1 conv with 4 input
# channels (M = 32, N = 32, K = 4) on a vector unit narrowed to 4 fp16 lanes (--set).
#   G = ceil(8 * 8 * ceil(4/4) / 1) + 8 = 64 + 8 = 72
#   R = 4 + ceil(1024/4) * 1*1 = 260
# Overlapped, relu i starts at max((i+1)G, end of relu i-1): the vector unit is busy from the
# first gemm's end on, so the run ends at G + T*R = 72 + 4*260 = 1112; serialized T*(G + R) =
# 4*(72 + 260) = 1328.
VB=(--set unit.vec.lanes_fp16=4)
sim vecbound_overlap_T4 overlap 4 32 32 4 1112 "${VB[@]}"
sim vecbound_ack_T4 ack 4 32 32 4 1328 "${VB[@]}"

# ---- 2. Scheduler level: properties of the trace ---------------------------------------------
# For each model: run graphturbo:full and graphturbo:instances with --perfetto and the JSON
# report; from full's trace, the gemm events of c0.k0's matrix unit and the vec events of its
# vector unit (ph "X", args.start_cycle/end_cycle, track = thread_name). Checks:
#   (0) c0.k0 has >= 2 vec events under full (>= 2 row tiles, else (a) would be vacuous);
#   (a) some vec event of c0.k0 overlaps a gemm event of c0.k0 by a positive length of time
#       (the vec of tile i depends on the gemms of tile i, so the gemm it overlaps is of a later
#       tile: the tail of one tile under the head of the next);
#   (b) the report's cycles: full <= instances.
check_model() {  # check_model LABEL MATRIX_UNIT VECTOR_UNIT GTG GTSIM-ARGS...
  local label=$1 mu=$2 vu=$3 gtg=$4; shift 4
  local lv fail=""
  for lv in full instances; do
    "$GTSIM" "$@" "$gtg" --sched graphturbo:$lv --json -o "$tmp/$label.$lv.json" \
      --perfetto "$tmp/$label.$lv.pf.json" --trace-detail instruction 2>"$tmp/err" || fail="$lv: exit $? $(head -c 300 "$tmp/err")"
  done
  if [ -n "$fail" ]; then nok "$label: runs under full and instances" "$fail"; return; fi
  local msg
  if msg=$("$PY" - "$tmp/$label.full.pf.json" "c0.k0.$mu" "c0.k0.$vu" <<'PYEOF'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
name = {e["tid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "thread_name"}
def spans(track, mnem):
    return [(e["args"]["start_cycle"], e["args"]["end_cycle"]) for e in ev
            if e.get("ph") == "X" and name.get(e["tid"]) == track and e["name"] == mnem]
g, v = spans(sys.argv[2], "gemm"), spans(sys.argv[3], "vec")
if len(v) < 2:
    print("only %d vec event(s) on %s and %d gemm(s) on %s: fewer than 2 row tiles"
          % (len(v), sys.argv[3], len(g), sys.argv[2]))
    sys.exit(2)
pairs = [(a, b) for a in v for b in g if a[0] < b[1] and b[0] < a[1]]
if not pairs:
    print("%d vec and %d gemm events on c0.k0, none overlapping; vec spans %s"
          % (len(v), len(g), v[:4]))
    sys.exit(1)
(vs, ve), (gs, ge) = pairs[0]
print("%d of %d vec events under a gemm; first: vec [%g, %g) under gemm [%g, %g)"
      % (len({a for a, b in pairs}), len(v), vs, ve, gs, ge))
PYEOF
  ); then
    ok "$label: tiles >= 2 on c0.k0 (precondition)"
    ok "$label, full: a vec overlaps a gemm on c0.k0 ($msg)"
  else
    if [ $? -eq 2 ]; then nok "$label: tiles >= 2 on c0.k0 (precondition)" "$msg"
    else ok "$label: tiles >= 2 on c0.k0 (precondition)"; nok "$label, full: a vec overlaps a gemm on c0.k0" "$msg"; fi
  fi
  local cf ci
  cf=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["cycles"])' "$tmp/$label.full.json")
  ci=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["cycles"])' "$tmp/$label.instances.json")
  if [ -n "$cf" ] && [ -n "$ci" ] && [ "$cf" -le "$ci" ]; then ok "$label: full <= instances ($cf <= $ci cycles)"
  else nok "$label: full <= instances" "full '$cf', instances '$ci'"; fi
}
gtg() {  # gtg FILE BATCH CIN HW COUT
  printf 'gtg 1\nmodel convrelu batch=%s dtype=fp16\ninput x: fp16[N, %s, %s, %s]\n' "$2" "$3" "$4" "$4" >"$1"
  printf 'c = conv2d(x) units=%s kernel=3 pad=1 bias=0\nr = relu(c)\n' "$5" >>"$1"
}
# tiny.cfg, one cluster (2 cores): x[1, 64, 32, 32], 3x3 conv 64 -> 64, relu. Compute-bound
# (576 MACs per output value on a 64-MAC/cycle cube; 1/576 as much relu work), split into
# several row tiles per core.
gtg "$tmp/tiny64.gtg" 1 64 32 64
check_model tiny64 mme vec "$tmp/tiny64.gtg" "${A1[@]}"
# tiny.cfg, both clusters: x[1, 1, 64, 64], 3x3 conv 1 -> 16, relu: a thin input whose relu is a
# large share of the kernel, where full may pick smaller row tiles than instances (when this
# test was written: 5 row tiles on c0.k0 under full, 3 under instances, 20147 vs 20250 cycles).
gtg "$tmp/thin.gtg" 1 1 64 16
check_model thin mme vec "$tmp/thin.gtg" --arch configs/tiny.cfg
# stcp920-hw.cfg: x[32, 256, 28, 28], 3x3 conv 256 -> 256, relu (compute-heavier than the
# 64-channel layer, which is DDR-bound on this chip; at 14 x 14 and batch 64 the packed-taps
# plan holds a core's 28 rows in one tile, too few tiles to overlap).
gtg "$tmp/hw256.gtg" 32 256 28 256
check_model hw256 mme vme "$tmp/hw256.gtg" --arch configs/stcp920-hw.cfg
# tests/run.sh counts the "not ok" lines; the exit status also tells a run by hand
done_testing
