#!/usr/bin/env bash
# test_gt_order_cli.sh — --gt-order footprint|optimal through the command line (issue 18): on
# every zoo model x shipped config the optimal order's peak is at most min(BFS, DFS) and the
# footprint order's, its bound at most its peak; the dump, the JSON and the report say which
# order ran with its peak, the greedy peaks and the gap; the result is deterministic; bad
# values are errors (exit 1). Run from the repo root with $GTSIM set.
set -u
. "$(dirname "$0")/lib.sh"

# 1. Every model x config: optimal <= min(bfs, dfs, footprint), bound <= peak, the order
#    line says optimal. (The peaks are read from the dump's own lines.)
peak_of() { sed -n "s/^order $1 peak=\([0-9]*\).*/\1/p" "$2"; }
bad=0
for cfg in configs/*.cfg; do
  for m in workloads/*.gtg; do
    name="$(basename "$cfg" .cfg) $(basename "$m" .gtg)"
    if ! "$GTSIM" --arch "$cfg" "$m" --dump-after order --gt-order optimal >"$tmp/o.txt" 2>"$tmp/err"; then
      nok "$name: --gt-order optimal" "$(head -c 300 "$tmp/err")"; bad=1; continue
    fi
    b=$(peak_of bfs "$tmp/o.txt") d=$(peak_of dfs "$tmp/o.txt") f=$(peak_of footprint "$tmp/o.txt")
    o=$(peak_of optimal "$tmp/o.txt")
    bound=$(sed -n 's/^order chosen=optimal peak=[0-9]* bound=\([0-9]*\) .*/\1/p' "$tmp/o.txt")
    if [ -z "$o" ] || [ -z "$bound" ] || [ "$o" -gt "$b" ] || [ "$o" -gt "$d" ] || [ "$o" -gt "$f" ] ||
       [ "$bound" -gt "$o" ]; then
      nok "$name: optimal <= greedy" "bfs=$b dfs=$d footprint=$f optimal=$o bound=$bound"; bad=1
    fi
  done
done
[ $bad -eq 0 ] && ok "every model x config: optimal peak <= min(bfs, dfs, footprint), bound <= peak"

# 2. The paper's machine and model: DFS (19267584 B) is optimal, the DP proves it; the
#    dump names the chosen order and the search, and two runs are identical.
R=(--arch configs/stcp920-hw.cfg workloads/resnet50.gtg)
"$GTSIM" "${R[@]}" --dump-after order --gt-order optimal >"$tmp/r.txt"
check "optimal line chosen" grep -q "^order optimal peak=19267584 (chosen): g0.7 g0.6 g1.3" "$tmp/r.txt"
check "chosen line with bound and gap" grep -q "^order chosen=optimal peak=19267584 bound=19267584 gap=0%$" "$tmp/r.txt"
check "search line" grep -q "^order search greedy=19267584 by=dp status=proven dp=proven,[0-9]* states$" "$tmp/r.txt"
"$GTSIM" "${R[@]}" --dump-after order --gt-order footprint >"$tmp/f.txt"
check "footprint chosen" grep -q "^order footprint peak=[0-9]* (chosen): g0.0 g0.1 g1.0" "$tmp/f.txt"
check "footprint: no search line" test "$(grep -c '^order search' "$tmp/f.txt")" = 0
# A DAG the DP needs ~490k states for (densenet121 on ascend310): still deterministic.
D=(--arch configs/ascend310.cfg workloads/densenet121.gtg --dump-schedule --gt-order optimal)
"$GTSIM" "${D[@]}" >"$tmp/d1.txt"; "$GTSIM" "${D[@]}" >"$tmp/d2.txt"
check "optimal dump deterministic" cmp -s "$tmp/d1.txt" "$tmp/d2.txt"

# 3. JSON: the chosen order, its peak and bound, every greedy peak, the search.
"$GTSIM" "${R[@]}" --dump-schedule --json --gt-order optimal >"$tmp/r.json"
field() { $PY -c "import json; d=json.load(open('$tmp/r.json'))['order']; print($1)"; }
check "json chosen optimal" test "$(field "d['chosen']")" = optimal
check "json peaks" test "$(field "d['peak_bytes'], d['lower_bound_bytes'], d['peak_bfs_bytes'], d['peak_dfs_bytes']")" = "19267584 19267584 32112640 19267584"
check "json search" test "$(field "d['optimal']['method'], d['optimal']['status'], d['optimal']['order'] == d['dfs']")" = "dp proven True"

# 4. The report's graphturbo line (a model run).
"$GTSIM" "${R[@]}" --gt-order optimal >"$tmp/run.txt" 2>&1
check "report: order optimal, peaks, gap" grep -qE "^graphturbo +level full, order optimal, peak 19267584 B \(bfs 32112640, dfs 19267584, footprint 19267584\), lower bound 19267584, gap 0% by dp \(proven\)," "$tmp/run.txt"

# 5. Errors: exit 1 and a message naming what is wrong.
err() {
  local name=$1 want=$2; shift 2
  local out; out=$("$GTSIM" "$@" 2>&1 >/dev/null); local rc=$?
  if [ $rc -eq 1 ] && grep -q -- "$want" <<<"$out"; then ok "$name"; else nok "$name" "exit $rc: $out"; fi
}
err "bad --gt-order" "--gt-order takes auto, bfs, dfs, footprint or optimal, not 'best'" "${R[@]}" --dump-schedule --gt-order best
for v in 0 -1 abc 4000 ""; do
  err "bad --gt-order-time-limit '$v'" "--gt-order-time-limit needs seconds in (0, 3600], not '$v'" "${R[@]}" --dump-schedule --gt-order optimal --gt-order-time-limit "$v"
done
check "--help lists the options" eval '"$GTSIM" --help | grep -q -- "--gt-order-time-limit" && "$GTSIM" --help | grep -q "footprint (heaviest ready instance first)"'
done_testing
