#!/usr/bin/env bash
# test_limits.sh — running out of memory is an internal error (exit 3) that says so, whether the
# C scheduler's allocator fails (die), the simulator's (a C++ allocation inside a SystemC thread,
# which SystemC itself cannot report without allocating), or SystemC setting up a thread's stack
# — never SystemC's generic exit 1 nor std::terminate's abort (134) — and it leaves no output
# file or temporary behind. How much memory a run needs changes with the code (programs are held
# encoded: ResNet-50 on stcp920-hw once needed more than 60 MB of address space and now fits), so
# the run is tried under a falling series of limits, every 1000 KiB from 62 MB to 25 MB: each
# ends in 0 or in exit 3 with the message, and the smallest must run out. (Where memory runs out
# decides how: a thread-local destructor that could not be registered aborted at 31000 KiB, two
# threads dying at once crashed at 32000; a few limits did not show either.) Skipped under the
# sanitizers (ASan reserves far more address space than any limit a test can set).
set -u
. "$(dirname "$0")/lib.sh"
case $GTSIM in *build-asan*) ok "skipped under the sanitizers"; done_testing; exit ;; esac
ran_out=0
for kb in $(seq 62000 -1000 25000); do
  mkdir "$tmp/$kb"
  (ulimit -v $kb; "$GTSIM" --arch configs/stcp920-hw.cfg workloads/resnet50.gtg --sched tvm \
    --json -o "$tmp/$kb/r.json" --trace "$tmp/$kb/t.gtt.gz" >/dev/null 2>"$tmp/$kb.err")
  rc=$?
  left=$(ls -A "$tmp/$kb")
  if [ $rc = 0 ] && [ -e "$tmp/$kb/r.json" ]; then
    ok "$kb KiB of address space: enough (exit 0)"
  elif [ $rc = 3 ] && grep -q "out of memory" "$tmp/$kb.err" && [ -z "$left" ]; then
    ok "$kb KiB: out of memory, exit 3 with a message, no output or temporary left"
    ran_out=1
  else
    nok "$kb KiB" "exit $rc, left: $left, stderr: $(head -c 300 "$tmp/$kb.err")"
  fi
done
check_eval "the smallest limit runs out of memory" '[ $ran_out = 1 ]'
done_testing
