/* unit_timing.h — the compute formulas of the model and the DDR's burst rounding (docs/timing.md)
 * as pure functions of GsArch figures, shared by the simulator (which charges every instruction
 * and transfer with them) and the tiler (which estimates a tile's cycles and DDR bytes with the
 * same functions, so the two cannot drift apart; docs/timing.md, "One timing model").
 * No function here reads a clock or global state. All results are cycles of the chip clock. */
#ifndef GS_UNIT_TIMING_H
#define GS_UNIT_TIMING_H

#include <stdint.h>

#include "arch.h"
#include "prog.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Matrix unit: cycles of `gemm m n k` in dtype t, pipeline latency included; -1 if the unit
 * does not support t (mac_rate 0) or is not a matrix unit.
 *   cube:      ceil( ceil(m/m0)·ceil(n/n0)·ceil(k/k0) / rate ) + latency
 *   systolic:  timing_systolic + latency                     (SCALE-Sim v2's formulas) */
int64_t timing_matrix(const GsUnitKind *u, int64_t m, int64_t n, int64_t k, GsDtype t);
/* A systolic array's cycles for `gemm m n k` at `rate` times the base, T = the streamed
 * dimension over the rate:
 *   os: ceil(m/R)·ceil(n/C) · (T + R + C − 2),  T = k
 *   ws: ceil(k/R)·ceil(n/C) · (2R + C − 2 + T), T = m
 *   is: ceil(k/R)·ceil(m/C) · (2R + C − 2 + T), T = n
 *   ws/is with preload_overlap: folds · max(T, R) + 2R + C − 2 */
int64_t timing_systolic(const GsUnitKind *u, int64_t m, int64_t n, int64_t k, double rate);

/* Vector unit: latency + ceil(elems / lanes[t]) · Σ_class passes(op, class)·op_cost[class];
 * -1 if lanes[t] is 0 or the unit has no vector capability. */
int64_t timing_vector(const GsUnitKind *u, GsVop op, int64_t elems, GsDtype t);

/* Scalar unit: ceil(ops / scalar_ops_per_cycle); -1 without scalar capability. */
int64_t timing_scalar(const GsUnitKind *u, int64_t ops);

/* ---- DDR bursts (docs/timing.md, "DDR address mapping") ---- */

/* One side of a transfer: rows·planes rows of row_bytes bytes; row r of plane p starts at
 * base + p·plane_stride + r·row_stride (strides as given: 0 is the same row again). */
typedef struct {
  int64_t base, row_bytes, rows, row_stride, planes, plane_stride;
} GsAccess;

/* One past the highest byte the pattern touches (base included). Inline: both of the
 * simulator's threads ask it for every operand of every instruction. */
static inline int64_t timing_access_extent(const GsAccess *a) {
  return a->base + (a->planes - 1) * a->plane_stride + (a->rows - 1) * a->row_stride + a->row_bytes;
}

/* The rows the DDR serves pattern a as: one row of all its bytes when its rows follow each
 * other without a gap (within and across planes), else a itself — every row a run of its own.
 * Each row of the result is rounded out to whole bursts (timing_burst_span). */
GsAccess timing_ddr_runs(const GsAccess *a);

/* a / d for d >= 1, as C divides: a shift when a >= 0 and d is a power of two, as every DDR
 * geometry in the configs is (the divisions of a transfer's rows into bursts, segments and
 * channels were a tenth of a run on stcp920-hw). */
static inline int64_t timing_udiv(int64_t a, int64_t d) {
  return (d & (d - 1)) || a < 0 ? a / d : a >> __builtin_ctzll((unsigned long long)d);
}

/* The whole bursts [*lo, *hi) that bytes [addr, addr + len) touch: a partial burst costs a
 * whole one; burst <= 1 leaves the range as it is. Inline: the simulator rounds every row of a
 * transfer's DDR side. */
static inline void timing_burst_span(int64_t addr, int64_t len, int burst, int64_t *lo,
                                     int64_t *hi) {
  *lo = addr;
  *hi = addr + len;
  if (burst > 1) {
    *lo = timing_udiv(addr, burst) * burst;
    *hi = timing_udiv(addr + len + burst - 1, burst) * burst;
  }
}

/* DDR bytes of pattern a at its addresses: every run of timing_ddr_runs rounded out to whole
 * bursts — what the simulator charges (its channels' bytes add up to this). */
int64_t timing_ddr_bytes(const GsAccess *a, int burst);

/* DDR bytes of pattern a when only the alignment of its addresses is known (the tiler prices
 * tiles before addresses exist, from offsets in a burst-aligned tensor): every run starts at a
 * multiple of g = gcd(burst, base, the strides between runs), so each costs at most what a run
 * starting at burst − g does. Equal to timing_ddr_bytes when every run starts on a burst. */
int64_t timing_ddr_bytes_bound(const GsAccess *a, int burst);

#ifdef __cplusplus
}
#endif
#endif
