/* onnx_map.c — one mapping function per ONNX op, from a node of the model to ops of the IR
 * (the table at the end; docs/onnx.md describes each mapping and its conditions).
 *
 * A mapper reads its inputs as OxVals (activation or constant), checks what the IR cannot
 * express or what the model gets wrong (channels, feature sizes, split sizes), emits IR ops
 * whose outputs take the node's output names, and binds those names. Helpers here: emit_*
 * (build ops), in_* (read operands), const_act (a constant used as a tensor becomes a graph
 * input, once per constant), fold_bias (MatMul/Conv + Add -> bias=1).
 *
 * Invariant: after a mapper returns, every output of its node that anybody reads is bound;
 * a mapper that cannot map its node calls ox_fail() and binds nothing.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_imp.h"

static int64_t act_dim(OxCtx *c, int t, int axis, const char *what) {
  OxSym d[GS_MAX_DIMS];
  int nd = ox_act_shape(c, t, d);
  if (axis < 0) axis += nd;
  if (axis < 0 || axis >= nd) ox_fail(c, "%s: axis out of range for rank %d", what, nd);
  return ox_sym_int(c, d[axis], what);
}

static int norm_axis(OxCtx *c, int64_t axis, int rank, const char *what) {
  if (axis < -rank || axis >= rank)
    ox_fail(c, "%s %lld is out of range for rank %d", what, (long long)axis, rank);
  return (int)(axis < 0 ? axis + rank : axis);
}

static int to_int(OxCtx *c, int64_t v, const char *what) {
  if (v < INT_MIN || v > INT_MAX) ox_fail(c, "%s %lld is out of range", what, (long long)v);
  return (int)v;
}

/* Encodes a symbolic shape as an IR reshape target: N -> GS_DIM_N, k*N (k != 1) -> -2. */
static void encode_shape(OxCtx *c, const OxSym *d, int nd, GsAttrs *at) {
  int infer = 0;
  if (nd > GS_MAX_DIMS) ox_fail(c, "result has rank %d (at most %d)", nd, (int)GS_MAX_DIMS);
  at->nshape = nd;
  for (int i = 0; i < nd; i++) {
    if (d[i].n && d[i].v == 1.0) {
      at->shape[i] = GS_DIM_N;
    } else if (d[i].n) {
      if (infer++) ox_fail(c, "result shape has two batch-dependent dimensions");
      at->shape[i] = -2;
    } else {
      at->shape[i] = ox_clamp_i64(d[i].v);
    }
  }
}

/* ---------------------------------------------------------------- emitting ops */

static void require_unused_extra_outputs(OxCtx *c, const Onnx__NodeProto *n);

static int emit_op(OxCtx *c, const Onnx__NodeProto *n, GsOpKind k, const int *in, int nin,
                   const GsAttrs *at, const char *const *names, int nout) {
  const char *gn[GS_MAX_OPERANDS];
  gs_assert(nout >= 1 && nout <= GS_MAX_OPERANDS);
  for (int i = 0; i < nout; i++) gn[i] = ox_gs_name(c, names[i]);
  int id = graph_add_op(c->g, k, in, nin, gn, nout, at);
  if (id < 0) die("graph_add_op rejected %s with %d operands", graph_opkind_name(k), nin);
  GsOp *op = &c->g->ops[id];
  const char *nm = n->name && *n->name ? n->name : names[0];
  op->name = arena_strdup(c->g->arena, nm);
  op->line = c->node + 1;
  op->col = 1;
  for (int i = 0; i < op->nout; i++) {
    c->g->tensors[op->out[i]].line = op->line;
    c->g->tensors[op->out[i]].col = 1;
  }
  return id;
}

/* Emits k over `in` with the node's outputs as results and binds them. */
static int emit(OxCtx *c, const Onnx__NodeProto *n, GsOpKind k, const int *in, int nin,
                const GsAttrs *at) {
  int nout = k == OP_SPLIT ? (int)n->n_output : 1;
  if (nout > GS_MAX_OPERANDS) ox_fail(c, "%d outputs (at most %d)", nout, (int)GS_MAX_OPERANDS);
  if (k != OP_SPLIT) require_unused_extra_outputs(c, n);
  int id = emit_op(c, n, k, in, nin, at, (const char *const *)n->output, nout);
  for (int i = 0; i < nout; i++) ox_bind_act(c, n->output[i], c->g->ops[id].out[i]);
  return id;
}

static int emit1(OxCtx *c, const Onnx__NodeProto *n, GsOpKind k, int x, const GsAttrs *at) {
  GsAttrs def;
  if (!at) {
    graph_attrs_default(&def);
    at = &def;
  }
  return emit(c, n, k, &x, 1, at);
}

/* A constant used where the IR needs a tensor becomes a graph input holding it (docs/onnx.md,
 * "Constant operands"); one input per constant however often it is used. */
static int const_act(OxCtx *c, OxVal *v) {
  if (v->input_tensor) return v->input_tensor - 1;
  const char *name = v->name;
  if (v->data && v->nelem == 1 && !v->data[0].n) {
    /* one input per scalar value and rank: "scalar_8", "scalar_m10000", "scalar_0.125_r4" */
    char key[80];
    int len = snprintf(key, sizeof key, "scalar_%.9g", v->data[0].v);
    for (int i = 0; i < len; i++)
      key[i] = key[i] == '-' ? 'm' : key[i] == '+' ? 'p' : key[i];
    if (v->ndim > 1) snprintf(key + len, sizeof key - (size_t)len, "_r%d", v->ndim);
    int t = ox_map_get(&c->scalars, key);
    if (t >= 0) {
      v->input_tensor = t + 1;
      return t;
    }
    name = arena_strdup(c->scratch, key);
  }
  int64_t decl[GS_MAX_DIMS];
  int nd = v->ndim;
  for (int i = 0; i < nd; i++) decl[i] = v->dims[i];
  if (nd == 0) {
    nd = 1;
    decl[0] = 1;
  }
  for (int i = 0; i < nd; i++)
    if (decl[i] < 1) ox_fail(c, "constant '%s' is empty", v->name);
  int t = graph_add_input(c->g, ox_gs_name(c, name), nd, decl, c->g->dtype);
  if (t < 0) die("graph_add_input rejected constant '%s'", v->name);
  c->g->tensors[t].line = c->node + 1;
  c->g->tensors[t].col = 1;
  v->input_tensor = t + 1;
  if (name != v->name) ox_map_put(c, &c->scalars, name, t);
  return t;
}

static OxVal *in_val(OxCtx *c, const Onnx__NodeProto *n, size_t i) {
  if (i >= n->n_input || !n->input[i][0]) return NULL;
  OxVal *v = ox_val(c, n->input[i]);
  gs_assert(v); /* checked for every input before mapping */
  return v;
}

static OxVal *need_val(OxCtx *c, const Onnx__NodeProto *n, size_t i, const char *what) {
  OxVal *v = in_val(c, n, i);
  if (!v) ox_fail(c, "missing input %zu (%s)", i, what);
  return v;
}

static int in_act(OxCtx *c, const Onnx__NodeProto *n, size_t i) {
  OxVal *v = need_val(c, n, i, "data");
  if (v->padded)
    ox_fail(c, "input '%s' comes from a Pad, which folds only into a Conv, MaxPool or "
               "AveragePool that reads it (docs/onnx.md)", v->name);
  return v->kind == VAL_ACT ? v->tensor : const_act(c, v);
}

/* Input i as in_act, and the padding of a Pad in front of it (zeros when none) for the
 * caller to add to its own, in ONNX order [b0, b1, e0, e1] of the sp spatial axes. */
static int in_act_padded(OxCtx *c, const Onnx__NodeProto *n, size_t i, int sp, int64_t *pads) {
  OxVal *v = need_val(c, n, i, "data");
  for (int k = 0; k < 2 * sp; k++) pads[k] = 0;
  if (!v->padded) return in_act(c, n, i);
  if (sp == 2) {
    pads[0] = v->pad[0], pads[1] = v->pad[1], pads[2] = v->pad[2], pads[3] = v->pad[3];
  } else {
    pads[0] = v->pad[1], pads[1] = v->pad[3];
  }
  return v->tensor;
}

/* Adds a folded Pad's padding to the op's own; auto_pad is computed from the unpadded input,
 * so the two together are refused. */
static void add_pads(OxCtx *c, const Onnx__NodeProto *n, int sp, const int64_t *extra,
                     int64_t *pads) {
  int any = 0;
  for (int k = 0; k < 2 * sp; k++) any |= extra[k] != 0;
  char apbuf[32];
  const char *ap = ox_attr_s(n, "auto_pad", "NOTSET", apbuf, sizeof apbuf);
  if (any && strcmp(ap, "NOTSET") != 0 && strcmp(ap, "") != 0)
    ox_fail(c, "a Pad in front of an op with auto_pad=%s cannot be folded", ap);
  for (int k = 0; k < 2 * sp; k++) pads[k] += extra[k];
}

static int is_const_scalar(const OxVal *v, double *out);

/* Pad's pads in ONNX order for every axis of a rank-r input (begins, then ends): from the
 * attribute (opset < 11) or the constant input, spread over `axes` (opset 18) when given; its
 * fill value in *value. */
static void pad_read(OxCtx *c, const Onnx__NodeProto *n, int r, int64_t *p, double *value) {
  int64_t q[2 * GS_MAX_DIMS];
  int np, ax[GS_MAX_DIMS], nax = r;
  *value = 0;
  for (int d = 0; d < r; d++) ax[d] = d;
  if (c->opset < 11) {
    np = ox_attr_ints(c, n, "pads", q, 2 * GS_MAX_DIMS);
    *value = ox_attr_f(n, "value", 0);
  } else {
    OxVal *pv = need_val(c, n, 1, "pads");
    if (pv->kind != VAL_CONST || !pv->data || pv->nelem > 2 * GS_MAX_DIMS)
      ox_fail(c, "Pad's pads must be a constant");
    np = (int)pv->nelem;
    for (int k = 0; k < np; k++) q[k] = ox_sym_int(c, pv->data[k], "pad");
    OxVal *cv = in_val(c, n, 2);
    if (cv && !is_const_scalar(cv, value)) ox_fail(c, "Pad's constant_value must be a constant");
    OxVal *av = in_val(c, n, 3);
    if (av) {
      if (av->kind != VAL_CONST || !av->data || av->nelem > r) ox_fail(c, "Pad's axes must be a constant");
      nax = (int)av->nelem;
      for (int k = 0; k < nax; k++) {
        int64_t a = ox_sym_int(c, av->data[k], "axis");
        if (a < -r || a >= r) ox_fail(c, "Pad axis %lld is out of range for rank %d", (long long)a, r);
        ax[k] = (int)(a < 0 ? a + r : a);
      }
    }
  }
  if (np != 2 * nax) ox_fail(c, "Pad has %d pads for %d axes", np, nax);
  for (int k = 0; k < 2 * r; k++) p[k] = 0;
  for (int k = 0; k < nax; k++) {
    p[ax[k]] = q[k];
    p[r + ax[k]] = q[nax + k];
  }
}

/* 1 when every reader of `name` is a Conv, MaxPool or AveragePool without auto_pad, so a
 * constant-zero spatial Pad before them folds into their padding, and `name` is no graph output. */
static int pad_folds(const OxCtx *c, const char *name) {
  for (size_t i = 0; i < c->gp->n_output; i++)
    if (!strcmp(c->gp->output[i]->name, name)) return 0;
  int readers = 0;
  for (size_t i = 0; i < c->gp->n_node; i++) {
    const Onnx__NodeProto *m = c->gp->node[i];
    for (size_t j = 0; j < m->n_input; j++) {
      if (strcmp(m->input[j], name) != 0) continue;
      char ap[32];
      const char *t = m->op_type;
      if (j != 0 || (strcmp(t, "Conv") && strcmp(t, "MaxPool") && strcmp(t, "AveragePool")))
        return 0;
      const char *a = ox_attr_s(m, "auto_pad", "NOTSET", ap, sizeof ap);
      if (strcmp(a, "NOTSET") != 0 && *a) return 0;
      readers++;
    }
  }
  return readers > 0;
}

/* Pad (docs/onnx.md): constant-zero padding of the spatial axes that only Convs and pools read
 * folds into their padding (the output value carries it: OxVal.pad); all-zero pads are an
 * identity; anything else — reflect, edge, a non-zero value, other axes, other readers — is
 * the IR's pad op (the fill value changes values, not cost: not kept). */
static void map_pad(OxCtx *c, const Onnx__NodeProto *n) {
  char mbuf[16];
  const char *mode = ox_attr_s(n, "mode", "constant", mbuf, sizeof mbuf);
  int m = !strcmp(mode, "constant") ? GS_PAD_CONSTANT : !strcmp(mode, "reflect") ? GS_PAD_REFLECT
          : !strcmp(mode, "edge") ? GS_PAD_EDGE : -1;
  if (m < 0) ox_fail(c, "Pad mode '%s' is not supported (constant, reflect and edge are)", mode);
  OxVal *x = need_val(c, n, 0, "data");
  if (x->kind != VAL_ACT) ox_fail(c, "Pad of a constant is not supported");
  OxSym xs[GS_MAX_DIMS];
  int r = ox_act_shape(c, x->tensor, xs);
  int64_t p[2 * GS_MAX_DIMS];
  double value;
  pad_read(c, n, r, p, &value);
  int any = 0;
  for (int k = 0; k < 2 * r; k++) {
    if (p[k] < 0) ox_fail(c, "negative pads (cropping) are not supported");
    any |= p[k] != 0;
  }
  if (!any) {
    ox_bind_act(c, n->output[0], x->tensor);
    return;
  }
  int spatial = (r == 3 || r == 4) && !p[0] && !p[1] && !p[r] && !p[r + 1];
  if (m == GS_PAD_CONSTANT && value == 0 && spatial && pad_folds(c, n->output[0])) {
    int64_t t = r == 4 ? p[2] : 0, l = p[r - 1], b = r == 4 ? p[r + 2] : 0, rt = p[2 * r - 1];
    int64_t add[4] = {t, l, b, rt};
    ox_bind_act(c, n->output[0], x->tensor);
    OxVal *o = ox_val(c, n->output[0]);
    o->padded = 1;
    for (int k = 0; k < 4; k++) o->pad[k] = (x->padded ? x->pad[k] : 0) + add[k];
    return;
  }
  int xi = in_act(c, n, 0);
  GsAttrs at;
  graph_attrs_default(&at);
  at.npads = 2 * r;
  for (int k = 0; k < 2 * r; k++) at.pads[k] = to_int(c, p[k], "pad");
  at.pad_mode = m;
  emit(c, n, OP_PAD, &xi, 1, &at);
}

static OxVal *in_weight(OxCtx *c, const Onnx__NodeProto *n, size_t i, const char *what) {
  OxVal *v = need_val(c, n, i, what);
  if (v->kind != VAL_CONST)
    ox_fail(c, "input %zu (%s) '%s' is computed by the graph; it must be an initializer or a "
               "weight input", i, what, v->name);
  return v;
}

static void alias(OxCtx *c, const char *out, const OxVal *src) {
  if (src->kind == VAL_ACT) ox_bind_act(c, out, src->tensor);
  else ox_bind_const(c, out, src);
}

/* Number of consumers of an ONNX value (node input slots, plus one if it is a graph output). */
static int consumers(const OxCtx *c, const char *name) {
  int k = 0;
  for (size_t i = 0; i < c->gp->n_node; i++)
    for (size_t j = 0; j < c->gp->node[i]->n_input; j++)
      if (strcmp(c->gp->node[i]->input[j], name) == 0) k++;
  for (size_t i = 0; i < c->gp->n_output; i++)
    if (c->gp->output[i]->name && strcmp(c->gp->output[i]->name, name) == 0) k++;
  return k;
}

static void require_unused_extra_outputs(OxCtx *c, const Onnx__NodeProto *n) {
  for (size_t i = 1; i < n->n_output; i++)
    if (n->output[i][0] && consumers(c, n->output[i]))
      ox_fail(c, "output %zu ('%s') is used; only the first output is supported", i,
              n->output[i]);
}

/* ---------------------------------------------------------------- op mappings */

static void map_unary(OxCtx *c, const Onnx__NodeProto *n, GsOpKind k) {
  require_unused_extra_outputs(c, n);
  GsAttrs at;
  graph_attrs_default(&at);
  int x = in_act(c, n, 0);
  int id = emit_op(c, n, k, &x, 1, &at, (const char *const *)n->output, 1);
  ox_bind_act(c, n->output[0], c->g->ops[id].out[0]);
}

static void map_relu(OxCtx *c, const Onnx__NodeProto *n) { map_unary(c, n, OP_RELU); }
static void map_sigmoid(OxCtx *c, const Onnx__NodeProto *n) { map_unary(c, n, OP_SIGMOID); }
static void map_tanh(OxCtx *c, const Onnx__NodeProto *n) { map_unary(c, n, OP_TANH); }
/* HardSigmoid's alpha and beta change its values, not its cost: they are not kept. */
static void map_hsigmoid(OxCtx *c, const Onnx__NodeProto *n) { map_unary(c, n, OP_HSIGMOID); }
static void map_hswish(OxCtx *c, const Onnx__NodeProto *n) { map_unary(c, n, OP_HSWISH); }
/* Gelu (opset 20): the erf form, and the tanh approximation priced as it (its FLOPs differ by
 * one or two per element, docs/onnx.md). */
static void map_gelu(OxCtx *c, const Onnx__NodeProto *n) {
  char buf[16];
  const char *ap = ox_attr_s(n, "approximate", "none", buf, sizeof buf);
  if (strcmp(ap, "none") != 0 && strcmp(ap, "tanh") != 0)
    ox_fail(c, "Gelu approximate='%s' is neither 'none' nor 'tanh'", ap);
  map_unary(c, n, OP_GELU);
}

static void map_identity(OxCtx *c, const Onnx__NodeProto *n) {
  require_unused_extra_outputs(c, n); /* Dropout's mask */
  alias(c, n->output[0], need_val(c, n, 0, "data"));
}

static int is_float_dtype(GsDtype t) { return t == DT_FP16 || t == DT_BF16 || t == DT_FP32; }

static int gs_consumers(const GsGraph *g, int t) {
  int k = 0;
  for (int i = 0; i < g->nops; i++)
    for (int j = 0; j < g->ops[i].nin; j++) k += g->ops[i].in[j] == t;
  return k;
}

/* Cast of an activation: the IR has no conversion op. Between two float types or two integer
 * types it is dropped. An integer graph input that reaches the Cast only through reshapes and
 * transposes (BERT's attention_mask -> Unsqueeze -> Cast) is declared with the float type
 * instead. Anything else is an error. */
static void map_cast(OxCtx *c, const Onnx__NodeProto *n) {
  OxVal *x = need_val(c, n, 0, "input");
  if (x->kind != VAL_ACT) { /* a weight without values: only its dims matter */
    alias(c, n->output[0], x);
    return;
  }
  const Onnx__AttributeProto *a = ox_attr(n, "to");
  if (!a || !a->has_i) ox_fail(c, "Cast without 'to'");
  GsDtype to = ox_map_dtype(c, (int32_t)a->i, n->output[0]);
  GsGraph *g = c->g;
  if (is_float_dtype(to) == is_float_dtype(g->tensors[x->tensor].dtype)) {
    ox_bind_act(c, n->output[0], x->tensor);
    return;
  }
  if (!is_float_dtype(to)) ox_fail(c, "Cast of a float activation to an integer type");
  int chain[64], k = 0;
  for (int t = x->tensor;; t = g->ops[g->tensors[t].producer].in[0]) {
    if (k == 64 || gs_consumers(g, t) > (k == 0 ? 0 : 1))
      ox_fail(c, "Cast of an integer activation to float is supported only for an integer "
                 "graph input used by nothing else");
    chain[k++] = t;
    int p = g->tensors[t].producer;
    if (p < 0) break;
    if (g->ops[p].kind != OP_RESHAPE && g->ops[p].kind != OP_TRANSPOSE)
      ox_fail(c, "Cast to float of an integer value computed by %s",
              graph_opkind_name(g->ops[p].kind));
  }
  for (int i = 0; i < k; i++) g->tensors[chain[i]].dtype = to;
  c->cache_nops = -1;
  ox_bind_act(c, n->output[0], x->tensor);
}

static int is_const_scalar(const OxVal *v, double *out) {
  if (!v || v->kind != VAL_CONST || !v->data || v->nelem != 1 || v->data[0].n) return 0;
  *out = v->data[0].v;
  return 1;
}

static void map_clip(OxCtx *c, const Onnx__NodeProto *n) {
  double lo = -INFINITY, hi = INFINITY;
  if (c->opset < 11) {
    lo = ox_attr_f(n, "min", -INFINITY);
    hi = ox_attr_f(n, "max", INFINITY);
  } else {
    OxVal *vl = in_val(c, n, 1), *vh = in_val(c, n, 2);
    if ((vl && !is_const_scalar(vl, &lo)) || (vh && !is_const_scalar(vh, &hi)))
      ox_fail(c, "Clip bounds must be constant scalars");
  }
  if (lo == 0 && hi == 6) map_unary(c, n, OP_RELU6);
  else if (lo == 0 && hi >= 3.4e38) map_unary(c, n, OP_RELU);
  else ox_fail(c, "Clip(min=%g, max=%g) has no equivalent op (Clip(0, 6) is relu6, Clip(0, inf) "
                  "is relu)", lo, hi);
}

/* Reads spatial attributes shared by Conv and the pools: counts must match the rank. */
static void spatial_ints(OxCtx *c, const Onnx__NodeProto *n, const char *name, int count,
                         int64_t def, int64_t *out) {
  int64_t v[8];
  int k = ox_attr_ints(c, n, name, v, 8);
  for (int i = 0; i < count; i++) out[i] = def;
  if (k < 0) return;
  if (k != count) ox_fail(c, "attribute '%s' has %d values, expected %d", name, k, count);
  for (int i = 0; i < count; i++) {
    if (v[i] < 0 || (def > 0 && v[i] == 0))
      ox_fail(c, "attribute '%s' has a bad value %lld", name, (long long)v[i]);
    out[i] = v[i];
  }
}

/* Pads in ONNX order [b0, b1, e0, e1] (begin of each spatial axis, then ends), resolving
 * auto_pad against the input's spatial dims `in`. */
static void pads_for(OxCtx *c, const Onnx__NodeProto *n, int sp, const int64_t *in,
                     const int64_t *k, const int64_t *s, const int64_t *dl, int64_t *pads) {
  char apbuf[32];
  const char *ap = ox_attr_s(n, "auto_pad", "NOTSET", apbuf, sizeof apbuf);
  spatial_ints(c, n, "pads", 2 * sp, 0, pads);
  if (strcmp(ap, "NOTSET") == 0 || strcmp(ap, "") == 0) return;
  if (ox_attr(n, "pads")) ox_fail(c, "both auto_pad and pads are given");
  for (int i = 0; i < sp; i++) {
    int64_t total = 0;
    if (strcmp(ap, "VALID") != 0) {
      if (strcmp(ap, "SAME_UPPER") != 0 && strcmp(ap, "SAME_LOWER") != 0)
        ox_fail(c, "unknown auto_pad '%s'", ap);
      int64_t out = ceil_div64(in[i], s[i]);
      total = max64((out - 1) * s[i] + (k[i] - 1) * dl[i] + 1 - in[i], 0);
    }
    int64_t small = total / 2, big = total - small;
    int upper = strcmp(ap, "SAME_LOWER") != 0;
    pads[i] = upper ? small : big;
    pads[sp + i] = upper ? big : small;
  }
}

static void map_conv(OxCtx *c, const Onnx__NodeProto *n) {
  OxVal *w = in_weight(c, n, 1, "weight");
  if (w->ndim != 3 && w->ndim != 4)
    ox_fail(c, "only 1-D and 2-D convolutions are supported (the weight has rank %d)", w->ndim);
  int sp = w->ndim - 2;
  int64_t extra[4];
  int x = in_act_padded(c, n, 0, sp, extra);
  OxSym xs[GS_MAX_DIMS];
  int xr = ox_act_shape(c, x, xs);
  if (xr != w->ndim)
    ox_fail(c, "the input has rank %d but the weight has rank %d", xr, w->ndim);
  int64_t group = ox_attr_i(n, "group", 1);
  int64_t cin = ox_sym_int(c, xs[1], "input channels");
  if (group < 1 || w->dims[0] % group || w->dims[1] * group != cin)
    ox_fail(c, "weight %s is [%lld, %lld, ...] with group=%lld but the input has %lld channels",
            w->name, (long long)w->dims[0], (long long)w->dims[1], (long long)group,
            (long long)cin);
  int64_t k[2], s[2], dl[2], pads[4], in[2];
  int64_t ks[2];
  if (ox_attr_ints(c, n, "kernel_shape", ks, 2) >= 0)
    for (int i = 0; i < sp; i++)
      if (ks[i] != w->dims[2 + i])
        ox_fail(c, "kernel_shape disagrees with the weight %s", w->name);
  for (int i = 0; i < sp; i++) {
    k[i] = w->dims[2 + i];
    in[i] = ox_sym_int(c, xs[2 + i], "spatial size");
  }
  spatial_ints(c, n, "strides", sp, 1, s);
  spatial_ints(c, n, "dilations", sp, 1, dl);
  pads_for(c, n, sp, in, k, s, dl, pads);
  add_pads(c, n, sp, extra, pads);
  GsAttrs at;
  graph_attrs_default(&at);
  at.units = w->dims[0];
  at.groups = to_int(c, group, "group");
  OxVal *b = in_val(c, n, 2);
  if (b && (b->kind != VAL_CONST || b->nelem != w->dims[0]))
    ox_fail(c, "bias must be a constant of %lld elements", (long long)w->dims[0]);
  at.bias = b != NULL; /* graph_attrs_default() assumes PyTorch's bias=1 */
  if (sp == 2) {
    for (int i = 0; i < 2; i++) {
      at.kernel[i] = to_int(c, k[i], "kernel");
      at.stride[i] = to_int(c, s[i], "stride");
      at.dilation[i] = to_int(c, dl[i], "dilation");
    }
    for (int i = 0; i < 4; i++) at.pad[i] = to_int(c, pads[i], "pad"); /* t, l, b, r */
  } else { /* 1-D: the IR's 1 x k convention (graph.h: kernel[1] used for 1-D) */
    at.kernel[0] = 1;
    at.kernel[1] = to_int(c, k[0], "kernel");
    at.stride[1] = to_int(c, s[0], "stride");
    at.dilation[1] = to_int(c, dl[0], "dilation");
    at.pad[1] = to_int(c, pads[0], "pad");
    at.pad[3] = to_int(c, pads[1], "pad");
  }
  emit(c, n, sp == 2 ? OP_CONV2D : OP_CONV1D, &x, 1, &at);
}

static int reshape_named(OxCtx *c, const Onnx__NodeProto *n, int x, const OxSym *d, int nd,
                         const char *name);
static int emit_take(OxCtx *c, const Onnx__NodeProto *n, int x, int axis, int64_t start,
                     int64_t len, const char *name);

/* ConvTranspose geometry per spatial axis i (0: H, 1: W): input h[i], kernel k, stride s,
 * output ho (ONNX: s·(h-1) + output_padding + k - pads, or output_shape), sub-kernel kk =
 * ceil(k/s), rows per phase q = ceil(ho/s), and the sub-pixel conv's pads and output rows. */
typedef struct {
  int64_t h[2], k[2], s[2], ho[2], kk[2], q[2], pt[2], pb[2], qc[2];
} ConvTGeom;

static void convt_geom(OxCtx *c, const Onnx__NodeProto *n, const OxVal *w, const OxSym *xs,
                       ConvTGeom *t) {
  int64_t pads[4], op[2], dl[2], os[4];
  spatial_ints(c, n, "strides", 2, 1, t->s);
  spatial_ints(c, n, "pads", 4, 0, pads);
  spatial_ints(c, n, "output_padding", 2, 0, op);
  spatial_ints(c, n, "dilations", 2, 1, dl);
  if (dl[0] != 1 || dl[1] != 1) ox_fail(c, "dilated ConvTranspose is not supported");
  char apbuf[32];
  const char *ap = ox_attr_s(n, "auto_pad", "NOTSET", apbuf, sizeof apbuf);
  if (strcmp(ap, "NOTSET") != 0 && *ap) ox_fail(c, "ConvTranspose with auto_pad=%s is not supported", ap);
  int nos = ox_attr_ints(c, n, "output_shape", os, 4);
  if (nos >= 0 && nos != 2 && nos != 4) ox_fail(c, "output_shape has %d values", nos);
  for (int i = 0; i < 2; i++) {
    t->h[i] = ox_sym_int(c, xs[2 + i], "spatial size");
    t->k[i] = w->dims[2 + i];
    if (op[i] >= t->s[i]) ox_fail(c, "output_padding %lld must be below the stride", (long long)op[i]);
    t->ho[i] = nos > 0 ? os[nos - 2 + i] : t->s[i] * (t->h[i] - 1) + op[i] + t->k[i] - pads[i] - pads[2 + i];
    if (t->ho[i] < 1) ox_fail(c, "ConvTranspose gives an empty output (%lld)", (long long)t->ho[i]);
    t->kk[i] = (t->k[i] + t->s[i] - 1) / t->s[i];
    t->q[i] = (t->ho[i] + t->s[i] - 1) / t->s[i];
    int64_t total = max64(0, t->q[i] - t->h[i] + t->kk[i] - 1);
    t->pt[i] = (total + 1) / 2; /* stride 1: a plain conv, pads k-1-p each side */
    t->pb[i] = total / 2;
    t->qc[i] = t->h[i] + total - t->kk[i] + 1;
  }
}

/* ConvTranspose (2-D, group 1, dilation 1) by sub-pixel decomposition (docs/onnx.md): output
 * row y = s·q + r is phase r of row q; every phase is a stride-1 conv of the input with a
 * ceil(k/s)-tap sub-kernel, so all s_h·s_w phases are one conv2d with Cout·s_h·s_w units,
 * interleaved by reshape [N, Cout, sh, sw, Q, Q'] -> transpose [N, Cout, Q, sh, Q', sw] ->
 * reshape [N, Cout, Q·sh, Q'·sw] (depth to space) and cropped to the output by a split. The
 * conv's padding makes each phase ceil(Hout/s) rows: when s divides k and Hout = s·H (k = 2s
 * with pads s/2, k = s with pads 0) its MACs are exactly N·H·W·Cin·Cout·kh·kw. */
static void map_convtranspose(OxCtx *c, const Onnx__NodeProto *n) {
  OxVal *w = in_weight(c, n, 1, "weight");
  int x = in_act(c, n, 0);
  OxSym xs[GS_MAX_DIMS];
  if (w->ndim != 4 || ox_act_shape(c, x, xs) != 4)
    ox_fail(c, "only 2-D ConvTranspose over NCHW is supported");
  if (ox_attr_i(n, "group", 1) != 1) ox_fail(c, "grouped ConvTranspose is not supported");
  int64_t cin = ox_sym_int(c, xs[1], "input channels"), cout = w->dims[1];
  if (w->dims[0] != cin)
    ox_fail(c, "weight %s is [%lld, %lld, ...] but the input has %lld channels", w->name,
            (long long)w->dims[0], (long long)cout, (long long)cin);
  ConvTGeom t;
  convt_geom(c, n, w, xs, &t);
  GsAttrs at;
  graph_attrs_default(&at);
  int64_t ph = t.s[0] * t.s[1];
  at.units = cout * ph;
  OxVal *b = in_val(c, n, 2);
  if (b && (b->kind != VAL_CONST || b->nelem != cout))
    ox_fail(c, "bias must be a constant of %lld elements", (long long)cout);
  at.bias = b != NULL;
  for (int i = 0; i < 2; i++) {
    at.kernel[i] = to_int(c, t.kk[i], "kernel");
    at.pad[i] = to_int(c, t.pt[i], "pad");
    at.pad[2 + i] = to_int(c, t.pb[i], "pad");
  }
  int whole = ph == 1 && t.qc[0] == t.ho[0] && t.qc[1] == t.ho[1];
  const char *out = n->output[0], *nm = whole ? out : arena_printf(c->scratch, "%s.phases", out);
  int id = emit_op(c, n, OP_CONV2D, &x, 1, &at, &nm, 1); /* may move c->g->ops */
  int y = c->g->ops[id].out[0];
  if (ph > 1) {
    OxSym d6[6] = {xs[0], {(double)cout, 0}, {(double)t.s[0], 0}, {(double)t.s[1], 0},
                   {(double)t.qc[0], 0}, {(double)t.qc[1], 0}};
    y = reshape_named(c, n, y, d6, 6, arena_printf(c->scratch, "%s.phases6", out));
    graph_attrs_default(&at);
    at.nperm = 6;
    const int perm[6] = {0, 1, 4, 2, 5, 3};
    for (int i = 0; i < 6; i++) at.perm[i] = perm[i];
    nm = arena_printf(c->scratch, "%s.interleaved", out);
    id = emit_op(c, n, OP_TRANSPOSE, &y, 1, &at, &nm, 1);
    y = c->g->ops[id].out[0];
    OxSym d4[4] = {xs[0], {(double)cout, 0}, {(double)(t.qc[0] * t.s[0]), 0},
                   {(double)(t.qc[1] * t.s[1]), 0}};
    int crop = t.qc[0] * t.s[0] != t.ho[0] || t.qc[1] * t.s[1] != t.ho[1];
    y = reshape_named(c, n, y, d4, 4, crop ? arena_printf(c->scratch, "%s.full", out) : out);
  }
  for (int i = 0; i < 2; i++) /* crop: the first Hout rows and Wout columns */
    if (act_dim(c, y, 2 + i, "output axis") != t.ho[i]) {
      int last = i == 1 || act_dim(c, y, 3, "output axis") == t.ho[1];
      y = emit_take(c, n, y, 2 + i, 0, t.ho[i], last ? out : arena_printf(c->scratch, "%s.rows", out));
    }
  ox_bind_act(c, out, y);
}

static void map_pool(OxCtx *c, const Onnx__NodeProto *n, GsOpKind kind) {
  require_unused_extra_outputs(c, n); /* MaxPool's indices */
  int64_t extra[4];
  int x = in_act_padded(c, n, 0, 2, extra);
  OxSym xs[GS_MAX_DIMS];
  int xr = ox_act_shape(c, x, xs);
  int64_t k[2], s[2], dl[2], pads[4], in[2];
  int nk = ox_attr_ints(c, n, "kernel_shape", k, 2);
  if (nk != 2 || xr != 4) ox_fail(c, "only 2-D pooling over NCHW is supported");
  for (int i = 0; i < 2; i++) in[i] = ox_sym_int(c, xs[2 + i], "spatial size");
  spatial_ints(c, n, "strides", 2, 1, s);
  spatial_ints(c, n, "dilations", 2, 1, dl);
  if (dl[0] != 1 || dl[1] != 1) ox_fail(c, "dilated pooling is not supported");
  pads_for(c, n, 2, in, k, s, dl, pads);
  add_pads(c, n, 2, extra, pads);
  GsAttrs at;
  graph_attrs_default(&at);
  for (int i = 0; i < 2; i++) {
    at.kernel[i] = to_int(c, k[i], "kernel");
    at.stride[i] = to_int(c, s[i], "stride");
  }
  for (int i = 0; i < 4; i++) at.pad[i] = to_int(c, pads[i], "pad");
  /* same rule as ONNX Runtime and PyTorch: a last window starting in the end padding is
   * dropped (graph_infer implements it) */
  at.ceil_mode = ox_attr_i(n, "ceil_mode", 0) != 0;
  int id = emit_op(c, n, kind, &x, 1, &at, (const char *const *)n->output, 1);
  ox_bind_act(c, n->output[0], c->g->ops[id].out[0]);
}

/* The output height and width of a Resize/Upsample from its `sizes` (four dims, the first two
 * the input's N and C) or `scales` (1 for N and C; output = floor(input x scale)). */
static void resize_size(OxCtx *c, const Onnx__NodeProto *n, const OxSym *xs, int64_t *hw) {
  int is_resize = strcmp(n->op_type, "Resize") == 0;
  size_t si = is_resize && c->opset >= 11 ? 2 : 1;
  OxVal *sizes = is_resize && c->opset >= 11 ? in_val(c, n, 3) : NULL;
  OxVal *scales = in_val(c, n, si);
  if (sizes && scales && scales->nelem > 0) ox_fail(c, "both scales and sizes are given");
  OxVal *v = sizes ? sizes : scales;
  double sc[4];
  int ns = v ? 0 : ox_attr_floats(c, n, "scales", sc, 4); /* Upsample before opset 9 */
  if (v && (v->kind != VAL_CONST || !v->data || v->nelem != 4))
    ox_fail(c, "%s must be a constant of 4 values (N, C, H, W)", sizes ? "sizes" : "scales");
  if (!v && ns != 4) ox_fail(c, "no scales or sizes to resize by");
  if (sizes) {
    if (sizes->data[0].n != 1 && ox_sym_int(c, sizes->data[0], "size") != ox_sym_int(c, xs[0], "batch"))
      ox_fail(c, "Resize may not change the batch");
    if (ox_sym_int(c, sizes->data[1], "size") != ox_sym_int(c, xs[1], "channels"))
      ox_fail(c, "Resize may not change the channels");
    for (int i = 0; i < 2; i++) hw[i] = ox_sym_int(c, sizes->data[2 + i], "size");
    return;
  }
  for (int i = 0; i < 4; i++) sc[i] = v ? v->data[i].v : sc[i];
  if (sc[0] != 1 || sc[1] != 1) ox_fail(c, "Resize may scale only H and W (scales %g, %g)", sc[0], sc[1]);
  for (int i = 0; i < 2; i++) {
    hw[i] = (int64_t)floor((double)ox_sym_int(c, xs[2 + i], "spatial size") * sc[2 + i]);
    if (hw[i] < 1) ox_fail(c, "scale %g gives an empty output", sc[2 + i]);
  }
}

/* Resize (opset 10+) and Upsample: nearest or (bi)linear over the spatial axes of NCHW. The
 * coordinate convention (half_pixel, align_corners, ...) moves which inputs are read, not how
 * many, so it does not change the cost and is not kept; cubic and antialias would. */
static void map_resize(OxCtx *c, const Onnx__NodeProto *n) {
  int x = in_act(c, n, 0);
  OxSym xs[GS_MAX_DIMS];
  if (ox_act_shape(c, x, xs) != 4) ox_fail(c, "only NCHW (rank 4) inputs can be resized");
  char buf[24];
  const char *mode = ox_attr_s(n, "mode", "nearest", buf, sizeof buf);
  int linear = strcmp(mode, "linear") == 0 || strcmp(mode, "bilinear") == 0;
  if (!linear && strcmp(mode, "nearest") != 0)
    ox_fail(c, "Resize mode '%s' is not supported (nearest and linear are)", mode);
  if (ox_attr_i(n, "antialias", 0)) ox_fail(c, "Resize with antialias=1 is not supported");
  int64_t hw[2];
  resize_size(c, n, xs, hw);
  GsAttrs at;
  graph_attrs_default(&at);
  at.size[0] = to_int(c, hw[0], "size");
  at.size[1] = to_int(c, hw[1], "size");
  at.linear = linear;
  emit(c, n, OP_RESIZE, &x, 1, &at);
}

static void map_maxpool(OxCtx *c, const Onnx__NodeProto *n) { map_pool(c, n, OP_MAXPOOL); }
static void map_avgpool(OxCtx *c, const Onnx__NodeProto *n) { map_pool(c, n, OP_AVGPOOL); }

static void map_gavgpool(OxCtx *c, const Onnx__NodeProto *n) {
  int x = in_act(c, n, 0);
  OxSym xs[GS_MAX_DIMS];
  if (ox_act_shape(c, x, xs) != 4) ox_fail(c, "only NCHW (rank 4) input is supported");
  emit1(c, n, OP_GAVGPOOL, x, NULL);
}

static void map_batchnorm(OxCtx *c, const Onnx__NodeProto *n) {
  require_unused_extra_outputs(c, n);
  int x = in_act(c, n, 0);
  int64_t ch = act_dim(c, x, 1, "channels");
  for (size_t i = 1; i <= 4; i++) {
    OxVal *p = in_weight(c, n, i, i == 1 ? "scale" : i == 2 ? "bias" : i == 3 ? "mean" : "var");
    if (p->nelem != ch)
      ox_fail(c, "'%s' has %lld elements, the input has %lld channels", p->name,
              (long long)p->nelem, (long long)ch);
  }
  int id = emit_op(c, n, OP_BATCHNORM, &x, 1, NULL, (const char *const *)n->output, 1);
  ox_bind_act(c, n->output[0], c->g->ops[id].out[0]);
}

static void emit_layernorm(OxCtx *c, const Onnx__NodeProto *n, int x, int64_t axis) {
  OxSym xs[GS_MAX_DIMS];
  int r = ox_act_shape(c, x, xs);
  if (norm_axis(c, axis, r, "normalised axis") != r - 1)
    ox_fail(c, "layer normalisation over axis %lld; only the last axis is supported",
            (long long)axis);
  int id = emit_op(c, n, OP_LAYERNORM, &x, 1, NULL, (const char *const *)n->output, 1);
  ox_bind_act(c, n->output[0], c->g->ops[id].out[0]);
}

static void map_layernorm(OxCtx *c, const Onnx__NodeProto *n) {
  require_unused_extra_outputs(c, n); /* Mean, InvStdDev */
  int x = in_act(c, n, 0);
  int64_t d = act_dim(c, x, -1, "normalised size");
  for (size_t i = 1; i <= 2; i++) {
    OxVal *p = in_val(c, n, i);
    if (p && (p->kind != VAL_CONST || p->nelem != d))
      ox_fail(c, "%s must be a constant of %lld elements", i == 1 ? "scale" : "bias",
              (long long)d);
  }
  emit_layernorm(c, n, x, ox_attr_i(n, "axis", -1));
}

static void map_softmax(OxCtx *c, const Onnx__NodeProto *n) {
  int x = in_act(c, n, 0);
  OxSym xs[GS_MAX_DIMS];
  int r = ox_act_shape(c, x, xs);
  int64_t axis = ox_attr_i(n, "axis", c->opset < 13 ? 1 : -1);
  int a = norm_axis(c, axis, r, "axis");
  if (c->opset < 13 && a != r - 1) /* before opset 13 Softmax flattens [axis:] into one */
    ox_fail(c, "Softmax (opset %lld) over the flattened axes %d.. is not supported",
            (long long)c->opset, a);
  GsAttrs at;
  graph_attrs_default(&at);
  at.axis = a;
  emit1(c, n, OP_SOFTMAX, x, &at);
}

static void emit_reshape(OxCtx *c, const Onnx__NodeProto *n, int x, const OxSym *d, int nd) {
  GsAttrs at;
  graph_attrs_default(&at);
  encode_shape(c, d, nd, &at);
  emit1(c, n, OP_RESHAPE, x, &at);
}

/* Shape of an operand: an activation's (symbolic) or a constant's dims. */
static int val_shape(OxCtx *c, const OxVal *v, OxSym *xs) {
  if (v->kind == VAL_ACT) return ox_act_shape(c, v->tensor, xs);
  for (int i = 0; i < v->ndim; i++) xs[i] = (OxSym){(double)v->dims[i], 0};
  return v->ndim;
}

/* Reshape of operand v to d: of a constant (a weight without values in a graph-only export,
 * e.g. a bias reshaped to [1, C, 1, 1]) it is a constant of the new dims; of an activation,
 * or to a batch-sized shape, a reshape op. */
static void reshape_val(OxCtx *c, const Onnx__NodeProto *n, OxVal *v, const OxSym *d, int nd) {
  int sym = 0;
  for (int i = 0; i < nd; i++) sym |= d[i].n;
  if (v->kind == VAL_CONST && !sym) {
    OxVal r = *v;
    r.ndim = nd;
    for (int i = 0; i < nd; i++) r.dims[i] = ox_clamp_i64(d[i].v);
    if (ox_elems(c, r.dims, nd, n->output[0]) != v->nelem)
      ox_fail(c, "the new shape does not hold the constant's %lld elements", (long long)v->nelem);
    ox_bind_const(c, n->output[0], &r);
    return;
  }
  emit_reshape(c, n, v->kind == VAL_ACT ? v->tensor : const_act(c, v), d, nd);
}

static void map_flatten(OxCtx *c, const Onnx__NodeProto *n) {
  OxVal *x = need_val(c, n, 0, "input");
  OxSym xs[GS_MAX_DIMS], out[2] = {{1, 0}, {1, 0}};
  int r = val_shape(c, x, xs);
  int64_t axis = ox_attr_i(n, "axis", 1);
  int a = axis == r ? r : norm_axis(c, axis, r, "axis");
  for (int i = 0; i < r; i++) {
    OxSym *o = &out[i >= a];
    o->v *= xs[i].v;
    o->n += xs[i].n;
  }
  reshape_val(c, n, x, out, 2);
}

/* Symbolic shape of a Reshape/Expand target given as a constant. */
static int target_shape(OxCtx *c, const OxVal *t, OxSym *out, const char *what) {
  if (t->kind != VAL_CONST || !t->data)
    ox_fail(c, "the %s is computed from activations, not from shapes and constants", what);
  if (t->ndim != 1 || t->nelem > GS_MAX_DIMS)
    ox_fail(c, "the %s must be a 1-D constant of at most %d elements", what, (int)GS_MAX_DIMS);
  for (int i = 0; i < t->nelem; i++) out[i] = t->data[i];
  return (int)t->nelem;
}

static void map_reshape(OxCtx *c, const Onnx__NodeProto *n) {
  OxVal *x = need_val(c, n, 0, "data");
  OxSym xs[GS_MAX_DIMS], d[GS_MAX_DIMS];
  int r = val_shape(c, x, xs);
  int nd = target_shape(c, need_val(c, n, 1, "shape"), d, "target shape");
  int allowzero = (int)ox_attr_i(n, "allowzero", 0);
  int infer = -1;
  OxSym known = {1, 0}, total = {1, 0};
  for (int i = 0; i < r; i++) {
    total.v *= xs[i].v;
    total.n += xs[i].n;
  }
  for (int i = 0; i < nd; i++) {
    if (!d[i].n && d[i].v == 0 && !allowzero) {
      if (i >= r) ox_fail(c, "target dim %d copies a dim the input does not have", i);
      d[i] = xs[i];
    }
    if (!d[i].n && d[i].v == -1) {
      if (infer >= 0) ox_fail(c, "target shape has two -1 entries");
      infer = i;
      continue;
    }
    if (!d[i].n && d[i].v < 0) ox_fail(c, "target dim %d is negative", i);
    known.v *= d[i].v;
    known.n += d[i].n;
  }
  if (infer >= 0) {
    if (known.v == 0 || known.n > total.n || fmod(total.v, known.v) != 0)
      ox_fail(c, "cannot infer the -1 entry of the target shape");
    d[infer].v = total.v / known.v;
    d[infer].n = total.n - known.n;
  } else if (known.v != total.v || known.n != total.n) {
    ox_fail(c, "target shape does not hold the input's elements");
  }
  reshape_val(c, n, x, d, nd);
}

/* Squeeze/Unsqueeze of an activation: a reshape. */
static int axes_of(OxCtx *c, const Onnx__NodeProto *n, int64_t *axes) {
  if (c->opset < 13) return ox_attr_ints(c, n, "axes", axes, GS_MAX_DIMS);
  OxVal *a = in_val(c, n, 1);
  if (!a) return -1;
  if (a->kind != VAL_CONST || !a->data || a->nelem > GS_MAX_DIMS)
    ox_fail(c, "axes must be a small constant");
  for (int i = 0; i < a->nelem; i++) axes[i] = ox_sym_int(c, a->data[i], "axis");
  return (int)a->nelem;
}

static void map_squeeze(OxCtx *c, const Onnx__NodeProto *n, int unsq) {
  OxVal *x = need_val(c, n, 0, "data");
  OxSym xs[GS_MAX_DIMS], d[GS_MAX_DIMS];
  int r = val_shape(c, x, xs);
  int64_t axes[GS_MAX_DIMS];
  int na = axes_of(c, n, axes);
  int nd = unsq ? r + (na < 0 ? 0 : na) : r;
  int mark[GS_MAX_DIMS + GS_MAX_DIMS] = {0};
  if (nd > GS_MAX_DIMS) ox_fail(c, "result has rank %d (at most %d)", nd, (int)GS_MAX_DIMS);
  if (unsq && na < 0) ox_fail(c, "Unsqueeze without axes");
  for (int i = 0; i < na; i++) mark[norm_axis(c, axes[i], nd, "axis")] = 1;
  int k = 0;
  if (unsq) {
    for (int i = 0, j = 0; i < nd; i++) d[k++] = mark[i] ? (OxSym){1, 0} : xs[j++];
  } else {
    for (int i = 0; i < r; i++) {
      int drop = na < 0 ? (!xs[i].n && xs[i].v == 1) : mark[i];
      if (drop && (xs[i].n || xs[i].v != 1)) ox_fail(c, "cannot squeeze axis %d: not 1", i);
      if (!drop) d[k++] = xs[i];
    }
  }
  reshape_val(c, n, x, d, k);
}

static void map_unsqueeze(OxCtx *c, const Onnx__NodeProto *n) { map_squeeze(c, n, 1); }
static void map_squeeze0(OxCtx *c, const Onnx__NodeProto *n) { map_squeeze(c, n, 0); }

static void map_transpose(OxCtx *c, const Onnx__NodeProto *n) {
  int x = in_act(c, n, 0);
  OxSym xs[GS_MAX_DIMS];
  int r = ox_act_shape(c, x, xs);
  int64_t perm[GS_MAX_DIMS];
  int np = ox_attr_ints(c, n, "perm", perm, GS_MAX_DIMS);
  GsAttrs at;
  graph_attrs_default(&at);
  at.nperm = r;
  if (np >= 0 && np != r) ox_fail(c, "perm has %d entries for rank %d", np, r);
  for (int i = 0; i < r; i++)
    at.perm[i] = np < 0 ? r - 1 - i : norm_axis(c, perm[i], r, "perm entry");
  emit1(c, n, OP_TRANSPOSE, x, &at);
}

static void map_split(OxCtx *c, const Onnx__NodeProto *n) {
  int x = in_act(c, n, 0);
  OxSym xs[GS_MAX_DIMS];
  int r = ox_act_shape(c, x, xs);
  int a = norm_axis(c, ox_attr_i(n, "axis", 0), r, "axis");
  int nout = (int)n->n_output;
  if (nout > GS_MAX_OPERANDS) ox_fail(c, "%d outputs (at most %d)", nout, (int)GS_MAX_OPERANDS);
  int64_t len = ox_sym_int(c, xs[a], "split axis"), sizes[GS_MAX_OPERANDS], sum = 0;
  int ns;
  if (c->opset < 13) {
    ns = ox_attr_ints(c, n, "split", sizes, GS_MAX_OPERANDS);
  } else {
    OxVal *s = in_val(c, n, 1);
    ns = -1;
    if (s) {
      if (s->kind != VAL_CONST || !s->data || s->nelem > GS_MAX_OPERANDS)
        ox_fail(c, "split sizes must be a small constant");
      ns = (int)s->nelem;
      for (int i = 0; i < ns; i++) sizes[i] = ox_sym_int(c, s->data[i], "split size");
    }
  }
  if (ns < 0) {
    if (len % nout) ox_fail(c, "cannot split %lld into %d equal parts", (long long)len, nout);
    ns = nout;
    for (int i = 0; i < ns; i++) sizes[i] = len / nout;
  }
  if (ns != nout) ox_fail(c, "%d split sizes for %d outputs", ns, nout);
  GsAttrs at;
  graph_attrs_default(&at);
  at.axis = a;
  at.nsizes = ns;
  for (int i = 0; i < ns; i++) {
    if (sizes[i] <= 0 || sizes[i] > len) ox_fail(c, "split size %lld", (long long)sizes[i]);
    at.sizes[i] = sizes[i];
    sum += sizes[i];
  }
  if (sum != len)
    ox_fail(c, "split sizes add up to %lld, the axis has %lld", (long long)sum, (long long)len);
  emit(c, n, OP_SPLIT, &x, 1, &at);
}

static void map_concat(OxCtx *c, const Onnx__NodeProto *n) {
  int nin = (int)n->n_input;
  if (nin < 1) ox_fail(c, "no inputs");
  int *in = arena_alloc(c->scratch, (size_t)nin * sizeof *in);
  for (int i = 0; i < nin; i++) in[i] = in_act(c, n, (size_t)i);
  OxSym xs[GS_MAX_DIMS];
  int r = ox_act_shape(c, in[0], xs);
  GsAttrs at;
  graph_attrs_default(&at);
  at.axis = norm_axis(c, ox_attr_i(n, "axis", 0), r, "axis");
  /* More operands than the IR allows: concatenate in chunks of GS_MAX_OPERANDS, then the
   * chunks (the extra copies are documented in docs/onnx.md). */
  while (nin > GS_MAX_OPERANDS) {
    int m = 0;
    for (int i = 0; i < nin; i += GS_MAX_OPERANDS) {
      int k = nin - i < GS_MAX_OPERANDS ? nin - i : GS_MAX_OPERANDS;
      if (k == 1) {
        in[m++] = in[i];
        continue;
      }
      const char *nm = arena_printf(c->scratch, "%s.part%d", n->output[0], m);
      int id = emit_op(c, n, OP_CONCAT, in + i, k, &at, &nm, 1);
      in[m++] = c->g->ops[id].out[0];
    }
    nin = m;
  }
  emit(c, n, OP_CONCAT, in, nin, &at);
}

/* Bias of a dense/conv op given as a separate Add: folded when the constant holds one value
 * per output feature laid out along the feature axis and nobody else reads the pre-bias
 * value. Returns 1 when folded. */
static int fold_bias(OxCtx *c, const Onnx__NodeProto *n, const OxVal *x, const OxVal *b) {
  if (strcmp(n->op_type, "Add") != 0 || x->kind != VAL_ACT || b->kind != VAL_CONST) return 0;
  int p = c->g->tensors[x->tensor].producer;
  if (p < 0) return 0;
  GsOp *op = &c->g->ops[p];
  if ((op->kind != OP_DENSE && op->kind != OP_CONV2D && op->kind != OP_CONV1D) || op->at.bias)
    return 0;
  if (b->nelem != op->at.units) return 0;
  /* the pre-bias value must have this Add as its only reader, under every name it has */
  int readers = 0;
  for (int i = 0; i < c->nval; i++)
    if (c->val[i]->kind == VAL_ACT && c->val[i]->tensor == x->tensor)
      readers += consumers(c, c->val[i]->name);
  if (readers != 1) return 0;
  int feat = op->kind == OP_DENSE ? b->ndim - 1 : b->ndim - (op->kind == OP_CONV2D ? 3 : 2);
  if (feat < 0) return 0;
  for (int i = 0; i < b->ndim; i++)
    if (i != feat && b->dims[i] != 1) return 0;
  OxSym xs[GS_MAX_DIMS];
  int r = ox_act_shape(c, x->tensor, xs);
  if (b->ndim > r) return 0;
  op->at.bias = 1;
  ox_bind_act(c, n->output[0], x->tensor);
  return 1;
}

static void map_binary(OxCtx *c, const Onnx__NodeProto *n, GsOpKind k) {
  OxVal *a = need_val(c, n, 0, "A"), *b = need_val(c, n, 1, "B");
  if (a->kind == VAL_CONST && b->kind == VAL_ACT && k == OP_ADD && fold_bias(c, n, b, a)) return;
  if (b->kind == VAL_CONST && a->kind == VAL_ACT && fold_bias(c, n, a, b)) return;
  /* x + 0, x - 0, x * 1, x / 1 with a constant that does not grow x's shape: dropped. */
  OxVal *x = a->kind == VAL_ACT ? a : b, *cst = a->kind == VAL_ACT ? b : a;
  if (x->kind == VAL_ACT && cst->kind == VAL_CONST && cst->data &&
      (cst == b || k == OP_ADD || k == OP_MUL)) {
    double ident = k == OP_ADD || k == OP_SUB ? 0 : 1;
    int all = 1;
    for (int64_t i = 0; i < cst->nelem; i++)
      if (cst->data[i].n || cst->data[i].v != ident) all = 0;
    OxSym xs[GS_MAX_DIMS];
    int r = ox_act_shape(c, x->tensor, xs);
    if (all && cst->ndim <= r) {
      for (int i = 0; i < cst->ndim; i++)
        if (cst->dims[i] != 1) all = 0;
      if (all) {
        ox_bind_act(c, n->output[0], x->tensor);
        return;
      }
    }
  }
  int in[2] = {in_act(c, n, 0), in_act(c, n, 1)};
  GsAttrs at;
  graph_attrs_default(&at);
  emit(c, n, k, in, 2, &at);
}

static void map_add(OxCtx *c, const Onnx__NodeProto *n) { map_binary(c, n, OP_ADD); }
static void map_sub(OxCtx *c, const Onnx__NodeProto *n) { map_binary(c, n, OP_SUB); }
static void map_mul(OxCtx *c, const Onnx__NodeProto *n) { map_binary(c, n, OP_MUL); }
static void map_div(OxCtx *c, const Onnx__NodeProto *n) { map_binary(c, n, OP_DIV); }

static void emit_dense(OxCtx *c, const Onnx__NodeProto *n, int x, int64_t kdim, int64_t units,
                       int bias) {
  int64_t k = act_dim(c, x, -1, "input features");
  if (k != kdim)
    ox_fail(c, "the input has %lld features, the weight expects %lld", (long long)k,
            (long long)kdim);
  GsAttrs at;
  graph_attrs_default(&at);
  at.units = units;
  at.bias = bias;
  emit1(c, n, OP_DENSE, x, &at);
}

/* ---------------------------------------------------------------- for other files */

OxVal *ox_need_input(OxCtx *c, const Onnx__NodeProto *n, size_t i, const char *what) {
  return need_val(c, n, i, what);
}
int ox_input_act(OxCtx *c, const Onnx__NodeProto *n, size_t i) { return in_act(c, n, i); }
int ox_emit_named(OxCtx *c, const Onnx__NodeProto *n, GsOpKind k, const int *in, int nin,
                  const GsAttrs *at, const char *name) {
  int id = emit_op(c, n, k, in, nin, at, &name, 1);
  return c->g->ops[id].out[0];
}
int ox_act_rank(OxCtx *c, int tensor) {
  OxSym d[GS_MAX_DIMS];
  return ox_act_shape(c, tensor, d);
}
int64_t ox_act_dim(OxCtx *c, int tensor, int axis) { return act_dim(c, tensor, axis, "axis"); }

static void map_matmul(OxCtx *c, const Onnx__NodeProto *n) {
  OxVal *a = need_val(c, n, 0, "A"), *b = need_val(c, n, 1, "B");
  if (a->kind == VAL_ACT && b->kind == VAL_CONST && b->ndim == 2) {
    emit_dense(c, n, a->tensor, b->dims[0], b->dims[1], 0);
    return;
  }
  int in[2] = {in_act(c, n, 0), in_act(c, n, 1)};
  GsAttrs at;
  graph_attrs_default(&at);
  emit(c, n, OP_MATMUL, in, 2, &at);
}

static void map_gemm(OxCtx *c, const Onnx__NodeProto *n) {
  if (ox_attr_i(n, "transA", 0)) ox_fail(c, "transA=1 is not supported");
  OxVal *a = need_val(c, n, 0, "A");
  OxVal *w = in_weight(c, n, 1, "B");
  if (a->kind != VAL_ACT) ox_fail(c, "A must be an activation");
  if (w->ndim != 2) ox_fail(c, "B must have rank 2");
  int tb = ox_attr_i(n, "transB", 0) != 0;
  int64_t kdim = w->dims[tb], units = w->dims[!tb];
  OxVal *cb = in_val(c, n, 2);
  int bias = cb && ox_attr_f(n, "beta", 1.0f) != 0.0f;
  if (bias && (cb->kind != VAL_CONST || cb->nelem != units))
    ox_fail(c, "C must be a constant of %lld elements (one bias per output)", (long long)units);
  /* alpha and beta scale constants: folded into the weights, no cost. */
  emit_dense(c, n, a->tensor, kdim, units, bias);
}

static void map_reducemean(OxCtx *c, const Onnx__NodeProto *n) {
  int x = in_act(c, n, 0);
  OxSym xs[GS_MAX_DIMS];
  int r = ox_act_shape(c, x, xs);
  int64_t axes[GS_MAX_DIMS];
  int na = c->opset < 18 ? ox_attr_ints(c, n, "axes", axes, GS_MAX_DIMS) : axes_of(c, n, axes);
  int spatial = r == 4 && na == 2;
  for (int i = 0; spatial && i < na; i++)
    if (norm_axis(c, axes[i], r, "axis") != 2 + i) spatial = 0;
  if (!spatial)
    ox_fail(c, "ReduceMean is supported over the spatial axes [2, 3] of NCHW (global average "
               "pool) or inside the layernorm pattern");
  if (ox_attr_i(n, "keepdims", 1)) {
    emit1(c, n, OP_GAVGPOOL, x, NULL);
    return;
  }
  const char *nm = arena_printf(c->scratch, "%s.pool", n->output[0]);
  GsAttrs at;
  graph_attrs_default(&at);
  int id = emit_op(c, n, OP_GAVGPOOL, &x, 1, &at, &nm, 1);
  emit_reshape(c, n, c->g->ops[id].out[0], xs, 2);
}

/* x[start : start + len] along `axis` as a split (the IR has no slice op); the parts before
 * and after are further outputs of the split that nobody reads (docs/onnx.md). Returns the
 * tensor of the kept part, named `name`. */
static int emit_take(OxCtx *c, const Onnx__NodeProto *n, int x, int axis, int64_t start,
                     int64_t len, const char *name) {
  int64_t dim = act_dim(c, x, axis, "sliced axis");
  if (start < 0 || len < 1 || start + len > dim)
    ox_fail(c, "slice [%lld, %lld) of an axis of %lld", (long long)start,
            (long long)(start + len), (long long)dim);
  GsAttrs at;
  graph_attrs_default(&at);
  at.axis = axis;
  const char *names[3];
  int keep = 0;
  if (start > 0) {
    names[at.nsizes] = arena_printf(c->scratch, "%s.before", name);
    at.sizes[at.nsizes++] = start;
  }
  keep = at.nsizes;
  names[at.nsizes] = name;
  at.sizes[at.nsizes++] = len;
  if (start + len < dim) {
    names[at.nsizes] = arena_printf(c->scratch, "%s.after", name);
    at.sizes[at.nsizes++] = dim - start - len;
  }
  int id = emit_op(c, n, OP_SPLIT, &x, 1, &at, names, at.nsizes);
  return c->g->ops[id].out[keep];
}

static void map_gather(OxCtx *c, const Onnx__NodeProto *n) {
  OxVal *data = need_val(c, n, 0, "data"), *idx = need_val(c, n, 1, "indices");
  int64_t axis = ox_attr_i(n, "axis", 0);
  if (data->kind == VAL_CONST && idx->kind == VAL_ACT && data->ndim == 2 && axis == 0) {
    GsAttrs at;
    graph_attrs_default(&at);
    at.vocab = data->dims[0];
    at.dim = data->dims[1];
    at.bag = 1;
    emit1(c, n, OP_EMBEDDING, idx->tensor, &at);
    return;
  }
  if (data->kind == VAL_CONST && idx->kind == VAL_CONST) {
    /* rows of a table too large to fold (BERT's position embeddings indexed by constant
     * position ids): a constant of the result's shape */
    OxVal r = {0};
    int a = norm_axis(c, axis, data->ndim, "axis");
    if (data->ndim - 1 + idx->ndim > GS_MAX_DIMS) ox_fail(c, "result rank too large");
    for (int i = 0; i < a; i++) r.dims[r.ndim++] = data->dims[i];
    for (int i = 0; i < idx->ndim; i++) r.dims[r.ndim++] = idx->dims[i];
    for (int i = a + 1; i < data->ndim; i++) r.dims[r.ndim++] = data->dims[i];
    r.nelem = ox_elems(c, r.dims, r.ndim, n->output[0]);
    r.is_int = data->is_int;
    ox_bind_const(c, n->output[0], &r);
    return;
  }
  if (data->kind == VAL_ACT && idx->kind == VAL_CONST && idx->data && idx->nelem == 1) {
    /* x[:, i] (ViT's class token): take one slice; a scalar index drops the axis */
    OxSym xs[GS_MAX_DIMS];
    int r = ox_act_shape(c, data->tensor, xs);
    int a = norm_axis(c, axis, r, "axis");
    int64_t i = ox_sym_int(c, idx->data[0], "Gather index"), len = ox_sym_int(c, xs[a], "axis");
    if (i < 0) i += len;
    if (idx->ndim == 0) {
      const char *nm = arena_printf(c->scratch, "%s.take", n->output[0]);
      int t = emit_take(c, n, data->tensor, a, i, 1, nm);
      for (int k = a; k + 1 < r; k++) xs[k] = xs[k + 1];
      emit_reshape(c, n, t, xs, r - 1);
    } else {
      ox_bind_act(c, n->output[0], emit_take(c, n, data->tensor, a, i, 1, n->output[0]));
    }
    return;
  }
  ox_fail(c, "Gather is supported as an embedding lookup (a [vocab, dim] constant indexed by "
             "an activation), with one constant index into an activation, and inside shape "
             "computations");
}

/* Slice of an activation with constant bounds and step 1: one split per sliced axis. */
/* x reshaped to dims d (a view), as a new tensor named `name`. */
static int reshape_named(OxCtx *c, const Onnx__NodeProto *n, int x, const OxSym *d, int nd,
                         const char *name) {
  GsAttrs at;
  graph_attrs_default(&at);
  encode_shape(c, d, nd, &at);
  int id = emit_op(c, n, OP_RESHAPE, &x, 1, &at, &name, 1);
  return c->g->ops[id].out[0];
}

/* Every step-th element of axis a from lo, count of them (Swin's patch merging takes x[:, 0::2]
 * and x[:, 1::2]): the axis viewed as [len/step, step], element lo % step of the inner one
 * taken (a split), the first `count` of the outer one, and the view folded back. */
static int take_strided(OxCtx *c, const Onnx__NodeProto *n, int x, OxSym *xs, int r, int a,
                        int64_t lo, int64_t count, int64_t step, const char *name) {
  int64_t len = ox_sym_int(c, xs[a], "sliced axis");
  if (len % step || lo >= step || r + 1 > GS_MAX_DIMS)
    ox_fail(c, "Slice with step %lld from %lld of an axis of %lld is not supported (the axis "
               "must be a multiple of the step, the start below it)",
            (long long)step, (long long)lo, (long long)len);
  OxSym d[GS_MAX_DIMS];
  for (int i = 0, j = 0; i < r; i++) {
    d[j++] = i == a ? (OxSym){(double)(len / step), 0} : xs[i];
    if (i == a) d[j++] = (OxSym){(double)step, 0};
  }
  int t = reshape_named(c, n, x, d, r + 1, arena_printf(c->scratch, "%s.view", name));
  t = emit_take(c, n, t, a + 1, lo, 1, arena_printf(c->scratch, "%s.phase", name));
  if (count < len / step) t = emit_take(c, n, t, a, 0, count, arena_printf(c->scratch, "%s.rows", name));
  for (int i = 0; i < r; i++) d[i] = i == a ? (OxSym){(double)count, 0} : xs[i];
  return reshape_named(c, n, t, d, r, name);
}

static void map_slice(OxCtx *c, const Onnx__NodeProto *n) {
  int x = in_act(c, n, 0);
  OxSym xs[GS_MAX_DIMS];
  int r = ox_act_shape(c, x, xs);
  int64_t v[4][GS_MAX_DIMS];
  int cnt[4] = {-1, -1, -1, -1};
  const char *attr[4] = {"starts", "ends", "axes", "steps"};
  for (int s = 0; s < 4; s++) {
    if (c->opset < 10) {
      if (s < 3) cnt[s] = ox_attr_ints(c, n, attr[s], v[s], GS_MAX_DIMS);
      continue;
    }
    OxVal *b = in_val(c, n, (size_t)s + 1);
    if (!b) continue;
    if (b->kind != VAL_CONST || !b->data || b->nelem > GS_MAX_DIMS)
      ox_fail(c, "Slice %s must be a small constant", attr[s]);
    cnt[s] = (int)b->nelem;
    for (int i = 0; i < b->nelem; i++) v[s][i] = ox_sym_int(c, b->data[i], attr[s]);
  }
  if (cnt[0] < 0 || cnt[1] != cnt[0] || (cnt[2] >= 0 && cnt[2] != cnt[0]) ||
      (cnt[3] >= 0 && cnt[3] != cnt[0]))
    ox_fail(c, "Slice needs starts and ends of the same length");
  int t = x;
  for (int i = 0; i < cnt[0]; i++) {
    int a = norm_axis(c, cnt[2] >= 0 ? v[2][i] : i, r, "axis");
    int64_t step = cnt[3] >= 0 ? v[3][i] : 1;
    if (step < 1) ox_fail(c, "Slice with step %lld on an activation", (long long)step);
    int64_t len = ox_sym_int(c, xs[a], "sliced axis"), lo = v[0][i], hi = v[1][i];
    if (lo < 0) lo += len;
    if (hi < 0) hi += len;
    lo = lo < 0 ? 0 : lo > len ? len : lo;
    hi = hi < lo ? lo : hi > len ? len : hi;
    if (lo == 0 && hi == len && step == 1) continue;
    const char *nm = i + 1 == cnt[0] ? n->output[0]
                                     : arena_printf(c->scratch, "%s.axis%d", n->output[0], a);
    int64_t count = (hi - lo + step - 1) / step;
    if (step > 1) t = take_strided(c, n, t, xs, r, a, lo, count, step, nm);
    else t = emit_take(c, n, t, a, lo, hi - lo, nm);
    xs[a] = (OxSym){(double)count, 0};
  }
  ox_bind_act(c, n->output[0], t);
}

static void map_expand(OxCtx *c, const Onnx__NodeProto *n) {
  OxVal *x = need_val(c, n, 0, "input");
  OxSym t[GS_MAX_DIMS], xs[GS_MAX_DIMS], out[GS_MAX_DIMS];
  int nt = target_shape(c, need_val(c, n, 1, "shape"), t, "expanded shape");
  int r;
  if (x->kind == VAL_ACT) {
    r = ox_act_shape(c, x->tensor, xs);
  } else {
    r = x->ndim;
    for (int i = 0; i < r; i++) xs[i] = (OxSym){(double)x->dims[i], 0};
  }
  int nd = r > nt ? r : nt;
  int same = r == nd;
  for (int i = 0; i < nd; i++) {
    OxSym a = i - (nd - r) >= 0 ? xs[i - (nd - r)] : (OxSym){1, 0};
    OxSym b = i - (nd - nt) >= 0 ? t[i - (nd - nt)] : (OxSym){1, 0};
    if (!b.n && b.v == 1) out[i] = a;
    else if (!a.n && a.v == 1) out[i] = b;
    else if (a.n == b.n && a.v == b.v) out[i] = a;
    else ox_fail(c, "cannot broadcast the input to the expanded shape (dim %d)", i);
    if (out[i].n != a.n || out[i].v != a.v) same = 0;
  }
  if (same) {
    alias(c, n->output[0], x);
    return;
  }
  if (x->kind == VAL_ACT)
    ox_fail(c, "Expand that broadcasts an activation is not supported");
  /* A constant broadcast over the batch (ViT's class token): an input of the expanded shape. */
  int64_t decl[GS_MAX_DIMS];
  for (int i = 0; i < nd; i++) {
    if (out[i].n && out[i].v != 1) ox_fail(c, "expanded shape has a multiple of the batch");
    decl[i] = out[i].n ? GS_DIM_N : ox_clamp_i64(out[i].v);
    if (decl[i] < 1 && decl[i] != GS_DIM_N) ox_fail(c, "expanded dim %d is %lld", i,
                                                    (long long)decl[i]);
  }
  if (nd < 1) ox_fail(c, "Expand to a scalar");
  int tid = graph_add_input(c->g, ox_gs_name(c, x->name), nd, decl, c->g->dtype);
  if (tid < 0) die("graph_add_input rejected '%s'", n->output[0]);
  c->g->tensors[tid].line = c->node + 1;
  c->g->tensors[tid].col = 1;
  ox_bind_act(c, n->output[0], tid);
}

typedef void (*OxMapFn)(OxCtx *c, const Onnx__NodeProto *n);
static const struct {
  const char *op;
  OxMapFn fn;
} map_table[] = {
    {"Conv", map_conv},
    {"BatchNormalization", map_batchnorm},
    {"Relu", map_relu},
    {"Clip", map_clip},
    {"Sigmoid", map_sigmoid},
    {"Tanh", map_tanh},
    {"HardSigmoid", map_hsigmoid},
    {"HardSwish", map_hswish},
    {"Pad", map_pad},
    {"Gelu", map_gelu},
    {"Gemm", map_gemm},
    {"MatMul", map_matmul},
    {"Add", map_add},
    {"Sub", map_sub},
    {"Mul", map_mul},
    {"Div", map_div},
    {"LayerNormalization", map_layernorm},
    {"Softmax", map_softmax},
    {"Transpose", map_transpose},
    {"Split", map_split},
    {"Concat", map_concat},
    {"GlobalAveragePool", map_gavgpool},
    {"MaxPool", map_maxpool},
    {"AveragePool", map_avgpool},
    {"Flatten", map_flatten},
    {"Resize", map_resize},
    {"ConvTranspose", map_convtranspose},
    {"Einsum", ox_map_einsum},
    {"Upsample", map_resize},
    {"Reshape", map_reshape},
    {"Squeeze", map_squeeze0},
    {"Unsqueeze", map_unsqueeze},
    {"Identity", map_identity},
    {"Dropout", map_identity},
    {"Cast", map_cast},
    {"ReduceMean", map_reducemean},
    {"Gather", map_gather},
    {"Slice", map_slice},
    {"Expand", map_expand},
};

void ox_map_node(OxCtx *c, const Onnx__NodeProto *n) {
  size_t k = 0, nt = sizeof map_table / sizeof map_table[0];
  while (k < nt && strcmp(map_table[k].op, n->op_type) != 0) k++;
  if (k < nt) {
    map_table[k].fn(c, n);
    return;
  }
  if (strcmp(n->op_type, "Erf") == 0 || strcmp(n->op_type, "Pow") == 0 ||
      strcmp(n->op_type, "Sqrt") == 0)
    ox_fail(c, "'%s' on activations is supported only inside the erf-GELU and layernorm "
               "patterns, and this node does not complete one (docs/onnx.md, Patterns)",
            n->op_type);
  ox_fail(c, "unsupported op '%s' (docs/onnx.md lists the supported ops)", n->op_type);
}

void ox_emit_fused(OxCtx *c, const Onnx__NodeProto *n, const OxFuse *f) {
  OxVal *x = ox_val(c, f->x);
  if (!x) ox_fail(c, "input '%s' is not defined before this node", f->x);
  int xt = x->kind == VAL_ACT ? x->tensor : const_act(c, x);
  if (f->kind == OP_LAYERNORM) emit_layernorm(c, n, xt, f->axis);
  else emit1(c, n, f->kind, xt, NULL);
}

