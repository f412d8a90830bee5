/* lower_tiles.c — the instruction streams of one kernel on one core: the double-buffered
 * pipeline of a gemm/vector kernel (dma_in loads, the head unit computes, the tail unit runs the
 * fused ops in place, dma_out stores; flags between them) and the two-slot copy pipeline of
 * concat/split/embedding kernels. lower_emit.c places the kernels, owns the memory map and
 * calls these per core.
 *
 * Invariant: every buffer release is matched by one wait — inside the kernel for the third load
 * of a slot on, and by the drains at its end — so every flag is zero again at the barrier.
 */
#include "lower_emit.h"

#include <stdlib.h>
#include <string.h>

/* ---- gemm / vector kernels ---- */

typedef struct {
  uint32_t reg[2][MAX_PARTS], tile[2][MAX_PARTS];
} Slots;

typedef struct {
  int64_t r0, r1, ct, kt; /* kt: the k chunk; kp: its position in the tile's k loop */
  int64_t kp;
} StepT;

static void load_span(Emit *e, GtKernel *k, int qin, int c, int t, GtSpan s, uint32_t dreg,
                      uint32_t dtile) {
  load_span_at(e, k, qin, c, t, &s, dreg, dtile, 0);
}

void emit_core_gemmvec(Emit *e, GtKernel *k, const GtGeom *gm, int c, int core, int64_t ra,
                              int64_t rb, int64_t ca, int64_t cb) {
  GtGraph *g = e->g;
  const GtOp *h = &g->ops[k->head];
  int qin = core_q(e, c, core, Q_DMA_IN), qout = core_q(e, c, core, Q_DMA_OUT);
  int qh = core_q(e, c, core, k->unit_head), qt = core_q(e, c, core, k->unit_tail);
  int sh = k->unit_head, st_ = k->unit_tail;
  gt_assert(qin >= 0 && qout >= 0 && qh >= 0 && qt >= 0);
  LbAlloc la;
  lb_begin(e, &la, c, core, k);
  /* parts: head activation inputs sliced per tile (A), weights (W), tail operands (R) */
  int apart[MAX_PARTS], na = 0;
  for (int i = 0; i < h->nin; i++) {
    if (h->kind == OP_MATMUL && i == 1) continue;
    if (op_input_whole(g, k->head, i)) continue;
    apart[na++] = i;
  }
  int rop[MAX_PARTS], rin[MAX_PARTS], nr = 0;    /* tail op index, its operand tensor */
  int fop[MAX_PARTS * 2], fin[MAX_PARTS * 2], nf = 0; /* resident: (op, tensor or -1 weights) */
  const GtTensor *hy = &g->tensors[h->out[0]];
  for (int i = 0; i < h->nin; i++)
    if (op_input_whole(g, k->head, i)) {
      fop[nf] = k->head;
      fin[nf++] = h->in[i];
    }
  int has_w = op_weight_bytes(g, k->head) > 0 || h->kind == OP_MATMUL;
  int is_conv = h->kind == OP_CONV2D || h->kind == OP_CONV1D;
  if (op_lower_kind(g, k->head) == LK_VEC && op_weight_bytes(g, k->head) > 0 && !is_conv) {
    fop[nf] = k->head; /* bn/ln parameters, depthwise weights: resident */
    fin[nf++] = -1;
    has_w = 0;
  }
  for (int j = 1; j < k->nops; j++) {
    const GtOp *op = &g->ops[k->ops[j]];
    if (op_weight_bytes(g, k->ops[j]) > 0) {
      fop[nf] = k->ops[j];
      fin[nf++] = -1;
    }
    for (int i = 0; i < op->nin; i++) {
      if (op->in[i] == g->ops[k->ops[j - 1]].out[0]) continue;
      if (tensor_elems(&g->tensors[op->in[i]]) == tensor_elems(hy)) {
        gt_assert(nr < MAX_PARTS);
        rop[nr] = j;
        rin[nr++] = op->in[i];
      } else {
        fop[nf] = k->ops[j];
        fin[nf++] = op->in[i];
      }
    }
  }
  GtDtype dt = g->tensors[h->out[0]].dtype;   /* sizes */
  GtDtype cdt = k->cdt_head, tdt = k->cdt_tail; /* what the units compute in */
  /* buffer sizes: the worst tile of this core */
  int64_t nkt = ceil_div64(gm->k, k->tk);
  int64_t abytes[MAX_PARTS] = {0}, wbytes = 0, obytes = 0;
  for (int64_t r = ra; r < rb; r = next_row(r, rb, k->tr, gm->seg_rows)) {
    int64_t r1 = next_row(r, rb, k->tr, gm->seg_rows);
    for (int64_t c0 = ca; c0 < cb; c0 += k->tc)
      for (int64_t kt = 0; kt < nkt; kt++) {
        GtTile t = {r, r1, c0, min64(cb, c0 + k->tc), kt * k->tk, min64(gm->k, (kt + 1) * k->tk)};
        GtSpan s;
        for (int i = 0; i < na; i++)
          if (tile_input_span(g, k->head, apart[i], &t, &s)) abytes[i] = max64(abytes[i], span_bytes(&s));
        if (has_w && tile_weight_span(g, k->head, &t, &s)) wbytes = max64(wbytes, span_bytes(&s));
        tile_output_span(g, k->head, &t, &s);
        obytes = max64(obytes, span_bytes(&s));
        /* the unit's view: window-expanded a, b and the result (tile_operand_bytes) */
        GtOperandBytes ob = tile_operand_bytes(g, k->head, &t, k->cdt_head);
        if (h->kind == OP_EMBEDDING) wbytes = max64(wbytes, ob.a);
        else if (na) abytes[0] = max64(abytes[0], ob.a);
        wbytes = max64(wbytes, ob.b);
        obytes = max64(obytes, ob.o);
        obytes = max64(obytes, span_bytes(&s) / dtype_bytes(dt) * dtype_bytes(k->cdt_tail));
      }
  }
  /* regions */
  Slots A, W, R, O;
  uint32_t F[MAX_PARTS * 2], Ft[MAX_PARTS * 2];
  memset(&A, 0, sizeof A);
  memset(&W, 0, sizeof W);
  memset(&R, 0, sizeof R);
  memset(&O, 0, sizeof O);
  for (int b = 0; b < 2; b++) {
    for (int i = 0; i < na; i++) A.reg[b][i] = lb_region(&la, abytes[i]);
    if (has_w && (b == 0 || !k->w_resident)) W.reg[b][0] = lb_region(&la, wbytes);
    for (int i = 0; i < nr; i++) R.reg[b][i] = lb_region(&la, obytes);
    O.reg[b][0] = lb_region(&la, obytes);
  }
  if (k->w_resident) W.reg[1][0] = W.reg[0][0];
  /* resident loads */
  for (int i = 0; i < nf; i++) {
    GtSpan s;
    uint32_t sr, st;
    if (fin[i] < 0) {
      int64_t wb = op_weight_bytes(g, fop[i]);
      s = (GtSpan){0, wb, 1, wb, 1, wb};
      sr = e->s->w_reg[fop[i]];
      st = e->s->w_tile[fop[i]];
      k->ddr_read += wb;
    } else {
      int64_t tb = tensor_bytes(&g->tensors[fin[i]]);
      s = (GtSpan){0, tb, 1, tb, 1, tb};
      F[i] = lb_region(&la, tb);
      Ft[i] = program_new_tile(e->p, NULL);
      load_span(e, k, qin, c, fin[i], s, F[i], Ft[i]);
      continue;
    }
    F[i] = lb_region(&la, span_bytes(&s));
    Ft[i] = program_new_tile(e->p, NULL);
    GtSpan dst = local_of(&s);
    e_mov(e, qin, F[i], Ft[i], &dst, sr, st, &s);
  }
  if (k->w_via_gb) e_sem(e, qin, I_SEMWAIT, 1 + core);
  /* steps in the kernel's loop order (rows outer, or columns outer when the weights are the
   * larger stream); a buffer is loaded when its key changes from the previous step and
   * released after the last step with that key:
   *   A (input):  rows, k chunk (and columns for vector ops with channel columns)
   *   W (weights): columns, k chunk (and rows for a matmul's b or an embedding's rows) */
  int64_t nA = 0, nW = 0, nR = 0, nO = 0;
  int curA = 0, curW = 0, curO = 0, curR = 0;
  uint32_t otile = 0;
  int64_t ncol_t = ceil_div64(cb - ca, k->tc);
  int a_cols = op_lower_kind(g, k->head) == LK_VEC && gm->cols > 1;
  int w_rows = h->kind == OP_MATMUL || h->kind == OP_EMBEDDING;
  int64_t nrow_t = 0;
  for (int64_t r = ra; r < rb; r = next_row(r, rb, k->tr, gm->seg_rows)) nrow_t++;
  int64_t nsteps = nrow_t * ncol_t * nkt;
  /* Each core walks the k chunks starting at its own chip-wide index (mod the chunk count):
   * the accumulation order does not matter, and with channels-last storage a k chunk is the
   * same byte column of every pixel, which the DDR's address interleave maps to the same
   * channel when the pixel stride is a multiple of interleave x channels (e.g. 512 fp16
   * channels on 4 x 256 B). Cores that stepped through k in lockstep would all hammer one
   * channel at a time; rotated, they spread over all of them (docs/schedulers.md, "Where
   * the baselines lose time"). */
  int64_t gcore = (int64_t)c * e->a->core_kinds[k->core_kind].count + core;
  int64_t krot = gcore % nkt;
  /* the same for column tiles: a column tile of a channels-last output (or of a residual
   * operand) is the same byte column of every pixel, so each core also starts its column
   * loop at its own tile (the output tiles are independent) */
  int64_t crot = gcore % ncol_t;
  StepT *st = calloc((size_t)nsteps, sizeof *st);
  if (!st) die("out of memory");
  {
    int64_t i = 0, ri = 0;
    int64_t *r0s = calloc((size_t)nrow_t + 1, sizeof *r0s);
    if (!r0s) die("out of memory");
    for (int64_t r = ra; r < rb; r = next_row(r, rb, k->tr, gm->seg_rows)) r0s[ri++] = r;
    r0s[ri] = rb;
    for (int64_t o1 = 0; o1 < (k->cols_outer ? ncol_t : nrow_t); o1++)
      for (int64_t o2 = 0; o2 < (k->cols_outer ? nrow_t : ncol_t); o2++)
        for (int64_t kp = 0; kp < nkt; kp++) {
          int64_t rr = k->cols_outer ? o2 : o1, cp = k->cols_outer ? o1 : o2;
          int64_t ct = (cp + crot) % ncol_t;
          st[i].r0 = r0s[rr];
          st[i].r1 = r0s[rr + 1];
          st[i].ct = ct;
          st[i].kt = (kp + krot) % nkt;
          st[i].kp = kp;
          i++;
        }
    free(r0s);
  }
#define SAME_A(x, y) ((x).r0 == (y).r0 && (x).kt == (y).kt && (!a_cols || (x).ct == (y).ct))
#define SAME_W(x, y) ((x).ct == (y).ct && (x).kt == (y).kt && (!w_rows || (x).r0 == (y).r0))
  /* W is loaded and released exactly when A is: one flag serves both */
  int w_with_a = has_w && na;
  for (int64_t i = 1; i < nsteps && w_with_a; i++)
    if (SAME_A(st[i], st[i - 1]) != SAME_W(st[i], st[i - 1])) w_with_a = 0;
  for (int64_t si = 0; si < nsteps; si++) {
    int64_t r = st[si].r0, r1 = st[si].r1, ct = st[si].ct, kt = st[si].kt, kp = st[si].kp;
    {
      int64_t c0 = ca + ct * k->tc, c1 = min64(cb, c0 + k->tc);
      {
        GtTile t = {r, r1, c0, c1, kt * k->tk, min64(gm->k, (kt + 1) * k->tk)};
        int newA = si == 0 || !SAME_A(st[si], st[si - 1]);
        int newW = has_w && (si == 0 || !SAME_W(st[si], st[si - 1]));
        int last_k = kp == nkt - 1;
        int last_step = si == nsteps - 1;
        int nextA = !last_step && !SAME_A(st[si + 1], st[si]);
        int nextW = !last_step && has_w && !SAME_W(st[si + 1], st[si]);
        /* dma_in */
        GtSpan s;
        if (newA && na) {
          curA = (int)(nA % 2);
          if (nA >= 2) e_wait(e, qin, F_AFREE);
          for (int i = 0; i < na; i++)
            if (tile_input_span(g, k->head, apart[i], &t, &s)) {
              A.tile[curA][i] = program_new_tile(e->p, NULL);
              load_span(e, k, qin, c, h->in[apart[i]], s, A.reg[curA][i], A.tile[curA][i]);
            }
          nA++;
        }
        if (newW) {
          curW = (int)(nW % 2);
          if (nW >= 2 && !w_with_a) e_wait(e, qin, F_WFREE);
          if (tile_weight_span(g, k->head, &t, &s)) {
            W.tile[curW][0] = program_new_tile(e->p, NULL);
            GtSpan dst = local_of(&s);
            if (h->kind == OP_MATMUL) {
              load_span(e, k, qin, c, h->in[1], s, W.reg[curW][0], W.tile[curW][0]);
            } else if (k->w_via_gb) {
              e_mov(e, qin, W.reg[curW][0], W.tile[curW][0], &dst, e->s->gbw_reg[c], e->s->gbw_tile[c], &s);
            } else {
              e_mov(e, qin, W.reg[curW][0], W.tile[curW][0], &dst, e->s->w_reg[k->head],
                    e->s->w_tile[k->head], &s);
              k->ddr_read += span_bytes(&s);
            }
          }
          nW++;
        }
        if (last_k && nr) {
          curR = (int)(nR % 2);
          if (nR >= 2) e_wait(e, qin, F_RFREE);
          GtSpan os;
          tile_output_span(g, k->head, &t, &os);
          for (int i = 0; i < nr; i++) {
            R.tile[curR][i] = program_new_tile(e->p, NULL);
            load_span(e, k, qin, c, rin[i], os, R.reg[curR][i], R.tile[curR][i]);
          }
          nR++;
        }
        e_signal(e, qin, qh, sh, F_READY);
        /* head unit */
        e_wait(e, qh, F_READY);
        if (kp == 0) {
          curO = (int)(nO % 2);
          if (nO >= 2) e_wait(e, qh, F_OFREE);
        }
        GtComputeStep cs[GT_MAX_STEPS];
        int ncs = tile_compute(g, k->head, &t, cs, GT_MAX_STEPS);
        for (int i = 0; i < ncs; i++) {
          int acc = cs[i].is_gemm && (kp > 0 || i > 0); /* later k chunks and filter taps */
          uint32_t nt = acc ? 0 : program_new_tile(e->p, NULL);
          GtInst *in;
          if (cs[i].is_gemm) {
            in = e_inst(e, qh, I_GEMM);
            in->r[1] = A.reg[curA][0];
            in->t[1] = A.tile[curA][0];
            in->r[2] = W.reg[curW][0];
            in->t[2] = W.tile[curW][0];
            in->n[0] = cs[i].m;
            in->n[1] = cs[i].n;
            in->n[2] = cs[i].k;
            in->flags = (uint8_t)acc;
          } else {
            in = e_inst(e, qh, I_VEC);
            in->sub = (uint8_t)cs[i].vop;
            int from_w = h->kind == OP_EMBEDDING;
            in->r[1] = from_w ? W.reg[curW][0] : A.reg[curA][0];
            in->t[1] = from_w ? W.tile[curW][0] : A.tile[curA][0];
            if (cs[i].uses_b && is_conv && has_w) {
              in->r[2] = W.reg[curW][0]; /* depthwise: the filter taps */
              in->t[2] = W.tile[curW][0];
            } else if (cs[i].uses_b) {
              if (na > 1) {
                in->r[2] = A.reg[curA][1];
                in->t[2] = A.tile[curA][1];
              } else if (nf > 0 && fop[0] == k->head && fin[0] >= 0) {
                in->r[2] = F[0];
                in->t[2] = Ft[0];
              } else {
                in->r[2] = in->r[1];
                in->t[2] = in->t[1];
              }
            }
            in->n[0] = cs[i].elems;
            in->n[1] = cs[i].param;
          }
          in->dtype = (uint8_t)cdt;
          in->r[0] = O.reg[curO][0];
          if (acc) {
            in->t[0] = otile; /* accumulates into the tile the region holds */
          } else {
            in->t[0] = nt;
            otile = nt;
          }
        }
        if (!ncs) die("kernel %s: head without compute on the gemm/vec path", k->name);
        if (na && (nextA || last_step)) e_signal(e, qh, qin, Q_DMA_IN, F_AFREE);
        if (has_w && !w_with_a && (nextW || last_step)) e_signal(e, qh, qin, Q_DMA_IN, F_WFREE);
        if (last_k) {
          if (qt != qh) {
            e_signal(e, qh, qt, st_, F_MID);
            e_wait(e, qt, F_MID);
          }
          int64_t oelems = 0;
          GtSpan os;
          tile_output_span(g, k->head, &t, &os);
          oelems = span_bytes(&os) / dtype_bytes(dt);
          int ri = 0;
          for (int j = 1; j < k->nops; j++) {
            GtComputeStep ts = tail_step(g, k->ops[j], oelems);
            GtInst *in = e_inst(e, qt, I_VEC);
            in->sub = (uint8_t)ts.vop;
            in->dtype = (uint8_t)tdt;
            in->r[1] = O.reg[curO][0];
            in->t[1] = otile;
            if (ts.uses_b) {
              int found = 0;
              for (int i = ri; i < nr && !found; i++)
                if (rop[i] == j) {
                  in->r[2] = R.reg[curR][i];
                  in->t[2] = R.tile[curR][i];
                  ri = i + 1;
                  found = 1;
                }
              for (int i = 0; i < nf && !found; i++)
                if (fop[i] == k->ops[j] && fin[i] >= 0) {
                  in->r[2] = F[i];
                  in->t[2] = Ft[i];
                  found = 1;
                }
              gt_assert(found);
            }
            in->n[0] = ts.elems;
            in->n[1] = ts.param;
            in->r[0] = O.reg[curO][0];
            otile = program_new_tile(e->p, NULL);
            in->t[0] = otile;
          }
          if (nr) e_signal(e, qt, qin, Q_DMA_IN, F_RFREE);
          e_signal(e, qt, qout, Q_DMA_OUT, F_OREADY);
          /* dma_out */
          e_wait(e, qout, F_OREADY);
          int out_t = g->ops[k->ops[k->nops - 1]].out[0];
          store_span(e, k, qout, c, out_t, &os, O.reg[curO][0], otile);
          e_signal(e, qout, qh, sh, F_OFREE);
          nO++;
        }
      }
    }
  }
  free(st);
  gt_assert(!k->w_resident || nW <= 1);
#undef SAME_A
#undef SAME_W
  /* drains */
  for (int64_t i = 0; i < min64(nA, 2) && na; i++) e_wait(e, qin, F_AFREE);
  for (int64_t i = 0; i < min64(nW, 2) && has_w && !w_with_a; i++) e_wait(e, qin, F_WFREE);
  for (int64_t i = 0; i < min64(nR, 2); i++) e_wait(e, qin, F_RFREE);
  for (int64_t i = 0; i < min64(nO, 2); i++) e_wait(e, qh, F_OFREE);
}

void emit_core_copy(Emit *e, GtKernel *k, int c, int core, int idx) {
  GtGraph *g = e->g;
  const GtOp *h = &g->ops[k->head];
  int qin = core_q(e, c, core, Q_DMA_IN), qout = core_q(e, c, core, Q_DMA_OUT);
  LbAlloc la;
  lb_begin(e, &la, c, core, k);
  CopyPart pp[GT_MAX_OPERANDS];
  int np = copy_parts(e, k, pp);
  int64_t slot = la.cap / 2 / 64 * 64; /* two slots */
  uint32_t A[2] = {0, 0}, Ai[2] = {0, 0};
  int64_t nA = 0;
  int64_t idxb = 0;
  if (h->kind == OP_EMBEDDING) {
    idxb = tensor_bytes(&g->tensors[h->in[0]]) / pp[0].outer;
    slot = (la.cap / 2 - 128) / 64 * 64;
  }
  for (int b = 0; b < 2; b++) {
    if (h->kind == OP_EMBEDDING) {
      int64_t rows_fit = slot / (pp[0].dst_inner + idxb);
      Ai[b] = lb_region(&la, idxb * rows_fit);
      A[b] = lb_region(&la, pp[0].dst_inner * rows_fit);
    } else {
      A[b] = lb_region(&la, slot);
    }
  }
  for (int pi = 0; pi < np; pi++) {
    CopyPart *p = &pp[pi];
    int64_t rowb = h->kind == OP_EMBEDDING ? p->dst_inner : (p->src_inner < p->dst_inner ? p->src_inner : p->dst_inner);
    int64_t krows, rps, a0, a1;
    kernel_rows(e, k, &krows, &rps);
    gt_assert(krows == p->outer);
    core_rows(e, k, krows, rps, c, idx, &a0, &a1);
    int64_t per_row_slot = h->kind == OP_EMBEDDING ? p->dst_inner + idxb : rowb;
    int64_t tr = slot / per_row_slot;
    int64_t nchunks = tr >= 1 ? 1 : ceil_div64(rowb, slot);
    if (tr < 1) tr = 1;
    if (h->kind == OP_EMBEDDING) gt_assert(nchunks == 1);
    for (int64_t r = a0; r < a1; r = min64(a1, r + tr)) {
      int64_t rr = min64(a1, r + tr) - r;
      for (int64_t ch = 0; ch < nchunks; ch++) {
        int64_t b0 = ch * slot, b1 = nchunks == 1 ? rowb : min64(rowb, b0 + slot);
        int cur = (int)(nA % 2);
        if (nA >= 2) e_wait(e, qin, F_AFREE);
        uint32_t tile = program_new_tile(e->p, NULL);
        GtSpan ss, ds;
        if (h->kind == OP_EMBEDDING) {
          GtSpan is = {r * idxb, rr * idxb, 1, rr * idxb, 1, rr * idxb};
          uint32_t itile = program_new_tile(e->p, NULL);
          load_span(e, k, qin, c, p->src, is, Ai[cur], itile);
          GtTile t = {r, r + rr, 0, 1, 0, 1};
          tile_weight_span(g, k->head, &t, &ss);
          GtSpan dl = local_of(&ss);
          e_mov(e, qin, A[cur], tile, &dl, e->s->w_reg[k->head], e->s->w_tile[k->head], &ss);
          k->ddr_read += span_bytes(&ss);
          ds = (GtSpan){r * rowb, rr * rowb, 1, rr * rowb, 1, rr * rowb};
          ss = local_of(&ds);
        } else {
          ss = (GtSpan){r * p->src_inner + p->src_pre + b0, b1 - b0, rr, p->src_inner, 1, rr * p->src_inner};
          GtSpan dl = local_of(&ss);
          load_span(e, k, qin, c, p->src, ss, A[cur], tile);
          ds = (GtSpan){r * p->dst_inner + p->dst_pre + b0, b1 - b0, rr, p->dst_inner, 1, rr * p->dst_inner};
          ss = dl;
        }
        nA++;
        e_signal(e, qin, qout, Q_DMA_OUT, F_OREADY);
        e_wait(e, qout, F_OREADY);
        store_span(e, k, qout, c, p->dst, &ds, A[cur], tile);
        e_signal(e, qout, qin, Q_DMA_IN, F_AFREE);
      }
    }
  }
  for (int64_t i = 0; i < min64(nA, 2); i++) e_wait(e, qin, F_AFREE);
}

