#!/usr/bin/env bash
# test_onnx_cli.sh — `gtsim --convert` and ONNX models on the command line: exit codes, error
# messages (file, node name, op type), atomic output (nothing left behind on failure), and the
# converted .gtg agreeing with the ONNX model under --stats. Fixtures come from
# tests/onnx/make_fixtures.py, written into BUILD/onnx-fixtures/cli (BUILD from $GTSIM).
# The fixtures are fp32 exports; tiny's matrix unit has no fp32, so runs cast them (--dtype fp16).
# Run from the repo root by tests/run.sh (GTSIM set).
set -u
GTSIM=${GTSIM:-$PWD/build/gtsim}
. "$(dirname "$0")/lib.sh"
dir=$(dirname "$GTSIM")/onnx-fixtures/cli
out=$dir/out

rm -rf "$dir"
mkdir -p "$out"
/usr/bin/python3 tests/onnx/make_fixtures.py "$dir" 2>"$out/gen.err"
check_rc "fixtures generated (python3-onnx is a dependency: no skip)" $? "$(cat "$out/gen.err")"

# 1. --convert writes a .gtg that starts with the format header and names the graph input
"$GTSIM" --convert "$dir/resnet_block.onnx" -o "$out/resnet.gtg" 2>"$out/err"
rc=$?
head -1 "$out/resnet.gtg" 2>/dev/null | grep -qx 'gtg 1'
check_rc "convert resnet_block.onnx exits 0 with a gtg 1 header" $((rc + $?)) "rc=$rc" \
  "$(cat "$out/err")"
grep -q '^input input: fp32\[N, 3, 32, 32\]$' "$out/resnet.gtg"
check_rc "converted input keeps the symbolic batch N" $? "$(grep '^input' "$out/resnet.gtg")"
ls "$out" | grep -q '\.tmp\.'
check_rc "no temporary file left after a successful convert" $((!$?))

# 2. --stats on the ONNX file and on its conversion agree (totals line of the text report)
for m in resnet_block encoder densenet_block mobilenet_block misc17 mobilenetv3_block \
         mobilenetv3_block13 pad_fold pad_ops resize_block upsample9 convtranspose einsum; do
  "$GTSIM" --convert "$dir/$m.onnx" -o "$out/$m.gtg" 2>"$out/err" &&
    "$GTSIM" --stats "$dir/$m.onnx" --batch 6 >"$out/$m.onnx.stats" 2>>"$out/err" &&
    "$GTSIM" --stats "$out/$m.gtg" --batch 6 >"$out/$m.gtg.stats" 2>>"$out/err"
  rc=$?
  a=$(grep '^total' "$out/$m.onnx.stats")
  b=$(grep '^total' "$out/$m.gtg.stats")
  [ "$rc" -eq 0 ] && [ -n "$a" ] && [ "$a" = "$b" ]
  check_rc "$m: --stats of .onnx and of its .gtg conversion agree" $? "onnx: $a" "gtg:  $b" \
    "$(cat "$out/err")"
done

# --batch B sets the header's default batch (the ONNX model's own default is 1)
"$GTSIM" --convert "$dir/encoder.onnx" -o "$out/encoder_b32.gtg" --batch 32 2>"$out/err"
grep -q '^model encoder batch=32 ' "$out/encoder_b32.gtg" &&
  grep -q '^model encoder batch=1 ' "$out/encoder.gtg"
check_rc "convert --batch 32 writes batch=32 in the header" $? "$(head -2 "$out/encoder_b32.gtg")"

# 3. -o - writes to stdout; the same text as the file
"$GTSIM" --convert "$dir/misc17.onnx" -o - >"$out/stdout.gtg" 2>"$out/err"
cmp -s "$out/stdout.gtg" "$out/misc17.gtg"
check_rc "convert -o - prints the same .gtg to stdout" $? "$(cat "$out/err")"

# 4. errors: exit 1, message with file, node name and op type, no output file
"$GTSIM" --convert "$dir/unsupported.onnx" -o "$out/unsupported.gtg" 2>"$out/err"
rc=$?
want="unsupported.onnx:2:1: error: node '/head/Hardmax' (Hardmax): unsupported op 'Hardmax'"
[ "$rc" -eq 1 ] && grep -qF "$want" "$out/err"
check_rc "unsupported op: exit 1 naming node and op type" $? "rc=$rc" "$(cat "$out/err")"
[ ! -e "$out/unsupported.gtg" ] && ! ls "$out" | grep -q 'unsupported.gtg.tmp'
check_rc "unsupported op: no output file written" $?

# an op that is supported in some forms only: the unsupported form names node, op and why
for f in einsum_bad:"node '/bad/Einsum' (Einsum): Einsum equation 'bi,bi->b' is not supported" \
         convtranspose_group:"node '/up/ConvTranspose' (ConvTranspose): grouped ConvTranspose" \
         pad_wrap:"node '/Pad' (Pad): Pad mode 'wrap' is not supported"; do
  "$GTSIM" --stats "$dir/${f%%:*}.onnx" >/dev/null 2>"$out/err"; rc=$?
  [ "$rc" -eq 1 ] && grep -qF "${f%%:*}.onnx:1:1: error: ${f#*:}" "$out/err"
  check_rc "${f%%:*}: exit 1 naming the node and the unsupported form" $? "rc=$rc" "$(cat "$out/err")"
done

for f in truncated random empty bad_shapes; do
  "$GTSIM" --convert "$dir/$f.onnx" -o "$out/$f.gtg" 2>"$out/err"
  rc=$?
  [ "$rc" -eq 1 ] && grep -q "^$dir/$f.onnx:.*error: " "$out/err" && [ ! -e "$out/$f.gtg" ]
  check_rc "$f.onnx: exit 1 with a located error, no output" $? "rc=$rc" "$(cat "$out/err")"
done

"$GTSIM" --stats "$dir/truncated.onnx" >/dev/null 2>"$out/err"
rc=$?
[ "$rc" -eq 1 ] && grep -q "not a valid ONNX model" "$out/err"
check_rc "--stats on a truncated ONNX file: exit 1" $? "rc=$rc" "$(cat "$out/err")"

"$GTSIM" --convert "$dir/resnet_block.onnx" 2>"$out/err"
rc=$?
[ "$rc" -eq 1 ] && grep -q -- "--convert needs -o" "$out/err"
check_rc "--convert without -o: exit 1 with usage" $? "rc=$rc" "$(cat "$out/err")"

"$GTSIM" --convert "$dir/resnet_block.onnx" -o "$out/x.onnx" 2>"$out/err"
rc=$?
[ "$rc" -eq 1 ] && grep -q "OUT.gtg" "$out/err" && [ ! -e "$out/x.onnx" ]
check_rc "--convert -o with a non-.gtg name: exit 1" $? "rc=$rc" "$(cat "$out/err")"

"$GTSIM" --convert "$dir/resnet_block.onnx" -o "$out/no/such/dir/x.gtg" 2>"$out/err"
rc=$?
[ "$rc" -eq 1 ] && grep -q "cannot write" "$out/err"
check_rc "--convert into a missing directory: exit 1" $? "rc=$rc" "$(cat "$out/err")"

cp "$dir/resnet_block.onnx" "$out/model.bin"
"$GTSIM" --convert "$out/model.bin" -o "$out/bin.gtg" 2>"$out/err"
rc=$?
[ "$rc" -eq 1 ] && grep -q "expected a .gtg or .onnx file" "$out/err"
check_rc "unknown model extension: exit 1" $? "rc=$rc" "$(cat "$out/err")"

# 6. a fixed-batch export (input [4, 3, 32, 32], no symbolic dim) is the same graph as the
# symbolic one at batch 4: its default batch is 4 (the same totals as --batch 4 of the symbolic
# export, and under tvm the same cycles on tiny); it binds no other batch (exit 1 naming the
# fixed batch, never a report that says batch 8 and computes batch 1), and graphturbo, which
# schedules one cluster's share (2 of 4 samples on tiny's 2 clusters), refuses it by name.
"$GTSIM" --stats "$dir/resnet_block_b4.onnx" >"$out/b4.stats" 2>"$out/err" &&
  "$GTSIM" --stats "$dir/resnet_block.onnx" --batch 4 >"$out/n4.stats" 2>>"$out/err"
a=$(grep '^total' "$out/b4.stats"); b=$(grep '^total' "$out/n4.stats")
[ -n "$a" ] && [ "$a" = "$b" ] && grep -q 'batch 4,' "$out/b4.stats"
check_rc "fixed batch 4: default batch 4, totals of the symbolic export at --batch 4" $? "$a" "$b" \
  "$(head -1 "$out/b4.stats") $(cat "$out/err")"
for cmd in "--stats $dir/resnet_block_b1.onnx --batch 8" \
           "--arch configs/tiny.cfg --dtype fp16 $dir/resnet_block_b1.onnx --batch 8 --sched tvm"; do
  "$GTSIM" $cmd >/dev/null 2>"$out/err"; rc=$?
  [ $rc -eq 1 ] && grep -q "has a fixed batch of 1 .*cannot run at batch 8" "$out/err"
  check_rc "fixed batch 1 with --batch 8: exit 1 naming both (${cmd%% *})" $? "rc=$rc" "$(cat "$out/err")"
done
c4=$("$GTSIM" --arch configs/tiny.cfg --dtype fp16 "$dir/resnet_block_b4.onnx" --sched tvm 2>"$out/err" | awk '/^cycles/ {print $2}')
n4=$("$GTSIM" --arch configs/tiny.cfg --dtype fp16 "$dir/resnet_block.onnx" --batch 4 --sched tvm 2>>"$out/err" | awk '/^cycles/ {print $2}')
check_eval "fixed batch 4 under tvm: the cycles of the symbolic export at batch 4 ($c4)" \
  '[ -n "$c4" ] && [ "$c4" = "$n4" ]'
"$GTSIM" --arch configs/tiny.cfg --dtype fp16 "$dir/resnet_block_b4.onnx" >/dev/null 2>"$out/err"; rc=$?
[ $rc -eq 1 ] && grep -q "fixed batch of 4: graphturbo schedules one cluster's share" "$out/err"
check_rc "fixed batch 4 under graphturbo on 2 clusters: exit 1 naming why" $? "rc=$rc" "$(cat "$out/err")"

# 7. MobileNet-v3's hard_swish and hard_sigmoid run under every strategy, and the opset-13 form
# (Mul(x, HardSigmoid(x))) is the same program as the opset-17 HardSwish: the same cycles
for s in tvm astitch graphturbo; do
  a=$("$GTSIM" --arch configs/tiny.cfg --dtype fp16 "$dir/mobilenetv3_block.onnx" --batch 4 --sched $s 2>"$out/err" | awk '/^cycles/ {print $2}')
  b=$("$GTSIM" --arch configs/tiny.cfg --dtype fp16 "$dir/mobilenetv3_block13.onnx" --batch 4 --sched $s 2>>"$out/err" | awk '/^cycles/ {print $2}')
  check_eval "mobilenetv3 block under $s: runs, opset 13 = opset 17 ($a cycles)" '[ -n "$a" ] && [ "$a" = "$b" ]'
done

# 8. Pads folded into a conv and pools (asymmetric on the max pool), pads that are ops (reflect,
# edge, a non-zero constant, any axis, opset 18's axes), and up-sampling (bilinear by scales,
# nearest to sizes), run under every strategy
for m in pad_fold pad_ops pad_axes18 resize_block swin_bits convtranspose convtranspose_odd \
         einsum einsum2d; do
  for s in tvm astitch graphturbo; do
    "$GTSIM" --arch configs/tiny.cfg --dtype fp16 "$dir/$m.onnx" --batch 4 --sched $s -o /dev/null 2>"$out/err"
    check_rc "$m under $s runs" $? "$(head -c 300 "$out/err")"
  done
done

# 5. a .gtg input converts to itself (model_load dispatches on the extension)
"$GTSIM" --convert "$out/encoder.gtg" -o "$out/encoder2.gtg" 2>"$out/err"
cmp -s "$out/encoder.gtg" "$out/encoder2.gtg"
check_rc ".gtg -> --convert -> identical .gtg" $? "$(cat "$out/err")"
done_testing
