#!/usr/bin/env bash
# test_cluster_streams.sh — scripts/cluster_streams.py on a hand-written listing whose counts are
# worked out below: the aligned upper bound, --exact (one-to-one region and tile maps, a
# constant offset shift per region pair), each kind of first mismatch once, and --segments
# (runs of at least 8 over parts of queues).
set -u
. "$(dirname "$0")/lib.sh"
S=scripts/cluster_streams.py
same() { if [ "$2" = "$3" ]; then ok "$1"; else nok "$1" "got '$3'"; fi; }
cat >"$tmp/p.gtasm" <<'G'
.queue c0.k0.dma_in
  mov dst=10 dst_tile=100 src="t:x[0,64)" src_tile="t:x[0,64)" bytes=64
  mov dst=11 dst_tile=101 src="t:x[0,64)" src_tile="t:x[0,64)" bytes=64 src_off=64
.queue c0.k0.mme
  gemm dst=10 a=11 b=12 m=4 n=4 k=4
  gemm dst=10 a=11 b=12 m=8 n=4 k=4
.queue c0.k0.dma_out
  mov dst=10 src=12 bytes=64
  mov dst=11 src=12 bytes=64
.queue c0.k0.vme
  mov dst=10 src=12 bytes=64
  mov dst=10 src=12 bytes=64 src_off=64
.queue c1.k0.dma_in
  mov dst=20 dst_tile=200 src="t:x[64,128)" src_tile="t:x[64,128)" bytes=64
  mov dst=21 dst_tile=201 src="t:x[64,128)" src_tile="t:x[64,128)" bytes=64 src_off=64
.queue c1.k0.mme
  gemm dst=20 a=21 b=22 m=4 n=4 k=4
  gemm dst=20 a=21 b=22 m=16 n=4 k=4
.queue c1.k0.dma_out
  mov dst=20 src=22 bytes=64
  mov dst=20 src=22 bytes=64
.queue c1.k0.vme
  mov dst=20 src=22 bytes=128 src_off=128
  mov dst=20 src=22 bytes=128 src_off=256
G
# 16 instructions. Aligned, regions, tiles and offsets dropped: dma_in 2, mme 1 (m differs),
# dma_out 2, vme 0 (bytes differ): 5 of 16.
out=$("$PY" $S "$tmp/p.gtasm" 2>&1)
same "aligned: 5 of 16 repeat" "16 instructions, 5 (31.2%) of them repeat cluster 0's" "$out"
# Exact: dma_in whole (regions 10,11 -> 20,21; tiles; shift 0); mme stops at m (1); dma_out at
# its second dst, 11 -> 20 after 10 -> 20 (1); vme at its first bytes (0). Prefixes 2+1+1+0.
out=$("$PY" $S --exact "$tmp/p.gtasm" 2>&1)
same "exact: dma_in whole, each mismatch kind" \
  "16 instructions; in queues that repeat cluster 0's exactly: 2 (12.5%); in exact prefixes: 4 (25.0%); queues by first mismatch: map dst 1, ok 1, value bytes 1, value m 1" "$out"
# the shift: the same vme stream with equal bytes, offsets 0,64 against 128,256 (not one shift)
sed -i 's/bytes=128/bytes=64/' "$tmp/p.gtasm"
out=$("$PY" $S --exact "$tmp/p.gtasm" 2>&1)
same "exact: a shift that changes" "shift src_off 1" "$(echo "$out" | grep -o 'shift src_off [0-9]*')"
# Segments: cluster 0's dma_in starts with two one-off allocs, then ten loads; cluster 1's has
# the ten loads alone (other regions, offsets 1024 further): one run of 10, found past the
# allocs. Its mme has ten gemms against cluster 1's five, a barrier of its own, five: no run
# reaches 8, so none counts. 12 + 10 + 10 + 11 = 43 instructions; 10 of them (23.3%) in runs.
{
  echo ".queue c0.k1.dma_in"
  echo "  alloc region=w:a level=ddr bytes=64"
  echo "  alloc region=w:b level=ddr bytes=64"
  for i in 0 1 2 3 4 5 6 7 8 9; do echo "  mov dst=10 src=30 bytes=64 src_off=$((64 * i))"; done
  echo ".queue c1.k1.dma_in"
  for i in 0 1 2 3 4 5 6 7 8 9; do echo "  mov dst=20 src=40 bytes=64 src_off=$((1024 + 64 * i))"; done
  echo ".queue c0.k1.mme"
  for i in 0 1 2 3 4 5 6 7 8 9; do echo "  gemm dst=10 a=11 b=12 m=4 n=4 k=4"; done
  echo ".queue c1.k1.mme"
  for i in 0 1 2 3 4; do echo "  gemm dst=20 a=21 b=22 m=4 n=4 k=4"; done
  echo "  barrier scope=chip count=2"
  for i in 0 1 2 3 4; do echo "  gemm dst=20 a=21 b=22 m=4 n=4 k=4"; done
} >"$tmp/s.gtasm"
out=$("$PY" $S --segments "$tmp/s.gtasm" 2>&1)
same "segments: a run past cluster 0's one-off work, none shorter than 8" \
  "43 instructions; in runs of at least 8 that repeat cluster 0's exactly: 10 (23.3%), 1 runs of 10.0 on average" "$out"
# Runs in order: cluster 0 loads eight times and then multiplies eight times, cluster 1 the
# other way round. The gemms make a run (cluster 0's from its 9th instruction on); the loads
# would only match before it, so they are cluster 1's own: 8 of 32 (25.0%).
{
  echo ".queue c0.k2.q"
  for i in 0 1 2 3 4 5 6 7; do echo "  mov dst=10 src=30 bytes=64 src_off=$((64 * i))"; done
  for i in 0 1 2 3 4 5 6 7; do echo "  gemm dst=10 a=11 b=12 m=4 n=4 k=4"; done
  echo ".queue c1.k2.q"
  for i in 0 1 2 3 4 5 6 7; do echo "  gemm dst=20 a=21 b=22 m=4 n=4 k=4"; done
  for i in 0 1 2 3 4 5 6 7; do echo "  mov dst=20 src=40 bytes=64 src_off=$((64 * i))"; done
} >"$tmp/o.gtasm"
out=$("$PY" $S --segments "$tmp/o.gtasm" 2>&1)
same "segments: runs in order along both queues" \
  "32 instructions; in runs of at least 8 that repeat cluster 0's exactly: 8 (25.0%), 1 runs of 8.0 on average" "$out"
"$PY" $S --exact >/dev/null 2>&1; rc=$?
check_eval "no listing: usage, exit 1" "[ $rc -eq 1 ]"
done_testing
