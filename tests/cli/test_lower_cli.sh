#!/usr/bin/env bash
# test_lower_cli.sh — the model-run command line: report formats (text, --json, --csv, -o),
# --compare, --batch-per-cluster iterations, --emit of the scheduled program, determinism, and
# user errors (exit 1 with a message naming what is wrong). Small graphs written here, tiny.cfg.
set -u
. "$(dirname "$0")/lib.sh"
cat >"$tmp/m.gtg" <<'G'
gtg 1
model small batch=4 dtype=fp16
input x: fp16[N, 8, 16, 16]
c = conv2d(x) units=16 kernel=3 pad=1
r = relu(c)
p = global_avgpool(r)
f = reshape(p) shape=N,16
d = dense(f) units=10 bias=1
s = softmax(d)
G
A="--arch configs/tiny.cfg"
T="--sched tvm"

"$GTSIM" $A "$tmp/m.gtg" $T >"$tmp/t.txt" 2>&1; rc=$?
check_eval "text report exits 0" "[ $rc -eq 0 ]"
for key in cycles time throughput latency 'ddr read' 'ddr written' roofline 'outputs live in' utilization; do
  check_eval "text report has '$key'" "grep -q '^$key' '$tmp/t.txt'"
done
# kernels: conv+relu, global_avgpool, dense, softmax (tvm: softmax is its own kernel)
check_eval "text report lists the 4 tvm kernels" "[ \$(grep -cE '^[0-9]+ ' '$tmp/t.txt') -eq 4 ]"
check_eval "text report names the fused kernel" "grep -q 'conv2d+relu' '$tmp/t.txt'"

"$GTSIM" $A "$tmp/m.gtg" $T --json >"$tmp/j.json" 2>&1
check_eval "--json is valid JSON with 4 kernels and the roofline" \
  "$PY -c 'import json,sys; d=json.load(open(\"$tmp/j.json\")); assert len(d[\"kernels\"])==4; r=d[\"roofline\"]; assert r[\"bound_s\"]<=d[\"time_s\"]; assert d[\"outputs\"][\"ddr\"]==4' 2>/dev/null"

"$GTSIM" $A "$tmp/m.gtg" $T --csv -o "$tmp/c.csv" >"$tmp/c.out" 2>&1
check_eval "--csv -o writes the file and nothing on stdout" "[ -s '$tmp/c.csv' ] && [ ! -s '$tmp/c.out' ]"
check_eval "--csv has a header (the context's columns first), 4 kernel rows and a total row" \
  "head -1 '$tmp/c.csv' | grep -q '^gtsim_version,.*,strategy,batch_per_cluster,kernel,ops,cycles,ddr_read_bytes,ddr_write_bytes,flops,bound,output,energy_j\$' && [ \$(wc -l <'$tmp/c.csv') -eq 6 ] && tail -1 '$tmp/c.csv' | grep -q ',tvm,[0-9]*,(total),'"

"$GTSIM" $A "$tmp/m.gtg" $T --json >"$tmp/j2.json" 2>&1
check_eval "two runs give identical reports" "cmp -s '$tmp/j.json' '$tmp/j2.json'"

# graphturbo is the default strategy of model runs: its report names the level and lists instances
"$GTSIM" $A "$tmp/m.gtg" >"$tmp/g.txt" 2>&1; rc=$?
check_eval "default strategy is graphturbo (level full)" \
  "[ $rc -eq 0 ] && grep -q 'strategy graphturbo:full' '$tmp/g.txt' && grep -qE '^graphturbo +level full, order ' '$tmp/g.txt'"
check_eval "graphturbo text report has an instance table" "grep -qE '^# +instance +samples +layers' '$tmp/g.txt' && grep -qE '^0 +g0\.0 ' '$tmp/g.txt'"
"$GTSIM" $A "$tmp/m.gtg" --csv >"$tmp/g.csv" 2>&1
check_eval "graphturbo --csv: instance rows and a total row" \
  "head -1 '$tmp/g.csv' | grep -q '^gtsim_version,.*,strategy,batch_per_cluster,instance,group,samples_lo,samples_hi,layers,cores,cycles,ddr_read_bytes,ddr_write_bytes,spills,energy_j\$' && tail -1 '$tmp/g.csv' | grep -q ',graphturbo:full,[0-9]*,(total),'"
"$GTSIM" $A "$tmp/m.gtg" --json >"$tmp/g.json" 2>&1
check_eval "graphturbo --json: level, order, instances whose layers add up to the kernels" \
  "$PY -c 'import json; d=json.load(open(\"$tmp/g.json\")); g=d[\"graphturbo\"]; assert g[\"level\"]==\"full\"; assert sum(i[\"layers\"] for i in g[\"instances\"])==len(d[\"kernels\"]); assert d[\"strategy\"]==\"graphturbo:full\"' 2>/dev/null"
for bad in "--gt-level huge" "--gt-spill smallest" "--gt-stitch 1.5" "--compare tvm:lb" "--compare graphturbo:fast"; do
  "$GTSIM" $A "$tmp/m.gtg" $bad >"$tmp/bad.txt" 2>&1; rc=$?
  check_eval "'$bad' is an error (exit 1) naming the option" "[ $rc -eq 1 ] && grep -qE 'gt-level|gt-spill|gt-stitch|level' '$tmp/bad.txt'"
done
"$GTSIM" $A "$tmp/m.gtg" --compare tvm,graphturbo:lb,graphturbo >"$tmp/lv.txt" 2>&1; rc=$?
check_eval "--compare takes graphturbo:LEVEL rows" \
  "[ $rc -eq 0 ] && grep -qE '^graphturbo:lb ' '$tmp/lv.txt' && grep -qE '^graphturbo:full ' '$tmp/lv.txt'"

"$GTSIM" $A "$tmp/m.gtg" --compare tvm,astitch >"$tmp/cmp.txt" 2>&1; rc=$?
check_eval "--compare prints one row per strategy, tvm's speedup 1" \
  "[ $rc -eq 0 ] && grep -qE '^tvm .* 1\.000x' '$tmp/cmp.txt' && grep -qE '^astitch ' '$tmp/cmp.txt'"

# 8 samples, 2 clusters, 1 sample per cluster per iteration: 4 iterations
"$GTSIM" $A "$tmp/m.gtg" $T --batch 8 --batch-per-cluster 1 >"$tmp/it.txt" 2>&1
check_eval "--batch-per-cluster 1 of 8 on 2 clusters reports 4 iterations" "grep -q '^batch  *8 (1 per cluster per iteration, 4 iterations)' '$tmp/it.txt'"

"$GTSIM" $A "$tmp/m.gtg" --sched astitch --emit "$tmp/p.gtp" >/dev/null 2>&1; rc=$?
check_eval "--emit writes the scheduled program" "[ $rc -eq 0 ] && [ -s '$tmp/p.gtp' ]"
"$GTSIM" $A --disasm "$tmp/p.gtp" >"$tmp/p.gtasm" 2>&1
check_eval "the emitted program disassembles, with chip barriers" "grep -q 'barrier scope=chip' '$tmp/p.gtasm'"

"$GTSIM" $A "$tmp/m.gtg" --trace "$tmp/t.gtt.gz" --perfetto "$tmp/t.json" >/dev/null 2>&1; rc=$?
check_eval "a model run writes --trace and a --perfetto JSON" \
  "[ $rc -eq 0 ] && [ -s '$tmp/t.gtt.gz' ] && $PY -c 'import json; json.load(open(\"$tmp/t.json\"))'"

# an ONNX model runs like a .gtg one (fixtures from tests/onnx/make_fixtures.py)
if "$PY" tests/onnx/make_fixtures.py "$tmp/onnx" >/dev/null 2>"$tmp/fx.err"; then
  # an fp32 export: tiny's matrix unit has no fp32, so it runs cast to fp16 (docs/cli.md)
  "$GTSIM" $A "$tmp/onnx/resnet_block.onnx" --batch 2 --dtype fp16 --json >"$tmp/o.json" 2>"$tmp/o.err"; rc=$?
  check_eval "an ONNX model (resnet_block.onnx, --dtype fp16) schedules, simulates and reports" \
    "[ $rc -eq 0 ] && $PY -c 'import json; d=json.load(open(\"$tmp/o.json\")); assert d[\"cycles\"]>0 and d[\"kernels\"] and d[\"dtype\"]==\"fp16\"'"
else
  nok "ONNX fixtures" "$(head -c 300 "$tmp/fx.err")"
fi

# user errors
"$GTSIM" $A "$tmp/m.gtg" --sched fastest >/dev/null 2>"$tmp/e1"; rc=$?
check_eval "--sched with an unknown strategy: exit 1 naming it" "[ $rc -eq 1 ] && grep -q fastest '$tmp/e1'"
"$GTSIM" $A "$tmp/m.gtg" --compare tvm,foo >/dev/null 2>"$tmp/e2"; rc=$?
check_eval "--compare with an unknown strategy names it" "[ $rc -eq 1 ] && grep -q \"unknown strategy 'foo'\" '$tmp/e2'"
"$GTSIM" "$tmp/m.gtg" >/dev/null 2>"$tmp/e3"; rc=$?
check_eval "a model run without --arch: exit 1" "[ $rc -eq 1 ] && grep -q -- '--arch' '$tmp/e3'"
"$GTSIM" $A "$tmp/m.gtg" --batch-per-cluster 0 >/dev/null 2>"$tmp/e4"; rc=$?
check_eval "--batch-per-cluster 0: exit 1" "[ $rc -eq 1 ]"
cat >"$tmp/big.gtg" <<'G'
gtg 1
model big batch=1 dtype=fp16
input x: fp16[N, 1048576]
y = layernorm(x)
G
"$GTSIM" $A "$tmp/big.gtg" >/dev/null 2>"$tmp/e5"; rc=$?
check_eval "an op no tile of which fits LB: exit 1, file:line: error" "[ $rc -eq 1 ] && grep -q 'big.gtg:4:[0-9]*: error: .*cannot be tiled' '$tmp/e5'"
# A one-row embedding table (a learned class token, as in ViT) read for many samples: rows of
# the tile all read the table's only row (the simulator stopped these with exit 2 when the
# read pattern's stride went past the table).
cat >"$tmp/cls.gtg" <<'G'
gtg 1
model cls batch=16 dtype=fp16
input idx: int32[N, 1]
input x: fp16[N, 4, 64]
c = embedding(idx) vocab=1 dim=64
t = concat(c, x) axis=1
y = relu(t)
G
# gathers NAME WHAT HOLDS CHECK: $tmp/NAME.gtg emitted under each strategy exits 0 and CHECK (a
# command, evaluated; HOLDS says what it checks) holds of its program $tmp/NAME.gtasm
gathers() {
  for s in tvm astitch graphturbo; do
    "$GTSIM" $A "$tmp/$1.gtg" --sched $s --emit "$tmp/$1.gtasm" >/dev/null 2>"$tmp/e6"; rc=$?
    check_eval "$2 under $s: exit 0, $3" "[ $rc -eq 0 ] && $4"
  done
}
gathers cls "a one-row embedding table" "16 reads of its 128 B row" \
  "[ \$(grep -c 'src=w:c .*bytes=128 ' '$tmp/cls.gtasm') -eq 16 ]"
# A two-row table (BERT's token types) gathered for more rows than its 256 B hold past the first
# row + 1: a gather's rows then read it with a stride of 1 B, 129 rows at most, so every mov
# stays inside the table (the stride used to stay 1 B past that, and the simulator stopped the
# read past the table's end with exit 2: bert-128 int8 on tpuv1 from batch 8 on).
cat >"$tmp/tt.gtg" <<'G'
gtg 1
model token_type batch=16 dtype=fp16
input seg: int32[N, 128]
e = embedding(seg) vocab=2 dim=64
y = relu(e)
G
gathers tt "a two-row embedding table read 2048 times" "at most 129 rows a mov" \
  "! grep 'src=w:e ' '$tmp/tt.gtasm' | grep -qvE ' rows=([1-9]|[1-9][0-9]|1[01][0-9]|12[0-9]) '"
# pad (reflect, edge, constant on spatial, channel and sequence axes): the MACs derived by hand
# in the file (1104768 per sample, the pads none), and a run under every strategy on one-core-kind
# configs with the simulator's checks (exit 0)
P=tests/cases/gtg/pad.gtg
"$GTSIM" --stats "$P" --batch 3 --json >"$tmp/pad.json" 2>"$tmp/e8"
check_eval "pad.gtg: MACs 3 x 1104768, pads 0 FLOPs" "$PY -c 'import json; d=json.load(open(\"$tmp/pad.json\")); k={o[\"kind\"]: o for o in d[\"ops\"]}; assert d[\"totals\"][\"macs\"] == 3 * 1104768 and k[\"pad\"][\"count\"] == 3 and k[\"pad\"][\"flops\"] == 0'"
for cfg in tiny stcp920-hw; do
  for s in tvm astitch graphturbo; do
    "$GTSIM" --arch "$cfg" "$P" --batch 4 --sched $s -o /dev/null 2>"$tmp/e8"; rc=$?
    check_eval "pad.gtg on $cfg under $s: runs with the checks (exit 0)" "[ $rc -eq 0 ]"
  done
done

# A grouped conv (ResNeXt-50's layer-4 3x3: 1024 channels in 32 groups, 14x14 -> 7x7) needs all
# 1024 columns and their 589 KB of weights in one tile when columns cannot be cut, more than a
# 64 KiB LB holds. Column tiles of whole groups (32 columns, 32 input channels each) fit every
# shipped config; the plan's column tile must be a multiple of the group's 32 columns.
printf 'gtg 1\nmodel gc batch=2 dtype=fp16\ninput x: fp16[N, 1024, 14, 14]\n%s\n' \
  'a = conv2d(x) units=1024 kernel=3 stride=2 pad=1 groups=32' >"$tmp/gc.gtg"
for cfg in configs/*.cfg; do
  dt=fp16; case $cfg in *goya*|*tpuv1*) dt=int8 ;; esac  # no fp16 units there (docs/cli.md)
  for s in tvm graphturbo; do
    tc=$("$GTSIM" --arch "$cfg" "$tmp/gc.gtg" --dtype $dt --sched $s --dump-after tiling 2>"$tmp/e7" |
         sed -n 's/^k0 .* tile=[0-9]*x\([0-9]*\)x.*/\1/p')
    "$GTSIM" --arch "$cfg" "$tmp/gc.gtg" --dtype $dt --sched $s -o /dev/null 2>>"$tmp/e7"; rc=$?
    check_eval "grouped conv on $(basename "$cfg" .cfg) under $s: runs, column tile ${tc:-?} of whole groups" \
      "[ $rc -eq 0 ] && [ -n '$tc' ] && [ \$(( ${tc:-1} % 32 )) -eq 0 ]"
  done
done

# Groups too wide for whole-group tiles (RegNetY-128GF's first 3x3: 528 channels in 2 groups
# of 264, 112x112 -> 56x56): one group's weights are 264 x 264 x 9 x 2 B = 1.25 MB, double-
# buffered 2.5 MB, more than stcp920-hw's 1.5 MiB LB. A column tile inside one group (a divisor
# of 264, so no tile straddles two groups and each reads its own group's input channels) fits,
# and on a 64 KiB LB (stcp920, tiny: one output row's 3 input rows of 112 px x 264 channels
# are 177 KB) its k is cut too, a chunk of the group's input channels; on every shipped config
# the column tile is whole groups or divides 264.
printf 'gtg 1\nmodel rg batch=2 dtype=fp16\ninput x: fp16[N, 528, 112, 112]\n%s\n' \
  'a = conv2d(x) units=528 kernel=3 stride=2 pad=1 groups=2 bias=0' >"$tmp/rg.gtg"
for cfg in configs/*.cfg; do
  dt=fp16; case $cfg in *goya*|*tpuv1*) dt=int8 ;; esac
  for s in tvm graphturbo; do
    tc=$("$GTSIM" --arch "$cfg" "$tmp/rg.gtg" --dtype $dt --sched $s --dump-after tiling 2>"$tmp/e9" |
         sed -n 's/^k0 .* tile=[0-9]*x\([0-9]*\)x.*/\1/p')
    "$GTSIM" --arch "$cfg" "$tmp/rg.gtg" --dtype $dt --sched $s -o /dev/null 2>>"$tmp/e9"; rc=$?
    check_eval "wide groups on $(basename "$cfg" .cfg) under $s: runs, column tile ${tc:-?} of whole groups or inside one" \
      "[ $rc -eq 0 ] && [ -n '$tc' ] && { [ \$(( 264 % ${tc:-7} )) -eq 0 ] || [ \$(( ${tc:-7} % 264 )) -eq 0 ]; }"
  done
done
# A grouped conv's column tiles read their own groups' input channels, so A is loaded again
# when only the column tile changes. 8 groups of 32 channels at 8x8: input 256 x 8 x 8 x 2 B
# = 32768 B, weights 256 x 32 x 9 x 2 B = 147456 B (int8 on goya, tpuv1: half of each); each
# byte crosses from DDR at least once, so the run's DDR reads are at least their sum (a plan
# that kept group 0's channels for every column tile read 158720 B on stcp920).
printf 'gtg 1\nmodel g8 batch=1 dtype=fp16\ninput x: fp16[N, 256, 8, 8]\n%s\n' \
  'a = conv2d(x) units=256 kernel=3 pad=1 groups=8 bias=0' >"$tmp/g8.gtg"
for cfg in configs/*.cfg; do
  dt=fp16 need=180224; case $cfg in *goya*|*tpuv1*) dt=int8 need=90112 ;; esac
  for s in tvm astitch graphturbo; do
    rd=$("$GTSIM" --arch "$cfg" "$tmp/g8.gtg" --dtype $dt --sched $s 2>"$tmp/e10" |
         sed -n 's/^ddr read *\([0-9]*\) B/\1/p')
    check_eval "grouped conv on $(basename "$cfg" .cfg) under $s: DDR reads ${rd:-?} B >= $need B" \
      "[ -n '$rd' ] && [ ${rd:-0} -ge $need ]"
  done
done
done_testing
