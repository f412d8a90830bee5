/* gt_splitinfo.c — the initial sub-graphs, Algorithm 1 (SplitInfo) and Eq. 1 (BestSplit).
 *
 * For every dimension d of a group's output tensor, Alg. 1 takes the smallest candidate
 * factor v (1, 2, 4, ... powers of two below c, then c, c+1, ... up to the extent; only
 * divisors of the extent, so instances are homogeneous) with ceil(peak / v) <= sizeof(LB),
 * where peak is the largest working set of one op of the group (its activation operands plus
 * results). The slice of one instance is then propagated back through the group
 * (gt_group_reqs): n_d counts the ops whose output is matched on a dimension the factor
 * divides. A split whose recomputed work (halos, unmatched operands computed whole by every
 * instance) exceeds opt.max_recompute is dropped — the paper's unspecified cost model.
 * Eq. 1 picks lexmax(n_d, -f_d, -d). docs/graphturbo.md gives the reasons.
 * Invariant: a group's best split, when present, fits in LB and divides its dimension.
 */
#include "gt.h"

int gt_split_better(const GtSplit *a, const GtSplit *b) {
  if (a->split != b->split) return a->split > b->split;
  if (a->n != b->n) return a->n > b->n;
  if (a->factor != b->factor) return a->factor < b->factor;
  return a->dim < b->dim;
}

static void reset_reqs(GtSchedule *s, int n) {
  for (int i = 0; i < n; i++) s->req[s->touched[i]].kind = GT_REQ_NONE;
}

/* Work of instance [lo, hi) of dim d, in output elements computed (all outputs of an op). */
static double instance_work(GtSchedule *s, const GtGroup *gr, int d, int64_t lo, int64_t hi) {
  const GsGraph *g = s->g;
  int nt = gt_group_reqs(s, gr, d, lo, hi, s->req, s->touched);
  double w = 0;
  for (int i = 0; i < gr->nops; i++) {
    const GsOp *o = &g->ops[gr->ops[i]];
    for (int k = 0; k < o->nout; k++) {
      const GsTensor *t = &g->tensors[o->out[k]];
      GtReq r = s->req[o->out[k]];
      double e = (double)graph_tensor_elems(t);
      if (r.kind == GT_REQ_FULL) w += e;
      else if (r.kind == GT_REQ_RANGE) w += e * (double)(r.hi - r.lo) / (double)t->dim[r.dim];
    }
  }
  reset_reqs(s, nt);
  return w;
}

/* Total work of v instances over total work of one; interior instances are alike, so for
 * v > 3 the first, a middle and the last instance stand for all of them. */
static double recompute_ratio(GtSchedule *s, const GtGroup *gr, int d, int64_t ext, int64_t v) {
  double whole = instance_work(s, gr, d, 0, ext);
  if (whole <= 0) return 1;
  int64_t len = ext / v;
  double w;
  if (v <= 3) {
    w = 0;
    for (int64_t i = 0; i < v; i++) w += instance_work(s, gr, d, i * len, (i + 1) * len);
  } else {
    int64_t mid = v / 2;
    w = instance_work(s, gr, d, 0, len) + instance_work(s, gr, d, (v - 1) * len, v * len) +
        (double)(v - 2) * instance_work(s, gr, d, mid * len, (mid + 1) * len);
  }
  return w / whole;
}

static int64_t next_candidate(int64_t v, int cores) {
  if (v < 1) return 1;
  if (v * 2 < cores) return v * 2;
  return v < cores ? cores : v + 1;
}

void gt_compute_group_splitinfo(GtSchedule *s, GtGroup *gr) {
  const GsGraph *g = s->g;
  const GsTensor *out = &g->tensors[gr->out];
  gr->splits = arena_alloc(s->arena, sizeof(GtSplit) * (size_t)(out->ndim + 1));
  gr->nsplits = 0;
  gr->best = (GtSplit){0, 0, GT_INF_FACTOR, -1};
  for (int d = 0; d < out->ndim; d++) {
    int64_t ext = out->dim[d], v = 0;
    for (int64_t c = 1; c <= ext; c = next_candidate(c, s->cores))
      if (ext % c == 0 && ceil_div64(gr->peak, c) <= s->lb_capacity) {
        v = c;
        break;
      }
    if (v == 0) continue; /* split_d = 0 */
    int nt = gt_group_reqs(s, gr, d, 0, ext / v, s->req, s->touched);
    int n = 0;
    for (int i = 0; i < gr->nops; i++) {
      GtReq r = s->req[g->ops[gr->ops[i]].out[0]];
      if (r.kind == GT_REQ_RANGE && g->tensors[g->ops[gr->ops[i]].out[0]].dim[r.dim] % v == 0) n++;
    }
    reset_reqs(s, nt);
    if (v > 1 && recompute_ratio(s, gr, d, ext, v) > 1.0 + s->opt.max_recompute) continue;
    GtSplit sp = {1, n, v, d};
    gr->splits[gr->nsplits++] = sp;
    if (gt_split_better(&sp, &gr->best)) gr->best = sp;
  }
}

/* ---- the initial sub-graphs ---- */

static int is_anchor(GsOpKind k) {
  return k == OP_CONV2D || k == OP_CONV1D || k == OP_DENSE || k == OP_MATMUL ||
         k == OP_EMBEDDING || k == OP_INTERACTION;
}

/* The single op all of o's graph-produced operands come from, or -1. */
static int sole_producer(const GsGraph *g, const GsOp *o) {
  int p = -1;
  for (int k = 0; k < o->nin; k++) {
    int q = g->tensors[o->in[k]].producer;
    if (q < 0) continue;
    if (p >= 0 && q != p) return -1;
    p = q;
  }
  return p;
}

/* Straight line: o's only producer op p has one output, read by o alone. */
static int continues_chain(const GtSchedule *s, int op) {
  const GsGraph *g = s->g;
  int p = sole_producer(g, &g->ops[op]);
  if (p < 0 || g->ops[p].nout != 1) return -1;
  int t = g->ops[p].out[0];
  if (s->cons_start[t + 1] - s->cons_start[t] != 1) return -1;
  return p;
}

/* requires: s set up, no groups; maintains: groups [0, ninit) partition the ops in
 * topological order, each with its SplitInfo and BestSplit. */
void gt_compute_splitinfo(GtSchedule *s) {
  const GsGraph *g = s->g;
  int *grp = arena_alloc(s->arena, sizeof(int) * (size_t)g->nops);
  int *ops = arena_alloc(s->arena, sizeof(int) * (size_t)g->nops);
  int ngr = 0;
  for (int op = 0; op < g->nops; op++) {
    int p = s->opt.init == GT_INIT_OP ? -1 : continues_chain(s, op);
    if (p >= 0 && s->opt.init == GT_INIT_LAYER && is_anchor(g->ops[op].kind)) p = -1;
    grp[op] = p >= 0 ? grp[p] : ngr++;
  }
  /* ops of each sub-graph, ascending: counting sort by sub-graph */
  int *start = arena_alloc(s->arena, sizeof(int) * (size_t)(ngr + 1));
  for (int op = 0; op < g->nops; op++) start[grp[op] + 1]++;
  for (int gi = 0; gi < ngr; gi++) start[gi + 1] += start[gi];
  int *fill = arena_alloc(s->arena, sizeof(int) * (size_t)(ngr + 1));
  for (int op = 0; op < g->nops; op++) ops[start[grp[op]] + fill[grp[op]]++] = op;
  for (int gi = 0; gi < ngr; gi++) {
    GtGroup gr = gt_make_group(s, ops + start[gi], start[gi + 1] - start[gi]);
    gt_add_group(s, &gr);
  }
  s->ninit = s->ngroups;
  gt_fill_live_groups(s);
}
