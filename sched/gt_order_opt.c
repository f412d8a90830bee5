/* gt_order_opt.c — `--gt-order optimal`: an order of the instances with the least peak
 * on-chip memory (gt_order.c's peak), found in three steps that each stop when they settle it.
 *
 *   1. bound: a lower bound no order can beat (gt_order_lower_bound); when the best greedy
 *      order (min of BFS, DFS, footprint) meets it, that order is optimal.
 *   2. dp: the exact DP over downsets (gt_order_dp.c), pruned by the best greedy peak, within
 *      a fixed budget of memoised states.
 *   3. ilp: when the DP runs out of states, the ILP on GLPK (gt_order_ilp.c), warm-started
 *      from the best greedy order, within a node budget and the time limit.
 * The result is never worse than the best greedy order: a method's order replaces it only
 * when its peak is strictly lower. The gap reported is (peak - bound) / peak with the best
 * bound proven on the way (0 once a method proved its order optimal).
 * Budgets are counts, not times, so the order chosen does not depend on the machine; only
 * an ILP stopped by the time limit (discarded, status "time") can.
 */
#include "gt.h"

#include <string.h>

/* The DP's budget: memoised states (a bitset of up to 256 nodes plus 13 bytes each, in a
 * table kept at most half full: <= 2^20 slots, ~46 MB, and as much again for the tables it
 * outgrew), and the ILP's: branch-and-bound nodes. */
enum { GT_ORDER_DP_STATES = 500000, GT_ORDER_ILP_NODES = 2000 };

const char *gt_order_status_name(GtOrderStatus st) {
  switch (st) {
  case GT_ORDER_PROVEN: return "proven";
  case GT_ORDER_BUDGET: return "budget";
  case GT_ORDER_TIME_LIMIT: return "time limit";
  case GT_ORDER_TOO_LARGE: return "too large";
  case GT_ORDER_FAILED: return "failed";
  }
  return "?";
}

const char *gt_order_gap_text(GsArena *a, int64_t peak, int64_t bound) {
  if (bound >= peak || peak <= 0) return "0%";
  int64_t permille = (peak - bound) * 1000 / peak; /* rounded down: never overstates */
  return arena_printf(a, "%lld.%lld%%", (long long)(permille / 10), (long long)(permille % 10));
}

/* Two bounds on the peak of every order: (1) a node costs at least its footprint when it
 * runs; (2) for a node x with producers P, when the last producer p of P runs, every other
 * q in P has run and waits for x, so it is live unless p reads it: the cost is at least
 * foot(p) + sum(out(q), q in P - p) - in(p), with in(p) the outputs p reads. The last
 * producer is unknown, so (2) takes the least over P. O(edges). */
int64_t gt_order_lower_bound(const GtOrderDag *d, GsArena *a) {
  int64_t lb = 0, *in = arena_alloc(a, sizeof(int64_t) * ((size_t)d->n + 1));
  for (int v = 0; v < d->n; v++)
    for (int j = d->pstart[v]; j < d->pstart[v + 1]; j++) in[v] += d->out[d->p[j]];
  for (int x = 0; x < d->n; x++) {
    lb = max64(lb, d->foot[x]);
    if (d->pstart[x + 1] - d->pstart[x] < 2) continue;
    int64_t least = INT64_MAX;
    for (int j = d->pstart[x]; j < d->pstart[x + 1]; j++) {
      int p = d->p[j];
      least = min64(least, d->foot[p] + max64(0, in[x] - d->out[p] - in[p]));
    }
    lb = max64(lb, least);
  }
  return lb;
}

static void take(GtOrderResult *r, const GtOrderSearch *m, const int *found, int *order, int n) {
  if (m->improved && m->peak < r->peak) {
    memcpy(order, found, sizeof(int) * (size_t)n);
    r->peak = m->peak;
  }
  if (m->status == GT_ORDER_PROVEN || m->status == GT_ORDER_BUDGET) r->bound = max64(r->bound, m->bound);
  if (m->status == GT_ORDER_PROVEN) r->bound = r->peak;
  gs_assert(r->bound <= r->peak); /* else a bound or the peak model is wrong */
  r->status = r->bound == r->peak ? GT_ORDER_PROVEN : m->status;
}

GtOrderResult gt_order_optimal(const GtOrderDag *d, GsArena *a, const int *greedy,
                               double time_limit, int *order) {
  GtOrderResult r;
  memset(&r, 0, sizeof r);
  int n = d->n;
  memcpy(order, greedy, sizeof(int) * (size_t)n);
  r.greedy_peak = r.peak = gt_order_peak(d, greedy, a);
  r.bound = min64(gt_order_lower_bound(d, a), r.peak);
  r.method = "bound";
  r.status = GT_ORDER_PROVEN;
  if (r.bound >= r.peak) return r;
  int *found = arena_alloc(a, sizeof(int) * ((size_t)n + 1));
  r.dp = gt_order_dp(d, a, r.peak, GT_ORDER_DP_STATES, found);
  r.method = "dp";
  take(&r, &r.dp, found, order, n);
  if (r.dp.status == GT_ORDER_PROVEN) return r;
  r.ilp = gt_order_ilp(d, a, order, r.peak, time_limit, GT_ORDER_ILP_NODES, found);
  r.method = "ilp";
  take(&r, &r.ilp, found, order, n);
  return r;
}
