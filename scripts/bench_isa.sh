#!/usr/bin/env bash
# bench_isa.sh — program files at scale (part of `make bench`): a generated program of 1 M
# instructions over 32 cores (2 clusters x 16 cores, numeric queue names, no --arch), timed
# through the assembler, the .gtp writer/reader, prog_check (tiny.cfg with 16 cores per
# cluster, whose units mme/vec are the program's q2/q3) and the disassembler. Prints a markdown
# section. Usage: GTSIM=build/gtsim bash scripts/bench_isa.sh [NINSTS]
set -eu
GTSIM=${GTSIM:-build/gtsim}
N=${1:-1000000}
T=$(mktemp -d /tmp/gtsim-bench-isa.XXXXXX)
trap 'rm -rf "$T"' EXIT
# 32 cores x 4 queues (dma_in, dma_out, two units); per core a loop of 8 instructions:
# load, signal / wait, gemm, vec, signal / wait, store. Region and tile names are symbolic.
awk -v n="$N" 'BEGIN {
  print "gtasm 1"
  per = int(n / 32 / 8)
  for (c = 0; c < 32; c++) { printf ".region in%d\n.region out%d\n.region w%d\n", c, c, c }
  for (i = 0; i < per; i++) printf ".tile t%d\n", i
  for (c = 0; c < 32; c++) {
    cl = int(c / 16); k = c % 16
    printf ".queue c%d.k%d.dma_in\n", cl, k
    for (i = 0; i < per; i++) {
      printf "mov dst=in%d dst_tile=t%d src=in%d src_tile=t%d bytes=4096 rows=64 src_stride=128 dst_stride=64\n", c, i, c, i
      printf "signal queue=q2 flag=0\n"
    }
    printf ".queue c%d.k%d.q2\n", cl, k
    for (i = 0; i < per; i++) {
      printf "wait flag=0\n"
      printf "gemm dst=out%d dst_tile=t%d a=in%d a_tile=t%d b=w%d b_tile=t1 m=64 n=64 k=64 dtype=fp16\n", c, i, c, i, c
      printf "signal queue=q3 flag=0\n"
    }
    printf ".queue c%d.k%d.q3\n", cl, k
    for (i = 0; i < per; i++) {
      printf "wait flag=0\n"
      printf "vec op=relu dst=out%d dst_tile=t%d a=out%d a_tile=t%d elems=4096 dtype=fp16\n", c, i, c, i
    }
    printf ".queue c%d.k%d.dma_out\n", cl, k
    for (i = 0; i < per; i++) printf "mov dst=out%d dst_tile=t%d src=out%d src_tile=t%d bytes=8192\n", c, i, c, i
  }
}' >"$T/p.gtasm"
ninsts=$(grep -c -v -E '^(gtasm|\.)' "$T/p.gtasm")
row() { # label, command...
  local label=$1; shift
  /usr/bin/time -f '%e %M' -o "$T/time" "$@" >/dev/null
  read -r wall rss <"$T/time"
  awk -v l="$label" -v w="$wall" -v r="$rss" -v n="$ninsts" \
    'BEGIN { printf "| %s | %.2f | %.2f | %d |\n", l, w, (w > 0 ? n / w / 1e6 : 0), r / 1024 }'
}
echo "## Program files (.gtasm, .gtp)"
echo
echo "$ninsts instructions on 32 cores (128 queues); \`scripts/bench_isa.sh $N\`."
echo
echo "| step | wall s | M inst/s | peak RSS MiB |"
echo "|---|---|---|---|"
row "assemble .gtasm -> write .gtp" "$GTSIM" "$T/p.gtasm" --emit "$T/p.gtp"
row "read .gtp -> write .gtp" "$GTSIM" "$T/p.gtp" --emit "$T/q.gtp"
row "read .gtp -> prog_check -> write .gtp" "$GTSIM" --arch configs/tiny.cfg --set core.pe.count=16 "$T/p.gtp" --emit "$T/r.gtp"
row "read .gtp -> disassemble to .gtasm" "$GTSIM" --disasm "$T/p.gtp" -o "$T/q.gtasm"
echo
echo "Sizes: .gtasm $(($(stat -c %s "$T/p.gtasm") / 1024)) KiB, .gtp $(($(stat -c %s "$T/p.gtp") / 1024)) KiB" \
     "($(awk -v a="$(stat -c %s "$T/p.gtp")" -v n="$ninsts" 'BEGIN { printf "%.3f", a / n }') bytes per instruction)."
cmp -s "$T/p.gtp" "$T/q.gtp" || { echo "bench_isa: .gtp -> .gtp changed the file" >&2; exit 1; }
