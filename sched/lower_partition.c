/* lower_partition.c — how a kernel's output is shared out: the rows of its partition, each
 * core's range of them in each cluster and, when the kernel splits columns too (pc > 1), its
 * range of columns; the view of the output a core writes (a rectangle of rows x channel bytes,
 * lower.h GsView); the next tile's first row inside a core's range; and the parts of a copy
 * kernel (concat, split, embedding with bag 1). Plan geometry, read by the tiler, graphturbo's
 * planner and the emitter alike; it emits nothing.
 */
#include "lower.h"

/* ---- copy kernels: concat, split, embedding with bag 1 ---- */

int lower_copy_parts(const GsGraph *g, const GsKernel *k, GsCopyPart *pp) {
  const GsOp *o = &g->ops[k->head];
  int n = 0;
  if (o->kind == OP_EMBEDDING) {
    const GsTensor *y = &g->tensors[o->out[0]];
    int64_t rowb = y->dim[y->ndim - 1] * arch_dtype_bytes(y->dtype);
    pp[0] = (GsCopyPart){o->in[0], o->out[0], graph_tensor_bytes(y) / rowb, 0, rowb, 0, 0, 1};
    return 1;
  }
  int big = o->kind == OP_CONCAT ? o->out[0] : o->in[0];
  const GsTensor *bt = &g->tensors[big];
  int ax = o->at.axis < 0 ? bt->ndim + o->at.axis : o->at.axis;
  /* storage order: 4-D tensors are NHWC, so logical axis 1 (C) is the last stored one */
  int64_t outer = 1;
  if (bt->ndim == 4) {
    static const int pos[4] = {0, 3, 1, 2}; /* logical axis -> stored position */
    static const int logical[4] = {0, 2, 3, 1};
    for (int i = 0; i < pos[ax]; i++) outer *= bt->dim[logical[i]];
  } else {
    for (int i = 0; i < ax; i++) outer *= bt->dim[i];
  }
  int64_t big_inner = graph_tensor_bytes(bt) / outer, pre = 0;
  int np = o->kind == OP_CONCAT ? o->nin : o->nout;
  for (int i = 0; i < np; i++) {
    int small = o->kind == OP_CONCAT ? o->in[i] : o->out[i];
    int64_t inner = graph_tensor_bytes(&g->tensors[small]) / outer;
    if (o->kind == OP_CONCAT) pp[n++] = (GsCopyPart){small, big, outer, inner, big_inner, 0, pre, 0};
    else pp[n++] = (GsCopyPart){big, small, outer, big_inner, inner, pre, 0, 0};
    pre += inner;
  }
  return n;
}

void lower_kernel_rows(const GsGraph *g, const GsArch *a, const GsKernel *k, int64_t *rows,
                       int64_t *rps) {
  GsLowerKind lk = lower_op_kind(g, k->head);
  if (lk == LK_COPY || (lk == LK_GATHER && g->ops[k->head].at.bag <= 1)) {
    GsCopyPart pp[GS_MAX_OPERANDS];
    lower_copy_parts(g, k, pp);
    *rows = pp[0].outer;
    /* rows per sample only when the output is batch-major (graph_per_sample), not whenever
     * the rows divide by the batch: a [1, s, d] position table has s rows at any batch and
     * every sample reads all of them; taken as s / B rows per sample, an instance of samples
     * [s0, s1) made only part of it and its readers found the rest nowhere. */
    int batch_major = graph_per_sample(g, pp[0].dst) > 0;
    *rps = batch_major && *rows % g->batch == 0 ? *rows / g->batch : 0;
  } else {
    GsGeom gm;
    lower_fill_geom(g, k->head, a, &gm);
    *rows = gm.rows;
    *rps = gm.rows_per_sample;
  }
  if (!k->split_clusters && k->s1 == 0) *rps = 0;
}

/* Rows [a0, a1) of core i (of the kernel's pr) in cluster c: the cluster's samples (those of
 * the instance under graphturbo), split as evenly as possible, the first cores taking one row
 * more. */
void lower_core_rows(const GsGraph *g, const GsArch *a, const GsKernel *k, int64_t rows,
                     int64_t rps, int c, int i, int64_t *a0, int64_t *a1) {
  int64_t r0 = 0, r1 = c == 0 ? rows : 0;
  if (rps > 0) {
    /* the cluster's samples; a graphturbo instance's part of them */
    int64_t sh = ceil_div64(g->batch, a->nclusters), b = g->batch;
    int64_t lo = min64(b, c * sh), hi = min64(b, (c + 1) * sh);
    if (k->s1 > 0) {
      int64_t l0 = min64(hi, lo + k->s0);
      hi = min64(hi, lo + k->s1);
      lo = l0;
    }
    r0 = lo * rps;
    r1 = hi * rps;
  }
  int64_t n = r1 - r0, per = n / k->pr, extra = n % k->pr;
  *a0 = r0 + i * per + min64(i, extra);
  *a1 = *a0 + per + (i < extra);
}

int64_t lower_next_row(int64_t r, int64_t rb, int64_t tr, int64_t seg) {
  int64_t seg_end = (r / seg + 1) * seg;
  if (r % seg == 0 && tr >= seg && rb - r >= seg) {
    int64_t n = min64(tr / seg, (rb - r) / seg);
    return r + n * seg;
  }
  return min64(min64(r + tr, seg_end), rb);
}

void lower_core_cols(const GsGeom *gm, const GsKernel *k, int j, int64_t *c0, int64_t *c1) {
  int64_t u = gm->col_align > 1 && gm->cols >= k->pc * gm->col_align ? gm->col_align : 1;
  int64_t units = ceil_div64(gm->cols, u), per = units / k->pc, extra = units % k->pc;
  *c0 = min64(gm->cols, (j * per + min64(j, extra)) * u);
  *c1 = min64(gm->cols, *c0 + (per + (j < extra)) * u);
}

void lower_kernel_part(const GsGraph *g, const GsArch *a, const GsKernel *k, GsKernelPart *kp) {
  lower_kernel_rows(g, a, k, &kp->rows, &kp->rps);
  lower_fill_geom(g, k->head, a, &kp->gm);
}

/* Rows [a0, a1) of the core are (a1 - a0) * rb bytes of t; split over columns, a row of the
 * kernel is out_row_bytes / element bytes positions (a conv's output pixels) of `cols` channels
 * each, the pitch of the view, and the core's columns are bytes [c0, c1) x element of it. */
GsView lower_core_view(const GsGraph *g, const GsArch *a, const GsKernel *k,
                       const GsKernelPart *kp, int t, int c, int core) {
  const GsTensor *tt = &g->tensors[t];
  int64_t rb = graph_tensor_bytes(tt) / kp->rows, a0, a1;
  gs_assert(rb * kp->rows == graph_tensor_bytes(tt));
  lower_core_rows(g, a, k, kp->rows, kp->rps, c, core / k->pc, &a0, &a1);
  GsView v = {a0 * rb, max64(a0, a1) * rb, rb, 0, rb};
  if (k->pc <= 1) return v;
  int64_t eb = arch_dtype_bytes(tt->dtype), c0, c1;
  gs_assert(kp->gm.out_row_bytes % eb == 0);
  v.pitch = kp->gm.cols * eb;
  gs_assert(rb % v.pitch == 0);
  lower_core_cols(&kp->gm, k, core % k->pc, &c0, &c1);
  v.b0 = c0 * eb;
  v.b1 = c1 * eb;
  return v;
}
