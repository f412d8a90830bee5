#!/usr/bin/env bash
# test_lower_dump.sh — --dump-after STEP for the lowering steps (docs/schedulers.md, "Lowering
# steps"): every step under every strategy on tests/cases/gtg/tiny_cnn.gtg with the lines
# expected from the model file and the grouping rules, every step on a zoo model (each
# non-reshape op of the file in exactly one kernel, one line per kernel), determinism, -o, and
# the errors: an unknown name lists the graph passes and the lowering steps (exit 1), a
# graphturbo-only step under tvm (exit 1); the graph passes' dumps are unchanged.
# Run from the repo root with $GTSIM set.
set -u
. "$(dirname "$0")/lib.sh"
has() { grep -qE -- "$2" <<<"$1"; }

M=tests/cases/gtg/tiny_cnn.gtg
A=(--arch configs/tiny.cfg)
dump() { # STRATEGY STEP [options...]
  local s=$1 st=$2; shift 2
  "$GTSIM" "${A[@]}" "$M" --sched "$s" --dump-after "$st" "$@" 2>"$tmp/err"
}

# tiny_cnn: conv2d c1, batchnorm b1, relu r1, maxpool p1, split s1/s2, add y, reshape f, dense
# logits. tvm and graphturbo group it the same way: the conv takes the batchnorm and relu as its
# tail; maxpool, split (a copy), add and dense are kernels of their own (their layers fuse only
# after a conv/dense/matmul); the reshape is no kernel: 5 kernels. astitch runs the conv alone
# (a compute-intensive op takes no tail) and stitches batchnorm and relu into a kernel after
# it; it does not stitch onto a pool or a copy, and the add's only reader is the reshape: 6.
kernels_tvm=("k0 ops=c1:conv2d,b1:batchnorm,r1:relu" "k1 ops=p1:maxpool" "k2 ops=s1:split"
             "k3 ops=y:add" "k4 ops=logits:dense")
kernels_astitch=("k0 ops=c1:conv2d" "k1 ops=b1:batchnorm,r1:relu" "k2 ops=p1:maxpool"
                 "k3 ops=s1:split" "k4 ops=y:add" "k5 ops=logits:dense")
for s in tvm astitch graphturbo; do
  # o: kernels before the maxpool's (astitch's stitched bn+relu), nk kernels in all
  if [ $s = astitch ]; then kernels=("${kernels_astitch[@]}"); o=1; else kernels=("${kernels_tvm[@]}"); o=0; fi
  nk=${#kernels[@]} kp=$((1 + o)) ks=$((2 + o)) ka=$((3 + o)) kd=$((4 + o))
  out=$(dump $s kernels); rc=$?
  check "$s kernels: exit 0, header names the step" test $rc -eq 0 -a \
    "$(head -1 <<<"$out" | cut -d: -f1)" = "# lowering after kernels"
  check "$s kernels: $nk kernels" has "$out" "^# batch 4 \(2 per cluster per iteration, 1 iterations\), $nk kernels$"
  check "$s kernels: $nk kernel lines" test "$(grep -c '^k' <<<"$out")" = $nk
  for i in "${!kernels[@]}"; do check "$s kernels: ${kernels[$i]}" has "$out" "^${kernels[$i]}( |$)"; done
  check "$s kernels: the reshape is in no kernel" test "$(grep -c 'f:reshape' <<<"$out")" = 0
  check "$s kernels: no later step's fields" test "$(grep -cE 'core=|out=|tile=' <<<"$out")" = 0

  # units on tiny.cfg: one core kind 'pe' with mme (matrix) and vec (vector) units, all fp16
  out=$(dump $s units); rc=$?
  check "$s units: exit 0" test $rc -eq 0
  if [ $s = astitch ]; then
    check "$s units: conv on mme alone" has "$out" "^k0 .* core=pe units=mme:fp16$"
    check "$s units: the stitched bn+relu on vec" has "$out" "^k1 .* core=pe units=vec:fp16,vec:fp16$"
  else
    check "$s units: conv on mme, its tail on vec" has "$out" "^k0 .* core=pe units=mme:fp16,vec:fp16$"
  fi
  check "$s units: maxpool and add on vec" test "$(grep -cE "^k[$kp$ka] .* core=pe units=vec:fp16$" <<<"$out")" = 2
  check "$s units: the split is DMA only" has "$out" "^k$ks .* core=pe units=dma$"
  check "$s units: dense on mme" has "$out" "^k$kd .* core=pe units=mme:fp16$"

  # placement: the model output stays in DDR and has no reader; both halves of the split are
  # read by the add; y is read through the reshape by the dense
  out=$(dump $s placement); rc=$?
  check "$s placement: exit 0" test $rc -eq 0
  check "$s placement: logits in DDR, no reader" has "$out" "^k$kd .* out=logits@DDR$"
  check "$s placement: the split's outputs read by k$ka" has "$out" "^k$ks .* out=s1@[A-Z]+(\+[0-9]+)?\.\.k$ka,s2@[A-Z]+(\+[0-9]+)?\.\.k$ka$"
  check "$s placement: y read by k$kd through the reshape" has "$out" "^k$ka .* out=y@[A-Z]+(\+[0-9]+)?\.\.k$kd$"
  check "$s placement: no tiles yet" test "$(grep -c 'tile=' <<<"$out")" = 0

  # tiling: every kernel has a partition and tiles; the split is a copy; every need fits
  out=$(dump $s tiling); rc=$?
  check "$s tiling: exit 0" test $rc -eq 0
  check "$s tiling: every kernel has cores= and tile=" test "$(grep -cE '^k[0-9]+ .* cores=[0-9]+x[0-9]+ tile=' <<<"$out")" = $nk
  check "$s tiling: the split is a copy" has "$out" "^k$ks .* tile=copy$"
  fits=$(awk '{ for (i = 1; i <= NF; i++) { if ($i ~ /^need=/) nd = substr($i, 6) + 0;
                  if ($i ~ /^budget=/) bd = substr($i, 8) + 0 }
                if (nd != "" && nd > bd) bad++; nd = "" } END { print bad + 0 }' <<<"$out")
  check "$s tiling: every tile's need fits its budget" test "$fits" = 0
  check "$s tiling: $((nk - 1)) tiled kernels with need and budget" test "$(grep -c ' need=[0-9]* budget=[0-9]* ' <<<"$out")" = $((nk - 1))

  "$GTSIM" "${A[@]}" "$M" --sched $s --dump-after tiling >"$tmp/a.txt" 2>/dev/null
  "$GTSIM" "${A[@]}" "$M" --sched $s --dump-after tiling -o "$tmp/b.txt" >"$tmp/o.txt" 2>/dev/null
  check "$s: two dumps are identical" cmp -s "$tmp/a.txt" "$tmp/b.txt"
  check "$s: -o writes the file and nothing on stdout" test -s "$tmp/b.txt" -a ! -s "$tmp/o.txt"
done

# tvm: everything between kernels in DDR; astitch: kernel outputs in GB except the model's
# (the conv's c1, 2 samples x 16 x 32 x 32 x 2 B = 64 KiB per cluster, fits tiny's GB)
out=$(dump tvm placement)
check "tvm placement: every output in DDR" test "$(grep -c '@DDR' <<<"$out")" = 5 -a "$(grep -c '@GB\|@LB' <<<"$out")" = 0
out=$(dump astitch placement)
check "astitch placement: c1, r1, p1, s1, s2, y in GB at offsets" test "$(grep -oE '(c1|r1|p1|s1|s2|y)@GB\+[0-9]+' <<<"$out" | wc -l)" = 6
# graphturbo: the layers carry their group; later steps the instance and its samples
out=$(dump graphturbo units)
check "graphturbo units: every layer names its group" test "$(grep -cE '^k[0-9]+ ops=[^ ]+ group=g[0-9]+ ' <<<"$out")" = 5
out=$(dump graphturbo slices); rc=$?
check "graphturbo slices: exit 0, instances in the header" test $rc -eq 0 -a "$(grep -cE '^# instances [0-9]+, order [a-z]+, peak [0-9]+ B .*, gap [0-9.]+%, [0-9]+ slices$' <<<"$out")" = 1
check "graphturbo slices: every kernel names its instance" test "$(grep -cE '^k[0-9]+ .* inst=g[0-9]+\.[0-9]+ samples=' <<<"$out")" = "$(grep -c '^k' <<<"$out")"
check "graphturbo slices: logits wanted in DDR" has "$out" " out=logits@DDR$"
out=$(dump graphturbo staging); rc=$?
check "graphturbo staging: exit 0" test $rc -eq 0 -a "$(head -1 <<<"$out" | cut -d: -f1)" = "# lowering after staging"
check "graphturbo:full staging: the conv's and the dense's weights staged in GB" \
  test "$(grep -cE '^k(0|4) .* weights=GB\+[0-9]+:k[0-9]+' <<<"$out")" = 2
out=$(dump graphturbo:lb staging)
check "graphturbo:lb staging: nothing staged below level full" test "$(grep -cE 'weights=|drain=|ahead=' <<<"$out")" = 0
check "graphturbo:lb staging: the strategy names the level" has "$out" "strategy graphturbo:lb,"

# A zoo model under every strategy and step: exit 0, one line per kernel, and (kernels, units)
# every non-reshape op of the file in exactly one kernel (tvm, astitch; graphturbo's layers).
Z=workloads/mobilenetv2.gtg
awk -F' = ' '/^[^#].* = [a-z0-9_]+\(/ { split($2, a, "("); if (a[1] != "reshape") { split($1, o, ","); print o[1] } }' "$Z" | sort >"$tmp/ops.txt"
for s in tvm astitch graphturbo; do
  for st in kernels units slices placement tiling staging; do
    case "$s:$st" in tvm:slices|tvm:staging|astitch:slices|astitch:staging) continue ;; esac
    "$GTSIM" "${A[@]}" "$Z" --batch 2 --sched $s --dump-after $st >"$tmp/z.txt" 2>"$tmp/err"; rc=$?
    nk=$(sed -nE 's/^# batch .*, ([0-9]+) kernels$/\1/p' "$tmp/z.txt")
    if [ $rc -eq 0 ] && [ -n "$nk" ] && [ "$(grep -c '^k' "$tmp/z.txt")" = "$nk" ]; then
      ok "mobilenetv2 $s $st: exit 0, $nk kernel lines"
    else nok "mobilenetv2 $s $st" "exit $rc, header '$nk': $(head -c 300 "$tmp/err")"; fi
    if [ $st = kernels ] || [ $st = units ]; then
      sed -nE 's/^k[0-9]+ ops=([^ ]+).*/\1/p' "$tmp/z.txt" | tr ',' '\n' | sed 's/:.*//' | sort >"$tmp/got.txt"
      check "mobilenetv2 $s $st: each op of the file in exactly one kernel" cmp -s "$tmp/ops.txt" "$tmp/got.txt"
    fi
  done
done

# Errors: exit 1 and a message naming what is wrong.
err() {
  local name=$1 want=$2; shift 2
  local out; out=$("$GTSIM" "$@" 2>&1 >/dev/null); local rc=$?
  if [ $rc -eq 1 ] && grep -q -- "$want" <<<"$out"; then ok "$name"; else nok "$name" "exit $rc: $out"; fi
}
err "unknown name lists the passes" "unknown pass 'fuse' (passes: splitinfo, group, instances, order, bind, concat;" "${A[@]}" "$M" --dump-after fuse
err "unknown name lists the lowering steps" "lowering steps: kernels, units, slices, placement, tiling, staging)" "${A[@]}" "$M" --dump-after fuse
err "unknown name under tvm lists both" "unknown pass 'tiles' (passes: " "${A[@]}" "$M" --sched tvm --dump-after tiles
err "slices under tvm" "'slices' is a graphturbo lowering step; tvm has kernels, units, placement, tiling" "${A[@]}" "$M" --sched tvm --dump-after slices
err "staging under astitch" "'staging' is a graphturbo lowering step; astitch has" "${A[@]}" "$M" --sched astitch --dump-after staging
err "a step with --compare" "use --sched, not --compare" "${A[@]}" "$M" --compare tvm,astitch --dump-after units
err "a step with --json" "text only" "${A[@]}" "$M" --dump-after units --json
err "a step needs a model" "needs --arch FILE and exactly one model file" "${A[@]}" --dump-after units
err "a graph pass under tvm" "show the graphturbo schedule" "${A[@]}" "$M" --sched tvm --dump-after group
# The graph passes' names still mean the graph passes.
out=$("$GTSIM" "${A[@]}" "$M" --dump-after group 2>&1); rc=$?
check "--dump-after group is still the graph pass" test $rc -eq 0 -a "$(head -1 <<<"$out" | cut -d: -f1)" = "# graphturbo after group"
done_testing
