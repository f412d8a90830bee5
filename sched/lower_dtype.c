/* lower_dtype.c — lower_check_dtypes(): the model's compute dtypes against the config's units,
 * before any kernel is given a unit (every strategy calls it through lower_fill_kernel_units).
 *
 * Contract: an op that needs a matrix unit (conv, dense, matmul, ...) needs one, on some core
 * kind, that computes the op's dtype; an op that needs a vector unit likewise. gtsim never
 * picks another dtype for the model: an fp32 export on stcp920 (matrix fp16/int8, vector
 * fp16/int8/int16) is an error that names the op, its dtype and the config, lists the dtypes
 * the config's units compute and suggests `--dtype X` (graph_cast) with a dtype every unit class
 * the model needs has: the first of fp16, bf16, fp32, int8, int16 that fits (docs/cli.md).
 * Reads only; returns 0, or -1 after one error to d.
 */
#include "lower.h"

#include <stdio.h>
#include <string.h>

/* Bit t set when some unit of some core kind with capability cap computes dtype t. */
static unsigned config_dtypes(const GsArch *a, unsigned cap) {
  unsigned m = 0;
  for (int c = 0; c < a->ncore_kinds; c++)
    for (int i = 0; i < a->core_kinds[c].nunits; i++) {
      const GsUnitKind *u = &a->units[a->core_kinds[c].unit[i]];
      if (!(u->caps & cap)) continue;
      for (int t = 0; t < DT_COUNT; t++) {
        double r = cap == CAP_MATRIX ? arch_unit_macs_per_cycle(u, (GsDtype)t) : (double)u->lanes[t];
        if (r > 0) m |= 1u << t;
      }
    }
  return m;
}

static void dtype_list(char *buf, size_t size, unsigned m) {
  size_t n = 0;
  buf[0] = 0;
  for (int t = 0; t < DT_COUNT && n < size; t++)
    if (m & (1u << t))
      n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? ", " : "", arch_dtype_name((GsDtype)t));
  if (!m) snprintf(buf, size, "none");
}

int lower_check_dtypes(const GsGraph *g, const GsArch *a, GsDiag *d) {
  unsigned have[2] = {config_dtypes(a, CAP_MATRIX), config_dtypes(a, CAP_VECTOR)};
  unsigned needs = 0;
  int bad = -1;
  for (int o = 0; o < g->nops; o++) {
    unsigned need = lower_head_need(g, o);
    needs |= need;
    unsigned m = need == CAP_MATRIX ? have[0] : need == CAP_VECTOR ? have[1] : ~0u;
    if (bad < 0 && !(m & (1u << g->tensors[g->ops[o].out[0]].dtype))) bad = o;
  }
  if (bad < 0) return 0;
  const GsOp *o = &g->ops[bad];
  GsDtype dt = g->tensors[o->out[0]].dtype;
  unsigned need = lower_head_need(g, bad);
  unsigned fit = ((needs & CAP_MATRIX) ? have[0] : ~0u) & ((needs & CAP_VECTOR) ? have[1] : ~0u);
  static const GsDtype pref[] = {DT_FP16, DT_BF16, DT_FP32, DT_INT8, DT_INT16};
  char mat[64], vec[64], hint[96] = "no single dtype has a unit of every kind the model needs";
  for (size_t i = 0; i < sizeof pref / sizeof pref[0]; i++)
    if (fit & (1u << pref[i])) {
      snprintf(hint, sizeof hint, "run it with --dtype %s", arch_dtype_name(pref[i]));
      break;
    }
  dtype_list(mat, sizeof mat, have[0]);
  dtype_list(vec, sizeof vec, have[1]);
  diag_error(d, g->file ? g->file : g->name, o->line, o->col, NULL,
             "the model computes in %s, and config '%s' has no %s unit for %s (op '%s', %s; the "
             "config's matrix units compute %s, its vector units %s): %s (docs/cli.md)",
             arch_dtype_name(dt), a->name, need == CAP_MATRIX ? "matrix" : "vector",
             arch_dtype_name(dt), o->name ? o->name : g->tensors[o->out[0]].name,
             graph_opkind_name(o->kind), mat, vec, hint);
  return -1;
}
