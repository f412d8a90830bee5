/* fuzz_gtasm.c — libFuzzer target for the .gtasm assembler (`make fuzz-gtasm`). Each input is
 * assembled for configs/tiny.cfg; when it assembles, the static checks run (prog_check), and
 * the program round-trips: disassembled, assembled again, written as .gtp and read back, each
 * must give the same .gtasm text (else abort). Bad input must only take the error paths.
 * Seeds: tests/cases/asm and tests/cases/sim. Crashes found are fixed and kept in
 * tests/fuzz/regress/gtasm/, replayed by tests/unit/test_fuzz_replay.c. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const GsArch *a = fuzz_tiny();
  char *text = fuzz_text(data, size);
  GsDiag d;
  diag_init(&d);
  d.out = fuzz_null();
  GsProgram *p = gtasm_parse("fuzz.gtasm", text, a, &d);
  free(text);
  if (!p) return 0;
  (void)prog_check(p, a, &d, "fuzz.gtasm");
  char *t1 = fuzz_disasm(a, p);
  GsProgram *q = gtasm_parse("disasm.gtasm", t1, a, &d);
  if (!q) {
    fprintf(stderr, "the disassembly does not assemble:\n%s\n", t1);
    abort();
  }
  char *t2 = fuzz_disasm(a, q);
  fuzz_same("disassembling and assembling", t1, t2);
  fuzz_gtp_round_trip(a, p, t1);
  free(t1);
  free(t2);
  prog_free(q);
  prog_free(p);
  return 0;
}
