#!/usr/bin/env bash
# test_cols.sh — a gemm's columns split over cores when its rows are too few to share
# (docs/schedulers.md, "Columns split over cores"), and the strided views of a tensor it writes.
# Model: two 1x1 convs, 128 -> 128 -> 128 channels, on one image of 1 x 8 pixels (fp16, no bias),
# on configs/tiny.cfg reduced to one cluster (2 cores). Each conv has one row (one image row of
# 8 pixels) for 2 cores: before, one core did all of it; now each core takes 64 output channels.
# Every number below is derived by hand from tiny.cfg (docs/timing.md's formulas):
#   mov set-up DDR <-> LB: dma 20 + DDR 100 + LB 2 + NoC 5 = 127 cycles, then bytes at the core's
#   16 B/cycle NoC link; DDR: 2 channels of 16 B/cycle, 256 B interleave; chunks of 2048 B,
#   each resource of the path serving a chunk in its own turn, the chunk done when the last
#   has (its DDR bytes spread evenly over the transfer's chunks); the first chunk requested at
#   issue + 127; gemm on the 4x4x4 cube: ceil(m/4) ceil(n/4) ceil(k/4) + 8 latency.
# Per conv and core: A = the whole input, 8 px x 128 ch x 2 B = 2048 B; W = its 64 columns'
# weights, 64 x 128 x 2 B = 16384 B; gemm m = 8, n = 64, k = 128; O = 8 px x 64 ch x 2 B =
# 1024 B, stored as 8 rows of 128 B at the output's 256 B pixel pitch (a strided view).
#   core 0: A chunk at 127 (both channels 64 cycles, link 128) ends 255; W's 8 chunks from
#           255 + 127 = 382, each 128 on the link and 64 on each channel, end 1406; gemm
#           2 x 16 x 32 + 8 = 1032 ends 2438; store at 2438 + 127 = 2565 (512 B per channel:
#           32 cycles; link 64) ends 2629.
#   core 1: its A chunk has the channels after core 0's, [191, 255], and its own link
#           [127, 255]: it ends 255 too; so does each W chunk, a chunk each on the channels in
#           turn (each uses them half its time) while the links run side by side: W ends 1406,
#           gemm 2438; store: the channels [2597, 2629] after core 0's, its link [2565, 2629].
# A conv: 2629 cycles; the run: 2 x 2629 = 5258 (the set-up barrier costs nothing).
# Rows only (the plan before): one core, A 255, W 127 + 32768 / 16 = 2175, gemm 2 x 32 x 32 + 8
# = 2056, store 127 + 2048 / 16 = 255: 4741 per conv, 9482 for the run.
# DDR bytes: each conv reads its input twice (a core each) and its weights once: 2 x 2048 + 32768
# = 36864, writes 2048: the run reads 73728 and writes 4096.
# Run from the repo root with $GTSIM set (tests/run.sh).
set -u
. "$(dirname "$0")/lib.sh"

cat >"$tmp/cols.gtg" <<'EOF'
gtg 1
model cols batch=1 dtype=fp16
input x: fp16[N, 128, 1, 8]
y = conv2d(x) units=128 kernel=1 bias=0
z = conv2d(y) units=128 kernel=1 bias=0
EOF
A1=(--arch configs/tiny.cfg --set chip.clusters=1 "$tmp/cols.gtg" --batch 1)
cycles() { sed -n 's/^cycles  *\([0-9]*\)$/\1/p' "$1"; }

"$GTSIM" "${A1[@]}" --sched tvm --dump-after tiling >"$tmp/dump" 2>&1
check_eval "tvm splits both convs' columns over the 2 cores (cores=1x2)" \
  '[ "$(grep -c " cores=1x2 " "$tmp/dump")" = 2 ]'

"$GTSIM" "${A1[@]}" --sched tvm --emit "$tmp/p.gtasm" >"$tmp/r" 2>"$tmp/err"
check_rc "tvm: the program passes every simulator check" $? "$(head -3 "$tmp/err")"
check_eval "tvm: 5258 cycles (2 x 2629, derived above; rows only: 9482)" \
  '[ "$(cycles "$tmp/r")" = 5258 ]'
check_eval "tvm: each conv 2629 cycles" '[ "$(grep -cE "^[01] .* 2629 " "$tmp/r")" = 2 ]'
check_eval "tvm: DDR read 2 x (2 x 2048 + 32768) = 73728" \
  '[ "$(stat "ddr read" "$tmp/r")" = 73728 ]'
check_eval "tvm: DDR written 2 x 2048 = 4096" '[ "$(stat "ddr written" "$tmp/r")" = 4096 ]'

# the rows-only plan, on one core: 2 x 4741 = 9482 cycles (derived above)
"$GTSIM" "${A1[@]}" --set core.pe.count=1 --sched tvm >"$tmp/r1" 2>"$tmp/err"
check_eval "one core: rows only, 9482 cycles" '[ "$(cycles "$tmp/r1")" = 9482 ]'

# the views: core 1 stores its 64 channels of y as 8 rows of 128 B at the 256 B pitch, from
# byte 128 of y's region; the next conv reads all of y (both cores' bytes, one region, one tile)
# with one mov of 2048 B
store1=$(sed -n '/^\.queue c0\.k1\.dma_out/,/^\.queue/p' "$tmp/p.gtasm" | grep -c \
  'mov dst="t:y\[0,2048)" .*bytes=1024 dst_off=128 rows=8 src_stride=128 dst_stride=256 ')
check_eval "core 1 stores its channels of y with one strided mov (8 x 128 B at 256 B)" \
  '[ "$store1" = 1 ]'
check_eval "each core of conv z reads all of y with one 2048 B mov" \
  '[ "$(grep -c "src=\"t:y\[0,2048)\" .*bytes=2048 rows=1 " "$tmp/p.gtasm")" = 2 ]'

# a scheduler bug: core 1 never stores its channels of y; the readers of y find bytes
# [128, 256) of each pixel never written (exit 2), although the region holds one tile. The
# store's wait and signal stay, as an instruction of their own (a wait carrying the signal).
sed -E 's/^( *)mov dst="t:y\[0,2048\)" .*dst_off=128 rows=8 .* wait=([0-9]+)( .*)?$/\1wait flag=\2\3/' \
  "$tmp/p.gtasm" >"$tmp/bad.gtasm"
check_eval "... the mutation replaced the store" \
  '[ "$(diff "$tmp/p.gtasm" "$tmp/bad.gtasm" | grep -c "^> *wait flag=")" = 1 ]'
"$GTSIM" --arch configs/tiny.cfg --set chip.clusters=1 "$tmp/bad.gtasm" >/dev/null 2>"$tmp/err"
rc=$?
check_eval "a missing column store ends in exit 2 (got $rc)" '[ "$rc" = 2 ]'
check "... naming the bytes never written" \
  grep -q "nothing was ever written into bytes \[128, 256)" "$tmp/err"

# astitch keeps y in the GB (its cores' views share a GB region): the second conv reads no DDR
# for its input: 36864 + 32768 = 69632 read, z's 2048 written
"$GTSIM" "${A1[@]}" --sched astitch >"$tmp/r" 2>"$tmp/err"
check_rc "astitch: the program passes every simulator check" $? "$(head -3 "$tmp/err")"
check_eval "astitch: DDR read 36864 + 32768 = 69632" '[ "$(stat "ddr read" "$tmp/r")" = 69632 ]'
check_eval "astitch: DDR written 2048" '[ "$(stat "ddr written" "$tmp/r")" = 2048 ]'

# two clusters, batch 2: a row per cluster, the columns split in each (the estimate: with the
# pipeline's fill and drain priced, a core's one tile loads, computes and stores in sequence,
# 127 + 128 + 127 + 2048 (A, W) + 2056 (gemm) + 255 (store) rows only against 127 + 128 + 127 +
# 1024 + 1032 + 191 split: the split is far below 90 % of it). Every cluster reads its own
# input: 2 x 73728 B read, 2 x 4096 written. Four cores share the two DDR channels (32 B/cycle):
# at least (147456 + 8192) / 32 = 4864 cycles; at most the two clusters one after the other,
# 2 x 5258 = 10516.
"$GTSIM" --arch configs/tiny.cfg "$tmp/cols.gtg" --batch 2 --sched tvm >"$tmp/r" 2>"$tmp/err"
check_rc "two clusters at batch 2: the program passes every check" $? "$(head -3 "$tmp/err")"
check_eval "... DDR read 2 clusters x 73728" '[ "$(stat "ddr read" "$tmp/r")" = 147456 ]'
check_eval "... DDR written 2 clusters x 4096" '[ "$(stat "ddr written" "$tmp/r")" = 8192 ]'
c2=$(cycles "$tmp/r")
check_eval "... cycles $c2 within [4864, 10516]" '[ "$c2" -ge 4864 ] && [ "$c2" -le 10516 ]'

# graphturbo keeps y in LB. By default (--gt-cols rows) its layers split rows only; with
# --gt-cols split each core keeps its 64 channels of y in its own LB (8 x 128 B = 1024 B,
# compact) and each core of z reads both halves (its own inside its LB, the other over the NoC), one
# strided mov each (8 rows of 128 B into rows of 256 B). DDR: x twice and the weights once, 2 x
# 2048 + 2 x 32768 = 69632 read; z's 2048 written (y never leaves the chip).
"$GTSIM" "${A1[@]}" --sched graphturbo --dump-after tiling >"$tmp/dump" 2>&1
check_eval "graphturbo: rows only by default (cores=1x1)" \
  '[ "$(grep -c " cores=1x1 " "$tmp/dump")" = 2 ]'
"$GTSIM" "${A1[@]}" --sched graphturbo --gt-cols split --emit "$tmp/g.gtasm" >"$tmp/r" 2>"$tmp/err"
check_rc "graphturbo --gt-cols split: the program passes every check" $? "$(head -3 "$tmp/err")"
check_eval "... DDR read 69632" '[ "$(stat "ddr read" "$tmp/r")" = 69632 ]'
check_eval "... DDR written 2048" '[ "$(stat "ddr written" "$tmp/r")" = 2048 ]'
check_eval "... each core keeps 1024 B of y in its LB" \
  '[ "$(grep -c "alloc region=.*level=lb .*bytes=1024$" "$tmp/g.gtasm")" -ge 2 ]'
check_eval "... the cores of z read y's halves with 4 strided movs in all" \
  '[ "$(grep -cE "bytes=1024 (dst_off=128 )?rows=8 src_stride=128 dst_stride=256 " \
      "$tmp/g.gtasm")" = 4 ]'
"$GTSIM" "${A1[@]}" --sched graphturbo --gt-cols diagonal >/dev/null 2>"$tmp/err"
rc=$?
check_eval "--gt-cols takes rows or split (exit 1, got $rc)" \
  '[ "$rc" = 1 ] && grep -q "rows or split" "$tmp/err"'

# rows enough for every core: no column split (the plan as before)
"$GTSIM" --arch configs/tiny.cfg --set chip.clusters=1 "$tmp/cols.gtg" --batch 2 --sched tvm \
  --dump-after tiling >"$tmp/dump" 2>&1
check_eval "two rows on two cores: rows only (cores=2x1)" \
  '[ "$(grep -c " cores=2x1 " "$tmp/dump")" = 2 ]'

done_testing
