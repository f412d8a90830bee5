/* gt_dims.c — which part of its operands an op reads for a slice of its output.
 *
 * This is the paper's match_dim (Alg. 1 line 10, Alg. 4's infer_binding): a slice [lo, hi)
 * of one output dimension maps to a slice of one operand dimension (identity, a convolution
 * or pooling window with halo, a channel group, a concat piece) or to the whole operand
 * (the dimension is reduced over, or the operand is broadcast along it). An identity match
 * requires equal extents; anything the table below does not know maps to the whole operand,
 * which is always safe (it only costs recomputation or keeps an edge).
 * Invariant: a RANGE result lies inside the operand's extent and is non-empty.
 */
#include "gt.h"

static GtReq req_full(void) { return (GtReq){GT_REQ_FULL, -1, 0, 0}; }
static GtReq req_none(void) { return (GtReq){GT_REQ_NONE, -1, 0, 0}; }

static GtReq req_range(const GsTensor *ti, int d, int64_t lo, int64_t hi) {
  if (lo < 0) lo = 0;
  if (hi > ti->dim[d]) hi = ti->dim[d];
  if (lo >= hi) return req_none();
  return (GtReq){GT_REQ_RANGE, d, lo, hi};
}

/* Same index range on operand dim di, when the extents agree. */
static GtReq ident(const GsTensor *to, const GsTensor *ti, int dim, int di, int64_t lo,
                   int64_t hi) {
  if (di < 0 || di >= ti->ndim) return req_full();
  if (ti->dim[di] != to->dim[dim]) return req_full(); /* broadcast or reshaped: all of it */
  return req_range(ti, di, lo, hi);
}

/* numpy broadcast: dims align from the right. */
static GtReq aligned(const GsTensor *to, const GsTensor *ti, int dim, int64_t lo, int64_t hi) {
  return ident(to, ti, dim, dim - (to->ndim - ti->ndim), lo, hi);
}

/* Output rows [lo, hi) of a window op read input rows lo*s-p .. (hi-1)*s-p+(k-1)*dil+1. */
static GtReq window(const GsTensor *ti, int di, int64_t lo, int64_t hi, int k, int st, int dil,
                    int pad) {
  if (di >= ti->ndim) return req_full();
  if (k < 1) k = 1;
  if (st < 1) st = 1;
  if (dil < 1) dil = 1;
  int64_t ilo = lo * st - pad;
  int64_t ihi = (hi - 1) * st - pad + (int64_t)(k - 1) * dil + 1;
  return req_range(ti, di, ilo, ihi);
}

static GtReq channels(const GsTensor *to, const GsTensor *ti, int groups, int64_t lo, int64_t hi) {
  if (groups <= 1) return req_full();
  int64_t kpg = to->dim[1] / groups, cpg = ti->dim[1] / groups;
  if (kpg <= 0 || cpg <= 0) return req_full();
  return req_range(ti, 1, (lo / kpg) * cpg, ((hi - 1) / kpg + 1) * cpg);
}

/* Output rows [lo, hi) of a resize from n rows to m read input rows floor(lo·n/m) ..
 * ceil(hi·n/m), one more on each side when it interpolates (any coordinate convention). */
static GtReq scaled(const GsTensor *ti, const GsTensor *to, int d, int64_t lo, int64_t hi,
                    int linear) {
  int64_t n = ti->dim[d], m = to->dim[d];
  return req_range(ti, d, lo * n / m - linear, ceil_div64(hi * n, m) + linear);
}

/* The input index output index j of a pad reads along an axis of n elements with begin pad b:
 * j - b inside; outside, the nearest border (constant reads none, edge the border, both count
 * as the border here) or its mirror image without the border (reflect). */
static int64_t pad_src(int64_t j, int64_t b, int64_t n, int reflect) {
  int64_t i = j - b;
  if (reflect && n > 1) {
    int64_t per = 2 * (n - 1);
    i = ((i % per) + per) % per;
    return i < n ? i : per - i;
  }
  return i < 0 ? 0 : i >= n ? n - 1 : i;
}

/* Output slice [lo, hi) of a pad's axis d reads the input range its indices map to. The map is
 * continuous with steps of one, so the image of the slice is the range between its smallest
 * and largest value, found at the slice's ends or at the borders inside it. */
static GtReq padded(const GsTensor *ti, const GsAttrs *at, int d, int64_t lo, int64_t hi) {
  int64_t n = ti->dim[d], b = at->pads[d], mn = INT64_MAX, mx = -1;
  int64_t pts[4] = {lo, hi - 1, b, b + n - 1};
  for (int i = 0; i < 4; i++) {
    if (pts[i] < lo || pts[i] >= hi) continue;
    int64_t s = pad_src(pts[i], b, n, at->pad_mode == GS_PAD_REFLECT);
    mn = min64(mn, s);
    mx = max64(mx, s);
  }
  return req_range(ti, d, mn, mx + 1);
}

static int norm_axis(int axis, int ndim) { return axis < 0 ? axis + ndim : axis; }

GtReq gt_op_input_req(const GsGraph *g, int op, int outk, int dim, int64_t lo, int64_t hi, int k) {
  const GsOp *o = &g->ops[op];
  const GsTensor *to = &g->tensors[o->out[outk]];
  const GsTensor *ti = &g->tensors[o->in[k]];
  const GsAttrs *at = &o->at;
  gs_assert(dim >= 0 && dim < to->ndim && lo < hi);
  switch (o->kind) {
  case OP_CONV2D:
    if (ti->ndim != 4 || to->ndim != 4) return req_full();
    if (dim == 0) return ident(to, ti, 0, 0, lo, hi);
    if (dim == 1) return channels(to, ti, at->groups, lo, hi);
    if (dim == 2) return window(ti, 2, lo, hi, at->kernel[0], at->stride[0], at->dilation[0], at->pad[0]);
    return window(ti, 3, lo, hi, at->kernel[1], at->stride[1], at->dilation[1], at->pad[1]);
  case OP_CONV1D:
    if (ti->ndim != 3 || to->ndim != 3) return req_full();
    if (dim == 0) return ident(to, ti, 0, 0, lo, hi);
    if (dim == 1) return channels(to, ti, at->groups, lo, hi);
    return window(ti, 2, lo, hi, at->kernel[1], at->stride[1], at->dilation[1], at->pad[1]);
  case OP_MAXPOOL:
  case OP_AVGPOOL:
    if (ti->ndim != 4 || to->ndim != 4) return req_full();
    if (dim < 2) return ident(to, ti, dim, dim, lo, hi);
    if (dim == 2) return window(ti, 2, lo, hi, at->kernel[0], at->stride[0], at->dilation[0], at->pad[0]);
    return window(ti, 3, lo, hi, at->kernel[1], at->stride[1], at->dilation[1], at->pad[1]);
  case OP_GAVGPOOL:
    return dim < 2 ? ident(to, ti, dim, dim, lo, hi) : req_full();
  case OP_RESIZE:
    if (ti->ndim != 4 || to->ndim != 4) return req_full();
    return dim < 2 ? ident(to, ti, dim, dim, lo, hi) : scaled(ti, to, dim, lo, hi, at->linear);
  case OP_PAD:
    if (at->npads != 2 * ti->ndim || dim >= ti->ndim) return req_full();
    return padded(ti, at, dim, lo, hi);
  case OP_DENSE:
    return dim < to->ndim - 1 ? aligned(to, ti, dim, lo, hi) : req_full();
  case OP_MATMUL: {
    int ro = to->ndim;
    if (ti->ndim < 2 || ro < 2) return req_full();
    if (dim < ro - 2) return aligned(to, ti, dim, lo, hi);
    if (dim == ro - 2) return k == 0 ? ident(to, ti, dim, ti->ndim - 2, lo, hi) : req_full();
    return k == 1 ? ident(to, ti, dim, ti->ndim - 1, lo, hi) : req_full();
  }
  case OP_LAYERNORM:
    return dim == to->ndim - 1 ? req_full() : ident(to, ti, dim, dim, lo, hi);
  case OP_SOFTMAX:
  case OP_GLU:
    return dim == norm_axis(at->axis, to->ndim) ? req_full() : ident(to, ti, dim, dim, lo, hi);
  case OP_BATCHNORM:
  case OP_RELU:
  case OP_RELU6:
  case OP_GELU:
  case OP_SIGMOID:
  case OP_SWISH:
  case OP_HSIGMOID:
  case OP_HSWISH:
  case OP_TANH:
    return ident(to, ti, dim, dim, lo, hi);
  case OP_ADD:
  case OP_SUB:
  case OP_MUL:
  case OP_DIV:
    return aligned(to, ti, dim, lo, hi);
  case OP_CONCAT: {
    int ax = norm_axis(at->axis, to->ndim);
    if (dim != ax) return ident(to, ti, dim, dim, lo, hi);
    int64_t off = 0;
    for (int j = 0; j < k; j++) off += g->tensors[o->in[j]].dim[ax];
    return req_range(ti, ax, lo - off, hi - off);
  }
  case OP_SPLIT: {
    int ax = norm_axis(at->axis, ti->ndim);
    if (dim != ax) return ident(to, ti, dim, dim, lo, hi);
    int64_t off = 0;
    for (int j = 0; j < outk; j++) off += g->tensors[o->out[j]].dim[ax];
    return req_range(ti, ax, lo + off, hi + off);
  }
  case OP_RESHAPE: {
    if (dim >= ti->ndim || ti->dim[dim] != to->dim[dim]) return req_full();
    int64_t pi = 1, po = 1;
    for (int j = 0; j < dim; j++) pi *= ti->dim[j], po *= to->dim[j];
    return pi == po ? req_range(ti, dim, lo, hi) : req_full();
  }
  case OP_TRANSPOSE:
    if (at->nperm != to->ndim) return req_full();
    return ident(to, ti, dim, at->perm[dim], lo, hi);
  case OP_EMBEDDING:
    return dim < to->ndim - 1 ? ident(to, ti, dim, dim, lo, hi) : req_full();
  case OP_INTERACTION:
    return dim == 0 ? ident(to, ti, 0, 0, lo, hi) : req_full();
  default:
    return req_full();
  }
}

static int merge_req(GtReq *r, GtReq x) {
  int was_none = r->kind == GT_REQ_NONE;
  if (x.kind == GT_REQ_NONE) return 0;
  if (r->kind == GT_REQ_NONE) *r = x;
  else if (r->kind == GT_REQ_FULL || x.kind == GT_REQ_FULL || r->dim != x.dim) *r = req_full();
  else {
    r->lo = min64(r->lo, x.lo);
    r->hi = max64(r->hi, x.hi);
  }
  return was_none;
}

int gt_group_reqs(const GtSchedule *s, const GtGroup *gr, int dim, int64_t lo, int64_t hi,
                  GtReq *req, int *touched) {
  const GsGraph *g = s->g;
  int nt = 0;
  const GsTensor *po = &g->tensors[gr->out];
  for (int i = 0; i < gr->nouts; i++) {
    int t = gr->outs[i];
    const GsTensor *tt = &g->tensors[t];
    GtReq r = req_full();
    if (dim >= 0 && dim < tt->ndim && tt->dim[dim] == po->dim[dim]) r = req_range(tt, dim, lo, hi);
    if (merge_req(&req[t], r)) touched[nt++] = t;
  }
  for (int i = gr->nops - 1; i >= 0; i--) {
    const GsOp *o = &g->ops[gr->ops[i]];
    for (int ok = 0; ok < o->nout; ok++) {
      GtReq r = req[o->out[ok]];
      if (r.kind == GT_REQ_NONE) continue;
      for (int k = 0; k < o->nin; k++) {
        GtReq x = r.kind == GT_REQ_FULL
                      ? req_full()
                      : gt_op_input_req(g, gr->ops[i], ok, r.dim, r.lo, r.hi, k);
        if (merge_req(&req[o->in[k]], x)) touched[nt++] = o->in[k];
      }
    }
  }
  return nt;
}
