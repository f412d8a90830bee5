/* gt_group.c — Algorithm 2: group sub-graphs by straight, diamond and branch merges.
 *
 * Each sweep walks the live groups in topological order; a merge replaces its parts by a new
 * group (recorded in s->merges) whose SplitInfo is recomputed by Alg. 1. The three sweeps
 * repeat until one round merges nothing ("until s, d and b all do not decrease").
 * Patterns (f = factor of a group's BestSplit, INF when no split fits):
 *   straight  P -> Q, P the only producer group of Q and Q the only consumer group of P;
 *   diamond   E -> A -> X, E -> B -> X: A and B each have E as only producer and X as only
 *             consumer, X has exactly A and B as producers; merge A + B + X (E stays out);
 *   branch    Q with >= 2 producer groups; P = the last of them in topological order, whose
 *             only consumer is Q; merge P + Q (so no path can leave and re-enter the merge).
 * Rule (i) (straight, branch): f(Q) >= f(P) and f(P+Q) <= f(Q); rule (ii) (diamond):
 * f(A+B+X) <= max(f(A), f(B), f(X)); and a merge must leave a group some split fits in LB.
 * Rule (i) assumes the data shrinks from P to Q (down-sampling): it keeps P's large factor
 * from reaching Q. Across an up-sampling (Q holds a resize that enlarges its input) the roles
 * swap, the paper's §3.6 remark made concrete: f(P) >= f(Q) and f(P+Q) <= f(P), which keeps
 * Q's large factor from reaching P (docs/graphturbo.md, "Up-sampling").
 * Invariant: live groups partition the ops and stay convex, so the group graph is a DAG.
 */
#include "gt.h"

static int64_t factor_of(const GtGroup *gr) { return gr->best.split ? gr->best.factor : GT_INF_FACTOR; }

/* The group holds an op whose output has more elements than its input (a resize up). */
static int upsamples(const GtSchedule *s, const GtGroup *gr) {
  for (int i = 0; i < gr->nops; i++) {
    const GsOp *o = &s->g->ops[gr->ops[i]];
    if (o->kind == OP_RESIZE &&
        graph_tensor_elems(&s->g->tensors[o->out[0]]) > graph_tensor_elems(&s->g->tensors[o->in[0]]))
      return 1;
  }
  return 0;
}

static void log_merge(GtSchedule *s, GtMergeKind kind, int iter, const int *parts, int n, int res) {
  if (s->nmerges == s->cap_merges) {
    int cap = s->cap_merges ? 2 * s->cap_merges : 64;
    GtMerge *m = arena_alloc(s->arena, sizeof *m * (size_t)cap);
    for (int i = 0; i < s->nmerges; i++) m[i] = s->merges[i];
    s->merges = m;
    s->cap_merges = cap;
  }
  GtMerge *m = &s->merges[s->nmerges++];
  m->kind = kind;
  m->iteration = iter;
  m->nparts = n;
  for (int i = 0; i < n; i++) m->parts[i] = parts[i];
  m->result = res;
}

/* Tries to merge parts (in topological order) under the rule of `kind`; returns the new
 * group's topological position, or -1 when the rule refuses. */
static int try_merge(GtSchedule *s, GtMergeKind kind, int iter, const int *parts, int n) {
  int total = 0;
  for (int i = 0; i < n; i++) total += s->groups[parts[i]].nops;
  gs_assert(total > 0 && n > 0);
  int *ops = arena_alloc(s->arena, sizeof(int) * (size_t)total), pos[3] = {0, 0, 0};
  gs_assert(n <= 3);
  for (int k = 0; k < total; k++) { /* n-way merge of ascending op lists */
    int best = -1;
    for (int i = 0; i < n; i++) {
      const GtGroup *gr = &s->groups[parts[i]];
      if (pos[i] < gr->nops && (best < 0 || gr->ops[pos[i]] < s->groups[parts[best]].ops[pos[best]]))
        best = i;
    }
    ops[k] = s->groups[parts[best]].ops[pos[best]++];
  }
  GtGroup m = gt_make_group(s, ops, total);
  int64_t fm = factor_of(&m);
  int ok = m.best.split;
  if (kind == GT_MERGE_DIAMOND) {
    int64_t fmax = 0;
    for (int i = 0; i < n; i++) fmax = max64(fmax, factor_of(&s->groups[parts[i]]));
    ok = ok && fm <= fmax;                                         /* rule (ii) */
  } else {
    int64_t fp = factor_of(&s->groups[parts[0]]), fq = factor_of(&s->groups[parts[1]]);
    if (upsamples(s, &s->groups[parts[1]])) ok = ok && fp >= fq && fm <= fp; /* rule (i), up */
    else ok = ok && fq >= fp && fm <= fq;                          /* rule (i) */
  }
  if (!ok) return -1;
  for (int i = 0; i < n; i++) s->groups[parts[i]].alive = 0;
  int id = gt_add_group(s, &m);
  log_merge(s, kind, iter, parts, n, id);
  gt_fill_live_groups(s);
  return s->groups[id].topo;
}

static int straight_merge(GtSchedule *s, int iter, int *nb, int *nb2) {
  int merged = 0;
  for (int i = 0; i < s->nlive;) {
    int p = s->live[i];
    int at = -1;
    if (gt_group_consumers(s, p, nb, s->ngroups) == 1 &&
        gt_group_producers(s, nb[0], nb2, s->ngroups) == 1) {
      int parts[2] = {p, nb[0]};
      at = try_merge(s, GT_MERGE_STRAIGHT, iter, parts, 2);
    }
    if (at >= 0) {
      merged++;
      i = at;
    } else {
      i++;
    }
  }
  return merged;
}

static int diamond_merge(GtSchedule *s, int iter, int *nb, int *nb2, int *cons) {
  int merged = 0;
  for (int i = 0; i < s->nlive;) {
    int e = s->live[i], at = -1;
    int nc = gt_group_consumers(s, e, nb, s->ngroups);
    for (int k = 0; k < nc; k++) cons[k] = nb[k];
    for (int a = 0; a < nc && at < 0; a++)
      for (int b = a + 1; b < nc && at < 0; b++) {
        int A = cons[a], B = cons[b], xa, xb;
        if (gt_group_producers(s, A, nb, s->ngroups) != 1 || nb[0] != e) continue;
        if (gt_group_producers(s, B, nb, s->ngroups) != 1 || nb[0] != e) continue;
        if (gt_group_consumers(s, A, nb, s->ngroups) != 1) continue;
        xa = nb[0];
        if (gt_group_consumers(s, B, nb, s->ngroups) != 1) continue;
        xb = nb[0];
        if (xa != xb || gt_group_producers(s, xa, nb2, s->ngroups) != 2) continue;
        int parts[3] = {A, B, xa};
        at = try_merge(s, GT_MERGE_DIAMOND, iter, parts, 3);
      }
    if (at >= 0) {
      merged++;
      i = at;
    } else {
      i++;
    }
  }
  return merged;
}

static int branch_merge(GtSchedule *s, int iter, int *nb, int *nb2) {
  int merged = 0;
  for (int i = 0; i < s->nlive;) {
    int q = s->live[i], at = -1;
    int np = gt_group_producers(s, q, nb, s->ngroups);
    if (np >= 2) {
      int p = nb[np - 1];
      if (gt_group_consumers(s, p, nb2, s->ngroups) == 1) {
        int parts[2] = {p, q};
        at = try_merge(s, GT_MERGE_BRANCH, iter, parts, 2);
      }
    }
    if (at >= 0) {
      merged++;
      i = at;
    } else {
      i++;
    }
  }
  return merged;
}

/* requires: gt_compute_splitinfo; maintains: live groups partition the ops, convex, listed in
 * topological order in s->live, each with SplitInfo and BestSplit; merges logged. */
void gt_group_subgraphs(GtSchedule *s) {
  gt_fill_live_groups(s);
  int changed;
  do {
    s->iterations++;
    /* merges add groups: size the neighbour buffers for the worst case */
    int cap = s->ngroups + s->g->nops + 1;
    int *nb = arena_alloc(s->arena, sizeof(int) * (size_t)cap);
    int *nb2 = arena_alloc(s->arena, sizeof(int) * (size_t)cap);
    int *cons = arena_alloc(s->arena, sizeof(int) * (size_t)cap);
    changed = straight_merge(s, s->iterations, nb, nb2);
    changed += diamond_merge(s, s->iterations, nb, nb2, cons);
    changed += branch_merge(s, s->iterations, nb, nb2);
  } while (changed);
}
