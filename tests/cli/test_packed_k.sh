#!/usr/bin/env bash
# test_packed_k.sh — a conv's filter taps packed into the gemm's k (one im2col gemm per tile)
# where the matrix unit's time says so, else one gemm per tap (docs/timing.md, "Convolutions on
# a matrix unit"). Every expected number is derived by hand from the unit formulas
# (docs/timing.md; unit_timing.c):
#   systolic ws R x C: ceil(K/R) ceil(N/C) folds of 2R + C - 2 + M cycles
#   cube m x n x k at rate 1: ceil(M/m) ceil(N/n) ceil(K/k) + latency
# Run from the repo root with $GTSIM set (tests/run.sh).
set -u
. "$(dirname "$0")/lib.sh"

conv() { # conv CIN COUT: one 3x3 conv, pad 1, on one 8 x 8 fp16 image (64 output pixels)
  printf 'gtg 1\nmodel pk batch=1 dtype=fp16\ninput x: fp16[N, %s, 8, 8]\n' "$1"
  printf 'y = conv2d(x) units=%s kernel=3 pad=1 bias=0\n' "$2"
}
gemms() { grep -c '^ *gemm ' "$1"; }
# the durations of the gemm records of a .gtt.gz trace, one per line
gemm_cycles() { zcat "$1" | awk '$1 == "a" && $5 == "gemm" { print $3 - $2 }'; }
ONNXIM=(--arch configs/onnxim-tpuv4.cfg --set core.tc.count=1 --sched tvm)

# 1. ws 128 x 128, Cin 16 -> 128: per tap k = 16 fills 16 of the 128 rows: 9 folds of
#    2*128 + 128 - 2 + 64 = 446 cycles = 4014; packed k = 16 x 9 = 144: ceil(144/128) = 2 folds,
#    892 cycles. Packed; its one gemm reads windows of the raw input tile: 8 x 8 px x 16 ch =
#    1024 elements (a_elems; the padding is not stored).
conv 16 128 >"$tmp/a.gtg"
"$GTSIM" "${ONNXIM[@]}" "$tmp/a.gtg" --emit "$tmp/a.gtasm" --trace "$tmp/a.gtt.gz" >"$tmp/r" 2>"$tmp/err"
check_rc "ws, Cin 16: the program passes every simulator check" $? "$(head -3 "$tmp/err")"
check_eval "ws, Cin 16: one gemm, m=64 n=128 k=144 a_elems=1024" \
  '[ "$(gemms "$tmp/a.gtasm")" = 1 ] && grep -q "gemm .* m=64 n=128 k=144 .*a_elems=1024" "$tmp/a.gtasm"'
check_eval "ws, Cin 16: the gemm takes 2 x 446 = 892 cycles (per tap: 9 x 446 = 4014)" \
  '[ "$(gemm_cycles "$tmp/a.gtt.gz")" = 892 ]'
"$GTSIM" "${ONNXIM[@]}" "$tmp/a.gtg" --dump-after tiling >"$tmp/d" 2>&1
check "ws, Cin 16: the plan says conv=packed" grep -q " conv=packed " "$tmp/d"

# 2. ws, Cin 128 -> 128: per tap k = 128 fills the rows, 9 folds; packed k = 1152 is
#    ceil(1152/128) = 9 folds too: a tie keeps one gemm per tap, each 446 cycles.
conv 128 128 >"$tmp/b.gtg"
"$GTSIM" "${ONNXIM[@]}" "$tmp/b.gtg" --emit "$tmp/b.gtasm" --trace "$tmp/b.gtt.gz" >"$tmp/r" 2>"$tmp/err"
check_rc "ws, Cin 128: the program passes every simulator check" $? "$(head -3 "$tmp/err")"
# (the taps after the first are one gemm with reps=8: isa.def; a gemm counts reps times)
taps=$(grep -E "gemm .* m=64 n=128 k=128 dtype=fp16( acc=1)?( (reps|wait|wait2|signal|signal_flag|signal2|signal2_flag)=[^ ]+)*$" \
  "$tmp/b.gtasm" | awk '{ r = 1; for (i = 1; i <= NF; i++) if ($i ~ /^reps=/) r = substr($i, 6); n += r } END { print n }')
check_eval "ws, Cin 128: nine gemms of k=128, no a_elems (got $taps)" '[ "$taps" = 9 ]'
check_eval "ws, Cin 128: each 446 cycles" \
  '[ "$(gemm_cycles "$tmp/b.gtt.gz" | sort -u)" = 446 ]'

# 3. tiny.cfg's 4x4x4 cube, Cin 2 -> 4, one core: per tap 16 x 1 x ceil(2/4) = 16 blocks + 8 =
#    24 cycles, 9 taps 216; packed k = 18: 16 x 1 x ceil(18/4) = 80 + 8 = 88. Packed.
conv 2 4 >"$tmp/c.gtg"
"$GTSIM" --arch configs/tiny.cfg --set chip.clusters=1 --set core.pe.count=1 --sched tvm \
  "$tmp/c.gtg" --emit "$tmp/c.gtasm" --trace "$tmp/c.gtt.gz" >"$tmp/r" 2>"$tmp/err"
check_rc "cube, Cin 2: the program passes every simulator check" $? "$(head -3 "$tmp/err")"
check_eval "cube, Cin 2: one gemm of 88 cycles, k=18 (per tap: 9 x 24 = 216)" \
  '[ "$(gemms "$tmp/c.gtasm")" = 1 ] && [ "$(gemm_cycles "$tmp/c.gtt.gz")" = 88 ] &&
   grep -q "gemm .* k=18 " "$tmp/c.gtasm"'

# 4. the same cube, Cin 4: per tap ceil(4/4) = 1 block deep, 9 x (16 + 8) = 216; packed k = 36,
#    16 x 9 + 8 = 152 — shorter by the 8 cycles of latency each gemm pays: packed
conv 4 4 >"$tmp/d.gtg"
"$GTSIM" --arch configs/tiny.cfg --set chip.clusters=1 --set core.pe.count=1 --sched tvm \
  "$tmp/d.gtg" --emit "$tmp/d.gtasm" --trace "$tmp/d.gtt.gz" >"$tmp/r" 2>"$tmp/err"
check_rc "cube, Cin 4: the program passes every simulator check" $? "$(head -3 "$tmp/err")"
check_eval "cube, Cin 4: one gemm of 152 cycles (per tap: 216)" \
  '[ "$(gemms "$tmp/d.gtasm")" = 1 ] && [ "$(gemm_cycles "$tmp/d.gtt.gz")" = 152 ]'

# 5. a scheduler bug: the packed gemm claims to read more of its A tile than the load wrote
#    (a_elems 1025 of 1024): exit 2, naming the bytes never written
sed 's/a_elems=1024/a_elems=1025/' "$tmp/a.gtasm" >"$tmp/bad.gtasm"
"$GTSIM" --arch configs/onnxim-tpuv4.cfg --set core.tc.count=1 "$tmp/bad.gtasm" >/dev/null 2>"$tmp/err"
rc=$?
check_eval "a gemm reading past its raw tile ends in exit 2 (got $rc)" '[ "$rc" = 2 ]'
# 6. a negative a_elems is no extent: the static check refuses it (exit 2) by name
sed 's/a_elems=1024/a_elems=-1/' "$tmp/a.gtasm" >"$tmp/bad2.gtasm"
"$GTSIM" --arch configs/onnxim-tpuv4.cfg --set core.tc.count=1 "$tmp/bad2.gtasm" >/dev/null 2>"$tmp/err"
rc=$?
check_eval "a negative a_elems is refused (got $rc)" '[ "$rc" = 2 ] && grep -q "a_elems=-1 is negative" "$tmp/err"'

done_testing
