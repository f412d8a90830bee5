/* onnx_fold.c — constant folding of shape-only subgraphs at import.
 *
 * Exporters compute Reshape/Expand targets from the activations' shapes at run time:
 * Shape -> Gather -> Unsqueeze -> Concat -> Reshape, with Slice, Cast, arithmetic, Equal/Where
 * and ConstantOfShape mixed in. This file evaluates such nodes when every input is a constant
 * with known values (small tensors, OX_MAX_CONST_DATA elements at most). Elements are OxSym
 * values v * N^n: Shape of an activation with a symbolic batch yields N for that dim, and the
 * arithmetic keeps N as a symbol (N * 12 is fine, N + 1 is not representable and is an error).
 *
 * Invariant: a folded node defines every one of its outputs as a VAL_CONST with data; a node
 * that cannot be folded (an activation input, an unknown op, weights without data) is left
 * to the op mappers untouched.
 */
#include <math.h>
#include <string.h>

#include "onnx_imp.h"

static int is_op(const Onnx__NodeProto *n, const char *op) { return strcmp(n->op_type, op) == 0; }

static const char *const fold_ops[] = {
    "Constant", "Shape", "Gather", "Unsqueeze", "Squeeze", "Concat", "Slice", "Cast",
    "Add", "Sub", "Mul", "Div", "Equal", "Where", "ConstantOfShape", "Identity", "Reshape",
    "Sqrt", "Neg", "Expand", "Range", "Floor", "Ceil", "Mod", "Transpose", "Pow", "ScatterND", "Not",
};

static OxSym sym_c(double v) { return (OxSym){v, 0}; }

static OxSym sym_arith(OxCtx *c, char op, OxSym a, OxSym b, int is_int) {
  switch (op) {
  case '+':
  case '-': {
    double bv = op == '-' ? -b.v : b.v;
    if (a.n == b.n) return (OxSym){a.v + bv, a.n};
    if (!b.n && b.v == 0) return a;
    if (!a.n && a.v == 0) return (OxSym){bv, b.n};
    ox_fail(c, "cannot fold a sum of the symbolic batch N and a number");
  }
  case '*':
    if ((!a.n && a.v == 0) || (!b.n && b.v == 0)) return sym_c(0);
    if (a.n + b.n > 1) ox_fail(c, "cannot fold N * N");
    return (OxSym){a.v * b.v, a.n + b.n};
  case '/': {
    if (b.v == 0) ox_fail(c, "division by zero while folding constants");
    if (b.n && !a.n) ox_fail(c, "cannot fold a number divided by N");
    double q = a.v / b.v;
    if (is_int) q = trunc(q);
    if (is_int && a.n && !b.n && fmod(a.v, b.v) != 0)
      ox_fail(c, "cannot fold an inexact division of N");
    return (OxSym){q, a.n - b.n};
  }
  default: {
    /* '=': equality; N is a positive batch size, so N*k == v is false when the signs differ */
    if (a.n == b.n) return sym_c(a.v == b.v);
    OxSym s = a.n ? a : b, k = a.n ? b : a;
    if ((s.v > 0 && k.v <= 0) || (s.v < 0 && k.v >= 0)) return sym_c(0);
    ox_fail(c, "cannot decide whether the symbolic batch N equals %g", k.v);
  }
  }
}


/* Numpy broadcast of nin shapes; returns the rank. */
static int bcast(OxCtx *c, OxVal *const *in, int nin, int64_t *out) {
  int nd = 0;
  for (int i = 0; i < nin; i++) nd = in[i]->ndim > nd ? in[i]->ndim : nd;
  for (int k = 0; k < nd; k++) {
    out[k] = 1;
    for (int i = 0; i < nin; i++) {
      int j = k - (nd - in[i]->ndim);
      if (j < 0) continue;
      int64_t d = in[i]->dims[j];
      if (d != 1 && out[k] != 1 && d != out[k]) ox_fail(c, "constant shapes do not broadcast");
      if (d != 1) out[k] = d;
    }
  }
  return nd;
}

/* Index into input v of output element `lin` under broadcasting to dims[nd]. */
static int64_t bcast_index(const OxVal *v, const int64_t *dims, int nd, int64_t lin) {
  int64_t idx = 0, stride = 1;
  for (int k = nd - 1; k >= 0; k--) {
    int64_t coord = lin % dims[k];
    lin /= dims[k];
    int j = k - (nd - v->ndim);
    if (j >= 0) {
      if (v->dims[j] != 1) idx += coord * stride;
      stride *= v->dims[j];
    }
  }
  return idx;
}

static OxVal *out_const(OxCtx *c, const Onnx__NodeProto *n, int nd, const int64_t *dims,
                        int is_int) {
  return ox_new_const(c, n->output[0], nd, dims, is_int);
}

/* Mod: with fmod=0 (integers) the result takes the divisor's sign, as Python's %; with fmod=1
 * the dividend's, as C's fmod. Swin's window padding computes (w - W % w) % w this way. */
static OxSym sym_mod(OxCtx *c, const Onnx__NodeProto *n, OxSym a, OxSym b) {
  if (a.n || b.n) ox_fail(c, "cannot fold a Mod of the symbolic batch N");
  if (b.v == 0) ox_fail(c, "Mod by zero");
  double r = fmod(a.v, b.v);
  if (!ox_attr_i(n, "fmod", 0) && r != 0 && (r < 0) != (b.v < 0)) r += b.v;
  return sym_c(r);
}

static void fold_elementwise(OxCtx *c, const Onnx__NodeProto *n, OxVal *const *in, int nin) {
  int64_t dims[GS_MAX_DIMS];
  int nd = bcast(c, in, nin, dims);
  int is_int = in[nin - 1]->is_int;
  if (is_op(n, "Where")) is_int = in[1]->is_int;
  if (is_op(n, "Equal") || is_op(n, "Not")) is_int = 1;
  OxVal *o = out_const(c, n, nd, dims, is_int);
  for (int64_t e = 0; e < o->nelem; e++) {
    OxSym a = in[0]->data[bcast_index(in[0], dims, nd, e)];
    OxSym b = nin > 1 ? in[1]->data[bcast_index(in[1], dims, nd, e)] : a;
    OxSym r;
    if (is_op(n, "Add")) r = sym_arith(c, '+', a, b, is_int);
    else if (is_op(n, "Sub")) r = sym_arith(c, '-', a, b, is_int);
    else if (is_op(n, "Mul")) r = sym_arith(c, '*', a, b, is_int);
    else if (is_op(n, "Div")) r = sym_arith(c, '/', a, b, is_int);
    else if (is_op(n, "Equal")) r = sym_arith(c, '=', a, b, is_int);
    else if (is_op(n, "Where")) {
      int64_t cond = ox_sym_int(c, a, "Where condition");
      r = cond ? b : in[2]->data[bcast_index(in[2], dims, nd, e)];
    } else if (is_op(n, "Neg")) r = (OxSym){-a.v, a.n};
    else if (is_op(n, "Sqrt")) {
      if (a.n) ox_fail(c, "cannot fold the square root of the symbolic batch N");
      r = sym_c(sqrt(a.v));
    }
    else if (is_op(n, "Mod")) r = sym_mod(c, n, a, b);
    else if (is_op(n, "Not")) r = sym_c(ox_sym_int(c, a, "Not operand") == 0);
    else if (is_op(n, "Pow")) {
      if (a.n || b.n) ox_fail(c, "cannot fold a power of the symbolic batch N");
      r = sym_c(pow(a.v, b.v));
    }
    else if (is_op(n, "Floor")) r = a.n ? a : sym_c(floor(a.v));
    else if (is_op(n, "Ceil")) r = a.n ? a : sym_c(ceil(a.v));
    else r = a; /* Identity */
    o->data[e] = r;
  }
}

static int64_t elem_int(OxCtx *c, const OxVal *v, int64_t i, const char *what) {
  return ox_sym_int(c, v->data[i], what);
}

static int norm_axis(OxCtx *c, int64_t a, int rank) {
  if (a < -rank || a >= rank) ox_fail(c, "axis %lld out of range for rank %d", (long long)a, rank);
  return (int)(a < 0 ? a + rank : a);
}

static void fold_gather(OxCtx *c, const Onnx__NodeProto *n, OxVal *data, OxVal *idx) {
  if (data->ndim < 1) ox_fail(c, "Gather of a scalar");
  int axis = norm_axis(c, ox_attr_i(n, "axis", 0), data->ndim);
  int64_t dims[GS_MAX_DIMS];
  int nd = 0;
  if (data->ndim - 1 + idx->ndim > GS_MAX_DIMS) ox_fail(c, "result rank too large");
  for (int i = 0; i < axis; i++) dims[nd++] = data->dims[i];
  for (int i = 0; i < idx->ndim; i++) dims[nd++] = idx->dims[i];
  for (int i = axis + 1; i < data->ndim; i++) dims[nd++] = data->dims[i];
  OxVal *o = out_const(c, n, nd, dims, data->is_int);
  int64_t outer = ox_elems(c, data->dims, axis, "data"),
          inner = ox_elems(c, data->dims + axis + 1, data->ndim - axis - 1, "data");
  int64_t len = data->dims[axis], e = 0;
  for (int64_t a = 0; a < outer; a++)
    for (int64_t k = 0; k < idx->nelem; k++) {
      int64_t j = elem_int(c, idx, k, "Gather index");
      if (j < 0) j += len;
      if (j < 0 || j >= len) ox_fail(c, "Gather index %lld out of range", (long long)j);
      for (int64_t b = 0; b < inner; b++) o->data[e++] = data->data[(a * len + j) * inner + b];
    }
}

static void fold_concat(OxCtx *c, const Onnx__NodeProto *n, OxVal *const *in, int nin) {
  int r = in[0]->ndim;
  int axis = norm_axis(c, ox_attr_i(n, "axis", 0), r);
  int64_t dims[GS_MAX_DIMS];
  memcpy(dims, in[0]->dims, sizeof dims);
  dims[axis] = 0;
  for (int i = 0; i < nin; i++) {
    if (in[i]->ndim != r) ox_fail(c, "Concat of constants of different ranks");
    for (int k = 0; k < r; k++)
      if (k != axis && in[i]->dims[k] != dims[k]) ox_fail(c, "Concat of mismatched constants");
    dims[axis] += in[i]->dims[axis];
  }
  int is_int = in[0]->is_int;
  OxVal *o = out_const(c, n, r, dims, is_int);
  int64_t outer = ox_elems(c, dims, axis, "Concat"), e = 0;
  int64_t inner = ox_elems(c, dims + axis + 1, r - axis - 1, "Concat");
  for (int64_t a = 0; a < outer; a++)
    for (int i = 0; i < nin; i++) {
      int64_t blk = in[i]->dims[axis] * inner;
      for (int64_t b = 0; b < blk; b++) o->data[e++] = in[i]->data[a * blk + b];
    }
}

static int ints_input_or_attr(OxCtx *c, const Onnx__NodeProto *n, size_t slot, const char *attr,
                              int64_t *out) {
  if (c->opset < 13 || (slot == 1 && is_op(n, "Slice") && c->opset < 10))
    return ox_attr_ints(c, n, attr, out, GS_MAX_DIMS);
  if (slot >= n->n_input || !n->input[slot][0]) return -1;
  OxVal *v = ox_val(c, n->input[slot]);
  if (v->nelem > GS_MAX_DIMS) ox_fail(c, "too many %s", attr);
  for (int64_t i = 0; i < v->nelem; i++) out[i] = elem_int(c, v, i, attr);
  return (int)v->nelem;
}

static void fold_squeeze(OxCtx *c, const Onnx__NodeProto *n, OxVal *x, int unsq) {
  int64_t axes[GS_MAX_DIMS], dims[GS_MAX_DIMS];
  int na = ints_input_or_attr(c, n, 1, "axes", axes);
  int nd = unsq ? x->ndim + (na > 0 ? na : 0) : x->ndim, k = 0;
  int mark[2 * GS_MAX_DIMS] = {0};
  if (nd > GS_MAX_DIMS) ox_fail(c, "result rank too large");
  for (int i = 0; i < na; i++) mark[norm_axis(c, axes[i], nd)] = 1;
  if (unsq) {
    for (int i = 0, j = 0; i < nd; i++) dims[k++] = mark[i] ? 1 : x->dims[j++];
  } else {
    for (int i = 0; i < x->ndim; i++) {
      int drop = na < 0 ? x->dims[i] == 1 : mark[i];
      if (drop && x->dims[i] != 1) ox_fail(c, "Squeeze of an axis that is not 1");
      if (!drop) dims[k++] = x->dims[i];
    }
  }
  OxVal *o = out_const(c, n, k, dims, x->is_int);
  memcpy(o->data, x->data, (size_t)x->nelem * sizeof *o->data);
}

static void fold_slice(OxCtx *c, const Onnx__NodeProto *n, OxVal *x) {
  int64_t starts[GS_MAX_DIMS], ends[GS_MAX_DIMS], axes[GS_MAX_DIMS], steps[GS_MAX_DIMS];
  int ns, ne, na, nst = -1;
  if (c->opset < 10) {
    ns = ox_attr_ints(c, n, "starts", starts, GS_MAX_DIMS);
    ne = ox_attr_ints(c, n, "ends", ends, GS_MAX_DIMS);
    na = ox_attr_ints(c, n, "axes", axes, GS_MAX_DIMS);
  } else {
    ns = ne = na = -1;
    OxVal *v[4] = {0};
    for (size_t s = 1; s < 5 && s < n->n_input; s++)
      if (n->input[s][0]) v[s - 1] = ox_val(c, n->input[s]);
    int64_t *dst[4] = {starts, ends, axes, steps};
    int *cnt[4] = {&ns, &ne, &na, &nst};
    for (int s = 0; s < 4; s++) {
      if (!v[s]) continue;
      if (v[s]->nelem > GS_MAX_DIMS) ox_fail(c, "too many Slice entries");
      *cnt[s] = (int)v[s]->nelem;
      for (int64_t i = 0; i < v[s]->nelem; i++) dst[s][i] = elem_int(c, v[s], i, "Slice bound");
    }
  }
  if (ns < 0 || ne != ns || (na >= 0 && na != ns) || (nst >= 0 && nst != ns))
    ox_fail(c, "Slice needs starts and ends of the same length");
  int64_t b[GS_MAX_DIMS], st[GS_MAX_DIMS], dims[GS_MAX_DIMS];
  for (int k = 0; k < x->ndim; k++) {
    b[k] = 0;
    st[k] = 1;
    dims[k] = x->dims[k];
  }
  for (int i = 0; i < ns; i++) {
    int a = norm_axis(c, na >= 0 ? axes[i] : i, x->ndim);
    int64_t len = x->dims[a], s = nst >= 0 ? steps[i] : 1, lo = starts[i], hi = ends[i];
    if (s == 0 || s > ((int64_t)1 << 40) || s < -((int64_t)1 << 40))
      ox_fail(c, "Slice step %lld", (long long)s);
    if (lo < 0) lo += len;
    if (hi < 0 && hi > INT64_MIN) hi += len;
    if (s > 0) {
      lo = lo < 0 ? 0 : lo > len ? len : lo;
      hi = hi < 0 ? 0 : hi > len ? len : hi;
      dims[a] = hi > lo ? (hi - lo + s - 1) / s : 0;
    } else {
      lo = lo < 0 ? -1 : lo > len - 1 ? len - 1 : lo;
      hi = hi < -1 ? -1 : hi > len - 1 ? len - 1 : hi;
      dims[a] = lo > hi ? (lo - hi - s - 1) / -s : 0;
    }
    b[a] = lo;
    st[a] = s;
  }
  OxVal *o = out_const(c, n, x->ndim, dims, x->is_int);
  for (int64_t e = 0; e < o->nelem; e++) {
    int64_t lin = e, src = 0, stride = 1;
    for (int k = x->ndim - 1; k >= 0; k--) {
      int64_t coord = lin % dims[k];
      lin /= dims[k];
      src += (b[k] + coord * st[k]) * stride;
      stride *= x->dims[k];
    }
    o->data[e] = x->data[src];
  }
}

/* ScatterND of constants (Swin's shifted-window mask: slice assignments into zeros): a copy of
 * data with, for every index tuple (the last axis of indices, k long), the slice of data it
 * names replaced by the matching slice of updates. */
static void fold_scatter_nd(OxCtx *c, const Onnx__NodeProto *n, OxVal *const *in) {
  const OxVal *d = in[0], *ix = in[1], *up = in[2];
  char buf[16];
  if (strcmp(ox_attr_s(n, "reduction", "none", buf, sizeof buf), "none") != 0)
    ox_fail(c, "ScatterND with a reduction is not supported");
  int k = ix->ndim > 0 ? (int)ix->dims[ix->ndim - 1] : 0;
  if (ix->ndim < 1 || k < 1 || k > d->ndim) ox_fail(c, "bad ScatterND indices");
  int64_t slice = 1, nidx = ix->nelem / k;
  for (int i = k; i < d->ndim; i++) slice *= d->dims[i];
  if (up->nelem != nidx * slice) ox_fail(c, "ScatterND updates do not match the indices");
  OxVal *o = out_const(c, n, d->ndim, d->dims, d->is_int);
  for (int64_t e = 0; e < o->nelem; e++) o->data[e] = d->data[e];
  for (int64_t t = 0; t < nidx; t++) {
    int64_t at = 0;
    for (int j = 0; j < k; j++) {
      int64_t v = elem_int(c, ix, t * k + j, "ScatterND index");
      if (v < 0) v += d->dims[j];
      if (v < 0 || v >= d->dims[j]) ox_fail(c, "ScatterND index out of range");
      at = at * d->dims[j] + v;
    }
    for (int64_t e = 0; e < slice; e++) o->data[at * slice + e] = up->data[t * slice + e];
  }
}

/* Transpose of a constant (Swin's F.pad builds its pads vector through one). */
static void fold_transpose(OxCtx *c, const Onnx__NodeProto *n, OxVal *x) {
  int64_t perm[GS_MAX_DIMS], dims[GS_MAX_DIMS], stride[GS_MAX_DIMS];
  int r = x->ndim, np = ox_attr_ints(c, n, "perm", perm, GS_MAX_DIMS);
  if (np < 0)
    for (int i = 0; i < r; i++) perm[i] = r - 1 - i;
  else if (np != r)
    ox_fail(c, "perm has %d entries for a rank-%d tensor", np, r);
  int seen = 0;
  for (int i = 0; i < r; i++) {
    if (perm[i] < 0 || perm[i] >= r || (seen >> perm[i] & 1)) ox_fail(c, "bad perm");
    seen |= 1 << perm[i];
  }
  for (int i = r - 1, s = 1; i >= 0; i--) {
    stride[i] = s;
    s *= (int)x->dims[i];
  }
  for (int i = 0; i < r; i++) dims[i] = x->dims[perm[i]];
  OxVal *o = out_const(c, n, r, dims, x->is_int);
  for (int64_t e = 0; e < o->nelem; e++) {
    int64_t rem = e, src = 0;
    for (int i = r - 1; i >= 0; i--) {
      src += rem % dims[i] * stride[perm[i]];
      rem /= dims[i];
    }
    o->data[e] = x->data[src];
  }
}

static void fold_reshape(OxCtx *c, const Onnx__NodeProto *n, OxVal *x, OxVal *shape) {
  int64_t dims[GS_MAX_DIMS], known = 1;
  int nd = (int)shape->nelem, infer = -1;
  if (shape->ndim != 1 || nd > GS_MAX_DIMS) ox_fail(c, "bad Reshape target");
  for (int i = 0; i < nd; i++) {
    dims[i] = elem_int(c, shape, i, "Reshape target");
    if (dims[i] == 0 && !ox_attr_i(n, "allowzero", 0)) {
      if (i >= x->ndim) ox_fail(c, "Reshape target copies a missing dim");
      dims[i] = x->dims[i];
    }
    if (dims[i] == -1) {
      if (infer >= 0) ox_fail(c, "two -1 entries in a Reshape target");
      infer = i;
    } else if (dims[i] < 0) {
      ox_fail(c, "negative Reshape target");
    } else {
      known *= dims[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || x->nelem % known) ox_fail(c, "cannot infer the -1 of a Reshape target");
    dims[infer] = x->nelem / known;
  } else if (known != x->nelem) {
    ox_fail(c, "Reshape target does not hold the constant's elements");
  }
  OxVal *o = out_const(c, n, nd, dims, x->is_int);
  memcpy(o->data, x->data, (size_t)x->nelem * sizeof *o->data);
}

static void fold_shape(OxCtx *c, const Onnx__NodeProto *n, OxVal *x) {
  OxSym d[GS_MAX_DIMS];
  int r;
  if (x->kind == VAL_ACT) {
    r = ox_act_shape(c, x->tensor, d);
  } else {
    r = x->ndim;
    for (int i = 0; i < r; i++) d[i] = sym_c((double)x->dims[i]);
  }
  int64_t lo = ox_attr_i(n, "start", 0), hi = ox_attr_i(n, "end", r);
  if (lo < 0) lo += r;
  if (hi < 0) hi += r;
  lo = lo < 0 ? 0 : lo > r ? r : lo;
  hi = hi < lo ? lo : hi > r ? r : hi;
  int64_t len = hi - lo;
  OxVal *o = out_const(c, n, 1, &len, 1);
  for (int64_t i = 0; i < len; i++) o->data[i] = d[lo + i];
}

static void fold_constant(OxCtx *c, const Onnx__NodeProto *n) {
  const Onnx__AttributeProto *a;
  if ((a = ox_attr(n, "value")) && a->t) {
    OxVal v;
    ox_decode_tensor(c, a->t, n->output[0], &v);
    if (!v.data) ox_fail(c, "Constant tensor is too large or has no data");
    ox_bind_const(c, n->output[0], &v);
  } else if ((a = ox_attr(n, "value_float")) && a->has_f) {
    out_const(c, n, 0, NULL, 0)->data[0] = sym_c(a->f);
  } else if ((a = ox_attr(n, "value_int")) && a->has_i) {
    out_const(c, n, 0, NULL, 1)->data[0] = sym_c((double)a->i);
  } else if ((a = ox_attr(n, "value_floats"))) {
    int64_t len = (int64_t)a->n_floats;
    OxVal *o = out_const(c, n, 1, &len, 0);
    for (int64_t i = 0; i < len; i++) o->data[i] = sym_c(a->floats[i]);
  } else if ((a = ox_attr(n, "value_ints"))) {
    int64_t len = (int64_t)a->n_ints;
    OxVal *o = out_const(c, n, 1, &len, 1);
    for (int64_t i = 0; i < len; i++) o->data[i] = sym_c((double)a->ints[i]);
  } else {
    ox_fail(c, "Constant without a supported value attribute");
  }
}

static void fold_constant_of_shape(OxCtx *c, const Onnx__NodeProto *n, OxVal *shape) {
  int64_t dims[GS_MAX_DIMS];
  if (shape->nelem > GS_MAX_DIMS) ox_fail(c, "ConstantOfShape rank too large");
  for (int64_t i = 0; i < shape->nelem; i++) dims[i] = elem_int(c, shape, i, "ConstantOfShape");
  OxSym fill = sym_c(0);
  int is_int = 0;
  const Onnx__AttributeProto *a = ox_attr(n, "value");
  if (a && a->t) {
    OxVal v;
    ox_decode_tensor(c, a->t, n->output[0], &v);
    if (!v.data || v.nelem != 1) ox_fail(c, "ConstantOfShape value must have one element");
    fill = v.data[0];
    is_int = v.is_int;
  }
  OxVal *o = out_const(c, n, (int)shape->nelem, dims, is_int);
  for (int64_t i = 0; i < o->nelem; i++) o->data[i] = fill;
}

static void fold_expand(OxCtx *c, const Onnx__NodeProto *n, OxVal *x, OxVal *shape) {
  OxVal tmp = {0};
  tmp.ndim = (int)shape->nelem;
  if (tmp.ndim > GS_MAX_DIMS) ox_fail(c, "Expand rank too large");
  for (int i = 0; i < tmp.ndim; i++) tmp.dims[i] = elem_int(c, shape, i, "Expand shape");
  OxVal *in[2] = {x, &tmp};
  int64_t dims[GS_MAX_DIMS];
  int nd = bcast(c, in, 2, dims);
  OxVal *o = out_const(c, n, nd, dims, x->is_int);
  for (int64_t e = 0; e < o->nelem; e++) o->data[e] = x->data[bcast_index(x, dims, nd, e)];
}

static void fold_range(OxCtx *c, const Onnx__NodeProto *n, OxVal *const *in) {
  for (int i = 0; i < 3; i++)
    if (in[i]->nelem != 1) ox_fail(c, "Range takes three scalars");
  double s = (double)ox_sym_int(c, in[0]->data[0], "Range start");
  double l = (double)ox_sym_int(c, in[1]->data[0], "Range limit");
  double d = (double)ox_sym_int(c, in[2]->data[0], "Range delta");
  if (d == 0) ox_fail(c, "Range delta 0");
  double count = fmax(ceil((l - s) / d), 0);
  if (count > OX_MAX_FOLD_DATA) ox_fail(c, "Range of %g elements, too many to fold", count);
  int64_t len = (int64_t)count;
  OxVal *o = out_const(c, n, 1, &len, in[0]->is_int);
  for (int64_t i = 0; i < len; i++) o->data[i] = sym_c(s + (double)i * d);
}

int ox_fold(OxCtx *c, const Onnx__NodeProto *n) {
  size_t k = 0, nf = sizeof fold_ops / sizeof fold_ops[0];
  while (k < nf && !is_op(n, fold_ops[k])) k++;
  if (k == nf) return 0;
  if (is_op(n, "Constant")) {
    fold_constant(c, n);
    return 1;
  }
  if (n->n_input < 1 || !n->input[0][0]) return 0;
  if (is_op(n, "Shape")) {
    fold_shape(c, n, ox_val(c, n->input[0]));
    return 1;
  }
  OxVal **in = arena_alloc(c->scratch, (n->n_input + 1) * sizeof *in);
  int nin = 0;
  for (size_t i = 0; i < n->n_input; i++) {
    if (!n->input[i][0]) {
      if (i == 0 || !is_op(n, "Slice")) return 0;
      continue;
    }
    OxVal *v = ox_val(c, n->input[i]);
    if (v->kind != VAL_CONST || !v->data) return 0;
    in[nin++] = v;
  }
  if (n->n_output != 1) return 0;
  /* inputs each op needs (Slice reads its optional inputs by slot, see fold_slice) */
  int want = is_op(n, "Where") || is_op(n, "Range") || is_op(n, "ScatterND") ? 3
             : is_op(n, "Add") || is_op(n, "Sub") || is_op(n, "Mul") || is_op(n, "Div") ||
                       is_op(n, "Equal") || is_op(n, "Gather") || is_op(n, "Reshape") ||
                       is_op(n, "Expand") || is_op(n, "Mod") || is_op(n, "Pow")
                 ? 2
                 : 1;
  if (nin < want) ox_fail(c, "expected %d inputs, got %d", want, nin);
  if (is_op(n, "Expand") || is_op(n, "Reshape")) /* batch-sized: not constants */
    for (int64_t i = 0; i < in[1]->nelem; i++)
      if (in[1]->data[i].n) return 0;
  if (is_op(n, "Gather")) fold_gather(c, n, in[0], in[1]);
  else if (is_op(n, "Unsqueeze")) fold_squeeze(c, n, in[0], 1);
  else if (is_op(n, "Squeeze")) fold_squeeze(c, n, in[0], 0);
  else if (is_op(n, "Concat")) fold_concat(c, n, in, nin);
  else if (is_op(n, "Slice")) fold_slice(c, n, in[0]);
  else if (is_op(n, "Reshape")) fold_reshape(c, n, in[0], in[1]);
  else if (is_op(n, "ConstantOfShape")) fold_constant_of_shape(c, n, in[0]);
  else if (is_op(n, "Expand")) fold_expand(c, n, in[0], in[1]);
  else if (is_op(n, "Range")) fold_range(c, n, in);
  else if (is_op(n, "Transpose")) fold_transpose(c, n, in[0]);
  else if (is_op(n, "ScatterND")) fold_scatter_nd(c, n, in);
  else if (is_op(n, "Cast")) {
    int64_t to = ox_attr_i(n, "to", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT);
    int to_int = to != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT &&
                 to != ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE &&
                 to != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16 &&
                 to != ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16;
    OxVal *o = out_const(c, n, in[0]->ndim, in[0]->dims, to_int);
    for (int64_t i = 0; i < o->nelem; i++) {
      OxSym s = in[0]->data[i];
      o->data[i] = to_int ? (OxSym){trunc(s.v), s.n} : s;
    }
  } else {
    fold_elementwise(c, n, in, want);
  }
  return 1;
}
