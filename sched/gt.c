/* gt.c — the GraphTurbo graph-level pipeline (paper §3), its shared helpers and the
 * invariant checker that runs between passes.
 *
 * gt_schedule() reads top to bottom, one pass per line; after each pass
 * gt_check() verifies what every later pass relies on and die()s naming the pass that broke
 * it. Groups are convex sets of ops (never a path that leaves a group and comes back), so the
 * group graph stays a DAG; gt_fill_live_groups() lists it in a deterministic topological order
 * (Kahn, ties broken by the lowest op id), which is the "renumbering" of Alg. 2.
 */
#include "gt.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *pass_names[] = {
#define X(e, n, d) n,
    GT_PASSES(X)
#undef X
};

const char *gt_pass_name(GtPass p) { return p < GT_NPASSES ? pass_names[p] : "?"; }

int gt_pass_parse(const char *str, GtPass *out) {
  for (int i = 0; i < GT_NPASSES; i++)
    if (strcmp(str, pass_names[i]) == 0) {
      *out = (GtPass)i;
      return 0;
    }
  return -1;
}

const char *gt_merge_name(GtMergeKind k) {
  return k == GT_MERGE_STRAIGHT ? "straight" : k == GT_MERGE_DIAMOND ? "diamond" : "branch";
}
const char *gt_scope_name(GtBufScope sc) { return sc == GT_SCOPE_LB ? "LB" : "GB"; }
const char *gt_xop_name(GtXopKind k) {
  return k == GT_XOP_CONCAT ? "concat" : k == GT_XOP_COPY ? "copy" : "redistribute";
}

void gt_options_default(GtOptions *o) {
  memset(o, 0, sizeof *o);
  o->lb_scope = GT_LB_CLUSTER;
  o->init = GT_INIT_CHAIN;
  o->max_recompute = 0.25;
  o->order = GT_ORDER_AUTO;
  o->order_time_limit = 2.0;
#ifdef NDEBUG
  o->check = 0;
#else
  o->check = 1;
#endif
}


/* ---- groups ---- */

/* GT_FOOT_LIVE: the largest sum of activation tensors live at one op of the group run in
 * op order; a tensor is live from its first use or production to its last use, the
 * group's outputs to the end. */
static int64_t live_peak(GtSchedule *s, const GtGroup *gr) {
  const GsGraph *g = s->g;
  int n = gr->nops, nt = 0;
  int64_t *delta = arena_alloc(s->arena, sizeof(int64_t) * (size_t)(n + 1));
  int *touched = s->touched;
  for (int i = 0; i < n; i++) {
    const GsOp *o = &g->ops[gr->ops[i]];
    for (int pass = 0; pass < 2; pass++)
      for (int k = 0; k < (pass ? o->nout : o->nin); k++) {
        int t = pass ? o->out[k] : o->in[k];
        if (s->t_first[t] < 0) {
          s->t_first[t] = i;
          touched[nt++] = t;
        }
        s->t_last[t] = i;
      }
  }
  for (int i = 0; i < gr->nouts; i++) s->t_last[gr->outs[i]] = n - 1;
  for (int i = 0; i < nt; i++) {
    int t = touched[i];
    int64_t b = graph_tensor_bytes(&g->tensors[t]);
    delta[s->t_first[t]] += b;
    delta[s->t_last[t] + 1] -= b;
    s->t_first[t] = s->t_last[t] = -1;
  }
  int64_t live = 0, peak = 0;
  for (int i = 0; i < n; i++) peak = max64(peak, live += delta[i]);
  return peak;
}

GtGroup gt_make_group(GtSchedule *s, const int *ops, int nops) {
  const GsGraph *g = s->g;
  GtGroup gr;
  memset(&gr, 0, sizeof gr);
  gr.alive = 1;
  gr.nops = nops;
  gr.ops = arena_alloc(s->arena, sizeof(int) * (size_t)nops);
  memcpy(gr.ops, ops, sizeof(int) * (size_t)nops);
  s->stamp++;
  for (int i = 0; i < nops; i++) {
    gs_assert(i == 0 || ops[i] > ops[i - 1]);
    s->op_mark[ops[i]] = s->stamp;
  }
  int nouts = 0;
  int *outs = arena_alloc(s->arena, sizeof(int) * (size_t)(nops * GS_MAX_OPERANDS));
  for (int i = 0; i < nops; i++) {
    const GsOp *o = &g->ops[ops[i]];
    gr.peak = max64(gr.peak, s->op_ws[ops[i]]);
    for (int k = 0; k < o->nout; k++) {
      int t = o->out[k];
      int external = s->cons_start[t] == s->cons_start[t + 1]; /* graph output */
      for (int c = s->cons_start[t]; c < s->cons_start[t + 1]; c++)
        if (s->op_mark[s->cons_ops[c]] != s->stamp) external = 1;
      if (external) outs[nouts++] = t;
    }
  }
  gs_assert(nouts > 0);
  gr.nouts = nouts;
  gr.outs = outs;
  if (s->opt.footprint == GT_FOOT_LIVE) gr.peak = live_peak(s, &gr);
  gr.out = outs[0];
  for (int i = 1; i < nouts; i++)
    if (graph_tensor_bytes(&g->tensors[outs[i]]) > graph_tensor_bytes(&g->tensors[gr.out])) gr.out = outs[i];
  gt_compute_group_splitinfo(s, &gr);
  return gr;
}

int gt_add_group(GtSchedule *s, const GtGroup *gr) {
  if (s->ngroups == s->cap_groups) {
    int cap = s->cap_groups ? 2 * s->cap_groups : 64;
    GtGroup *n = arena_alloc(s->arena, sizeof *n * (size_t)cap);
    if (s->ngroups) memcpy(n, s->groups, sizeof *n * (size_t)s->ngroups);
    s->groups = n;
    s->cap_groups = cap;
  }
  int id = s->ngroups++;
  s->groups[id] = *gr;
  for (int i = 0; i < gr->nops; i++) s->group_of_op[gr->ops[i]] = id;
  return id;
}

static int add_distinct(int *out, int n, int cap, int v) {
  for (int i = 0; i < n; i++)
    if (out[i] == v) return n;
  gs_assert(n < cap);
  out[n] = v;
  return n + 1;
}

static void sort_by_topo(const GtSchedule *s, int *v, int n) {
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && s->groups[v[j]].topo < s->groups[v[j - 1]].topo; j--) {
      int t = v[j];
      v[j] = v[j - 1];
      v[j - 1] = t;
    }
}

int gt_group_producers(const GtSchedule *s, int gid, int *out, int cap) {
  const GtGroup *gr = &s->groups[gid];
  int n = 0;
  for (int i = 0; i < gr->nops; i++) {
    const GsOp *o = &s->g->ops[gr->ops[i]];
    for (int k = 0; k < o->nin; k++) {
      int p = s->g->tensors[o->in[k]].producer;
      if (p >= 0 && s->group_of_op[p] != gid) n = add_distinct(out, n, cap, s->group_of_op[p]);
    }
  }
  sort_by_topo(s, out, n);
  return n;
}

int gt_group_consumers(const GtSchedule *s, int gid, int *out, int cap) {
  const GtGroup *gr = &s->groups[gid];
  int n = 0;
  for (int i = 0; i < gr->nops; i++) {
    const GsOp *o = &s->g->ops[gr->ops[i]];
    for (int k = 0; k < o->nout; k++) {
      int t = o->out[k];
      for (int c = s->cons_start[t]; c < s->cons_start[t + 1]; c++) {
        int q = s->group_of_op[s->cons_ops[c]];
        if (q != gid) n = add_distinct(out, n, cap, q);
      }
    }
  }
  sort_by_topo(s, out, n);
  return n;
}

/* O(G^2) per call and called after every merge: fine while G (groups, <= ops) is a few
 * hundred, as in every zoo model; bench_gt.sh watches it. */
void gt_fill_live_groups(GtSchedule *s) {
  int n = 0;
  for (int i = 0; i < s->ngroups; i++)
    if (s->groups[i].alive) n++;
  if (!s->live || n > s->nlive) s->live = arena_alloc(s->arena, sizeof(int) * (size_t)(n + 1));
  /* scratch sized for every group there can be (ninit + merges <= 2 * nops) */
  gs_assert(s->ngroups <= s->cap_scratch);
  int *ids = s->scratch[0], *indeg = s->scratch[1], *nb = s->scratch[2];
  int m = 0;
  for (int i = 0; i < s->ngroups; i++)
    if (s->groups[i].alive) {
      ids[m++] = i;
      s->groups[i].topo = -1;
    }
  /* indegree by producer groups (topo not valid yet: gt_group_producers' sort is harmless) */
  for (int i = 0; i < m; i++) indeg[ids[i]] = gt_group_producers(s, ids[i], nb, s->ngroups);
  int done = 0;
  while (done < m) {
    int pick = -1;
    for (int i = 0; i < m; i++) {
      int gid = ids[i];
      if (s->groups[gid].topo >= 0 || indeg[gid] != 0) continue;
      if (pick < 0 || s->groups[gid].ops[0] < s->groups[pick].ops[0]) pick = gid;
    }
    if (pick < 0) die("graphturbo: the group graph has a cycle");
    s->groups[pick].topo = done;
    s->live[done++] = pick;
    int nc = gt_group_consumers(s, pick, nb, s->ngroups);
    for (int i = 0; i < nc; i++) indeg[nb[i]]--;
  }
  s->nlive = m;
}

/* ---- the pipeline ---- */

/* sizeof(LB) of Alg. 1: --gt-lb-bytes, else the config's (arch_lb_bytes). */
static int64_t lb_capacity(const GsArch *a, const GtOptions *o) {
  return o->lb_bytes > 0 ? o->lb_bytes : arch_lb_bytes(a, o->lb_scope == GT_LB_CORE);
}

static void setup(GtSchedule *s) {
  const GsGraph *g = s->g;
  size_t nt = (size_t)g->ntensors, no = (size_t)g->nops;
  s->group_of_op = arena_alloc(s->arena, sizeof(int) * (no + 1));
  s->op_mark = arena_alloc(s->arena, sizeof(int) * (no + 1));
  s->op_ws = arena_alloc(s->arena, sizeof(int64_t) * (no + 1));
  s->req = arena_alloc(s->arena, sizeof(GtReq) * (nt + 1));
  s->touched = arena_alloc(s->arena, sizeof(int) * (nt + 1));
  s->cons_start = arena_alloc(s->arena, sizeof(int) * (nt + 1));
  s->t_first = arena_alloc(s->arena, sizeof(int) * (nt + 1));
  s->t_last = arena_alloc(s->arena, sizeof(int) * (nt + 1));
  for (size_t i = 0; i < nt; i++) s->t_first[i] = s->t_last[i] = -1;
  s->cap_scratch = 2 * (int)no + 2;
  for (int i = 0; i < 3; i++) s->scratch[i] = arena_alloc(s->arena, sizeof(int) * (size_t)s->cap_scratch);
  int total = 0;
  for (size_t i = 0; i < no; i++) total += g->ops[i].nin;
  s->cons_ops = arena_alloc(s->arena, sizeof(int) * (size_t)(total + 1));
  int *cnt = arena_alloc(s->arena, sizeof(int) * (nt + 1));
  for (size_t i = 0; i < no; i++)
    for (int k = 0; k < g->ops[i].nin; k++) {
      int t = g->ops[i].in[k];
      int dup = 0;
      for (int j = 0; j < k; j++) dup |= g->ops[i].in[j] == t;
      if (!dup) cnt[t]++;
    }
  for (size_t t = 0; t < nt; t++) s->cons_start[t + 1] = s->cons_start[t] + cnt[t];
  memset(cnt, 0, sizeof(int) * nt);
  for (size_t i = 0; i < no; i++) {
    const GsOp *o = &g->ops[i];
    int64_t ws = 0;
    for (int k = 0; k < o->nin; k++) {
      int t = o->in[k], dup = 0;
      for (int j = 0; j < k; j++) dup |= o->in[j] == t;
      if (dup) continue;
      s->cons_ops[s->cons_start[t] + cnt[t]++] = (int)i;
      ws += graph_tensor_bytes(&g->tensors[t]);
    }
    for (int k = 0; k < o->nout; k++) ws += graph_tensor_bytes(&g->tensors[o->out[k]]);
    s->op_ws[i] = ws;
  }
  for (size_t i = 0; i < nt; i++) s->req[i].kind = GT_REQ_NONE;
  s->infer_q = -1;
}

/* Runs one pass and the checker; returns 1 when the pipeline stops here. */
static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int run(GtSchedule *s, GtPass p, void (*pass)(GtSchedule *), GtPass last) {
  double t0 = now_ms();
  pass(s);
  s->pass_ms[p] = now_ms() - t0;
  s->last_pass = gt_pass_name(p);
  if (s->opt.check) gt_check(s, p);
  return p >= last;
}

GtSchedule *gt_schedule(const GsGraph *g, const GsArch *a, const GtOptions *o, GtPass last) {
  GsArena *arena = arena_new();
  GtSchedule *s = arena_alloc(arena, sizeof *s);
  s->arena = arena;
  s->g = g;
  s->arch = a;
  if (o) s->opt = *o;
  else gt_options_default(&s->opt);
  s->lb_capacity = lb_capacity(a, &s->opt);
  s->cores = a->cores_per_cluster;
  if (s->cores <= 0)
    for (int i = 0; i < a->ncore_kinds; i++) s->cores += a->core_kinds[i].count;
  if (s->cores <= 0) s->cores = 1;
  setup(s);

  if (run(s, GT_PASS_SPLITINFO, gt_compute_splitinfo, last)) return s;
  if (run(s, GT_PASS_GROUP, gt_group_subgraphs, last)) return s;
  if (run(s, GT_PASS_INSTANCES, gt_split_instances, last)) return s;
  if (run(s, GT_PASS_ORDER, gt_order_instances, last)) return s;
  if (run(s, GT_PASS_BIND, gt_bind_instances, last)) return s;
  run(s, GT_PASS_CONCAT, gt_insert_concats, last);
  return s;
}

void gt_free(GtSchedule *s) {
  if (s) arena_free(s->arena);
}

/* ---- invariants ---- */

#define BROKEN(...)                                                                      \
  die("graphturbo: invariant broken after pass '%s': %s", gt_pass_name(p),               \
      arena_printf(s->arena, __VA_ARGS__))

static int64_t slice_extent(const GtSchedule *s, const GtInstance *in, int k) {
  const GsTensor *t = &s->g->tensors[s->groups[in->group].out];
  return k == in->dim ? in->hi - in->lo : t->dim[k];
}

static void check_groups(const GtSchedule *s, GtPass p, int live_only) {
  const GsGraph *g = s->g;
  int *seen = arena_alloc(s->arena, sizeof(int) * ((size_t)g->nops + 1));
  for (int i = 0; i < s->ngroups; i++) {
    const GtGroup *gr = &s->groups[i];
    if (live_only ? !gr->alive : i >= s->ninit) continue;
    for (int j = 0; j < gr->nops; j++) {
      int op = gr->ops[j];
      if (j && op <= gr->ops[j - 1]) BROKEN("group %d: ops not ascending", i);
      if (seen[op]++) BROKEN("op %d is in two groups", op);
      if (live_only && s->group_of_op[op] != i) BROKEN("group_of_op[%d] is stale", op);
    }
    const GtSplit *b = &gr->best;
    for (int k = 0; k < gr->nsplits; k++)
      if (gt_split_better(&gr->splits[k], b)) BROKEN("group %d: best split is not Eq. 1's", i);
    if (b->split && g->tensors[gr->out].dim[b->dim] % b->factor != 0)
      BROKEN("group %d: factor %lld does not divide dim %d", i, (long long)b->factor, b->dim);
    if (b->split && (b->factor + gr->peak - 1) / b->factor > s->lb_capacity)
      BROKEN("group %d: best split does not fit in LB", i);
  }
  for (int op = 0; op < g->nops; op++)
    if (seen[op] != 1) BROKEN("op %d is in no group", op);
  if (!live_only) return;
  int *nb = arena_alloc(s->arena, sizeof(int) * (size_t)s->ngroups);
  for (int i = 0; i < s->nlive; i++) {
    int gid = s->live[i];
    if (s->groups[gid].topo != i) BROKEN("live list and topo disagree at %d", i);
    int np = gt_group_producers(s, gid, nb, s->ngroups);
    for (int j = 0; j < np; j++)
      if (s->groups[nb[j]].topo >= i) BROKEN("group %d precedes its producer %d", gid, nb[j]);
  }
}

static void check_instances(const GtSchedule *s, GtPass p) {
  for (int i = 0; i < s->nlive; i++) {
    const GtGroup *gr = &s->groups[s->live[i]];
    int64_t f = gr->best.split ? gr->best.factor : 1, next = 0;
    for (int k = 0; k < f; k++) {
      const GtInstance *in = &s->insts[s->first_inst[s->live[i]] + k];
      if (in->group != s->live[i] || in->index != k) BROKEN("instances of group %d", s->live[i]);
      if (in->dim >= 0 && in->lo != next) BROKEN("instance %d: slices do not tile", in->index);
      next = in->hi;
    }
    if (gr->best.split && next != s->g->tensors[gr->out].dim[gr->best.dim])
      BROKEN("group %d: slices do not cover the output", s->live[i]);
  }
  for (int e = 0; e < s->nedges; e++) {
    const GtEdge *ed = &s->edges[e];
    const GtInstance *a = &s->insts[ed->from], *b = &s->insts[ed->to];
    if (s->groups[a->group].topo >= s->groups[b->group].topo) BROKEN("edge %d goes backwards", e);
    if (s->g->tensors[ed->tensor].producer < 0 ||
        s->group_of_op[s->g->tensors[ed->tensor].producer] != a->group)
      BROKEN("edge %d: tensor not produced by its source group", e);
  }
}

static void check_order(const GtSchedule *s, GtPass p, const int *order) {
  int *pos = arena_alloc(s->arena, sizeof(int) * ((size_t)s->ninsts + 1));
  for (int i = 0; i < s->ninsts; i++) pos[i] = -1;
  for (int i = 0; i < s->ninsts; i++) {
    if (order[i] < 0 || order[i] >= s->ninsts || pos[order[i]] >= 0)
      BROKEN("order is not a permutation");
    pos[order[i]] = i;
  }
  for (int e = 0; e < s->nedges; e++)
    if (pos[s->edges[e].from] >= pos[s->edges[e].to]) BROKEN("edge %d runs against the order", e);
}

static void check_bind(const GtSchedule *s, GtPass p) {
  for (int i = 0; i < s->ninsts; i++) {
    const GtInstance *in = &s->insts[i];
    const GsTensor *t = &s->g->tensors[s->groups[in->group].out];
    int64_t prod = 1;
    for (int k = 0; k < t->ndim; k++) {
      if (in->bind[k] < 1) BROKEN("instance %d is not bound", i);
      if (slice_extent(s, in, k) % in->bind[k]) BROKEN("instance %d: binding does not divide", i);
      prod *= in->bind[k];
    }
    if (prod > s->cores) BROKEN("instance %d bound to %lld cores", i, (long long)prod);
  }
}

static void check_concat(const GtSchedule *s, GtPass p) {
  for (int x = 0; x < s->nxops; x++) {
    const GtXop *op = &s->xops[x];
    for (int k = 0; k < op->nin; k++)
      if (op->in[k].is_xop ? op->in[k].id >= x : op->in[k].id >= s->ninsts)
        BROKEN("extra op %d reads a later value", x);
    int64_t prod = 1;
    for (int k = 0; k < op->ndim; k++) {
      if (op->bind[k] < 1 || op->shape[k] % op->bind[k]) BROKEN("extra op %d: binding does not divide", x);
      prod *= op->bind[k];
    }
    if (prod > s->cores) BROKEN("extra op %d bound to %lld cores", x, (long long)prod);
    if (op->nusers < 1 || op->users[0] != op->consumer) BROKEN("extra op %d: readers", x);
    if (op->kind == GT_XOP_CONCAT) {
      if (op->nin < 2) BROKEN("concat %d has %d inputs", x, op->nin);
      for (int k = 1; k < op->ninst; k++)
        if (s->insts[op->inst[k]].lo < s->insts[op->inst[k - 1]].hi &&
            s->insts[op->inst[k]].dim == op->dim)
          BROKEN("concat %d: parts out of order", x);
    }
  }
}

void gt_check(const GtSchedule *s, GtPass p) {
  switch (p) {
  case GT_PASS_SPLITINFO: check_groups(s, p, 0); break;
  case GT_PASS_GROUP: check_groups(s, p, 1); break;
  case GT_PASS_INSTANCES: check_groups(s, p, 1); check_instances(s, p); break;
  case GT_PASS_ORDER:
    check_instances(s, p);
    check_order(s, p, s->order_bfs);
    check_order(s, p, s->order_dfs);
    check_order(s, p, s->order_foot);
    if (s->order_opt) check_order(s, p, s->order_opt);
    break;
  case GT_PASS_BIND: check_bind(s, p); break;
  case GT_PASS_CONCAT: check_bind(s, p); check_concat(s, p); break;
  default: break;
  }
}
