/* lower_common.c — the lowering pipeline shared by the tvm and astitch strategies: kernel
 * grouping (with a strategy's fuse rule), unit selection and placement of kernel outputs;
 * lower_run() is the driver (a few lines per step: iteration sizing, the DDR check, emission
 * per iteration, the report's totals), lower_plan() the same planning stopped after a step
 * (--dump-after). Tiling is lower_tiling.c, emission the emitter's (emit.h), which the driver
 * runs once per iteration with l->tally as its accounting sink.
 *
 * Invariants after each pass, checked by lower_check (lower_check.c, which states them in
 * full) after every step (plan(); a violation dies naming the step):
 *   lower_group_kernels:     every non-reshape op is in exactly one kernel; kernels are in an
 *                            order where every operand is produced by an earlier kernel (or a
 *                            graph input).
 *   lower_fill_kernel_units: every kernel's ops have a unit on its core kind that supports the
 *                            dtype.
 *   lower_fill_placement:    every tensor has a level; GB tensors fit the GB with everything live.
 *   lower_fill_tiling:       every kernel's worst-case tile fits the core's tile budget.
 */
#include "lower.h"

#include <stdlib.h>
#include <string.h>

static const char *const sched_names[SCHED_COUNT] = {"tvm", "astitch", "graphturbo"};
const char *lower_sched_name(GsSchedKind k) {
  return (unsigned)k < SCHED_COUNT ? sched_names[k] : "?";
}
int lower_sched_parse(const char *s, GsSchedKind *out) {
  for (int i = 0; i < SCHED_COUNT; i++)
    if (strcmp(s, sched_names[i]) == 0) {
      *out = (GsSchedKind)i;
      return 0;
    }
  return -1;
}

void lower_options_default(GsLowerOptions *o) {
  memset(o, 0, sizeof *o);
  o->sched = SCHED_GRAPHTURBO;
  gt_options_default(&o->gt);
  o->gt_level = GTL_FULL;
  o->gt_spill = GT_SPILL_LONGEST;
  o->gt_stitch = 0.75;
  o->gt_prefetch = GT_PREFETCH_DEFAULT;
  o->gt_prefetch_gb = 1;
  o->gt_cols = 0;
}

/* ---------------- grouping ---------------- */

/* requires: g inferred; maintains: ops order. Fills l->kernels. */
void lower_group_kernels(GsLowered *l, GsFuseRule fuse) {
  GsGraph *g = l->graph;
  int *nuse = arena_alloc(l->arena, sizeof(int) * (size_t)g->ntensors);
  int *user = arena_alloc(l->arena, sizeof(int) * (size_t)g->ntensors);
  int *taken = arena_alloc(l->arena, sizeof(int) * (size_t)g->nops);
  for (int i = 0; i < g->ntensors; i++) user[i] = -1;
  for (int o = 0; o < g->nops; o++)
    for (int i = 0; i < g->ops[o].nin; i++) {
      int t = g->ops[o].in[i];
      nuse[t]++;
      user[t] = o;
    }
  GsKernel *ks = arena_alloc(l->arena, sizeof(GsKernel) * (size_t)(g->nops + 1));
  int nk = 0;
  int *buf = arena_alloc(l->arena, sizeof(int) * (size_t)g->nops);
  for (int h = 0; h < g->nops; h++) {
    if (taken[h] || g->ops[h].kind == OP_RESHAPE) continue;
    int n = 0;
    buf[n++] = h;
    taken[h] = 1;
    const GsTensor *hy = &g->tensors[g->ops[h].out[0]];
    int row_reduce = 0;
    while (g->ops[buf[n - 1]].nout == 1) {
      int cur = g->ops[buf[n - 1]].out[0];
      if (nuse[cur] != 1 || graph_is_output(g, cur)) break;
      int j = user[cur];
      const GsOp *o = &g->ops[j];
      if (taken[j] || o->nout != 1) break;
      const GsTensor *y = &g->tensors[o->out[0]];
      if (graph_tensor_elems(y) != graph_tensor_elems(hy) || y->dtype != hy->dtype) break;
      if (!fuse(l, h, j)) break;
      /* the other operand must exist before the head runs, and be full-size or small */
      int ok = 1;
      for (int i = 0; i < o->nin; i++) {
        int t = o->in[i];
        if (t == cur) continue;
        int p = g->tensors[graph_root(g, t)].producer;
        if (p >= 0 && (p >= h || !taken[p])) ok = 0;
        if (graph_tensor_elems(&g->tensors[t]) != graph_tensor_elems(hy) &&
            graph_tensor_bytes(&g->tensors[t]) > arch_core_tile_budget(l->arch, 0) / 8)
          ok = 0;
      }
      if (!ok) break;
      if (o->kind == OP_LAYERNORM || o->kind == OP_SOFTMAX) row_reduce = 1;
      buf[n++] = j;
      taken[j] = 1;
    }
    GsKernel *k = &ks[nk++];
    memset(k, 0, sizeof *k);
    k->nops = n;
    k->ops = arena_alloc(l->arena, sizeof(int) * (size_t)n);
    memcpy(k->ops, buf, sizeof(int) * (size_t)n);
    k->head = h;
    k->row_reduce = row_reduce;
    k->name = g->ops[h].name ? g->ops[h].name : g->tensors[g->ops[h].out[0]].name;
  }
  l->kernels = ks;
  l->nkernels = nk;
}

/* ---------------- units ---------------- */

int64_t lower_kernel_tile_budget(const GsLowered *l, const GsKernel *k) {
  return k->budget > 0 ? k->budget : arch_core_tile_budget(l->arch, k->core_kind);
}

/* The dtype a unit computes an op of tensor dtype dt in: dt itself when the unit supports it,
 * else -1 (also when the unit has no capability `cap`). gtsim never picks another dtype for a
 * model: lower_check_dtypes() (lower_dtype.c) refuses a model no unit computes, and --dtype
 * casts one (graph_cast). */
static int unit_dtype(const GsUnitKind *u, unsigned cap, GsDtype dt) {
  double r = cap == CAP_MATRIX ? arch_unit_macs_per_cycle(u, dt) : (double)u->lanes[dt];
  return (u->caps & cap) && r > 0 ? (int)dt : -1;
}

/* Best unit of a core kind for a need (CAP_MATRIX or CAP_VECTOR) and dtype: its index in the
 * kind's unit list, or -1. Prefers a unit with only that capability. */
static int find_unit(const GsArch *a, int kind, unsigned cap, GsDtype dt, double *rate) {
  const GsCoreKind *ck = &a->core_kinds[kind];
  int best = -1;
  double br = 0;
  for (int i = 0; i < ck->nunits; i++) {
    const GsUnitKind *u = &a->units[ck->unit[i]];
    int udt = unit_dtype(u, cap, dt);
    if (udt < 0) continue;
    double r =
        cap == CAP_MATRIX ? arch_unit_macs_per_cycle(u, (GsDtype)udt) : (double)u->lanes[udt];
    if (r <= 0) continue;
    if (u->caps != cap) r *= 0.999; /* tie-break towards the dedicated unit */
    if (r > br) {
      br = r;
      best = i;
    }
  }
  if (rate) *rate = br;
  return best;
}

unsigned lower_head_need(const GsGraph *g, int op) {
  switch (lower_op_kind(g, op)) {
  case LK_GEMM: return CAP_MATRIX;
  case LK_VEC: return CAP_VECTOR;
  case LK_GATHER: return g->ops[op].at.bag > 1 ? CAP_VECTOR : 0;
  default: return 0;
  }
}

static GsDtype op_dtype(const GsGraph *g, int op) {
  return g->tensors[g->ops[op].out[0]].dtype;
}

/* requires: kernels; maintains: kernel order. A tail whose unit is missing on the head's core
 * kind is split off into a kernel of its own. */
/* The core kind with the most of what kernel head `op` needs (need: CAP_MATRIX/CAP_VECTOR, 0
 * for copies, which prefer cores with LB) at dtype dt, weighted by the kind's core count; -1
 * if no kind has it. */
static int best_core_kind(const GsArch *a, unsigned need, GsDtype dt) {
  int best = -1;
  double bestr = -1;
  for (int c = 0; c < a->ncore_kinds; c++) {
    double r = 1;
    if (need && find_unit(a, c, need, dt, &r) < 0) continue;
    if (!need && a->core_kinds[c].lb_bytes <= 0) r = 0.5;
    r *= a->core_kinds[c].count;
    if (r > bestr) {
      bestr = r;
      best = c;
    }
  }
  return best;
}

static int no_unit(const GsGraph *g, const GsArch *a, const GsKernel *k, unsigned need, GsDtype dt,
                   GsDiag *d) {
  const GsOp *o = &g->ops[k->head];
  diag_error(d, g->file ? g->file : g->name, o->line, o->col, NULL,
             "op '%s' (%s, %s) needs a %s unit supporting %s; config '%s' has none", k->name,
             graph_opkind_name(o->kind), arch_dtype_name(dt),
             need == CAP_MATRIX ? "matrix" : "vector", arch_dtype_name(dt), a->name);
  return -1;
}

/* Kernel k's ops from split_at on, as a vector kernel of their own on the core kind best for
 * them. */
static int split_tail(const GsLowered *l, GsKernel *k, int split_at, GsKernel *t, GsDiag *d) {
  const GsGraph *g = l->graph;
  memset(t, 0, sizeof *t);
  t->nops = k->nops - split_at;
  t->ops = k->ops + split_at;
  t->head = t->ops[0];
  t->name = g->ops[t->head].name ? g->ops[t->head].name : g->tensors[g->ops[t->head].out[0]].name;
  for (int i = 0; i < t->nops; i++)
    if (g->ops[t->ops[i]].kind == OP_LAYERNORM || g->ops[t->ops[i]].kind == OP_SOFTMAX)
      t->row_reduce = 1;
  k->nops = split_at;
  k->row_reduce = 0;
  GsDtype tdt = op_dtype(g, t->head);
  int tb = best_core_kind(l->arch, CAP_VECTOR, tdt);
  if (tb < 0) {
    const GsOp *o = &g->ops[t->head];
    diag_error(d, g->file ? g->file : g->name, o->line, o->col, NULL,
               "op '%s' (%s) needs a vector unit supporting %s; config '%s' has none", t->name,
               graph_opkind_name(o->kind), arch_dtype_name(tdt), l->arch->name);
    return -1;
  }
  t->core_kind = tb;
  t->unit_head = t->unit_tail = Q_UNIT0 + find_unit(l->arch, tb, CAP_VECTOR, tdt, NULL);
  return 0;
}

const GsUnitKind *lower_kernel_unit(const GsArch *a, const GsKernel *k, int q) {
  return &a->units[a->core_kinds[k->core_kind].unit[q - Q_UNIT0]];
}

/* Kernel k's compute dtypes on its units and its FLOP/MAC counts. */
static void kernel_dtypes_costs(const GsLowered *l, GsKernel *k) {
  const GsArch *a = l->arch;
  const GsGraph *g = l->graph;
  GsDtype hdt = op_dtype(g, k->head);
  k->cdt_head = k->cdt_tail = hdt;
  if (k->unit_head >= 0) {
    const GsUnitKind *u = lower_kernel_unit(a, k, k->unit_head);
    int ch = unit_dtype(u, lower_head_need(g, k->head), hdt);
    k->cdt_head = ch < 0 ? hdt : (GsDtype)ch; /* lower_check_dtypes: the unit has hdt */
    const GsUnitKind *ut = lower_kernel_unit(a, k, k->unit_tail);
    int ct = unit_dtype(ut, CAP_VECTOR, hdt);
    k->cdt_tail = k->nops > 1 && ct >= 0 ? (GsDtype)ct : k->cdt_head;
  }
  k->flops = k->macs = 0;
  for (int i = 0; i < k->nops; i++) {
    GsOpCost c = graph_op_cost(g, k->ops[i]);
    k->flops += c.flops;
    k->macs += c.macs;
  }
}

int lower_fill_kernel_units(GsLowered *l, GsDiag *d) {
  const GsArch *a = l->arch;
  GsGraph *g = l->graph;
  if (lower_check_dtypes(g, a, d)) return -1;
  GsKernel *out = arena_alloc(l->arena, sizeof(GsKernel) * (size_t)(2 * l->nkernels + 1));
  int n = 0;
  for (int ki = 0; ki < l->nkernels; ki++) {
    GsKernel k = l->kernels[ki];
    unsigned need = lower_head_need(g, k.head);
    GsDtype dt = op_dtype(g, k.head);
    int best = best_core_kind(a, need, dt);
    if (best < 0) return no_unit(g, a, &k, need, dt, d);
    k.core_kind = best;
    k.unit_head = need ? Q_UNIT0 + find_unit(a, best, need, dt, NULL) : -1;
    k.unit_tail = k.unit_head;
    int split_at = k.nops;
    if (k.nops > 1) {
      int tu = find_unit(a, best, CAP_VECTOR, op_dtype(g, k.ops[1]), NULL);
      if (tu < 0) split_at = 1;
      else k.unit_tail = Q_UNIT0 + tu;
    }
    int split = split_at < k.nops; /* the tail has no vector unit beside the head's */
    GsKernel t;
    if (split && split_tail(l, &k, split_at, &t, d)) return -1;
    out[n++] = k;
    if (split) out[n++] = t;
  }
  l->kernels = out;
  l->nkernels = n;
  for (int ki = 0; ki < n; ki++) kernel_dtypes_costs(l, &l->kernels[ki]);
  return 0;
}

/* ---------------- placement ---------------- */

int lower_kernel_split_clusters(const GsLowered *l, const GsKernel *k) {
  const GsGraph *g = l->graph;
  const GsArch *a = l->arch;
  if (lower_op_kind(g, k->head) == LK_COPY) {
    const GsOp *o = &g->ops[k->head];
    const GsTensor *big = &g->tensors[o->kind == OP_CONCAT ? o->out[0] : o->in[0]];
    int ax = o->at.axis < 0 ? big->ndim + o->at.axis : o->at.axis;
    return ax >= 1 && big->dim[0] % g->batch == 0 && a->nclusters > 1;
  }
  GsGeom gm;
  lower_fill_geom(g, k->head, a, &gm);
  return gm.rows_per_sample > 0 && a->nclusters > 1;
}

/* astitch and graphturbo split the GB: the largest gemm weights first (up to three quarters of
 * the area), kernel outputs below them, [0, gb_tensor_bytes) */
void lower_fill_gb_split(GsLowered *l) {
  const GsArch *a = l->arch;
  const GsGraph *g = l->graph;
  int64_t top = a->gb_bytes;
  for (int i = 0; i < a->ncore_kinds; i++)
    if (a->core_kinds[i].lb_bytes <= 0) top = a->gb_bytes / 4 * 3;
  int64_t maxw = 0;
  for (int ki = 0; ki < l->nkernels; ki++)
    if (lower_op_kind(g, l->kernels[ki].head) == LK_GEMM)
      maxw = max64(maxw, lower_op_weight_bytes(g, l->kernels[ki].head));
  maxw = min64(maxw, top / 4 * 3);
  l->gb_tensor_bytes = (top - maxw) / 64 * 64;
}

static int64_t cluster_share_samples(const GsLowered *l) {
  int64_t b = l->graph->batch, d = l->arch->nclusters;
  return (b + d - 1) / d;
}

int64_t lower_gb_tensor_bytes(const GsLowered *l, int t) {
  return graph_tensor_bytes(&l->graph->tensors[t]) / l->graph->batch * cluster_share_samples(l);
}

/* requires: units; fills l->place (levels, producers, last consumers, GB offsets) and the
 * kernels' split_clusters. */
int lower_fill_placement(GsLowered *l) {
  GsGraph *g = l->graph;
  const GsArch *a = l->arch;
  if (!l->place) l->place = arena_alloc(l->arena, sizeof(GsTensorPlace) * (size_t)g->ntensors);
  GsTensorPlace *pl = l->place;
  int *kof = arena_alloc(l->arena, sizeof(int) * (size_t)g->nops);
  for (int o = 0; o < g->nops; o++) kof[o] = -1;
  for (int ki = 0; ki < l->nkernels; ki++) {
    GsKernel *k = &l->kernels[ki];
    for (int i = 0; i < k->nops; i++) kof[k->ops[i]] = ki;
    k->split_clusters = lower_kernel_split_clusters(l, k);
  }
  for (int t = 0; t < g->ntensors; t++) {
    pl[t].level = LVL_DDR;
    pl[t].want = LVL_DDR;
    pl[t].alias_of = -1;
    pl[t].kernel = -1;
    pl[t].last_kernel = -1;
    pl[t].gb_offset = 0;
  }
  for (int o = 0; o < g->nops; o++) {
    const GsOp *op = &g->ops[o];
    if (op->kind == OP_RESHAPE) {
      pl[op->out[0]].alias_of = graph_root(g, op->in[0]);
      continue;
    }
    for (int j = 0; j < op->nout; j++) pl[op->out[j]].kernel = kof[o];
  }
  for (int o = 0; o < g->nops; o++) {
    const GsOp *op = &g->ops[o];
    if (op->kind == OP_RESHAPE) continue;
    for (int i = 0; i < op->nin; i++) {
      int r = graph_root(g, op->in[i]);
      if (kof[o] > pl[r].last_kernel) pl[r].last_kernel = kof[o];
    }
  }
  /* fused intermediates: produced and consumed inside one kernel */
  for (int ki = 0; ki < l->nkernels; ki++) {
    GsKernel *k = &l->kernels[ki];
    for (int i = 0; i + 1 < k->nops; i++) pl[g->ops[k->ops[i]].out[0]].level = LVL_LB;
  }
  for (int t = 0; t < g->ntensors; t++) {
    if (pl[t].alias_of >= 0) pl[t].level = LVL_NONE;
    pl[t].want = pl[t].level;
  }
  /* astitch: kernel outputs to GB where they fit (lower_astitch.c); tvm: all in DDR */
  lower_fill_gb_split(l);
  if (l->opt.sched == SCHED_ASTITCH && a->gb_bytes > 0) lower_place_astitch(l, kof);
  return 0;
}

/* ---------------- driver ---------------- */

static const char *const step_names[LOWER_NSTEPS] = {"kernels",   "units",  "slices",
                                                     "placement", "tiling", "staging"};
const char *lower_step_name(LowerStep s) {
  return (unsigned)s < LOWER_NSTEPS ? step_names[s] : "?";
}
int lower_step_parse(const char *s, LowerStep *out) {
  for (int i = 0; i < LOWER_NSTEPS; i++)
    if (strcmp(s, step_names[i]) == 0) {
      *out = (LowerStep)i;
      return 0;
    }
  return -1;
}
int lower_step_runs(GsSchedKind k, LowerStep s) {
  if ((unsigned)s >= LOWER_NSTEPS) return 0;
  return k == SCHED_GRAPHTURBO || (s != LOWER_SLICES && s != LOWER_STAGING);
}

LowerStep lower_last_step(GsSchedKind k) {
  return lower_step_runs(k, LOWER_STAGING) ? LOWER_STAGING : LOWER_TILING;
}

/* lower_fill_placement and lower_fill_tiling, each checked (tvm, astitch; also their re-run for
 * a smaller last iteration). */
static int place_and_tile(GsLowered *l, LowerStep stop, GsDiag *d) {
  if (lower_fill_placement(l)) return -1;
  lower_check_step(l, LOWER_PLACEMENT);
  if (stop == LOWER_PLACEMENT) return 0;
  if (lower_fill_tiling(l, d)) return -1;
  if (l->w_kept) lower_fill_weights_kept(l); /* a re-plan: the kept weights stay */
  lower_check_step(l, LOWER_TILING);
  return 0;
}

/* tvm, astitch: the weights kept in the GB across iterations, decided on the first iteration's
 * plan once the iterations are known (lower_wkeep.c), and checked with the tiling step. */
static void keep_weights(GsLowered *l) {
  if (l->opt.sched == SCHED_GRAPHTURBO) return;
  lower_fill_weights_kept(l);
  lower_check_step(l, LOWER_TILING);
}

/* A kernel shares data across clusters: it runs on cluster 0 alone, or reads a tensor whole. */
static int shares_clusters(const GsLowered *l, int ki) {
  const GsKernel *k = &l->kernels[ki];
  const GsGraph *g = l->graph;
  if (!k->split_clusters && l->arch->nclusters > 1) return 1;
  for (int j = 0; j < k->nops; j++)
    for (int i = 0; i < g->ops[k->ops[j]].nin; i++)
      if (lower_op_input_whole(g, k->ops[j], i) && g->tensors[g->ops[k->ops[j]].in[i]].producer >= 0)
        return 1;
  return 0;
}

/* Kernels that run on every cluster over its own samples need no other cluster, so a cluster
 * barrier ends them; a kernel that shares data across clusters is fenced by chip barriers on
 * both sides. An iteration's last kernel ends with a chip barrier: its DDR is freed and the
 * next one's allocated by cluster 0's queue. Only plans whose clusters run independently
 * (dma_by_sem) use cluster barriers; tvm and astitch end every kernel at a chip barrier. */
void lower_fill_barriers(GsLowered *l) {
  for (int ki = 0; ki < l->nkernels; ki++) {
    GsKernel *k = &l->kernels[ki];
    int chip = !l->dma_by_sem || ki == l->nkernels - 1 || shares_clusters(l, ki) ||
               (ki + 1 < l->nkernels && shares_clusters(l, ki + 1));
    k->end_scope = chip ? SCOPE_CHIP : SCOPE_CLUSTER;
  }
}

/* Steps 1-4 (lower.h) up to and including `stop`, each followed by its checker. */
static int plan(GsLowered *l, LowerStep stop, GsDiag *d) {
  int rc;
  if (l->opt.sched == SCHED_GRAPHTURBO) {
    rc = gt_plan(l, stop, d);
  } else {
    if (l->opt.sched == SCHED_TVM) lower_group_kernels_tvm(l);
    else lower_group_kernels_astitch(l);
    lower_check_step(l, LOWER_KERNELS);
    if (stop == LOWER_KERNELS) return 0;
    if (lower_fill_kernel_units(l, d)) return -1;
    lower_check_step(l, LOWER_UNITS);
    if (stop == LOWER_UNITS) return 0;
    rc = place_and_tile(l, stop, d);
  }
  if (rc == 0 && l->kernels) lower_fill_barriers(l);
  return rc;
}

/* The cores per cluster of each kind the run's queues serve: the most any kernel of the first
 * iteration's plan uses; a re-plan for a smaller last iteration partitions over these. */
static void fix_active_cores(GsLowered *l) {
  for (int ki = 0; ki < l->nkernels; ki++) {
    const GsKernel *k = &l->kernels[ki];
    int used = k->pr * k->pc;
    if (used > l->active_cores[k->core_kind]) l->active_cores[k->core_kind] = used;
  }
}

/* Drops the plan (everything in the arena) before planning again. */
static void plan_reset(GsLowered *l) {
  arena_free(l->arena);
  l->arena = arena_new();
  l->place = NULL;
  l->nnotes = 0; /* the notes, slices and instances lived in the arena */
  l->notes = NULL;
  l->nslices = l->ninsts = 0;
  l->slices = NULL;
  l->insts = NULL;
}

/* Bytes one iteration keeps in DDR: its DDR tensors and every op's weights. */
static int64_t iteration_ddr_bytes(const GsLowered *l) {
  const GsGraph *g = l->graph;
  int64_t foot = 0;
  for (int t = 0; t < g->ntensors; t++)
    if (l->place[t].level == LVL_DDR) foot += graph_tensor_bytes(&g->tensors[t]);
  for (int op = 0; op < g->nops; op++) foot += lower_op_weight_bytes(g, op);
  return foot;
}

/* Iterations: each processes P samples per cluster (P·D in all, the last one the rest). When
 * --batch-per-cluster is not given, P is the whole share unless one iteration's DDR footprint
 * exceeds the DDR capacity; then P halves until it fits. Leaves the first iteration's plan. */
static int size_iterations(GsLowered *l, GsDiag *d) {
  const GsLowerOptions *o = &l->opt;
  int64_t B = l->batch, D = l->arch->nclusters, share = ceil_div64(B, D);
  int64_t P = o->batch_per_cluster > 0 ? min64(o->batch_per_cluster, share) : share;
  for (;;) {
    if (graph_infer(l->graph, min64(B, P * D), d)) return -1;
    if (plan(l, LOWER_STAGING, d)) return -1;
    if (o->batch_per_cluster > 0 || iteration_ddr_bytes(l) <= l->arch->ddr_capacity_bytes ||
        P == 1)
      break;
    P = ceil_div64(P, 2);
    plan_reset(l);
  }
  l->per_cluster = P;
  l->iterations = (int)ceil_div64(B, P * D);
  return 0;
}

/* Weights, whole-batch inputs and outputs live in DDR for the whole run: a user error when
 * they do not fit. */
static int check_ddr_fixed(const GsLowered *l, GsDiag *d) {
  const GsGraph *g = l->graph;
  const GsArch *a = l->arch;
  int64_t B = l->batch, fixed = 0;
  for (int op = 0; op < g->nops; op++) fixed += lower_op_weight_bytes(g, op);
  for (int i = 0; i < g->ninputs; i++)
    fixed += graph_tensor_bytes(&g->tensors[g->inputs[i]]) / g->batch * B;
  for (int i = 0; i < g->noutputs; i++)
    fixed += graph_tensor_bytes(&g->tensors[g->outputs[i]]) / g->batch * B;
  if (fixed <= a->ddr_capacity_bytes) return 0;
  diag_error(d, g->file ? g->file : g->name, 0, 0, NULL,
             "model '%s' needs %lld bytes of DDR for its weights, inputs and outputs at "
             "batch %lld; config '%s' has %lld (ddr.capacity_mib)",
             g->name, (long long)fixed, (long long)B, a->name, (long long)a->ddr_capacity_bytes);
  return -1;
}

/* Step 5 once per iteration; a smaller last iteration binds the batch again and re-plans. */
static int emit_iterations(GsLowered *l, GsDiag *d) {
  GsGraph *g = l->graph;
  int64_t done = 0, B = l->batch, PD = l->per_cluster * l->arch->nclusters;
  fix_active_cores(l);
  GsEmitter *em = emit_new(l, l->prog, &l->tally);
  int rc = 0;
  for (int it = 0; it < l->iterations && rc == 0; it++) {
    int64_t bit = min64(B - done, PD);
    if (bit != g->batch) {
      rc = graph_infer(g, bit, d);
      if (rc == 0 && l->opt.sched == SCHED_GRAPHTURBO) rc = plan(l, LOWER_STAGING, d);
      else if (rc == 0 && (rc = place_and_tile(l, LOWER_TILING, d)) == 0) lower_fill_barriers(l);
      if (rc) break;
    }
    emit_iteration(em, l, done, it);
    done += bit;
  }
  emit_delete(em);
  return rc;
}

/* Peak FLOP/s: every matrix and vector unit of the chip at the fastest compute dtype the
 * program uses on it (a MAC or a vector lane-op is 2 FLOP). */
static double peak_flops(const GsLowered *l) {
  const GsArch *a = l->arch;
  double peak = 0;
  for (int ck = 0; ck < a->ncore_kinds; ck++)
    for (int i = 0; i < a->core_kinds[ck].nunits; i++) {
      const GsUnitKind *u = &a->units[a->core_kinds[ck].unit[i]];
      double best = 0;
      for (int ki = 0; ki < l->nkernels; ki++) {
        GsDtype ds[2] = {l->kernels[ki].cdt_head, l->kernels[ki].cdt_tail};
        for (int j = 0; j < 2; j++) {
          double m = (u->caps & CAP_MATRIX) ? 2 * arch_unit_macs_per_cycle(u, ds[j]) : 0;
          double v = (u->caps & CAP_VECTOR) ? 2.0 * u->lanes[ds[j]] : 0;
          if (m > best) best = m;
          if (v > best) best = v;
        }
      }
      peak += best * a->core_kinds[ck].count * a->nclusters * a->clock_mhz * 1e6;
    }
  return peak;
}

/* The report's totals at the whole batch: FLOPs, compulsory and moved DDR bytes, peak FLOP/s,
 * op outputs by level (Table 3). */
static int report_totals(GsLowered *l, GsDiag *d) {
  GsGraph *g = l->graph;
  if (g->batch != l->batch && graph_infer(g, l->batch, d)) return -1;
  l->total_flops = 0;
  l->compulsory_ddr_bytes = 0;
  for (int op = 0; op < g->nops; op++) {
    GsOpCost c = graph_op_cost(g, op);
    l->total_flops += c.flops;
    l->compulsory_ddr_bytes += lower_op_compulsory_weight_bytes(g, op);
  }
  for (int i = 0; i < g->ninputs; i++) l->compulsory_ddr_bytes += graph_tensor_bytes(&g->tensors[g->inputs[i]]);
  for (int i = 0; i < g->noutputs; i++) l->compulsory_ddr_bytes += graph_tensor_bytes(&g->tensors[g->outputs[i]]);
  l->peak_flops = peak_flops(l);
  l->outputs_ddr = l->outputs_gb = l->outputs_lb = 0;
  for (int t = 0; t < g->ntensors; t++) {
    if (g->tensors[t].producer < 0) continue;
    switch (l->place[t].level) {
    case LVL_DDR: l->outputs_ddr++; break;
    case LVL_GB: l->outputs_gb++; break;
    case LVL_LB: l->outputs_lb++; break;
    default: break;
    }
  }
  l->ddr_read = l->ddr_write = 0;
  l->spills = l->spill_bytes = 0;
  for (int ti = 0; ti < l->tally.ntasks; ti++) {
    l->ddr_read += l->tally.task[ti].ddr_read;
    l->ddr_write += l->tally.task[ti].ddr_write;
    l->spills += l->tally.task[ti].spills;
    l->spill_bytes += l->tally.task[ti].spill_bytes;
  }
  return 0;
}

static GsLowered *lowered_new(GsGraph *g, const GsArch *a, const GsLowerOptions *o) {
  GsLowered *l = calloc(1, sizeof *l);
  if (!l) die("out of memory");
  l->arena = arena_new();
  l->arch = a;
  l->graph = g;
  l->opt = *o;
  l->batch = o->batch > 0 ? o->batch : (g->default_batch > 0 ? g->default_batch : 1);
  l->prog = prog_new();
  return l;
}

GsLowered *lower_run(GsGraph *g, const GsArch *a, const GsLowerOptions *o, GsDiag *d) {
  GsLowered *l = lowered_new(g, a, o);
  prog_check_attach(o->check, l->prog); /* the check's thread encodes it as it is emitted */
  if (size_iterations(l, d) || check_ddr_fixed(l, d)) {
    lower_free(l);
    return NULL;
  }
  keep_weights(l);
  if (emit_iterations(l, d) || report_totals(l, d)) {
    lower_free(l); /* halts o->check first */
    return NULL;
  }
  l->opt.check = NULL; /* the caller ends it */
  return l;
}

GsLowered *lower_plan(GsGraph *g, const GsArch *a, const GsLowerOptions *o, LowerStep stop,
                      GsDiag *d) {
  gs_assert(lower_step_runs(o->sched, stop));
  GsLowered *l = lowered_new(g, a, o);
  if (size_iterations(l, d) || check_ddr_fixed(l, d)) goto fail;
  /* the sizing planned every step, as lower_run keeps it: planned again only to stop earlier */
  if (stop != lower_last_step(o->sched)) {
    plan_reset(l);
    if (plan(l, stop, d)) goto fail;
  }
  if (stop >= LOWER_TILING) keep_weights(l);
  return l;
fail:
  lower_free(l);
  return NULL;
}

void lower_free(GsLowered *l) {
  if (!l) return;
  prog_check_halt(l->opt.check); /* it reads the program (lower_run's failures free it) */
  emit_tally_free(&l->tally);
  free(l->w_kept);
  lower_tiling_memo_free(l);
  prog_free(l->prog);
  arena_free(l->arena);
  free(l);
}
