#!/usr/bin/env bash
# test_astitch.sh — astitch as published (sched/lower_astitch.c's contract, docs/schedulers.md
# "astitch"): a conv is a kernel of its own, its batchnorm and relu a stitched memory-intensive
# kernel after it; the conv's whole output lives in the GB when it fits, else it spills to DDR
# (written, and read back by the stitched kernel), which tvm — fusing bn and relu into the
# conv's tile — never pays. And a row reduction stitched after an elementwise op when its rows
# fit a tile (regional), else through the GB (global).
# Machine: configs/tiny.cfg (2 clusters x 2 cores, 64 KiB LB, 256 KiB GB per cluster).
# Model cbrU: x fp16[2, 16, 64, 64] (1 sample per cluster), c = 1x1 conv to U channels (no bias),
# b = batchnorm(c), r = relu(b) (the model output).
#   x: 2 x 16 x 4096 x 2 B = 262144 B; conv weights U x 16 x 2 B, staged into each cluster's GB
#   once (read twice); batchnorm scale and shift 2 x U x 2 B, loaded whole by each of the 4 cores.
#   U = 32: weights 1024 B, bn 128 B; c per cluster 32 x 4096 x 2 B = 262144 B, more than the GB
#           below the weight area (262144 - 1024 = 261120 B): c spills to DDR.
#     tvm     reads 262144 + 2 x 1024 + 4 x 128 = 264704, writes r = 2 x 262144 = 524288
#     astitch reads 264704 + c (524288) = 788992, writes 524288 + c (524288) = 1048576
#   U = 16: weights 512 B, bn 64 B; c per cluster 131072 B fits the GB (262144 - 512): no DDR
#           traffic for it.
#     tvm and astitch read 262144 + 2 x 512 + 4 x 64 = 263424, write r = 262144
# Model smL: x fp16[2, 4, L], a = relu(x), s = softmax(a) over the rows of L elements.
#   L = 512: 6 row buffers (input, output, an operand tile, double-buffered) of 1 KiB fit the
#           64 KiB tile budget: one kernel relu+softmax; DDR reads x (8192 B), writes s (8192 B);
#           tvm: two kernels, a through DDR (16384 B each way).
#   L = 6144: 6 x 12 KiB = 72 KiB does not fit: softmax starts a kernel of its own and a (2 x 4 x
#           6144 x 2 B / 2 clusters = 49152 B per cluster) lives in the GB: DDR 98304 each way.
# Run from the repo root with $GTSIM set (tests/run.sh).
set -u
. "$(dirname "$0")/lib.sh"

for u in 32 16; do
  cat >"$tmp/cbr$u.gtg" <<EOF
gtg 1
model cbr batch=2 dtype=fp16
input x: fp16[N, 16, 64, 64]
c = conv2d(x) units=$u kernel=1 bias=0
b = batchnorm(c)
r = relu(b)
EOF
done
for l in 512 6144; do
  cat >"$tmp/sm$l.gtg" <<EOF
gtg 1
model sm batch=2 dtype=fp16
input x: fp16[N, 4, $l]
a = relu(x)
s = softmax(a)
EOF
done
A=(--arch configs/tiny.cfg)
run() { # MODEL STRATEGY: the report in $tmp/MODEL.STRATEGY, exit status checked
  "$GTSIM" "${A[@]}" "$tmp/$1.gtg" --sched "$2" >"$tmp/$1.$2" 2>"$tmp/err"
  check_rc "$1 $2: the program passes every simulator check" $? "$(head -3 "$tmp/err")"
}
bytes() { # MODEL STRATEGY: "READ WRITTEN"
  echo "$(stat "ddr read" "$tmp/$1.$2") $(stat "ddr written" "$tmp/$1.$2")"
}
dump() { "$GTSIM" "${A[@]}" "$tmp/$1.gtg" --sched astitch --dump-after placement 2>&1; }

# the kernels: the conv alone (a library call), bn + relu stitched (local: per tile, in LB)
out=$(dump cbr32)
check_eval "cbr32: the conv is a kernel of its own" 'grep -qE "^k0 ops=c:conv2d core=" <<<"$out"'
check_eval "cbr32: batchnorm and relu stitched into one kernel" \
  'grep -qE "^k1 ops=b:batchnorm,r:relu " <<<"$out"'
check_eval "cbr32: c does not fit the GB: spilled to DDR, read by k1" 'grep -qE " out=c@DDR\.\.k1$" <<<"$out"'
out=$(dump cbr16)
check_eval "cbr16: c fits the GB: at offset 0, read by k1" 'grep -qE " out=c@GB\+0\.\.k1$" <<<"$out"'

for m in cbr32 cbr16 sm512 sm6144; do run $m tvm; run $m astitch; done
check_eval "cbr32 tvm: DDR read 264704, written 524288" '[ "$(bytes cbr32 tvm)" = "264704 524288" ]'
check_eval "cbr32 astitch: the spill of c on top: read 788992, written 1048576" \
  '[ "$(bytes cbr32 astitch)" = "788992 1048576" ]'
check_eval "cbr32 astitch: the conv row writes c (524288), the stitched row reads it back" \
  'grep -qE "^0 +c +conv2d +[0-9]+ +264192 +524288 " "$tmp/cbr32.astitch" &&
   grep -qE "^1 +b +batchnorm\+relu +[0-9]+ +524800 +524288 " "$tmp/cbr32.astitch"'
check_eval "cbr32 astitch: the report counts c's spill, one share per cluster: 2, 524288 B" \
  'grep -qE "^spilled +2 cluster shares of kernel outputs \(524288 B\) in DDR where the plan meant the GB$" "$tmp/cbr32.astitch"'
"$GTSIM" "${A[@]}" "$tmp/cbr32.gtg" --compare tvm,astitch >"$tmp/cmp" 2>&1
check_eval "cbr32 --compare: spills 0 under tvm, 2 under astitch" \
  'grep -qE "^tvm .* 0 +[0-9.]+%" "$tmp/cmp" && grep -qE "^astitch .* 2/0/1 +2 " "$tmp/cmp"'
check_eval "cbr16: no spill line" '! grep -q "^spilled" "$tmp/cbr16.astitch"'
check_eval "cbr16: tvm and astitch move the same DDR bytes (263424, 262144)" \
  '[ "$(bytes cbr16 tvm)" = "263424 262144" ] && [ "$(bytes cbr16 astitch)" = "263424 262144" ]'

out=$(dump sm512)
check_eval "sm512: relu and softmax stitched (regional: rows fit a tile)" \
  'grep -qE "^k0 ops=a:relu,s:softmax " <<<"$out" && [ "$(grep -c "^k" <<<"$out")" = 1 ]'
check_eval "sm512: astitch DDR 8192 each way, tvm 16384" \
  '[ "$(bytes sm512 astitch)" = "8192 8192" ] && [ "$(bytes sm512 tvm)" = "16384 16384" ]'
out=$(dump sm6144)
check_eval "sm6144: softmax a kernel of its own (global), a in the GB" \
  'grep -qE "^k0 ops=a:relu .* out=a@GB\+0\.\.k1$" <<<"$out" && grep -qE "^k1 ops=s:softmax " <<<"$out"'
check_eval "sm6144: astitch DDR 98304 each way" '[ "$(bytes sm6144 astitch)" = "98304 98304" ]'

done_testing
