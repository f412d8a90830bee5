#!/usr/bin/env bash
# test_sim_limits.sh — inputs that would overflow the simulator's arithmetic or ask for absurd
# resources are rejected with a message: every integer operand and a gemm's m·n·k at most 2^40
# (docs/isa.md, static checks: exit 2 in a run), config ranges that keep the formulas exact and
# chips the simulator can elaborate (exit 1), a run limit of 2^43 cycles (exit 2, never a
# saturated cycle count), region ids that need not be dense (the simulator's state grows with
# the regions used, not with the largest id), and at most 8192 queues a program (the race
# checks' clocks; exit 1).
set -u
. "$(dirname "$0")/lib.sh"
TINY=(--arch configs/tiny.cfg)

# expect NAME RC PATTERN CMD...: CMD exits RC and its stderr contains PATTERN (fixed string)
expect() {
  local name=$1 want=$2 pat=$3; shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ "$rc" -eq "$want" ] && grep -qF -- "$pat" "$tmp/err"; then ok "$name"
  else nok "$name" "exit $rc (want $want), stderr: $(head -c 400 "$tmp/err")"; fi
}

# operands: the issue's reproducers (4 KiB regions, m = n = k = 2^32; INT64_MAX counts)
cat >"$tmp/big.gtasm" <<'GT'
gtasm 1
.region a
.region o
.tile a
.tile o
.queue c0.k0.mme
  alloc region=a level=lb core=0 offset=0 bytes=4096 init=a
  alloc region=o level=lb core=0 offset=4096 bytes=4096
  gemm dst=o dst_tile=o a=a a_tile=a b=a b_tile=a m=4294967296 n=4294967296 k=4294967296 dtype=fp16
.queue c0.k0.scl
  scalar ops=9223372036854775807
.queue c0.k0.vec
  vec op=relu dst=o dst_tile=o a=a a_tile=a elems=9223372036854775807 dtype=fp16
GT
for want in "m x n x k = 4294967296 x 4294967296 x 4294967296 exceeds 2^40 multiply-accumulates" \
            "(scalar ops=9223372036854775807): ops=9223372036854775807 exceeds 2^40" \
            "elems=9223372036854775807 exceeds 2^40"; do
  expect "operand bound: $want" 2 "$want" "$GTSIM" "${TINY[@]}" "$tmp/big.gtasm"
done

# config ranges: a rate or a bandwidth of 1e-300 (the cycle counts of 9.2e15 they made), a chip
# of 4096 x 65536 cores
expect "rate 1e-300 rejected" 1 "unit.mme.rate_fp16: 1e-300 is out of range (allowed: 0, or 0.0009765625 to 1024" \
  "$GTSIM" "${TINY[@]}" --set unit.mme.rate_fp16=1e-300 --describe
expect "DDR bandwidth 1e-300 rejected" 1 "ddr.bandwidth_gb_per_s: 1e-300 is out of range (allowed: 0.001 to" \
  "$GTSIM" "${TINY[@]}" --set ddr.bandwidth_gb_per_s=1e-300 --describe
expect "4096 x 65536 cores rejected" 1 "4096 clusters x 65536 cores = 268435456 cores on the chip, more than the 16384 the simulator elaborates" \
  "$GTSIM" "${TINY[@]}" --set chip.clusters=4096 --set core.pe.count=65536 --describe
"$GTSIM" --arch configs/ipu-gc2.cfg --describe >/dev/null 2>"$tmp/err"
check_rc "IPU GC2 (2432 cores) inside the limit" $? "$(head -c 300 "$tmp/err")"

# the run limit: 9 x 2^40 scalar ops at 1 op/cycle; the ninth would end at 9 x 2^40 > 2^43
{ echo "gtasm 1"; echo ".queue c0.k0.scl"; for i in 1 2 3 4 5 6 7 8 9; do echo "  scalar ops=1099511627776"; done; } >"$tmp/long.gtasm"
expect "a run past 2^43 cycles stops with a message" 2 \
  "instruction 8 (scalar ops=1099511627776), at cycle 8796093022208: it would end at cycle 9895604649984, past the 8796093022208 cycles (2^43) a run may last" \
  "$GTSIM" "${TINY[@]}" "$tmp/long.gtasm"
# and a transfer at the slowest DDR the ranges allow (0.001 GB/s at 100 GHz: 1e-5 B/cycle)
cat >"$tmp/slow.gtasm" <<'GT'
gtasm 1
.region a
.region b
.tile a
.queue c0.k0.dma_in
  alloc region=a level=ddr offset=0 bytes=536870912 init=a
  alloc region=b level=ddr offset=536870912 bytes=536870912
  mov dst=b dst_tile=a src=a src_tile=a bytes=536870912
GT
expect "a transfer past 2^43 cycles stops with a message" 2 "past the 8796093022208 cycles (2^43) a run may last" \
  "$GTSIM" "${TINY[@]}" --set ddr.bandwidth_gb_per_s=0.001 --set chip.clock_mhz=100000 "$tmp/slow.gtasm"

# region 67108863 of an 85-byte program: the simulator's state is one region, not 2^26 (it took
# 5.25 GB); under 900 MB of address space it runs (the assembler's name table, 8 B per id, is
# most of what it uses)
printf 'gtasm 1\n.queue c0.k0.scl\n  alloc region=67108863 level=lb bytes=64\n' >"$tmp/sparse.gtasm"
case $GTSIM in
  *build-asan*) ok "sparse region ids: skipped under the sanitizers (their address space)" ;;
  *) (ulimit -v 900000; "$GTSIM" "${TINY[@]}" "$tmp/sparse.gtasm" >/dev/null 2>"$tmp/err"); rc=$?
     check_rc "region 67108863 runs in under 900 MB of address space" $rc "exit $rc: $(head -c 300 "$tmp/err")" ;;
esac

# more queues than the race checks' clocks allow: 2731 IPU tiles x 3 queues = 8193
{ echo "gtasm 1"
  for k in $(seq 0 2730); do for q in dma_in dma_out core; do
    echo ".queue c0.k$k.$q"; echo "  barrier scope=chip count=8193"; done; done; } >"$tmp/wide.gtasm"
expect "8193 queues: exit 1" 1 "the program uses 8193 queues; the simulator runs at most 8192" \
  "$GTSIM" --arch configs/ipu-gc2.cfg --set core.tile.count=2731 "$tmp/wide.gtasm"
done_testing
