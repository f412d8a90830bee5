#!/usr/bin/env bash
# test_progress.sh — the progress line on stderr (docs/cli.md, "Progress and timing on stderr").
#   1. --progress with stderr not a terminal: stderr has the progress lines, the simulating
#      stage's last one at 100%; stdout (text and --json) is byte-identical to a run without it.
#   2. No option, stderr not a terminal (a pipe, a file, CI): nothing on stderr at all.
#   3. On a terminal (script(1) gives the run one; stdout still goes to a file): the line is
#      rewritten in place ("\r", erase) and erased at the end, stdout is the same report;
#      --no-progress prints nothing there.
#   4. --progress with --no-progress, or with a mode that does not simulate: exit 1.
# Run from the repo root with $GTSIM set (tests/run.sh).
set -u
. "$(dirname "$0")/lib.sh"
A="--arch configs/tiny.cfg"
M="workloads/resnet50.gtg --batch 2 --sched tvm"
P=tests/cases/asm/basic.gtasm

# 1. forced on, stderr a file: lines ending at 100%, stdout unchanged
for run in "model:$M" "model-json:$M --json" "program:$P" "program-json:$P --json"; do
  name=${run%%:*} args=${run#*:}
  "$GTSIM" $A $args >"$tmp/$name.plain" 2>"$tmp/$name.plain.err"; rc1=$?
  "$GTSIM" $A $args --progress >"$tmp/$name.on" 2>"$tmp/$name.on.err"; rc2=$?
  last=$(grep ': simulating ' "$tmp/$name.on.err" | tail -1)
  check_eval "$name --progress: exit 0 both ways" "[ $rc1 = 0 ] && [ $rc2 = 0 ]"
  check_eval "$name --progress: stderr's last simulating line is 100% ($last)" \
    "[[ \"\$last\" == *': 100%, '*' elapsed' ]]"
  check "$name --progress: stdout byte-identical to a run without it" cmp -s "$tmp/$name.plain" "$tmp/$name.on"
  check_eval "$name --progress: no terminal escapes in a file" "! grep -q \$'\\r' '$tmp/$name.on.err'"
  # 2. without the option, stderr not a terminal: nothing
  check_eval "$name without a terminal: stderr empty" "[ ! -s '$tmp/$name.plain.err' ]"
done
grep -q '^gtsim: tvm: scheduling workloads/resnet50.gtg \.\.\.$' "$tmp/model.on.err" &&
  ok "model --progress: the scheduling stage is shown" || nok "no scheduling stage" "$(head -3 "$tmp/model.on.err")"

# 3. on a terminal (script -q -c CMD LOG: the typescript in LOG, CMD's stdout redirected away)
if command -v script >/dev/null 2>&1; then
  for opt in "" --no-progress; do
    script -qec "$GTSIM $A $M $opt >$tmp/tty.out" "$tmp/tty.log" >/dev/null 2>&1
    rc=$?
    body=$(sed '1{/^Script started/d}; ${/^Script done/d}' "$tmp/tty.log" | tr -d '\n')
    check_eval "terminal ${opt:-(default)}: exit 0, same report" "[ $rc = 0 ] && cmp -s '$tmp/tty.out' '$tmp/model.plain'"
    if [ -z "$opt" ]; then
      check_eval "terminal: progress rewritten in place, ends at 100%, then erased" \
        "[[ \"\$body\" == *$'\\r\\033[K'gtsim:\ tvm:\ simulating\ *': 100%, '*$'\\r\\033[K' ]]"
    else
      check_eval "terminal --no-progress: nothing on the terminal" "[[ \"\$body\" != *gtsim:* ]]"
    fi
  done
else
  ok "terminal checks # SKIP script(1) not installed"
fi

# 4. usage errors
"$GTSIM" $A $P --progress --no-progress >/dev/null 2>"$tmp/err"; rc=$?
check_eval "--progress --no-progress: exit 1" "[ $rc = 1 ] && grep -q 'exclude each other' '$tmp/err'"
"$GTSIM" $A --describe --progress >/dev/null 2>"$tmp/err"; rc=$?
check_eval "--describe --progress: exit 1, not used" "[ $rc = 1 ] && grep -q -- '--progress is not used by --describe' '$tmp/err'"
"$GTSIM" --help | grep -q -- '--no-progress' && ok "--help lists --progress and --no-progress" || nok "--help"
done_testing
