/* lower_check.c — the lowering's invariants, checked after every planning step (lower.h,
 * LowerStep) by lower_run and lower_plan (lower_common.c) and gt_plan (lower_gt.c). A violation
 * is a scheduler bug: lower_check reports one error naming the step and the kernel, tensor or
 * slice; lower_check_step makes it an internal error (exit 3).
 *
 * Contract, per step (what the later steps and the emitter rely on):
 *   kernels    every kernel has ops, its head is ops[0], no reshape is in a kernel; every
 *              non-reshape op is in exactly one kernel; every operand (through reshapes) is a
 *              graph input or made by an op of an earlier kernel or earlier in the same kernel;
 *              (astitch) an op that is not memory-intensive is alone in its kernel.
 *   units      the kernels' invariants again (units may split a kernel), and: the core kind
 *              exists; a head that computes has a unit on that core kind with the capability
 *              it needs (matrix, vector) computing its compute dtype; a fused tail has a
 *              vector unit computing the tail's compute dtype.
 *   slices     (graphturbo) the instances' kernels are consecutive and cover the kernels in
 *              order; every op belongs to one group and each instance of a group runs each of
 *              its ops exactly once; every group runs; operands as after kernels; each kernel's
 *              slices are its last op's outputs, read (if at all) by later kernels only; levels
 *              are LB, GB or DDR and never above what the slice wanted; a kernel of an
 *              instance of some samples, or split over the clusters, writes batch-major outputs.
 *   placement  every tensor has a level (tvm/astitch: a reshape output aliases its root and
 *              has none); graph inputs and outputs live in DDR; fused intermediates in LB and
 *              kernel outputs out of it (tvm/astitch); tvm keeps nothing in GB; GB tensors
 *              (graphturbo: GB slices) lie in [0, gb_tensor_bytes) and the bytes alive at any
 *              kernel step fit it; graphturbo LB slices lie in their cores' LBs and a tensor's
 *              level is the lowest of its slices'; a kernel split over the clusters writes
 *              batch-major outputs (its rows are the clusters' samples).
 *   tiling     every kernel uses 1..cores of its kind, has tiles of at least 1 x 1 x 1, and its
 *              worst-case double-buffered tile (lower_tile_need, lower_fill_tiling's own measure)
 *              fits its tile budget (lower_kernel_tile_budget); weights kept in the GB across
 *              iterations (tvm/astitch, lower_wkeep.c) lie in 64-byte aligned, disjoint blocks
 *              above the GB tensors and below the weight area's end, and leave every kernel that
 *              stages its weights per kernel room for them at the weight area's bottom.
 *   staging    (graphturbo) slices live only while read; on every core, LB slices alive
 *              together never share bytes and lie above the tile budget of every kernel they
 *              are alive during; GB blocks (slices, staged weights, drains, loads ahead) lie in
 *              the GB and never share bytes while alive together.
 * Every check is linear in ops, tensors, kernels and slices, except staging's (pairs of live
 * buffers), which is the graphturbo plan's own check of old.
 */
#include "lower.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const GsLowered *l;
  LowerStep step;
  GsDiag *d;
} Chk;

static int broken(const Chk *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int broken(const Chk *c, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  const GsGraph *g = c->l->graph;
  diag_error(c->d, g->file ? g->file : g->name ? g->name : "model", 0, 0, NULL,
             "invariant broken after lowering step '%s' (%s): %s", lower_step_name(c->step),
             lower_sched_name(c->l->opt.sched), msg);
  return -1;
}

static const char *op_label(const GsGraph *g, int op) {
  return g->ops[op].name ? g->ops[op].name : g->tensors[g->ops[op].out[0]].name;
}

static const char *kname(const GsKernel *k) { return k->name ? k->name : "?"; }

static int *scratch(const GsLowered *l, int n, int fill) {
  int *p = arena_alloc(l->arena, sizeof(int) * (size_t)(n + 1));
  for (int i = 0; i <= n; i++) p[i] = fill;
  return p;
}

/* ---------------- kernels ---------------- */

static int check_kernel_ops(const Chk *c) {
  const GsGraph *g = c->l->graph;
  for (int ki = 0; ki < c->l->nkernels; ki++) {
    const GsKernel *k = &c->l->kernels[ki];
    if (k->nops < 1 || !k->ops) return broken(c, "kernel %d '%s' has no ops", ki, kname(k));
    if (k->head != k->ops[0])
      return broken(c, "kernel %d '%s': head is not its first op", ki, kname(k));
    for (int i = 0; i < k->nops; i++) {
      int op = k->ops[i];
      if (op < 0 || op >= g->nops) return broken(c, "kernel %d '%s': op id %d", ki, kname(k), op);
      if (g->ops[op].kind == OP_RESHAPE)
        return broken(c, "kernel %d '%s' runs reshape '%s'", ki, kname(k), op_label(g, op));
    }
  }
  return 0;
}

/* Every non-reshape op in exactly one kernel (tvm/astitch kernels, graphturbo layers). */
static int check_partition(const Chk *c) {
  const GsGraph *g = c->l->graph;
  int *n = scratch(c->l, g->nops, 0), *where = scratch(c->l, g->nops, -1);
  for (int ki = 0; ki < c->l->nkernels; ki++)
    for (int i = 0; i < c->l->kernels[ki].nops; i++) {
      int op = c->l->kernels[ki].ops[i];
      if (n[op]++)
        return broken(c, "op '%s' is in kernels %d and %d", op_label(g, op), where[op], ki);
      where[op] = ki;
    }
  for (int op = 0; op < g->nops; op++)
    if (g->ops[op].kind != OP_RESHAPE && n[op] == 0)
      return broken(c, "op '%s' is in no kernel", op_label(g, op));
  return 0;
}

/* Every operand is a graph input or made before: by an op of an earlier kernel or earlier in
 * the same kernel. */
static int check_operands_first(const Chk *c) {
  const GsGraph *g = c->l->graph;
  int *done = scratch(c->l, g->nops, 0);
  for (int ki = 0; ki < c->l->nkernels; ki++) {
    const GsKernel *k = &c->l->kernels[ki];
    for (int i = 0; i < k->nops; i++) {
      const GsOp *o = &g->ops[k->ops[i]];
      for (int j = 0; j < o->nin; j++) {
        int p = g->tensors[graph_root(g, o->in[j])].producer;
        if (p >= 0 && !done[p])
          return broken(c, "kernel %d '%s': op '%s' reads '%s', which op '%s' makes in no "
                           "earlier kernel", ki, kname(k), op_label(g, k->ops[i]),
                        g->tensors[o->in[j]].name, op_label(g, p));
      }
      done[k->ops[i]] = 1;
    }
  }
  return 0;
}

/* astitch: an op that is not memory-intensive (compute-intensive, a copy, a gather) is a kernel
 * of its own (lower_astitch.c's contract). */
static int check_astitch_alone(const Chk *c) {
  const GsGraph *g = c->l->graph;
  if (c->l->opt.sched != SCHED_ASTITCH) return 0;
  for (int ki = 0; ki < c->l->nkernels; ki++) {
    const GsKernel *k = &c->l->kernels[ki];
    for (int i = 0; i < k->nops; i++)
      if (k->nops > 1 && !lower_op_is_memory_intensive(g->ops[k->ops[i]].kind))
        return broken(c, "kernel %d '%s': op '%s' is not memory-intensive but stitched with "
                         "other ops", ki, kname(k), op_label(g, k->ops[i]));
  }
  return 0;
}

static int check_kernels(const Chk *c) {
  if (check_kernel_ops(c) || check_partition(c) || check_operands_first(c) ||
      check_astitch_alone(c))
    return -1;
  return 0;
}

/* ---------------- units ---------------- */

/* Unit queue q of core kind ck computes dtype dt with capability cap. */
static int unit_ok(const GsArch *a, const GsCoreKind *ck, int q, unsigned cap, GsDtype dt) {
  int i = q - Q_UNIT0;
  if (i < 0 || i >= ck->nunits || (unsigned)dt >= DT_COUNT) return 0;
  const GsUnitKind *u = &a->units[ck->unit[i]];
  if (!(u->caps & cap)) return 0;
  return cap == CAP_MATRIX ? arch_unit_macs_per_cycle(u, dt) > 0 : u->lanes[dt] > 0;
}

static int check_units(const Chk *c) {
  const GsArch *a = c->l->arch;
  const GsGraph *g = c->l->graph;
  for (int ki = 0; ki < c->l->nkernels; ki++) {
    const GsKernel *k = &c->l->kernels[ki];
    if (k->core_kind < 0 || k->core_kind >= a->ncore_kinds ||
        a->core_kinds[k->core_kind].count < 1)
      return broken(c, "kernel %d '%s' has no core kind (%d)", ki, kname(k), k->core_kind);
    const GsCoreKind *ck = &a->core_kinds[k->core_kind];
    unsigned need = lower_head_need(g, k->head);
    if (need && !unit_ok(a, ck, k->unit_head, need, k->cdt_head))
      return broken(c, "kernel %d '%s': head op '%s' has no %s unit computing %s on '%s' cores",
                    ki, kname(k), op_label(g, k->head), need == CAP_MATRIX ? "matrix" : "vector",
                    arch_dtype_name(k->cdt_head), ck->name);
    if (k->nops > 1 && !unit_ok(a, ck, k->unit_tail, CAP_VECTOR, k->cdt_tail))
      return broken(c, "kernel %d '%s': tail op '%s' has no vector unit computing %s on '%s' "
                       "cores", ki, kname(k), op_label(g, k->ops[1]), arch_dtype_name(k->cdt_tail),
                    ck->name);
  }
  return 0;
}

/* ---------------- slices (graphturbo) ---------------- */

static int check_inst_ranges(const Chk *c) {
  const GsLowered *l = c->l;
  int next = 0;
  for (int r = 0; r < l->ninsts; r++) {
    const GtRunInst *ri = &l->insts[r];
    if (ri->k0 != next || ri->k1 < ri->k0)
      return broken(c, "instance g%d.%d runs kernels [%d, %d), not from %d", ri->group, ri->index,
                    ri->k0, ri->k1, next);
    for (int ki = ri->k0; ki < ri->k1 && ki < l->nkernels; ki++) {
      const GsKernel *k = &l->kernels[ki];
      if (k->inst != r || k->s0 != ri->s0 || k->s1 != ri->s1)
        return broken(c, "kernel %d '%s' does not match its instance g%d.%d", ki, kname(k),
                      ri->group, ri->index);
    }
    next = ri->k1;
  }
  if (next != l->nkernels)
    return broken(c, "the instances run %d kernels of %d", next, l->nkernels);
  return 0;
}

/* Each op belongs to one group; each instance of a group runs each of its ops once. */
static int check_inst_ops(const Chk *c) {
  const GsLowered *l = c->l;
  const GsGraph *g = l->graph;
  int ngroups = 0;
  for (int r = 0; r < l->ninsts; r++)
    if (l->insts[r].group >= ngroups) ngroups = l->insts[r].group + 1;
  int *gof = scratch(l, g->nops, -1), *stamp = scratch(l, g->nops, -1);
  int *cnt = scratch(l, l->ninsts, 0), *gcnt = scratch(l, ngroups, 0);
  for (int ki = 0; ki < l->nkernels; ki++) {
    const GsKernel *k = &l->kernels[ki];
    const GtRunInst *ri = &l->insts[k->inst];
    for (int i = 0; i < k->nops; i++) {
      int op = k->ops[i];
      if (gof[op] >= 0 && gof[op] != ri->group)
        return broken(c, "op '%s' runs in groups g%d and g%d", op_label(g, op), gof[op], ri->group);
      if (stamp[op] == k->inst)
        return broken(c, "instance g%d.%d runs op '%s' twice (kernel %d '%s')", ri->group,
                      ri->index, op_label(g, op), ki, kname(k));
      gof[op] = ri->group;
      stamp[op] = k->inst;
      cnt[k->inst]++;
    }
  }
  for (int op = 0; op < g->nops; op++) {
    if (g->ops[op].kind == OP_RESHAPE) continue;
    if (gof[op] < 0) return broken(c, "op '%s' is in no kernel", op_label(g, op));
    gcnt[gof[op]]++;
  }
  for (int r = 0; r < l->ninsts; r++)
    if (cnt[r] != gcnt[l->insts[r].group])
      return broken(c, "instance g%d.%d runs %d of its group's %d ops", l->insts[r].group,
                    l->insts[r].index, cnt[r], gcnt[l->insts[r].group]);
  return 0;
}

static int level_ok(int v) { return v == LVL_DDR || v == LVL_GB || v == LVL_LB; }

static int check_slice(const Chk *c, int ki, const GtSlice *s, int tensor) {
  const GsGraph *g = c->l->graph;
  const char *tn = g->tensors[tensor].name;
  if (s->tensor != tensor || s->kernel != ki)
    return broken(c, "kernel %d '%s': a slice of '%s' is not its output", ki,
                  kname(&c->l->kernels[ki]), tn);
  if (s->last < ki || s->last >= c->l->nkernels || (s->first >= 0 && (s->first <= ki || s->first > s->last)))
    return broken(c, "slice of '%s' by kernel %d: read by kernels %d..%d", tn, ki, s->first, s->last);
  if (!level_ok(s->want) || !level_ok(s->level) || s->level > s->want)
    return broken(c, "slice of '%s' by kernel %d lives at level %d, wanted %d", tn, ki, s->level,
                  s->want);
  return 0;
}

static int check_slices(const Chk *c) {
  const GsLowered *l = c->l;
  const GsGraph *g = l->graph;
  int n = 0;
  for (int ki = 0; ki < l->nkernels; ki++) {
    const GsKernel *k = &l->kernels[ki];
    const GsOp *last = &g->ops[k->ops[k->nops - 1]];
    if (k->slice0 != n || k->nslices != last->nout || n + k->nslices > l->nslices)
      return broken(c, "kernel %d '%s' has slices [%d, +%d), not [%d, +%d)", ki, kname(k),
                    k->slice0, k->nslices, n, last->nout);
    for (int j = 0; j < k->nslices; j++)
      if (check_slice(c, ki, &l->slices[n + j], last->out[j])) return -1;
    n += k->nslices;
  }
  if (n != l->nslices) return broken(c, "%d slices, the kernels make %d", l->nslices, n);
  return 0;
}

/* A kernel that makes some samples' rows only (split over the clusters, or a graphturbo
 * instance's samples [s0, s1)) writes outputs whose rows are the samples' own: batch-major
 * (graph_per_sample). Otherwise the rows it leaves out are rows every sample reads, and the
 * emitter finds no piece holding them. */
static int check_sample_rows(const Chk *c) {
  const GsLowered *l = c->l;
  const GsGraph *g = l->graph;
  for (int ki = 0; ki < l->nkernels; ki++) {
    const GsKernel *k = &l->kernels[ki];
    if ((k->s1 == 0 && !k->split_clusters) || k->nops <= 0) continue;
    const GsOp *last = &g->ops[k->ops[k->nops - 1]];
    for (int j = 0; j < last->nout; j++)
      if (graph_per_sample(g, last->out[j]) <= 0)
        return broken(c, "kernel %d '%s' makes %s of '%s', which is not batch-major", ki,
                      kname(k), k->s1 > 0 ? "some samples' rows" : "a cluster's rows",
                      g->tensors[last->out[j]].name);
  }
  return 0;
}

/* ---------------- placement ---------------- */

/* Bytes alive at every kernel step t (blocks over steps [t0, t1], t0 >= -1) fit cap. */
typedef struct {
  int64_t *sum; /* [nkernels + 2]: step t at t + 1, a difference array until summed */
  int n;
} LiveSum;

static LiveSum live_new(const GsLowered *l) {
  LiveSum s = {arena_alloc(l->arena, sizeof(int64_t) * (size_t)(l->nkernels + 3)), l->nkernels + 2};
  return s;
}
static void live_add(LiveSum *s, int t0, int t1, int64_t bytes) {
  if (t0 < -1) t0 = -1;
  if (t1 > s->n - 2) t1 = s->n - 2;
  if (t1 < t0) return;
  s->sum[t0 + 1] += bytes;
  s->sum[t1 + 2] -= bytes;
}
/* The first step whose live bytes exceed cap, or -2. */
static int live_over(LiveSum *s, int64_t cap, int64_t *bytes) {
  int64_t run = 0;
  for (int i = 0; i < s->n; i++) {
    run += s->sum[i];
    if (run > cap) {
      *bytes = run;
      return i - 1;
    }
  }
  return -2;
}

static int check_io_ddr(const Chk *c) {
  const GsGraph *g = c->l->graph;
  for (int i = 0; i < g->ninputs; i++)
    if (c->l->place[g->inputs[i]].level != LVL_DDR)
      return broken(c, "graph input '%s' is not in DDR", g->tensors[g->inputs[i]].name);
  for (int i = 0; i < g->noutputs; i++)
    if (c->l->place[graph_root(g, g->outputs[i])].level != LVL_DDR)
      return broken(c, "graph output '%s' is not in DDR", g->tensors[g->outputs[i]].name);
  return 0;
}

/* Fused intermediates in LB; (tvm/astitch) kernel outputs out of LB, made by their kernel. */
static int check_kernel_levels(const Chk *c) {
  const GsLowered *l = c->l;
  const GsGraph *g = l->graph;
  int gt = l->opt.sched == SCHED_GRAPHTURBO;
  for (int ki = 0; ki < l->nkernels; ki++) {
    const GsKernel *k = &l->kernels[ki];
    for (int i = 0; i < k->nops; i++) {
      const GsOp *o = &g->ops[k->ops[i]];
      for (int j = 0; j < o->nout; j++) {
        const GsTensorPlace *p = &l->place[o->out[j]];
        int fused = i + 1 < k->nops;
        if (fused ? p->level != LVL_LB : !gt && p->level == LVL_LB)
          return broken(c, "kernel %d '%s': %s '%s' lives at level %d", ki, kname(k),
                        fused ? "fused intermediate" : "output", g->tensors[o->out[j]].name,
                        p->level);
        if (!gt && p->kernel != ki)
          return broken(c, "tensor '%s' is made by kernel %d, its place says %d",
                        g->tensors[o->out[j]].name, ki, p->kernel);
      }
    }
  }
  return 0;
}

/* tvm/astitch: levels, aliases, GB tensors inside the GB's tensor area and fitting it alive. */
static int check_place_gb(const Chk *c) {
  const GsLowered *l = c->l;
  const GsGraph *g = l->graph;
  int64_t cap = l->gb_tensor_bytes;
  LiveSum live = live_new(l);
  for (int t = 0; t < g->ntensors; t++) {
    const GsTensorPlace *p = &l->place[t];
    const char *tn = g->tensors[t].name;
    if (p->alias_of >= 0 ? p->level != LVL_NONE || p->alias_of != graph_root(g, t)
                         : !level_ok(p->level))
      return broken(c, "tensor '%s' has level %d (alias of %d)", tn, p->level, p->alias_of);
    if (p->level != LVL_GB) continue;
    if (l->opt.sched == SCHED_TVM) return broken(c, "tvm keeps tensor '%s' in GB", tn);
    int64_t bytes = lower_gb_tensor_bytes(l, t);
    if (p->gb_offset < 0 || p->gb_offset + bytes > cap)
      return broken(c, "GB tensor '%s' at %lld+%lld is outside [0, %lld)", tn,
                    (long long)p->gb_offset, (long long)bytes, (long long)cap);
    live_add(&live, p->kernel - 1, p->last_kernel, bytes);
  }
  int64_t over = 0;
  int t = live_over(&live, cap, &over);
  if (t > -2)
    return broken(c, "GB tensors alive at kernel %d take %lld bytes of %lld", t, (long long)over,
                  (long long)cap);
  return 0;
}

/* graphturbo: slices inside their LBs and the GB's tensor area; tensors at their slices' lowest
 * level. */
static int check_place_slices(const Chk *c) {
  const GsLowered *l = c->l;
  const GsGraph *g = l->graph;
  int64_t cap = l->gb_tensor_bytes;
  LiveSum live = live_new(l);
  int *low = scratch(l, g->ntensors, LVL_LB + 1);
  for (int t = 0; t < g->ntensors; t++)
    if (!level_ok(l->place[t].level))
      return broken(c, "tensor '%s' has level %d", g->tensors[t].name, l->place[t].level);
  for (int si = 0; si < l->nslices; si++) {
    const GtSlice *s = &l->slices[si];
    const char *tn = g->tensors[s->tensor].name;
    if (!level_ok(s->level) || s->level > s->want)
      return broken(c, "slice %d of '%s' lives at level %d, wanted %d", si, tn, s->level, s->want);
    if (s->level < low[s->tensor]) low[s->tensor] = s->level;
    if (s->level == LVL_GB) {
      if (s->gb_off < 0 || s->gb_off + s->bytes > cap)
        return broken(c, "GB slice %d of '%s' at %lld+%lld is outside [0, %lld)", si, tn,
                      (long long)s->gb_off, (long long)s->bytes, (long long)cap);
      live_add(&live, s->kernel - 1, s->last, s->bytes);
    }
    for (int i = 0; s->level == LVL_LB && i < s->ncores; i++) {
      const GsCoreKind *ck = prog_core_kind(l->arch, s->core0 + i);
      if (s->lb_bytes[i] > 0 && (!ck || s->lb_off[i] < 0 || s->lb_off[i] + s->lb_bytes[i] > ck->lb_bytes))
        return broken(c, "LB slice %d of '%s' on core %d at %lld+%lld is outside its LB", si, tn,
                      s->core0 + i, (long long)s->lb_off[i], (long long)s->lb_bytes[i]);
    }
  }
  for (int si = 0; si < l->nslices; si++) {
    int t = l->slices[si].tensor;
    if (l->place[t].level != low[t])
      return broken(c, "tensor '%s' has level %d, its lowest slice %d", g->tensors[t].name,
                    l->place[t].level, low[t]);
  }
  int64_t over = 0;
  int t = live_over(&live, cap, &over);
  if (t > -2)
    return broken(c, "GB slices alive at kernel %d take %lld bytes of %lld", t, (long long)over,
                  (long long)cap);
  return 0;
}

static int check_placement(const Chk *c) {
  if (!c->l->place) return broken(c, "no tensor has a place");
  if (c->l->opt.sched == SCHED_GRAPHTURBO) {
    if (check_place_slices(c)) return -1;
  } else if (check_place_gb(c)) {
    return -1;
  }
  if (check_io_ddr(c) || check_kernel_levels(c) || check_sample_rows(c)) return -1;
  return 0;
}

/* ---------------- tiling ---------------- */

typedef struct {
  int64_t lo, hi;
  int op;
} KeptBlock;
static int kept_cmp(const void *pa, const void *pb) {
  const KeptBlock *a = pa, *b = pb;
  return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* Weights kept in the GB (lower_wkeep.c): every block lies in the GB above the GB tensors'
 * area in use, no two share a byte, and a kernel that stages its weights per kernel at the
 * weight area's bottom w0 overlaps none. */
static int check_kept(const Chk *c) {
  const GsLowered *l = c->l;
  const GsGraph *g = l->graph;
  KeptBlock *b = arena_alloc(l->arena, sizeof *b * (size_t)(g->nops + 1));
  int n = 0;
  int64_t w0, w1, tensors = lower_gb_tensor_top(l);
  lower_gb_weight_area(l, &w0, &w1);
  for (int op = 0; op < g->nops; op++)
    if (l->w_kept[op] >= 0)
      b[n++] = (KeptBlock){l->w_kept[op], l->w_kept[op] + lower_op_weight_bytes(g, op), op};
  qsort(b, (size_t)n, sizeof *b, kept_cmp);
  int64_t room = w1 - w0; /* free bytes from w0 up */
  for (int i = 0; i < n; i++) {
    if (b[i].lo < tensors || b[i].hi > w1 || b[i].lo % 64 || (i > 0 && b[i].lo < b[i - 1].hi))
      return broken(c, "weights of op '%s' kept at GB [%lld, %lld): outside [%lld, %lld) or over "
                    "another block", op_label(g, b[i].op), (long long)b[i].lo,
                    (long long)b[i].hi, (long long)tensors, (long long)w1);
    if (b[i].hi > w0) room = min64(room, max64(b[i].lo - w0, 0));
  }
  for (int ki = 0; ki < l->nkernels; ki++) {
    const GsKernel *k = &l->kernels[ki];
    int64_t wb = lower_op_weight_bytes(g, k->head);
    if (k->w_via_gb && k->w_gb_off < 0 && l->w_kept[k->head] < 0 && wb > room)
      return broken(c, "kernel %d '%s' stages %lld bytes of weights at GB %lld; kept weights "
                    "leave %lld", ki, kname(k), (long long)wb, (long long)w0, (long long)room);
  }
  return 0;
}

static int check_tiling(const Chk *c) {
  const GsLowered *l = c->l;
  for (int ki = 0; ki < l->nkernels; ki++) {
    const GsKernel *k = &l->kernels[ki];
    int cores = l->arch->core_kinds[k->core_kind].count;
    if (k->pr < 1 || k->pc < 1 || k->pr * k->pc > cores)
      return broken(c, "kernel %d '%s' uses %d x %d cores of %d", ki, kname(k), k->pr, k->pc, cores);
    if (k->tr < 1 || k->tc < 1 || k->tk < 1)
      return broken(c, "kernel %d '%s' has tiles %lld x %lld x %lld", ki, kname(k),
                    (long long)k->tr, (long long)k->tc, (long long)k->tk);
    int64_t need = lower_tile_need(l, k), budget = lower_kernel_tile_budget(l, k);
    if (need > budget)
      return broken(c, "kernel %d '%s': its worst-case tile needs %lld bytes, its budget is %lld",
                    ki, kname(k), (long long)need, (long long)budget);
  }
  return l->w_kept ? check_kept(c) : 0;
}

/* ---------------- staging (graphturbo) ---------------- */

static int alive_lb(const GtSlice *s, int t) { return s->level == LVL_LB && s->kernel <= t && t <= s->last; }

/* LB slice s on core c (of the cluster): its byte range, 0 if it has none there. */
static int lb_range(const GtSlice *s, int c, int64_t *lo, int64_t *hi) {
  int i = c - s->core0;
  if (i < 0 || i >= s->ncores || s->lb_bytes[i] == 0) return 0;
  *lo = s->lb_off[i];
  *hi = *lo + s->lb_bytes[i];
  return 1;
}

/* The GB blocks of the plan over kernel steps: slices (from the kernel before theirs), and at
 * level full the staged weights, drains and loads ahead. Returns how many; *out must hold
 * 2 × (slices + kernels). */
typedef struct {
  int64_t off, bytes;
  int t0, t1;
  const char *what;
  int id;
} GbBlock;

static int gb_blocks(const GsLowered *l, GbBlock *out) {
  int n = 0;
  for (int i = 0; i < l->nslices; i++) {
    const GtSlice *s = &l->slices[i];
    if (s->level == LVL_GB) out[n++] = (GbBlock){s->gb_off, s->bytes, s->kernel - 1, s->last, "slice", i};
    if (s->level == LVL_DDR && s->drain_end >= 0)
      out[n++] = (GbBlock){s->drain_off, s->bytes, s->kernel - 1, s->drain_end, "drain", i};
    if (s->level == LVL_DDR && s->ahead_from >= 0)
      out[n++] = (GbBlock){s->ahead_off, s->bytes, s->ahead_from - 1, s->ahead_until, "load", i};
  }
  for (int ki = 0; ki < l->nkernels; ki++) {
    const GsKernel *k = &l->kernels[ki];
    if (k->w_gb_off >= 0)
      out[n++] = (GbBlock){k->w_gb_off, lower_op_weight_bytes(l->graph, k->head), k->w_from, ki, "weights", ki};
  }
  return n;
}

/* GB blocks lie in the GB (below the staged weights' area unless level full planned the whole
 * GB) and never share bytes while both are alive. */
static int gb_check(const Chk *c) {
  const GsLowered *l = c->l;
  int64_t w0, w1;
  lower_gb_weight_area(l, &w0, &w1);
  int full = l->opt.gt_level == GTL_FULL;
  GbBlock *b = arena_alloc(l->arena, sizeof(GbBlock) * (size_t)(2 * (l->nslices + l->nkernels) + 1));
  int n = gb_blocks(l, b);
  for (int i = 0; i < n; i++) {
    int64_t cap = full || strcmp(b[i].what, "slice") ? w1 : l->gb_tensor_bytes;
    if (b[i].off < 0 || b[i].off + b[i].bytes > cap)
      return broken(c, "GB %s %d at %lld+%lld outside [0, %lld)", b[i].what, b[i].id,
                    (long long)b[i].off, (long long)b[i].bytes, (long long)cap);
    for (int j = i + 1; j < n; j++)
      if (b[i].t0 <= b[j].t1 && b[j].t0 <= b[i].t1 && b[i].off < b[j].off + b[j].bytes &&
          b[j].off < b[i].off + b[i].bytes)
        return broken(c, "GB %s %d and %s %d share bytes while both are alive", b[i].what,
                      b[i].id, b[j].what, b[j].id);
  }
  return 0;
}

/* LB slice a on core ci: above the tile budget of every kernel it is alive during, and no
 * byte shared with a later slice alive at the same time. */
static int lb_check(const Chk *c, int a, int ci) {
  const GsLowered *l = c->l;
  const GtSlice *s = &l->slices[a];
  int64_t lo, hi;
  if (!lb_range(s, ci, &lo, &hi)) return 0;
  for (int t = s->kernel; t <= s->last; t++) {
    const GsKernel *k = &l->kernels[t];
    int c0 = arch_core_base(l->arch, k->core_kind);
    if (ci >= c0 && ci < c0 + k->pr * k->pc && lo < k->budget)
      return broken(c, "LB slice %d on core %d at %lld is below kernel %d's tile budget %lld", a,
                    ci, (long long)lo, t, (long long)k->budget);
  }
  for (int b = a + 1; b < l->nslices; b++) {
    const GtSlice *o = &l->slices[b];
    int64_t lo2, hi2;
    if (o->kernel > s->last || !alive_lb(o, o->kernel) || o->last < s->kernel) continue;
    if (lb_range(o, ci, &lo2, &hi2) && lo < hi2 && lo2 < hi)
      return broken(c, "LB slices %d and %d share bytes of core %d while both are alive", a, b, ci);
  }
  return 0;
}

/* Weights staged in chunks (the emitter's waits rely on it): only weights staged at their own
 * kernel's start, at most GT_STAGE_CHUNKS chunks of one column tile each, columns outer (every
 * core takes the chunks in the order they land); re-tiled kernels still fit their budget. */
static int check_chunks(const Chk *c) {
  const GsLowered *l = c->l;
  for (int ki = 0; ki < l->nkernels; ki++) {
    const GsKernel *k = &l->kernels[ki];
    if (k->w_chunks == 0) continue;
    GsGeom gm;
    lower_fill_geom(l->graph, k->head, l->arch, &gm);
    if (!k->w_via_gb || k->w_from != ki || !k->cols_outer || k->w_chunks > GT_STAGE_CHUNKS ||
        k->w_chunks != ceil_div64(gm.cols, k->tc))
      return broken(c, "kernel %d '%s': %d weight chunks (staged from kernel %d, %s outer, %lld "
                    "columns in tiles of %lld)", ki, kname(k), k->w_chunks, k->w_from,
                    k->cols_outer ? "columns" : "rows", (long long)gm.cols, (long long)k->tc);
  }
  return check_tiling(c);
}

/* What the emitter relies on: slices live only while read; on every core, LB slices alive
 * together never share bytes and lie above the tile budget of every kernel they are alive
 * during; GB blocks alive together never share bytes (gb_check); weight chunks as
 * check_chunks says. */
static int check_staging(const Chk *c) {
  const GsLowered *l = c->l;
  if (check_chunks(c)) return -1;
  for (int a = 0; a < l->nslices; a++) {
    const GtSlice *s = &l->slices[a];
    if (s->last < s->kernel) return broken(c, "slice %d is last read before it is made", a);
    for (int ci = 0; ci < l->arch->cores_per_cluster && s->level == LVL_LB; ci++)
      if (lb_check(c, a, ci)) return -1;
  }
  return gb_check(c);
}

/* ---------------- entry points ---------------- */

int lower_check(const GsLowered *l, LowerStep after, GsDiag *d) {
  Chk c = {l, after, d};
  if (!lower_step_runs(l->opt.sched, after)) return broken(&c, "not a step of this strategy");
  switch (after) {
  case LOWER_KERNELS: return check_kernels(&c);
  case LOWER_UNITS: return check_kernels(&c) || check_units(&c) ? -1 : 0;
  case LOWER_SLICES:
    return check_kernel_ops(&c) || check_inst_ranges(&c) || check_inst_ops(&c) ||
                   check_operands_first(&c) || check_slices(&c) || check_sample_rows(&c)
               ? -1
               : 0;
  case LOWER_PLACEMENT: return check_placement(&c);
  case LOWER_TILING: return check_tiling(&c);
  case LOWER_STAGING: return check_staging(&c);
  default: return broken(&c, "unknown step %d", (int)after);
  }
}

void lower_check_step(const GsLowered *l, LowerStep after) {
  GsDiag d;
  diag_init(&d);
  if (lower_check(l, after, &d))
    die("the %s lowering broke an invariant of step '%s' (a scheduler bug; the error above "
        "names it)", lower_sched_name(l->opt.sched), lower_step_name(after));
}
