/* lower_gt.c — GraphTurbo's kernel generation (paper §4.1–4.3) as a plan for the shared
 * emitter (emit.c, emit_tiles.c). gt_plan() reads top to bottom:
 *
 *   schedule_view        the graph-level passes (gt.c) at the per-cluster batch, up to bind:
 *                        groups, instances, their order and scopes
 *   lower_group_kernels  layers inside each group: an anchor (conv, dense, matmul) with its
 *                        elementwise tail, every other op a layer of its own (the tvm rule, §4.1)
 *   plan_instances       the instances as run: the ladder level (--gt-level), groups that cannot be
 *                        split by samples run whole (a note says so), an order every reader follows
 *   expand_kernels       one kernel per (instance, layer), restricted to the instance's samples
 *   make_slices          what each kernel writes for later kernels (a slice), who reads it last,
 *                        where it should live: LB (stitched, §4.2), GB, or DDR
 *   spill_pass           when the slices alive at a kernel exceed a core's LB (or the GB), the rule
 *                        of §4.3 moves one down a level: the longest-lived first (--gt-spill)
 *   place_pass           offsets: LB top-down in the part of each LB kept for slices, GB bottom-up
 *                        below the staged weights (ivl.h); what does not fit moves down a level
 *   fill_budgets         each kernel's tile budget: the LB below the lowest live slice (§4.1)
 *
 * As lowering steps (lower.h, LowerStep; --dump-after takes the names): kernels = the layers
 * of lower_group_kernels, units, slices = plan_instances + expand_kernels + make_slices, placement
 * and tiling = the loop of spill_pass, place_pass, fill_budgets and lower_fill_tiling, staging =
 * level full's GB plan (plan_gb_full). lower_check.c checks each step's invariants (a violation
 * dies naming the step): every kernel's readers come after the slices they read; a slice's
 * level is LB, GB or DDR and never above what it wanted; LB slices of a core never overlap in
 * bytes while both are alive, nor reach into the tile budget of a kernel they are alive
 * during; GB slices likewise below the staged weights; every kernel's tiles fit its budget.
 * docs/graphturbo.md, "Kernel generation", gives the reason for every decision here.
 */
#include "lower.h"

#include <stdlib.h>
#include <string.h>

#include "ivl.h"

static const char *const ladder_names[GTL_COUNT] = {"gb", "lb", "instances", "full"};
const char *gt_ladder_name(GtLadder v) { return (unsigned)v < GTL_COUNT ? ladder_names[v] : "?"; }
int gt_ladder_parse(const char *s, GtLadder *out) {
  for (int i = 0; i < GTL_COUNT; i++)
    if (strcmp(s, ladder_names[i]) == 0) {
      *out = (GtLadder)i;
      return 0;
    }
  return -1;
}

/* ---------------- the graph-level schedule ---------------- */

typedef struct {
  int group, index, dim;     /* group = topological position */
  int64_t lo, hi;
  GtBufScope scope;
} SchedInst;

typedef struct {
  int ngroups;
  int *op_group;             /* op -> group (topological position) */
  int *factor;               /* group -> instances */
  int ninst;
  SchedInst *inst;           /* in the schedule's order */
  const char *order;
} SchedView;

static int schedule_view(GsLowered *l, SchedView *v, GsDiag *d) {
  GsGraph *g = l->graph;
  int64_t bit = g->batch, share = ceil_div64(bit, l->arch->nclusters);
  if (share != bit && graph_batch_fixed(g)) {
    diag_error(d, g->file ? g->file : g->name, 0, 0, NULL,
               "model '%s' has a fixed batch of %lld: graphturbo schedules one cluster's share "
               "(%lld samples on config '%s'), which a fixed-batch model cannot be bound to; "
               "export it with a symbolic batch dimension, or use --sched tvm or astitch",
               g->name, (long long)bit, (long long)share, l->arch->name);
    return -1;
  }
  if (graph_infer(g, share, d)) return -1;
  /* up to bind, the last pass that writes what is read below (instances, order, scopes): the
   * concat pass's extra ops are not kernels here (docs/graphturbo.md, "Kernel generation"),
   * and on ViT-B/16 it built 1.1 M of them to keep 10 k, a third of the passes' time */
  GtSchedule *s = gt_schedule(g, l->arch, &l->opt.gt, GT_PASS_BIND);
  v->ngroups = s->nlive;
  v->op_group = arena_alloc(l->arena, sizeof(int) * (size_t)g->nops);
  for (int o = 0; o < g->nops; o++) v->op_group[o] = s->groups[s->group_of_op[o]].topo;
  v->factor = arena_alloc(l->arena, sizeof(int) * (size_t)v->ngroups);
  v->ninst = s->ninsts;
  v->inst = arena_alloc(l->arena, sizeof(SchedInst) * (size_t)s->ninsts);
  for (int i = 0; i < s->ninsts; i++) {
    const GtInstance *in = &s->insts[s->order[i]];
    int gi = s->groups[in->group].topo;
    v->inst[i] = (SchedInst){gi, in->index, in->dim, in->lo, in->hi, in->scope};
    v->factor[gi]++;
  }
  v->order = arena_strdup(l->arena, s->order_summary ? s->order_summary : "?");
  gt_free(s);
  return graph_infer(g, bit, d);
}

/* ---------------- layers and instances ---------------- */

/* The tvm rule within a group. A tail op that Alg. 2 put in a later group (a group boundary
 * between a conv and its batchnorm/add/relu) still joins the anchor's layer when all its
 * operands come from the anchor's group or earlier ones: then every reader of the tail's
 * output already waits for the anchor's group. */
static int gt_fuse(const GsLowered *l, int head, int op) {
  const GsGraph *g = l->graph;
  if (lower_op_kind(g, head) != LK_GEMM || !lower_op_is_tvm_tail(g->ops[op].kind)) return 0;
  for (int i = 0; i < g->ops[op].nin; i++) {
    int p = g->tensors[graph_root(g, g->ops[op].in[i])].producer;
    if (p >= 0 && l->op_group[p] > l->op_group[head]) return 0;
  }
  return 1;
}

static void note(GsLowered *l, const char *text) {
  const char **n = arena_alloc(l->arena, sizeof(char *) * (size_t)(l->nnotes + 1));
  if (l->nnotes) memcpy(n, l->notes, sizeof(char *) * (size_t)l->nnotes);
  n[l->nnotes++] = text;
  l->notes = n;
}

/* Rows per sample of a kernel's partition from its geometry alone (0: not batch-major). */
static int64_t kernel_rps(GsLowered *l, const GsKernel *k) {
  GsKernel w = *k;
  w.split_clusters = 1;
  int64_t rows, rps;
  lower_kernel_rows(l->graph, l->arch, &w, &rows, &rps);
  return rps;
}

/* A group runs as instances over samples when it is split on dim 0 and every layer is
 * batch-major (a sample's rows are its own). */
static int group_splittable(GsLowered *l, const SchedView *v, int gi, const char **why) {
  for (int i = 0; i < v->ninst; i++)
    if (v->inst[i].group == gi && v->inst[i].dim > 0) {
      *why = arena_printf(l->arena, "split along dim %d, not the batch", v->inst[i].dim);
      return 0;
    }
  for (int ki = 0; ki < l->nkernels; ki++)
    if (v->op_group[l->kernels[ki].head] == gi && kernel_rps(l, &l->kernels[ki]) <= 0) {
      *why = arena_printf(l->arena, "layer '%s' is not batch-major", l->kernels[ki].name);
      return 0;
    }
  return 1;
}

static GtRunInst *push_inst(GsLowered *l, int *n, int gi, int index, int64_t s0, int64_t s1) {
  GtRunInst *r = &l->insts[(*n)++];
  *r = (GtRunInst){gi, index, s0, s1, 0, 0};
  return r;
}

/* The instances as run, in the schedule's order (level instances/full) or one per group in
 * topological order (gb, lb; also the fallback when the order cannot be kept). */
static void plan_instances(GsLowered *l, const SchedView *v, int by_group) {
  int n = 0;
  l->insts = arena_alloc(l->arena, sizeof(GtRunInst) * (size_t)(v->ninst + v->ngroups));
  if (l->opt.gt_level < GTL_INSTANCES) {
    for (int gi = 0; gi < v->ngroups; gi++) push_inst(l, &n, gi, 0, 0, 0);
    l->ninsts = n;
    return;
  }
  int *ok = arena_alloc(l->arena, sizeof(int) * (size_t)v->ngroups);
  int *seen = arena_alloc(l->arena, sizeof(int) * (size_t)v->ngroups);
  /* one note per reason, naming every group it applies to (n is small: groups) */
  const char **why_of = arena_alloc(l->arena, sizeof(char *) * (size_t)v->ngroups);
  int *note_of = arena_alloc(l->arena, sizeof(int) * (size_t)v->ngroups);
  int nwhy = 0;
  for (int gi = 0; gi < v->ngroups; gi++) {
    const char *why = NULL;
    ok[gi] = v->factor[gi] <= 1 || group_splittable(l, v, gi, &why);
    if (ok[gi] || by_group) continue;
    int w = 0;
    while (w < nwhy && strcmp(why_of[w], why) != 0) w++;
    if (w < nwhy) {
      l->notes[note_of[w]] = arena_printf(l->arena, "%s, g%d", l->notes[note_of[w]], gi);
      continue;
    }
    why_of[nwhy] = why;
    note_of[nwhy++] = l->nnotes;
    note(l, arena_printf(l->arena, "%s; each runs as one instance: g%d", why, gi));
  }
  for (int pass = 0; pass < (by_group ? v->ngroups : 1); pass++)
    for (int i = 0; i < v->ninst; i++) {
      const SchedInst *si = &v->inst[i];
      if (by_group && si->group != pass) continue;
      int gi = si->group;
      if (ok[gi] && v->factor[gi] > 1) {
        push_inst(l, &n, gi, si->index, si->lo, si->hi);
      } else if (++seen[gi] == v->factor[gi]) {
        push_inst(l, &n, gi, 0, 0, 0); /* whole: where its last instance would run */
      }
    }
  l->ninsts = n;
}

/* One kernel per (instance, layer of its group), layers in their order. (Counted first: room
 * for every layer per instance, nlayers x ninsts kernels of 200 bytes zeroed and mostly never
 * used, was 11 MB of BERT-128 graphturbo's scheduling on stcp920, and 4% of its time.) */
static void expand_kernels(GsLowered *l, const GsKernel *layers, int nlayers) {
  size_t total = 1;
  for (int r = 0; r < l->ninsts; r++)
    for (int i = 0; i < nlayers; i++) total += l->op_group[layers[i].head] == l->insts[r].group;
  GsKernel *ks = arena_alloc(l->arena, sizeof(GsKernel) * total);
  int n = 0;
  for (int r = 0; r < l->ninsts; r++) {
    GtRunInst *ri = &l->insts[r];
    ri->k0 = n;
    for (int i = 0; i < nlayers; i++) {
      if (l->op_group[layers[i].head] != ri->group) continue;
      GsKernel *k = &ks[n++];
      *k = layers[i];
      k->inst = r;
      k->s0 = ri->s0;
      k->s1 = ri->s1;
      k->split_clusters = lower_kernel_split_clusters(l, k);
      if (k->s1 > 0 && kernel_rps(l, k) > 0) { /* its samples' share of the layer's work */
        int64_t share = ceil_div64(l->graph->batch, l->arch->nclusters);
        k->flops = k->flops / share * (k->s1 - k->s0);
        k->macs = k->macs / share * (k->s1 - k->s0);
      }
    }
    ri->k1 = n;
  }
  l->kernels = ks;
  l->nkernels = n;
}

/* ---------------- slices ---------------- */

/* Samples [*a, *b) of each cluster's share a kernel touches (all of them when it is not
 * batch-major or runs whole). */
static void kernel_samples(GsLowered *l, const GsKernel *k, int64_t *a, int64_t *b) {
  *a = 0;
  *b = INT64_MAX;
  if (k->s1 > 0 && kernel_rps(l, k) > 0) {
    *a = k->s0;
    *b = k->s1;
  }
}

static int is_graph_output(const GsGraph *g, int t) {
  for (int i = 0; i < g->noutputs; i++)
    if (graph_root(g, g->outputs[i]) == t) return 1;
  return 0;
}

static int kernel_cores_all(const GsLowered *l, const GsKernel *k) {
  return l->active_cores[k->core_kind] ? l->active_cores[k->core_kind]
                                       : l->arch->core_kinds[k->core_kind].count;
}

/* The cores a kernel will use with its rows alone (lower_fill_tiling's rule: rows over the
 * kind's cores). */
static int kernel_cores(GsLowered *l, const GsKernel *k) {
  const GsArch *a = l->arch;
  int P = kernel_cores_all(l, k);
  GsLowerKind lk = lower_op_kind(l->graph, k->head);
  if (lk == LK_COPY || (lk == LK_GATHER && l->graph->ops[k->head].at.bag <= 1)) return P;
  int64_t rows, rps;
  lower_kernel_rows(l->graph, l->arch, k, &rows, &rps);
  int64_t R = rows;
  if (rps > 0) R = (k->s1 > 0 ? k->s1 - k->s0 : ceil_div64(l->graph->batch, a->nclusters)) * rps;
  return (int)min64(P, max64(R, 1));
}

/* The tensors a kernel writes for later kernels: the last op's outputs (all of a split's). */
static int kernel_outputs(const GsGraph *g, const GsKernel *k, int *out) {
  const GsOp *last = &g->ops[k->ops[k->nops - 1]];
  for (int j = 0; j < last->nout; j++) out[j] = last->out[j];
  return last->nout;
}

/* The slice's cores and the bytes each holds: its view of the tensor (lower_core_view; a
 * core's rows, and its channels when the kernel splits columns). */
static void slice_cores(GsLowered *l, GsKernel *k, GtSlice *s) {
  int n = k->pr * k->pc;
  GsKernelPart kp;
  lower_kernel_part(l->graph, l->arch, k, &kp);
  s->lb_off = arena_alloc(l->arena, sizeof(int64_t) * (size_t)n);
  s->lb_bytes = arena_alloc(l->arena, sizeof(int64_t) * (size_t)n);
  s->core0 = arch_core_base(l->arch, k->core_kind);
  s->ncores = n;
  s->bytes = 0;
  for (int i = 0; i < n; i++) {
    GsView v = lower_core_view(l->graph, l->arch, k, &kp, s->tensor, 0, i);
    s->lb_bytes[i] = v.hi > v.lo ? view_bytes(&v) : 0;
    s->bytes += s->lb_bytes[i];
  }
}

/* Where a slice should live between kernels. */
static int slice_want(GsLowered *l, const GtSlice *s, int forced_ddr, GtBufScope scope) {
  const GsArch *a = l->arch;
  if (forced_ddr || is_graph_output(l->graph, s->tensor)) return LVL_DDR;
  int has_lb = a->core_kinds[l->kernels[s->kernel].core_kind].lb_bytes > 0;
  if (l->opt.gt_level == GTL_GB || !has_lb || scope == GT_SCOPE_GB) return LVL_GB;
  return LVL_LB;
}

/* Readers: every kernel that reads a tensor a slice holds samples of. Returns -1 when a kernel
 * reads samples a later kernel writes (the order cannot be kept). */
static int fill_readers(GsLowered *l, int *forced_ddr) {
  GsGraph *g = l->graph;
  for (int kj = 0; kj < l->nkernels; kj++) {
    const GsKernel *k = &l->kernels[kj];
    int64_t a0, a1;
    kernel_samples(l, k, &a0, &a1);
    for (int j = 0; j < k->nops; j++) {
      const GsOp *op = &g->ops[k->ops[j]];
      for (int i = 0; i < op->nin; i++) {
        int t = graph_root(g, op->in[i]);
        int p = g->tensors[t].producer, inside = 0;
        for (int q = 0; q < j; q++) inside |= p == k->ops[q];
        if (p < 0 || inside) continue;
        int whole = lower_op_input_whole(g, k->ops[j], i);
        for (int si = 0; si < l->nslices; si++) {
          GtSlice *s = &l->slices[si];
          if (s->tensor != t) continue;
          int64_t b0, b1;
          kernel_samples(l, &l->kernels[s->kernel], &b0, &b1);
          if (!whole && (b1 <= a0 || a1 <= b0)) continue;
          if (s->kernel >= kj) return -1;
          if (kj > s->last) s->last = kj;
          if (s->first < 0 || kj < s->first) s->first = kj;
          if (l->arch->nclusters > 1 && (whole || !k->split_clusters)) forced_ddr[si] = 1;
        }
      }
    }
  }
  return 0;
}

static int make_slices(GsLowered *l, const SchedView *v) {
  GsGraph *g = l->graph;
  int n = 0;
  for (int ki = 0; ki < l->nkernels; ki++) n += g->ops[l->kernels[ki].ops[l->kernels[ki].nops - 1]].nout;
  l->slices = arena_alloc(l->arena, sizeof(GtSlice) * (size_t)(n + 1));
  l->nslices = 0;
  int *forced = arena_alloc(l->arena, sizeof(int) * (size_t)(n + 1));
  for (int ki = 0; ki < l->nkernels; ki++) {
    GsKernel *k = &l->kernels[ki];
    k->pr = kernel_cores(l, k);
    k->pc = 1;
    /* too few rows for the cores: the tiler's estimate may split the columns (its views are
     * the slices' per-core parts); the tiling keeps that partition */
    if (l->opt.gt_cols && lower_op_kind(g, k->head) == LK_GEMM && k->pr < kernel_cores_all(l, k)) {
      /* priced at the tile budget the slices will likely leave: the LB not kept for them */
      const GsCoreKind *ck = &l->arch->core_kinds[k->core_kind];
      k->budget = min64(arch_core_tile_budget(l->arch, k->core_kind),
                        (int64_t)((double)ck->lb_bytes * (1 - l->opt.gt_stitch)) / 64 * 64);
      if (k->budget > 0) lower_choose_partition(l, k);
      k->budget = 0;
    }
    int outs[GS_MAX_OPERANDS], no = kernel_outputs(g, k, outs);
    k->slice0 = l->nslices;
    k->nslices = no;
    for (int j = 0; j < no; j++) {
      GtSlice *s = &l->slices[l->nslices];
      memset(s, 0, sizeof *s);
      s->tensor = outs[j];
      s->kernel = s->last = ki;
      s->first = s->drain_end = s->ahead_from = -1;
      slice_cores(l, k, s);
      forced[l->nslices] = l->arch->nclusters > 1 && !k->split_clusters;
      l->nslices++;
    }
  }
  if (fill_readers(l, forced)) return -1;
  for (int si = 0; si < l->nslices; si++) {
    GtSlice *s = &l->slices[si];
    const GtRunInst *ri = &l->insts[l->kernels[s->kernel].inst];
    GtBufScope scope = GT_SCOPE_LB;
    for (int i = 0; i < v->ninst; i++)
      if (v->inst[i].group == ri->group && v->inst[i].index == ri->index) scope = v->inst[i].scope;
    s->want = s->level = slice_want(l, s, forced[si], scope);
  }
  return 0;
}

/* ---------------- spills and offsets ---------------- */

/* The slice a full buffer gives up first among cand[0..n): the longest-lived, counted in
 * kernels (ties: the larger, then the earlier), or the largest (ties: the longer-lived, then
 * the earlier). Size is the slice's whole size (the tensor part), as prior work's rule reads. */
int gt_spill_victim(const GtSlice *sl, const int *cand, int n, GtSpillRule rule) {
  int best = -1;
  for (int i = 0; i < n; i++) {
    const GtSlice *s = &sl[cand[i]];
    if (best < 0) {
      best = cand[i];
      continue;
    }
    const GtSlice *b = &sl[best];
    int64_t ls = s->last - s->kernel, lb = b->last - b->kernel;
    int64_t k1 = rule == GT_SPILL_LONGEST ? ls : s->bytes, k1b = rule == GT_SPILL_LONGEST ? lb : b->bytes;
    int64_t k2 = rule == GT_SPILL_LONGEST ? s->bytes : ls, k2b = rule == GT_SPILL_LONGEST ? b->bytes : lb;
    if (k1 > k1b || (k1 == k1b && (k2 > k2b || (k2 == k2b && cand[i] < best)))) best = cand[i];
  }
  return best;
}

static int step_lo(const GtSlice *s, int level) { return level == LVL_GB ? s->kernel - 1 : s->kernel; }

/* Bytes of slice s on resource r (a core of the cluster for LB; 0 for the GB). */
static int64_t slice_bytes_on(const GtSlice *s, int level, int r) {
  if (level != LVL_LB) return s->bytes;
  int i = r - s->core0;
  return i >= 0 && i < s->ncores ? s->lb_bytes[i] : 0;
}

/* The first step at which slice s can be live. */
static int live_from(const GtSlice *s, int level) {
  int t = step_lo(s, level);
  return t < 0 ? 0 : t;
}

/* The slices live at each step t of [0, nsteps) (step_lo <= t <= last), in index order:
 * live[at[t] .. at[t + 1]). Both malloc'ed. */
static void slices_by_step(const GtSlice *sl, int nsl, int nsteps, int level, int **at, int **live) {
  int *a = calloc((size_t)nsteps + 1, sizeof *a), *fill = malloc(sizeof *fill * (size_t)nsteps);
  if (!a || !fill) die("out of memory");
  for (int i = 0; i < nsl; i++)
    for (int t = live_from(&sl[i], level); t <= sl[i].last && t < nsteps; t++) a[t + 1]++;
  for (int t = 0; t < nsteps; t++) a[t + 1] += a[t];
  int *v = malloc(sizeof *v * (size_t)(a[nsteps] + 1));
  if (!v) die("out of memory");
  memcpy(fill, a, sizeof *fill * (size_t)nsteps);
  for (int i = 0; i < nsl; i++)
    for (int t = live_from(&sl[i], level); t <= sl[i].last && t < nsteps; t++) v[fill[t]++] = i;
  free(fill);
  *at = a;
  *live = v;
}

void gt_spill_pass(GtSlice *sl, int nsl, int nsteps, int level, int nres, int64_t cap,
                   GtSpillRule rule, int down) {
  gs_assert(down < level);
  int *cand = malloc(sizeof(int) * (size_t)(nsl + 1)), *at, *live;
  if (!cand) die("out of memory");
  /* only the slices live at a step can be its candidates: scanning all of them for every step
   * and core was 7% of lowering MobileNet-v2 on stcp920 */
  slices_by_step(sl, nsl, nsteps, level, &at, &live);
  for (int t = 0; t < nsteps; t++)
    for (int r = 0; r < nres; r++)
      for (;;) {
        int n = 0;
        int64_t sum = 0;
        for (int j = at[t]; j < at[t + 1]; j++) {
          const GtSlice *s = &sl[live[j]];
          int64_t b = slice_bytes_on(s, level, r);
          if (s->level != level || b == 0) continue;
          cand[n++] = live[j];
          sum += b;
        }
        if (sum <= cap || n == 0) break;
        sl[gt_spill_victim(sl, cand, n, rule)].level = down;
      }
  free(live);
  free(at);
  free(cand);
}

/* Offsets at one level (LB: one allocator per core; GB: one); a slice that does not fit moves
 * down. */
static void place_pass(GsLowered *l, int level, GsIvl *ivls, int nres, int down) {
  for (int si = 0; si < l->nslices; si++) {
    GtSlice *s = &l->slices[si];
    if (s->level != level) continue;
    int t0 = step_lo(s, level), ok = 1;
    if (level == LVL_GB) {
      s->gb_off = ivl_alloc(&ivls[0], s->bytes, t0, s->last, si);
      ok = s->gb_off >= 0;
    } else {
      int i;
      for (i = 0; i < s->ncores && ok; i++) {
        gs_assert(s->core0 + i < nres);
        if (s->lb_bytes[i] == 0) continue; /* a core with no rows of it holds nothing */
        s->lb_off[i] = ivl_alloc(&ivls[s->core0 + i], s->lb_bytes[i], t0, s->last, si);
        ok = s->lb_off[i] >= 0;
      }
      if (!ok)
        for (int j = 0; j < i - 1; j++) ivl_remove(&ivls[s->core0 + j], si);
    }
    if (!ok) s->level = down;
  }
}

static void fill_budgets(GsLowered *l, const GsIvl *lbs) {
  for (int ki = 0; ki < l->nkernels; ki++) {
    GsKernel *k = &l->kernels[ki];
    int64_t b = arch_core_tile_budget(l->arch, k->core_kind);
    if (l->arch->core_kinds[k->core_kind].lb_bytes > 0) {
      int c0 = arch_core_base(l->arch, k->core_kind);
      for (int i = 0; i < k->pr * k->pc; i++) b = min64(b, ivl_lowest(&lbs[c0 + i], ki));
    }
    k->budget = b;
  }
}

/* Spill and place every slice with a fraction `stitch` of each LB kept for slices. */
static void place_slices(GsLowered *l, double stitch) {
  const GsArch *a = l->arch;
  int ncores = a->cores_per_cluster;
  GsIvl *lbs = calloc((size_t)ncores, sizeof(GsIvl));
  if (!lbs) die("out of memory");
  int64_t lbmax = 0;
  for (int c = 0; c < ncores; c++) {
    const GsCoreKind *ck = prog_core_kind(a, c);
    int64_t cap = ck ? ck->lb_bytes : 0, keep = (int64_t)((double)cap * stitch) / 64 * 64;
    ivl_init(&lbs[c], cap - keep, cap, 64, IVL_TOP_DOWN);
    lbmax = max64(lbmax, keep);
  }
  int gb_ok = a->gb_bytes > 0 && l->gb_tensor_bytes > 0;
  int lb_down = gb_ok ? LVL_GB : LVL_DDR;
  for (int si = 0; si < l->nslices; si++) {
    GtSlice *s = &l->slices[si];
    s->level = s->want;
    if (s->level == LVL_LB && lbmax == 0) s->level = lb_down;
    if (s->level == LVL_GB && !gb_ok) s->level = LVL_DDR;
  }
  gt_spill_pass(l->slices, l->nslices, l->nkernels, LVL_LB, ncores, lbmax, l->opt.gt_spill, lb_down);
  place_pass(l, LVL_LB, lbs, ncores, lb_down);
  if (gb_ok) {
    GsIvl gb;
    ivl_init(&gb, 0, l->gb_tensor_bytes, 64, IVL_BOTTOM_UP);
    gt_spill_pass(l->slices, l->nslices, l->nkernels, LVL_GB, 1, l->gb_tensor_bytes, l->opt.gt_spill,
                  LVL_DDR);
    place_pass(l, LVL_GB, &gb, 1, LVL_DDR);
    ivl_free(&gb);
  }
  fill_budgets(l, lbs);
  for (int c = 0; c < ncores; c++) ivl_free(&lbs[c]);
  free(lbs);
}

/* ------------- the GB under level full: weights ahead, writes behind, loads ahead ------------- */

/* Cycles of every cluster's copy of `bytes` at the DDR's bandwidth. */
static double ddr_copy(const GsLowered *l, int64_t bytes) {
  return (double)bytes * l->arch->nclusters / l->arch->ddr_bytes_per_cycle;
}

/* The DDR time kernel ki leaves idle by the tiler's estimate: its compute beyond its own DDR
 * share, and with `staged` beyond the staging of its weights too (every cluster's copy). */
static double kernel_ddr_idle(const GsLowered *l, int ki, int staged) {
  const GsKernel *k = &l->kernels[ki];
  double idle = k->est_compute_cycles - k->est_ddr_cycles;
  if (staged && k->w_via_gb) idle -= ddr_copy(l, lower_op_weight_bytes(l->graph, k->head));
  return idle > 0 ? idle : 0;
}

/* Takes up to `need` cycles of idle DDR time from kernels [k0, k1] (earliest first). */
static void take_idle(double *idle, int k0, int k1, double need) {
  for (int j = k0; j <= k1 && need > 0; j++) {
    double t = idle[j] < need ? idle[j] : need;
    idle[j] -= t;
    need -= t;
  }
}

/* The share of a staging the idle DDR time of the kernels before must hold to be staged ahead. */
#define GT_AHEAD_HIDDEN 0.5

/* Weights staged ahead may be held over kernels [j, ki) (the ones before their own): they fit
 * the --gt-prefetch-gb share of the GB next to those already held there (held[]). */
static int ahead_fits(const GsLowered *l, const int64_t *held, int j, int ki, int64_t wb) {
  int64_t w0, w1;
  lower_gb_weight_area(l, &w0, &w1);
  double cap = l->opt.gt_prefetch_gb * (double)w1;
  for (int t = j; t < ki; t++)
    if ((double)(held[t] + wb) > cap) return 0;
  return 1;
}

/* Every kernel that stages weights gets a block of the GB, top-down. It is staged ahead, at the
 * start of the nearest of the --gt-prefetch kernels before it whose idle DDR time (idle[], what
 * earlier stagings left) holds GT_AHEAD_HIDDEN of the copy, when a block is free from there to
 * its own kernel and the weights held ahead stay within --gt-prefetch-gb of the GB (never
 * across a copy kernel, whose DDR use the tiler does not estimate); else at its own start, over
 * its own kernel (the weight area is free of slices, so that block always fits). A copy staged
 * at a kernel's own start uses up its idle time. Stagings may be issued out of kernel order:
 * each kernel's cores wait on their own semaphores (emit_stage_sem). */
static void plan_weights(GsLowered *l, GsIvl *gb, double *idle) {
  gb->policy = IVL_TOP_DOWN;
  int64_t *held = calloc((size_t)l->nkernels + 1, sizeof *held);
  if (!held) die("out of memory");
  for (int ki = 0; ki < l->nkernels; ki++) {
    GsKernel *k = &l->kernels[ki];
    if (!k->w_via_gb || lower_op_kind(l->graph, k->head) == LK_COPY) continue;
    int64_t wb = lower_op_weight_bytes(l->graph, k->head), off = -1;
    double copy = ddr_copy(l, wb), sum = 0;
    int from = ki;
    for (int j = ki - 1; j >= 0 && j >= ki - l->opt.gt_prefetch; j--) {
      if (l->kernels[j].est_compute_cycles <= 0) break; /* a copy: no estimate to stage across */
      sum += idle[j];
      if (sum < copy * GT_AHEAD_HIDDEN) continue;
      if (ahead_fits(l, held, j, ki, wb)) off = ivl_alloc(gb, wb, j, ki, -1 - ki);
      if (off >= 0) from = j;
      break;
    }
    if (off < 0) off = ivl_alloc(gb, wb, ki, ki, -1 - ki);
    gs_assert(off >= 0);
    for (int t = from; t < ki; t++) held[t] += wb;
    take_idle(idle, from, ki, copy);
    k->w_gb_off = off;
    k->w_from = from;
  }
  free(held);
}

/* The clusters have a DMA engine free for drains and loads ahead: two or more, and no core
 * without DMA (which the cluster engines serve). */
static int second_dma_engine(const GsArch *a) {
  if (a->dma_engines < 2) return 0;
  for (int i = 0; i < a->ncore_kinds; i++)
    if (a->core_kinds[i].dma_engines == 0) return 0;
  return 1;
}

/* The share of a drain's copy the idle DDR time before its readers must hold. */
#define GT_DRAIN_HIDDEN 0.9

/* With a second cluster DMA engine, a DDR slice whose first reader is not the next kernel is
 * stored into a GB block instead, and that engine copies the block to DDR after its kernel,
 * while the kernels after it run (the next instance's work overlaps this one's DMA). The block
 * lives from the writer to drain_end, the first kernel by which the DDR time the kernels after
 * the writer leave idle (tiler's estimates) holds the copy (all clusters' bytes at the DDR's
 * bandwidth), else the one before the first reader. When those kernels leave less than
 * GT_DRAIN_HIDDEN of the copy's time idle (a tenth of slack for the estimates), or no block is
 * free over the span, the slice is written to DDR directly: draining it would mostly slow them
 * (on ViT-B/16 a drain hidden 72% cost 1.7%). */
static void plan_drains(GsLowered *l, GsIvl *gb, double *idle) {
  gb->policy = IVL_BOTTOM_UP;
  for (int si = 0; si < l->nslices; si++) {
    GtSlice *s = &l->slices[si];
    int k = s->kernel, limit = s->first > k ? s->first - 1 : l->nkernels - 2;
    if (s->level != LVL_DDR || !l->kernels[k].split_clusters || k + 1 > limit) continue;
    double copy = ddr_copy(l, s->bytes), sum = 0;
    int end = k + 1;
    for (; end <= limit && sum < copy; end++) sum += idle[end];
    end--;
    if (sum < copy * GT_DRAIN_HIDDEN) continue; /* little DDR room before the readers */
    int64_t off = ivl_alloc(gb, s->bytes, k > 0 ? k - 1 : 0, end, si);
    if (off < 0) continue;

    s->drain_off = off;
    s->drain_end = end;
  }
}

/* With a second cluster DMA engine, a DDR slice read after the kernel that follows its writer is
 * copied by that engine into a GB block ahead of its first reader, from the start of the latest
 * kernel that leaves (with the kernels up to that reader) GT_DRAIN_HIDDEN of the copy's DDR time
 * idle; its readers up to ahead_until (the last one, or else the first, when a block is free
 * that long) read the copy: one DDR read, early, instead of one per reader, late. */
static void plan_loads(GsLowered *l, GsIvl *gb, double *idle) {
  gb->policy = IVL_BOTTOM_UP;
  for (int si = 0; si < l->nslices; si++) {
    GtSlice *s = &l->slices[si];
    int k = s->kernel, r = s->first;
    if (s->level != LVL_DDR || !l->kernels[k].split_clusters || r < k + 2 ||
        is_graph_output(l->graph, s->tensor))
      continue;
    double copy = ddr_copy(l, s->bytes), sum = 0;
    int from = r;
    while (from > k + 1 && sum < copy) sum += idle[--from];
    if (sum < copy * GT_DRAIN_HIDDEN) continue;
    int64_t off = ivl_alloc(gb, s->bytes, from - 1, s->last, -1 - l->nkernels - si);
    int until = s->last;
    if (off < 0) {
      off = ivl_alloc(gb, s->bytes, from - 1, r, -1 - l->nkernels - si);
      until = r;
    }
    if (off < 0) continue;
    take_idle(idle, from, r - 1, copy);
    s->ahead_from = from;
    s->ahead_until = until;
    s->ahead_off = off;
  }
}

/* Level full: the whole GB (below the top quarter kept for cores without LB) in one allocator —
 * the slices where place_slices put them, then the staged weights, then the drains and loads
 * ahead — and the DDR's idle time by the tiler's estimates, which the weights staged ahead take
 * first. (Moving slices the GB's fixed split sent to DDR back into the free GB was tried: ViT
 * 1.13x faster, BERT-384 4% slower, the run's end decided by which cluster lags; not kept.) */
static void plan_gb_full(GsLowered *l) {
  int64_t w0, w1;
  lower_gb_weight_area(l, &w0, &w1);
  if (l->opt.gt_level != GTL_FULL || w1 <= 0) return;
  GsIvl gb;
  ivl_init(&gb, 0, w1, 64, IVL_BOTTOM_UP);
  for (int si = 0; si < l->nslices; si++) {
    const GtSlice *s = &l->slices[si];
    if (s->level == LVL_GB) ivl_place(&gb, s->gb_off, s->bytes, step_lo(s, LVL_GB), s->last, si);
  }
  double *idle = malloc(sizeof(double) * (size_t)l->nkernels);
  if (!idle) die("out of memory");
  for (int ki = 0; ki < l->nkernels; ki++) idle[ki] = kernel_ddr_idle(l, ki, 0);
  plan_weights(l, &gb, idle);
  lower_fill_tiling_streams(l);
  for (int ki = 0; ki < l->nkernels; ki++) idle[ki] = kernel_ddr_idle(l, ki, 1);
  if (second_dma_engine(l->arch)) {
    plan_drains(l, &gb, idle);
    plan_loads(l, &gb, idle);
  }
  free(idle);
  ivl_free(&gb);
}

/* ---------------- driver ---------------- */

/* Table-3 levels: a tensor counts at the lowest level any of its slices lives at. */
static void slice_levels(GsLowered *l) {
  for (int si = 0; si < l->nslices; si++) l->place[l->slices[si].tensor].level = LVL_LB;
  for (int si = 0; si < l->nslices; si++) {
    const GtSlice *s = &l->slices[si];
    GsTensorPlace *p = &l->place[s->tensor];
    if (s->level < p->level) p->level = s->level;
  }
}

static int plan_once(GsLowered *l, const SchedView *v, const GsKernel *layers, int nl, int by_group) {
  plan_instances(l, v, by_group);
  expand_kernels(l, layers, nl);
  return make_slices(l, v);
}

/* The schedule's instances as run and a kernel per (instance, layer), with their slices; the
 * schedule's instance order, or group by group when a whole group would run after its readers. */
static void plan_kernels(GsLowered *l, const SchedView *v) {
  const GsKernel *layers = l->kernels;
  int nl = l->nkernels;
  lower_fill_gb_split(l);
  if (plan_once(l, v, layers, nl, 0)) {
    note(l, "the schedule's instance order is not kept (a whole group would run after its "
            "readers): instances run group by group");
    l->gt_order = "group";
    if (plan_once(l, v, layers, nl, 1)) die("graphturbo: group order violates a dependence");
  }
}

/* The tiler's estimate of a plan: the sum over its kernels of the longer of their DDR and
 * head-unit times (copy kernels have none). */
static double plan_estimate(const GsLowered *l) {
  double e = 0;
  for (int ki = 0; ki < l->nkernels; ki++) {
    const GsKernel *k = &l->kernels[ki];
    e += k->est_ddr_cycles > k->est_compute_cycles ? k->est_ddr_cycles : k->est_compute_cycles;
  }
  return e;
}

/* Places the slices with the fraction `stitch` of each LB and tiles every kernel; 0, or -1
 * when some kernel's tiles do not fit what the slices leave (reported to d). */
static int place_tile_at(GsLowered *l, double stitch, GsDiag *d) {
  place_slices(l, stitch);
  slice_levels(l); /* the tiler's cost reads where every operand lives */
  lower_check_step(l, LOWER_PLACEMENT);
  return lower_fill_tiling(l, d) == 0 ? 0 : -1;
}

/* What placement and tiling change, to restore the chosen attempt's (a placement is not
 * independent of the tilings before it: copy kernels take their partition at tiling). */
typedef struct {
  GsKernel *kernels;
  GtSlice *slices;
  int64_t *lb_off;    /* every slice's lb_off[], one after another */
  GsTensorPlace *place;
} PlanState;

static void *dup_bytes(const void *p, size_t n) {
  void *q = malloc(n ? n : 1);
  if (!q) die("out of memory");
  memcpy(q, p, n);
  return q;
}

static void plan_save(const GsLowered *l, PlanState *ps) {
  size_t nlb = 0;
  for (int si = 0; si < l->nslices; si++) nlb += (size_t)l->slices[si].ncores;
  ps->kernels = dup_bytes(l->kernels, sizeof *l->kernels * (size_t)l->nkernels);
  ps->slices = dup_bytes(l->slices, sizeof *l->slices * (size_t)l->nslices);
  ps->place = dup_bytes(l->place, sizeof *l->place * (size_t)l->graph->ntensors);
  ps->lb_off = malloc(sizeof *ps->lb_off * (nlb ? nlb : 1));
  if (!ps->lb_off) die("out of memory");
  for (int si = 0, o = 0; si < l->nslices; o += l->slices[si++].ncores)
    memcpy(ps->lb_off + o, l->slices[si].lb_off, sizeof(int64_t) * (size_t)l->slices[si].ncores);
}

static void plan_free(PlanState *ps) {
  free(ps->kernels);
  free(ps->slices);
  free(ps->lb_off);
  free(ps->place);
}

/* Restores ps into l and frees it. */
static void plan_restore(GsLowered *l, PlanState *ps) {
  memcpy(l->kernels, ps->kernels, sizeof *l->kernels * (size_t)l->nkernels);
  memcpy(l->place, ps->place, sizeof *l->place * (size_t)l->graph->ntensors);
  for (int si = 0, o = 0; si < l->nslices; o += l->slices[si++].ncores) {
    int64_t *lb_off = l->slices[si].lb_off;
    l->slices[si] = ps->slices[si];
    l->slices[si].lb_off = lb_off;
    memcpy(lb_off, ps->lb_off + o, sizeof(int64_t) * (size_t)l->slices[si].ncores);
  }
  plan_free(ps);
}

/* A smaller LB fraction for slices is taken only when the tiler's estimate of the whole plan
 * falls below this share of the larger fraction's: a gain its error cannot fake. */
#define GT_STITCH_GAIN 0.5

/* Placement and tiling: the LB kept for slices (*stitch of each LB) halves until every
 * kernel's tiles fit what it leaves (*squeezed = 0); then a half, a quarter of that and none
 * are tried, each taken when it at least halves the plan's estimate against the best so far
 * (*squeezed = 1: slices kept in the LB left some kernel a budget whose tiles cost more than
 * keeping them saved). Each placement is checked, then the tiling; the chosen one is kept. */
static int place_and_tile(GsLowered *l, double *stitch, int *squeezed, GsDiag *d) {
  if (lower_fill_placement(l)) return -1;
  for (int t = 0; t < l->graph->ntensors; t++)
    if (l->place[t].level != LVL_LB) l->place[t].level = LVL_DDR;
  GsDiag quiet; /* tiling attempts that may fail print nothing */
  diag_init(&quiet);
  quiet.nerrors = quiet.max_errors;
  *stitch = l->opt.gt_level == GTL_GB ? 0 : l->opt.gt_stitch;
  *squeezed = 0;
  while (place_tile_at(l, *stitch, *stitch > 0.01 ? &quiet : d)) {
    if (*stitch <= 0.01) return -1;
    *stitch /= 2;
    if (*stitch <= 0.01) *stitch = 0;
  }
  double best = *stitch, e_best = plan_estimate(l);
  PlanState kept;
  plan_save(l, &kept);
  double first = best, tries[] = {first / 2, first / 4, 0};
  for (int i = 0; i < 3 && first > 0 && !l->opt.gt_stitch_fixed; i++) {
    if (place_tile_at(l, tries[i], &quiet) != 0) continue;
    double e = plan_estimate(l);
    if (e < GT_STITCH_GAIN * e_best) {
      best = tries[i];
      e_best = e;
      plan_free(&kept);
      plan_save(l, &kept);
    }
  }
  *squeezed = best != *stitch;
  *stitch = best;
  plan_restore(l, &kept);
  lower_check_step(l, LOWER_TILING);
  return 0;
}

/* The steps of lower.h's LowerStep in order, each checked; stops after `stop` (placement and
 * tiling are one loop, so a stop at placement has the tiles too). */
int gt_plan(GsLowered *l, LowerStep stop, GsDiag *d) {
  SchedView v;
  if (schedule_view(l, &v, d)) return -1;
  l->op_group = v.op_group;
  l->dma_by_sem = 1; /* staging, drains and loads ahead are ordered by semaphores */
  l->gt_order = l->opt.gt_level >= GTL_INSTANCES ? v.order : "group";
  lower_group_kernels(l, gt_fuse);
  lower_check_step(l, LOWER_KERNELS);
  if (stop == LOWER_KERNELS) return 0;
  if (lower_fill_kernel_units(l, d)) return -1;
  lower_check_step(l, LOWER_UNITS);
  if (stop == LOWER_UNITS) return 0;
  plan_kernels(l, &v);
  lower_check_step(l, LOWER_SLICES);
  if (stop == LOWER_SLICES) return 0;
  double stitch;
  int squeezed;
  if (place_and_tile(l, &stitch, &squeezed, d)) return -1;
  if (stop == LOWER_STAGING) {
    plan_gb_full(l);
    slice_levels(l);
    lower_check_step(l, LOWER_STAGING);
  }
  if (l->opt.gt_level != GTL_GB && stitch < l->opt.gt_stitch)
    note(l, arena_printf(l->arena, squeezed ? "LB kept for tensors reduced to %.0f%%: the "
                                              "tiles it left some layers cost more than it saved"
                                            : "LB kept for tensors reduced to %.0f%% so that "
                                              "every layer's tiles fit", stitch * 100));
  return 0;
}
