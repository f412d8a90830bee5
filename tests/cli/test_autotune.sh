#!/usr/bin/env bash
# test_autotune.sh — --batch-per-cluster auto (docs/cli.md, "Batches per cluster"): the
# candidates are the divisors of the per-cluster share, with the iterations they imply (both
# computed here from the batch and the config's clusters); each candidate's cycles equal a run
# with that --batch-per-cluster; the chosen one has the best throughput (or, with --objective
# latency, the lowest latency) and is the run reported and the program --emit writes.
set -u
. "$(dirname "$0")/lib.sh"
M=(--arch tiny tests/cases/gtg/tiny_cnn.gtg)
clusters=$("$GTSIM" --arch tiny --describe --json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["derived"]["clusters"])')

tune() { # BATCH OUT [ARGS...]: auto's JSON report
  local b=$1 out=$2; shift 2
  "$GTSIM" "${M[@]}" --batch "$b" --batch-per-cluster auto --json -o "$out" "$@" 2>"$tmp/err"
}
# candidates FILE: "P:ITERATIONS:CYCLES ..." of the first run's candidates
candidates() { "$PY" -c 'import json,sys; c=json.load(open(sys.argv[1]))["context"]["batch_per_cluster_auto"][0]; print(" ".join("%d:%d:%d" % (x["batch_per_cluster"], x["iterations"], x["cycles"]) for x in c))' "$1"; }

for b in 16 12; do
  tune $b "$tmp/a$b.json" --sched tvm
  check_rc "batch $b: exit 0" $? "$(cat "$tmp/err")"
  share=$(((b + clusters - 1) / clusters))
  want=""
  for ((p = 1; p <= share; p++)); do
    [ $((share % p)) -eq 0 ] || continue
    cyc=$("$GTSIM" "${M[@]}" --batch $b --batch-per-cluster $p --sched tvm --json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["cycles"])')
    want="$want $p:$(((b + p * clusters - 1) / (p * clusters))):$cyc"
  done
  got=$(candidates "$tmp/a$b.json")
  check_eval "batch $b: the divisors of the share $share, their iterations and cycles (= runs with that P)" '[ "$got" = "${want# }" ]'
  [ "$got" = "${want# }" ] || echo "# got $got; want$want"
done

pick() { # FILE KEY (max|min): the chosen P, then the P with the best KEY among the candidates
  "$PY" - "$1" "$2" "$3" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
c = d["context"]["batch_per_cluster_auto"][0]
f = max if sys.argv[3] == "max" else min
best = f(c, key=lambda x: x[sys.argv[2]])
print(d["batch_per_cluster"], best["batch_per_cluster"], d["cycles"] == best["cycles"])
PYEOF
}
read -r chosen best same <<<"$(pick "$tmp/a16.json" throughput_samples_per_s max)"
check_eval "throughput: chose P=$chosen, the best candidate ($best), and reports its run" '[ "$chosen" = "$best" ] && [ "$same" = True ]'
tune 16 "$tmp/l16.json" --sched tvm --objective latency
read -r chosen best same <<<"$(pick "$tmp/l16.json" latency_s min)"
check_eval "--objective latency: chose P=$chosen, the lowest latency ($best)" '[ "$chosen" = "$best" ] && [ "$same" = True ]'

# --emit writes the chosen program: run alone, the same cycles as the report
tune 16 "$tmp/e.json" --sched graphturbo --emit "$tmp/chosen.gtp"
"$GTSIM" --arch tiny "$tmp/chosen.gtp" --json -o "$tmp/p.json"
prog_cycles=$("$PY" -c 'import json,sys; print([s["value"] for s in json.load(open(sys.argv[1]))["stats"] if s["name"] == "cycles"][0])' "$tmp/p.json")
run_cycles=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["cycles"])' "$tmp/e.json")
check_eval "--emit: the chosen program, the same cycles run alone ($run_cycles)" '[ "$prog_cycles" = "$run_cycles" ]'

# the text report shows the table with the chosen row marked
"$GTSIM" "${M[@]}" --batch 16 --batch-per-cluster auto --compare tvm,graphturbo >"$tmp/t.txt"
check_eval "text: a table per strategy, one row marked chosen each" \
  '[ "$(grep -c "(--batch-per-cluster auto):" "$tmp/t.txt")" = 2 ] && [ "$(grep -c "<- chosen" "$tmp/t.txt")" = 2 ]'

# errors
"$GTSIM" "${M[@]}" --objective latency >/dev/null 2>"$tmp/err"; rc=$?
check_eval "--objective without auto: exit 1" '[ $rc -eq 1 ] && grep -q "objective is not used" "$tmp/err"'
"$GTSIM" "${M[@]}" --batch-per-cluster auto --objective speed >/dev/null 2>"$tmp/err"; rc=$?
check_eval "--objective speed: exit 1" '[ $rc -eq 1 ] && grep -q "throughput or latency" "$tmp/err"'
"$GTSIM" "${M[@]}" --batch-per-cluster some >/dev/null 2>"$tmp/err"; rc=$?
check_eval "--batch-per-cluster some: exit 1 naming auto" '[ $rc -eq 1 ] && grep -q "integer >= 1 or auto" "$tmp/err"'
done_testing
