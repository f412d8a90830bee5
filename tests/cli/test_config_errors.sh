#!/usr/bin/env bash
# Malformed architecture configs and --set overrides through the real binary.
# tests/cases/cfg/*.cfg: each file marks every line that must be reported with
#   ; <- error: MESSAGE
# and the test asserts: exit status 1, and for each marked line N a message
# "FILE:N: error: ..." containing MESSAGE (which names the section.key or the section).
# The --set table below asserts "--set ARG: error: ..." with the key in the message.
# Run from the repo root with $GTSIM set (tests/run.sh does both).
set -u
. "$(dirname "$0")/lib.sh"
# Under `make asan` a sanitizer report also exits 1: look for it in stderr as well.
sanitizer() { grep -q -a -E 'Sanitizer|runtime error|internal error' "$1"; }

cases=(tests/cases/cfg/*.cfg)
if [ ${#cases[@]} -ge 25 ]; then ok "at least 25 malformed-config cases (${#cases[@]})"
else nok "at least 25 malformed-config cases (${#cases[@]})"; fi

for f in "${cases[@]}"; do
  name=$(basename "$f" .cfg)
  "$GTSIM" --arch "$f" --describe >"$tmp/out" 2>"$tmp/err"
  rc=$?
  why=()
  [ "$rc" -eq 1 ] || why+=("exit status $rc, expected 1")
  [ -s "$tmp/out" ] && why+=("printed a description to stdout")
  sanitizer "$tmp/err" && why+=("sanitizer or internal error report")
  marks=$(grep -a -n ' ; <- error: ' "$f" | tr -d '\000')
  [ -n "$marks" ] || why+=("no '; <- error:' marker in the case file")
  while IFS= read -r m; do
    [ -n "$m" ] || continue
    line=${m%%:*}
    msg=${m#*; <- error: }
    if ! grep -a -F -- "$f:$line: error: " "$tmp/err" | grep -q -a -F -- "$msg"; then
      why+=("expected '$f:$line: error: ...$msg'")
    fi
  done <<<"$marks"
  if [ ${#why[@]} -eq 0 ]; then ok "$name"
  else nok "$name" "${why[@]}" "stderr was:" "$(head -5 "$tmp/err")"; fi
done

# --set ARG | expected part of the message (with the key it names)
sets=(
  "chip.clock_mhz=abc|chip.clock_mhz: expected a number, got 'abc'"
  "chip.clock_mhz=-5|chip.clock_mhz: -5 is out of range"
  "chip.clusters=1e3|chip.clusters: expected an integer"
  "chip.frequency_mhz=1|chip.frequency_mhz: unknown key in [chip]"
  "memory.size=1|no section [memory]"
  "core.gpu.count=2|no section [core.gpu]"
  "clock_mhz=5|expected section.key=value"
  "chip.clock_mhz|expected section.key=value"
  "unit.mme.cube_m=0|unit.mme.cube_m: 0 is out of range"
  "unit.mme.systolic_rows=4|unit.mme.systolic_rows: does not apply to this unit"
  "unit.vec.lanes_fp16=x|unit.vec.lanes_fp16: expected an integer"
  "core.pe.units=mme, foo|core.pe.units: 'foo' is not a defined unit kind"
  "ddr.interleave_bytes=100|ddr.interleave_bytes: 100 is not a multiple of ddr.burst_bytes (64)"
  "cluster.gb_kib=|cluster.gb_kib: empty value"
  "unit.vec.lane_fp16=3|unit.vec.lane_fp16: unknown key in [unit.vec] (did you mean lanes_fp16?)"
)
for s in "${sets[@]}"; do
  arg=${s%%|*}
  msg=${s#*|}
  "$GTSIM" --arch configs/tiny.cfg --set "$arg" --describe >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ "$rc" -eq 1 ] && ! sanitizer "$tmp/err" &&
     grep -a -F -- "--set $arg: error: " "$tmp/err" | grep -q -F -- "$msg"; then
    ok "--set $arg"
  else
    nok "--set $arg" "exit $rc; expected '--set $arg: error: ...$msg'" "stderr was:" "$(head -3 "$tmp/err")"
  fi
done

# The DRAM model's keys, on a config that has it on (tiny.cfg sets ddr.model = ideal, where its
# keys are unused: set there, they are accepted, as an absent GB's keys are).
dram=(
  "ddr.model=fast|ddr.model: 'fast' is not one of ideal|dram"
  "ddr.trfc_ns=4000|ddr.trfc_ns: 4000 is not less than ddr.trefi_ns (3904)"
  "ddr.row_bytes=100|ddr.row_bytes: 100 is not a multiple of ddr.burst_bytes (64)"
  "ddr.banks=0|ddr.banks: 0 is out of range"
)
for s in "${dram[@]}"; do
  arg=${s%%|*}
  msg=${s#*|}
  "$GTSIM" --arch configs/stcp920-hw.cfg --set "$arg" --describe >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ "$rc" -eq 1 ] && grep -a -F -- "--set $arg: error: " "$tmp/err" | grep -q -F -- "$msg"; then
    ok "stcp920-hw --set $arg"
  else
    nok "stcp920-hw --set $arg" "exit $rc; expected '$msg'" "$(head -3 "$tmp/err")"
  fi
done
if "$GTSIM" --arch configs/tiny.cfg --set ddr.trfc_ns=4000 --describe >/dev/null 2>"$tmp/err"
then ok "a DRAM key with ddr.model = ideal is accepted (unused)"
else nok "a DRAM key with ddr.model = ideal is accepted (unused)" "$(head -3 "$tmp/err")"; fi

# Several errors are collected before giving up: three bad --set values, three messages.
"$GTSIM" --arch configs/tiny.cfg --set chip.clusters=0 --set ddr.channels=0 --set unit.mme.cube_k=0 \
  --describe >/dev/null 2>"$tmp/err"
rc=$?
c=$(grep -c -- ': error: ' "$tmp/err")
if [ "$rc" -eq 1 ] && [ "$c" -eq 3 ]; then ok "three errors reported together"
else nok "three errors reported together" "exit $rc, $c messages"; fi

# A missing file is a user error too.
"$GTSIM" --arch "$tmp/nonexistent.cfg" --describe >/dev/null 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 1 ] && grep -q -F "$tmp/nonexistent.cfg: error: cannot read" "$tmp/err"; then
  ok "missing config file"
else nok "missing config file" "exit $rc: $(cat "$tmp/err")"; fi

# No crash whatever the input: deterministic mutations of tiny.cfg (byte flips, cut lines,
# truncation, random bytes, a 1 MiB line). Exit status 0 or 1 only (sanitizer reports and
# crashes give other statuses).
/usr/bin/python3 - "$tmp" <<'PY'
import random, sys
out = sys.argv[1]
base = open("configs/tiny.cfg", "rb").read()
rng = random.Random(2)
for i in range(40):
    b = bytearray(base)
    kind = i % 5
    if kind == 0:
        for _ in range(rng.randint(1, 20)):
            b[rng.randrange(len(b))] = rng.randrange(256)
    elif kind == 1:
        lines = b.split(b"\n")
        del lines[rng.randrange(len(lines))]
        b = bytearray(b"\n".join(lines))
    elif kind == 2:
        b = b[: rng.randrange(len(b))]
    elif kind == 3:
        b = bytearray(rng.randrange(256) for _ in range(rng.randint(0, 4000)))
    else:
        pos = rng.randrange(len(b))
        b[pos:pos] = b"x" * (1 << 20) if i == 4 else str(10 ** rng.randint(10, 400)).encode()
    open(f"{out}/m{i:02d}.cfg", "wb").write(bytes(b))
PY
bad=()
for m in "$tmp"/m*.cfg; do
  "$GTSIM" --arch "$m" --describe >/dev/null 2>"$tmp/err"
  rc=$?
  { { [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ]; } && ! sanitizer "$tmp/err"; } || bad+=("$(basename "$m"): exit $rc $(head -c 300 "$tmp/err")")
done
if [ ${#bad[@]} -eq 0 ]; then ok "40 mutated configs: exit 0 or 1, never a crash"
else nok "40 mutated configs: exit 0 or 1, never a crash" "${bad[@]}"; fi
done_testing
