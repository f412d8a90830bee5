/* lower_ops.c — how each op kind becomes tiles: its row/column geometry, the bytes a tile
 * reads and writes (as ≤3-D DMA patterns in the tensors' DDR/GB layout) and its compute
 * instructions.
 *
 * Storage layout: 4-D activations are kept channels-last (NHWC) in DDR, GB and LB — the .gtg's
 * NCHW is their logical order (conv1d's NCL is NLC, handled as NHWC with H = L, W = 1); other
 * tensors are row-major as declared. With channels last, the output rows (n, h) of a conv or a
 * pooling are contiguous, so every core's share of an output is one contiguous byte range
 * (emit.c gives each share its own region). Weight regions in DDR, one per op:
 *   conv/dense: [out_channels][k_elems_per_channel + bias]  (a column's weights are contiguous)
 *   batchnorm: scale and shift [2][C]; layernorm: gamma and beta [2][last]
 *   embedding: the table [vocab][dim]
 * Matmul has no weights: its second operand plays the weights' part.
 *
 * Invariant: a tile's spans stay inside their tensors (span_extent ≤ tensor bytes) — the
 * simulator checks regions, and test_lower checks the spans of every zoo op.
 */
#include "lower.h"

#include <string.h>

static const GsTensor *T(const GsGraph *g, int id) { return &g->tensors[id]; }
static int64_t last_dim(const GsTensor *t) { return t->ndim ? t->dim[t->ndim - 1] : 1; }
static int64_t dtb(const GsTensor *t) { return arch_dtype_bytes(t->dtype); }

int lower_op_is_memory_intensive(GsOpKind k) {
  switch (k) {
  case OP_CONV2D: case OP_CONV1D: case OP_DENSE: case OP_MATMUL: case OP_INTERACTION:
  case OP_EMBEDDING: case OP_CONCAT: case OP_SPLIT: case OP_RESHAPE: case OP_TRANSPOSE:
    return 0;
  default:
    return 1;
  }
}

int lower_op_is_tvm_tail(GsOpKind k) {
  switch (k) {
  case OP_BATCHNORM: case OP_RELU: case OP_RELU6: case OP_GELU: case OP_SIGMOID: case OP_SWISH:
  case OP_HSIGMOID: case OP_HSWISH: case OP_TANH: case OP_ADD: case OP_SUB: case OP_MUL:
  case OP_DIV:
    return 1;
  default:
    return 0;
  }
}

/* Conv dims, with conv1d mapped to H = L, W = 1. */
typedef struct {
  int64_t n, c, h, w, co, ho, wo, kh, kw, sh, sw, pt, dh, groups, bias;
} ConvDims;

/* Inlined everywhere: each caller uses a few of the fields, and the scheduler asks for a conv's
 * dimensions several times per tile it emits (a call built all 15: 8% of emitting ResNet-50). */
__attribute__((always_inline)) static inline ConvDims conv_dims(const GsGraph *g, const GsOp *o) {
  ConvDims c;
  const GsTensor *x = T(g, o->in[0]), *y = T(g, o->out[0]);
  c.n = x->dim[0];
  c.c = x->dim[1];
  c.co = y->dim[1];
  if (o->kind == OP_CONV1D) {
    c.h = x->dim[2]; c.w = 1; c.ho = y->dim[2]; c.wo = 1;
    c.kh = o->at.kernel[1]; c.kw = 1; c.sh = o->at.stride[1]; c.sw = 1; c.pt = o->at.pad[1];
    c.dh = o->at.dilation[1];
  } else if (o->kind == OP_RESIZE) { /* a 1x1 (nearest) or 2x2 (bilinear) window */
    c.h = x->dim[2]; c.w = x->dim[3]; c.ho = y->dim[2]; c.wo = y->dim[3];
    c.kh = c.kw = o->at.linear ? 2 : 1; c.sh = c.sw = 1; c.pt = 0; c.dh = 1;
  } else if (o->kind == OP_CONV2D || o->kind == OP_MAXPOOL || o->kind == OP_AVGPOOL) {
    c.h = x->dim[2]; c.w = x->dim[3]; c.ho = y->dim[2]; c.wo = y->dim[3];
    c.kh = o->at.kernel[0]; c.kw = o->at.kernel[1]; c.sh = o->at.stride[0]; c.sw = o->at.stride[1];
    c.pt = o->at.pad[0];
    c.dh = o->at.dilation[0];
  } else {
    die("conv_dims on %s", graph_opkind_name(o->kind));
  }
  if (c.kh < 1) c.kh = 1;
  if (c.kw < 1) c.kw = 1;
  if (c.sh < 1) c.sh = 1;
  if (c.sw < 1) c.sw = 1;
  if (c.dh < 1) c.dh = 1;
  c.groups = o->at.groups > 0 ? o->at.groups : 1;
  c.bias = o->at.bias ? 1 : 0;
  return c;
}

static int conv_depthwise(const ConvDims *c) { return c->groups > 1 && c->groups == c->c; }

GsLowerKind lower_op_kind(const GsGraph *g, int op) {
  const GsOp *o = &g->ops[op];
  switch (o->kind) {
  case OP_CONV2D: case OP_CONV1D: {
    ConvDims c = conv_dims(g, o);
    return conv_depthwise(&c) ? LK_VEC : LK_GEMM;
  }
  case OP_DENSE: case OP_MATMUL: return LK_GEMM;
  case OP_CONCAT: case OP_SPLIT: return LK_COPY;
  case OP_EMBEDDING: return LK_GATHER;
  case OP_RESHAPE: return LK_ALIAS;
  default: return LK_VEC;
  }
}

/* Rows of a conv/pool input needed for output rows [h0, h1) of one image, clipped. */
static void conv_in_rows(const ConvDims *c, int64_t h0, int64_t h1, int64_t *ih0, int64_t *ih1) {
  int64_t a = h0 * c->sh - c->pt, b = (h1 - 1) * c->sh - c->pt + (c->kh - 1) * c->dh + 1;
  *ih0 = max64(0, a);
  *ih1 = min64(c->h, b);
  if (*ih1 <= *ih0) *ih1 = *ih0 + 1; /* a tile entirely in the padding still reads one row */
  if (*ih1 > c->h) { *ih1 = c->h; *ih0 = c->h - 1; }
}

/* Input rows [ih0, ih1) a resize's output rows [h0, h1) read (gt_dims.c's rule: the scaled
 * range, one more row on each side when bilinear). */
static void resize_in_rows(const ConvDims *c, int64_t h0, int64_t h1, int64_t *ih0, int64_t *ih1) {
  int64_t lin = c->kh > 1;
  *ih0 = max64(0, h0 * c->h / c->ho - lin);
  *ih1 = min64(c->h, ceil_div64(h1 * c->h, c->ho) + lin);
}

/* Segment geometry of a tile: either inside one segment (nseg = 1, rows [h0,h1)) or whole
 * segments [s0, s0+nseg). */
typedef struct {
  int64_t s0, nseg, h0, h1;
} SegRange;
static SegRange seg_range(int64_t seg_rows, const GsTile *t) {
  SegRange s;
  s.s0 = t->r0 / seg_rows;
  int64_t last = (t->r1 - 1) / seg_rows;
  s.nseg = last - s.s0 + 1;
  if (s.nseg == 1) {
    s.h0 = t->r0 - s.s0 * seg_rows;
    s.h1 = t->r1 - s.s0 * seg_rows;
  } else {
    gs_assert(t->r0 % seg_rows == 0 && t->r1 % seg_rows == 0);
    s.h0 = 0;
    s.h1 = seg_rows;
  }
  return s;
}

/* A pad's rows (of its last axis) per segment: one segment per index of axis 0 when the pad
 * keeps that axis (a sample's rows are its own, so tiles and graphturbo's sample instances
 * read only their samples), else the whole tensor. *sin, *sout: input and output rows of one. */
static int64_t pad_segs(const GsTensor *x, const GsTensor *y, int64_t *sin, int64_t *sout) {
  int64_t segs = x->dim[0] == y->dim[0] ? x->dim[0] : 1;
  *sin = graph_tensor_elems(x) / last_dim(x) / segs;
  *sout = graph_tensor_elems(y) / last_dim(y) / segs;
  return segs;
}

/* Input rows [ir0, ir1) that output rows [r0, r1) of a pad read: inside one segment, the
 * proportional share rounded outwards, as a count that depends only on the tile's height (the
 * tiler sizes a tile at one position; every position must take the same bytes), moved back
 * from the segment's end when it would pass it; whole segments map to whole segments. Each
 * input element is read about once over all tiles (plus a row per tile edge); which elements a
 * reflect or edge pad repeats does not change the traffic (docs/gtg.md, "pad"). */
static void pad_in_rows(const GsTensor *x, const GsTensor *y, const GsTile *t, int64_t *ir0,
                        int64_t *ir1) {
  int64_t sin, sout;
  pad_segs(x, y, &sin, &sout);
  SegRange r = seg_range(sout, t);
  if (r.nseg > 1) {
    *ir0 = r.s0 * sin;
    *ir1 = (r.s0 + r.nseg) * sin;
    return;
  }
  int64_t cnt = min64(sin, ceil_div64((r.h1 - r.h0) * sin, sout) + 1);
  *ir0 = r.s0 * sin + max64(0, min64(r.h0 * sin / sout, sin - cnt));
  *ir1 = *ir0 + cnt;
}

/* Rows per sample of output y, `rows` rows in `outer` leading groups: rows / batch when y is
 * batch-major (graph_per_sample) and the groups split by the batch, else 0. A count of rows
 * that merely divides by the batch is not enough: a [1, s, d] position table's s rows are all
 * read by every sample. */
static int64_t per_sample_rows(const GsGraph *g, int y, int64_t outer, int64_t rows,
                               int64_t batch) {
  return graph_per_sample(g, y) > 0 && outer % batch == 0 ? rows / batch : 0;
}

static int64_t matmul_batches(const GsTensor *t, int64_t rows, int64_t cols) {
  int64_t e = graph_tensor_elems(t);
  return e / (rows * cols);
}

static int64_t interaction_pairs(const GsGraph *g, const GsOp *o, int64_t *f, int64_t *dd) {
  const GsTensor *x = T(g, o->in[0]), *y = T(g, o->out[0]);
  if (x->ndim >= 3) {
    *f = x->dim[x->ndim - 2];
    *dd = x->dim[x->ndim - 1];
  } else {
    *f = 1;
    *dd = last_dim(x);
  }
  int64_t p = last_dim(y) - (o->at.pad_interaction ? *dd : 0);
  return p > 0 ? p : 1;
}

/* Convolutions: rows are (sample, output row); columns output channels; k input channels. */
static void geom_conv(const GsGraph *g, int op, int64_t batch, GsGeom *m) {
  const GsOp *o = &g->ops[op];
  const GsTensor *y = T(g, o->out[0]);
  int64_t ydt = dtb(y);
  ConvDims c = conv_dims(g, o);
  int64_t xdt = dtb(T(g, o->in[0]));
  m->seg_rows = c.ho;
  m->rows = c.n * c.ho;
  m->rows_per_sample = c.n % batch == 0 ? m->rows / batch : 0;
  m->cols = c.co;
  m->split_cols = 1;
  m->out_row_bytes = c.wo * ydt;
  m->w_col_bytes = c.kh * c.kw * ydt;
  if (conv_depthwise(&c)) {
    /* depthwise: columns are channels (a channel reads only its own input channel) */
    m->col_align = 1;
    m->in_row_bytes = c.sh * c.w * xdt * c.c / c.co;
    m->halo_bytes = (c.kh - 1) * c.dh * c.w * xdt * c.c / c.co;
  } else {
    int64_t cin_g = c.c / c.groups;
    m->k = cin_g;
    m->k_elems = c.kh * c.kw;
    /* a grouped conv's column tile is whole groups (their input channels are a contiguous
     * channel range), or part of one group whose k may then be cut (its input channels a
     * range inside the group's: lower_tiling.c, tile_in_groups) */
    m->split_cols = 1;
    m->split_k = 1;
    if (c.groups > 1) {
      m->col_align = c.co / c.groups;
      m->col_strict = 1;
    }
    m->in_row_bytes = c.sh * c.w * xdt * (c.groups == 1 ? 1 : c.c);
    m->halo_bytes = (c.kh - 1) * c.dh * c.w * xdt * (c.groups == 1 ? 1 : c.c);
  }
}

/* Dense: rows are every leading position, columns the units, k the input features. */
static void geom_dense(const GsGraph *g, int op, int64_t batch, GsGeom *m) {
  const GsOp *o = &g->ops[op];
  const GsTensor *y = T(g, o->out[0]);
  int64_t ydt = dtb(y);
  const GsTensor *x = T(g, o->in[0]);
  int64_t kk = last_dim(x);
  m->rows = graph_tensor_elems(x) / kk;
  m->seg_rows = m->rows;
  m->rows_per_sample = per_sample_rows(g, o->out[0], m->rows, m->rows, batch);
  m->cols = last_dim(y);
  m->k = kk;
  m->split_cols = m->split_k = 1;
  m->in_row_bytes = dtb(x);
  m->out_row_bytes = ydt;
  m->w_col_bytes = ydt;
}

/* Matmul: rows are (batch, m), columns n, k the shared dimension. */
static void geom_matmul(const GsGraph *g, int op, int64_t batch, GsGeom *m) {
  const GsOp *o = &g->ops[op];
  const GsTensor *y = T(g, o->out[0]);
  int64_t ydt = dtb(y);
  const GsTensor *x = T(g, o->in[0]);
  int64_t mm = x->dim[x->ndim - 2], kk = last_dim(x), nn = last_dim(y);
  int64_t bo = matmul_batches(y, mm, nn);
  m->rows = bo * mm;
  m->seg_rows = mm;
  m->rows_per_sample = per_sample_rows(g, o->out[0], bo, m->rows, batch);
  m->cols = nn;
  m->k = kk;
  m->split_cols = m->split_k = 1;
  m->in_row_bytes = dtb(x);
  m->out_row_bytes = ydt;
  m->w_col_bytes = dtb(T(g, o->in[1]));
}

/* Windowed pooling: rows are (sample, output row), channel tiles inside a core. */
static void geom_pool(const GsGraph *g, int op, int64_t batch, GsGeom *m) {
  const GsOp *o = &g->ops[op];
  const GsTensor *y = T(g, o->out[0]);
  int64_t ydt = dtb(y);
  ConvDims c = conv_dims(g, o);
  m->col_align = 1;
  m->seg_rows = c.ho;
  m->rows = c.n * c.ho;
  m->rows_per_sample = c.n % batch == 0 ? m->rows / batch : 0;
  m->cols = c.c; /* channel tiles inside a core */
  m->split_cols = 1;
  m->in_row_bytes = c.sh * c.w * ydt;
  m->halo_bytes = (c.kh - 1) * c.w * ydt;
  m->out_row_bytes = c.wo * ydt;
}

/* Global average pooling: a row per sample, its channels as columns. */
static void geom_gavgpool(const GsGraph *g, int op, int64_t batch, GsGeom *m) {
  const GsOp *o = &g->ops[op];
  const GsTensor *y = T(g, o->out[0]);
  int64_t ydt = dtb(y);
  const GsTensor *x = T(g, o->in[0]);
  m->rows = x->dim[0];
  m->seg_rows = 1;
  m->col_align = 1;
  m->rows_per_sample = x->dim[0] % batch == 0 ? m->rows / batch : 0;
  m->cols = x->dim[1];
  m->split_cols = 1;
  m->in_row_bytes = x->dim[2] * x->dim[3] * ydt;
  m->out_row_bytes = ydt;
}

/* How input x of a row-wise op y = op(..., x, ...) meets y's rows (a row: y's last axis). */
typedef struct {
  enum { RM_EACH, RM_PERIODIC, RM_WHOLE } kind;
  int64_t rb;     /* RM_EACH, RM_PERIODIC: bytes of x per output row */
  int64_t period; /* RM_PERIODIC: x's rows, read again every `period` output rows */
} RowMap;

static int is_elementwise_binary(GsOpKind k) {
  return k == OP_ADD || k == OP_SUB || k == OP_MUL || k == OP_DIV;
}

/* x, broadcast (numpy, dims aligned from the right) to y's shape, over y's rows: RM_EACH when
 * x has a row for each of y's (a [n, s, 1] scale of [n, s, d]), RM_PERIODIC when x's rows repeat
 * over y's leading dims only (a [1, s, d] position table added to [n, s, d]: output row r reads
 * x's row r mod s), RM_WHOLE otherwise (a bias of one row, a [n, 1, d] operand). */
static RowMap broadcast_map(const GsTensor *x, const GsTensor *y) {
  RowMap m = {RM_WHOLE, 0, 0};
  int off = y->ndim - x->ndim, lead = 1; /* lead: still in the leading broadcast dims */
  int64_t period = 1;
  if (off < 0) return m;
  for (int d = 0; d < y->ndim - 1; d++) {
    int64_t xd = d < off ? 1 : x->dim[d - off];
    if (xd == y->dim[d]) {
      lead = 0;
      period *= xd;
    } else if (!lead) {
      return m; /* broadcast inside the row dims */
    }
  }
  m.rb = last_dim(x) * dtb(x);
  if (period == graph_tensor_elems(y) / (last_dim(y) ? last_dim(y) : 1)) m.kind = RM_EACH;
  else if (period > 1) m.kind = RM_PERIODIC;
  m.period = period;
  return m;
}

/* Input i of row-wise op `op` against its output's rows. A broadcast operand of an
 * elementwise op follows broadcast_map; any other input is sliced by rows when it has a whole
 * number of elements per output row (a transpose, a reduction, a concat's part), else whole. */
static RowMap rowwise_map(const GsGraph *g, int op, int i) {
  const GsOp *o = &g->ops[op];
  const GsTensor *x = T(g, o->in[i]), *y = T(g, o->out[0]);
  int64_t rows = graph_tensor_elems(y) / (last_dim(y) ? last_dim(y) : 1);
  int64_t xe = graph_tensor_elems(x);
  if (is_elementwise_binary(o->kind) && xe < graph_tensor_elems(y)) return broadcast_map(x, y);
  RowMap m = {RM_WHOLE, 0, 0};
  if (xe % rows == 0 && xe >= rows) {
    m.kind = RM_EACH;
    m.rb = xe / rows * dtb(x);
  }
  return m;
}

/* The period of a row-wise op's periodic operands: its output rows come in segments of
 * that many, and tiles stay inside one or cover whole ones (0: none periodic). */
static int64_t rowwise_period(const GsGraph *g, int op) {
  int64_t p = 0;
  for (int i = 0; i < g->ops[op].nin; i++) {
    RowMap m = rowwise_map(g, op, i);
    if (m.kind == RM_PERIODIC && m.period > p) p = m.period;
  }
  return p;
}

/* Row-wise ops (embedding, interaction, the rest): a row is the output's last axis. */
static void geom_rowwise(const GsGraph *g, int op, int64_t batch, GsGeom *m) {
  const GsOp *o = &g->ops[op];
  const GsTensor *y = T(g, o->out[0]);
  int64_t ydt = dtb(y);
  /* row-wise: a row is the output's last axis */
  int64_t last = last_dim(y);
  m->rows = graph_tensor_elems(y) / (last ? last : 1);
  m->seg_rows = m->rows;
  m->rows_per_sample = (y->ndim && y->dim[0] % batch == 0) ? m->rows / batch : 0;
  m->out_row_bytes = last * ydt;
  if (o->kind == OP_EMBEDDING) {
    int64_t bag = o->at.bag > 1 ? o->at.bag : 1;
    m->in_row_bytes = bag * dtb(T(g, o->in[0])) + bag * last * ydt;
  } else {
    int64_t period = rowwise_period(g, op);
    for (int i = 0; i < o->nin; i++) {
      RowMap rm = rowwise_map(g, op, i);
      if (rm.kind == RM_EACH || (rm.kind == RM_PERIODIC && rm.period == period))
        m->in_row_bytes += rm.rb;
      else
        m->w_fixed_bytes += graph_tensor_bytes(T(g, o->in[i]));
    }
    m->w_fixed_bytes += lower_op_weight_bytes(g, op);
    if (period > 0) m->seg_rows = period;
  }
  if (o->kind == OP_PAD) { /* segments (pad_segs), the input's share of a row, a row per edge */
    const GsTensor *x = T(g, o->in[0]);
    int64_t sin;
    pad_segs(x, y, &sin, &m->seg_rows);
    m->in_row_bytes = ceil_div64(graph_tensor_elems(x), m->rows) * dtb(x);
    m->halo_bytes = last_dim(x) * dtb(x);
    m->w_fixed_bytes = 0;
  }
}

void lower_fill_geom(const GsGraph *g, int op, const GsArch *a, GsGeom *m) {
  const GsOp *o = &g->ops[op];
  memset(m, 0, sizeof *m);
  m->cols = 1;
  m->k = 1;
  m->k_elems = 1;
  m->col_align = 1;
  int64_t batch = g->batch > 0 ? g->batch : 1;
  /* the matrix unit's n0 (cube n or systolic columns) of the first matrix unit, for alignment */
  for (int u = 0; u < a->nunit_kinds; u++)
    if (a->units[u].caps & CAP_MATRIX) {
      m->col_align = a->units[u].shape == MAT_CUBE ? a->units[u].cube_n : a->units[u].sys_cols;
      break;
    }
  if (m->col_align < 1) m->col_align = 1;
  switch (o->kind) {
  case OP_CONV2D: case OP_CONV1D: geom_conv(g, op, batch, m); break;
  case OP_DENSE: geom_dense(g, op, batch, m); break;
  case OP_MATMUL: geom_matmul(g, op, batch, m); break;
  case OP_MAXPOOL: case OP_AVGPOOL: case OP_RESIZE: geom_pool(g, op, batch, m); break;
  case OP_GAVGPOOL: geom_gavgpool(g, op, batch, m); break;
  default: geom_rowwise(g, op, batch, m); break;
  }
  if (m->seg_rows < 1) m->seg_rows = 1;
}

/* Rows of an embedding table resident in DDR: the rows one iteration can touch, at most the
 * table (docs/schedulers.md: a 40 M-row MLPerf table is not kept whole). */
static int64_t embedding_rows(const GsGraph *g, const GsOp *o) {
  const GsTensor *y = T(g, o->out[0]);
  int64_t bag = o->at.bag > 1 ? o->at.bag : 1;
  int64_t touched = graph_tensor_elems(y) / last_dim(y) * bag;
  return min64(o->at.vocab > 0 ? o->at.vocab : 1, touched);
}

int64_t lower_op_weight_bytes(const GsGraph *g, int op) {
  const GsOp *o = &g->ops[op];
  const GsTensor *y = T(g, o->out[0]);
  int64_t dt = dtb(y);
  switch (o->kind) {
  case OP_CONV2D: case OP_CONV1D: {
    ConvDims c = conv_dims(g, o);
    return c.co * ((c.c / c.groups) * c.kh * c.kw + c.bias) * dt;
  }
  case OP_DENSE:
    return last_dim(y) * (last_dim(T(g, o->in[0])) + (o->at.bias ? 1 : 0)) * dt;
  case OP_BATCHNORM: return 2 * y->dim[1] * dt;
  case OP_LAYERNORM: return 2 * last_dim(y) * dt;
  case OP_EMBEDDING: return embedding_rows(g, o) * last_dim(y) * dt;
  default: return 0;
  }
}

int64_t lower_op_compulsory_weight_bytes(const GsGraph *g, int op) {
  /* embeddings: the resident rows, each gathered at least once */
  return lower_op_weight_bytes(g, op);
}

static GsSpan span1(int64_t off, int64_t bytes) {
  GsSpan s = {off, bytes, 1, bytes, 1, bytes};
  return s;
}

int lower_a_follows_cols(const GsGraph *g, int op, const GsGeom *gm) {
  return gm->cols > 1 && (lower_op_kind(g, op) == LK_VEC || gm->col_strict);
}

/* lower_tile_input_span of a conv or pooling op (input i = 0, NHWC). */
static void conv_input_span(const GsGraph *g, const GsOp *o, const GsTile *t, int64_t dt, GsSpan *s) {
  /* NHWC: input pixels (n, ih0..ih1, all w) are contiguous; a channel range of them is a
   * strided pattern (one row per pixel) */
  ConvDims c = conv_dims(g, o);
  int pool = o->kind == OP_MAXPOOL || o->kind == OP_AVGPOOL || o->kind == OP_RESIZE;
  SegRange r = seg_range(c.ho, t);
  int64_t ih0 = 0, ih1 = c.h;
  if (r.nseg == 1 && o->kind == OP_RESIZE) resize_in_rows(&c, r.h0, r.h1, &ih0, &ih1);
  else if (r.nseg == 1) conv_in_rows(&c, r.h0, r.h1, &ih0, &ih1);
  int64_t k0 = 0, k1 = c.c;
  if (pool) {
    k0 = t->c0;
    k1 = t->c1;
  } else if (conv_depthwise(&c)) {
    int64_t mult = c.co / c.c > 0 ? c.co / c.c : 1;
    k0 = t->c0 / mult;
    k1 = (t->c1 - 1) / mult + 1;
  } else if (c.groups == 1) {
    k0 = t->k0;
    k1 = t->k1;
  } else { /* the groups of columns [c0, c1): their input channels (k: inside each) */
    int64_t cog = c.co / c.groups, cig = c.c / c.groups;
    k0 = t->c0 / cog * cig + t->k0;
    k1 = (t->c1 - 1) / cog * cig + t->k1;
  }
  int64_t pix = r.nseg == 1 ? (ih1 - ih0) * c.w : r.nseg * c.h * c.w;
  int64_t pix0 = (r.s0 * c.h + (r.nseg == 1 ? ih0 : 0)) * c.w;
  if (o->kind == OP_CONV2D && !pool && c.groups == 1 && c.kh == 1 && c.kw == 1 &&
      (c.sh > 1 || c.sw > 1) && o->at.pad[0] == 0 && o->at.pad[1] == 0 &&
      c.h == c.ho * c.sh && c.w == c.wo * c.sw) {
    /* a strided pointwise conv (ResNet's downsampling shortcut) reads only the pixels it
     * samples: one row of k-chunk bytes per output pixel (input pixel stride sw), one plane
     * per output row (input row stride sh; h = ho·sh keeps the stride uniform across
     * images). Its LB tile then holds exactly the gemm's m·k operand. */
    int64_t orows = r.nseg == 1 ? r.h1 - r.h0 : r.nseg * c.ho;
    int64_t orow0 = r.s0 * c.ho + (r.nseg == 1 ? r.h0 : 0);
    s->off = (orow0 * c.sh * c.w * c.c + k0) * dt;
    s->row_bytes = (k1 - k0) * dt;
    s->rows = c.wo;
    s->stride = c.sw * c.c * dt;
    s->planes = orows;
    s->pstride = c.sh * c.w * c.c * dt;
  } else if (k0 == 0 && k1 == c.c) {
    *s = span1(pix0 * c.c * dt, pix * c.c * dt);
  } else {
    s->off = (pix0 * c.c + k0) * dt;
    s->row_bytes = (k1 - k0) * dt;
    s->rows = pix;
    s->stride = c.c * dt;
    s->planes = 1;
    s->pstride = 0;
  }
}

/* lower_tile_input_span of a matmul: a (i = 0: rows x k chunk) or b (i = 1: k chunk x columns). */
static void matmul_input_span(const GsGraph *g, const GsOp *o, int i, const GsTile *t, int64_t dt,
                              GsSpan *s) {
  const GsTensor *x = T(g, o->in[i]), *y = T(g, o->out[0]);
  int64_t mm = T(g, o->in[0])->dim[T(g, o->in[0])->ndim - 2], kk = last_dim(T(g, o->in[0]));
  int64_t nn = last_dim(y), bo = matmul_batches(y, mm, nn);
  SegRange r = seg_range(mm, t);
  if (i == 0) {
    int64_t ba = matmul_batches(x, mm, kk);
    int same = ba == bo;
    s->off = (((same ? r.s0 : r.s0 % ba) * mm + r.h0) * kk + t->k0) * dt;
    s->row_bytes = (t->k1 - t->k0) * dt;
    s->rows = r.h1 - r.h0;
    s->stride = kk * dt;
    s->planes = same ? r.nseg : 1;
    s->pstride = mm * kk * dt;
  } else {
    int64_t bb = matmul_batches(x, kk, nn);
    int same = bb == bo;
    s->off = (((same ? r.s0 : r.s0 % bb) * kk + t->k0) * nn + t->c0) * dt;
    s->row_bytes = (t->c1 - t->c0) * dt;
    s->rows = t->k1 - t->k0;
    s->stride = nn * dt;
    s->planes = same ? r.nseg : 1;
    s->pstride = kk * nn * dt;
  }
}

/* lower_tile_input_span of a row-wise op: an operand with a row per output row, by rows; a
 * periodic one (rowwise_map) inside one period, or its whole rows again for each period a tile
 * covers (a source stride of 0); 0 for one loaded whole (w_fixed_bytes). */
static int rowwise_input_span(const GsGraph *g, int op, int i, const GsTile *t, GsSpan *s) {
  RowMap m = rowwise_map(g, op, i);
  if (m.kind == RM_EACH) {
    *s = span1(t->r0 * m.rb, (t->r1 - t->r0) * m.rb);
    return 1;
  }
  if (m.kind != RM_PERIODIC || m.period != rowwise_period(g, op)) return 0;
  SegRange r = seg_range(m.period, t);
  if (r.nseg == 1) {
    *s = span1(r.h0 * m.rb, (r.h1 - r.h0) * m.rb);
    return 1;
  }
  GsSpan whole = {0, m.period * m.rb, r.nseg, 0, 1, r.nseg * m.period * m.rb};
  *s = whole;
  return 1;
}

int lower_tile_input_span(const GsGraph *g, int op, int i, const GsTile *t, GsSpan *s) {
  const GsOp *o = &g->ops[op];
  const GsTensor *x = T(g, o->in[i]), *y = T(g, o->out[0]);
  int64_t dt = dtb(x);
  switch (o->kind) {
  case OP_CONV2D: case OP_CONV1D: case OP_MAXPOOL: case OP_AVGPOOL: case OP_RESIZE:
    conv_input_span(g, o, t, dt, s);
    return 1;
  case OP_DENSE: {
    int64_t kk = last_dim(x);
    s->off = (t->r0 * kk + t->k0) * dt;
    s->row_bytes = (t->k1 - t->k0) * dt;
    s->rows = t->r1 - t->r0;
    s->stride = kk * dt;
    s->planes = 1;
    s->pstride = 0;
    return 1;
  }
  case OP_MATMUL:
    matmul_input_span(g, o, i, t, dt, s);
    return 1;
  case OP_GAVGPOOL: {
    int64_t hw = x->dim[2] * x->dim[3], cc = x->dim[1];
    if (t->c0 == 0 && t->c1 == cc) {
      *s = span1(t->r0 * hw * cc * dt, (t->r1 - t->r0) * hw * cc * dt);
    } else {
      s->off = (t->r0 * hw * cc + t->c0) * dt;
      s->row_bytes = (t->c1 - t->c0) * dt;
      s->rows = (t->r1 - t->r0) * hw;
      s->stride = cc * dt;
      s->planes = 1;
      s->pstride = 0;
    }
    return 1;
  }
  case OP_PAD: {
    int64_t ir0, ir1;
    pad_in_rows(x, y, t, &ir0, &ir1);
    *s = span1(ir0 * last_dim(x) * dt, (ir1 - ir0) * last_dim(x) * dt);
    return 1;
  }
  case OP_EMBEDDING: {
    int64_t bag = o->at.bag > 1 ? o->at.bag : 1;
    int64_t per_row = graph_tensor_elems(x) / (graph_tensor_elems(y) / last_dim(y));
    if (per_row < 1) per_row = bag;
    *s = span1(t->r0 * per_row * dt, (t->r1 - t->r0) * per_row * dt);
    return 1;
  }
  default: /* row-wise ops: rowwise_map */
    return rowwise_input_span(g, op, i, t, s);
  }
}

int lower_tile_weight_span(const GsGraph *g, int op, const GsTile *t, GsSpan *s) {
  const GsOp *o = &g->ops[op];
  const GsTensor *y = T(g, o->out[0]);
  int64_t dt = dtb(y);
  switch (o->kind) {
  case OP_CONV2D: case OP_CONV1D: {
    ConvDims c = conv_dims(g, o);
    int64_t kpc = c.c / c.groups * c.kh * c.kw, rowlen = (kpc + c.bias) * dt;
    int64_t kfull = c.c / c.groups;
    s->off = t->c0 * rowlen + t->k0 * c.kh * c.kw * dt;
    s->row_bytes = (t->k1 - t->k0) * c.kh * c.kw * dt + (t->k1 == kfull && c.bias ? dt : 0);
    s->rows = t->c1 - t->c0;
    s->stride = rowlen;
    s->planes = 1;
    s->pstride = 0;
    return 1;
  }
  case OP_DENSE: {
    int64_t kk = last_dim(T(g, o->in[0])), b = o->at.bias ? 1 : 0, rowlen = (kk + b) * dt;
    s->off = t->c0 * rowlen + t->k0 * dt;
    s->row_bytes = (t->k1 - t->k0) * dt + (t->k1 == kk && b ? dt : 0);
    s->rows = t->c1 - t->c0;
    s->stride = rowlen;
    s->planes = 1;
    s->pstride = 0;
    return 1;
  }
  case OP_MATMUL:
    return lower_tile_input_span(g, op, 1, t, s);
  case OP_BATCHNORM: case OP_LAYERNORM:
    *s = span1(0, lower_op_weight_bytes(g, op));
    return 1;
  case OP_EMBEDDING: {
    /* Row gathers: the indices are data, so the rows' addresses are not known statically.
     * They are spread over the table with a fixed stride (deterministic), which exercises the
     * DDR channels as random rows would; bytes are exact. */
    int64_t bag = o->at.bag > 1 ? o->at.bag : 1, dim = last_dim(y), vocab = embedding_rows(g, o);
    int64_t n = (t->r1 - t->r0) * bag, rowb = dim * dt;
    if (vocab < 1) vocab = 1;
    s->row_bytes = rowb;
    s->rows = n;
    s->planes = 1;
    s->pstride = 0;
    if (n <= vocab) {
      int64_t step = vocab / n;
      int64_t span_rows = (n - 1) * step + 1;
      int64_t start = (int64_t)(((uint64_t)t->r0 * 2654435761u) % (uint64_t)(vocab - span_rows + 1));
      s->off = start * rowb;
      s->stride = step * rowb;
    } else {
      /* more rows than the table has (a token-type table): rows are read again; the pattern's
       * stride shrinks below a row so that it stays inside the table, down to 0 when even a
       * stride of one byte would pass its end (more rows than the table's bytes past its
       * first row: a one-row table, or 2 rows of 768 int8 gathered 1024 times) — the same row
       * each time; emit_mov makes that a mov per row */
      s->off = 0;
      s->stride = (vocab * rowb - rowb) / (n - 1);
    }
    return 1;
  }
  default:
    return 0;
  }
}

void lower_tile_output_span(const GsGraph *g, int op, const GsTile *t, GsSpan *s) {
  const GsOp *o = &g->ops[op];
  const GsTensor *y = T(g, o->out[0]);
  int64_t dt = dtb(y);
  switch (o->kind) {
  case OP_CONV2D: case OP_CONV1D: case OP_MAXPOOL: case OP_AVGPOOL: case OP_RESIZE: {
    ConvDims c = conv_dims(g, o);
    SegRange r = seg_range(c.ho, t);
    int64_t co = o->kind == OP_CONV2D || o->kind == OP_CONV1D ? c.co : c.c;
    int64_t pix0 = (r.s0 * c.ho + r.h0) * c.wo, pix = r.nseg * (r.h1 - r.h0) * c.wo;
    if (t->c0 == 0 && t->c1 == co) {
      *s = span1(pix0 * co * dt, pix * co * dt);
    } else {
      s->off = (pix0 * co + t->c0) * dt;
      s->row_bytes = (t->c1 - t->c0) * dt;
      s->rows = pix;
      s->stride = co * dt;
      s->planes = 1;
      s->pstride = 0;
    }
    return;
  }
  case OP_GAVGPOOL: {
    int64_t cc = y->dim[1];
    if (t->c0 == 0 && t->c1 == cc) {
      *s = span1(t->r0 * cc * dt, (t->r1 - t->r0) * cc * dt);
    } else {
      s->off = (t->r0 * cc + t->c0) * dt;
      s->row_bytes = (t->c1 - t->c0) * dt;
      s->rows = t->r1 - t->r0;
      s->stride = cc * dt;
      s->planes = 1;
      s->pstride = 0;
    }
    return;
  }
  case OP_DENSE: case OP_MATMUL: {
    int64_t nn = last_dim(y);
    s->off = (t->r0 * nn + t->c0) * dt;
    s->row_bytes = (t->c1 - t->c0) * dt;
    s->rows = t->r1 - t->r0;
    s->stride = nn * dt;
    s->planes = 1;
    s->pstride = 0;
    return;
  }
  default: {
    int64_t rows = graph_tensor_elems(y) / (last_dim(y) ? last_dim(y) : 1);
    int64_t rb = graph_tensor_bytes(y) / rows;
    *s = span1(t->r0 * rb, (t->r1 - t->r0) * rb);
    return;
  }
  }
}

static GsComputeStep vstep(GsVop v, int64_t elems, int64_t param, int uses_b) {
  GsComputeStep s;
  memset(&s, 0, sizeof s);
  s.vop = v;
  s.elems = elems;
  s.param = param;
  s.uses_b = uses_b;
  return s;
}

static int elementwise_vop(GsOpKind k, GsVop *v) {
  switch (k) {
  case OP_RELU: *v = V_RELU; return 1;
  case OP_RELU6: *v = V_RELU6; return 1;
  case OP_GELU: *v = V_GELU; return 1;
  case OP_SIGMOID: *v = V_SIGMOID; return 1;
  case OP_SWISH: *v = V_SWISH; return 1;
  case OP_HSIGMOID: *v = V_HSIGMOID; return 1;
  case OP_HSWISH: *v = V_HSWISH; return 1;
  case OP_TANH: *v = V_TANH; return 1;
  case OP_ADD: *v = V_ADD; return 2;
  case OP_SUB: *v = V_SUB; return 2;
  case OP_MUL: *v = V_MUL; return 2;
  case OP_DIV: *v = V_DIV; return 2;
  case OP_BATCHNORM: *v = V_BNORM; return 2; /* b: its scale and shift */
  case OP_TRANSPOSE: *v = V_COPY; return 1;
  default: return 0;
  }
}

int lower_op_input_whole(const GsGraph *g, int op, int i) {
  const GsOp *o = &g->ops[op];
  if (lower_op_kind(g, op) != LK_VEC) return 0;
  switch (o->kind) {
  case OP_CONV2D: case OP_CONV1D: case OP_MAXPOOL: case OP_AVGPOOL: case OP_GAVGPOOL:
  case OP_RESIZE:
    return 0;
  default: {
    GsTile t = {0, 1, 0, 1, 0, 1};
    GsSpan s;
    return !lower_tile_input_span(g, op, i, &t, &s);
  }
  }
}

/* ---- a kernel's operands ---- */

/* Appends a resident operand: tensor t of op, or op's weights when t is -1. */
static void add_resident(GsKernelOperands *p, int op, int t) {
  p->fop[p->nf] = op;
  p->fin[p->nf++] = t;
}

void lower_kernel_operands(const GsGraph *g, const GsKernel *k, GsKernelOperands *p) {
  const GsOp *h = &g->ops[k->head];
  memset(p, 0, sizeof *p);
  for (int i = 0; i < h->nin; i++) {
    if (h->kind == OP_MATMUL && i == 1) continue;
    if (lower_op_input_whole(g, k->head, i)) continue;
    p->apart[p->na++] = i;
  }
  const GsTensor *hy = &g->tensors[h->out[0]];
  for (int i = 0; i < h->nin; i++)
    if (lower_op_input_whole(g, k->head, i)) add_resident(p, k->head, h->in[i]);
  p->has_w = lower_op_weight_bytes(g, k->head) > 0 || h->kind == OP_MATMUL;
  p->is_conv = h->kind == OP_CONV2D || h->kind == OP_CONV1D;
  if (lower_op_kind(g, k->head) == LK_VEC && lower_op_weight_bytes(g, k->head) > 0 && !p->is_conv) {
    add_resident(p, k->head, -1); /* bn/ln parameters, depthwise weights: resident */
    p->has_w = 0;
  }
  for (int j = 1; j < k->nops; j++) {
    const GsOp *op = &g->ops[k->ops[j]];
    if (lower_op_weight_bytes(g, k->ops[j]) > 0) add_resident(p, k->ops[j], -1);
    for (int i = 0; i < op->nin; i++) {
      if (op->in[i] == g->ops[k->ops[j - 1]].out[0]) continue;
      if (graph_tensor_elems(&g->tensors[op->in[i]]) == graph_tensor_elems(hy)) {
        gs_assert(p->nr < GS_MAX_OPERANDS);
        p->rop[p->nr] = j;
        p->rin[p->nr++] = op->in[i];
      } else {
        add_resident(p, k->ops[j], op->in[i]);
      }
    }
  }
}

int64_t lower_resident_bytes(const GsGraph *g, const GsKernelOperands *p, int i) {
  return p->fin[i] >= 0 ? graph_tensor_bytes(&g->tensors[p->fin[i]])
                        : lower_op_weight_bytes(g, p->fop[i]);
}

GsComputeStep lower_tail_step(const GsGraph *g, int op, int64_t elems) {
  const GsOp *o = &g->ops[op];
  const GsTensor *y = T(g, o->out[0]);
  GsVop v;
  switch (o->kind) {
  case OP_LAYERNORM: return vstep(V_LNORM, elems, last_dim(y), 1); /* b: gamma and beta */
  case OP_SOFTMAX: return vstep(V_SOFTMAX, elems, last_dim(y), 0);
  default: {
    int n = elementwise_vop(o->kind, &v);
    if (!n) die("%s cannot be a fused tail", graph_opkind_name(o->kind));
    return vstep(v, elems, 0, n == 2);
  }
  }
}

GsOperandBytes lower_tile_operand_bytes(const GsGraph *g, int op, const GsTile *t, int packed_k,
                                        GsDtype cdt) {
  GsComputeStep st[GS_MAX_STEPS];
  int n = lower_tile_compute(g, op, t, packed_k, st, GS_MAX_STEPS);
  return lower_steps_operand_bytes(st, n, cdt);
}

GsOperandBytes lower_steps_operand_bytes(const GsComputeStep *st, int n, GsDtype cdt) {
  GsOperandBytes b = {0, 0, 0};
  int64_t es = arch_dtype_bytes(cdt);
  for (int i = 0; i < n; i++) {
    if (st[i].is_gemm) {
      b.a = max64(b.a, st[i].m * st[i].k * es);
      b.b = max64(b.b, st[i].k * st[i].n * es);
      b.o = max64(b.o, st[i].m * st[i].n * es);
    } else {
      b.a = max64(b.a, st[i].elems * es);
      b.o = max64(b.o, (st[i].dst_off + isa_vop_out_elems(st[i].vop, st[i].elems, st[i].param)) * es);
    }
  }
  return b;
}

/* A gemm step m x n x k. */
static GsComputeStep gemm_step(int64_t m, int64_t n, int64_t k) {
  GsComputeStep s;
  memset(&s, 0, sizeof s);
  s.is_gemm = 1;
  s.m = m;
  s.n = n;
  s.k = k;
  return s;
}

int lower_conv_packable(const GsGraph *g, int op) {
  const GsOp *o = &g->ops[op];
  if (o->kind != OP_CONV2D && o->kind != OP_CONV1D) return 0;
  ConvDims c = conv_dims(g, o);
  return !conv_depthwise(&c) && c.kh * c.kw > 1 && (c.sh < c.kh || c.sw < c.kw);
}

/* A conv's steps: depthwise on the vector unit (one multiply-accumulate per tap); else direct
 * convolution, one gemm per filter tap (kh·kw of them) over the tile's output pixels and its
 * input-channel chunk, accumulating — the input tile stays in its raw (channels-last) form,
 * which holds at least pixels × channels elements for every tap. packed_k: one gemm over the
 * tile's im2col form (pixels × channels·taps elements: the A region holds it, written by the
 * load as the unit reads it — lower_tile_operand_bytes), k = channels·taps. */
static int conv_compute(const GsGraph *g, const GsOp *o, const GsTile *t, int packed_k,
                        GsComputeStep *st, int max) {
  ConvDims c = conv_dims(g, o);
  int64_t rows = t->r1 - t->r0;
  if (conv_depthwise(&c)) {
    st[0] = vstep(V_MUL, rows * c.wo * (t->c1 - t->c0) * c.kh * c.kw, c.kh * c.kw, 1);
    return 1;
  }
  int64_t taps = c.kh * c.kw;
  int64_t kg = t->k1 - t->k0; /* a grouped conv's: inside its group */
  if (packed_k || (c.sh >= c.kh && c.sw >= c.kw) || taps > max) {
    /* packed, or non-overlapping windows (a ViT patch embedding): the im2col form of the tile
     * is its raw input, so one gemm over all taps reads no more than the tile holds; also the
     * fallback for filters with more taps than instructions per step */
    st[0] = gemm_step(rows * c.wo, t->c1 - t->c0, kg * taps);
    st[0].a_tile = c.sh < c.kh || c.sw < c.kw; /* overlapping windows: the raw tile is smaller */
    return 1;
  }
  for (int64_t i = 0; i < taps; i++) st[i] = gemm_step(rows * c.wo, t->c1 - t->c0, kg);
  return (int)taps;
}

/* Feature i against features i+1.. (or i.. with self-interaction): one dot-product instruction
 * per feature, so no instruction reads more than the F·D input rows; with more features than
 * steps, one per group of consecutive features (g of them: up to g·F·D). */
static int interaction_compute(const GsGraph *g, const GsOp *o, int64_t rows, GsComputeStep *st,
                               int max) {
  int64_t f, dd;
  interaction_pairs(g, o, &f, &dd);
  int room = max - (o->at.pad_interaction ? 1 : 0), n = 0;
  gs_assert(room >= 1);
  int64_t per = ceil_div64(f, room), acc = 0, off = 0;
  for (int64_t i = 0; i < f; i++) {
    acc += max64(0, f - 1 - i + (o->at.self_interaction ? 1 : 0));
    if (acc == 0 || ((i + 1) % per && i + 1 < f)) continue;
    gs_assert(n < room);
    st[n] = vstep(V_DOT, rows * acc * dd, dd, 1);
    st[n++].dst_off = off; /* the products of each group after the previous group's */
    off += rows * acc;
    acc = 0;
  }
  if (o->at.pad_interaction) {
    gs_assert(n < max);
    st[n] = vstep(V_COPY, rows * dd, 0, 0);
    st[n++].dst_off = off;
  }
  return n;
}

/* The vector step of a pooling, row-wise or elementwise op over tile t (0 steps: none). */
static int vector_compute(const GsGraph *g, const GsOp *o, const GsTile *t, GsComputeStep *st) {
  const GsTensor *y = T(g, o->out[0]);
  int64_t rows = t->r1 - t->r0;
  switch (o->kind) {
  case OP_MAXPOOL: case OP_AVGPOOL: {
    ConvDims c = conv_dims(g, o);
    int64_t win = c.kh * c.kw;
    st[0] = vstep(o->kind == OP_MAXPOOL ? V_POOLMAX : V_POOLAVG,
                  rows * c.wo * (t->c1 - t->c0) * win, win, 0);
    return 1;
  }
  case OP_RESIZE: { /* nearest: a copy; bilinear: 4 weighted reads per output, as avg pooling */
    ConvDims c = conv_dims(g, o);
    int64_t out = rows * c.wo * (t->c1 - t->c0);
    /* a nearest up-sampling reads each input element several times: the copy reads its A tile,
     * the input rows the output rows need, not elems of it */
    st[0] = o->at.linear ? vstep(V_POOLAVG, out * 4, 4, 0) : vstep(V_COPY, out, 0, 0);
    st[0].a_tile = 1;
    return 1;
  }
  case OP_PAD: /* a copy of the output rows from the input rows they map to (pad_in_rows) */
    st[0] = vstep(V_COPY, rows * last_dim(y), 0, 0);
    st[0].a_tile = 1;
    return 1;
  case OP_GAVGPOOL: {
    const GsTensor *x = T(g, o->in[0]);
    int64_t hw = x->dim[2] * x->dim[3];
    st[0] = vstep(V_POOLAVG, rows * hw * (t->c1 - t->c0), hw, 0);
    return 1;
  }
  case OP_LAYERNORM: /* b: gamma and beta */
    st[0] = vstep(V_LNORM, rows * last_dim(y), last_dim(y), 1);
    return 1;
  case OP_SOFTMAX: {
    int ax = o->at.axis < 0 ? y->ndim + o->at.axis : o->at.axis;
    int64_t grp = (ax >= 0 && ax < y->ndim) ? y->dim[ax] : last_dim(y);
    st[0] = vstep(V_SOFTMAX, rows * last_dim(y), grp, 0);
    return 1;
  }
  case OP_GLU:
    st[0] = vstep(V_GLU, rows * last_dim(y), 0, 1);
    return 1;
  case OP_EMBEDDING: {
    int64_t bag = o->at.bag > 1 ? o->at.bag : 1;
    if (bag == 1) return 0;
    st[0] = vstep(V_RSUM, rows * bag * last_dim(y), bag, 0);
    return 1;
  }
  default: {
    GsVop v;
    int n = elementwise_vop(o->kind, &v);
    if (!n) die("no vector lowering for %s", graph_opkind_name(o->kind));
    st[0] = vstep(v, rows * last_dim(y), 0, n == 2);
    return 1;
  }
  }
}

int lower_tile_compute(const GsGraph *g, int op, const GsTile *t, int packed_k, GsComputeStep *st,
                       int max) {
  gs_assert(max >= 2);
  const GsOp *o = &g->ops[op];
  switch (o->kind) {
  case OP_CONV2D: case OP_CONV1D:
    return conv_compute(g, o, t, packed_k, st, max);
  case OP_DENSE: case OP_MATMUL:
    st[0] = gemm_step(t->r1 - t->r0, t->c1 - t->c0, t->k1 - t->k0);
    return 1;
  case OP_INTERACTION:
    return interaction_compute(g, o, t->r1 - t->r0, st, max);
  default:
    return vector_compute(g, o, t, st);
  }
}
