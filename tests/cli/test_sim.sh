#!/usr/bin/env bash
# test_sim.sh — program runs through the command line: `gtsim --arch configs/tiny.cfg PROG`.
# Oracles: the cycle count on each tests/cases/sim/*.gtasm `# expect: cycles=N` line, derived by
# hand in that file's comments from docs/timing.md and the config's figures (tiny.cfg, or the
# real goya/ipu-gc2 configs for the heterogeneous and 2432-core cases); the messages on its
# `# expect-error:` lines (exit 2); Python's json module for --json and --perfetto; zlib (gzip)
# for --trace. Run from the repo root with $GTSIM set (tests/run.sh).
set -u
. "$(dirname "$0")/lib.sh"
ARCH=(--arch configs/tiny.cfg)
CASES=tests/cases/sim

# 1. every case: its cycles, or exit 2 with each expected message line (on tiny.cfg unless the
#    file names another config on a `# arch:` line, with the overrides of its `# set:` lines)
for f in $CASES/*.gtasm; do
  name=$(basename "$f")
  arch=$(sed -n 's/^# arch: //p' "$f")
  sets=()
  while IFS= read -r kv; do sets+=(--set "$kv"); done < <(sed -n 's/^# set: \([^ ]*\).*/\1/p' "$f")
  "$GTSIM" --arch "${arch:-configs/tiny.cfg}" "${sets[@]}" "$f" >"$tmp/out" 2>"$tmp/err"; rc=$?
  if grep -q '^# expect: cycles=' "$f"; then
    want=$(sed -n 's/^# expect: cycles=\([0-9]*\).*/\1/p' "$f")
    got=$(awk '$1 == "cycles" {print $2}' "$tmp/out")
    if [ "$rc" -eq 0 ] && [ "$got" = "$want" ]; then ok "$name: $want cycles"
    else nok "$name: $want cycles" "exit $rc, got '$got'" "$(head -3 "$tmp/err")"; fi
  elif grep -q '^# expect-error: ' "$f"; then
    bad=""
    while IFS= read -r line; do
      grep -qF -- "$line" "$tmp/err" || bad="missing: $line"
    done < <(sed -n 's/^# expect-error: //p' "$f")
    if [ "$rc" -eq 2 ] && [ -z "$bad" ] && grep -qF "$f: error: " "$tmp/err"; then ok "$name: exit 2 with the expected message"
    else nok "$name: exit 2 with the expected message" "exit $rc" "$bad" "$(head -3 "$tmp/err")"; fi
  fi  # other files (check_no_unit) are used by the tests below
done

# 2. a binary program naming a unit queue tiny.cfg does not have: the simulator's static check
"$GTSIM" $CASES/check_no_unit.gtasm --emit "$tmp/nounit.gtp" 2>"$tmp/err"  # no --arch: not checked
"$GTSIM" "${ARCH[@]}" "$tmp/nounit.gtp" >/dev/null 2>"$tmp/err"; rc=$?
if [ "$rc" -eq 2 ] && grep -qF "queue c0.k0.q7: queue index 7 does not exist" "$tmp/err"; then ok "unknown unit queue in a .gtp: exit 2"
else nok "unknown unit queue in a .gtp: exit 2" "exit $rc" "$(cat "$tmp/err")"; fi

# 3. --json parses and carries the same cycles; two runs print identical bytes
"$GTSIM" "${ARCH[@]}" $CASES/pipeline.gtasm --json >"$tmp/a.json"
"$GTSIM" "${ARCH[@]}" $CASES/pipeline.gtasm --json >"$tmp/b.json"
if $PY -c "import json,sys; d={s['name']: s for s in json.load(open(sys.argv[1]))['stats']}; sys.exit(0 if d['cycles']['value'] == 1202 and d['cycles']['unit'] == 'cycles' else 1)" "$tmp/a.json"
then ok "--json parses, cycles = 1202"; else nok "--json parses, cycles = 1202"; fi
if cmp -s "$tmp/a.json" "$tmp/b.json"; then ok "two runs print identical stats"; else nok "two runs print identical stats"; fi

"$GTSIM" "${ARCH[@]}" $CASES/pipeline.gtasm --csv >"$tmp/a.csv"
if $PY -c "import csv,sys; r={row['name']: row for row in csv.DictReader(open(sys.argv[1]))}; sys.exit(0 if float(r['cycles']['value']) == 1202 and r['q.c0.k0.mme.busy_cycles']['unit'] == 'cycles' else 1)" "$tmp/a.csv"
then ok "--csv parses, cycles = 1202"; else nok "--csv parses, cycles = 1202"; fi

# regression: every stat of pipeline.gtasm (hand-derived figures are checked above; this catches
# unintended changes in the others). Refresh after an intended change with:
#   build/gtsim --arch configs/tiny.cfg tests/cases/sim/pipeline.gtasm > tests/cases/sim/pipeline.stats.golden
"$GTSIM" "${ARCH[@]}" $CASES/pipeline.gtasm >"$tmp/p.stats"
if cmp -s "$tmp/p.stats" $CASES/pipeline.stats.golden; then ok "pipeline.gtasm stats equal the golden file"
else nok "pipeline.gtasm stats equal the golden file" "$(diff "$tmp/p.stats" $CASES/pipeline.stats.golden | head -5)"; fi

# 4. traces: .gtt.gz decompresses to the documented records; Perfetto JSON loads
"$GTSIM" "${ARCH[@]}" $CASES/pipeline.gtasm --trace "$tmp/p.gtt.gz" --perfetto "$tmp/p.json" --trace-detail instruction >/dev/null; rc=$?
if [ "$rc" -eq 0 ] && zcat "$tmp/p.gtt.gz" | head -1 | grep -q '^gtt 1 clock_mhz 1000$' &&
   [ "$(zcat "$tmp/p.gtt.gz" | grep -c '^a ')" -eq 5 ] && zcat "$tmp/p.gtt.gz" | tail -1 | grep -qx 'end 1202'
then ok "--trace: header, 5 activity records (3 movs, gemm, vec), end 1202"
else nok "--trace: header, 5 activity records, end 1202" "exit $rc"; fi
if [ "$(zcat "$tmp/p.gtt.gz" | grep -c '^o ')" -eq 7 ]; then ok "--trace: one occupancy record per alloc (7)"
else nok "--trace: one occupancy record per alloc (7)"; fi
if $PY - "$tmp/p.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
names = {e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "thread_name"}
xs = [e for e in ev if e.get("ph") == "X"]
cs = [e for e in ev if e.get("ph") == "C" and e["name"].endswith(" bytes")]  # occupancy, not bandwidth
# tracks for the 5 queues, 5 timed instructions, occupancy counters, gemm at 359..879 cycles (1 GHz: us = cycles/1000)
g = [e for e in xs if e["name"] == "gemm"][0]
ok = names == {"c0.dma0", "c0.k0.dma_in", "c0.k0.mme", "c0.k0.vec", "c0.k0.dma_out"} and len(xs) == 5 \
    and len(cs) == 7 and abs(g["ts"] - 0.359) < 1e-9 and abs(g["dur"] - 0.520) < 1e-9
sys.exit(0 if ok else 1)
PYEOF
then ok "--perfetto: a track per queue, counters, gemm at [359, 879) cycles"
else nok "--perfetto: a track per queue, counters, gemm at [359, 879) cycles"; fi

# an empty program: 0 cycles (printed as 0, not -0)
printf 'gtasm 1\n' >"$tmp/empty.gtasm"
if "$GTSIM" "${ARCH[@]}" "$tmp/empty.gtasm" | grep -qE '^cycles +0 cycles'; then ok "empty program: 0 cycles"
else nok "empty program: 0 cycles"; fi

# 5. user errors: exit 1 with the reason
"$GTSIM" $CASES/one_dma.gtasm >/dev/null 2>"$tmp/err"; rc=$?
if [ "$rc" -eq 1 ] && grep -q "needs --arch" "$tmp/err"; then ok "no --arch: exit 1"; else nok "no --arch: exit 1" "exit $rc"; fi
"$GTSIM" "${ARCH[@]}" $CASES/one_dma.gtasm --trace "$tmp/nodir/x.gtt.gz" >/dev/null 2>"$tmp/err"; rc=$?
if [ "$rc" -eq 1 ] && grep -qF "$tmp/nodir/x.gtt.gz: error: cannot write: No such file or directory" "$tmp/err"; then ok "unwritable --trace: exit 1"
else nok "unwritable --trace: exit 1" "exit $rc" "$(cat "$tmp/err")"; fi
GTSIM_CHUNK_BYTES=lots "$GTSIM" "${ARCH[@]}" $CASES/one_dma.gtasm >/dev/null 2>"$tmp/err"; rc=$?
if [ "$rc" -eq 1 ] && grep -qF "GTSIM_CHUNK_BYTES must be a positive integer, not 'lots'" "$tmp/err"; then ok "bad GTSIM_CHUNK_BYTES: exit 1"
else nok "bad GTSIM_CHUNK_BYTES: exit 1" "exit $rc"; fi
out=$(GTSIM_CHUNK_BYTES=512 "$GTSIM" "${ARCH[@]}" $CASES/contend.gtasm | awk '$1 == "cycles" || $1 == "chunk_bytes" {printf "%s=%s ", $1, $2}')
if [ "$out" = "cycles=639 chunk_bytes=512 " ]; then ok "GTSIM_CHUNK_BYTES=512: same cycles for contend.gtasm, chunk recorded"
else nok "GTSIM_CHUNK_BYTES=512: same cycles, chunk recorded" "$out"; fi
if [ ! -e "$tmp/nodir" ] && ! ls "$tmp" | grep -q '\.tmp\.'; then ok "no partial output files left"; else nok "no partial output files left"; fi

# 6. the checks on a second core or inline (--checks-inline, sim/checker.h): the same report of
# every case that passes, the same exit status and message of every case that fails, and the
# same under a single core (taskset: the checks then run inline however asked)
for f in $CASES/*.gtasm; do
  a=(); case $f in *systolic*) a=(--arch "$CASES/systolic.cfg") ;; *goya*) a=(--arch configs/goya.cfg) ;;
    *ipu*) a=(--arch configs/ipu-gc2.cfg) ;; *) a=("${ARCH[@]}") ;; esac
  "$GTSIM" "${a[@]}" "$f" >"$tmp/t.out" 2>"$tmp/t.err"; rt=$?
  "$GTSIM" "${a[@]}" "$f" --checks-inline >"$tmp/i.out" 2>"$tmp/i.err"; ri=$?
  rs=$rt; cp "$tmp/t.out" "$tmp/s.out"; cp "$tmp/t.err" "$tmp/s.err"
  if command -v taskset >/dev/null; then taskset -c 0 "$GTSIM" "${a[@]}" "$f" >"$tmp/s.out" 2>"$tmp/s.err"; rs=$?; fi
  if [ $rt = $ri ] && [ $rt = $rs ] && cmp -s "$tmp/t.out" "$tmp/i.out" && cmp -s "$tmp/t.err" "$tmp/i.err" \
     && cmp -s "$tmp/t.out" "$tmp/s.out" && cmp -s "$tmp/t.err" "$tmp/s.err"; then
    ok "$(basename "$f"): checks on a thread, inline and on one core agree (exit $rt)"
  else
    nok "$(basename "$f"): checks on a thread, inline and on one core agree" "exit $rt/$ri/$rs" "$(diff "$tmp/t.err" "$tmp/i.err" | head -5)"
  fi
done
# where the checks ran is on --timing's line (SimResult::checks): the three ways a test can ask for
want_where() {  # want_where NAME EXPECTED [PREFIX...] -- gtsim options
  local name=$1 want=$2; shift 2
  local pre=(); while [ "$1" != -- ]; do pre+=("$1"); shift; done; shift
  "${pre[@]}" "$GTSIM" "${ARCH[@]}" workloads/resnet50.gtg --sched tvm --batch 1 --timing "$@" >/dev/null 2>"$tmp/w.err"
  local got; got=$(sed -n 's/^timing tvm: .*; checks \(.*\)$/\1/p' "$tmp/w.err")
  if [ "$got" = "$want" ]; then ok "--timing: checks $want ($name)"; else nok "--timing: checks $want ($name)" "got '$got'"; fi
}
want_where "--checks-inline" "inline (as asked)" -- --checks-inline
# and the processor seconds of each thread (SimResult::model_cpu_s, checks_cpu_s): a thread's own
# clock cannot run ahead of the wall clock over the simulation that contains it
want_cpu() {  # want_cpu NAME FORM -- gtsim options; FORM: two (model and checks) or inline
  local name=$1 form=$2; shift 3
  "$GTSIM" "${ARCH[@]}" workloads/resnet50.gtg --sched tvm --batch 2 --timing "$@" >/dev/null 2>"$tmp/c.err"
  local line; line=$(grep '^timing tvm: ' "$tmp/c.err")
  local wall model checks
  wall=$(sed -n 's/.* simulate \([0-9.]*\) s,.*/\1/p' <<<"$line")
  if [ "$form" = two ]; then
    model=$(sed -n 's/.*; processor time: model \([0-9.]*\) s, checks [0-9.]* s; checks .*/\1/p' <<<"$line")
    checks=$(sed -n 's/.*; processor time: model [0-9.]* s, checks \([0-9.]*\) s; checks .*/\1/p' <<<"$line")
  else
    model=$(sed -n 's/.*; processor time: model \([0-9.]*\) s with the checks; checks .*/\1/p' <<<"$line")
    checks=0
  fi
  if [ -n "$wall" ] && [ -n "$model" ] && [ -n "$checks" ] &&
     awk -v w="$wall" -v m="$model" -v c="$checks" 'BEGIN { exit !(m > 0 && m <= w + 0.002 && c >= 0 && c <= w + 0.002) }'; then
    ok "--timing: processor time of the threads ($name)"
  else
    nok "--timing: processor time of the threads ($name)" "$line"
  fi
}
want_cpu "--checks-inline" inline -- --checks-inline
if [ "$(nproc)" -ge 2 ]; then want_cpu "two cores" two --; fi
if command -v taskset >/dev/null; then want_where "taskset one core" "inline (one core)" taskset -c 0 --; fi
if [ "$(nproc)" -ge 2 ]; then want_where "two cores" "on a second core" --; fi
# --timing on a program run: its load, then the simulation's line, with the instruction count the
# program's own assembly header gives (the report's own format: docs/cli.md)
"$GTSIM" "${ARCH[@]}" workloads/resnet50.gtg --sched tvm --batch 1 --emit "$tmp/prog.gtasm" >/dev/null 2>&1
ninst=$(sed -n 's/^# [0-9]* queues, \([0-9]*\) instructions$/\1/p' "$tmp/prog.gtasm")
"$GTSIM" "${ARCH[@]}" "$tmp/prog.gtasm" --timing >/dev/null 2>"$tmp/p.err"; rc=$?
if [ $rc = 0 ] && [ -n "$ninst" ] && grep -Eq "^timing: load [0-9.]+ s, simulate [0-9.]+ s, $ninst instructions, [0-9.]+ MiB held \([0-9.]+ B each\); processor time: model [0-9.]+ s(, checks [0-9.]+ s| with the checks); checks (on a second core|inline \(.*\))$" "$tmp/p.err"
then ok "--timing on a program run: load, simulation, $ninst instructions"
else nok "--timing on a program run" "exit $rc, ninst='$ninst'" "$(head -3 "$tmp/p.err")"; fi
"$GTSIM" "${ARCH[@]}" --describe --checks-inline >/dev/null 2>"$tmp/err"; rc=$?
if [ $rc = 1 ] && grep -qF -- "--checks-inline is not used by --describe" "$tmp/err"; then ok "--checks-inline outside a run: exit 1"
else nok "--checks-inline outside a run: exit 1" "exit $rc"; fi
done_testing
