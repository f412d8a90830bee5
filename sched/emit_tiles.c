/* emit_tiles.c — the instruction streams of one kernel on one core: the double-buffered
 * pipeline of a gemm/vector kernel (dma_in loads, the head unit computes, the tail unit runs the
 * fused ops in place, dma_out stores; flags between them) and the two-slot copy pipeline of
 * concat/split/embedding kernels. emit.c places the kernels, owns the memory map and
 * calls these per core.
 *
 * Invariant: every buffer release is matched by one wait — inside the kernel for the third load
 * of a slot on, and by the drains at its end — so every flag is zero again at the barrier.
 */
#include "emit_impl.h"

#include <stdlib.h>
#include <string.h>

/* ---- gemm / vector kernels ----
 * emit_core_gemmvec sorts the kernel's operands (lower_kernel_operands), sizes the buffers for the
 * worst tile of the core (size_buffers), places the regions (alloc_regions), loads the resident
 * operands (load_residents), lists the steps (build_steps), emits every step (emit_step: dma_in
 * loads, head unit, tail unit, dma_out store) and ends with the drains (emit_drains). */

typedef struct {
  uint32_t reg[2][MAX_PARTS], tile[2][MAX_PARTS];
} Slots;

typedef struct {
  int64_t r0, r1, ct, kt; /* kt: the k chunk; kp: its position in the tile's k loop */
  int64_t kp;
} StepT;


/* What the pieces of one core's gemm/vector kernel share while its streams are emitted. */
typedef struct {
  Emit *e;
  const GsKernel *k;
  const GsGeom *gm;
  const GsGraph *g;
  const GsOp *h;                  /* the head op */
  int c, core;                    /* cluster, core */
  int64_t ra, rb, ca, cb;         /* the core's rows [ra, rb) and columns [ca, cb) */
  int qin, qout, qh, qt;          /* queues: dma_in, dma_out, head unit, tail unit */
  int sh, st;                     /* the head's and the tail's unit slot */
  GsDtype dt;                     /* the head output's dtype */
  GsDtype cdt, tdt;               /* what the head and the tail unit compute in */
  LbAlloc la;
  GsKernelOperands p;
  int64_t abytes[MAX_PARTS], wbytes, obytes; /* region sizes: the worst tile of the core */
  Slots A, W, R, O;               /* double-buffered regions, the tiles they hold */
  uint32_t F[MAX_PARTS * 2], Ft[MAX_PARTS * 2]; /* resident regions and tiles */
  StepT *steps;
  int64_t nkt, nrow_t, ncol_t, nsteps; /* k chunks, row and column tiles, steps */
  int a_cols;                     /* A's key includes the column tile */
  int w_rows;                     /* W's key includes the row tile */
  int w_with_a;                   /* W is loaded and released exactly when A is: one flag */
  EmitPipe pa, pw, pr, po;        /* A, W, R: dma_in -> the units; O: head -> dma_out */
  int curA, curW, curR, curO;     /* the slot each buffer uses now */
  uint32_t otile;                 /* the tile O's current slot holds */
  unsigned waited;                /* staged weight chunks this core has waited for (bit set) */
  unsigned chunk_known;           /* staged weight chunks whose offset chunk_off[] holds */
  int64_t chunk_off[GT_STAGE_CHUNKS];
  /* tile_steps' memo: the steps of a tile of sizes steps_for (rows, columns, k; rows 0: none),
   * and what they read and write when steps_ob_known (tile_operand_bytes) */
  int64_t steps_for[3];
  int nsteps_for, steps_ob_known;
  GsOperandBytes steps_ob;
  GsComputeStep *steps_memo; /* GS_MAX_STEPS of them, on emit_core_gemmvec's stack */
} GemmCore;

/* The compute steps of tile t (lower_tile_compute), into *n. They depend on the tile's sizes
 * alone, and a core's tiles mostly have one size, so the last sizes' steps are kept: sizing the
 * buffers and emitting the head unit's instructions each asked for every tile's. Valid until
 * the next call. */
static const GsComputeStep *tile_steps(GemmCore *x, const GsTile *t, int *n) {
  int64_t d[3] = {t->r1 - t->r0, t->c1 - t->c0, t->k1 - t->k0};
  if (x->steps_for[0] <= 0 || memcmp(d, x->steps_for, sizeof d) != 0) {
    x->nsteps_for =
        lower_tile_compute(x->g, x->k->head, t, x->k->packed_k, x->steps_memo, GS_MAX_STEPS);
    memcpy(x->steps_for, d, sizeof d);
    x->steps_ob_known = 0;
  }
  *n = x->nsteps_for;
  return x->steps_memo;
}

/* What tile t's compute steps read and write (lower_steps_operand_bytes), kept with them: the
 * buffers' sizing asks for every tile's (2% of emitting BERT-128 graphturbo). */
static GsOperandBytes tile_operand_bytes(GemmCore *x, const GsTile *t) {
  int ns;
  const GsComputeStep *cs = tile_steps(x, t, &ns);
  if (!x->steps_ob_known) {
    x->steps_ob = lower_steps_operand_bytes(cs, ns, x->k->cdt_head);
    x->steps_ob_known = 1;
  }
  return x->steps_ob;
}

/* What one step needs to know, its neighbours included. */
typedef struct {
  GsTile t;
  int64_t kp;                     /* position of the k chunk in the tile's k loop */
  int newA, newW;                 /* the step loads A / W */
  int nextA, nextW;               /* the next step loads A / W: this step releases them */
  int last_k;                     /* the output tile's last k chunk: tail and store follow */
  int last_step;                  /* the core's last step */
} GemmStep;

/* Tensor t's span s (through its pieces) to offset 0 of region dreg as tile dtile, on qin. */
static void load_span(Emit *e, const GsKernel *k, int qin, int c, int t, GsSpan s, uint32_t dreg,
                      uint32_t dtile) {
  emit_load_span_at(e, k, qin, c, t, &s, dreg, dtile, 0);
}

/* The tile of the core at rows [r0, r1), the column tile starting at c0 and k chunk kt. */
static GsTile gemm_tile(const GemmCore *x, int64_t r0, int64_t r1, int64_t c0, int64_t kt) {
  const GsKernel *k = x->k;
  GsTile t = {r0, r1, c0, min64(x->cb, c0 + k->tc), kt * k->tk, min64(x->gm->k, (kt + 1) * k->tk)};
  return t;
}

/* Grows the region sizes to hold tile t: its spans of A, W and the output, at least what the
 * unit reads and writes for it (window-expanded a, b and the result: lower_tile_operand_bytes), and
 * the output at the tail's compute dtype. The spans are taken only where they are new (`what`:
 * SIZE_A, SIZE_W, SIZE_O): size_buffers knows which tiles share them. */
enum { SIZE_A = 1, SIZE_W = 2, SIZE_O = 4 };
static void size_tile(GemmCore *x, const GsTile *t, unsigned what) {
  const GsKernel *k = x->k;
  const GsKernelOperands *p = &x->p;
  GsSpan s, os;
  for (int i = 0; i < p->na && (what & SIZE_A); i++)
    if (lower_tile_input_span(x->g, k->head, p->apart[i], t, &s))
      x->abytes[i] = max64(x->abytes[i], span_bytes(&s));
  if ((what & SIZE_W) && p->has_w && lower_tile_weight_span(x->g, k->head, t, &s))
    x->wbytes = max64(x->wbytes, span_bytes(&s));
  if (what & SIZE_O) {
    lower_tile_output_span(x->g, k->head, t, &os);
    x->obytes = max64(x->obytes, span_bytes(&os));
    x->obytes = max64(x->obytes,
                      span_bytes(&os) / arch_dtype_bytes(x->dt) * arch_dtype_bytes(k->cdt_tail));
  }
  GsOperandBytes ob = tile_operand_bytes(x, t);
  if (x->h->kind == OP_EMBEDDING) x->wbytes = max64(x->wbytes, ob.a);
  else if (p->na) x->abytes[0] = max64(x->abytes[0], ob.a);
  x->wbytes = max64(x->wbytes, ob.b);
  x->obytes = max64(x->obytes, ob.o);
}

/* Buffer sizes: the worst tile of this core. Emits nothing. A tile's A span is its rows' and k
 * chunk's (and its columns' when a_cols), its W span its columns' and k chunk's (and its rows'
 * when w_rows), its output span its rows' and columns' — what the steps' buffer keys say
 * (same_a, same_w), as a buffer is not loaded again while its key stays — so each is taken once
 * per key: the spans of every tile were 18% of lowering ResNet-50 on stcp920. */
static void size_buffers(GemmCore *x) {
  const GsKernel *k = x->k;
  int64_t seg = x->gm->seg_rows;
  for (int64_t r = x->ra; r < x->rb; r = lower_next_row(r, x->rb, k->tr, seg)) {
    int64_t r1 = lower_next_row(r, x->rb, k->tr, seg);
    for (int64_t c0 = x->ca; c0 < x->cb; c0 += k->tc)
      for (int64_t kt = 0; kt < x->nkt; kt++) {
        GsTile t = gemm_tile(x, r, r1, c0, kt);
        unsigned what = (x->a_cols || c0 == x->ca ? SIZE_A : 0) |
                        (x->w_rows || r == x->ra ? SIZE_W : 0) | (kt == 0 ? SIZE_O : 0);
        size_tile(x, &t, what);
      }
  }
}

/* The double-buffered regions in the core's LB, slot 0 then slot 1: the A parts, W (one
 * region for both slots when the weights are resident), the R operands and O. */
static void alloc_regions(GemmCore *x) {
  const GsKernel *k = x->k;
  for (int b = 0; b < 2; b++) {
    for (int i = 0; i < x->p.na; i++) x->A.reg[b][i] = emit_lb_region(&x->la, x->abytes[i]);
    if (x->p.has_w && (b == 0 || !k->w_resident))
      x->W.reg[b][0] = emit_lb_region(&x->la, x->wbytes);
    for (int i = 0; i < x->p.nr; i++) x->R.reg[b][i] = emit_lb_region(&x->la, x->obytes);
    x->O.reg[b][0] = emit_lb_region(&x->la, x->obytes);
  }
  if (k->w_resident) x->W.reg[1][0] = x->W.reg[0][0];
}

/* dma_in: the wait for chunk ch of the weights staged in GB, once; none for weights an earlier
 * iteration staged (kept in the GB). */
static void stage_wait(GemmCore *x, int ch) {
  if (x->waited & (1u << ch)) return;
  x->waited |= 1u << ch;
  if (x->e->s->gbw[x->c].ready) return;
  emit_sem(x->e, x->qin, I_SEMWAIT, emit_stage_sem(x->e, x->k, x->core, ch));
}

/* The resident loads on dma_in, a region each: an op's weights from its DDR region, a
 * tensor through its pieces; then, with the weights staged in GB, the wait for them. */
static void load_residents(GemmCore *x) {
  Emit *e = x->e;
  const GsKernel *k = x->k;
  for (int i = 0; i < x->p.nf; i++) {
    int op = x->p.fop[i], t = x->p.fin[i];
    if (t >= 0) {
      int64_t tb = graph_tensor_bytes(&x->g->tensors[t]);
      GsSpan s = {0, tb, 1, tb, 1, tb};
      x->F[i] = emit_lb_region(&x->la, tb);
      x->Ft[i] = prog_new_tile(e->p, NULL);
      load_span(e, k, x->qin, x->c, t, s, x->F[i], x->Ft[i]);
      continue;
    }
    int64_t wb = lower_op_weight_bytes(x->g, op);
    GsSpan s = {0, wb, 1, wb, 1, wb};
    emit_count_ddr(e, emit_task_of(e, k), LVL_DDR, wb, 0);
    x->F[i] = emit_lb_region(&x->la, span_bytes(&s));
    x->Ft[i] = prog_new_tile(e->p, NULL);
    GsSpan dst = emit_local_of(&s);
    emit_mov(e, x->qin, x->F[i], x->Ft[i], &dst, e->s->w_reg[op], e->s->w_tile[op], &s);
  }
  if (k->w_via_gb && k->w_chunks == 0) stage_wait(x, 0);
}

/* The steps in the kernel's loop order (rows outer, or columns outer when the weights are the
 * larger stream; k chunks inner) into x->steps, with their counts. Emits nothing.
 * Each core walks the k chunks starting at its own index in the cluster (mod the chunk count):
 * the accumulation order does not matter, and with channels-last storage a k chunk is the
 * same byte column of every pixel, which the DDR's address interleave maps to the same
 * channel when the pixel stride is a multiple of interleave x channels (e.g. 512 fp16
 * channels on 4 x 256 B). Cores that stepped through k in lockstep would all hammer one
 * channel at a time; rotated, they spread over all of them (docs/schedulers.md, "Where
 * the baselines lose time"). The same for column tiles: a column tile of a channels-last
 * output (or of a residual operand) is the same byte column of every pixel, so each core also
 * starts its column loop at its own tile (the output tiles are independent). */
static void build_steps(GemmCore *x) {
  const GsKernel *k = x->k;
  int64_t seg = x->gm->seg_rows, nkt = x->nkt;
  int64_t ncol_t = x->ncol_t = ceil_div64(x->cb - x->ca, k->tc);
  int64_t nrow_t = 0;
  for (int64_t r = x->ra; r < x->rb; r = lower_next_row(r, x->rb, k->tr, seg)) nrow_t++;
  x->nrow_t = nrow_t;
  x->nsteps = nrow_t * ncol_t * nkt;
  int64_t core = x->core; /* within the cluster: every cluster's streams alike (emit_copy.c) */
  /* weights staged in chunks: every core takes the column tiles in the order they land */
  int64_t krot = core % nkt, crot = k->w_chunks > 0 ? 0 : core % ncol_t;
  StepT *st = x->steps = malloc((size_t)x->nsteps * sizeof *st); /* every field set below */
  if (!st) die("out of memory");
  int64_t i = 0, ri = 0;
  int64_t *r0s = calloc((size_t)nrow_t + 1, sizeof *r0s);
  if (!r0s) die("out of memory");
  for (int64_t r = x->ra; r < x->rb; r = lower_next_row(r, x->rb, k->tr, seg)) r0s[ri++] = r;
  r0s[ri] = x->rb;
  for (int64_t o1 = 0; o1 < (k->cols_outer ? ncol_t : nrow_t); o1++)
    for (int64_t o2 = 0; o2 < (k->cols_outer ? nrow_t : ncol_t); o2++)
      for (int64_t kp = 0; kp < nkt; kp++) {
        int64_t rr = k->cols_outer ? o2 : o1, cp = k->cols_outer ? o1 : o2;
        st[i].r0 = r0s[rr];
        st[i].r1 = r0s[rr + 1];
        st[i].ct = (cp + crot) % ncol_t;
        st[i].kt = (kp + krot) % nkt;
        st[i].kp = kp;
        i++;
      }
  free(r0s);
}

/* A buffer is loaded when its key changes from the previous step and released after the last
 * step with that key. A's key: rows, k chunk (and columns where the input tile follows them:
 * lower_a_follows_cols). */
static int same_a(const GemmCore *x, const StepT *a, const StepT *b) {
  return a->r0 == b->r0 && a->kt == b->kt && (!x->a_cols || a->ct == b->ct);
}

/* W's key: columns, k chunk (and rows for a matmul's b or an embedding's rows). */
static int same_w(const GemmCore *x, const StepT *a, const StepT *b) {
  return a->ct == b->ct && a->kt == b->kt && (!x->w_rows || a->r0 == b->r0);
}

/* W is loaded and released exactly when A is over all the steps: one flag serves both. */
static int w_follows_a(const GemmCore *x) {
  int w_with_a = x->p.has_w && x->p.na;
  for (int64_t i = 1; i < x->nsteps && w_with_a; i++)
    if (same_a(x, &x->steps[i], &x->steps[i - 1]) != same_w(x, &x->steps[i], &x->steps[i - 1]))
      w_with_a = 0;
  return w_with_a;
}

/* Step si with its tile and what changes around it. */
static GemmStep step_at(const GemmCore *x, int64_t si) {
  const StepT *st = x->steps;
  GemmStep s;
  s.t = gemm_tile(x, st[si].r0, st[si].r1, x->ca + st[si].ct * x->k->tc, st[si].kt);
  s.kp = st[si].kp;
  s.newA = si == 0 || !same_a(x, &st[si], &st[si - 1]);
  s.newW = x->p.has_w && (si == 0 || !same_w(x, &st[si], &st[si - 1]));
  s.last_k = s.kp == x->nkt - 1;
  s.last_step = si == x->nsteps - 1;
  s.nextA = !s.last_step && !same_a(x, &st[si + 1], &st[si]);
  s.nextW = !s.last_step && x->p.has_w && !same_w(x, &st[si + 1], &st[si]);
  return s;
}

/* dma_in: tile t's A parts into A's next slot (waiting for its release from the third load
 * on). */
static void load_a(GemmCore *x, const GsTile *t) {
  Emit *e = x->e;
  const GsKernel *k = x->k;
  int cur = x->curA = emit_pipe_take(e, &x->pa);
  for (int i = 0; i < x->p.na; i++) {
    GsSpan s;
    if (lower_tile_input_span(x->g, k->head, x->p.apart[i], t, &s)) {
      x->A.tile[cur][i] = prog_new_tile(e->p, NULL);
      load_span(e, k, x->qin, x->c, x->h->in[x->p.apart[i]], s, x->A.reg[cur][i],
                x->A.tile[cur][i]);
    }
  }
}

/* The offset of staged weight chunk ch in the op's weights (emit_stage_chunk), found once per
 * core: asked for at every weight load, its two spans were 7% of emitting BERT-128 graphturbo. */
static int64_t chunk_off(GemmCore *x, int ch) {
  if (!(x->chunk_known & 1u << ch)) {
    int64_t bytes;
    emit_stage_chunk(x->g, x->k, ch, &x->chunk_off[ch], &bytes);
    x->chunk_known |= 1u << ch;
  }
  return x->chunk_off[ch];
}

/* dma_in: tile t's weights into W's next slot (waiting for its release from the third load
 * on unless A's flag covers it): a matmul's b through its pieces, else from the weights
 * staged in GB or the op's DDR weight region. */
static void load_w(GemmCore *x, const GsTile *t) {
  Emit *e = x->e;
  const GsKernel *k = x->k;
  int cur = x->curW = emit_pipe_take(e, &x->pw);
  GsSpan s;
  if (lower_tile_weight_span(x->g, k->head, t, &s)) {
    uint32_t reg = x->W.reg[cur][0], tile = x->W.tile[cur][0] = prog_new_tile(e->p, NULL);
    GsSpan dst = emit_local_of(&s);
    if (x->h->kind == OP_MATMUL) {
      load_span(e, k, x->qin, x->c, x->h->in[1], s, reg, tile);
    } else if (k->w_via_gb) {
      int ch = emit_stage_chunk_of(k, t->c0);
      stage_wait(x, ch);
      s.off -= chunk_off(x, ch);
      const StagedW *sw = &e->s->gbw[x->c];
      emit_mov(e, x->qin, reg, tile, &dst, sw->reg[ch], sw->tile[ch], &s);
    } else {
      emit_mov(e, x->qin, reg, tile, &dst, e->s->w_reg[k->head], e->s->w_tile[k->head], &s);
      emit_count_ddr(e, emit_task_of(e, k), LVL_DDR, span_bytes(&s), 0);
    }
  }
}

/* dma_in: the R operands over tile t's output span into R's next slot (waiting for its
 * release from the third load on). */
static void load_r(GemmCore *x, const GsTile *t) {
  Emit *e = x->e;
  int cur = x->curR = emit_pipe_take(e, &x->pr);
  GsSpan os;
  lower_tile_output_span(x->g, x->k->head, t, &os);
  for (int i = 0; i < x->p.nr; i++) {
    x->R.tile[cur][i] = prog_new_tile(e->p, NULL);
    load_span(e, x->k, x->qin, x->c, x->p.rin[i], os, x->R.reg[cur][i], x->R.tile[cur][i]);
  }
}

/* dma_in for one step: A and W when their keys change, R at an output tile's last k chunk;
 * then the step is ready for the head unit. */
static void step_loads(GemmCore *x, const GemmStep *s) {
  if (s->newA && x->p.na) load_a(x, &s->t);
  if (s->newW) load_w(x, &s->t);
  if (s->last_k && x->p.nr) load_r(x, &s->t);
  emit_signal(x->e, x->qin, x->qh, x->sh, F_READY);
}

/* Elements of span s of tensor t. */
static int64_t span_elems(const GemmCore *x, int t, const GsSpan *s) {
  return span_bytes(s) / arch_dtype_bytes(x->g->tensors[t].dtype);
}

/* The head unit's gemm instruction O (+)= A x W of compute step cs (acc: accumulate), into
 * *in (zeroed), for emit_gemm. */
static void head_gemm(GemmCore *x, const GsComputeStep *cs, const GsTile *t, int acc, GsInst *in) {
  in->op = I_GEMM;
  in->r[1] = x->A.reg[x->curA][0];
  in->t[1] = x->A.tile[x->curA][0];
  in->r[2] = x->W.reg[x->curW][0];
  in->t[2] = x->W.tile[x->curW][0];
  inst_gemm_set_m(in, cs->m);
  inst_gemm_set_n(in, cs->n);
  inst_gemm_set_k(in, cs->k);
  in->flags = (uint8_t)acc;
  GsSpan s; /* packed taps: the raw input tile the windows are read from */
  if (cs->a_tile && lower_tile_input_span(x->g, x->k->head, x->p.apart[0], t, &s))
    inst_gemm_set_a_elems(in, span_elems(x, x->h->in[x->p.apart[0]], &s));
}

/* A compute instruction's dtype cdt; when the unit computes in another size than the tensors
 * are stored in (int8 on Goya's and TPU v1's units, fp16 tensors), the stored size too: the
 * instruction reads and writes the tensors' elements as they are (isa.def, elem_bytes). */
static void set_dtype(const GemmCore *x, GsInst *in, GsDtype cdt) {
  in->dtype = (uint8_t)cdt;
  if (arch_dtype_bytes(cdt) == arch_dtype_bytes(x->dt)) return;
  if (in->op == I_GEMM) inst_gemm_set_elem_bytes(in, arch_dtype_bytes(x->dt));
  else inst_vec_set_elem_bytes(in, arch_dtype_bytes(x->dt));
}

/* Elements of resident operand i of x (its tensor's, or its op's weights at the head's dtype). */
static int64_t resident_elems(const GemmCore *x, int i) {
  int t = x->p.fin[i];
  GsDtype dt = t >= 0 ? x->g->tensors[t].dtype : x->dt;
  return lower_resident_bytes(x->g, &x->p, i) / arch_dtype_bytes(dt);
}

/* The second operand of the head's vector step (cs: tile t) into in, with its extent: a
 * depthwise conv's filter taps in W, else A's second part, else the head's first resident
 * operand (a whole input, or bnorm's/lnorm's weights), else its first operand again. */
static void head_vec_b(GemmCore *x, const GsTile *t, GsInst *in) {
  const GsKernelOperands *p = &x->p;
  int a = x->curA, w = x->curW;
  GsSpan s;
  int64_t n;
  if (p->is_conv && p->has_w) {
    in->r[2] = x->W.reg[w][0]; /* depthwise: the filter taps */
    in->t[2] = x->W.tile[w][0];
    gs_assert(lower_tile_weight_span(x->g, x->k->head, t, &s));
    n = span_bytes(&s) / arch_dtype_bytes(x->dt);
  } else if (p->na > 1) {
    in->r[2] = x->A.reg[a][1];
    in->t[2] = x->A.tile[a][1];
    gs_assert(lower_tile_input_span(x->g, x->k->head, p->apart[1], t, &s));
    n = span_elems(x, x->h->in[p->apart[1]], &s);
  } else if (p->nf > 0 && p->fop[0] == x->k->head) {
    in->r[2] = x->F[0];
    in->t[2] = x->Ft[0];
    n = resident_elems(x, 0);
  } else {
    in->r[2] = in->r[1];
    in->t[2] = in->t[1];
    n = inst_vec_a_elems(in) ? inst_vec_a_elems(in) : inst_vec_elems(in);
  }
  inst_vec_set_b_elems(in, n);
}

/* The head unit's vector instruction of compute step cs of tile t, on A (an embedding: on the
 * rows in W), naming a's extent where the step reads elements again (pooling, dot products,
 * a depthwise conv's taps, an up-sampling copy: the A tile, all of it) and its second operand
 * when it has one. */
static GsInst *head_vec(GemmCore *x, const GsComputeStep *cs, const GsTile *t) {
  const GsKernelOperands *p = &x->p;
  int a = x->curA, w = x->curW;
  GsInst *in = emit_inst(x->e, x->qh, I_VEC);
  in->sub = (uint8_t)cs->vop;
  int from_w = x->h->kind == OP_EMBEDDING;
  in->r[1] = from_w ? x->W.reg[w][0] : x->A.reg[a][0];
  in->t[1] = from_w ? x->W.tile[w][0] : x->A.tile[a][0];
  inst_vec_set_elems(in, cs->elems);
  inst_vec_set_param(in, cs->param);
  inst_vec_set_dst_off(in, cs->dst_off * arch_dtype_bytes(x->dt));
  GsSpan s;
  if ((cs->a_tile || isa_vop_windowed(cs->vop, cs->param)) && !from_w &&
      lower_tile_input_span(x->g, x->k->head, p->apart[0], t, &s))
    inst_vec_set_a_elems(in, span_elems(x, x->h->in[p->apart[0]], &s));
  if (cs->uses_b) head_vec_b(x, t, in);
  return in;
}

/* The head unit for one step: waits for the loads, takes O's next slot at an output tile's
 * first k chunk (waiting for its store from the third tile on), emits an instruction per
 * compute step into O (later k chunks and filter taps accumulate into the tile O holds), then
 * releases A and W after the last step with their keys. */
static void step_head(GemmCore *x, const GemmStep *s) {
  Emit *e = x->e;
  const GsKernel *k = x->k;
  emit_wait(e, x->qh, F_READY);
  if (s->kp == 0) x->curO = emit_pipe_take(e, &x->po);
  int ncs;
  const GsComputeStep *cs = tile_steps(x, &s->t, &ncs);
  for (int i = 0; i < ncs; i++) {
    int acc = cs[i].is_gemm && (s->kp > 0 || i > 0); /* later k chunks and filter taps */
    int part = !cs[i].is_gemm && cs[i].dst_off > 0;  /* the next part of one result */
    uint32_t nt = acc || part ? 0 : prog_new_tile(e->p, NULL);
    GsInst g = {0}; /* a gemm is built here: emit_gemm may count it as a rep of the last */
    GsInst *in = cs[i].is_gemm ? &g : head_vec(x, &cs[i], &s->t);
    if (cs[i].is_gemm) head_gemm(x, &cs[i], &s->t, acc, &g);
    set_dtype(x, in, x->cdt);
    in->r[0] = x->O.reg[x->curO][0];
    if (acc || part) {
      in->t[0] = x->otile; /* accumulates into (or adds a part to) the tile the region holds */
    } else {
      in->t[0] = nt;
      x->otile = nt;
    }
    if (cs[i].is_gemm) emit_gemm(e, x->qh, &g);
  }
  if (!ncs) die("kernel %s: head without compute on the gemm/vec path", k->name);
  if (x->p.na && (s->nextA || s->last_step)) emit_pipe_give(e, &x->pa, x->qh);
  if (x->p.has_w && (s->nextW || s->last_step)) emit_pipe_give(e, &x->pw, x->qh);
}

/* The second operand of tail op j (position in k->ops) into in, with its extent: its next R
 * operand (*ri: the first R entry not used yet; oelems elements, the output tile's), else its
 * resident operand (a whole input, or its weights). Returns 0 if it has neither. */
static int tail_operand_b(const GemmCore *x, int j, int *ri, int64_t oelems, GsInst *in) {
  const GsKernelOperands *p = &x->p;
  for (int i = *ri; i < p->nr; i++)
    if (p->rop[i] == j) { /* the output tile's span of a tensor shaped as the output */
      in->r[2] = x->R.reg[x->curR][i];
      in->t[2] = x->R.tile[x->curR][i];
      inst_vec_set_b_elems(in, oelems);
      *ri = i + 1;
      return 1;
    }
  for (int i = 0; i < p->nf; i++)
    if (p->fop[i] == x->k->ops[j]) { /* a whole input, or bnorm's/lnorm's weights */
      in->r[2] = x->F[i];
      in->t[2] = x->Ft[i];
      inst_vec_set_b_elems(in, resident_elems(x, i));
      return 1;
    }
  return 0;
}

/* The tail unit at an output tile's last k chunk (os: the tile's output span): takes the tile
 * from the head (a flag when they are different units), runs every fused op in place on O (a
 * new tile each), releases R and hands O to dma_out. */
static void step_tail(GemmCore *x, const GsSpan *os) {
  Emit *e = x->e;
  const GsKernel *k = x->k;
  if (x->qt != x->qh) {
    emit_signal(e, x->qh, x->qt, x->st, F_MID);
    emit_wait(e, x->qt, F_MID);
  }
  int64_t oelems = span_bytes(os) / arch_dtype_bytes(x->dt);
  int ri = 0;
  for (int j = 1; j < k->nops; j++) {
    GsComputeStep ts = lower_tail_step(x->g, k->ops[j], oelems);
    GsInst *in = emit_inst(e, x->qt, I_VEC);
    in->sub = (uint8_t)ts.vop;
    set_dtype(x, in, x->tdt);
    in->r[1] = x->O.reg[x->curO][0];
    in->t[1] = x->otile;
    if (ts.uses_b) {
      int found = tail_operand_b(x, j, &ri, oelems, in);
      gs_assert(found);
    }
    inst_vec_set_elems(in, ts.elems);
    inst_vec_set_param(in, ts.param);
    in->r[0] = x->O.reg[x->curO][0];
    x->otile = prog_new_tile(e->p, NULL);
    in->t[0] = x->otile;
  }
  if (x->p.nr) emit_pipe_give(e, &x->pr, x->qt);
  emit_signal(e, x->qt, x->qout, Q_DMA_OUT, F_OREADY);
}

/* dma_out: stores O's tile (os: its output span) to the kernel's output and releases the slot
 * to the head unit. */
static void step_store(GemmCore *x, const GsSpan *os) {
  Emit *e = x->e;
  const GsKernel *k = x->k;
  emit_wait(e, x->qout, F_OREADY);
  int out_t = x->g->ops[k->ops[k->nops - 1]].out[0];
  emit_store_span(e, k, x->qout, x->c, out_t, os, x->O.reg[x->curO][0], x->otile);
  emit_pipe_give(e, &x->po, x->qout);
}

/* Step si on the four queues: the loads, the head's compute and, at an output tile's last k
 * chunk, the tail's and the store. */
static void emit_step(GemmCore *x, int64_t si) {
  GemmStep s = step_at(x, si);
  step_loads(x, &s);
  step_head(x, &s);
  if (s.last_k) {
    GsSpan os;
    lower_tile_output_span(x->g, x->k->head, &s.t, &os);
    step_tail(x, &os);
    step_store(x, &os);
  }
}

/* The drains: every pipe waits for the releases it is still owed, so every flag is zero again
 * at the kernel's end. */
static void emit_drains(GemmCore *x) {
  Emit *e = x->e;
  emit_pipe_drain(e, &x->pa);
  emit_pipe_drain(e, &x->pw);
  emit_pipe_drain(e, &x->pr);
  emit_pipe_drain(e, &x->po);
  for (int ch = 0; ch < x->k->w_chunks && x->k->w_via_gb; ch++) stage_wait(x, ch);
}

/* The tiler chose the kernel's tiles by its measure of their bytes (lower_tile_need, from the
 * same operand classification); the regions this core allocated must not exceed it, or the
 * tiler's budget and the real allocation have drifted apart: a scheduler bug. The measure is
 * the kernel's, so it is taken once for all its cores (it sizes a whole tile: 2.6% of emitting
 * MobileNet-v2 graphturbo when every core took it). */
static void check_regions(const GemmCore *x) {
  struct GsEmitState *s = x->e->s;
  if (s->need_of != x->k) {
    s->need = lower_tile_need(x->e->l, x->k);
    s->need_of = x->k;
  }
  int64_t used = ivl_peak(x->la.ivl), need = s->need;
  if (used > need)
    die("kernel %s, core %d: its tile regions take %lld B, more than the tiler's measure of "
        "%lld B", x->k->name, x->core, (long long)used, (long long)need);
}

/* The streams of gemm/vector kernel k on core `core` of cluster c for its rows [ra, rb) and
 * columns [ca, cb) (the steps: see the section comment above). */
void emit_core_gemmvec(Emit *e, const GsKernel *k, const GsGeom *gm, int c, int core, int64_t ra,
                       int64_t rb, int64_t ca, int64_t cb) {
  GsComputeStep steps_memo[GS_MAX_STEPS]; /* tile_steps' (not zeroed: it fills what it keeps) */
  GemmCore x = {.e = e, .k = k, .gm = gm, .g = e->g, .h = &e->g->ops[k->head], .c = c,
                .core = core, .ra = ra, .rb = rb, .ca = ca, .cb = cb, .steps_memo = steps_memo};
  x.qin = emit_core_q(e, c, core, Q_DMA_IN);
  x.qout = emit_core_q(e, c, core, Q_DMA_OUT);
  x.qh = emit_core_q(e, c, core, k->unit_head);
  x.qt = emit_core_q(e, c, core, k->unit_tail);
  x.sh = k->unit_head;
  x.st = k->unit_tail;
  gs_assert(x.qin >= 0 && x.qout >= 0 && x.qh >= 0 && x.qt >= 0);
  emit_lb_begin(e, &x.la, c, core, k);
  lower_kernel_operands(x.g, k, &x.p);
  x.dt = x.g->tensors[x.h->out[0]].dtype;
  x.cdt = k->cdt_head;
  x.tdt = k->cdt_tail;
  x.nkt = ceil_div64(gm->k, k->tk);
  x.a_cols = lower_a_follows_cols(x.g, k->head, gm);
  x.w_rows = x.h->kind == OP_MATMUL || x.h->kind == OP_EMBEDDING;
  size_buffers(&x);
  alloc_regions(&x);
  load_residents(&x);
  check_regions(&x);
  build_steps(&x);
  x.w_with_a = w_follows_a(&x);
  x.pa = emit_pipe(x.qin, Q_DMA_IN, F_AFREE, 1);
  x.pw = emit_pipe(x.qin, Q_DMA_IN, F_WFREE, x.p.has_w && !x.w_with_a);
  x.pr = emit_pipe(x.qin, Q_DMA_IN, F_RFREE, 1);
  x.po = emit_pipe(x.qh, x.sh, F_OFREE, 1);
  for (int64_t si = 0; si < x.nsteps; si++) emit_step(&x, si);
  free(x.steps);
  gs_assert(!k->w_resident || x.pw.n <= 1);
  emit_drains(&x);
}

/* The most rows one gather of op's table may read when it has fewer rows than that: the
 * pattern of lower_tile_weight_span then reads rows again with a stride of a byte or more
 * inside the table, which n rows need (n - 1) + row bytes of; past that the stride would be 0,
 * a mov per row. A one-row table is read a mov per row anyway: no limit. */
static int64_t gather_rows_max(const GsGraph *g, int op, int64_t rowb) {
  int64_t table = lower_op_weight_bytes(g, op);
  return table > rowb ? table - rowb + 1 : (int64_t)1 << 62;
}

void emit_core_copy(Emit *e, const GsKernel *k, int c, int core, int idx) {
  const GsGraph *g = e->g;
  const GsOp *h = &g->ops[k->head];
  int qin = emit_core_q(e, c, core, Q_DMA_IN), qout = emit_core_q(e, c, core, Q_DMA_OUT);
  LbAlloc la;
  emit_lb_begin(e, &la, c, core, k);
  GsCopyPart pp[GS_MAX_OPERANDS];
  int np = lower_copy_parts(e->g, k, pp);
  int64_t slot = la.cap / 2 / 64 * 64; /* two slots */
  uint32_t A[2] = {0, 0}, Ai[2] = {0, 0};
  EmitPipe pa = emit_pipe(qin, Q_DMA_IN, F_AFREE, 1);
  int64_t idxb = 0;
  if (h->kind == OP_EMBEDDING) {
    idxb = graph_tensor_bytes(&g->tensors[h->in[0]]) / pp[0].outer;
    slot = (la.cap / 2 - 128) / 64 * 64;
  }
  for (int b = 0; b < 2; b++) {
    if (h->kind == OP_EMBEDDING) {
      int64_t rows_fit = slot / (pp[0].dst_inner + idxb);
      Ai[b] = emit_lb_region(&la, idxb * rows_fit);
      A[b] = emit_lb_region(&la, pp[0].dst_inner * rows_fit);
    } else {
      A[b] = emit_lb_region(&la, slot);
    }
  }
  for (int pi = 0; pi < np; pi++) {
    GsCopyPart *p = &pp[pi];
    int64_t rowb = h->kind == OP_EMBEDDING ? p->dst_inner : (p->src_inner < p->dst_inner ? p->src_inner : p->dst_inner);
    int64_t krows, rps, a0, a1;
    lower_kernel_rows(e->g, e->a, k, &krows, &rps);
    gs_assert(krows == p->outer);
    lower_core_rows(e->g, e->a, k, krows, rps, c, idx, &a0, &a1);
    int64_t per_row_slot = h->kind == OP_EMBEDDING ? p->dst_inner + idxb : rowb;
    int64_t tr = slot / per_row_slot;
    if (h->kind == OP_EMBEDDING) tr = min64(tr, gather_rows_max(g, k->head, rowb));
    int64_t nchunks = tr >= 1 ? 1 : ceil_div64(rowb, slot);
    if (tr < 1) tr = 1;
    if (h->kind == OP_EMBEDDING) gs_assert(nchunks == 1);
    for (int64_t r = a0; r < a1; r = min64(a1, r + tr)) {
      int64_t rr = min64(a1, r + tr) - r;
      for (int64_t ch = 0; ch < nchunks; ch++) {
        int64_t b0 = ch * slot, b1 = nchunks == 1 ? rowb : min64(rowb, b0 + slot);
        int cur = emit_pipe_take(e, &pa);
        uint32_t tile = prog_new_tile(e->p, NULL);
        GsSpan ss, ds;
        if (h->kind == OP_EMBEDDING) {
          GsSpan is = {r * idxb, rr * idxb, 1, rr * idxb, 1, rr * idxb};
          uint32_t itile = prog_new_tile(e->p, NULL);
          load_span(e, k, qin, c, p->src, is, Ai[cur], itile);
          GsTile t = {r, r + rr, 0, 1, 0, 1};
          lower_tile_weight_span(g, k->head, &t, &ss);
          GsSpan dl = emit_local_of(&ss);
          emit_gather(e, qin, A[cur], tile, &dl, e->s->w_reg[k->head], e->s->w_tile[k->head], &ss,
                      Ai[cur], itile, span_bytes(&is));
          emit_count_ddr(e, emit_task_of(e, k), LVL_DDR, span_bytes(&ss), 0);
          ds = (GsSpan){r * rowb, rr * rowb, 1, rr * rowb, 1, rr * rowb};
          ss = emit_local_of(&ds);
        } else {
          ss = (GsSpan){r * p->src_inner + p->src_pre + b0, b1 - b0, rr, p->src_inner, 1, rr * p->src_inner};
          GsSpan dl = emit_local_of(&ss);
          load_span(e, k, qin, c, p->src, ss, A[cur], tile);
          ds = (GsSpan){r * p->dst_inner + p->dst_pre + b0, b1 - b0, rr, p->dst_inner, 1, rr * p->dst_inner};
          ss = dl;
        }
        emit_signal(e, qin, qout, Q_DMA_OUT, F_OREADY);
        emit_wait(e, qout, F_OREADY);
        emit_store_span(e, k, qout, c, p->dst, &ds, A[cur], tile);
        emit_pipe_give(e, &pa, qout);
      }
    }
  }
  emit_pipe_drain(e, &pa);
}

