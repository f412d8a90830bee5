#!/usr/bin/env bash
# test_dtype_cli.sh — `--dtype fp16|bf16|int8|fp32` (docs/cli.md, "Dtype"): the cast of a
# model's float tensors (token ids stay integers), the report's dtype line (text, JSON,
# --compare), and the error for a model whose dtype a config's units do not compute (an fp32
# export on stcp920, an fp16 model on goya): exit 1, naming the dtype and the config, and
# suggesting a --dtype the config has. Fixtures from tests/onnx/make_fixtures.py.
# Run from the repo root by tests/run.sh (GTSIM set).
set -u
GTSIM=${GTSIM:-$PWD/build/gtsim}
. "$(dirname "$0")/lib.sh"
dir=$(dirname "$GTSIM")/onnx-fixtures/dtype
out=$dir/out
rm -rf "$dir"
mkdir -p "$out"
/usr/bin/python3 tests/onnx/make_fixtures.py "$dir" 2>"$out/gen.err"
check_rc "fixtures generated (python3-onnx is a dependency: no skip)" $? "$(cat "$out/gen.err")"
R=$dir/resnet_block.onnx  # an fp32 export

# 1. today's silent choice is an error: fp32 on stcp920 (matrix fp16/int8, vector fp16/int8/int16)
"$GTSIM" --arch configs/stcp920.cfg "$R" --sched tvm >"$out/o" 2>"$out/e"; rc=$?
check_eval "fp32 model on stcp920: exit 1" "[ $rc -eq 1 ]"
check_eval "the error names the dtype, the config and the op" \
  "grep -q \"computes in fp32, and config 'stcp920' has no matrix unit for fp32 (op '/conv1/Conv'\" '$out/e'"
check_eval "the error lists the config's dtypes and suggests --dtype fp16" \
  "grep -q 'matrix units compute int8, fp16' '$out/e' && grep -q 'run it with --dtype fp16' '$out/e'"
check_eval "the error is located at the node (file:NODE:1)" "grep -q '^$R:1:1: error:' '$out/e'"
check_eval "no report on stdout" "[ ! -s '$out/o' ]"
# an fp16 model on goya (no fp16 anywhere): the suggestion is int8
"$GTSIM" --arch configs/goya.cfg workloads/resnet50.gtg --batch 1 --sched tvm >/dev/null 2>"$out/e2"; rc=$?
check_eval "fp16 model on goya: exit 1 suggesting --dtype int8" \
  "[ $rc -eq 1 ] && grep -q \"config 'goya' has no matrix unit for fp16\" '$out/e2' && grep -q -- '--dtype int8' '$out/e2'"

# 2. --dtype fp16 casts it; the report says which dtype ran
"$GTSIM" --arch configs/stcp920.cfg "$R" --sched tvm --dtype fp16 >"$out/t" 2>"$out/e"; rc=$?
check_eval "--dtype fp16: runs (exit 0)" "[ $rc -eq 0 ]"
check_eval "text report: 'dtype fp16 (cast from fp32 by --dtype)'" \
  "grep -qx 'dtype           fp16 (cast from fp32 by --dtype)' '$out/t'"
"$GTSIM" --arch configs/stcp920.cfg "$R" --sched tvm --dtype fp16 --json >"$out/j" 2>"$out/e"
check_eval "JSON report: dtype fp16, dtype_cast_from fp32" \
  "/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d[\"dtype\"]==\"fp16\" and d[\"dtype_cast_from\"]==\"fp32\"' '$out/j'"
"$GTSIM" --arch configs/stcp920.cfg workloads/resnet50.gtg --batch 4 --sched tvm --json >"$out/j2" 2>"$out/e"
check_eval "a model in a dtype the config has: its own dtype, no cast" \
  "/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d[\"dtype\"]==\"fp16\" and d[\"dtype_cast_from\"] is None' '$out/j2'"
"$GTSIM" --arch configs/stcp920.cfg "$R" --dtype int8 --compare tvm,graphturbo >"$out/c" 2>"$out/e"; rc=$?
check_eval "--compare names the dtype (int8)" "[ $rc -eq 0 ] && grep -q '^compare: resnet on stcp920, batch 1, dtype int8' '$out/c'"

# 3. the cast: every float tensor, activations and weights-as-inputs; integer ids stay
"$GTSIM" --convert "$dir/bert_base_graphonly.onnx" --dtype bf16 -o "$out/b.gtg" 2>"$out/e"; rc=$?
check_eval "--convert --dtype bf16: header dtype=bf16" "[ $rc -eq 0 ] && grep -q '^model .* dtype=bf16$' '$out/b.gtg'"
check_eval "token ids stay int32" "grep -q '^input input_ids: int32\\[N, 128\\]$' '$out/b.gtg'"
check_eval "float inputs (mask, position embedding) become bf16" \
  "grep -q '^input attention_mask: bf16' '$out/b.gtg' && ! grep -q 'fp32' '$out/b.gtg'"
"$GTSIM" --stats "$R" --batch 2 --json >"$out/s32" && "$GTSIM" --stats "$R" --batch 2 --dtype fp16 --json >"$out/s16"
check_eval "--stats: fp16 activations and weights are half the fp32 bytes, MACs unchanged" \
  "/usr/bin/python3 -c 'import json,sys; a,b=(json.load(open(p))[\"totals\"] for p in sys.argv[1:]); assert a[\"macs\"]==b[\"macs\"] and a[\"activation_bytes\"]==2*b[\"activation_bytes\"] and a[\"param_bytes\"]==2*b[\"param_bytes\"], (a, b)' '$out/s32' '$out/s16'"

# 4. bad values
"$GTSIM" --arch configs/stcp920.cfg "$R" --dtype fp8 >/dev/null 2>"$out/e"; rc=$?
check_eval "--dtype fp8: exit 1 naming the choices" "[ $rc -eq 1 ] && grep -q 'fp16, bf16, int8 or fp32' '$out/e'"
"$GTSIM" --arch configs/stcp920.cfg --describe --dtype fp16 >/dev/null 2>"$out/e"; rc=$?
check_eval "--dtype where no model is read (--describe): exit 1" "[ $rc -eq 1 ]"
done_testing
