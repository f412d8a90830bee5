/* graph_infer.c — binds the batch N and infers/checks the concrete shape of every tensor.
 *
 * Algorithm: graph inputs get their declared dims with N replaced by the batch; then the ops
 * are visited once in array order (a topological order, see graph.c), each op checking its
 * attributes and operand shapes and computing its outputs' dims and dtype from the rules in
 * docs/gtg.md. The first error stops inference (later shapes would be meaningless) and is
 * reported at the op's source position with the shapes involved.
 * Invariant after success: every tensor has 1 <= dim[i] and at most GS_MAX_ELEMS elements, and
 * every op's cost and the graph's totals fit comfortably in int64 (see GS_COST_LIMIT).
 */
#include <stdarg.h>
#include <string.h>

#include "graph_priv.h"

enum { SHAPE_BUF = 128 };
#define GS_MAX_ELEMS ((int64_t)1 << 40)   /* per tensor: far beyond any real activation */
#define GS_MAX_DIM ((int64_t)1 << 40)
#define GS_COST_LIMIT ((int64_t)1 << 60)  /* per op cost field and per graph total */

char *graph_shape_str(char *buf, size_t size, const int64_t *dim, int ndim) {
  size_t n = 0;
  buf[0] = 0;
  n += (size_t)snprintf(buf + n, size - n, "[");
  for (int i = 0; i < ndim && n < size; i++)
    n += (size_t)snprintf(buf + n, size - n, "%s%lld", i ? ", " : "", (long long)dim[i]);
  if (n < size) snprintf(buf + n, size - n, "]");
  return buf;
}

typedef struct {
  GsGraph *g;
  GsDiag *d;
  int op;
} Ctx;

__attribute__((format(printf, 2, 3))) static int op_error(Ctx *c, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  const GsOp *op = &c->g->ops[c->op];
  const char *file = c->g->file ? c->g->file : "<graph>";
  diag_error(c->d, file, op->line, op->line > 0 ? op->col : 0, c->g->src, "%s '%s': %s",
             graph_opkind_name(op->kind), op->name ? op->name : "?", msg);
  return -1;
}

static const GsTensor *operand(Ctx *c, int i) { return &c->g->tensors[c->g->ops[c->op].in[i]]; }

static char *sh(char *buf, const GsTensor *t) {
  return graph_shape_str(buf, SHAPE_BUF, t->dim, t->ndim);
}

/* Normalises a possibly negative axis against rank; -1 when out of range. */
static int norm_axis(int axis, int rank) {
  if (axis < 0) axis += rank;
  return axis >= 0 && axis < rank ? axis : -1;
}

static int64_t elems(const int64_t *dim, int ndim) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) {
    if (dim[i] > GS_MAX_ELEMS || n > GS_MAX_ELEMS / (dim[i] > 0 ? dim[i] : 1)) return -1;
    n *= dim[i];
  }
  return n;
}

/* Output length of a sliding window (conv/pool), ONNX/PyTorch rule; < 1 when it does not fit.
 * With ceil, a last window that would start inside the right padding is dropped. */
static int64_t window_out(int64_t in, int k, int s, int p0, int p1, int dil, int ceil) {
  int64_t span = (int64_t)dil * (k - 1) + 1;
  int64_t avail = in + p0 + p1 - span;
  if (avail < 0) return 0;
  int64_t out = (ceil ? (avail + s - 1) / s : avail / s) + 1;
  if (ceil && (out - 1) * s >= in + p0) out--;
  return out;
}

static int check_window(Ctx *c, const GsAttrs *at, int two_d) {
  int first = two_d ? 0 : 1;
  for (int i = first; i < 2; i++) {
    if (at->kernel[i] < 1) return op_error(c, "kernel must be >= 1, not %d", at->kernel[i]);
    if (at->stride[i] < 1) return op_error(c, "stride must be >= 1, not %d", at->stride[i]);
    if (at->dilation[i] < 1)
      return op_error(c, "dilation must be >= 1, not %d", at->dilation[i]);
  }
  for (int i = 0; i < 4; i++)
    if (at->pad[i] < 0) return op_error(c, "pad must be >= 0, not %d", at->pad[i]);
  if (!two_d) { /* 1-D: the height entries are neutral or repeat the width (kernel=31) */
    if ((at->kernel[0] != 1 && at->kernel[0] != at->kernel[1]) ||
        (at->stride[0] != 1 && at->stride[0] != at->stride[1]) ||
        (at->dilation[0] != 1 && at->dilation[0] != at->dilation[1]) ||
        !((at->pad[0] == 0 && at->pad[2] == 0) ||
          (at->pad[0] == at->pad[1] && at->pad[2] == at->pad[3])))
      return op_error(c, "a 1-D window has no height: give kernel, stride, dilation and pad as "
                         "one value, or with height entries 1 (pad 0)");
  }
  return 0;
}

static int need_rank(Ctx *c, const GsTensor *x, int lo, int hi, const char *what) {
  char b[SHAPE_BUF];
  if (x->ndim < lo || x->ndim > hi)
    return op_error(c, "input '%s' has shape %s; expected %s", x->name, sh(b, x), what);
  return 0;
}

/* Sets output j's dims (checking the size limit). */
static int set_out(Ctx *c, int j, const int64_t *dim, int ndim, GsDtype t) {
  GsTensor *y = &c->g->tensors[c->g->ops[c->op].out[j]];
  char b[SHAPE_BUF];
  if (ndim < 1 || ndim > GS_MAX_DIMS)
    return op_error(c, "output '%s' would have %d dims (at most %d)", y->name, ndim, GS_MAX_DIMS);
  for (int i = 0; i < ndim; i++)
    if (dim[i] < 1 || dim[i] > GS_MAX_DIM)
      return op_error(c, "output '%s' would have shape %s", y->name,
                      graph_shape_str(b, sizeof b, dim, ndim));
  if (elems(dim, ndim) < 0)
    return op_error(c, "output '%s' of shape %s has more than 2^40 elements", y->name,
                    graph_shape_str(b, sizeof b, dim, ndim));
  y->ndim = ndim;
  memcpy(y->dim, dim, (size_t)ndim * sizeof *dim);
  y->dtype = t;
  return 0;
}

static int infer_conv(Ctx *c, const GsAttrs *at, int two_d) {
  const GsTensor *x = operand(c, 0);
  char b[SHAPE_BUF];
  if (need_rank(c, x, two_d ? 4 : 3, two_d ? 4 : 3, two_d ? "[N, C, H, W]" : "[N, C, L]"))
    return -1;
  if (check_window(c, at, two_d)) return -1;
  if (at->units < 1) return op_error(c, "units (output channels) must be >= 1");
  if (at->groups < 1) return op_error(c, "groups must be >= 1, not %d", at->groups);
  int64_t cin = x->dim[1];
  if (cin % at->groups || at->units % at->groups)
    return op_error(c, "groups=%d must divide input channels %lld (input %s) and units=%lld",
                    at->groups, (long long)cin, sh(b, x), (long long)at->units);
  int64_t o[4] = {x->dim[0], at->units, 0, 0};
  int first = two_d ? 0 : 1;
  for (int i = first; i < 2; i++) {
    int64_t in = x->dim[2 + i - first];
    int64_t n = window_out(in, at->kernel[i], at->stride[i], at->pad[i], at->pad[i + 2],
                           at->dilation[i], 0);
    if (n < 1)
      return op_error(c, "kernel %d (dilation %d) does not fit input %s with padding %d+%d",
                      at->kernel[i], at->dilation[i], sh(b, x), at->pad[i], at->pad[i + 2]);
    o[2 + i - first] = n;
  }
  return set_out(c, 0, o, two_d ? 4 : 3, x->dtype);
}

static int infer_pool(Ctx *c, const GsAttrs *at) {
  const GsTensor *x = operand(c, 0);
  char b[SHAPE_BUF];
  if (need_rank(c, x, 4, 4, "[N, C, H, W]") || check_window(c, at, 1)) return -1;
  int64_t o[4] = {x->dim[0], x->dim[1], 0, 0};
  for (int i = 0; i < 2; i++) {
    if ((int64_t)at->pad[i] * 2 > at->kernel[i] || (int64_t)at->pad[i + 2] * 2 > at->kernel[i])
      return op_error(c, "pad %d,%d exceeds half the kernel %d", at->pad[i], at->pad[i + 2],
                      at->kernel[i]);
    int64_t n = window_out(x->dim[2 + i], at->kernel[i], at->stride[i], at->pad[i],
                           at->pad[i + 2], at->dilation[i], at->ceil_mode);
    if (n < 1)
      return op_error(c, "kernel %d does not fit input %s with padding %d+%d", at->kernel[i],
                      sh(b, x), at->pad[i], at->pad[i + 2]);
    o[2 + i] = n;
  }
  return set_out(c, 0, o, 4, x->dtype);
}

/* pad: each axis d grows by its begin pads[d] and end pads[rank + d]; reflect mirrors without
 * repeating the border, so it needs pads < the axis (ONNX's rule). */
static int infer_pad(Ctx *c, const GsTensor *x, const GsAttrs *at) {
  char b[SHAPE_BUF];
  if (at->npads != 2 * x->ndim)
    return op_error(c, "pads has %d values for input %s: expected %d (the begins of every axis, "
                       "then the ends)", at->npads, sh(b, x), 2 * x->ndim);
  int64_t o[GS_MAX_DIMS];
  for (int d = 0; d < x->ndim; d++) {
    int bg = at->pads[d], en = at->pads[x->ndim + d];
    if (at->pad_mode == GS_PAD_REFLECT && (bg >= x->dim[d] || en >= x->dim[d]))
      return op_error(c, "reflect pads %d,%d of axis %d must be below its size (input %s)", bg,
                      en, d, sh(b, x));
    o[d] = x->dim[d] + bg + en;
  }
  return set_out(c, 0, o, x->ndim, x->dtype);
}

static int infer_broadcast(Ctx *c) {
  const GsTensor *a = operand(c, 0), *bb = operand(c, 1);
  char b1[SHAPE_BUF], b2[SHAPE_BUF];
  if (a->dtype != bb->dtype)
    return op_error(c, "operands have different dtypes %s and %s", arch_dtype_name(a->dtype),
                    arch_dtype_name(bb->dtype));
  int n = a->ndim > bb->ndim ? a->ndim : bb->ndim;
  int64_t o[GS_MAX_DIMS];
  for (int i = 0; i < n; i++) {
    int ia = a->ndim - n + i, ib = bb->ndim - n + i;
    int64_t da = ia >= 0 ? a->dim[ia] : 1, db = ib >= 0 ? bb->dim[ib] : 1;
    if (da != db && da != 1 && db != 1)
      return op_error(c, "shapes %s and %s do not broadcast (%lld vs %lld)", sh(b1, a),
                      sh(b2, bb), (long long)da, (long long)db);
    o[i] = da == 1 ? db : da;
  }
  return set_out(c, 0, o, n, a->dtype);
}

static int infer_matmul(Ctx *c) {
  const GsTensor *a = operand(c, 0), *bb = operand(c, 1);
  char b1[SHAPE_BUF], b2[SHAPE_BUF];
  if (a->ndim < 2 || bb->ndim < 2)
    return op_error(c, "operands must have at least 2 dims, got %s and %s", sh(b1, a),
                    sh(b2, bb));
  if (a->dtype != bb->dtype)
    return op_error(c, "operands have different dtypes %s and %s", arch_dtype_name(a->dtype),
                    arch_dtype_name(bb->dtype));
  if (a->dim[a->ndim - 1] != bb->dim[bb->ndim - 2])
    return op_error(c, "inner dimensions differ: %s · %s (K %lld vs %lld)", sh(b1, a),
                    sh(b2, bb), (long long)a->dim[a->ndim - 1], (long long)bb->dim[bb->ndim - 2]);
  int n = a->ndim > bb->ndim ? a->ndim : bb->ndim;
  int64_t o[GS_MAX_DIMS];
  for (int i = 0; i < n - 2; i++) {
    int ia = a->ndim - n + i, ib = bb->ndim - n + i;
    int64_t da = ia >= 0 ? a->dim[ia] : 1, db = ib >= 0 ? bb->dim[ib] : 1;
    if (da != db && da != 1 && db != 1)
      return op_error(c, "batch dims of %s and %s do not broadcast (%lld vs %lld)", sh(b1, a),
                      sh(b2, bb), (long long)da, (long long)db);
    o[i] = da == 1 ? db : da;
  }
  o[n - 2] = a->dim[a->ndim - 2];
  o[n - 1] = bb->dim[bb->ndim - 1];
  return set_out(c, 0, o, n, a->dtype);
}

static int infer_concat(Ctx *c, const GsOp *op) {
  const GsTensor *a = operand(c, 0);
  char b1[SHAPE_BUF], b2[SHAPE_BUF];
  int ax = norm_axis(op->at.axis, a->ndim);
  if (ax < 0) return op_error(c, "axis %d out of range for %s", op->at.axis, sh(b1, a));
  int64_t o[GS_MAX_DIMS];
  memcpy(o, a->dim, sizeof o);
  for (int i = 1; i < op->nin; i++) {
    const GsTensor *x = operand(c, i);
    if (x->dtype != a->dtype)
      return op_error(c, "operands have different dtypes %s and %s",
                      arch_dtype_name(a->dtype), arch_dtype_name(x->dtype));
    int same = x->ndim == a->ndim;
    for (int k = 0; same && k < a->ndim; k++)
      if (k != ax && x->dim[k] != a->dim[k]) same = 0;
    if (!same)
      return op_error(c, "shapes %s and %s differ outside axis %d", sh(b1, a), sh(b2, x), ax);
    o[ax] += x->dim[ax];
  }
  return set_out(c, 0, o, a->ndim, a->dtype);
}

static int infer_split(Ctx *c, const GsOp *op) {
  const GsTensor *x = operand(c, 0);
  char b[SHAPE_BUF];
  int ax = norm_axis(op->at.axis, x->ndim);
  if (ax < 0) return op_error(c, "axis %d out of range for %s", op->at.axis, sh(b, x));
  int64_t o[GS_MAX_DIMS];
  memcpy(o, x->dim, sizeof o);
  if (op->at.nsizes == 0) {
    if (x->dim[ax] % op->nout)
      return op_error(c, "axis %d of %s does not split into %d equal parts", ax, sh(b, x),
                      op->nout);
    o[ax] = x->dim[ax] / op->nout;
    for (int j = 0; j < op->nout; j++)
      if (set_out(c, j, o, x->ndim, x->dtype)) return -1;
    return 0;
  }
  if (op->at.nsizes != op->nout)
    return op_error(c, "%d sizes given for %d outputs", op->at.nsizes, op->nout);
  int64_t sum = 0;
  for (int j = 0; j < op->nout; j++) {
    if (op->at.sizes[j] < 1 || op->at.sizes[j] > GS_MAX_DIM)
      return op_error(c, "split size %lld must be >= 1", (long long)op->at.sizes[j]);
    sum += op->at.sizes[j];
  }
  if (sum != x->dim[ax])
    return op_error(c, "sizes sum to %lld but axis %d of %s is %lld", (long long)sum, ax,
                    sh(b, x), (long long)x->dim[ax]);
  for (int j = 0; j < op->nout; j++) {
    o[ax] = op->at.sizes[j];
    if (set_out(c, j, o, x->ndim, x->dtype)) return -1;
  }
  return 0;
}

static int infer_reshape(Ctx *c, const GsOp *op) {
  const GsTensor *x = operand(c, 0);
  char b1[SHAPE_BUF], b2[SHAPE_BUF];
  const GsAttrs *at = &op->at;
  if (at->nshape < 1 || at->nshape > GS_MAX_DIMS)
    return op_error(c, "shape needs 1 to %d entries", GS_MAX_DIMS);
  int64_t o[GS_MAX_DIMS], known = 1;
  int infer_at = -1;
  for (int i = 0; i < at->nshape; i++) {
    int64_t v = at->shape[i];
    if (v == GS_DIM_N) v = c->g->batch;
    else if (v == -2) {
      if (infer_at >= 0) return op_error(c, "shape may contain only one -1 (inferred dim)");
      infer_at = i;
      v = 1;
    } else if (v < 1 || v > GS_MAX_DIM)
      return op_error(c, "bad shape entry %lld", (long long)v);
    o[i] = v;
    if (known > GS_MAX_ELEMS / v) return op_error(c, "target shape is too large");
    known *= v;
  }
  int64_t n = elems(x->dim, x->ndim);
  if (infer_at >= 0) {
    if (n % known)
      return op_error(c, "cannot reshape %s (%lld elements) to %s with one inferred dim", sh(b1, x),
                      (long long)n, graph_shape_str(b2, sizeof b2, at->shape, at->nshape));
    o[infer_at] = n / known;
  } else if (known != n) {
    return op_error(c, "cannot reshape %s (%lld elements) to %s (%lld elements)", sh(b1, x),
                    (long long)n, graph_shape_str(b2, sizeof b2, o, at->nshape), (long long)known);
  }
  return set_out(c, 0, o, at->nshape, x->dtype);
}

static int infer_transpose(Ctx *c, const GsOp *op) {
  const GsTensor *x = operand(c, 0);
  char b[SHAPE_BUF];
  if (op->at.nperm != x->ndim)
    return op_error(c, "perm has %d entries but input %s has %d dims", op->at.nperm, sh(b, x),
                    x->ndim);
  int seen[GS_MAX_DIMS] = {0};
  int64_t o[GS_MAX_DIMS];
  for (int i = 0; i < x->ndim; i++) {
    int p = op->at.perm[i];
    if (p < 0 || p >= x->ndim || seen[p]++)
      return op_error(c, "perm is not a permutation of 0..%d", x->ndim - 1);
    o[i] = x->dim[p];
  }
  return set_out(c, 0, o, x->ndim, x->dtype);
}

static int infer_embedding(Ctx *c, const GsAttrs *at) {
  const GsTensor *x = operand(c, 0);
  char b[SHAPE_BUF];
  if (at->vocab < 1 || at->vocab > GS_MAX_DIM || at->dim < 1 || at->dim > GS_MAX_DIM)
    return op_error(c, "vocab and dim must be >= 1");
  if (at->bag < 1) return op_error(c, "bag must be >= 1");
  if (x->dtype != DT_INT8 && x->dtype != DT_INT16 && x->dtype != DT_INT32)
    return op_error(c, "ids '%s' must have an integer dtype (int8, int16, int32), not %s",
                    x->name, arch_dtype_name(x->dtype));
  int64_t o[GS_MAX_DIMS + 1];
  memcpy(o, x->dim, sizeof x->dim);
  int n = x->ndim;
  if (at->bag > 1) {
    if (x->dim[n - 1] != at->bag)
      return op_error(c, "bag=%lld but the last dim of index tensor %s is %lld",
                      (long long)at->bag, sh(b, x), (long long)x->dim[n - 1]);
    o[n - 1] = at->dim;
  } else {
    o[n++] = at->dim;
  }
  return set_out(c, 0, o, n, c->g->dtype);
}

static int infer_interaction(Ctx *c, const GsAttrs *at) {
  const GsTensor *x = operand(c, 0);
  if (need_rank(c, x, 3, 3, "[N, F, D] (F feature vectors of width D)")) return -1;
  int64_t f = x->dim[1];
  if (f > ((int64_t)1 << 30)) /* keeps F·(F+1) in int64 */
    return op_error(c, "%lld feature vectors are too many (at most 2^30)", (long long)f);
  int64_t pairs = at->self_interaction ? f * (f + 1) / 2 : f * (f - 1) / 2;
  int64_t o[2] = {x->dim[0], pairs + (at->pad_interaction ? x->dim[2] : 0)};
  if (o[1] < 1) return op_error(c, "a single feature has no pairs (F=1)");
  return set_out(c, 0, o, 2, x->dtype);
}

static int infer_op(Ctx *c) {
  const GsOp *op = &c->g->ops[c->op];
  const GsAttrs *at = &op->at;
  const GsTensor *x = operand(c, 0);
  char b[SHAPE_BUF];
  if (op->nin < graph_opkind_min_inputs(op->kind) || op->nin > graph_opkind_max_inputs(op->kind))
    return op_error(c, "takes %d to %d operands, not %d", graph_opkind_min_inputs(op->kind),
                    graph_opkind_max_inputs(op->kind), op->nin);
  if (op->kind != OP_SPLIT && op->nout != 1) return op_error(c, "has exactly one output");
  switch (op->kind) {
  case OP_CONV2D: return infer_conv(c, at, 1);
  case OP_CONV1D: return infer_conv(c, at, 0);
  case OP_DENSE: {
    if (at->units < 1) return op_error(c, "units must be >= 1");
    int64_t o[GS_MAX_DIMS];
    memcpy(o, x->dim, sizeof o);
    o[x->ndim - 1] = at->units;
    return set_out(c, 0, o, x->ndim, x->dtype);
  }
  case OP_MATMUL: return infer_matmul(c);
  case OP_BATCHNORM:
    if (need_rank(c, x, 2, GS_MAX_DIMS, "at least [N, C]")) return -1;
    return set_out(c, 0, x->dim, x->ndim, x->dtype);
  case OP_GLU: {
    int ax = norm_axis(at->axis, x->ndim);
    if (ax < 0) return op_error(c, "axis %d out of range for %s", at->axis, sh(b, x));
    if (x->dim[ax] % 2)
      return op_error(c, "axis %d of %s has odd size %lld; glu halves it", ax, sh(b, x),
                      (long long)x->dim[ax]);
    int64_t o[GS_MAX_DIMS];
    memcpy(o, x->dim, sizeof o);
    o[ax] /= 2;
    return set_out(c, 0, o, x->ndim, x->dtype);
  }
  case OP_SOFTMAX:
    if (norm_axis(at->axis, x->ndim) < 0)
      return op_error(c, "axis %d out of range for %s", at->axis, sh(b, x));
    return set_out(c, 0, x->dim, x->ndim, x->dtype);
  case OP_LAYERNORM:
  case OP_RELU:
  case OP_RELU6:
  case OP_GELU:
  case OP_SIGMOID:
  case OP_SWISH:
  case OP_HSIGMOID:
  case OP_HSWISH:
  case OP_TANH: return set_out(c, 0, x->dim, x->ndim, x->dtype);
  case OP_ADD:
  case OP_SUB:
  case OP_MUL:
  case OP_DIV: return infer_broadcast(c);
  case OP_MAXPOOL:
  case OP_AVGPOOL: return infer_pool(c, at);
  case OP_RESIZE: {
    if (need_rank(c, x, 4, 4, "[N, C, H, W]")) return -1;
    int64_t o[4] = {x->dim[0], x->dim[1], at->size[0], at->size[1]};
    return set_out(c, 0, o, 4, x->dtype);
  }
  case OP_PAD: return infer_pad(c, x, at);
  case OP_GAVGPOOL: {
    if (need_rank(c, x, 3, GS_MAX_DIMS, "at least [N, C, L]")) return -1;
    int64_t o[GS_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++) o[i] = i < 2 ? x->dim[i] : 1;
    return set_out(c, 0, o, x->ndim, x->dtype);
  }
  case OP_CONCAT: return infer_concat(c, op);
  case OP_SPLIT: return infer_split(c, op);
  case OP_RESHAPE: return infer_reshape(c, op);
  case OP_TRANSPOSE: return infer_transpose(c, op);
  case OP_EMBEDDING: return infer_embedding(c, at);
  case OP_INTERACTION: return infer_interaction(c, at);
  case OP_COUNT: break;
  }
  die("bad op kind %d", (int)op->kind);
}

/* Checks the op's cost fields and adds them to the running totals; errors when they could
 * overflow a report's sums. */
static int check_cost(Ctx *c, GsOpCost *tot) {
  GsOpCost k = graph_op_cost(c->g, c->op);
  int64_t f[] = {k.macs, k.flops, k.params, k.param_bytes, k.in_bytes, k.out_bytes};
  int64_t *t[] = {&tot->macs, &tot->flops, &tot->params, &tot->param_bytes, &tot->in_bytes,
                  &tot->out_bytes};
  for (int i = 0; i < 6; i++) {
    if (f[i] >= GS_COST_LIMIT || *t[i] + f[i] >= GS_COST_LIMIT)
      return op_error(c, "too large to account for (a count reaches 2^60)");
    *t[i] += f[i];
  }
  return 0;
}

int graph_batch_fixed(const GsGraph *g) {
  for (int i = 0; i < g->ninputs; i++) {
    const GsTensor *x = &g->tensors[g->inputs[i]];
    for (int k = 0; k < x->ndim; k++)
      if (x->decl[k] == GS_DIM_N) return 0;
  }
  return 1;
}

/* requires: ops in topological order (graph_check); maintains: names, ids and attributes
 * (only g->batch and the tensors' dim/dtype change, so it can be called again to re-bind). */
int graph_infer(GsGraph *g, int64_t batch, GsDiag *d) {
  const char *file = g->file ? g->file : "<graph>";
  if (batch < 1 || batch > GS_MAX_DIM) {
    diag_error(d, file, 0, 0, NULL, "batch must be >= 1, not %lld", (long long)batch);
    return -1;
  }
  if (g->default_batch > 0 && batch != g->default_batch && graph_batch_fixed(g)) {
    diag_error(d, file, 0, 0, NULL,
               "model '%s' has a fixed batch of %lld (no input has a symbolic batch dimension "
               "N), so it cannot run at batch %lld; export it with a symbolic first dimension "
               "(torch.onnx.export's dynamic_axes), or run it at batch %lld",
               g->name ? g->name : file, (long long)g->default_batch, (long long)batch,
               (long long)g->default_batch);
    return -1;
  }
  g->batch = batch;
  for (int i = 0; i < g->ninputs; i++) {
    GsTensor *x = &g->tensors[g->inputs[i]];
    for (int k = 0; k < x->ndim; k++) x->dim[k] = x->decl[k] == GS_DIM_N ? batch : x->decl[k];
    char b[SHAPE_BUF];
    if (elems(x->dim, x->ndim) < 0) {
      diag_error(d, file, x->line, x->col, g->src,
                 "input '%s' of shape %s has more than 2^40 elements", x->name,
                 graph_shape_str(b, sizeof b, x->dim, x->ndim));
      return -1;
    }
  }
  GsOpCost tot = {0};
  for (int o = 0; o < g->nops; o++) {
    Ctx c = {g, d, o};
    if (infer_op(&c) || check_cost(&c, &tot)) return -1;
  }
  return 0;
}
