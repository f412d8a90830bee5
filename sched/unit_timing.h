/* unit_timing.h — the compute formulas of the model (docs/timing.md) as pure functions of GtArch
 * figures, shared by the simulator (which charges every instruction with them) and the tiler
 * (which estimates a tile's cycles with the same functions, so the two cannot drift apart).
 * No function here reads a clock or global state. All results are cycles of the chip clock. */
#ifndef GT_UNIT_TIMING_H
#define GT_UNIT_TIMING_H

#include <stdint.h>

#include "arch.h"
#include "prog.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Matrix unit: cycles of `gemm m n k` in dtype t, pipeline latency included; -1 if the unit
 * does not support t (mac_rate 0) or is not a matrix unit.
 *   cube:      ceil( ceil(m/m0)·ceil(n/n0)·ceil(k/k0) / rate ) + latency
 *   systolic:  folds · (2R + C − 2 + ceil(T / rate)) + latency        (SCALE-Sim, see doc)
 *              output-stationary: folds = ceil(m/R)·ceil(n/C), T = k
 *              weight-stationary: folds = ceil(k/R)·ceil(n/C), T = m */
int64_t timing_matrix(const GtUnitKind *u, int64_t m, int64_t n, int64_t k, GtDtype t);

/* Vector unit: latency + ceil(elems / lanes[t]) · Σ_class passes(op, class)·op_cost[class];
 * -1 if lanes[t] is 0 or the unit has no vector capability. */
int64_t timing_vector(const GtUnitKind *u, GtVop op, int64_t elems, GtDtype t);

/* Scalar unit: ceil(ops / scalar_ops_per_cycle); -1 without scalar capability. */
int64_t timing_scalar(const GtUnitKind *u, int64_t ops);

#ifdef __cplusplus
}
#endif
#endif
