#!/usr/bin/env bash
# Runs every test program, TEST_JOBS at once (default: the machine's cores), and prints one
# closing line "N passed, N failed"; exits non-zero when a check failed or nothing passed.
# Each program speaks TAP ("ok N - name" / "not ok N - name"): cmocka binaries through
# CMOCKA_MESSAGE_OUTPUT=TAP, shell tests in tests/cli/ by hand. A program that exits non-zero
# without reporting a failure (a crash) counts as one failure; "1..0 # SKIP reason" is a
# program that skipped, and the reason is shown.
# A shell test whose header has "# shards: N" runs as N programs at once, each with
# GS_SHARD=i/N in its environment (tests/cli/lib.sh: `shard K` says whether case K is this
# shard's), so one long test does not bound the suite's time.
# Programs start longest first (the durations of the last run, build/test-logs/durations);
# their summary lines print in the suite's order as they complete.
# Usage: tests/run.sh [FILTER]   (FILTER: substring of the test program's name)
set -u
BUILD=${BUILD:-build}
export GTSIM="$PWD/$BUILD/gtsim" CMOCKA_MESSAGE_OUTPUT=TAP
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:detect_stack_use_after_return=0}
filter=${1:-}
jobs=${TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
log=$BUILD/test-logs; mkdir -p "$log"

# units: "NAME PROGRAM SHARD" in the suite's order (SHARD "-" when the program is whole)
units=()
for s in tests/unit/test_*.c tests/sim/test_*.cpp; do
  [ -e "$s" ] || continue
  b=$(basename "$s"); units+=("${b%.*} $BUILD/tests/${b%.*} -")
done
for s in tests/cli/test_*.sh; do
  [ -e "$s" ] || continue
  b=$(basename "$s" .sh)
  n=$(sed -n 's/^# shards: \([0-9][0-9]*\)$/\1/p' "$s" | head -1)
  if [ -n "$n" ] && [ "$n" -gt 1 ]; then
    for ((i = 0; i < n; i++)); do units+=("$b.$((i + 1))of$n $s $i/$n"); done
  else
    units+=("$b $s -")
  fi
done
sel=()
for u in "${units[@]}"; do
  name=${u%% *}
  [ -n "$filter" ] && [[ "$name" != *"$filter"* ]] && continue
  sel+=("$u")
done

# start order: longest first by the last run's durations (unknown ones first: they may be long)
order=$(for i in "${!sel[@]}"; do
  name=${sel[$i]%% *}
  t=$(awk -v n="$name" '$1 == n {print $2}' "$log/durations" 2>/dev/null)
  echo "${t:-999999} $i"
done | sort -k1,1nr -k2,2n | awk '{print $2}')

run_unit() { # NAME PROGRAM SHARD: its output in $log/NAME.out, exit status in $log/NAME.rc
  local name=$1 p=$2 shard=$3 t0 rc
  t0=$(date +%s%N)
  if [[ "$p" == *.sh ]]; then
    if [ "$shard" = - ]; then bash "$p"; else GS_SHARD=$shard bash "$p"; fi
  else "$p"; fi >"$log/$name.out" 2>&1
  rc=$?
  echo "$name $((($(date +%s%N) - t0) / 1000000))" >"$log/$name.time"  # milliseconds
  echo "$rc" >"$log/$name.rc"
}

pass=0; fail=0; failed_names=(); next=0
report() { # prints the summaries of the units done, in the suite's order, from `next` on
  local u name ok nok rc
  while [ "$next" -lt "${#sel[@]}" ]; do
    u=${sel[$next]}; name=${u%% *}
    [ -e "$log/$name.rc" ] || return 0
    rc=$(cat "$log/$name.rc")
    ok=$(grep -c -E '^ok [0-9]+' "$log/$name.out")
    nok=$(grep -c -E '^not ok [0-9]+' "$log/$name.out")
    if [ "$rc" -ne 0 ] && [ "$nok" -eq 0 ]; then nok=1; echo "not ok - $name exited $rc" >>"$log/$name.out"; fi
    pass=$((pass + ok)); fail=$((fail + nok))
    printf '%-32s %4d passed %4d failed\n' "$name" "$ok" "$nok"
    grep -m1 '^1\.\.0 # SKIP' "$log/$name.out" | sed 's/^1\.\.0 # SKIP /    skipped: /'
    if [ "$nok" -ne 0 ]; then
      failed_names+=("$name"); grep -E '^not ok|^# ' "$log/$name.out" | head -20 | sed 's/^/    /'
    fi
    next=$((next + 1))
  done
}

for u in "${sel[@]}"; do rm -f "$log/${u%% *}.rc" "$log/${u%% *}.time"; done
running=0
for i in $order; do
  if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); report; fi
  read -r name p shard <<<"${sel[$i]}"
  run_unit "$name" "$p" "$shard" &
  running=$((running + 1))
done
wait
report
# the durations of this run, for the next one's order (kept for units not run this time)
{ cat "$log"/*.time 2>/dev/null
  awk 'NR == FNR {seen[$1] = 1; next} !($1 in seen)' <(cat "$log"/*.time 2>/dev/null) "$log/durations" 2>/dev/null
} | sort >"$log/durations.tmp" && mv "$log/durations.tmp" "$log/durations"
rm -f "$log"/*.time
[ ${#failed_names[@]} -ne 0 ] && echo "failing programs: ${failed_names[*]} (logs in $log/)"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
