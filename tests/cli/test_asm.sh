#!/usr/bin/env bash
# test_asm.sh — the program-file commands of gtsim: --emit (assemble/convert), --disasm,
# --isa-doc; the round trip through the binary; exit codes and messages of bad programs.
# Oracles: byte equality of .gtp files written from the original and from its disassembly;
# docs/isa.md as checked in; the expected message written in each tests/cases/asm/err_* and
# check_* file on its `# expect:` line. Run from the repo root with $GTSIM set (tests/run.sh).
set -u
. "$(dirname "$0")/lib.sh"
ARCH=(--arch configs/tiny.cfg)
CASES=tests/cases/asm

# 1. the ISA doc is the generated one
"$GTSIM" --isa-doc >"$tmp/isa.md"
check "--isa-doc equals docs/isa.md (refresh: build/gtsim --isa-doc > docs/isa.md)" \
  cmp -s "$tmp/isa.md" docs/isa.md

# 2. assemble, disassemble, assemble again: the same bytes
"$GTSIM" "${ARCH[@]}" $CASES/basic.gtasm --emit "$tmp/a.gtp"; rc=$?
check "assemble basic.gtasm exits 0" test "$rc" -eq 0
check ".gtp starts with the magic GTP1" test "$(head -c 4 "$tmp/a.gtp")" = GTP1
"$GTSIM" "${ARCH[@]}" --disasm "$tmp/a.gtp" >"$tmp/a.gtasm"
"$GTSIM" "${ARCH[@]}" "$tmp/a.gtasm" --emit "$tmp/b.gtp"
check "gtp -> disasm -> gtp is byte-identical" cmp -s "$tmp/a.gtp" "$tmp/b.gtp"
check "disassembly uses unit and symbol names" grep -q '^.queue c0.k0.mme$' "$tmp/a.gtasm"
check "disassembly keeps symbolic operands" \
  grep -q 'gemm dst=y_lb dst_tile=t_y a=x_lb a_tile=t_x b=w_lb b_tile=t_w m=32 n=32 k=32 dtype=fp16' "$tmp/a.gtasm"

# 3. without --arch: numeric unit queues, still a round trip
"$GTSIM" --disasm "$tmp/a.gtp" >"$tmp/c.gtasm"
check "disasm without --arch names unit queues qN" grep -q '^.queue c0.k0.q2$' "$tmp/c.gtasm"
"$GTSIM" "$tmp/c.gtasm" --emit "$tmp/c.gtp"
check "numeric-queue text assembles to the same bytes" cmp -s "$tmp/a.gtp" "$tmp/c.gtp"

# 4. .gtasm -> .gtasm is the canonical text; converting it again changes nothing
"$GTSIM" "${ARCH[@]}" $CASES/basic.gtasm --emit "$tmp/d.gtasm"
"$GTSIM" "${ARCH[@]}" "$tmp/d.gtasm" --emit "$tmp/e.gtasm"
check "canonical .gtasm is a fixed point" cmp -s "$tmp/d.gtasm" "$tmp/e.gtasm"
"$GTSIM" "${ARCH[@]}" --disasm "$tmp/a.gtp" -o "$tmp/f.gtasm"
check "--disasm -o writes the same text as stdout" cmp -s "$tmp/f.gtasm" "$tmp/a.gtasm"

# 5. deterministic: the same input gives the same bytes
"$GTSIM" "${ARCH[@]}" $CASES/basic.gtasm --emit "$tmp/g.gtp"
check "emitting twice gives identical files" cmp -s "$tmp/a.gtp" "$tmp/g.gtp"

# 6. assembler and static-check errors: exit 1 with the message on the # expect: line, on
#    tiny.cfg or the config on the file's # arch: line
for f in $CASES/err_*.gtasm $CASES/check_*.gtasm; do
  b=$(basename "$f")
  want=$(sed -n 's/^# expect: //p' "$f" | head -1)
  arch=$(sed -n 's/^# arch: //p' "$f" | head -1)
  "$GTSIM" --arch "${arch:-configs/tiny.cfg}" "$f" --emit "$tmp/out.gtp" >"$tmp/out" 2>"$tmp/err"; rc=$?
  got=$(sed "s|$CASES/||" "$tmp/err")
  if [ "$rc" -eq 1 ] && [[ "$got" == *"$want"* ]] && [ ! -e "$tmp/out.gtp" ]; then ok "$b: exit 1, message"
  else nok "$b: exit 1, message" "want: $want" "got (rc $rc): $got"; fi
done
"$GTSIM" "${ARCH[@]}" $CASES/err_mnemonic.gtasm --emit "$tmp/out.gtp" 2>"$tmp/err"
check "assembler error shows a caret under column 3" test "$(sed -n 3p "$tmp/err")" = "    ^"
check "assembler error quotes the line" test "$(sed -n 2p "$tmp/err")" = "    gem m=16 n=16 k=16 dtype=fp16"

# heterogeneous cluster: Goya's TPC and GEMM cores by their unit names, round trip
"$GTSIM" --arch configs/goya.cfg $CASES/goya.gtasm --emit "$tmp/goya.gtp"; rc=$?
check "goya.gtasm assembles and passes the checks on goya.cfg" test "$rc" -eq 0
"$GTSIM" --arch configs/goya.cfg --disasm "$tmp/goya.gtp" >"$tmp/goya.gtasm"
check "goya disassembly names the GEMM core's unit" grep -q '^.queue c0.k8.mme$' "$tmp/goya.gtasm"
"$GTSIM" --arch configs/goya.cfg "$tmp/goya.gtasm" --emit "$tmp/goya2.gtp"
check "goya round trip is byte-identical" cmp -s "$tmp/goya.gtp" "$tmp/goya2.gtp"
"$GTSIM" --arch configs/tiny.cfg "$tmp/goya.gtp" --emit "$tmp/x.gtp" 2>"$tmp/err"; rc=$?
check "a goya program on tiny fails the static checks (exit 1)" \
  bash -c "[ $rc -eq 1 ] && grep -q 'queue c0.k8.q2: core 8 does not exist' '$tmp/err'"

# 7. corrupted and foreign .gtp files: exit 1, `file: error:`
printf 'GTP1' >"$tmp/short.gtp"
"$GTSIM" --disasm "$tmp/short.gtp" >/dev/null 2>"$tmp/err"; rc=$?
check "truncated .gtp: exit 1 and message" \
  bash -c "[ $rc -eq 1 ] && grep -q '$tmp/short.gtp: error: truncated header (4 bytes, need 48)' '$tmp/err'"
head -c 60 "$tmp/a.gtp" >"$tmp/cut.gtp"
"$GTSIM" --disasm "$tmp/cut.gtp" >/dev/null 2>"$tmp/err"; rc=$?
check "cut .gtp: exit 1 and message" \
  bash -c "[ $rc -eq 1 ] && grep -q 'cut.gtp: error: truncated: the header says' '$tmp/err'"
cp $CASES/basic.gtasm "$tmp/notgtp.gtp"
"$GTSIM" --disasm "$tmp/notgtp.gtp" >/dev/null 2>"$tmp/err"; rc=$?
check "text file named .gtp: exit 1, bad magic" \
  bash -c "[ $rc -eq 1 ] && grep -q 'notgtp.gtp: error: not a .gtp file (bad magic' '$tmp/err'"
"$GTSIM" --disasm "$tmp/missing.gtp" >/dev/null 2>"$tmp/err"; rc=$?
check "missing file: exit 1, cannot read" \
  bash -c "[ $rc -eq 1 ] && grep -q 'missing.gtp: error: cannot read' '$tmp/err'"

printf 'gtasm 1\n.queue c0.k0.dma_in\nmov bytes=1\0junk\n' >"$tmp/nul.gtasm"
"$GTSIM" --disasm "$tmp/nul.gtasm" >/dev/null 2>"$tmp/err"; rc=$?
check "NUL byte in a .gtasm: exit 1 at its position" \
  bash -c "[ $rc -eq 1 ] && grep -q 'nul.gtasm:3:12: error: NUL byte in a text file' '$tmp/err'"

# 8. usage errors
"$GTSIM" "${ARCH[@]}" $CASES/basic.gtasm --emit "$tmp/x.bin" >/dev/null 2>"$tmp/err"; rc=$?
check "--emit with an unknown extension: exit 1" \
  bash -c "[ $rc -eq 1 ] && grep -q 'output must end in .gtp or .gtasm' '$tmp/err'"
"$GTSIM" $CASES/basic.gtasm --emit "$tmp/y.gtp" >/dev/null 2>"$tmp/err"; rc=$?
check "unit names without --arch: exit 1 with a hint" \
  bash -c "[ $rc -eq 1 ] && grep -q \"unit queue name 'mme' needs an arch\" '$tmp/err'"
done_testing
