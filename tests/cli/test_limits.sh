#!/usr/bin/env bash
# test_limits.sh — running out of memory is an internal error (exit 3) that says so, whether the
# C scheduler's allocator fails (die) or the simulator's (a C++ allocation, or SystemC setting
# up a thread's stack) — never SystemC's generic exit 1 — and it leaves no output file behind.
# The limit: 60 MB of address space, under what ResNet-50 at batch 256 on stcp920 needs (its
# 64 M instructions alone take about 180 MB held encoded; docs/design.md). Skipped
# under the sanitizers (ASan reserves far more address space than any limit a test can set).
set -u
. "$(dirname "$0")/lib.sh"
case $GTSIM in *build-asan*) ok "skipped under the sanitizers"; done_testing; exit ;; esac
(ulimit -v 60000; "$GTSIM" --arch configs/stcp920.cfg workloads/resnet50.gtg --sched tvm \
  --batch 256 --json -o "$tmp/r.json" >/dev/null 2>"$tmp/err")
rc=$?
if [ $rc = 3 ] && grep -q "out of memory" "$tmp/err" && [ ! -e "$tmp/r.json" ] &&
   [ -z "$(ls "$tmp" | grep -v '^err$')" ]; then
  ok "out of memory: exit 3 with a message, no output left"
else
  nok "out of memory" "exit $rc, files: $(ls "$tmp" | tr '\n' ' '), stderr: $(head -c 300 "$tmp/err")"
fi
done_testing
