#!/usr/bin/env bash
# test_agree.sh — the tiler's compute estimate of a kernel agrees with the simulator's time for
# it (docs/timing.md, "One timing model").
#   For single-kernel models (a conv + relu, a dense, a depthwise conv, a layernorm, a softmax)
#   on tiny.cfg and stcp920-hw.cfg under tvm, astitch and graphturbo (astitch runs the conv +
#   relu as two kernels, the conv alone on the matrix unit: the relation is the conv's):
#   * the tiler's side: `--dump-after STEP` (the strategy's last lowering step) prints the
#     kernel's cores=PRx1, tile=TRxTCxTK, its head unit and est=DDR/COMPUTE, where COMPUTE is
#     steps x one step of the tile (step_compute_cycles, sched/lower_tiling.c) on the busiest
#     core: steps = ceil(core_rows/TR) * ceil(cols/TC) * ceil(k/TK);
#   * the simulator's side: the emitted program run on its own; BUSY is the largest
#     q.*.HEAD.busy_cycles over the queues of the head unit (the busiest core's head unit).
#   Relation. Both price every instruction with the same functions (sched/unit_timing.c), and a
#   step's cost depends only on its tile's sizes, so:
#   * when the tiles divide the busiest core's rows, the columns and k evenly, every step is the
#     tile the tiler priced: BUSY == COMPUTE exactly;
#   * otherwise the tiler knowingly prices the last tiles of a dimension (smaller) as full ones,
#     and a smaller tile never costs more (the formulas grow with m, n, k and elements): with
#     FULL the steps whose tiles are whole, FULL/steps * COMPUTE <= BUSY <= COMPUTE.
#   A halved step_compute_cycles fails every case (COMPUTE < BUSY).
#   The models have no tail on the head's unit (a tail there would add its own cycles to BUSY),
#   and the head's unit dominates the kernel, so graphturbo full's estimate (the longer of the
#   head's and a tail unit's) is the head's too.
# Run from the repo root with $GTSIM set (tests/run.sh).
set -u
. "$(dirname "$0")/lib.sh"

# model CFG NAME "ROWS COLS K" LINES...: $tmp/CFG.NAME.gtg, and the kernel's geometry as the
# tiler sees it (sched/lower_ops.c, lower_fill_geom) in GEOM[CFG.NAME]: rows per sample, columns, k.
# conv: output rows (ho), output channels, input channels; dense: one row, units, inputs;
# depthwise: output rows, channels, 1; row ops: rows, 1, 1. stcp920-hw's conv and dense are
# larger, so that its 1.5 MiB LBs need several tiles a core (at least under graphturbo).
declare -A GEOM
model() {
  local cfg=$1 name=$2; GEOM[$1.$2]=$3; shift 3
  printf 'gtg 1\n' >"$tmp/$cfg.$name.gtg"
  printf '%s\n' "$@" >>"$tmp/$cfg.$name.gtg"
}
for cfg in tiny stcp920-hw; do
  model $cfg dwconv "16 64 1" "model dwconv batch=4 dtype=fp16" "input x: fp16[N, 64, 16, 16]" \
    "y = conv2d(x) units=64 groups=64 kernel=3 pad=1 bias=0"
  model $cfg layernorm "64 1 1" "model layernorm batch=4 dtype=fp16" "input x: fp16[N, 64, 256]" \
    "y = layernorm(x)"
  model $cfg softmax "64 1 1" "model softmax batch=4 dtype=fp16" "input x: fp16[N, 64, 256]" \
    "y = softmax(x)"
done
model tiny convrelu "16 64 32" "model convrelu batch=4 dtype=fp16" "input x: fp16[N, 32, 16, 16]" \
  "c = conv2d(x) units=64 kernel=3 pad=1 bias=0" "r = relu(c)"
model tiny dense "1 256 512" "model dense batch=64 dtype=fp16" "input x: fp16[N, 512]" \
  "y = dense(x) units=256 bias=1"
model stcp920-hw convrelu "14 256 256" "model convrelu batch=16 dtype=fp16" \
  "input x: fp16[N, 256, 14, 14]" "c = conv2d(x) units=256 kernel=3 pad=1 bias=0" "r = relu(c)"
model stcp920-hw dense "1 1024 2048" "model dense batch=256 dtype=fp16" "input x: fp16[N, 2048]" \
  "y = dense(x) units=1024 bias=1"

cdiv() { echo $((($1 + $2 - 1) / $2)); }
exact=0 bounded=0

# plan CFG MODEL SCHED: the dump after the strategy's last lowering step (graphturbo's staging
# may re-tile a kernel whose weights are staged in chunks); sets PER (samples per cluster),
# HEAD (the head's unit), PR (cores), TR TC TK (tile), EST (COMPUTE of est=) of kernel k0. Fails
# (non-zero, WHY set) unless the plan is one kernel (astitch's convrelu: two) on all clusters,
# all samples, in one iteration.
plan() {
  local d k iters
  local step=tiling; [ "$3" = graphturbo ] && step=staging
  if ! d=$("$GTSIM" --arch "configs/$1.cfg" "$tmp/$1.$2.gtg" --sched "$3" --dump-after $step \
             2>"$tmp/err"); then
    WHY=$(head -c 300 "$tmp/err"); return 1
  fi
  local hdr='^# batch [0-9]* (\([0-9]*\) per cluster per iteration, \([0-9]*\) iterations.*'
  read -r PER iters <<<"$(sed -n "s/$hdr/\\1 \\2/p" <<<"$d")"
  # astitch runs the conv alone and the relu as a kernel of its own on the vector unit
  # (sched/lower_astitch.c): the relation is the conv kernel's, the only one on the matrix unit
  local want=1
  [ "$3" = astitch ] && [ "$2" = convrelu ] && want=2
  k=$(grep '^k0 ' <<<"$d")
  WHY="not $want kernel(s) on all clusters, all samples, one iteration: $d"
  [ "$(grep -c '^k' <<<"$d")" = $want ] && [ "$iters" = 1 ] || return 1
  grep -q ' clusters=all ' <<<"$k" && ! grep -q ' samples=\[' <<<"$k" || return 1
  HEAD=$(sed -n 's/.* units=\([a-z0-9_]*\):.*/\1/p' <<<"$k")
  PR=$(sed -n 's/.* cores=\([0-9]*\)x1 .*/\1/p' <<<"$k")
  read -r TR TC TK <<<"$(sed -n 's/.* tile=\([0-9]*\)x\([0-9]*\)x\([0-9]*\) .*/\1 \2 \3/p' <<<"$k")"
  EST=$(sed -n 's/.* est=[0-9]*\/\([0-9]*\)\( .*\)*$/\1/p' <<<"$k")
  WHY="fields missing: $k"
  [ -n "$HEAD" ] && [ -n "$PR" ] && [ -n "$TK" ] && [ -n "$EST" ]
}

# busiest CFG MODEL SCHED UNIT: emits the program, simulates it on its own and prints the
# largest busy_cycles of UNIT's queues (q.cC.kK.UNIT).
busiest() {
  "$GTSIM" --arch "configs/$1.cfg" "$tmp/$1.$2.gtg" --sched "$3" --emit "$tmp/p.gtasm" \
    >/dev/null 2>"$tmp/err" || return 1
  "$GTSIM" --arch "configs/$1.cfg" "$tmp/p.gtasm" >"$tmp/stats" 2>"$tmp/err" || return 1
  sed -n "s/^q\.c[0-9]*\.k[0-9]*\.$4\.busy_cycles  *\([0-9]*\) .*/\1/p" "$tmp/stats" |
    sort -n | tail -1
}

# agree CFG MODEL SCHED: the relation of the header for one case.
agree() {
  local cfg=$1 m=$2 s=$3 label="$1 $2 $3" busy rps cols kk rows steps full what
  if ! plan "$cfg" "$m" "$s"; then nok "$label: plan (precondition)" "$WHY"; return; fi
  busy=$(busiest "$cfg" "$m" "$s" "$HEAD")
  if [ -z "$busy" ]; then nok "$label: emit and simulate" "$(head -c 300 "$tmp/err")"; return; fi
  read -r rps cols kk <<<"${GEOM[$cfg.$m]}"
  rows=$(cdiv $((PER * rps)) "$PR")  # the busiest core's rows (the first cores take one more)
  steps=$(($(cdiv "$rows" "$TR") * $(cdiv "$cols" "$TC") * $(cdiv "$kk" "$TK")))
  full=$(((rows / TR) * (cols / TC) * (kk / TK)))
  what="tile ${TR}x${TC}x${TK}, $steps steps on $HEAD"
  if [ $((EST % steps)) -ne 0 ]; then
    nok "$label: est $EST is $steps steps x one step ($what)" "est $EST % $steps != 0"
  elif [ "$full" -eq "$steps" ]; then
    exact=$((exact + 1))
    check_eval "$label: est == busiest $HEAD busy ($what): $EST == $busy" "[ $busy -eq $EST ]"
  else
    bounded=$((bounded + 1))
    check_eval "$label: $full/$steps est <= busy <= est ($what, uneven): $EST, $busy" \
      "[ $((full * EST)) -le $((busy * steps)) ] && [ $busy -le $EST ]"
  fi
}

for cfg in tiny stcp920-hw; do
  for m in convrelu dense dwconv layernorm softmax; do
    for s in tvm astitch graphturbo; do agree "$cfg" "$m" "$s"; done
  done
done
# Both relations are exercised (when this test was written: 27 exact cases, and 3 bounded: the
# layernorm on tiny.cfg, 64 rows a core in tiles of 31, 15 under graphturbo).
check_eval "cases: at least 20 exact ($exact)" "[ $exact -ge 20 ]"
check_eval "cases: at least 1 bounded ($bounded)" "[ $bounded -ge 1 ]"
done_testing
