#!/usr/bin/env bash
# bench_scale.sh — memory and speed at scale, this tree against a base release, in the same run:
# for resnet50, bert-128, vit-b16 and mobilenetv2 at their paper batches on stcp920 and
# stcp920-hw (tvm and graphturbo), the peak RSS, the scheduling time and the simulation's wall
# time of both binaries side by side, and this tree's again with its checks inline
# (--checks-inline) and under the flow transfer model (chip.transfer_model=flow) with its cycles
# against the chunk model's, and this tree's at the base's chunk size (2048 B: this tree's
# default is 4096 B, docs/timing.md, "Chunks and sharing"). Both binaries simulate the same run,
# but this tree's program has fewer instructions (waits and signals ride on the instructions they
# order), so the simulation's speed-up is the ratio of the wall times, not of instructions per
# second; the speed-up at 2048 B is the one with as many transfer chunks as the base. The timing model has changed since the base (among others, the round after 8fd02d2:
# chunks no longer hold their whole path nor reserve it at issue), so the cycles differ; a
# column gives by how much;
# then the runs the base cannot
# do at all (batch 1024 on stcp920, bert-128 on the IPU-like config) with this tree only.
# The base is built from git (BASE_REV, default the last release before the encoded program,
# 7c2bd29) in a temporary worktree; without git the base columns say so. Prints a markdown
# section (make bench collects it into bench/RESULTS.md).
# Each run of the main table (this tree, at 2048 B, its checks inline, the base) is repeated SCALE_REPEAT
# times (default 3), the three in turn, and the table gives the medians: on a shared machine one
# run of the same command varied by a third.
# Usage: scripts/bench_scale.sh   (BASE_REV=<commit>, SCALE_MODELS="m1 m2", SCALE_SCHEDS="tvm",
# SCALE_CONFIGS="stcp920-hw", SCALE_REPEAT=N, SCALE_BIG=0 to skip the batch-1024 runs)
set -u
GTSIM=${GTSIM:-build/gtsim}
BASE_REV=${BASE_REV:-7c2bd29}
models=${SCALE_MODELS:-resnet50 bert-128 vit-b16 mobilenetv2}
scheds=${SCALE_SCHEDS:-tvm graphturbo}
configs=${SCALE_CONFIGS:-stcp920 stcp920-hw}
repeat=${SCALE_REPEAT:-3}
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/base" >/dev/null 2>&1; rm -rf "$tmp"' EXIT

base=""
if git worktree add --detach "$tmp/base" "$BASE_REV" >/dev/null 2>&1 &&
    make -C "$tmp/base" -j"$(nproc)" build/gtsim >"$tmp/base.log" 2>&1; then
  base="$tmp/base/build/gtsim"
fi

# run BIN ROOT CFG MODEL SCHED [ARGS...]: "wall rss_mib schedule_s simulate_s instructions
# cycles model_cpu_s checks_cpu_s" (the processor seconds of the simulation's two threads, as
# --timing prints them; "- -" when it does not: the base, or the checks inline) or "failed";
# the config and model come from the tree ROOT the binary was built from (the formats change
# between releases: the base cannot read this tree's configs)
run() {
  local bin=$1 root=$2 cfg=$3 m=$4 s=$5
  shift 5
  if /usr/bin/time -f "%e %M" -o "$tmp/time" "$bin" --arch "$root/configs/$cfg.cfg" "$root/workloads/$m.gtg" --sched "$s" \
      --timing "$@" >"$tmp/out" 2>"$tmp/err"; then
    local wall rss cyc
    read -r wall rss <"$tmp/time"
    cyc=$(awk '/^cycles/ { print $2; exit }' "$tmp/out")
    local pt
    pt=$(sed -n "s/^timing $s: .*; processor time: model \([0-9.]*\) s, checks \([0-9.]*\) s; .*/\1 \2/p" "$tmp/err")
    [ -n "$pt" ] || pt="- -"
    sed -n "s/^timing $s: schedule \([0-9.]*\) s, simulate \([0-9.]*\) s, \([0-9]*\) instructions.*/$wall $((rss / 1024)) \1 \2 \3 $cyc $pt/p" "$tmp/err"
  else
    echo failed
  fi
}

# median of its arguments (numbers)
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# reps: run's output lines, one per repetition, into one line: the medians of the wall,
# scheduling and simulation times and of the threads' processor times ("-" when not printed),
# the largest RSS, and the instructions and cycles (the same in every run: a run whose cycles
# differ from the first's prints "cycles differ" instead), or "failed" when one failed
reps() {
  local lines=("$@") w=() r=() sc=() si=() pm=() pc=() i0="" c0="" line
  for line in "${lines[@]}"; do
    # shellcheck disable=SC2086 # the fields, split on purpose
    set -- $line
    [ "$1" = failed ] && { echo failed; return; }
    w+=("$1") r+=("$2") sc+=("$3") si+=("$4") pm+=("$7") pc+=("$8")
    [ -z "$i0" ] && i0=$5 c0=$6
    [ "$6" = "$c0" ] || { echo "failed cycles differ: $c0 $6"; return; }
  done
  local m="-" c="-"
  [ "${pm[0]}" = - ] || m=$(median "${pm[@]}") c=$(median "${pc[@]}")
  echo "$(median "${w[@]}") $(printf '%s\n' "${r[@]}" | sort -n | tail -1) $(median "${sc[@]}") $(median "${si[@]}") $i0 $c0 $m $c"
}

mips() { awk -v n="$1" -v t="$2" 'BEGIN { printf "%.2f", (t > 0 ? n / t / 1e6 : 0) }'; }

echo "## Scale: memory and speed against the base release ($BASE_REV) (scripts/bench_scale.sh)"
echo
echo "Same machine, same run, one process at a time; this tree, at 2048 B, its checks inline and the base"
echo "ran in turn $repeat times each, and every figure is the median (RSS: the largest). RSS: peak"
echo "resident set (/usr/bin/time)."
echo "Simulate s: the simulation's wall seconds (\`--timing\`); speed-up: base / now, the same"
echo "run simulated (this tree's program folds waits and signals into the instructions they order,"
echo "so it has fewer instructions for the same work). This tree moves transfers in chunks of"
echo "4096 B, the base in chunks of 2048 B: 2048 B and speed-up 2048 B are this tree at the base's"
echo "chunk (GTSIM_CHUNK_BYTES=2048), as many chunks as the base. Cycles now vs base:"
echo "what the timing model's changes since the base moved (among them, chunks served a resource at"
echo "a time from their latency's end: docs/timing.md, \"Chunks and sharing\")."
[ -n "$base" ] || echo "The base could not be built here (no git history?): its columns are empty."
echo
echo "Inline: this tree under \`--checks-inline\` (the checks on the simulating thread, not on a"
echo "second core: docs/timing.md, \"Checks on a second core\"); the same cycles."
echo "Flow: this tree under \`--set chip.transfer_model=flow\`; its cycles against the chunk model's (now)."
echo "Model s, checks s: the processor seconds of this tree's simulating thread and of its checks'"
echo "thread (\`--timing\`); the wall time follows the longer."
echo
echo "| model | config | strategy | instructions base | instructions now | RSS MiB base | RSS MiB now | schedule s base | schedule s now | simulate s base | simulate s now | speed-up | simulate s 2048 B | speed-up 2048 B | model s | checks s | simulate s inline | simulate s flow | cycles flow vs chunk | cycles now vs base |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
nrows=0 sched_ok=0 sim_ok=0 sim2_ok=0 sched_miss=() sim_miss=() sim2_miss=()
for m in $models; do
  for cfg in $configs; do
    for s in $scheds; do
      # this tree, its checks inline and the base in turn, SCALE_REPEAT times: the medians
      nl=() kl=() il=() bl=()
      for ((k = 0; k < repeat; k++)); do
        nl+=("$(run "$GTSIM" . "$cfg" "$m" "$s")")
        [ "${nl[-1]}" = failed ] && break
        kl+=("$(GTSIM_CHUNK_BYTES=2048 run "$GTSIM" . "$cfg" "$m" "$s")")
        il+=("$(run "$GTSIM" . "$cfg" "$m" "$s" --checks-inline)")
        [ -n "$base" ] && bl+=("$(run "$base" "$tmp/base" "$cfg" "$m" "$s")")
      done
      nrep=$(reps "${nl[@]}")
      read -r nw nr ns nt ni nc npm npc <<<"$nrep"
      if [ "$nw" = failed ]; then
        why=$(head -c 100 "$tmp/err" | tr '\n|' '  ')
        [ "$nrep" = failed ] || why=${nrep#failed }  # the runs' cycles differ
        echo "| $m | $cfg | $s | failed: $why | | | | | | | | | | | | | | | | |"
        continue
      fi
      read -r _ _ _ it _ ic _ <<<"$(reps "${il[@]}")"
      read -r kw _ _ kt _ _ _ <<<"$(reps "${kl[@]}")"
      [ "$kw" = failed ] && kt="failed"
      [ "$ic" = "$nc" ] || it="$it (cycles differ: $ic)"
      read -r fw fr fs ft fi_ fc _ <<<"$(run "$GTSIM" . "$cfg" "$m" "$s" --set chip.transfer_model=flow)"
      fm="failed" fd=""
      if [ "$fw" != failed ]; then
        fm=$ft
        fd=$(awk -v f="$fc" -v c="$nc" 'BEGIN { printf "%+.1f%%", (f - c) / c * 100 }')
      fi
      br="" bs="" bt="" bi="" up="" up2="" bd=""
      if [ -n "$base" ]; then
        read -r bw br bs bt bi bc _ <<<"$(reps "${bl[@]}")"
        if [ "$bw" = failed ]; then br="failed" bs="" bt="" bi=""
        else
          up=$(awk -v b="$bt" -v n="$nt" 'BEGIN { printf "%.2fx", (n > 0 ? b / n : 0) }')
          [ "$kt" = failed ] || up2=$(awk -v b="$bt" -v n="$kt" 'BEGIN { printf "%.2fx", (n > 0 ? b / n : 0) }')
          bd=$(awk -v n="$nc" -v b="$bc" 'BEGIN { printf "%+.1f%%", (n - b) / b * 100 }')
        fi
      fi
      echo "| $m | $cfg | $s | $bi | $ni | $br | $nr | $bs | $ns | $bt | $nt | $up | $kt | $up2 | $npm | $npc | $it | $fm | $fd | $bd |"
      row="$m $cfg $s"
      nrows=$((nrows + 1))
      awk -v n="$ns" 'BEGIN { exit !(n <= 0.5) }' && sched_ok=$((sched_ok + 1)) \
        || sched_miss+=("$row ${ns} s")
      if [ -n "$up" ]; then
        awk -v u="${up%x}" 'BEGIN { exit !(u >= 5) }' && sim_ok=$((sim_ok + 1)) \
          || sim_miss+=("$row $up")
      fi
      if [ -n "$up2" ]; then
        awk -v u="${up2%x}" 'BEGIN { exit !(u >= 5) }' && sim2_ok=$((sim2_ok + 1)) \
          || sim2_miss+=("$row $up2")
      fi
    done
  done
done
# The speed targets against these medians (docs/speed.md, "The speed targets"): simulation
# at least 5x the base's speed, scheduling in at most half a second.
echo
joined() { local IFS=';'; echo "$*" | sed 's/;/; /g'; }
line="Targets in this table: scheduling in 0.5 s or less on $sched_ok of $nrows rows"
[ ${#sched_miss[@]} -gt 0 ] && line+=" (not: $(joined "${sched_miss[@]}"))"
echo "$line."
if [ -n "$base" ]; then
  line="Simulation at least 5x the base's speed on $sim_ok of $nrows rows"
  [ ${#sim_miss[@]} -gt 0 ] && line+=" (not: $(joined "${sim_miss[@]}"))"
  echo "$line."
  line="At the base's chunk size (2048 B), at least 5x on $sim2_ok of $nrows rows"
  [ ${#sim2_miss[@]} -gt 0 ] && line+=" (not: $(joined "${sim2_miss[@]}"))"
  echo "$line."
fi

[ "${SCALE_BIG:-1}" = 0 ] && exit 0
echo
echo "Runs the base release cannot do (it holds 108 bytes per instruction: batch 1024 of"
echo "resnet50 would need about 28 GB), this tree only:"
echo
echo "| model | config | batch | strategy | instructions | wall s | RSS MiB | sim M inst/s |"
echo "|---|---|---|---|---|---|---|---|"
for row in "resnet50 stcp920 1024" "bert-128 stcp920 1024" "bert-128 ipu-gc2 8"; do
  read -r m cfg b extra <<<"$row"
  # shellcheck disable=SC2086 # extra: options, split on purpose
  read -r nw nr ns nt ni _ <<<"$(run "$GTSIM" . "$cfg" "$m" tvm --batch "$b" $extra)"
  if [ "$nw" = failed ]; then
    echo "| $m | $cfg | $b | tvm | failed: $(head -c 100 "$tmp/err" | tr '\n|' '  ') | | | |"
  else
    echo "| $m | $cfg | $b | tvm | $ni | $nw | $nr | $(mips "$ni" "$nt") |"
  fi
done
