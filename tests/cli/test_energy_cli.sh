#!/usr/bin/env bash
# test_energy_cli.sh — energy (docs/energy.md) through the command line. Oracles:
#  1. tests/cases/energy/tiny.gtasm: every action count and energy on its `# expect:` lines,
#     derived by hand in its comments from configs/tiny.cfg; static = 544 mW x the run's time.
#  2. Accelergy's Eyeriss-like example (its published breakdown, below): total and every part
#     within 5 % (tests/cases/energy/eyeriss.{cfg,gtasm}).
#  3. The sanity band of every shipped config: energy per FLOP at full utilization (matrix
#     units + static power, --describe --json) between 0.2x and 1x the chip's published TDP
#     over its published peak (the figures and their sources below; docs/energy.md).
#  4. A model run: the kernels' (instances') energies add up to the run's; text, JSON, CSV and
#     --compare carry energy; a config without [energy] reports none.
#  5. Bad energy keys: exit 1 with the key named.
set -u
. "$(dirname "$0")/lib.sh"
E=tests/cases/energy

# 1. the hand-derived program
"$GTSIM" --arch configs/tiny.cfg $E/tiny.gtasm --json >"$tmp/t.json" 2>"$tmp/err"; rc=$?
check_rc "tiny.gtasm runs" $rc "$(head -3 "$tmp/err")"
while IFS='=' read -r key want; do
  got=$($PY -c "import json,sys; s={x['name']: x['value'] for x in json.load(open(sys.argv[1]))['stats']}; print(s.get(sys.argv[2], 'missing'))" "$tmp/t.json" "$key")
  check_eval "tiny.gtasm: $key = $want (by hand)" "$PY -c 'import sys; g=sys.argv[1]; sys.exit(0 if g != \"missing\" and abs(float(g) - $want) <= 1e-9 * max(1, $want) else 1)' '$got' || { echo '# got $got'; false; }"
done < <(sed -n 's/^# expect: //p' $E/tiny.gtasm)
per=$(sed -n 's/^# expect-static-pj-per-cycle: //p' $E/tiny.gtasm)
check_eval "tiny.gtasm: static = $per pJ x cycles, total = dynamic + static" "$PY - '$tmp/t.json' $per <<'PYEOF'
import json, sys
s = {x['name']: x['value'] for x in json.load(open(sys.argv[1]))['stats']}
per = float(sys.argv[2])
ok = abs(s['energy.static'] - per * s['cycles']) < 1e-6 * s['energy.static']
ok = ok and abs(s['energy.total'] - s['energy.dynamic'] - s['energy.static']) < 1e-6 * s['energy.total']
sys.exit(0 if ok else 1)
PYEOF"

# 2. Accelergy's Eyeriss-like example: 10,838,016 MACs, 59.28 uJ = 5469.65 fJ/MAC, of which
#    MAC 207.69, psum_spad 386.77, weights_spad 1006.69, ifmap_spad 112.37, shared_glb 375.27,
#    DRAM 3380.86 fJ/MAC (the example's published output; docs/energy.md).
"$GTSIM" --arch $E/eyeriss.cfg $E/eyeriss.gtasm --json >"$tmp/e.json" 2>"$tmp/err"; rc=$?
check_rc "eyeriss.gtasm runs" $rc "$(head -3 "$tmp/err")"
$PY - "$tmp/e.json" >"$tmp/e.txt" <<'PYEOF'
import json, sys
s = {x['name']: x['value'] for x in json.load(open(sys.argv[1]))['stats']}
macs = s['actions.array.macs_int8']
pub = {'mac': 207.69, 'pe.psum': 386.77, 'pe.weight': 1006.69, 'pe.input': 112.37,
       'gb': 375.27, 'ddr': 3380.86, 'total': 5469.65}
print('macs %d %d' % (macs, 10838016))
for k, want in pub.items():
    got = s['energy.' + k] / macs * 1000  # pJ -> fJ per MAC
    print('%s %.4f %.2f' % (k, got, want))
PYEOF
read -r _ got want < <(grep '^macs ' "$tmp/e.txt")
check_eval "eyeriss: $want MACs" "[ '$got' = '$want' ]"
while read -r part got want; do
  [ "$part" = macs ] && continue
  check_eval "eyeriss: $part $got fJ/MAC within 5 % of the published $want" \
    "$PY -c 'import sys; sys.exit(0 if abs($got / $want - 1) <= 0.05 else 1)'"
done <"$tmp/e.txt"

# 3. sanity band: published TDP (W) and peak (FLOP/s or OP/s) of the best dtype, chip level
#    ascend910  310 W, 256 TFLOPS fp16       Huawei (launch; HPCA'21 lists 300 W)
#    ascend310  8 W, 16 TOPS int8            HiSilicon Ascend 310 page
#    stcp920*   130 W, 256 TOPS int8         Zhan & Fan, CARRV'21
#    goya       200 W, peak of goya.cfg int8 Habana (TDP); the GEMM size is assumed (goya.cfg)
#    ipu-gc2    300 W, 249 TFLOPS fp16       C2 card, two IPUs (TDP assumed, docs/energy.md)
#    tpuv1      75 W, 92 TOPS int8           Jouppi et al., ISCA'17
band() {  # CFG DTYPE TDP_W PEAK (PEAK 0: the config's own peak for DTYPE)
  "$GTSIM" --arch "configs/$1.cfg" --describe --json >"$tmp/d.json" 2>"$tmp/err"
  local r
  r=$($PY - "$tmp/d.json" "$2" "$3" "$4" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
t, tdp, peak = sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
full = [x for x in d['energy']['full_utilization'] if x['dtype'] == t][0]
if peak == 0:
    peak = [x for x in d['derived']['peak_matrix'] if x['level'] == 'chip' and x['dtype'] == t][0]['flops']
pub = tdp / peak * 1e12
print('%.4g %.4g %.3f' % (full['pj_per_flop'], pub, full['pj_per_flop'] / pub))
PYEOF
)
  read -r model pub ratio <<<"$r"
  check_eval "band: $1 $2 $model pJ/FLOP at full utilization is 0.2-1x the published $pub (ratio $ratio)" \
    "$PY -c 'import sys; sys.exit(0 if 0.2 <= $ratio <= 1 else 1)'"
}
band ascend910 fp16 310 256e12
band ascend310 int8 8 16e12
band stcp920 int8 130 256e12
band stcp920-hw int8 130 256e12
band goya int8 200 0
band ipu-gc2 fp16 300 249e12
band tpuv1 int8 75 92e12

# 4. a model run
"$GTSIM" --arch configs/tiny.cfg tests/cases/gtg/tiny_cnn.gtg --sched tvm --json >"$tmp/r.json" 2>"$tmp/err"
"$GTSIM" --arch configs/tiny.cfg tests/cases/gtg/tiny_cnn.gtg --json >"$tmp/g.json" 2>>"$tmp/err"
check_eval "tvm: the kernels' energies add up to the run's; graphturbo: the instances'" "$PY - '$tmp/r.json' '$tmp/g.json' <<'PYEOF'
import json, sys
r, g = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
a = sum(k['energy_j'] for k in r['kernels'])
b = sum(i['energy_j'] for i in g['graphturbo']['instances'])
ok = r['energy']['total_j'] > 0 and abs(a / r['energy']['total_j'] - 1) < 1e-6
ok = ok and abs(b / g['energy']['total_j'] - 1) < 1e-6
sys.exit(0 if ok else 1)
PYEOF"
"$GTSIM" --arch configs/tiny.cfg tests/cases/gtg/tiny_cnn.gtg --sched tvm >"$tmp/r.txt" 2>"$tmp/err"
check "text report: energy line and split" grep -q '^energy  .* per sample; average power .* TFLOP/J' "$tmp/r.txt"
check "text report: kernel energy column" grep -q 'energy_J' "$tmp/r.txt"
"$GTSIM" --arch configs/tiny.cfg tests/cases/gtg/tiny_cnn.gtg --sched tvm --csv >"$tmp/r.csv" 2>"$tmp/err"
check "csv report: energy_j column, a value in the total row" grep -q '(total),.*,[0-9.e+-]*[0-9]$' "$tmp/r.csv"
"$GTSIM" --arch configs/tiny.cfg tests/cases/gtg/tiny_cnn.gtg --compare tvm,graphturbo >"$tmp/c.txt" 2>"$tmp/err"
check "compare: where the energy went, per strategy" grep -q '^energy by part, J' "$tmp/c.txt"
"$GTSIM" --arch configs/tiny.cfg tests/cases/gtg/tiny_cnn.gtg --compare tvm,graphturbo --csv >"$tmp/c.csv" 2>"$tmp/err"
check "compare csv: energy columns" grep -q 'energy_j,energy_ddr_j,power_w,flop_per_j$' "$tmp/c.csv"
sed '/^\[energy\]/,$d; /_pj\|_mw/d' configs/tiny.cfg >"$tmp/noe.cfg"
"$GTSIM" --arch "$tmp/noe.cfg" tests/cases/gtg/tiny_cnn.gtg --sched tvm >"$tmp/n.txt" 2>"$tmp/err"; rc=$?
check_eval "no [energy]: the run reports none" "[ $rc -eq 0 ] && grep -q '^energy  *none' '$tmp/n.txt'"
"$GTSIM" --arch configs/tiny.cfg --describe >"$tmp/d.txt"
check "--describe: the energy block" grep -q '^#   full utilization, fp16' "$tmp/d.txt"

# 5. bad energy keys
bad() {  # NAME MESSAGE CFG-TEXT
  printf '%s\n' "$3" >"$tmp/bad.cfg"
  "$GTSIM" --arch "$tmp/bad.cfg" --describe >/dev/null 2>"$tmp/err"; local rc=$?
  check_eval "$1: exit 1, '$2'" "[ $rc -eq 1 ] && grep -qF -- '$2' '$tmp/err'"
}
bad "an energy key without [energy]" "unit.mme.mac_pj_fp16: does not apply" \
  "$(sed '/^\[energy\]/,$d; /_pj\|_mw/d' configs/tiny.cfg | sed 's/^rate_int8 = 2/rate_int8 = 2\nmac_pj_fp16 = 1/')"
bad "mac_pj of a dtype the unit computes, missing" "unit.mme.mac_pj_int8: missing" \
  "$(sed '/^mac_pj_int8/d' configs/tiny.cfg)"
bad "mac_pj of a dtype the unit does not compute" "unit.mme.mac_pj_fp32: the unit does not compute fp32" \
  "$(sed 's/^mac_pj_int8 = 1 /mac_pj_int8 = 1\nmac_pj_fp32 = 3/' configs/tiny.cfg)"
bad "a required [energy] key, missing" "energy.node_nm: missing required key" \
  "$(sed '/^node_nm/d' configs/tiny.cfg)"
bad "a cluster link without its energy" "energy.cluster_link_pj_per_byte: missing" \
  "$(sed '/^cluster_link_pj_per_byte/d' configs/tiny.cfg)"
bad "an LB energy key, missing" "core.pe.lb_read_pj_per_byte: missing required key" \
  "$(sed '/^lb_read_pj_per_byte/d' configs/tiny.cfg)"
"$GTSIM" --arch configs/tiny.cfg --set energy.ddr_read_pj_per_byte=-1 --describe >/dev/null 2>"$tmp/err"; rc=$?
check_eval "--set energy.ddr_read_pj_per_byte=-1: exit 1, out of range" "[ $rc -eq 1 ] && grep -q 'out of range' '$tmp/err'"

done_testing
