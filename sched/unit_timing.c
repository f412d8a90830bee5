/* unit_timing.c — the compute formulas and the DDR's burst rounding (unit_timing.h, derived in
 * docs/timing.md). */
#include "unit_timing.h"

#include <math.h>

static int64_t cdiv(int64_t a, int64_t b) { return b <= 0 ? 0 : (a + b - 1) / b; }

/* Whole cycles for `work` units at `rate` units per cycle, rounded up once. */
static int64_t ceil_rate(int64_t work, double rate) {
  return (int64_t)ceil((double)work / rate - 1e-9);
}

int64_t timing_matrix(const GsUnitKind *u, int64_t m, int64_t n, int64_t k, GsDtype t) {
  if (!(u->caps & CAP_MATRIX) || (unsigned)t >= DT_COUNT) return -1;
  double rate = u->mac_rate[t];
  if (rate <= 0) return -1;
  if (m <= 0 || n <= 0 || k <= 0) return u->matrix_latency_cycles;
  if (u->shape == MAT_CUBE) {
    int64_t blocks = cdiv(m, u->cube_m) * cdiv(n, u->cube_n) * cdiv(k, u->cube_k);
    return ceil_rate(blocks, rate) + u->matrix_latency_cycles;
  }
  return timing_systolic(u, m, n, k, rate) + u->matrix_latency_cycles;
}

/* SCALE-Sim v2's stall-free cycles (its reported total is one less: a zero-based count),
 * T the streamed dimension at the dtype's rate:
 *   os: ceil(M/R)·ceil(N/C) folds of T = K + R + C − 2   (outputs accumulate in place)
 *   ws: ceil(K/R)·ceil(N/C) folds of 2R + C − 2 + T, T = M (load R rows of weights, stream)
 *   is: ceil(K/R)·ceil(M/C) folds of 2R + C − 2 + T, T = N (inputs held, weights stream)
 * With preload_overlap (ws, is) the next fold's load hides under this fold's stream: each
 * fold takes max(T, R), plus one load and the fill and drain: F·max(T, R) + 2R + C − 2. */
int64_t timing_systolic(const GsUnitKind *u, int64_t m, int64_t n, int64_t k, double rate) {
  int64_t R = u->sys_rows, C = u->sys_cols, folds, T;
  if (u->dataflow == DF_OUTPUT_STATIONARY)
    return cdiv(m, R) * cdiv(n, C) * (ceil_rate(k, rate) + R + C - 2);
  if (u->dataflow == DF_WEIGHT_STATIONARY) {
    folds = cdiv(k, R) * cdiv(n, C);
    T = ceil_rate(m, rate);
  } else {
    folds = cdiv(k, R) * cdiv(m, C);
    T = ceil_rate(n, rate);
  }
  if (u->preload_overlap) return folds * (T > R ? T : R) + 2 * R + C - 2;
  return folds * (2 * R + C - 2 + T);
}

int64_t timing_vector(const GsUnitKind *u, GsVop op, int64_t elems, GsDtype t) {
  if (!(u->caps & CAP_VECTOR) || (unsigned)t >= DT_COUNT || (unsigned)op >= V_COUNT) return -1;
  int lanes = u->lanes[t];
  if (lanes <= 0) return -1;
  int64_t per_group = 0;
  for (int c = 0; c < VC_COUNT; c++) per_group += (int64_t)isa_vop_passes(op, (GsVClass)c) * u->op_cost[c];
  return u->vector_latency_cycles + cdiv(elems, lanes) * per_group;
}

int64_t timing_scalar(const GsUnitKind *u, int64_t ops) {
  if (!(u->caps & CAP_SCALAR) || u->scalar_ops_per_cycle <= 0) return -1;
  return cdiv(ops, u->scalar_ops_per_cycle);
}

GsAccess timing_ddr_runs(const GsAccess *a) {
  if (a->rows <= 1 && a->planes <= 1) return *a;
  int64_t L = a->row_bytes;
  if (a->row_stride == L && (a->planes <= 1 || a->plane_stride == a->rows * L)) {
    int64_t all = L * a->rows * a->planes;
    return (GsAccess){a->base, all, 1, all, 1, all};
  }
  return *a;
}

int64_t timing_ddr_bytes(const GsAccess *a, int burst) {
  GsAccess r = timing_ddr_runs(a);
  if (r.row_bytes <= 0) return 0;
  int64_t sum = 0, lo, hi;
  for (int64_t p = 0; p < r.planes; p++)
    for (int64_t i = 0; i < r.rows; i++) {
      int64_t at = r.base + p * r.plane_stride + i * r.row_stride;
      timing_burst_span(at, r.row_bytes, burst, &lo, &hi);
      sum += hi - lo;
    }
  return sum;
}

static int64_t gcd64(int64_t a, int64_t b) {
  if (a < 0) a = -a;
  if (b < 0) b = -b;
  while (b) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

int64_t timing_ddr_bytes_bound(const GsAccess *a, int burst) {
  GsAccess r = timing_ddr_runs(a);
  if (r.row_bytes <= 0) return 0;
  int64_t B = burst > 1 ? burst : 1, g = gcd64(B, r.base), lo, hi;
  if (r.rows > 1) g = gcd64(g, r.row_stride);
  if (r.planes > 1) g = gcd64(g, r.plane_stride);
  timing_burst_span(B - g, r.row_bytes, burst, &lo, &hi);
  return r.rows * r.planes * (hi - lo);
}
