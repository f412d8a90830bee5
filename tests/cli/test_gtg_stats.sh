#!/usr/bin/env bash
# test_gtg_stats.sh — `gtsim --stats` on .gtg files: text and JSON output checked against
# hand-computed MACs, parameters and peak live bytes of tests/cases/gtg/tiny_cnn.gtg, --batch,
# -o, and the exit status/messages of bad input. Run from the repo root with $GTSIM set.
set -u
. "$(dirname "$0")/lib.sh"
# Runs gtsim, passing its stderr through and keeping a copy: under `make asan` a sanitizer
# report (ASan exits 1, like bad input) must fail the test, checked once at the end.
gtsim() {
  "$GTSIM" "$@" 2>"$tmp/err"; local r=$?
  cat "$tmp/err" >&2; cat "$tmp/err" >>"$tmp/stderr_all"; return $r
}
: >"$tmp/stderr_all"
M=tests/cases/gtg/tiny_cnn.gtg

# Hand calculation for tiny_cnn (see the file): x[B,3,32,32] -> conv 16 k3 p1 (no bias)
# -> [B,16,32,32]; maxpool 2/2 -> [B,16,16,16]; split 8,8; add; reshape [B,2048]; dense 10.
conv_macs() { echo $(( $1 * 16 * 32 * 32 * 3 * 3 * 3 )); }
dense_macs() { echo $(( $1 * 2048 * 10 )); }
PARAMS=$(( 16 * 3 * 9 + 2 * 16 + 2048 * 10 + 10 ))   # conv + batchnorm gamma/beta + dense
# Peak live (fp16): at batchnorm, its input and output [B,16,32,32] are live (x is dead).
peak() { echo $(( 2 * $1 * 16 * 32 * 32 * 2 )); }

out=$(gtsim --stats "$M" 2>&1); rc=$?
check "text exit 0" test $rc -eq 0
B=4 # the file's batch=
check "text conv2d row" grep -Eq "^conv2d +1 +$(conv_macs $B) " <<<"$out"
check "text dense row" grep -Eq "^dense +1 +$(dense_macs $B) " <<<"$out"
check "text total row" grep -Eq "^total +8 +$(( $(conv_macs $B) + $(dense_macs $B) )) .* $PARAMS\$" <<<"$out"
check "text peak live" grep -q "($(peak $B) bytes) at op 1 'b1'" <<<"$out"

out=$(gtsim --stats "$M" --batch 3 --json 2>&1); rc=$?
check "json exit 0" test $rc -eq 0
check "json is valid JSON" $PY -c 'import json,sys; json.loads(sys.stdin.read())' <<<"$out"
field() { $PY -c "import json,sys; d=json.loads(sys.stdin.read()); print($1)" <<<"$out"; }
check "json batch from --batch" test "$(field "d['batch']")" = 3
check "json total MACs" test "$(field "d['totals']['macs']")" = $(( $(conv_macs 3) + $(dense_macs 3) ))
check "json params" test "$(field "d['totals']['params']")" = $PARAMS
check "json param bytes (fp16)" test "$(field "d['totals']['param_bytes']")" = $(( 2 * PARAMS ))
check "json per-kind count" test "$(field "[o['count'] for o in d['ops'] if o['kind']=='split'][0]")" = 1
check "json peak live" test "$(field "d['peak_live']['bytes']")" = "$(peak 3)"
check "json peak op" test "$(field "d['peak_live']['op']")" = b1

out=$(gtsim --stats "$M" --csv 2>&1); rc=$?
check "csv exit 0" test $rc -eq 0
check "csv header" test "$(head -1 <<<"$out")" = "kind,count,macs,flops,params"
check "csv conv2d row" grep -q "^conv2d,1,$(conv_macs $B)," <<<"$out"
check "csv total row" grep -q "^total,8,$(( $(conv_macs $B) + $(dense_macs $B) )),[0-9]*,$PARAMS\$" <<<"$out"
gtsim --stats "$M" --csv --json >"$tmp/o" 2>&1; rc=$?
check "--csv with --json exits 1" test $rc -eq 1

gtsim --stats "$M" --json -o "$tmp/s.json" >"$tmp/stdout" 2>&1; rc=$?
gtsim --stats "$M" --json >"$tmp/direct.json" 2>&1
check "-o writes the report" test $rc -eq 0 -a ! -s "$tmp/stdout"
check "-o content equals stdout" cmp -s "$tmp/s.json" "$tmp/direct.json"
check "-o leaves no temporary file" test "$(ls "$tmp" | grep -c tmp)" -eq 0

gtsim --stats "$M" --batch 0 >"$tmp/o" 2>&1; rc=$?
check "--batch 0 exits 1" test $rc -eq 1
check "--batch 0 message" grep -q "batch needs an integer >= 1, not '0'" "$tmp/o"
gtsim --stats "$M" --batch 4x >"$tmp/o" 2>&1; rc=$?
check "--batch 4x exits 1" test $rc -eq 1

gtsim --stats "$tmp/missing.gtg" >"$tmp/o" 2>&1; rc=$?
check "missing file exits 1" test $rc -eq 1
check "missing file message" grep -q "missing.gtg: error: cannot read" "$tmp/o"

printf 'gtg 1\nmodel m batch=2\ninput x: fp16[N, 4]\ninput y: fp16[N, 5]\nz = add(x, y)\n' >"$tmp/bad.gtg"
gtsim --stats "$tmp/bad.gtg" >"$tmp/o" 2>&1; rc=$?
check "shape mismatch exits 1" test $rc -eq 1
check "shape mismatch names position and both shapes" \
  grep -q "bad.gtg:5:5: error: add 'z': shapes \[2, 4\] and \[2, 5\] do not broadcast" "$tmp/o"
check "shape mismatch shows a caret" grep -q '^      \^$' "$tmp/o"

printf 'gtg 1\nmodel m batch=2\ninput x: fp16[N, 4]\nz = reshape(x) shape=3,-1\n' >"$tmp/rb.gtg"
gtsim --stats "$tmp/rb.gtg" --batch 3 >"$tmp/o" 2>&1; rc=$?
# The file must be valid at its own batch (2: 8 elements do not reshape to [3, -1]), even
# though --batch 3 would make it valid: a model that hard-codes a batch is rejected at load.
check "file invalid at its own batch is rejected" test $rc -eq 1
check "... naming the reshape" grep -q "rb.gtg:4:5: error: reshape 'z': cannot reshape \[2, 4\]" "$tmp/o"
gtsim --stats "$M" --batch 1099511627777 >"$tmp/o" 2>&1; rc=$?
check "huge --batch exits 1" test $rc -eq 1

gtsim --stats "$M" "$M" >"$tmp/o" 2>&1; rc=$?
check "two models exit 1" test $rc -eq 1

for f in workloads/*.gtg tests/cases/gtg/*.gtg; do
  [ -e "$f" ] || continue
  gtsim --stats "$f" --json >"$tmp/o" 2>&1; rc=$?
  if [ $rc -eq 0 ] && $PY -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/o" 2>/dev/null; then
    ok "stats of $f"
  else
    nok "stats of $f" "$(head -3 "$tmp/o")"
  fi
done
if grep -Eq 'Sanitizer|runtime error' "$tmp/stderr_all"; then
  nok "no sanitizer reports" "$(grep -E 'Sanitizer|runtime error' "$tmp/stderr_all" | head -3)"
else
  ok "no sanitizer reports"
fi
done_testing
