/* fuzz_cfg.c — libFuzzer target for the .cfg reader (`make fuzz-cfg`). Each input is parsed and
 * validated as an architecture config; when it loads, its description (text and JSON, with the
 * derived peak figures) is printed and a program of one instruction per unit of core 0 is
 * checked against it. Bad input must only take the error paths (exit 1 in the CLI). Seeds:
 * configs/. Crashes found are fixed and kept in tests/fuzz/regress/cfg/. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_text(data, size);
  GsDiag d;
  diag_init(&d);
  d.out = fuzz_null();
  GsArch *a = arch_load_string("fuzz.cfg", text, NULL, 0, &d);
  free(text);
  if (!a) return 0;
  arch_describe(a, fuzz_null(), 0);
  arch_describe(a, fuzz_null(), 1);
  /* one instruction per unit queue of core 0, checked against the config */
  GsProgram *p = prog_new();
  const GsCoreKind *k = arch_core(a, 0);
  for (int u = 0; k && u < k->nunits; u++) {
    GsInst *in = prog_emit(prog_queue(p, 0, 0, Q_UNIT0 + u));
    in->op = I_SCALAR;
    inst_scalar_set_ops(in, 1);
  }
  (void)prog_check(p, a, &d, "fuzz.gtasm");
  prog_free(p);
  arch_free(a);
  return 0;
}
