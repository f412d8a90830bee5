#!/usr/bin/env bash
# Runs every test program and prints one closing line "N passed, N failed".
# Each program speaks TAP ("ok N - name" / "not ok N - name"): cmocka binaries through
# CMOCKA_MESSAGE_OUTPUT=TAP, shell tests in tests/cli/ by hand. A program that exits
# non-zero without reporting a failure (a crash) counts as one failure.
# Usage: tests/run.sh [FILTER]   (FILTER: substring of the test program's name)
set -u
BUILD=${BUILD:-build}
export GTSIM="$PWD/$BUILD/gtsim" CMOCKA_MESSAGE_OUTPUT=TAP
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:detect_stack_use_after_return=0}
filter=${1:-}
pass=0; fail=0; failed_names=()
log=$BUILD/test-logs; mkdir -p "$log"
progs=()
for s in tests/unit/test_*.c tests/sim/test_*.cpp; do
  [ -e "$s" ] || continue
  b=$(basename "$s"); progs+=("$BUILD/tests/${b%.*}")
done
for s in tests/cli/test_*.sh; do [ -e "$s" ] && progs+=("$s"); done
for p in "${progs[@]}"; do
  name=$(basename "$p"); name=${name%.sh}
  [ -n "$filter" ] && [[ "$name" != *"$filter"* ]] && continue
  if [[ "$p" == *.sh ]]; then bash "$p" >"$log/$name.out" 2>&1; else "$p" >"$log/$name.out" 2>&1; fi
  rc=$?
  ok=$(grep -c -E '^ok [0-9]+' "$log/$name.out")
  nok=$(grep -c -E '^not ok [0-9]+' "$log/$name.out")
  if [ "$rc" -ne 0 ] && [ "$nok" -eq 0 ]; then nok=1; echo "not ok - $name exited $rc" >>"$log/$name.out"; fi
  pass=$((pass + ok)); fail=$((fail + nok))
  printf '%-32s %4d passed %4d failed\n' "$name" "$ok" "$nok"
  if [ "$nok" -ne 0 ]; then
    failed_names+=("$name"); grep -E '^not ok|^# ' "$log/$name.out" | head -20 | sed 's/^/    /'
  fi
done
[ ${#failed_names[@]} -ne 0 ] && echo "failing programs: ${failed_names[*]} (logs in $log/)"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
