/* unit_timing.c — the compute formulas (unit_timing.h, derived in docs/timing.md). */
#include "unit_timing.h"

#include <math.h>

static int64_t cdiv(int64_t a, int64_t b) { return b <= 0 ? 0 : (a + b - 1) / b; }

/* Whole cycles for `work` units at `rate` units per cycle, rounded up once. */
static int64_t ceil_rate(int64_t work, double rate) {
  return (int64_t)ceil((double)work / rate - 1e-9);
}

int64_t timing_matrix(const GtUnitKind *u, int64_t m, int64_t n, int64_t k, GtDtype t) {
  if (!(u->caps & CAP_MATRIX) || (unsigned)t >= DT_COUNT) return -1;
  double rate = u->mac_rate[t];
  if (rate <= 0) return -1;
  if (m <= 0 || n <= 0 || k <= 0) return u->matrix_latency_cycles;
  if (u->shape == MAT_CUBE) {
    int64_t blocks = cdiv(m, u->cube_m) * cdiv(n, u->cube_n) * cdiv(k, u->cube_k);
    return ceil_rate(blocks, rate) + u->matrix_latency_cycles;
  }
  int64_t R = u->sys_rows, C = u->sys_cols, folds, T;
  if (u->dataflow == DF_OUTPUT_STATIONARY) {
    folds = cdiv(m, R) * cdiv(n, C);
    T = k;
  } else {
    folds = cdiv(k, R) * cdiv(n, C);
    T = m;
  }
  return folds * (2 * R + C - 2 + ceil_rate(T, rate)) + u->matrix_latency_cycles;
}

int64_t timing_vector(const GtUnitKind *u, GtVop op, int64_t elems, GtDtype t) {
  if (!(u->caps & CAP_VECTOR) || (unsigned)t >= DT_COUNT || (unsigned)op >= V_COUNT) return -1;
  int lanes = u->lanes[t];
  if (lanes <= 0) return -1;
  int64_t per_group = 0;
  for (int c = 0; c < VC_COUNT; c++) per_group += (int64_t)vop_passes(op, (GtVClass)c) * u->op_cost[c];
  return u->vector_latency_cycles + cdiv(elems, lanes) * per_group;
}

int64_t timing_scalar(const GtUnitKind *u, int64_t ops) {
  if (!(u->caps & CAP_SCALAR) || u->scalar_ops_per_cycle <= 0) return -1;
  return cdiv(ops, u->scalar_ops_per_cycle);
}
