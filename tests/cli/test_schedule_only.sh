#!/usr/bin/env bash
# test_schedule_only.sh — --schedule-only (docs/cli.md, "Scheduling only"): a model scheduled
# and its program checked and written, never simulated.
#   1. Its program is the one a full run writes: the .gtp files of both byte for byte (tvm and
#      graphturbo), so the mode schedules exactly as a run does.
#   2. Its line on stdout counts what the program holds: the instructions and queues of the
#      .gtasm it writes, counted here from that file's lines.
#   3. Nothing is simulated: --progress shows the scheduling stage and no simulating one,
#      --timing a schedule figure and no simulate one.
#   4. What needs a simulation, or reads no model, is refused with exit 1 and a message that
#      names it: -o, --json, --csv, --trace, --perfetto, --compare, --checks-inline,
#      --batch-per-cluster auto, no input; a program as input (its modes refuse the option).
#   5. A model with an error fails as a run does: exit 1, file:line:col.
# Run from the repo root with $GTSIM set (tests/run.sh).
set -u
. "$(dirname "$0")/lib.sh"
A="--arch configs/tiny.cfg"
M="workloads/resnet50.gtg --batch 2"

# 1. the same program as a full run's --emit
for s in tvm graphturbo; do
  "$GTSIM" $A $M --sched $s --schedule-only --emit "$tmp/only.$s.gtp" >"$tmp/only.$s.out" 2>"$tmp/only.$s.err"
  rc=$?
  check_rc "$s: --schedule-only --emit exits 0" $rc "$(head -3 "$tmp/only.$s.err")"
  "$GTSIM" $A $M --sched $s --emit "$tmp/run.$s.gtp" >/dev/null 2>&1
  check "$s: its .gtp is a full run's, byte for byte" cmp -s "$tmp/only.$s.gtp" "$tmp/run.$s.gtp"
  check_eval "$s: the line names the file written" "grep -q 'written to $tmp/only.$s.gtp\$' '$tmp/only.$s.out'"
done

# 2. the counts of the line against the .gtasm's lines: an instruction is a line that is not
# the header, a directive (.queue, .region, ...), a comment or empty
"$GTSIM" $A $M --sched tvm --schedule-only --emit "$tmp/p.gtasm" >"$tmp/p.out" 2>&1
ninst=$(grep -v -e '^gtasm ' -e '^[[:space:]]*[#.]' -e '^[[:space:]]*$' "$tmp/p.gtasm" | wc -l)
nq=$(grep -c '^\.queue' "$tmp/p.gtasm")
check_eval "the line's instructions are the .gtasm's ($ninst)" \
  "grep -q ': $ninst instructions in ' '$tmp/p.out'"
check_eval "the line's queues are the .gtasm's ($nq)" "grep -q ' in $nq queues, ' '$tmp/p.out'"
check_eval "the line names the strategy, model, batch and config" \
  "grep -q '^workloads/resnet50.gtg: tvm schedule of resnet50 at batch 2 on tiny: ' '$tmp/p.out'"
check_eval "the line says the static checks passed" "grep -q 'the static checks passed' '$tmp/p.out'"

# 3. no simulation
"$GTSIM" $A $M --sched tvm --schedule-only --progress --timing >"$tmp/s.out" 2>"$tmp/s.err"
check_eval "--progress: the scheduling stage is shown" "grep -q ': scheduling workloads/resnet50.gtg' '$tmp/s.err'"
check_eval "--progress: no simulating stage" "! grep -q 'simulating' '$tmp/s.err'"
check_eval "--timing: a schedule figure and no simulate one" \
  "grep -q '^timing tvm: schedule [0-9.]* s\$' '$tmp/s.err' && ! grep -q 'simulate' '$tmp/s.err'"
check_eval "stdout is the one line" "[ \$(wc -l <'$tmp/s.out') = 1 ]"

# 4. refused: exit 1 and a message naming why
refuse() {  # NAME EXPECTED-TEXT ARGS...
  local name=$1 want=$2; shift 2
  "$GTSIM" "$@" >"$tmp/r.out" 2>"$tmp/r.err"
  local rc=$?
  check_eval "$name: exit 1, says '$want'" "[ $rc = 1 ] && grep -qF -- '$want' '$tmp/r.err'"
}
for opt in "-o $tmp/x.txt" --json --csv "--trace $tmp/t.gtt.gz" "--perfetto $tmp/t.json" \
           "--compare tvm,graphturbo" --checks-inline; do
  name=${opt%% *}
  refuse "$name" "$name is not used by --schedule-only" $A $M --schedule-only $opt
done
refuse "--batch-per-cluster auto" "picks its candidate by simulating" $A $M --schedule-only \
  --batch-per-cluster auto
"$GTSIM" $A $M --sched tvm --emit "$tmp/prog.gtp" >/dev/null 2>&1
refuse "a program input" "--schedule-only is not used by a program run" $A "$tmp/prog.gtp" --schedule-only
refuse "a program input with --emit" "--schedule-only is not used by --emit of a program file" $A \
  "$tmp/prog.gtp" --schedule-only --emit "$tmp/prog2.gtasm"
refuse "no input" "give exactly one model file" $A --schedule-only

# 5. a model with an error: as a run
printf 'gtg 1\nmodel m\nbatch 1\ntensor x f16 [1,8\n' >"$tmp/bad.gtg"
"$GTSIM" $A "$tmp/bad.gtg" --schedule-only >"$tmp/b.out" 2>"$tmp/b.err"
rc=$?
check_eval "a bad model: exit 1 with file:line:col" "[ $rc = 1 ] && grep -q '$tmp/bad.gtg:[0-9]*:[0-9]*: ' '$tmp/b.err'"
check_eval "a bad model: nothing on stdout" "[ ! -s '$tmp/b.out' ]"

done_testing
