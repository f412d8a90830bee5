/* emit_copy.c — a kernel's streams on clusters 1, 2, ... as runs copied from cluster 0's
 * (prog_copy_run), not emitted one instruction at a time (docs/speed.md, "The speed targets").
 *
 * A cluster whose cores take as many rows of the kernel as cluster 0's do runs cluster 0's
 * streams over its own samples: the same instructions but for the ids of what it allocates
 * (the core loop's LB regions and tiles, allocated in cluster 0's order; its pieces of the
 * kernel's tensors, graphturbo's slices among them; its staged weights) and the offsets into
 * a graph input, which all clusters
 * read at their samples. So emit_kernel (emit.c) emits cluster 0's cores, and for each later
 * cluster emit_copy_cluster allocates the same number of ids, appends to each of its queues the
 * run of cluster 0's queue with a map made from the emitter's own records (below), and leaves
 * the emitter's state as emitting would have: the queues' pending waits, the LB allocators
 * (whose regions the next kernel frees), the DDR tally. Where anything is not the same
 * (another number of pieces, a queue that was in another state before the kernel, a queue
 * outside the kernel's cores written), it returns 0 and the cluster is emitted as before.
 *
 * Contract: the program is, expanded, the one emitting every cluster gives, byte for byte
 * (test_emit_copy compares them with GsLowerOptions.copies_off over the zoo and the configs);
 * the map's pairs come from where the emitter keeps what it allocated, never from reading the
 * instructions. Not for gathers (their rows' place in the table follows the sample) nor on
 * cores without DMA (their hand-overs are semaphores of cluster DMA queues).
 */
#include "emit_impl.h"

#include <stdlib.h>
#include <string.h>

/* What cluster 0's core loop started from and left (emit_copy_begin, emit_copy_seal). */
struct EmitCopy {
  int ki, nq;
  int64_t *before, *after;      /* [queue] instructions */
  uint8_t *wait_before;         /* [queue][2] pend_wait */
  uint32_t r0, r1, t0, t1;      /* the ids cluster 0's loop allocated */
  GsTaskTally tally0, tally1;
  int copied;                   /* a cluster's runs read cluster 0's queues */
  int refused;                  /* cluster 0's loop changed an instruction before the kernel */
};

static int cores_agree(Emit *e, const GsKernel *k) {
  int64_t krows, rps;
  lower_kernel_rows(e->g, e->a, k, &krows, &rps);
  for (int i = 0; i < k->pr; i++) {
    int64_t a0, a1, b0, b1;
    lower_core_rows(e->g, e->a, k, krows, rps, 0, i, &a0, &a1);
    for (int c = 1; c < e->s->nclusters; c++) {
      lower_core_rows(e->g, e->a, k, krows, rps, c, i, &b0, &b1);
      if ((a1 > a0) != (b1 > b0) || (a1 > a0 && a1 - a0 != b1 - b0)) return 0;
    }
  }
  return 1;
}

EmitCopy *emit_copy_begin(Emit *e, int ki) {
  const GsKernel *k = &e->l->kernels[ki];
  struct GsEmitState *s = e->s;
  if (e->l->opt.copies_off || s->nclusters < 2) return NULL;
  for (int qi = 0; qi < e->p->nqueues; qi++)
    if (s->qsem[qi]) return NULL;
  /* a gather spreads its rows over the table by their place in the batch (emit.c) */
  if (lower_op_kind(e->g, k->head) == LK_GATHER || !cores_agree(e, k)) return NULL;
  EmitCopy *m = calloc(1, sizeof *m);
  if (!m) die("out of memory");
  int nq = m->nq = e->p->nqueues;
  m->ki = ki;
  m->before = malloc(2 * (size_t)nq * sizeof *m->before);
  m->wait_before = malloc(2 * (size_t)nq);
  if (!m->before || !m->wait_before) die("out of memory");
  m->after = m->before + nq;
  for (int qi = 0; qi < nq; qi++) m->before[qi] = e->p->queues[qi].ninsts;
  memcpy(m->wait_before, s->pend_wait, 2 * (size_t)nq);
  m->r0 = e->p->nregions, m->t0 = e->p->ntiles;
  m->tally0 = s->tally->task[ki];
  return m;
}

void emit_copy_seal(Emit *e, EmitCopy *m) {
  for (int qi = 0; qi < m->nq; qi++) {
    m->after[qi] = e->p->queues[qi].ninsts;
    if (m->after[qi] == m->before[qi]) continue;
    /* the loop changed the queue's instruction before the kernel (a signal folded into it, a
     * gemm's reps): not copied, as cluster c's would have to change the same way */
    if (e->s->fold_at[qi] == m->before[qi]) m->refused = 1;
    e->s->fold_at[qi] = -1; /* from here on, a change of the last instruction is seen */
  }
  m->r1 = e->p->nregions, m->t1 = e->p->ntiles;
  m->tally1 = e->s->tally->task[m->ki];
}

/* After the kernel's barrier: no run's last instruction changed after it was copied (what
 * changes a queue's last instruction, a folded signal or a gemm's reps, went into the barrier,
 * which every core queue joins). */
void emit_copy_end(Emit *e, EmitCopy *m) {
  if (!m) return;
  for (int q0 = 0; m->copied && q0 < m->nq; q0++)
    gs_assert(m->after[q0] == m->before[q0] || e->s->fold_at[q0] != m->after[q0]);
  free(m->before);
  free(m->wait_before);
  free(m);
}

/* ---- the map: pairs (cluster 0's id, cluster c's) from the emitter's records ---- */

typedef struct {
  uint32_t a, b;
  int64_t shift;
} Pair;
typedef struct {
  Pair *p;
  int n, room;
  int ok;
} Pairs;

static void pair(Pairs *x, uint32_t a, uint32_t b, int64_t shift) {
  if (!a && !b) return;
  if (!a || !b) {
    x->ok = 0;
    return;
  }
  if (x->n == x->room) {
    x->room = x->room ? 2 * x->room : 64;
    x->p = realloc(x->p, (size_t)x->room * sizeof *x->p);
    if (!x->p) die("out of memory");
  }
  x->p[x->n++] = (Pair){a, b, shift};
}

/* Piece a of cluster 0 and its peer b of cluster c: their regions and tiles (graphturbo's
 * also the GB regions of a drain and a load ahead). */
static void pair_piece(Pairs *r, Pairs *t, const Piece *a, const Piece *b) {
  if (a->v.hi - a->v.lo != b->v.hi - b->v.lo || a->level != b->level || a->core != b->core)
    r->ok = 0;
  pair(r, a->reg, b->reg, 0);
  pair(t, a->tile, b->tile, 0);
  pair(r, a->dreg, b->dreg, 0);
  pair(t, a->dtile, b->dtile, 0);
  pair(r, a->areg, b->areg, 0);
  pair(t, a->atile, b->atile, 0);
}

/* The DDR pieces of slice si in list l (sorted by rows, so the slice's are in cluster order,
 * other slices' rows between clusters' shares) paired, cluster 0's share with cluster c's. */
static void pair_ddr_slice(Pairs *r, Pairs *t, const PieceList *l, int si, int ncl, int c) {
  int *at = malloc((size_t)l->n * sizeof *at), n = 0;
  if (!at) die("out of memory");
  for (int i = 0; i < l->n; i++)
    if (l->p[i].level == LVL_DDR && l->p[i].slice == si) at[n++] = i;
  if (n % ncl) r->ok = 0;
  for (int k = 0; r->ok && k < n / ncl; k++) pair_piece(r, t, &l->p[at[k]], &l->p[at[c * (n / ncl) + k]]);
  free(at);
}

/* Graphturbo's slices of tensor t (a root), through the lists the readers find them in
 * (emit_slices.c): cluster c's list holds its own LB and GB pieces, in cluster 0's order, and
 * every cluster's DDR pieces; a slice written on cluster 0 alone is read by every cluster. */
static void pair_slices(Emit *e, int t, int c, Pairs *r, Pairs *tl) {
  int ncl = e->s->nclusters;
  const PieceList *l0 = &e->s->sl[(size_t)t * (size_t)ncl];
  const PieceList *lc = &e->s->sl[(size_t)t * (size_t)ncl + (size_t)c];
  int j = 0; /* lc's next piece not in DDR */
  for (int i = 0; i < l0->n && r->ok; i++) {
    const Piece *a = &l0->p[i];
    if (a->level != LVL_DDR) {
      while (j < lc->n && lc->p[j].level == LVL_DDR) j++;
      if (j == lc->n || lc->p[j].slice != a->slice) r->ok = 0;
      else pair_piece(r, tl, a, &lc->p[j++]);
      continue;
    }
    int first = 1; /* the slice's first DDR piece in the list: pair them all once */
    for (int k = 0; k < i && first; k++) first = !(l0->p[k].level == LVL_DDR && l0->p[k].slice == a->slice);
    if (first && e->l->kernels[e->l->slices[a->slice].kernel].split_clusters)
      pair_ddr_slice(r, tl, l0, a->slice, ncl, c);
  }
}

/* The pieces of tensor t (a root) that cluster c's streams may name. */
static void pair_tensor(Emit *e, int t, int c, Pairs *r, Pairs *tl) {
  struct GsEmitState *s = e->s;
  int ncl = s->nclusters;
  if (lower_keeps_slices(e->l) && !s->io_reg[t] && e->g->tensors[t].producer >= 0) {
    pair_slices(e, t, c, r, tl);
    return;
  }
  if (s->io_reg[t]) { /* a graph input: one region, each cluster at its samples */
    pair(r, s->io_reg[t], s->io_reg[t], (int64_t)c * emit_share(e) * graph_per_sample(e->g, t));
    return;
  }
  const PieceList *d = &s->ddr[t];
  int producer = e->l->place[t].kernel;
  if (d->n > 0 && producer >= 0 && e->l->kernels[producer].split_clusters) {
    /* its pieces in cluster order (make_pieces); made on cluster 0 alone, every cluster reads
     * the same ones */
    if (d->n % ncl) {
      r->ok = 0;
      return;
    }
    int per = d->n / ncl;
    for (int i = 0; i < per; i++) pair_piece(r, tl, &d->p[i], &d->p[(size_t)c * (size_t)per + (size_t)i]);
  }
  const PieceList *g0 = &s->gb[(size_t)t * (size_t)ncl], *gc = &s->gb[(size_t)t * (size_t)ncl + (size_t)c];
  if (g0->n != gc->n) r->ok = 0;
  for (int i = 0; r->ok && i < g0->n; i++) pair_piece(r, tl, &g0->p[i], &gc->p[i]);
}

static int by_a(const void *x, const void *y) {
  const Pair *p = x, *q = y;
  return p->a < q->a ? -1 : p->a > q->a;
}

/* The pairs as spans, each a run of consecutive ids with one difference and shift, then the
 * core loop's ids [lo, hi) moved by `delta` (all of them above the pairs'); 0 when two pairs
 * name one id differently. */
static int spans_of(Pairs *x, uint32_t lo, uint32_t hi, int64_t delta, GsIdSpan **out,
                    int *nout) {
  qsort(x->p, (size_t)x->n, sizeof *x->p, by_a);
  GsIdSpan *s = malloc(((size_t)x->n + 1) * sizeof *s);
  if (!s) die("out of memory");
  int n = 0;
  for (int i = 0; i < x->n; i++) {
    const Pair *p = &x->p[i];
    int64_t d = (int64_t)p->b - (int64_t)p->a;
    if (n > 0 && s[n - 1].hi > p->a) { /* the same id again: the same image, or refused */
      if (s[n - 1].delta != d || s[n - 1].shift != p->shift) {
        free(s);
        return 0;
      }
      continue;
    }
    if (n > 0 && s[n - 1].hi == p->a && s[n - 1].delta == d && s[n - 1].shift == p->shift)
      s[n - 1].hi++;
    else
      s[n++] = (GsIdSpan){p->a, p->a + 1, d, p->shift};
  }
  if (n > 0 && s[n - 1].hi > lo) {
    free(s);
    return 0;
  }
  if (hi > lo) s[n++] = (GsIdSpan){lo, hi, delta, 0};
  *out = s;
  *nout = n;
  return 1;
}

/* Cluster c's map for the kernel, its core loop's ids starting at regions rc, tiles tc. */
static const GsIdMap *copy_map(Emit *e, const EmitCopy *m, int c, uint32_t rc, uint32_t tc) {
  const GsKernel *k = &e->l->kernels[m->ki];
  const GsGraph *g = e->g;
  struct GsEmitState *s = e->s;
  Pairs r = {.ok = 1}, t = {.ok = 1};
  for (int i = 0; i < k->nops; i++) {
    const GsOp *op = &g->ops[k->ops[i]];
    for (int j = 0; j < op->nin; j++) pair_tensor(e, graph_root(g, op->in[j]), c, &r, &t);
    for (int j = 0; j < op->nout; j++) pair_tensor(e, graph_root(g, op->out[j]), c, &r, &t);
  }
  const StagedW *w0 = &s->gbw[0], *wc = &s->gbw[c];
  if (w0->n != wc->n || w0->kept != wc->kept || w0->ready != wc->ready) r.ok = 0;
  for (int ch = 0; ch < w0->n && r.ok; ch++) {
    pair(&r, w0->reg[ch], wc->reg[ch], 0);
    pair(&t, w0->tile[ch], wc->tile[ch], 0);
  }
  GsIdSpan *rs = NULL, *ts = NULL;
  int nr = 0, nt = 0;
  const GsIdMap *map = NULL;
  if (r.ok && t.ok && spans_of(&r, m->r0, m->r1, (int64_t)rc - m->r0, &rs, &nr) &&
      spans_of(&t, m->t0, m->t1, (int64_t)tc - m->t0, &ts, &nt))
    map = prog_new_map(e->p, c, rs, nr, ts, nt);
  free(rs);
  free(ts);
  free(r.p);
  free(t.p);
  return map;
}

/* ---- a later cluster's queues ---- */

/* The queue of cluster c at q0's core and slot, -1: none. */
static int peer(Emit *e, int q0, int c) {
  const GsQueue *q = &e->p->queues[q0];
  if (q->cluster != 0 || q->core < 0) return -1;
  for (int slot = 0; slot < e->s->qpc; slot++)
    if (emit_core_q(e, 0, q->core, slot) == q0) return emit_core_q(e, c, q->core, slot);
  return -1;
}

/* Cluster c's LB allocators as cluster 0's left them, the regions moved by `delta`. */
static void copy_lb(Emit *e, int c, int64_t delta) {
  struct GsEmitState *s = e->s;
  for (int core = 0; core < s->ncores; core++) {
    const GsIvl *v0 = &s->lb_ivl[core];
    GsIvl *vc = &s->lb_ivl[(size_t)c * (size_t)s->ncores + (size_t)core];
    ivl_free(vc);
    *vc = *v0;
    vc->b = NULL;
    if (v0->room) {
      vc->b = malloc((size_t)v0->room * sizeof *vc->b);
      if (!vc->b) die("out of memory");
      memcpy(vc->b, v0->b, (size_t)v0->n * sizeof *vc->b);
    }
    for (int i = 0; i < vc->n; i++) vc->b[i].id = (int)(vc->b[i].id + delta);
  }
}

int emit_copy_cluster(Emit *e, EmitCopy *m, int c) {
  struct GsEmitState *s = e->s;
  GsProgram *p = e->p;
  if (p->nqueues != m->nq || m->refused) return 0;
  for (int q0 = 0; q0 < m->nq; q0++) {
    if (m->after[q0] == m->before[q0]) continue;
    int qc = peer(e, q0, c); /* none: a queue outside cluster 0's cores */
    if (qc < 0 || p->queues[qc].ninsts != m->before[qc] ||
        memcmp(&m->wait_before[2 * q0], &s->pend_wait[2 * qc], 2) != 0)
      return 0;
  }
  uint32_t rc = p->nregions, tc = p->ntiles;
  const GsIdMap *map = copy_map(e, m, c, rc, tc);
  if (!map) return 0;
  prog_reserve_ids(p, rc + (m->r1 - m->r0), tc + (m->t1 - m->t0));
  for (int q0 = 0; q0 < m->nq; q0++) {
    if (m->after[q0] == m->before[q0]) continue;
    int qc = peer(e, q0, c);
    prog_copy_run(p, qc, q0, m->before[q0], m->after[q0] - m->before[q0], map);
    s->last[qc] = NULL; /* its last instruction is cluster 0's: changed there, or not at all */
    memcpy(&s->pend_wait[2 * qc], &s->pend_wait[2 * q0], 2);
  }
  copy_lb(e, c, (int64_t)rc - m->r0);
  GsTaskTally *t = &s->tally->task[m->ki];
  t->ddr_read += m->tally1.ddr_read - m->tally0.ddr_read;
  t->ddr_write += m->tally1.ddr_write - m->tally0.ddr_write;
  m->copied = 1;
  return 1;
}
