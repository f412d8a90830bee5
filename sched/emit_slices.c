/* emit_slices.c — the life of graphturbo's slices in the Program (lower_gt.c plans them):
 * every slice becomes one region per core that wrote it (its piece), in the LB of that core,
 * in the cluster's GB, or in DDR, and readers find the pieces through s->sl (emit_load_span_at).
 *
 *   LB pieces:  allocated at the start of their kernel by the owning core's dma_in queue, after
 *               it freed the pieces whose last reader ended before the barrier just passed;
 *               the kernel's tile regions come after, below the lowest live piece (its budget)
 *   GB pieces:  allocated by the cluster's coordinator at the end of the kernel before theirs
 *               (before the barrier the writers wait at), freed by it at the start of the kernel
 *               after their last reader
 *   DDR pieces: allocated at the iteration's start in a per-tensor area (taken from the DDR
 *               allocator, emit.c), freed with it at its end (graph outputs land in
 *               their whole-run output area and stay)
 * The same order on one queue, or a barrier between two queues, separates every free from the
 * next allocation of the same bytes; the simulator checks it.
 */
#include "emit_impl.h"

#include <stdio.h>
#include <string.h>

static PieceList *list_of(Emit *e, int t, int c) {
  return &e->s->sl[(size_t)t * (size_t)e->s->nclusters + (size_t)c];
}

static void list_insert(Emit *e, PieceList *pl, const Piece *x) {
  if (pl->n == pl->room) {
    int room = pl->room ? 2 * pl->room : 8;
    Piece *p = arena_alloc(e->s->arena, sizeof(Piece) * (size_t)room);
    if (pl->n) memcpy(p, pl->p, sizeof(Piece) * (size_t)pl->n);
    pl->p = p;
    pl->room = room;
  }
  int i = pl->n; /* sorted by v.lo, then v.b0: pieces over the same rows are neighbours */
  while (i > 0 && (pl->p[i - 1].v.lo > x->v.lo ||
                   (pl->p[i - 1].v.lo == x->v.lo && pl->p[i - 1].v.b0 > x->v.b0))) {
    pl->p[i] = pl->p[i - 1];
    i--;
  }
  gs_assert(i == 0 || pl->p[i - 1].v.hi <= x->v.lo ||
            (pl->p[i - 1].v.lo == x->v.lo && pl->p[i - 1].v.b1 <= x->v.b0));
  gs_assert(i == pl->n || x->v.hi <= pl->p[i + 1].v.lo ||
            (pl->p[i + 1].v.lo == x->v.lo && x->v.b1 <= pl->p[i + 1].v.b0));
  pl->p[i] = *x;
  pl->n++;
}

static void list_remove(PieceList *pl, int slice) {
  int j = 0;
  for (int i = 0; i < pl->n; i++)
    if (pl->p[i].slice != slice) pl->p[j++] = pl->p[i];
  pl->n = j;
}

/* Core i's piece of slice si in cluster c, view v: in LB compact in a region of its own; in GB
 * and DDR in place, in a region over its rows unless a piece of the slice over the same rows (a
 * core of another column part) has one, which it then shares with its tile; put in the lists.
 * lo_first: the slice's first byte in the cluster, at the slice's GB offset. */
static void make_piece(Emit *e, int si, int c, int i, GsView v, int64_t lo_first) {
  const GtSlice *sl = &e->l->slices[si];
  int core = sl->core0 + i, lb = sl->level == LVL_LB;
  Piece x = {v, lb ? 0 : v.b0, lb ? v.b1 - v.b0 : v.pitch, 1, 0, 0, sl->level, si, core,
             0, 0, 0, 0};
  PieceList *pl = list_of(e, sl->tensor, c);
  const Piece *y = NULL; /* a piece of the slice over the same rows (cores split columns) */
  for (int j = 0; !lb && !view_whole(&v) && j < pl->n && !y; j++)
    if (pl->p[j].slice == si && pl->p[j].v.lo == v.lo) y = &pl->p[j];
  if (y) {
    x.reg = y->reg;
    x.tile = y->tile;
    x.owner = 0;
  } else {
    char name[200];
    static const char *const pre[] = {"t:", "gb:", "lb:"};
    snprintf(name, sizeof name, "%s%s[%lld,%lld)", pre[sl->level], e->g->tensors[sl->tensor].name,
             (long long)v.lo, (long long)v.hi);
    x.reg = prog_new_region(e->p, name);
    x.tile = prog_new_tile(e->p, name);
    if (lb)
      emit_alloc(e, emit_core_q(e, c, core, Q_DMA_IN), x.reg, LVL_LB, c, core, sl->lb_off[i],
                 view_bytes(&v), 0);
    else if (sl->level == LVL_GB)
      emit_alloc(e, emit_coord_q(e, c), x.reg, LVL_GB, c, 0, sl->gb_off + v.lo - lo_first,
                 v.hi - v.lo, 0);
    else if (e->s->out_off[sl->tensor]) /* a graph output's: a program output (emit.c) */
      emit_alloc(e, emit_coord_q(e, 0), x.reg, LVL_DDR, 0, 0, e->s->ddr_area[sl->tensor] + v.lo,
                 v.hi - v.lo, 0)->t[1] = x.tile;
    else
      emit_alloc(e, emit_coord_q(e, 0), x.reg, LVL_DDR, 0, 0, e->s->ddr_area[sl->tensor] + v.lo,
                 v.hi - v.lo, 0);
  }
  if (sl->level == LVL_DDR)
    for (int cc = 0; cc < e->s->nclusters; cc++) list_insert(e, list_of(e, sl->tensor, cc), &x);
  else
    list_insert(e, pl, &x);
}

/* All pieces of slice si (every cluster that runs its kernel). */
static void alloc_slice(Emit *e, int si) {
  const GtSlice *sl = &e->l->slices[si];
  const GsKernel *k = &e->l->kernels[sl->kernel];
  gs_assert(k->pr * k->pc == sl->ncores);
  GsKernelPart kp;
  lower_kernel_part(e->g, e->a, k, &kp);
  for (int c = 0; c < e->s->nclusters; c++) {
    int64_t lo_first = -1;
    for (int i = 0; i < k->pr * k->pc; i++) {
      GsView v = lower_core_view(e->g, e->a, k, &kp, sl->tensor, c, i);
      if (v.hi <= v.lo) continue;
      if (lo_first < 0) lo_first = v.lo;
      make_piece(e, si, c, i, v, lo_first);
    }
  }
}

static void free_slice(Emit *e, int si) {
  const GtSlice *sl = &e->l->slices[si];
  for (int c = 0; c < e->s->nclusters; c++) {
    PieceList *pl = list_of(e, sl->tensor, c);
    for (int i = 0; i < pl->n; i++) {
      const Piece *x = &pl->p[i];
      if (x->slice != si || !x->owner) continue;
      if (sl->level == LVL_LB) emit_free_region(e, emit_core_q(e, c, x->core, Q_DMA_IN), x->reg);
      else if (sl->level == LVL_GB) emit_free_region(e, emit_coord_q(e, c), x->reg);
      else if (c == 0 && !graph_is_output(e->g, sl->tensor))
        emit_free_region(e, emit_coord_q(e, 0), x->reg);
    }
  }
  for (int c = 0; c < e->s->nclusters; c++) list_remove(list_of(e, sl->tensor, c), si);
}

/* ---- drains (level full): DDR slices written through a GB block (lower_gt.c, plan_drains) ----
 *   kernel writer-1 end: the coordinator allocates one GB region per piece, at the piece's place
 *                        in the slice's block; the writer's cores store into it (emit_store_span)
 *   kernel writer+1 start (after the barrier that ends the writer): the coordinator posts GO;
 *                        the cluster's drain queue waits for it, copies every piece to its DDR
 *                        region (the tile the readers will ask for) and posts DONE
 *   kernel drain_end end: the coordinator waits for DONE and frees the regions, before the
 *                        barrier that every reader comes after. */
#define SEM_DRAIN_BASE ((int64_t)1 << 32) /* + 2 × slice (GO), + 1 (DONE): ids of their own */

/* The pieces cluster c's cores write of slice si that own their region (one per run of rows:
 * the pieces of the same rows follow their owner in the list and share its regions), in that
 * cluster's list. */
static int drain_pieces(Emit *e, int si, int c, Piece **out) {
  const GtSlice *sl = &e->l->slices[si];
  const GsKernel *k = &e->l->kernels[sl->kernel];
  PieceList *pl = list_of(e, sl->tensor, c);
  GsKernelPart kp;
  lower_kernel_part(e->g, e->a, k, &kp);
  int n = 0;
  for (int i = 0; i < k->pr * k->pc; i += k->pc) {
    GsView v = lower_core_view(e->g, e->a, k, &kp, sl->tensor, c, i);
    for (int j = 0; v.hi > v.lo && j < pl->n; j++)
      if (pl->p[j].slice == si && pl->p[j].v.lo == v.lo && pl->p[j].owner) out[n++] = &pl->p[j];
  }
  return n;
}

/* The pieces after owner x (in cluster c's list) over the same rows take its drain (d) or
 * ahead (!d) region and tile. */
static void group_take(Emit *e, int c, const Piece *x, int d) {
  const PieceList *pl = list_of(e, e->l->slices[x->slice].tensor, c);
  for (Piece *q = pl->p + (x - pl->p) + 1; q < pl->p + pl->n && q->slice == x->slice &&
                                           q->v.lo == x->v.lo && !q->owner; q++) {
    if (d) {
      q->dreg = x->dreg;
      q->dtile = x->dtile;
    } else {
      q->areg = x->areg;
      q->atile = x->atile;
    }
  }
}

static void drain_alloc(Emit *e, int si) {
  const GtSlice *sl = &e->l->slices[si];
  Piece **ps = arena_alloc(e->s->arena, sizeof(Piece *) * (size_t)e->s->ncores);
  for (int c = 0; c < e->s->nclusters; c++) {
    int n = drain_pieces(e, si, c, ps);
    for (int i = 0; i < n; i++) {
      char name[200];
      snprintf(name, sizeof name, "gbd:%s[%lld,%lld)", e->g->tensors[sl->tensor].name,
               (long long)ps[i]->v.lo, (long long)ps[i]->v.hi);
      ps[i]->dreg = prog_new_region(e->p, name);
      ps[i]->dtile = prog_new_tile(e->p, name);
      emit_alloc(e, emit_coord_q(e, c), ps[i]->dreg, LVL_GB, c, 0,
                 sl->drain_off + ps[i]->v.lo - ps[0]->v.lo, ps[i]->v.hi - ps[i]->v.lo, 0);
      group_take(e, c, ps[i], 1);
    }
  }
}

static void drain_copy(Emit *e, int si) {
  const GtSlice *sl = &e->l->slices[si];
  Piece **ps = arena_alloc(e->s->arena, sizeof(Piece *) * (size_t)e->s->ncores);
  for (int c = 0; c < e->s->nclusters; c++) {
    int qd = e->s->ddma[c], n = drain_pieces(e, si, c, ps);
    emit_sem(e, emit_coord_q(e, c), I_SEMPOST, SEM_DRAIN_BASE + 2 * si);
    emit_sem(e, qd, I_SEMWAIT, SEM_DRAIN_BASE + 2 * si);
    for (int i = 0; i < n; i++) {
      int64_t b = ps[i]->v.hi - ps[i]->v.lo; /* the region: whole rows, in place */
      GsSpan sp = {0, b, 1, b, 1, b}, dp = sp;
      dp.off = ps[i]->base;
      emit_mov(e, qd, ps[i]->reg, ps[i]->tile, &dp, ps[i]->dreg, ps[i]->dtile, &sp);
      emit_count_ddr(e, sl->kernel, LVL_DDR, b, 1);
    }
    emit_sem(e, qd, I_SEMPOST, SEM_DRAIN_BASE + 2 * si + 1);
  }
}

static void drain_free(Emit *e, int si) {
  Piece **ps = arena_alloc(e->s->arena, sizeof(Piece *) * (size_t)e->s->ncores);
  for (int c = 0; c < e->s->nclusters; c++) {
    int n = drain_pieces(e, si, c, ps);
    emit_sem(e, emit_coord_q(e, c), I_SEMWAIT, SEM_DRAIN_BASE + 2 * si + 1);
    for (int i = 0; i < n; i++) {
      emit_free_region(e, emit_coord_q(e, c), ps[i]->dreg);
      ps[i]->dreg = ps[i]->dtile = 0;
      group_take(e, c, ps[i], 1);
    }
  }
}

/* ---- loads ahead (level full): DDR slices copied into GB before their readers (plan_loads) ----
 *   kernel ahead_from start: the coordinator allocates one GB region per piece of the cluster's
 *                        samples and posts GO; the drain queue (after any drain of the slice, in
 *                        queue order) waits for it, copies every piece DDR -> GB, posts DONE
 *   kernel first-1 end:  the coordinator waits for DONE before the barrier; from there on the
 *                        pieces' readers read the GB copies (piece_src, emit.c)
 *   kernel ahead_until+1 start: the coordinator frees the copies; later readers read DDR. */
#define SEM_AHEAD_BASE ((int64_t)1 << 33) /* + 2 × slice (GO), + 1 (DONE) */

static void ahead_copy(Emit *e, int si) {
  const GtSlice *sl = &e->l->slices[si];
  Piece **ps = arena_alloc(e->s->arena, sizeof(Piece *) * (size_t)e->s->ncores);
  for (int c = 0; c < e->s->nclusters; c++) {
    int qd = e->s->ddma[c], co = emit_coord_q(e, c), n = drain_pieces(e, si, c, ps);
    uint32_t *regs = arena_alloc(e->s->arena, sizeof(uint32_t) * 2 * (size_t)(n + 1));
    for (int i = 0; i < n; i++) {
      char name[200];
      snprintf(name, sizeof name, "gba:%s[%lld,%lld)", e->g->tensors[sl->tensor].name,
               (long long)ps[i]->v.lo, (long long)ps[i]->v.hi);
      regs[2 * i] = prog_new_region(e->p, name);
      regs[2 * i + 1] = prog_new_tile(e->p, name);
      emit_alloc(e, co, regs[2 * i], LVL_GB, c, 0, sl->ahead_off + ps[i]->v.lo - ps[0]->v.lo,
                 ps[i]->v.hi - ps[i]->v.lo, 0);
    }
    emit_sem(e, co, I_SEMPOST, SEM_AHEAD_BASE + 2 * si);
    emit_sem(e, qd, I_SEMWAIT, SEM_AHEAD_BASE + 2 * si);
    for (int i = 0; i < n; i++) {
      int64_t b = ps[i]->v.hi - ps[i]->v.lo;
      GsSpan dp = {0, b, 1, b, 1, b}, sp = dp;
      sp.off = ps[i]->base;
      emit_mov(e, qd, regs[2 * i], regs[2 * i + 1], &dp, ps[i]->reg, ps[i]->tile, &sp);
      emit_count_ddr(e, sl->first, LVL_DDR, b, 0);
      ps[i]->areg = regs[2 * i]; /* not read before ahead_ready: its readers come later */
      ps[i]->atile = regs[2 * i + 1];
      group_take(e, c, ps[i], 0);
    }
    emit_sem(e, qd, I_SEMPOST, SEM_AHEAD_BASE + 2 * si + 1);
  }
}

static void ahead_ready(Emit *e, int si) {
  for (int c = 0; c < e->s->nclusters; c++) emit_sem(e, emit_coord_q(e, c), I_SEMWAIT, SEM_AHEAD_BASE + 2 * si + 1);
}

static void ahead_free(Emit *e, int si) {
  Piece **ps = arena_alloc(e->s->arena, sizeof(Piece *) * (size_t)e->s->ncores);
  for (int c = 0; c < e->s->nclusters; c++) {
    int n = drain_pieces(e, si, c, ps);
    for (int i = 0; i < n; i++) {
      emit_free_region(e, emit_coord_q(e, c), ps[i]->areg);
      ps[i]->areg = ps[i]->atile = 0;
      group_take(e, c, ps[i], 0);
    }
  }
}

/* DDR areas of the tensors with a DDR slice (graph outputs: their part of the output area),
 * the DDR slices, then the first kernel's GB slices. */
void emit_slices_iteration_begin(Emit *e) {
  const GsLowered *l = e->l;
  const GsGraph *g = e->g;
  struct GsEmitState *s = e->s;
  for (int t = 0; t < g->ntensors; t++) s->ddr_area[t] = -1;
  for (int si = 0; si < l->nslices; si++) {
    int t = l->slices[si].tensor;
    if (l->slices[si].level != LVL_DDR || s->ddr_area[t] >= 0) continue;
    if (s->out_off[t]) {
      int64_t ps = graph_per_sample(g, t);
      s->ddr_area[t] = s->out_off[t] - 1 +
                       (ps ? e->sample0 * ps : (int64_t)e->iteration * graph_tensor_bytes(&g->tensors[t]));
    } else {
      s->ddr_area[t] = ivl_take(&s->ddr_ivl, graph_tensor_bytes(&g->tensors[t]), t);
    }
  }
  for (int si = 0; si < l->nslices; si++) {
    const GtSlice *sl = &l->slices[si];
    if (sl->level == LVL_DDR || (sl->level == LVL_GB && sl->kernel == 0)) alloc_slice(e, si);
    if (sl->level < sl->want) { /* spilled: counted once per cluster that runs it */
      int cl = l->kernels[sl->kernel].split_clusters ? l->arch->nclusters : 1;
      s->tally->task[sl->kernel].spills += cl;
      s->tally->task[sl->kernel].spill_bytes += sl->bytes * cl;
    }
  }
}

void emit_slices_kernel_begin(Emit *e, int ki) {
  for (int si = 0; si < e->l->nslices; si++) {
    const GtSlice *sl = &e->l->slices[si];
    if (sl->last == ki - 1 && sl->level != LVL_DDR) free_slice(e, si);
    if (sl->drain_end >= 0 && sl->kernel == ki - 1) drain_copy(e, si);
    if (sl->drain_end >= 0 && sl->kernel == 0 && ki == 0) drain_alloc(e, si);
  }
  for (int si = 0; si < e->l->nslices; si++) {
    const GtSlice *sl = &e->l->slices[si];
    if (sl->ahead_from >= 0 && sl->ahead_until == ki - 1) ahead_free(e, si);
    if (sl->ahead_from == ki) ahead_copy(e, si);
  }
  const GsKernel *k = &e->l->kernels[ki];
  for (int si = k->slice0; si < k->slice0 + k->nslices; si++)
    if (e->l->slices[si].level == LVL_LB) alloc_slice(e, si);
}

void emit_slices_kernel_end(Emit *e, int ki) {
  if (ki + 1 >= e->l->nkernels) return;
  for (int si = 0; si < e->l->nslices; si++) {
    const GtSlice *sl = &e->l->slices[si];
    if (sl->drain_end == ki) drain_free(e, si);
    if (sl->ahead_from >= 0 && sl->first == ki + 1) ahead_ready(e, si);
    if (sl->drain_end >= 0 && sl->kernel == ki + 1) drain_alloc(e, si);
  }
  const GsKernel *k = &e->l->kernels[ki + 1];
  for (int si = k->slice0; si < k->slice0 + k->nslices; si++)
    if (e->l->slices[si].level == LVL_GB) alloc_slice(e, si);
}

void emit_slices_iteration_end(Emit *e) {
  for (int si = 0; si < e->l->nslices; si++) {
    const GtSlice *sl = &e->l->slices[si];
    if (sl->level == LVL_DDR || sl->last == e->l->nkernels - 1) free_slice(e, si);
  }
  for (int t = 0; t < e->g->ntensors; t++)
    if (e->s->ddr_area[t] >= 0 && !e->s->out_off[t]) ivl_remove(&e->s->ddr_ivl, t);
}
