#!/usr/bin/env bash
# test_plot_occupancy.sh — scripts/plot_occupancy: plots of tvm and graphturbo traces of a small
# model on tiny.cfg (PNG signature and size), the series it extracts from a hand-written trace
# (--dump-csv, exactly), --per-core, --buffers, --cluster, downsampling of a long series, and
# errors (missing file, not gzip, truncated, no such cluster: exit 1 naming the file, no output).
set -u
. "$(dirname "$0")/lib.sh"
PLOT=scripts/plot_occupancy
mkdir "$tmp/out"
# PNG signature, then width and height from the IHDR chunk
pngsize() { "$PY" -c 'import struct,sys; d=open(sys.argv[1],"rb").read(24); assert d[:8]==b"\x89PNG\r\n\x1a\n" and d[12:16]==b"IHDR"; print("%dx%d" % struct.unpack(">II", d[16:24]))' "$1" 2>/dev/null; }
A="--arch configs/tiny.cfg"

"$GTSIM" $A tests/cases/gtg/tiny_cnn.gtg --sched tvm --trace "$tmp/tvm.gtt.gz" >/dev/null 2>&1; rc=$?
check_eval "gtsim writes a tvm trace" "[ $rc -eq 0 ] && [ -s '$tmp/tvm.gtt.gz' ]"
"$GTSIM" $A tests/cases/gtg/tiny_cnn.gtg --sched graphturbo --trace "$tmp/gt.gtt.gz" >/dev/null 2>&1; rc=$?
check_eval "gtsim writes a graphturbo trace" "[ $rc -eq 0 ] && [ -s '$tmp/gt.gtt.gz' ]"

# two panels: 12 x (1.0 + 0.25 + 3.5 * 2) inches at 100 dpi
$PLOT -o "$tmp/out/cmp.png" "$tmp/tvm.gtt.gz" "$tmp/gt.gtt.gz" --label tvm graphturbo \
  --dump-csv "$tmp/cmp.csv" >"$tmp/p.out" 2>&1; rc=$?
check_eval "two traces with labels: exit 0, nothing printed" "[ $rc -eq 0 ] && [ ! -s '$tmp/p.out' ]"
check_eval "the PNG exists and starts with the PNG signature" "[ -n \"\$(pngsize '$tmp/out/cmp.png')\" ]"
check_eval "two panels: 1200x825 pixels" "[ \"\$(pngsize '$tmp/out/cmp.png')\" = 1200x825 ]"
check_eval "no temporary file left next to the output" "[ \"\$(ls -A '$tmp/out')\" = cmp.png ]"
check_eval "--dump-csv: both labels, each with c0.gb, c0.k*.lb and ddr" \
  "[ \"\$(tail -n +2 '$tmp/cmp.csv' | cut -d, -f1,3 | sort -u | tr '\n' ' ')\" = 'graphturbo,c0.gb graphturbo,c0.k*.lb graphturbo,ddr tvm,c0.gb tvm,c0.k*.lb tvm,ddr ' ]"
check_eval "LB sum stays within the 2 x 64 KiB of cluster 0" \
  "awk -F, '\$3==\"c0.k*.lb\" && \$4>m {m=\$4} END {exit !(m>0 && m<=131072)}' '$tmp/cmp.csv'"

$PLOT --help >"$tmp/h.out" 2>&1; rc=$?
check_eval "--help: exit 0, prints the usage" "[ $rc -eq 0 ] && grep -q '^usage: plot_occupancy -o OUT.png' '$tmp/h.out' && grep -q -- '--dump-csv' '$tmp/h.out'"

# a hand-written trace: 500 MHz, so 500000 cycles = 1 ms. Two records of one buffer at one
# cycle: the last one holds; the LB series is the sum of the two cores; unknown kinds skipped.
cat >"$tmp/hand.txt" <<'T'
gtt 1 clock_mhz 500
buffer 0 ddr 1073741824
buffer 1 c0.gb 4194304
buffer 2 c1.gb 4194304
buffer 3 c0.k0.lb 65536
buffer 4 c0.k1.lb 65536
queue 0 c0.k0.mme
o 0 0 4096
o 500000 1 1048576
o 500000 3 8192
o 500000 4 4096
o 500000 4 16384
o 500000 2 65536
a 0 750000 0 gemm 1
o 625000.5 0 8192
o 1000000 1 0
o 1250000 3 0
hint 7 some later record kind
end 1500000
T
gzip -c "$tmp/hand.txt" >"$tmp/hand.gtt.gz"
cat >"$tmp/hand.expected" <<'C'
trace,time_ms,series,bytes
hand,0,c0.gb,0
hand,1,c0.gb,1048576
hand,2,c0.gb,0
hand,3,c0.gb,0
hand,0,c0.k*.lb,0
hand,1,c0.k*.lb,24576
hand,2.5,c0.k*.lb,16384
hand,3,c0.k*.lb,16384
hand,0,ddr,4096
hand,1.250001,ddr,8192
hand,3,ddr,8192
C
$PLOT -o "$tmp/out/hand.png" "$tmp/hand.gtt.gz" --label hand --dump-csv "$tmp/hand.csv" >"$tmp/h2.out" 2>&1; rc=$?
check_eval "hand-written trace: exit 0, one panel of 1200x475 pixels" \
  "[ $rc -eq 0 ] && [ \"\$(pngsize '$tmp/out/hand.png')\" = 1200x475 ]"
check_eval "hand-written trace: --dump-csv rows exactly as expected" "cmp -s '$tmp/hand.expected' '$tmp/hand.csv'"
[ -f "$tmp/hand.csv" ] && ! cmp -s "$tmp/hand.expected" "$tmp/hand.csv" && diff "$tmp/hand.expected" "$tmp/hand.csv" | sed 's/^/# /'

$PLOT --dump-csv - "$tmp/hand.gtt.gz" --label hand --per-core >"$tmp/pc.csv" 2>&1
check_eval "--per-core adds each core's LB" \
  "grep -qx 'hand,1,c0.k0.lb,8192' '$tmp/pc.csv' && grep -qx 'hand,2.5,c0.k0.lb,0' '$tmp/pc.csv' && grep -qx 'hand,1,c0.k1.lb,16384' '$tmp/pc.csv' && [ \$(grep -c ',c0.k1.lb,' '$tmp/pc.csv') -eq 3 ]"
$PLOT --dump-csv - "$tmp/hand.gtt.gz" --buffers 'gb$' >"$tmp/b.csv" 2>&1
check_eval "--buffers 'gb\$' keeps only c0.gb, default label the file name" \
  "[ \"\$(tail -n +2 '$tmp/b.csv' | cut -d, -f1,3 | sort -u)\" = 'hand.gtt.gz,c0.gb' ]"
$PLOT --dump-csv - "$tmp/hand.gtt.gz" --cluster 1 >"$tmp/c1.csv" 2>&1
check_eval "--cluster 1: c1.gb (no LB in that cluster) and ddr" \
  "grep -qx 'hand.gtt.gz,1,c1.gb,65536' '$tmp/c1.csv' && [ \"\$(tail -n +2 '$tmp/c1.csv' | cut -d, -f3 | sort -u | tr '\n' ' ')\" = 'c1.gb ddr ' ]"

# a long series is downsampled to at most ~20k points, keeping its peak
"$PY" - "$tmp/long.gtt.gz" <<'EOF'
import gzip, sys
with gzip.open(sys.argv[1], "wt") as f:
    f.write("gtt 1 clock_mhz 1000\nbuffer 1 c0.gb 8388608\n")
    for i in range(60000):
        f.write("o %d 1 %d\n" % (i * 10 + 1, 7340032 if i == 33333 else (i % 2) * 1024 * (1 + i % 7)))
    f.write("end 600010\n")
EOF
$PLOT --dump-csv "$tmp/long.csv" "$tmp/long.gtt.gz" >/dev/null 2>&1; rc=$?
check_eval "60000 changes: exit 0, at most 20002 points, the peak and the end kept" \
  "[ $rc -eq 0 ] && awk -F, 'NR>1 {r++; if (\$4>m) m=\$4; t=\$2} END {exit !(r<=20002 && r>1000 && m==7340032 && t=="0.60001")}' '$tmp/long.csv'"

# errors: exit 1, 'plot_occupancy: FILE: error: ...', no output file
err() {  # name, expected file in the message, arguments...
  local name=$1 file=$2; shift 2
  rm -f "$tmp/out/e.png"
  $PLOT -o "$tmp/out/e.png" "$@" >"$tmp/e.out" 2>&1; local rc=$?
  check_eval "$name: exit 1 naming the file, no output" \
    "[ $rc -eq 1 ] && grep -q 'plot_occupancy: $file: error: ' '$tmp/e.out' && [ ! -e '$tmp/out/e.png' ] && [ \"\$(ls -A '$tmp/out' | grep -c '^\\.')\" -eq 0 ]"
}
err "a missing file" "$tmp/none.gtt.gz" "$tmp/none.gtt.gz"
printf 'gtt 1 clock_mhz 1000\n' >"$tmp/plain.gtt.gz"
err "a file that is not gzip" "$tmp/plain.gtt.gz" "$tmp/plain.gtt.gz"
head -c 600 "$tmp/tvm.gtt.gz" >"$tmp/cut.gtt.gz"
err "a truncated gzip stream" "$tmp/cut.gtt.gz" "$tmp/cut.gtt.gz"
echo 'hello' | gzip >"$tmp/hello.gtt.gz"
err "a gzip file that is not a trace" "$tmp/hello.gtt.gz" "$tmp/hello.gtt.gz"
err "a trace without cluster 5" "$tmp/tvm.gtt.gz" "$tmp/tvm.gtt.gz" --cluster 5
err "a good and a bad trace" "$tmp/plain.gtt.gz" "$tmp/tvm.gtt.gz" "$tmp/plain.gtt.gz"
check_eval "the missing-cluster message lists the clusters there are" \
  "$PLOT -o '$tmp/out/e.png' '$tmp/gt.gtt.gz' --cluster 5 2>&1 | grep -q 'clusters: 0, 1'"
done_testing
