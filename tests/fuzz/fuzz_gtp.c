/* fuzz_gtp.c — libFuzzer target for the .gtp reader (`make fuzz-gtp`). Each input's bytes are
 * read as a .gtp file (through a temporary file: the reader takes a path); when they read, the
 * static checks run against configs/tiny.cfg, and the program written back and read again must
 * disassemble to the same text (else abort). Seeds: the .gtasm cases assembled to .gtp.
 * Crashes found are fixed and kept in tests/fuzz/regress/gtp/. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const GsArch *a = fuzz_tiny();
  const char *path = fuzz_gtp_path();
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) abort();
  GsDiag d;
  diag_init(&d);
  d.out = fuzz_null();
  GsProgram *p = gtp_read(path, &d);
  if (!p) return 0;
  (void)prog_check(p, a, &d, "fuzz.gtp");
  char *t1 = fuzz_disasm(a, p);
  fuzz_gtp_round_trip(a, p, t1);
  free(t1);
  prog_free(p);
  return 0;
}
