#!/usr/bin/env bash
# test_tvm_wkeep.sh — weights kept in the GB across iterations (tvm, astitch; sched/lower_wkeep.c,
# docs/schedulers.md "Weights kept in the GB across iterations"): a run of several iterations
# stages a kept layer's weights DDR -> GB once, in the first iteration, and reads them from the
# GB after; weights that do not fit next to the per-kernel staging are staged every iteration.
# Models: two (d2) or three (d3) dense layers of 128 -> 128 units, no bias, on x: fp16[N, 4, 128],
# on configs/tiny.cfg (2 clusters of 2 cores, 256 KiB GB per cluster), batch 12, 2 samples per
# cluster per iteration: 3 iterations. Every number below is derived by hand from the shapes:
#   per layer: weights 128 x 128 x 2 B = 32768 B (32 KiB); a sample's activations 4 x 128 x 2 B
#   = 1024 B, so one layer's input over the whole batch is 12 x 1024 = 12288 B, its output too.
#   Each cluster has 2 x 4 = 8 rows per iteration, 4 per core: one tile per core (A 4 KiB, W 32
#   KiB resident, O 4 KiB), so every activation byte is read once; the weights are staged once
#   per cluster per staging (2 cores read them: w_via_gb), i.e. 2 x 32768 B per staging.
#   tvm, d2, all kept (GB 256 KiB): read = x 12288 + y1 12288 + 2 layers x 32768 x 2 clusters
#     x 1 staging = 155648 B (what one iteration of the whole batch reads); written 2 x 12288.
#   tvm, d2, GB 48 KiB: keeping one layer needs its 32 KiB block above the 32 KiB staging room
#     of the other: 64 > 48, so none is kept: read = 24576 + 2 x 32768 x 2 x 3 iterations =
#     417792 B (the run before the weights were kept).
#   tvm, d3, GB 80 KiB: the greedy keeps k0 (equal gains and sizes: kernel order) at 80 - 32 =
#     48 KiB = 49152; k1 next would need 48 - 32 = 16 KiB >= the 32 KiB staging room k2 still
#     needs: no; k2 the same: no. Read = 3 x 12288 + 32768 x 2 x 1 + 2 x 32768 x 2 x 3 = 36864
#     + 65536 + 393216 = 495616 B.
#   astitch, d2 (y1 in the GB at 0, 2 samples x 1024 = 2048 B; weight area [224, 256) KiB, the
#     largest gemm weights): k0's block would start at 256 - 32 = 224 KiB, inside the 32 KiB
#     staging room [224, 256) KiB that k1 still needs, so it goes below the weight area, above
#     the GB tensors: at 2048; then k1 fits at the top, 229376 (nothing is staged per kernel). Read = x 12288 + 131072 = 143360 B,
#     written y2 12288 B (y1 stays in the GB).
#   tvm, d2, batch 10: iterations of 4, 4 and 2 samples; the last is planned again and keeps
#     the blocks: read = 10240 + 10240 + 131072 = 151552 B.
# Run from the repo root with $GTSIM set (tests/run.sh).
set -u
. "$(dirname "$0")/lib.sh"

cat >"$tmp/d2.gtg" <<'EOF'
gtg 1
model d2 batch=12 dtype=fp16
input x: fp16[N, 4, 128]
y1 = dense(x) units=128 bias=0
y2 = dense(y1) units=128 bias=0
EOF
{ sed '$d' "$tmp/d2.gtg"; echo 'y2 = dense(y1) units=128 bias=0'; echo 'y3 = dense(y2) units=128 bias=0'; } \
  | sed 's/model d2/model d3/' >"$tmp/d3.gtg"
T=(--arch configs/tiny.cfg --batch-per-cluster 2)
cycles() { sed -n 's/^cycles  *\([0-9]*\)$/\1/p' "$1"; }

# run NAME SCHED MODEL [ARGS...]: the report in $tmp/NAME, its exit status checked (every
# simulator check on: a later iteration reading a kept block that was never written is exit 2)
run() {
  local name=$1 sched=$2 model=$3; shift 3
  "$GTSIM" "${T[@]}" "$tmp/$model.gtg" --sched "$sched" "$@" >"$tmp/$name" 2>"$tmp/$name.err"
  check_rc "$name: the program passes every simulator check" $? "$(head -3 "$tmp/$name.err")"
}

run kept tvm d2
check_eval "tvm, both layers kept: DDR read 12288 + 12288 + 2 x 32768 x 2 = 155648" \
  '[ "$(stat "ddr read" "$tmp/kept")" = 155648 ]'
check_eval "tvm, both layers kept: DDR written 2 x 12288 = 24576" \
  '[ "$(stat "ddr written" "$tmp/kept")" = 24576 ]'
check_eval "tvm: per kernel 12288 + 2 x 32768 = 77824 B read" \
  '[ "$(grep -cE "^[01] .* dense +[0-9]+ +77824 +12288 " "$tmp/kept")" = 2 ]'
"$GTSIM" "${T[@]}" "$tmp/d2.gtg" --sched tvm --dump-after tiling >"$tmp/dump" 2>&1
check_eval "dump: k0 kept at the GB's top (262144 - 32768 = 229376), k1 under it (196608)" \
  'grep -q "^k0 .*w=resident,gb,kept@GB+229376 " "$tmp/dump" && grep -q "^k1 .*w=resident,gb,kept@GB+196608 " "$tmp/dump"'

run none tvm d2 --set cluster.gb_kib=48
check_eval "tvm, GB 48 KiB, nothing kept: DDR read 24576 + 2 x 32768 x 2 x 3 = 417792" \
  '[ "$(stat "ddr read" "$tmp/none")" = 417792 ]'
check_eval "tvm: kept weights take fewer cycles than staged every iteration" \
  '[ "$(cycles "$tmp/kept")" -lt "$(cycles "$tmp/none")" ]'
"$GTSIM" "${T[@]}" "$tmp/d2.gtg" --sched tvm --set cluster.gb_kib=48 --dump-after tiling >"$tmp/dump48" 2>&1
check_eval "dump, GB 48 KiB: no block kept" '! grep -q "kept@" "$tmp/dump48"'

run part tvm d3 --set cluster.gb_kib=80
check_eval "tvm, 3 layers in 80 KiB: DDR read 36864 + 65536 + 393216 = 495616" \
  '[ "$(stat "ddr read" "$tmp/part")" = 495616 ]'
"$GTSIM" "${T[@]}" "$tmp/d3.gtg" --sched tvm --set cluster.gb_kib=80 --dump-after tiling >"$tmp/dump80" 2>&1
check_eval "dump, 3 layers in 80 KiB: k0 alone kept, at 49152" \
  '[ "$(grep -c "kept@" "$tmp/dump80")" = 1 ] && grep -q "^k0 .*kept@GB+49152 " "$tmp/dump80"'

run astitch astitch d2
check_eval "astitch: DDR read 12288 + 131072 = 143360" \
  '[ "$(stat "ddr read" "$tmp/astitch")" = 143360 ]'
check_eval "astitch: DDR written 12288 (y1 stays in the GB)" \
  '[ "$(stat "ddr written" "$tmp/astitch")" = 12288 ]'
"$GTSIM" "${T[@]}" "$tmp/d2.gtg" --sched astitch --dump-after tiling >"$tmp/dumpa" 2>&1
check_eval "astitch dump: k0 above the GB tensors (2048), k1 at the top (229376)" \
  'grep -q "^k0 .*kept@GB+2048 " "$tmp/dumpa" && grep -q "^k1 .*kept@GB+229376 " "$tmp/dumpa"'

run last tvm d2 --batch 10
check_eval "tvm, batch 10 (a smaller last iteration re-planned): DDR read 151552" \
  '[ "$(stat "ddr read" "$tmp/last")" = 151552 ]'

# one iteration: nothing to keep across iterations, the plan is unchanged
"$GTSIM" --arch configs/tiny.cfg "$tmp/d2.gtg" --sched tvm --dump-after tiling >"$tmp/dump1" 2>&1
check_eval "one iteration: no block kept" '! grep -q "kept@" "$tmp/dump1"'
"$GTSIM" --arch configs/tiny.cfg "$tmp/d2.gtg" --sched tvm >"$tmp/one" 2>&1
check_eval "one iteration reads what the 3 iterations with kept weights read (155648)" \
  '[ "$(stat "ddr read" "$tmp/one")" = 155648 ]'

# graphturbo plans its own GB: nothing kept by this rule
"$GTSIM" "${T[@]}" "$tmp/d2.gtg" --sched graphturbo --dump-after tiling >"$tmp/dumpg" 2>&1
check_eval "graphturbo: no block kept by this rule" '! grep -q "kept@" "$tmp/dumpg"'

done_testing
