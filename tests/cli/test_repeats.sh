#!/usr/bin/env bash
# test_repeats.sh — --schedule-only --repeats (prog_repeats, sched/prog_repeat.c): what clusters
# 1 and up repeat of cluster 0's, counted on the scheduled program in memory.
#   1. The count is the one scripts/cluster_streams.py --segments makes of the same program's
#      assembly (a separate implementation of the same definition, on the text): the covered
#      instructions and the runs, on a conv net under tvm and a transformer under graphturbo on
#      the four-cluster stcp920.
#   2. The line's totals are the .gtasm's: its instructions, and those of queues c1. and up.
#   3. --repeats without --schedule-only is refused (exit 1).
# tests/unit/test_prog_repeat.c has the hand-worked cases.
set -u
. "$(dirname "$0")/lib.sh"
A="--arch configs/stcp920.cfg"

for spec in "mobilenetv2 graphturbo 2" "resnet50 tvm 2"; do
  set -- $spec
  m=$1 s=$2 b=$3
  "$GTSIM" $A workloads/$m.gtg --batch $b --sched $s --schedule-only --repeats \
    --emit "$tmp/$m.gtasm" >"$tmp/$m.out" 2>"$tmp/$m.err"
  rc=$?
  check_rc "$m $s: --schedule-only --repeats exits 0" $rc "$(head -3 "$tmp/$m.err")"
  line=$(grep '^repeats: ' "$tmp/$m.out")
  py=$("$PY" scripts/cluster_streams.py --segments "$tmp/$m.gtasm")
  # the script: "N instructions; in runs of at least 8 that repeat cluster 0's exactly: C (P%), R runs ..."
  pc=$(echo "$py" | sed -n 's/.*exactly: \([0-9]*\) (.*), \([0-9]*\) runs of .*/\1 \2/p')
  gc=$(echo "$line" | sed -n 's/.* up, \([0-9]*\) (.*) in \([0-9]*\) runs of at least 8 .*/\1 \2/p')
  check_eval "$m $s: covered and runs as the script counts them ($pc)" "[ -n '$pc' ] && [ '$pc' = '$gc' ]"
  ninst=$(grep -v -e '^gtasm ' -e '^[[:space:]]*[#.]' -e '^[[:space:]]*$' "$tmp/$m.gtasm" | wc -l)
  nlater=$(awk '/^\.queue/ { later = $2 !~ /^c0\./ } /^  / && later { n++ } END { print n + 0 }' "$tmp/$m.gtasm")
  check_eval "$m $s: $nlater of $ninst instructions in clusters 1 and up, as the .gtasm holds" \
    "grep -q '^repeats: $nlater of $ninst instructions in clusters 1 and up, ' '$tmp/$m.out'"
done

"$GTSIM" $A workloads/resnet50.gtg --batch 2 --repeats >"$tmp/r.out" 2>"$tmp/r.err"
rc=$?
check_eval "--repeats without --schedule-only: exit 1, says so" \
  "[ $rc = 1 ] && grep -qF -- '--repeats is not used by a model run' '$tmp/r.err'"
done_testing
