#!/usr/bin/env bash
# test_gt_cli.sh — the GraphTurbo passes through the command line: every zoo model on every
# shipped config goes through all passes with the invariant checker on (exit 0), the
# schedule dump is byte-identical across two runs, the JSON is valid; the paper's running
# example on stcp920-hw; --dump-after for every pass; option and batch errors.
# Run from the repo root with $GTSIM set.
set -u
. "$(dirname "$0")/lib.sh"

# 1. Every model x every config: all passes, checker on, deterministic output.
for cfg in configs/*.cfg; do
  for m in workloads/*.gtg; do
    name="$(basename "$cfg" .cfg) $(basename "$m" .gtg)"
    "$GTSIM" --arch "$cfg" "$m" --dump-schedule --json >"$tmp/a.json" 2>"$tmp/err"; rc=$?
    if [ $rc -ne 0 ]; then nok "$name: all passes" "exit $rc: $(head -c 300 "$tmp/err")"; continue; fi
    "$GTSIM" --arch "$cfg" "$m" --dump-schedule --json >"$tmp/b.json" 2>/dev/null
    if cmp -s "$tmp/a.json" "$tmp/b.json"; then ok "$name: all passes, deterministic"
    else nok "$name: all passes, deterministic" "two runs differ"; fi
  done
done

# 2. The JSON is valid and self-consistent (on the paper's machine and model).
"$GTSIM" --arch configs/stcp920-hw.cfg workloads/resnet50.gtg --dump-schedule --json >"$tmp/r.json"
field() { $PY -c "import json,sys; d=json.load(open('$tmp/r.json')); print($1)"; }
check "json parses" $PY -c "import json; json.load(open('$tmp/r.json'))"
# ResNet-50 at its file batch 64 on 4 clusters: n = 16 images per cluster; with 12 MiB of LB
# per cluster the four stages split 8, 4, 2, 1 (derivation: tests/unit/test_gt_paper.c,
# resnet50_stcp920_hw_lb) — 15 instances, 14 tree edges of 8*4 + 4*2 + 2*1 = 42.
check "json batch per cluster" test "$(field "d['batch_per_cluster']")" = 16
check "json four groups" test "$(field "len(d['groups'])")" = 4
check "json factors 8 4 2 1" test "$(field "' '.join(str(g['best']['factor']) for g in d['groups'])")" = "8 4 2 1"
check "json 15 instances" test "$(field "len(d['instances'])")" = 15
check "json 14 edges of 42" test "$(field "len(d['edges']), d['gray_edges']")" = "14 42"
check "json dfs chosen" test "$(field "d['order']['chosen']")" = dfs
# Alg. 3: a8 a7 b4 a6 a5 b3 c2 a4 a3 b2 a2 a1 b1 c1 d1 with a_k = id k-1, b_k = 8+k-1, ...
check "json dfs order" test "$(field "d['order']['dfs']")" = "[7, 6, 11, 5, 4, 10, 13, 3, 2, 9, 1, 0, 8, 12, 14]"
check "json 7 concats" test "$(field "sum(1 for x in d['extra_ops'] if x['kind']=='concat')")" = 7

# 3. --dump-after prints the state after each pass.
for p in splitinfo group instances order bind concat; do
  out=$("$GTSIM" --arch configs/stcp920-hw.cfg workloads/resnet50.gtg --sched graphturbo --dump-after $p 2>&1); rc=$?
  check "--dump-after $p" test $rc -eq 0 -a "$(head -1 <<<"$out" | cut -d: -f1)" = "# graphturbo after $p"
done
out=$("$GTSIM" --arch configs/stcp920-hw.cfg workloads/resnet50.gtg --dump-after order)
check "order dump: dfs line" grep -q "^order dfs peak=[0-9]* (chosen): g0.7 g0.6 g1.3 g0.5 g0.4 g1.2 g2.1 g0.3 g0.2 g1.1 g0.1 g0.0 g1.0 g2.0 g3.0$" <<<"$out"
out=$("$GTSIM" --arch configs/stcp920-hw.cfg workloads/resnet50.gtg --dump-after splitinfo --gt-lb-scope core)
# 1.5 MiB of one core: 1536 * 1024 bytes
check "--gt-lb-scope core capacity" grep -q "^# LB capacity 1572864 bytes (core)" <<<"$out"
out=$("$GTSIM" --arch configs/stcp920-hw.cfg workloads/resnet50.gtg --dump-after splitinfo)
check "default cluster capacity" grep -q "^# LB capacity 12582912 bytes (cluster)" <<<"$out"
out=$("$GTSIM" --arch configs/stcp920-hw.cfg workloads/resnet50.gtg --dump-after order --gt-order bfs)
check "--gt-order bfs" grep -q "^order bfs peak=[0-9]* (chosen): g0.0 g0.1" <<<"$out"
# --batch 32: n = 8, the same LB gives 4, 2, 1 (stages 3 and 4 merge): three groups
out=$("$GTSIM" --arch configs/stcp920-hw.cfg workloads/resnet50.gtg --dump-after group --batch 32)
check "--batch 32: three groups" grep -q "^groups 3$" <<<"$out"
# --gt-footprint live: the conv blocks of stages 2-4 stay apart (docs/graphturbo.md)
out=$("$GTSIM" --arch configs/stcp920-hw.cfg workloads/resnet50.gtg --dump-after group --gt-footprint live)
check "--gt-footprint live: seven groups" grep -q "^groups 7$" <<<"$out"
# 21 extra ops at n = 16: plain bindings a [2,4], b [4,2], c [8,1]; two parts of a concat
# must share the 8 cores, so each b_k's parts go [2,4] -> [2,2], c_k's [4,2] -> [4,1], d1's
# [8,1] -> [4,1]: one redistribute per part (8 + 4 + 2 = 14) plus 7 concats.
"$GTSIM" --arch configs/stcp920-hw.cfg workloads/resnet50.gtg --dump-schedule -o "$tmp/s.txt"
check "-o writes the text schedule" grep -q "^extra ops 21$" "$tmp/s.txt"

# 4. Regression: the text schedules of two small cases against golden files. After an
# intended change, refresh them with
#   for m in resnet50 bert-384; do build/gtsim --arch configs/stcp920-hw.cfg \
#     workloads/$m.gtg --dump-schedule > tests/cases/gt/$m.stcp920-hw.txt; done
# and review the diff (docs/graphturbo.md, "Tests").
for m in resnet50 bert-384; do
  "$GTSIM" --arch configs/stcp920-hw.cfg workloads/$m.gtg --dump-schedule >"$tmp/$m.txt" 2>&1
  if diff -u tests/cases/gt/$m.stcp920-hw.txt "$tmp/$m.txt" >"$tmp/$m.diff"; then ok "golden $m.stcp920-hw"
  else nok "golden $m.stcp920-hw" "$(head -20 "$tmp/$m.diff")"; fi
done

# 5. Errors: exit 1 and a message naming what is wrong.
err() {
  local name=$1 want=$2; shift 2
  local out; out=$("$GTSIM" "$@" 2>&1 >/dev/null); local rc=$?
  if [ $rc -eq 1 ] && grep -q -- "$want" <<<"$out"; then ok "$name"; else nok "$name" "exit $rc: $out"; fi
}
R=(--arch configs/stcp920.cfg workloads/resnet50.gtg)
err "unknown pass" "unknown pass 'fuse' (passes: splitinfo, group" "${R[@]}" --dump-after fuse
err "bad --gt-lb-scope" "--gt-lb-scope takes core or cluster, not 'chip'" "${R[@]}" --dump-schedule --gt-lb-scope chip
err "bad --gt-init" "--gt-init takes chain, layer or op" "${R[@]}" --dump-schedule --gt-init block
err "bad --gt-footprint" "--gt-footprint takes op or live, not 'max'" "${R[@]}" --dump-schedule --gt-footprint max
err "bad --gt-max-recompute" "--gt-max-recompute needs a fraction" "${R[@]}" --dump-schedule --gt-max-recompute -1
err "bad --sched" "--sched takes tvm, astitch or graphturbo" "${R[@]}" --sched xla
err "dump with another scheduler" "show the graphturbo schedule" "${R[@]}" --sched tvm --dump-schedule
err "json with --dump-after" "--json goes with --dump-schedule" "${R[@]}" --dump-after group --json
err "batch not a multiple of clusters" "workloads/resnet50.gtg: error: batch 30 is not a multiple of the 4 clusters" "${R[@]}" --dump-schedule --batch 30
err "needs --arch" "need --arch FILE" workloads/resnet50.gtg --dump-schedule
err "missing model" "nope.gtg" --arch configs/stcp920.cfg nope.gtg --dump-schedule

# A model with no ops (its input is its output): nothing to schedule, so every strategy runs 0
# kernels in 0 cycles and the schedule dump is empty (it was an internal error, exit 3).
printf 'gtg 1\nmodel empty batch=2 dtype=fp16\ninput x: fp16[N, 4]\n' >"$tmp/empty.gtg"
for s in tvm astitch graphturbo:gb graphturbo:full; do
  out=$("$GTSIM" --arch configs/tiny.cfg "$tmp/empty.gtg" --sched "$s" 2>&1); rc=$?
  if [ $rc -eq 0 ] && grep -q "^cycles  *0$" <<<"$out" && grep -q "^kernels  *0 " <<<"$out"; then
    ok "no ops, $s: 0 kernels, 0 cycles"
  else nok "no ops, $s" "exit $rc: $(head -c 300 <<<"$out")"; fi
done
out=$("$GTSIM" --arch configs/tiny.cfg "$tmp/empty.gtg" --dump-schedule 2>&1); rc=$?
[ $rc -eq 0 ] && grep -q "^groups 0" <<<"$out" && ok "no ops: empty schedule dump" \
  || nok "no ops dump" "exit $rc: $(head -c 300 <<<"$out")"
# An interaction over 200 features (19900 pairs): more dot products than a tile's step list
# holds, so features are grouped per instruction (it was an internal error, exit 3). DDR: the
# input once (4 x 200 x 32 x 2 B = 51200) and the output once (4 x (19900 + 32) x 2 B = 159456).
printf 'gtg 1\nmodel inter batch=4 dtype=fp16\ninput a: fp16[N, 200, 32]\ny = interaction(a) self_interaction=0 pad_interaction=1\n' >"$tmp/inter.gtg"
for s in tvm graphturbo; do
  out=$("$GTSIM" --arch configs/stcp920-hw.cfg "$tmp/inter.gtg" --sched "$s" 2>&1); rc=$?
  if [ $rc -eq 0 ] && grep -q "^ddr read  *51200 B" <<<"$out" && grep -q "^ddr written  *159456 B" <<<"$out"; then
    ok "interaction of 200 features, $s: runs, input and output once through DDR"
  else nok "interaction of 200 features, $s" "exit $rc: $(head -c 300 <<<"$out")"; fi
done
done_testing
