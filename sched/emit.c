/* emit.c — the emitter (emit.h): writes the Program of a plan: the queues, the memory map
 * (DDR, GB and LB regions), and every kernel over the clusters and cores, with the barrier the
 * plan put after it (GsKernel.end_scope). The streams of one kernel on one core are
 * emit_tiles.c's, its buffers connected by pipes (emit_pipe_*, a free flag back per slot):
 *   dma_in : [free last kernel's LB regions] alloc; resident loads; per step: take an A/W/R
 *            slot (from the 3rd load on that waits for its release), load, signal READY
 *   head   : per step: wait READY, take an O slot, gemm or vec, give A/W back after their last
 *            use, hand the tile to the tail unit
 *   tail   : wait MID, run the fused ops in place on O, give R back, signal OREADY to dma_out
 *   dma_out: wait OREADY, store O, give O back to the head
 * All queues of every active core join every barrier; the cluster DMA queues join them too
 * unless the plan orders them by semaphores alone (GsLowered.dma_by_sem).
 * What the emitter counts (DDR bytes and spills per task, barrier episodes, the DDR peak) goes
 * to the tally it was given, never into the plan.
 *
 * Memory: weights and full-batch graph inputs/outputs are allocated in DDR at program start; an
 * iteration's DDR intermediates at its start (freed at its end) — each iteration begins with a
 * set-up barrier. GB tensors (astitch) are allocated by each cluster's coordinator queue at the
 * end of the kernel before their producer and freed at the start of the kernel after their last
 * reader (the interval rule of lower_fill_placement). LB regions live for one kernel. Staged
 * weights live for their kernel, except those the plan keeps in the GB (GsLowered.w_kept): staged
 * at their offset the first time their kernel runs, never freed, read there by every later
 * iteration without a staging.
 * DDR offsets and each core's tile regions come from ivl.h's allocator in program order
 * (ivl_take as the program allocates, ivl_remove as it frees; bottom-up first fit, so blocks
 * taken with no free in between follow each other); the DDR allocator's peak is the tally's
 * ddr_peak_bytes. GB tensors keep the offsets lower_fill_placement gave them.
 */
#include "emit_impl.h"

#include <stdlib.h>
#include <string.h>

static GsQueue *Q(Emit *e, int qi) { return &e->p->queues[qi]; }
int emit_core_q(Emit *e, int c, int core, int slot) {
  return e->s->qidx[((size_t)c * (size_t)e->s->ncores + (size_t)core) * (size_t)e->s->qpc + (size_t)slot];
}

/* ---- instruction helpers ---- */

GsInst *emit_inst(Emit *e, int qi, GsOpcode op) {
  struct GsEmitState *s = e->s;
  GsInst *in = prog_emit(Q(e, qi));
  in->op = (uint8_t)op;
  in->wait = s->pend_wait[2 * qi];
  in->wait2 = s->pend_wait[2 * qi + 1];
  s->pend_wait[2 * qi] = s->pend_wait[2 * qi + 1] = 0;
  s->last[qi] = in;
  return in;
}
GsInst *emit_alloc(Emit *e, int qi, uint32_t r, GsLevel lvl, int cl, int core, int64_t off,
                   int64_t bytes, uint32_t init) {
  GsInst *in = emit_inst(e, qi, I_ALLOC);
  in->sub = (uint8_t)lvl;
  in->r[0] = r;
  in->t[0] = init;
  inst_alloc_set_cluster(in, cl);
  inst_alloc_set_core(in, core);
  inst_alloc_set_offset(in, off);
  inst_alloc_set_bytes(in, bytes);
  return in;
}
void emit_free_region(Emit *e, int qi, uint32_t r) {
  GsInst *in = emit_inst(e, qi, I_FREE);
  in->r[0] = r;
}
/* Queue-to-queue hand-over: a flag between queues of one core; a cluster semaphore (one id per
 * waiting queue and flag) when a side is a cluster DMA queue serving a core without DMA. */
enum { SEM_FLAG_BASE = 1 << 20 };
static int64_t sem_id(int qi, int flag) { return SEM_FLAG_BASE + (int64_t)qi * 4 + flag; }
void emit_signal(Emit *e, int from, int to, int to_slot, int flag) {
  if (e->s->qsem[from] || e->s->qsem[to]) {
    GsInst *in = emit_inst(e, from, I_SEMPOST);
    in->sub = SCOPE_CLUSTER;
    inst_sempost_set_id(in, sem_id(to, flag));
    return;
  }
  gs_assert(flag >= 0 && flag <= GS_SYNC_FLAG_MAX && to_slot >= 0 && to_slot < 255);
  GsInst *last = e->s->last[from];
  if (last && !last->signal2 && !e->s->pend_wait[2 * from]) { /* after it completes, as its own */
    e->s->fold_at[from] = e->p->queues[from].ninsts;
    if (!last->signal) {
      last->signal = (uint8_t)(to_slot + 1);
      last->signal_flag = (uint8_t)flag;
    } else { /* after its first */
      last->signal2 = (uint8_t)(to_slot + 1);
      last->signal2_flag = (uint8_t)flag;
    }
    return;
  }
  GsInst *in = emit_inst(e, from, I_SIGNAL); /* carries the pending waits, which come first */
  in->sub = (uint8_t)to_slot;
  inst_signal_set_flag(in, flag);
}
void emit_wait(Emit *e, int qi, int flag) {
  struct GsEmitState *s = e->s;
  if (s->qsem[qi]) {
    GsInst *in = emit_inst(e, qi, I_SEMWAIT);
    in->sub = SCOPE_CLUSTER;
    inst_semwait_set_id(in, sem_id(qi, flag));
    return;
  }
  gs_assert(flag >= 0 && flag <= GS_SYNC_FLAG_MAX);
  for (int k = 0; k < 2; k++)
    if (!s->pend_wait[2 * qi + k]) { /* the next instruction's wait, or its wait2 */
      s->pend_wait[2 * qi + k] = (uint8_t)(flag + 1);
      return;
    }
  GsInst *in = emit_inst(e, qi, I_WAIT); /* the pending waits first (its own), then this */
  inst_wait_set_flag(in, flag);
}
/* The waits still pending at the end, as one `wait` instruction: it waits for the last of
 * them, and carries the one before it (if any) as its own `wait=`, which comes first. */
void emit_flush(Emit *e) {
  for (int qi = 0; qi < e->p->nqueues; qi++) {
    uint8_t *pw = &e->s->pend_wait[2 * qi];
    if (!pw[0]) continue;
    int last = pw[1] ? 1 : 0;
    int flag = pw[last] - 1;
    pw[last] = 0;
    inst_wait_set_flag(emit_inst(e, qi, I_WAIT), flag);
  }
}
_Static_assert(sizeof(GsInst) == 40 + 8 * GS_INST_NUM, "GsInst has no padding (same_gemm)");

/* Whether gemm g is gemm `last` again: every field but reps and the waits before it the same. */
static int same_gemm(const GsInst *last, const GsInst *g) {
  if (last->op != I_GEMM || g->op != I_GEMM || last->flags != g->flags || last->t[1] != g->t[1] ||
      last->t[2] != g->t[2])
    return 0; /* the usual answer, without copying two instructions */
  GsInst b = *g; /* g with last's wait and reps: one copy, not two */
  b.wait = last->wait;
  b.wait2 = last->wait2;
  inst_gemm_set_reps(&b, inst_gemm_reps(last));
  return memcmp(last, &b, sizeof b) == 0; /* GsInst has no padding: prog.h */
}
void emit_gemm(Emit *e, int qi, const GsInst *g) {
  struct GsEmitState *s = e->s;
  GsInst *last = s->last[qi];
  gs_assert(!g->wait && !g->signal);
  if (last && !last->signal && !s->pend_wait[2 * qi] && same_gemm(last, g)) {
    int64_t reps = isa_gemm_reps(last) + 1, macs = inst_gemm_m(g) * inst_gemm_n(g) * inst_gemm_k(g);
    if (macs <= GS_OPERAND_MAX / reps) { /* the bound prog_check holds m·n·k·reps to */
      s->fold_at[qi] = e->p->queues[qi].ninsts;
      inst_gemm_set_reps(last, reps);
      return;
    }
  }
  GsInst *in = emit_inst(e, qi, I_GEMM);
  uint8_t wait = in->wait, wait2 = in->wait2;
  *in = *g;
  in->wait = wait;
  in->wait2 = wait2;
}

/* Two slots: double buffering, what every kernel's pipes use. */
EmitPipe emit_pipe(int prod, int prod_slot, int free_flag, int waits) {
  EmitPipe p = {prod, prod_slot, free_flag, 2, waits, 0};
  return p;
}
int emit_pipe_take(Emit *e, EmitPipe *p) {
  if (p->waits && p->n >= p->slots) emit_wait(e, p->prod, p->free_flag);
  return (int)(p->n++ % p->slots);
}
void emit_pipe_give(Emit *e, EmitPipe *p, int from) {
  if (p->waits) emit_signal(e, from, p->prod, p->prod_slot, p->free_flag);
}
void emit_pipe_drain(Emit *e, EmitPipe *p) {
  for (int64_t i = 0; p->waits && i < min64(p->n, p->slots); i++) emit_wait(e, p->prod, p->free_flag);
}

void emit_sem(Emit *e, int qi, GsOpcode op, int64_t id) {
  GsInst *in = emit_inst(e, qi, op);
  in->sub = SCOPE_CLUSTER;
  if (op == I_SEMPOST) inst_sempost_set_id(in, id);
  else inst_semwait_set_id(in, id);
}
/* Every queue joins: one chip barrier (id 0), or one barrier per cluster (id 1) over that
 * cluster's queues. */
/* When the plan says so (GsLowered.dma_by_sem) the clusters' weight-staging DMA queues join no
 * barrier: everything they do is ordered by semaphores (the coordinator's allocation before
 * their copy, their copy before the cores' first weight load, those loads before the barrier
 * after which the coordinator frees the region), so a copy staged ahead for the next layer
 * never holds up this one's end. The same holds for the drain queues (emit_slices.c). */
static int joins_barriers(Emit *e, int qi) {
  const GsQueue *q = &e->p->queues[qi];
  return !e->l->dma_by_sem || q->core >= 0 ||
         (e->s->cdma[q->cluster] != qi && e->s->ddma[q->cluster] != qi);
}

/* A barrier episode of `scope` on every queue that joins barriers; it ends task `task` (-1:
 * an iteration's set-up), which the tally records. */
static void emit_barrier(Emit *e, GsScope scope, int task) {
  int chip = 0, *cl = e->s->qcl_barrier;
  for (int c = 0; c < e->s->nclusters; c++) cl[c] = 0;
  for (int qi = 0; qi < e->p->nqueues; qi++)
    if (joins_barriers(e, qi)) {
      chip++;
      cl[e->p->queues[qi].cluster]++;
    }
  for (int qi = 0; qi < e->p->nqueues; qi++) {
    if (!joins_barriers(e, qi)) continue;
    GsInst *in = emit_inst(e, qi, I_BARRIER);
    in->sub = (uint8_t)scope;
    inst_barrier_set_id(in, scope == SCOPE_CHIP ? 0 : 1);
    inst_barrier_set_count(in, scope == SCOPE_CHIP ? chip : cl[e->p->queues[qi].cluster]);
  }
  GsEmitTally *t = e->s->tally;
  if (t->nepisodes == t->room) {
    t->room = t->room ? 2 * t->room : 64;
    t->episode_task = realloc(t->episode_task, sizeof(int) * (size_t)t->room);
    if (!t->episode_task) die("out of memory");
  }
  t->episode_task[t->nepisodes++] = task;
}

/* A gather's index list: `bytes` of region `reg`, which holds `tile`. */
typedef struct {
  uint32_t reg, tile;
  int64_t bytes;
} IdxList;

/* mov: src pattern `ss` (off relative to the src region), dst pattern `ds`; a gather names its
 * index list ix (NULL: a plain copy), every mov it becomes the whole list. */
static void mov_with_idx(Emit *e, int qi, uint32_t dr, uint32_t dt, const GsSpan *ds, uint32_t sr,
                         uint32_t st, const GsSpan *ss, const IdxList *ix) {
  if (ss->rows > 1 && ss->stride == 0) {
    /* the same source row every time (a one-row embedding table): a mov's stride 0 means a
     * row's length, so one mov per row */
    gs_assert(ss->planes <= 1 && ds->planes <= 1);
    for (int64_t r = 0; r < ss->rows; r++) {
      GsSpan s1 = {ss->off, ss->row_bytes, 1, ss->row_bytes, 1, ss->row_bytes};
      GsSpan d1 = {ds->off + r * (ds->stride ? ds->stride : ds->row_bytes), ds->row_bytes, 1,
                   ds->row_bytes, 1, ds->row_bytes};
      mov_with_idx(e, qi, dr, dt, &d1, sr, st, &s1, ix);
    }
    return;
  }
  GsInst *in = emit_inst(e, qi, I_MOV);
  in->r[0] = dr;
  in->t[0] = dt;
  in->r[1] = sr;
  in->t[1] = st;
  inst_mov_set_bytes(in, span_bytes(ss));
  inst_mov_set_dst_off(in, ds->off);
  inst_mov_set_src_off(in, ss->off);
  inst_mov_set_rows(in, ss->rows);
  inst_mov_set_src_stride(in, ss->stride);
  inst_mov_set_dst_stride(in, ds->stride);
  inst_mov_set_planes(in, ss->planes);
  inst_mov_set_src_pstride(in, ss->pstride);
  inst_mov_set_dst_pstride(in, ds->pstride);
  if (ix) {
    in->r[2] = ix->reg;
    in->t[2] = ix->tile;
    inst_mov_set_idx_bytes(in, ix->bytes);
  }
  gs_assert(span_bytes(ss) == span_bytes(ds) && ss->rows == ds->rows && ss->planes == ds->planes);
}
void emit_mov(Emit *e, int qi, uint32_t dr, uint32_t dt, const GsSpan *ds, uint32_t sr,
              uint32_t st, const GsSpan *ss) {
  mov_with_idx(e, qi, dr, dt, ds, sr, st, ss, NULL);
}
void emit_gather(Emit *e, int qi, uint32_t dr, uint32_t dt, const GsSpan *ds, uint32_t sr,
                 uint32_t st, const GsSpan *ss, uint32_t ir, uint32_t it, int64_t ibytes) {
  IdxList ix = {ir, it, ibytes};
  mov_with_idx(e, qi, dr, dt, ds, sr, st, ss, &ix);
}
/* A contiguous local pattern with the same shape as `s`, at offset 0. */
GsSpan emit_local_of(const GsSpan *s) {
  GsSpan d = *s;
  d.off = 0;
  d.stride = s->row_bytes;
  d.pstride = s->row_bytes * s->rows;
  return d;
}

/* ---- where tensors live ---- */

int64_t emit_share(const Emit *e) { return ceil_div64(e->g->batch, e->a->nclusters); }


/* The pieces of tensor t produced by its kernel, restricted to cluster `only` (-1: all): one
 * per core with rows (and columns), its view of t (lower_core_view), sorted by (v.lo, v.b0). */
static PieceList make_pieces(Emit *e, int t, int only) {
  const GsLowered *l = e->l;
  const GsKernel *k = &l->kernels[l->place[t].kernel];
  GsKernelPart kp;
  lower_kernel_part(e->g, e->a, k, &kp);
  PieceList pl;
  pl.n = 0;
  pl.p = arena_alloc(e->s->arena, sizeof(Piece) * (size_t)(e->s->nclusters * k->pr * k->pc));
  for (int c = 0; c < e->s->nclusters; c++) {
    if (only >= 0 && c != only) continue;
    for (int i = 0; i < k->pr * k->pc; i++) {
      GsView v = lower_core_view(e->g, e->a, k, &kp, t, c, i);
      if (v.hi <= v.lo) continue;
      Piece *x = &pl.p[pl.n++];
      memset(x, 0, sizeof *x);
      x->v = v;
    }
  }
  return pl;
}

static const PieceList *pieces_of(Emit *e, int t, int c) {
  int r = graph_root(e->g, t);
  size_t at = (size_t)r * (size_t)e->s->nclusters + (size_t)c;
  const PieceList *pl;
  if (lower_keeps_slices(e->l) && e->g->tensors[r].producer >= 0) pl = &e->s->sl[at];
  else pl = e->l->place[r].level == LVL_GB ? &e->s->gb[at] : &e->s->ddr[r];
  gs_assert(pl->n > 0);
  return pl;
}

/* The piece holding byte `off`: the last with v.lo <= off (pieces are sorted by v.lo, then
 * v.b0), or one before it over the same rows. */
static const Piece *piece_at(const PieceList *pl, int64_t off) {
  int lo = 0, hi = pl->n - 1;
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (pl->p[mid].v.lo <= off) lo = mid;
    else hi = mid - 1;
  }
  for (int i = lo; i >= 0 && pl->p[i].v.lo == pl->p[lo].v.lo; i--)
    if (view_has(&pl->p[i].v, off)) return &pl->p[i];
  die("no piece of the tensor holds byte %lld", (long long)off);
}

int emit_task_of(const Emit *e, const GsKernel *k) { return (int)(k - e->l->kernels); }
void emit_count_ddr(Emit *e, int task, int level, int64_t bytes, int write) {
  if (level != LVL_DDR) return;
  GsEmitTally *t = e->s->tally;
  gs_assert(task >= 0 && task < t->ntasks);
  if (write) t->task[task].ddr_write += bytes;
  else t->task[task].ddr_read += bytes;
}

static int in_place(const Piece *p) { return p->rpitch == p->v.pitch; }

/* Where readers find byte x of piece p: its region, or its GB copy when it was loaded ahead
 * (emit_slices.c; in place over the piece's rows); the region offset of x; the level counted. */
typedef struct {
  uint32_t reg, tile;
  int64_t addr;
  int level;
} PieceSrc;
static int64_t piece_addr(const Piece *p, int64_t x) {
  int64_t r = (x - p->v.lo) / p->v.pitch, b = (x - p->v.lo) % p->v.pitch - p->v.b0;
  return p->base + r * p->rpitch + b;
}
static PieceSrc piece_src(const Piece *p, int64_t x) {
  if (p->areg) return (PieceSrc){p->areg, p->atile, x - p->v.lo, LVL_GB};
  return (PieceSrc){p->reg, p->tile, piece_addr(p, x), p->level};
}

/* One mov of a reader's cut: the bytes [x, x + len) of the tensor and, rows > 1, the same bytes
 * of the next rows - 1 span rows (a stride apart), read from piece p to dst_off of dreg. */
typedef struct {
  const Piece *p;
  int64_t x, len, rows, stride;  /* stride: the span's; the region's follows from the piece */
} Cut;

/* The bytes from x on that a reader takes from piece p with one pattern row (at most len): in
 * place, up to its rows' end (the region and tile the pieces of those rows share); compact, up to
 * the end of its bytes of x's row. */
static int64_t cut_len(const Piece *p, int64_t x, int64_t len) {
  int64_t end = p->v.hi;
  if (!in_place(p)) end = p->v.lo + (x - p->v.lo) / p->v.pitch * p->v.pitch + p->v.b1;
  return min64(len, end - x);
}

/* How many span rows (at most nmax, a stride apart) cut [x, x + len) of p covers with one
 * pattern: while they stay inside p's rows; compact, only when the stride is whole rows of it
 * (then they keep its columns). */
static int64_t cut_rows(const Piece *p, int64_t x, int64_t len, int64_t stride, int64_t nmax) {
  if (stride <= 0) return nmax;
  if (!in_place(p) && stride % p->v.pitch != 0) return 1;
  return min64(nmax, (p->v.hi - x - len) / stride + 1);
}

static void emit_cut(Emit *e, const GsKernel *k, int qi, uint32_t dreg, uint32_t dtile,
                     int64_t dst_off, int64_t dst_stride, const Cut *c, int whole_row) {
  PieceSrc ps = piece_src(c->p, c->x);
  int64_t rs = in_place(c->p) || c->p->areg ? c->stride : c->stride / c->p->v.pitch * c->p->rpitch;
  if (c->rows == 1 && !whole_row) rs = dst_stride = c->len;
  GsSpan src = {ps.addr, c->len, c->rows, rs, 1, c->rows * rs};
  GsSpan dst = {dst_off, c->len, c->rows, dst_stride, 1, c->rows * dst_stride};
  emit_mov(e, qi, dreg, dtile, &dst, ps.reg, ps.tile, &src);
  emit_count_ddr(e, emit_task_of(e, k), ps.level, c->rows * c->len, 0);
}

/* Load span s of tensor t (cluster c's view) into LB region dreg at offset dst_off, leaving
 * tile dtile, contiguous. A span inside the rows of one piece in place is one mov; otherwise
 * row by row: each span row is cut where it leaves a piece's region, and the cuts go on over the
 * next span rows while every cut stays inside its piece (one mov per cut). */
void emit_load_span_at(Emit *e, const GsKernel *k, int qi, int c, int t, const GsSpan *s, uint32_t dreg,
                         uint32_t dtile, int64_t dst_off) {
  const PieceList *pl = pieces_of(e, t, c);
  const Piece *first = piece_at(pl, s->off);
  if (in_place(first) && s->off + span_extent(s) <= first->v.hi) {
    PieceSrc ps = piece_src(first, s->off);
    GsSpan src = *s, dst = emit_local_of(s);
    src.off = ps.addr;
    dst.off = dst_off;
    emit_mov(e, qi, dreg, dtile, &dst, ps.reg, ps.tile, &src);
    emit_count_ddr(e, emit_task_of(e, k), ps.level, span_bytes(s), 0);
    return;
  }
  GsSpan rs = *s; /* a contiguous span over compact pieces' rows: read as rows of their pitch */
  int64_t tot = span_bytes(s), p0 = first->v.pitch;
  if (!in_place(first) && s->planes == 1 && (s->rows == 1 || s->stride == s->row_bytes) &&
      (s->off - first->v.lo) % p0 == 0 && tot % p0 == 0)
    rs = (GsSpan){s->off, p0, tot / p0, p0, 1, tot};
  s = &rs;
  for (int64_t pl_i = 0; pl_i < s->planes; pl_i++) {
    int64_t r = 0;
    while (r < s->rows) {
      /* the cuts of span row r, twice: how many rows they all cover, then their movs */
      int64_t o = s->off + pl_i * s->pstride + r * s->stride, n = s->rows - r, len;
      int whole = 1;
      for (int64_t j = 0; j < s->row_bytes; j += len) {
        const Piece *p = piece_at(pl, o + j);
        len = cut_len(p, o + j, s->row_bytes - j);
        whole = whole && len == s->row_bytes;
        n = min64(n, cut_rows(p, o + j, len, s->stride, n));
      }
      int64_t local = dst_off + (pl_i * s->rows + r) * s->row_bytes;
      for (int64_t j = 0; j < s->row_bytes; j += len) {
        const Piece *p = piece_at(pl, o + j);
        len = cut_len(p, o + j, s->row_bytes - j);
        Cut cut = {p, o + j, len, n, s->stride};
        emit_cut(e, k, qi, dreg, dtile, local + j, s->row_bytes, &cut, whole);
      }
      r += n;
    }
  }
}

/* Store LB region sreg (holding stile, contiguous) to span s of tensor t: the span lies in the
 * piece of the storing core (in its GB block when the piece drains, emit_slices.c: in place over
 * the piece's rows). */
void emit_store_span(Emit *e, const GsKernel *k, int qi, int c, int t, const GsSpan *s, uint32_t sreg,
                       uint32_t stile) {
  const PieceList *pl = pieces_of(e, t, c);
  const Piece *pc = piece_at(pl, s->off);
  const GsView *v = &pc->v;
  gs_assert(s->off + span_extent(s) <= v->hi);
  if (!view_whole(v)) /* every row of the span inside the piece's bytes of its row */
    gs_assert(s->planes == 1 && (s->rows == 1 || s->stride % v->pitch == 0) &&
              (s->off - v->lo) % v->pitch + s->row_bytes <= v->b1);
  GsSpan dst = *s, src = emit_local_of(s);
  if (pc->dreg) { /* a drain: into its GB block; the cluster's drain queue copies it on */
    dst.off = s->off - v->lo;
    emit_mov(e, qi, pc->dreg, pc->dtile, &dst, sreg, stile, &src);
    return;
  }
  dst.off = piece_addr(pc, s->off);
  if (!in_place(pc) && s->rows > 1) {
    dst.stride = s->stride / v->pitch * pc->rpitch;
    dst.pstride = dst.stride * s->rows;
  }
  emit_mov(e, qi, pc->reg, pc->tile, &dst, sreg, stile, &src);
  emit_count_ddr(e, emit_task_of(e, k), pc->level, span_bytes(s), 1);
}

/* ---- program start: queues, DDR weights, inputs and outputs ---- */

/* The program's queues, in a fixed order: cluster, core, slot; then the cluster DMA queues
 * (staging: need_cdma; drains and loads ahead: need_ddma). A core without DMA engines (Goya's
 * GEMM core) is served by two cluster DMA queues (1+2j, 2+2j), through semaphores (qsem). */
static void setup_queues(Emit *e, int need_cdma, int need_ddma) {
  const GsArch *a = e->a;
  const GsLowered *l = e->l;
  struct GsEmitState *s = e->s;
  int nodma = 0;
  for (int kind = 0; kind < a->ncore_kinds; kind++)
    if (a->core_kinds[kind].dma_engines == 0) nodma += l->active_cores[kind];
  if (nodma && 1 + 2 * nodma > a->dma_engines)
    die("config '%s': %d cores without DMA need %d cluster DMA engines, it has %d", a->name,
        nodma, 1 + 2 * nodma, a->dma_engines);
  for (int c = 0; c < s->nclusters; c++) {
    int j = 0;
    for (int kind = 0; kind < a->ncore_kinds; kind++) {
      const GsCoreKind *ck = &a->core_kinds[kind];
      for (int i = 0; i < l->active_cores[kind]; i++) {
        int core = arch_core_base(a, kind) + i;
        for (int slot = 0; slot < 2 + ck->nunits; slot++) {
          if (slot < Q_UNIT0 && ck->dma_engines == 0) prog_queue(e->p, c, -1, 1 + 2 * j + slot);
          else prog_queue(e->p, c, core, slot);
          s->qidx[((size_t)c * (size_t)s->ncores + (size_t)core) * (size_t)s->qpc + (size_t)slot] =
              e->p->nqueues - 1;
        }
        if (ck->dma_engines == 0) j++;
      }
    }
    s->cdma[c] = -1;
    if (need_cdma) {
      prog_queue(e->p, c, -1, 0);
      s->cdma[c] = e->p->nqueues - 1;
    }
    s->ddma[c] = -1;
    if (need_ddma) { /* plan_drains asked for a second engine and no core without DMA */
      prog_queue(e->p, c, -1, 1);
      s->ddma[c] = e->p->nqueues - 1;
    }
  }
  s->nparticipants = e->p->nqueues;
  s->qsem = arena_alloc(e->s->arena, (size_t)e->p->nqueues);
  s->fold_at = arena_alloc(e->s->arena, (size_t)e->p->nqueues * sizeof *s->fold_at);
  memset(s->fold_at, 0xff, (size_t)e->p->nqueues * sizeof *s->fold_at); /* -1: never */
  for (int c = 0; c < s->nclusters; c++)
    for (int kind = 0; kind < a->ncore_kinds; kind++)
      if (a->core_kinds[kind].dma_engines == 0)
        for (int i = 0; i < l->active_cores[kind]; i++)
          for (int slot = 0; slot < 2 + a->core_kinds[kind].nunits; slot++)
            s->qsem[emit_core_q(e, c, arch_core_base(a, kind) + i, slot)] = 1;
}

/* The program-lifetime DDR areas: every op's weights, the graph inputs' whole-batch regions
 * (holding their data from the start; iterations read their samples' part), then an area for
 * each graph output's whole batch, written in pieces. */
static void setup_ddr(Emit *e) {
  const GsLowered *l = e->l;
  const GsGraph *g = e->g;
  struct GsEmitState *s = e->s;
  int coord = 0;
  ivl_init(&s->ddr_ivl, 0, INT64_MAX, 256, IVL_BOTTOM_UP);
  for (int op = 0; op < g->nops; op++) {
    int64_t wb = lower_op_weight_bytes(g, op);
    if (!wb) continue;
    char name[160];
    snprintf(name, sizeof name, "w:%s", g->ops[op].name ? g->ops[op].name : g->tensors[g->ops[op].out[0]].name);
    s->w_reg[op] = prog_new_region(e->p, name);
    s->w_tile[op] = prog_new_tile(e->p, name);
    emit_alloc(e, coord, s->w_reg[op], LVL_DDR, 0, 0, ivl_take(&s->ddr_ivl, wb, -1), wb, s->w_tile[op]);
  }
  for (int t = 0; t < g->ntensors; t++) {
    if (g->tensors[t].producer >= 0 || l->place[t].last_kernel < 0) continue;
    int64_t ps = graph_per_sample(g, t);
    int64_t bytes = ps ? ps * l->batch : graph_tensor_bytes(&g->tensors[t]);
    char name[160];
    snprintf(name, sizeof name, "t:%s", g->tensors[t].name);
    s->io_reg[t] = prog_new_region(e->p, name);
    s->io_tile[t] = prog_new_tile(e->p, name);
    emit_alloc(e, coord, s->io_reg[t], LVL_DDR, 0, 0, ivl_take(&s->ddr_ivl, bytes, -1), bytes, s->io_tile[t]);
  }
  for (int i = 0; i < g->noutputs; i++) {
    int t = graph_root(g, g->outputs[i]);
    if (g->tensors[t].producer < 0 || s->out_off[t]) continue;
    int64_t ps = graph_per_sample(g, t);
    int64_t bytes = ps ? ps * l->batch : graph_tensor_bytes(&g->tensors[t]) * ceil_div64(l->batch, g->batch);
    s->out_off[t] = ivl_take(&s->ddr_ivl, bytes, -1) + 1; /* +1: 0 means "not an output" */
  }
  s->tally->ddr_peak_bytes = ivl_peak(&s->ddr_ivl);
}


/* The state of a program's emission: queues from the first iteration's plan (the kernels' cores,
 * the cluster DMA queues their weights, drains and loads ahead need), the DDR areas of the
 * whole run. */
GsEmitter *emit_new(const GsLowered *l, GsProgram *p, GsEmitTally *sink) {
  const GsArch *a = l->arch;
  const GsGraph *g = l->graph;
  GsArena *arena = arena_new();
  struct GsEmitState *s = arena_alloc(arena, sizeof *s);
  s->arena = arena;
  s->p = p;
  s->tally = sink;
  Emit e = {.l = l, .a = a, .g = g, .p = p, .s = s};
  s->nclusters = a->nclusters;
  s->ncores = a->cores_per_cluster;
  int maxu = 0;
  for (int k = 0; k < a->ncore_kinds; k++) maxu = a->core_kinds[k].nunits > maxu ? a->core_kinds[k].nunits : maxu;
  s->qpc = 2 + maxu;
  size_t nslots = (size_t)s->nclusters * (size_t)s->ncores * (size_t)s->qpc;
  s->qidx = arena_alloc(arena, sizeof(int) * nslots);
  for (size_t i = 0; i < nslots; i++) s->qidx[i] = -1;
  s->cdma = arena_alloc(arena, sizeof(int) * (size_t)s->nclusters);
  s->ddma = arena_alloc(arena, sizeof(int) * (size_t)s->nclusters);
  int need_ddma = 0, need_cdma = 0;
  for (int si = 0; si < l->nslices; si++)
    need_ddma |= l->slices[si].drain_end >= 0 || l->slices[si].ahead_from >= 0;
  for (int ki = 0; ki < l->nkernels; ki++) need_cdma |= l->kernels[ki].w_via_gb;
  setup_queues(&e, need_cdma, need_ddma);
  s->pend_wait = arena_alloc(arena, 2 * (size_t)p->nqueues + 2); /* zeroed: none pending */
  s->last = arena_alloc(arena, sizeof(GsInst *) * ((size_t)p->nqueues + 1));
  s->w_reg = arena_alloc(arena, sizeof(uint32_t) * (size_t)g->nops);
  s->w_tile = arena_alloc(arena, sizeof(uint32_t) * (size_t)g->nops);
  s->ddr = arena_alloc(arena, sizeof(PieceList) * (size_t)g->ntensors);
  s->gb = arena_alloc(arena, sizeof(PieceList) * (size_t)g->ntensors * (size_t)s->nclusters);
  s->io_reg = arena_alloc(arena, sizeof(uint32_t) * (size_t)g->ntensors);
  s->io_tile = arena_alloc(arena, sizeof(uint32_t) * (size_t)g->ntensors);
  s->out_off = arena_alloc(arena, sizeof(int64_t) * (size_t)g->ntensors);
  s->gbw = arena_alloc(arena, sizeof(StagedW) * (size_t)s->nclusters);
  if (l->w_kept) s->kept = arena_alloc(arena, sizeof(StagedW) * (size_t)g->nops * (size_t)s->nclusters);
  s->sl = arena_alloc(arena, sizeof(PieceList) * (size_t)g->ntensors * (size_t)s->nclusters);
  s->ddr_area = arena_alloc(arena, sizeof(int64_t) * (size_t)g->ntensors);
  s->qcl_barrier = arena_alloc(arena, sizeof(int) * (size_t)s->nclusters);
  s->lb_ivl = arena_alloc(arena, sizeof(GsIvl) * nslots / (size_t)s->qpc);
  for (size_t i = 0; i < nslots / (size_t)s->qpc; i++) ivl_init(&s->lb_ivl[i], 0, 0, 64, IVL_BOTTOM_UP);
  setup_ddr(&e);
  return s;
}

/* Room in the tally and in the weights staged ahead for the kernels of this iteration's plan
 * (a re-plan for a smaller last iteration may have more kernels than the first). */
static void fit_kernels(struct GsEmitState *s, int n) {
  GsEmitTally *t = s->tally;
  if (n > t->ntasks) {
    t->task = realloc(t->task, sizeof(GsTaskTally) * (size_t)n);
    if (!t->task) die("out of memory");
    memset(t->task + t->ntasks, 0, sizeof(GsTaskTally) * (size_t)(n - t->ntasks));
    t->ntasks = n;
  }
  if (n > s->ahead_kernels) {
    size_t per = (size_t)s->nclusters;
    StagedW *na = arena_alloc(s->arena, sizeof(StagedW) * (size_t)n * per);
    if (s->ahead_kernels) memcpy(na, s->ahead, sizeof(StagedW) * (size_t)s->ahead_kernels * per);
    s->ahead = na;
    s->ahead_kernels = n;
  }
}

/* ---- iteration start/end: DDR intermediates ---- */

int emit_coord_q(Emit *e, int c) {
  for (int core = 0; core < e->s->ncores; core++) {
    int q = emit_core_q(e, c, core, Q_DMA_IN);
    if (q >= 0) return q;
  }
  die("cluster %d has no active core", c);
}

/* Piece i lies in place over the same rows as the piece before it: it takes that one's region
 * and tile (and returns 1). */
static int piece_shares(PieceList *pl, int i) {
  Piece *x = &pl->p[i], *y = i > 0 ? &pl->p[i - 1] : NULL;
  if (!y || y->v.lo != x->v.lo || y->slice != x->slice) return 0;
  gs_assert(y->v.hi == x->v.hi && y->v.b1 <= x->v.b0 && x->rpitch == x->v.pitch);
  x->reg = y->reg;
  x->tile = y->tile;
  x->owner = 0;
  return 1;
}

/* Allocates the pieces of tensor t at byte `base` of a buffer (DDR, or the GB of cluster c):
 * a region over each run of rows, named after the tensor and those rows, in place; the pieces of
 * the same rows (cores that split the kernel's columns) share it and its tile (piece_shares).
 * A region of a graph output's DDR area is a program output: marked `final=` with the tile its
 * stores write, so the simulator checks at the end of the run that every byte of it was
 * written (by every core that shares it). */
static void alloc_pieces(Emit *e, PieceList *pl, int t, GsLevel lvl, int c, int64_t base, int64_t lo0) {
  for (int i = 0; i < pl->n; i++) {
    Piece *x = &pl->p[i];
    x->base = x->v.b0;
    x->rpitch = x->v.pitch;
    x->level = lvl;
    x->slice = -1;
    if (piece_shares(pl, i)) continue;
    char name[200];
    snprintf(name, sizeof name, "%s%s[%lld,%lld)", lvl == LVL_GB ? "gb:" : "t:", e->g->tensors[t].name,
             (long long)x->v.lo, (long long)x->v.hi);
    x->owner = 1;
    x->reg = prog_new_region(e->p, name);
    x->tile = prog_new_tile(e->p, name);
    GsInst *in = emit_alloc(e, emit_coord_q(e, lvl == LVL_GB ? c : 0), x->reg, lvl, c, 0,
                            base + x->v.lo - lo0, x->v.hi - x->v.lo, 0);
    if (lvl == LVL_DDR && e->s->out_off[t]) in->t[1] = x->tile;
  }
}

static void gb_alloc_tensor(Emit *e, int t) {
  for (int c = 0; c < e->s->nclusters; c++) {
    PieceList *pl = &e->s->gb[(size_t)t * (size_t)e->s->nclusters + (size_t)c];
    *pl = make_pieces(e, t, c);
    if (pl->n) alloc_pieces(e, pl, t, LVL_GB, c, e->l->place[t].gb_offset, pl->p[0].v.lo);
  }
}
static void gb_free_tensor(Emit *e, int t) {
  for (int c = 0; c < e->s->nclusters; c++) {
    PieceList *pl = &e->s->gb[(size_t)t * (size_t)e->s->nclusters + (size_t)c];
    for (int i = 0; i < pl->n; i++)
      if (pl->p[i].owner) emit_free_region(e, emit_coord_q(e, c), pl->p[i].reg);
    pl->n = 0;
  }
}

static void iteration_begin(Emit *e) {
  const GsGraph *g = e->g;
  const GsLowered *l = e->l;
  struct GsEmitState *s = e->s;
  for (int t = 0; t < g->ntensors; t++) {
    const GsTensorPlace *p = &l->place[t];
    if (p->alias_of >= 0) continue;
    if (g->tensors[t].producer < 0) {
      if (!s->io_reg[t]) continue;
      /* one piece: this iteration's samples of the whole-batch input */
      PieceList *pl = &s->ddr[t];
      pl->n = 1;
      pl->p = arena_alloc(e->s->arena, sizeof(Piece)); /* zeroed */
      int64_t tb = graph_tensor_bytes(&g->tensors[t]);
      pl->p[0].v = (GsView){0, tb, tb, 0, tb};
      pl->p[0].base = e->sample0 * graph_per_sample(g, t);
      pl->p[0].rpitch = tb;
      pl->p[0].reg = s->io_reg[t];
      pl->p[0].tile = s->io_tile[t];
      pl->p[0].level = LVL_DDR;
      pl->p[0].slice = -1;
      continue;
    }
    if (lower_keeps_slices(l)) continue; /* slices: emit_slices.c */
    if (p->level == LVL_GB && p->kernel == 0) gb_alloc_tensor(e, t);
    if (p->level != LVL_DDR || p->kernel < 0) continue;
    PieceList *pl = &s->ddr[t];
    *pl = make_pieces(e, t, -1);
    if (s->out_off[t]) {
      int64_t ps = graph_per_sample(g, t);
      int64_t at =
          s->out_off[t] - 1 +
          (ps ? e->sample0 * ps : (int64_t)e->iteration * graph_tensor_bytes(&g->tensors[t]));
      alloc_pieces(e, pl, t, LVL_DDR, 0, at, 0);
    } else {
      alloc_pieces(e, pl, t, LVL_DDR, 0,
                   ivl_take(&s->ddr_ivl, graph_tensor_bytes(&g->tensors[t]), t), 0);
    }
    if (p->want > p->level) { /* spilled: counted once per cluster that runs its producer */
      int cl = l->kernels[p->kernel].split_clusters ? l->arch->nclusters : 1;
      s->tally->task[p->kernel].spills += cl;
      s->tally->task[p->kernel].spill_bytes += graph_tensor_bytes(&g->tensors[t]);
    }
  }
  if (lower_keeps_slices(l)) emit_slices_iteration_begin(e);
  s->tally->ddr_peak_bytes = ivl_peak(&s->ddr_ivl);
  emit_barrier(e, SCOPE_CHIP, -1); /* set-up episode */
}

static void iteration_end(Emit *e) {
  const GsGraph *g = e->g;
  struct GsEmitState *s = e->s;
  if (lower_keeps_slices(e->l)) {
    emit_slices_iteration_end(e);
    return;
  }
  for (int t = 0; t < g->ntensors; t++) {
    const GsTensorPlace *p = &e->l->place[t];
    if (p->alias_of >= 0 || g->tensors[t].producer < 0) continue;
    if (p->level == LVL_GB) gb_free_tensor(e, t);
    if (p->level == LVL_DDR && !graph_is_output(g, t)) {
      PieceList *pl = &s->ddr[t];
      for (int i = 0; i < pl->n; i++)
        if (pl->p[i].owner) emit_free_region(e, emit_coord_q(e, 0), pl->p[i].reg);
      pl->n = 0;
      ivl_remove(&s->ddr_ivl, t); /* -1 when it had no area (no kernel writes it) */
    }
  }
}

/* ---- LB (or GB for cores without LB) regions of one kernel on one core ---- */

uint32_t emit_lb_region(LbAlloc *la, int64_t bytes) {
  Emit *e = la->e;
  bytes = (bytes + 63) / 64 * 64;
  if (bytes == 0) bytes = 64;
  uint32_t r = prog_new_region(e->p, NULL);
  int64_t off = ivl_take(la->ivl, bytes, (int)r);
  gs_assert(off >= 0);
  if (la->level == LVL_LB)
    emit_alloc(e, la->qin, r, LVL_LB, la->c, la->core, off, bytes, 0);
  else
    emit_alloc(e, la->qin, r, LVL_GB, la->c, 0, la->gb_base + off, bytes, 0);
  return r;
}

void emit_lb_begin(Emit *e, LbAlloc *la, int c, int core, const GsKernel *k) {
  int kind = k->core_kind;
  la->e = e;
  la->c = c;
  la->core = core;
  la->kind = kind;
  la->qin = emit_core_q(e, c, core, Q_DMA_IN);
  la->cap = lower_kernel_tile_budget(e->l, k);
  la->ivl = &e->s->lb_ivl[(size_t)c * (size_t)e->s->ncores + (size_t)core];
  gs_assert(la->ivl->n == 0); /* lb_release_all freed the previous kernel's */
  ivl_free(la->ivl);
  ivl_init(la->ivl, 0, la->cap, 64, IVL_BOTTOM_UP);
  la->level = e->a->core_kinds[kind].lb_bytes > 0 ? LVL_LB : LVL_GB;
  la->gb_base = e->a->gb_bytes / 4 * 3 +
                (int64_t)(core - arch_core_base(e->a, kind)) * arch_core_tile_budget(e->a, kind);
}

/* Frees, at the start of a kernel, every region the core allocated for the previous one. */
static void lb_release_all(Emit *e) {
  for (int c = 0; c < e->s->nclusters; c++)
    for (int core = 0; core < e->s->ncores; core++) {
      size_t ci = (size_t)c * (size_t)e->s->ncores + (size_t)core;
      int q = emit_core_q(e, c, core, Q_DMA_IN);
      GsIvl *v = &e->s->lb_ivl[ci];
      while (v->n > 0) { /* in allocation order */
        int r = v->b[0].id;
        emit_free_region(e, q, (uint32_t)r);
        ivl_remove(v, r);
      }
    }
}

/* ---- weights staged in GB ---- */

/* Cluster c's DMA queue copies kernel ki's weights DDR -> GB at offset `off` of the weight area
 * once (the coordinator takes the regions; the DMA queue waits for them through semaphore 0),
 * chunk by chunk (one chunk unless the tiler chunked them, GsKernel.w_chunks), and after each
 * chunk posts that chunk's semaphore of every core of the kernel (emit_stage_sem), which waits for
 * it before its first weight load from the chunk (emit_tiles.c). A region per chunk: a core
 * reads a chunk while the next one is still being written. */
static void stage_weights(Emit *e, int ki, int c, int64_t off, StagedW *sw) {
  const GsKernel *k = &e->l->kernels[ki];
  struct GsEmitState *s = e->s;
  int qc = s->cdma[c], co = emit_coord_q(e, c);
  sw->n = k->w_chunks > 0 ? k->w_chunks : 1;
  for (int ch = 0; ch < sw->n; ch++) {
    char name[160];
    if (k->w_chunks > 0) snprintf(name, sizeof name, "gbw%d:%s#%d", c, k->name, ch);
    else snprintf(name, sizeof name, "gbw%d:%s", c, k->name);
    int64_t c0, cb;
    emit_stage_chunk(e->g, k, ch, &c0, &cb);
    sw->reg[ch] = prog_new_region(e->p, name);
    sw->tile[ch] = prog_new_tile(e->p, name);
    emit_alloc(e, co, sw->reg[ch], LVL_GB, c, 0, off + c0, cb, 0);
  }
  emit_sem(e, co, I_SEMPOST, 0);
  emit_sem(e, qc, I_SEMWAIT, 0);
  int64_t krows, rps;
  lower_kernel_rows(e->g, e->a, k, &krows, &rps);
  for (int ch = 0; ch < sw->n; ch++) {
    int64_t c0, cb;
    emit_stage_chunk(e->g, k, ch, &c0, &cb);
    GsSpan dst = {0, cb, 1, cb, 1, cb}, src = {c0, cb, 1, cb, 1, cb};
    emit_mov(e, qc, sw->reg[ch], sw->tile[ch], &dst, s->w_reg[k->head], s->w_tile[k->head], &src);
    emit_count_ddr(e, ki, LVL_DDR, cb, 0);
    for (int i = 0; i < k->pr * k->pc; i++) { /* every core with rows */
      int64_t a0, a1;
      lower_core_rows(e->g, e->a, k, krows, rps, c, i / k->pc, &a0, &a1);
      if (a1 > a0)
        emit_sem(e, qc, I_SEMPOST,
                 emit_stage_sem(e, k, arch_core_base(e->a, k->core_kind) + i, ch));
    }
  }
}

void emit_stage_chunk(const GsGraph *g, const GsKernel *k, int ch, int64_t *off, int64_t *bytes) {
  int64_t wb = lower_op_weight_bytes(g, k->head);
  if (k->w_chunks <= 0) {
    *off = 0;
    *bytes = wb;
    return;
  }
  GsSpan s;
  GsTile t0 = {0, 1, (int64_t)ch * k->tc, (int64_t)(ch + 1) * k->tc, 0, 1};
  GsTile t1 = {0, 1, (int64_t)(ch + 1) * k->tc, (int64_t)(ch + 2) * k->tc, 0, 1};
  gs_assert(lower_tile_weight_span(g, k->head, &t0, &s));
  *off = s.off;
  int64_t end = wb;
  if (ch + 1 < k->w_chunks && lower_tile_weight_span(g, k->head, &t1, &s)) end = s.off;
  *bytes = end - *off;
}

int emit_stage_chunk_of(const GsKernel *k, int64_t c0) {
  return k->w_chunks > 0 ? (int)(c0 / k->tc) : 0;
}

/* The semaphore by which the cluster DMA tells core `core` that chunk `chunk` of kernel k's
 * weights is staged: one per kernel, chunk and core, so stagings issued out of kernel order
 * (level full stages some kernels ahead of others) can never satisfy another kernel's wait. */
int64_t emit_stage_sem(const Emit *e, const GsKernel *k, int core, int chunk) {
  return SEM_STAGE_BASE + ((int64_t)(k - e->l->kernels) * GT_STAGE_CHUNKS + chunk) * 65536 + core;
}

/* Frees cluster c's staged weights of the current kernel (not weights the plan keeps). */
static void weights_free(Emit *e, int c) {
  StagedW *sw = &e->s->gbw[c];
  for (int ch = 0; ch < sw->n && !sw->kept; ch++) emit_free_region(e, emit_coord_q(e, c), sw->reg[ch]);
  sw->n = 0;
  sw->kept = sw->ready = 0;
}

/* Kernel ki's weights in cluster c where the plan keeps them in the GB (GsLowered.w_kept):
 * staged at that offset the first time, read there ever after. 0: the plan does not keep them. */
static int weights_kept(Emit *e, int ki, int c) {
  const GsLowered *l = e->l;
  int op = l->kernels[ki].head;
  if (!l->w_kept || l->w_kept[op] < 0) return 0;
  StagedW *kw = &e->s->kept[(size_t)op * (size_t)e->s->nclusters + (size_t)c];
  kw->ready = kw->n > 0;
  if (!kw->ready) stage_weights(e, ki, c, l->w_kept[op], kw);
  kw->kept = 1;
  e->s->gbw[c] = *kw;
  return 1;
}

/* Kernel ki stages its weights in cluster c (it has rows there and reads them through GB). */
static int stages(Emit *e, int ki, int c) {
  const GsKernel *k = &e->l->kernels[ki];
  if (!k->w_via_gb || lower_op_kind(e->g, k->head) == LK_COPY) return 0;
  int64_t krows, rps, a0, a1;
  lower_kernel_rows(e->g, e->a, k, &krows, &rps);
  lower_core_rows(e->g, e->a, k, krows, rps, c, 0, &a0, &a1);
  return a1 > a0;
}

/* At the start of kernel ki in cluster c: free the previous kernel's staged weights; stage this
 * kernel's, unless they were staged ahead. Under graphturbo's level full the plan gave every
 * kernel's staged weights an offset among the GB's slices and the kernel at whose start they
 * are staged, up to --gt-prefetch kernels ahead (lower_gt.c, plan_gb_full; paper §4.4: the next
 * layers' DMA runs while this one computes); otherwise they take the bottom of the weight area
 * (lower_gb_weight_area) at their own kernel's start. */
static void weights_begin(Emit *e, int ki, int c) {
  struct GsEmitState *s = e->s;
  const GsLowered *l = e->l;
  size_t at = (size_t)ki * (size_t)s->nclusters + (size_t)c;
  weights_free(e, c);
  s->gbw[c] = s->ahead[at];
  s->ahead[at].n = 0;
  const GsKernel *k = &l->kernels[ki];
  int64_t w0, w1;
  lower_gb_weight_area(l, &w0, &w1);
  if (!s->gbw[c].n && stages(e, ki, c) && !weights_kept(e, ki, c)) {
    gs_assert(k->w_gb_off >= 0 || w0 + lower_op_weight_bytes(e->g, k->head) <= w1);
    stage_weights(e, ki, c, k->w_gb_off >= 0 ? k->w_gb_off : w0, &s->gbw[c]);
  }
  for (int j = ki + 1; j <= ki + GT_AHEAD_MAX && j < l->nkernels; j++) {
    size_t aj = (size_t)j * (size_t)s->nclusters + (size_t)c;
    if (l->kernels[j].w_from == ki && stages(e, j, c))
      stage_weights(e, j, c, l->kernels[j].w_gb_off, &s->ahead[aj]);
  }
}

/* ---- one kernel over every cluster and core ---- */

static void emit_kernel(Emit *e, int ki) {
  const GsLowered *l = e->l;
  const GsKernel *k = &l->kernels[ki];
  const GsArch *a = e->a;
  const GsGraph *g = e->g;
  struct GsEmitState *s = e->s;
  /* start of the kernel: release the previous kernel's LB regions, GB tensors whose last reader
   * is done, and staged weights */
  lb_release_all(e);
  int gt = lower_keeps_slices(l);
  if (gt) emit_slices_kernel_begin(e, ki);
  for (int t = 0; t < g->ntensors && !gt; t++) {
    const GsTensorPlace *p = &l->place[t];
    if (p->level == LVL_GB && p->alias_of < 0 && p->last_kernel == ki - 1) gb_free_tensor(e, t);
  }
  for (int c = 0; c < s->nclusters; c++) weights_begin(e, ki, c);
  GsLowerKind lk = lower_op_kind(g, k->head);
  int copy = lk == LK_COPY || (lk == LK_GATHER && g->ops[k->head].at.bag <= 1);
  GsGeom gm;
  lower_fill_geom(g, k->head, a, &gm);
  int base = arch_core_base(a, k->core_kind);
  int64_t krows, rps;
  lower_kernel_rows(e->g, e->a, k, &krows, &rps);
  EmitCopy *cm = emit_copy_begin(e, ki); /* later clusters copied from cluster 0: emit_copy.c */
  for (int c = 0; c < s->nclusters; c++) {
    if (c == 1 && cm) emit_copy_seal(e, cm);
    if (c > 0 && cm && emit_copy_cluster(e, cm, c)) continue;
    for (int i = 0; i < k->pr * k->pc; i++) { /* core i: rows part i / pc, columns i % pc */
      int64_t a0, a1, c0 = 0, c1 = gm.cols;
      lower_core_rows(e->g, e->a, k, krows, rps, c, i / k->pc, &a0, &a1);
      if (a1 <= a0) continue;
      if (k->pc > 1) lower_core_cols(&gm, k, i % k->pc, &c0, &c1);
      if (copy) emit_core_copy(e, k, c, base + i, i);
      else emit_core_gemmvec(e, k, &gm, c, base + i, a0, a1, c0, c1);
    }
  }
  /* end of the kernel: allocate GB tensors the next kernel produces, then the barrier */
  if (gt) emit_slices_kernel_end(e, ki);
  for (int t = 0; t < g->ntensors && !gt; t++) {
    const GsTensorPlace *p = &l->place[t];
    if (p->level == LVL_GB && p->alias_of < 0 && p->kernel == ki + 1) gb_alloc_tensor(e, t);
  }
  emit_barrier(e, k->end_scope, ki);
  emit_copy_end(e, cm);
}

void emit_delete(GsEmitter *s) {
  if (!s) return;
  ivl_free(&s->ddr_ivl);
  for (int i = 0; s->lb_ivl && i < s->nclusters * s->ncores; i++) ivl_free(&s->lb_ivl[i]);
  arena_free(s->arena);
}

void emit_tally_free(GsEmitTally *t) {
  free(t->task);
  free(t->episode_task);
  memset(t, 0, sizeof *t);
}

/* requires: tiling (and, when the plan keeps slices, staging); appends one iteration's kernels
 * to the program. */
void emit_iteration(GsEmitter *s, const GsLowered *l, int64_t sample0, int iteration) {
  Emit e = {.l = l, .a = l->arch, .g = l->graph, .p = s->p, .s = s, .sample0 = sample0,
            .iteration = iteration};
  fit_kernels(s, l->nkernels);
  s->need_of = NULL; /* the plan may be another this iteration */
  iteration_begin(&e);
  for (int ki = 0; ki < l->nkernels; ki++) {
    emit_kernel(&e, ki);
    if (l->opt.check) prog_check_publish(l->opt.check, s->p);
  }
  lb_release_all(&e);
  for (int c = 0; c < s->nclusters; c++) weights_free(&e, c);
  iteration_end(&e);
  emit_flush(&e);
}
