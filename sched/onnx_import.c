/* onnx_import.c — ONNX model -> graph IR, through the protobuf-c code generated at build time
 * from Debian's onnx.proto (docs/onnx.md is the user-facing description of what maps to what).
 *
 * Algorithm: unpack the ModelProto; register initializers as constants; classify the graph
 * inputs into activations and weights (export_params=False models pass weights as inputs);
 * run the pattern pre-pass (onnx_fuse.c); then walk the nodes once in their (topological)
 * order. Each node is either absorbed by a pattern, folded into constants (onnx_fold.c, shape
 * arithmetic with the symbolic batch carried as N), dropped as a no-op (Identity, Dropout,
 * Cast on activations) with its output aliased to its input, or mapped to GT ops by one
 * function per ONNX op. Shapes of activations, where a mapping needs them, come from
 * graph_infer() on the graph built so far, run at two batch sizes to tell N-dependent dims
 * from fixed ones; the IR's shape inference stays the only one.
 *
 * Invariants: every ONNX value name has at most one OxVal; an OxVal of kind VAL_ACT names a GT
 * tensor that exists; GT tensor names are sanitised to the .gtg name syntax and unique. User
 * errors longjmp to onnx_load() (ox_fail), which frees the graph and returns NULL: the importer
 * never exits and never crashes on malformed input.
 */
#include "onnx_imp.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- errors, maps, names */

_Noreturn void ox_abort(OxCtx *c) { longjmp(c->fail, 1); }

_Noreturn void ox_fail(OxCtx *c, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (c->node >= 0 && c->gp && (size_t)c->node < c->gp->n_node) {
    const Onnx__NodeProto *n = c->gp->node[c->node];
    const char *name = n->name && *n->name ? n->name
                       : n->n_output && n->output[0] ? n->output[0] : "";
    diag_error(c->d, c->path, c->node + 1, 1, NULL, "node '%s' (%s): %s", name,
               n->op_type ? n->op_type : "?", msg);
  } else {
    diag_error(c->d, c->path, 0, 0, NULL, "%s", msg);
  }
  ox_abort(c);
}

static uint32_t fnv1a(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

int ox_map_get(const OxMap *m, const char *key) {
  if (!m->cap) return -1;
  uint32_t mask = (uint32_t)m->cap - 1;
  for (uint32_t i = fnv1a(key) & mask;; i = (i + 1) & mask) {
    if (!m->keys[i]) return -1;
    if (strcmp(m->keys[i], key) == 0) return m->vals[i];
  }
}

void ox_map_put(OxCtx *c, OxMap *m, const char *key, int v) {
  if (2 * (m->len + 1) > m->cap) {
    OxMap n = {0};
    n.cap = m->cap ? 2 * m->cap : 64;
    n.keys = arena_alloc(c->scratch, (size_t)n.cap * sizeof *n.keys);
    n.vals = arena_alloc(c->scratch, (size_t)n.cap * sizeof *n.vals);
    for (int i = 0; i < m->cap; i++)
      if (m->keys[i]) ox_map_put(c, &n, m->keys[i], m->vals[i]);
    *m = n;
  }
  uint32_t mask = (uint32_t)m->cap - 1;
  uint32_t i = fnv1a(key) & mask;
  while (m->keys[i] && strcmp(m->keys[i], key) != 0) i = (i + 1) & mask;
  if (!m->keys[i]) {
    m->keys[i] = arena_strdup(c->scratch, key);
    m->len++;
  }
  m->vals[i] = v;
}

/* A GT tensor name for an ONNX value: [A-Za-z_][A-Za-z0-9_.]*, unique in the graph. ONNX
 * names like "/layer1/Conv_output_0" or "onnx::Add_12" become "layer1_Conv_output_0" and
 * "onnx__Add_12". */
static const char *gt_name(OxCtx *c, const char *onnx_name) {
  size_t len = strlen(onnx_name);
  char *s = arena_alloc(c->scratch, len + 24);
  size_t j = 0;
  for (size_t i = 0; i < len; i++) {
    char ch = onnx_name[i];
    int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
             ch == '_' || ch == '.';
    if (j == 0 && (ch == '/' || ch == '.')) continue; /* leading scope separators */
    s[j++] = ok ? ch : '_';
  }
  s[j] = 0;
  if (j == 0 || (s[0] >= '0' && s[0] <= '9')) {
    memmove(s + 1, s, j + 1);
    s[0] = 't';
    j++;
  }
  if (ox_map_get(&c->names, s) >= 0) {
    for (int k = 2;; k++) {
      snprintf(s + j, 24, "_%d", k);
      if (ox_map_get(&c->names, s) < 0) break;
    }
  }
  ox_map_put(c, &c->names, s, 1);
  return arena_strdup(c->g->arena, s);
}

/* ---------------------------------------------------------------- values */

OxVal *ox_val(OxCtx *c, const char *name) {
  int i = ox_map_get(&c->vals, name);
  return i < 0 ? NULL : c->val[i];
}

static OxVal *val_add(OxCtx *c, const char *name) {
  if (ox_map_get(&c->vals, name) >= 0) ox_fail(c, "value '%s' is defined twice", name);
  if (c->nval == c->cap_val) {
    int cap = c->cap_val ? 2 * c->cap_val : 256;
    OxVal **nv = arena_alloc(c->scratch, (size_t)cap * sizeof *nv);
    if (c->nval) memcpy(nv, c->val, (size_t)c->nval * sizeof *nv);
    c->val = nv;
    c->cap_val = cap;
  }
  OxVal *v = arena_alloc(c->scratch, sizeof *v);
  v->name = arena_strdup(c->scratch, name);
  c->val[c->nval] = v;
  ox_map_put(c, &c->vals, name, c->nval++);
  return v;
}

static void bind_act(OxCtx *c, const char *name, int tensor) {
  OxVal *v = val_add(c, name);
  v->kind = VAL_ACT;
  v->tensor = tensor;
}

OxVal *ox_bind_const(OxCtx *c, const char *name, const OxVal *src) {
  OxVal *v = val_add(c, name);
  const char *keep = v->name;
  *v = *src;
  v->kind = VAL_CONST;
  v->name = keep;
  v->input_tensor = 0;
  return v;
}

OxVal *ox_new_const(OxCtx *c, const char *name, int ndim, const int64_t *dims, int is_int) {
  OxVal tmp = {0};
  if (ndim > GT_MAX_DIMS) ox_fail(c, "constant '%s' has rank %d (at most %d)", name, ndim,
                                  (int)GT_MAX_DIMS);
  tmp.ndim = ndim;
  tmp.nelem = 1;
  for (int i = 0; i < ndim; i++) {
    tmp.dims[i] = dims[i];
    tmp.nelem *= dims[i];
  }
  tmp.is_int = is_int;
  if (tmp.nelem > OX_MAX_CONST_DATA)
    ox_fail(c, "constant '%s' has %lld elements, too many to fold", name, (long long)tmp.nelem);
  tmp.data = arena_alloc(c->scratch, (size_t)(tmp.nelem ? tmp.nelem : 1) * sizeof(OxSym));
  return ox_bind_const(c, name, &tmp);
}

int ox_is_weight_name(const OxCtx *c, const char *name) {
  int i = ox_map_get(&c->vals, name);
  return i >= 0 && c->val[i]->kind == VAL_CONST;
}

/* ---------------------------------------------------------------- tensors */

static int elem_is_int(int32_t t) {
  switch (t) {
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8: case ONNX__TENSOR_PROTO__DATA_TYPE__INT8:
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT16: case ONNX__TENSOR_PROTO__DATA_TYPE__INT16:
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: case ONNX__TENSOR_PROTO__DATA_TYPE__INT64:
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT32: case ONNX__TENSOR_PROTO__DATA_TYPE__UINT64:
  case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL: return 1;
  default: return 0;
  }
}

static int elem_size(int32_t t) {
  switch (t) {
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8: case ONNX__TENSOR_PROTO__DATA_TYPE__INT8:
  case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL: return 1;
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT16: case ONNX__TENSOR_PROTO__DATA_TYPE__INT16:
  case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16: case ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16:
    return 2;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: case ONNX__TENSOR_PROTO__DATA_TYPE__UINT32:
  case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: return 4;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: case ONNX__TENSOR_PROTO__DATA_TYPE__UINT64:
  case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: return 8;
  default: return 0;
  }
}

static double half_to_double(uint32_t h) {
  uint32_t e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? ldexp((double)m, -24) : e == 31 ? (m ? NAN : INFINITY)
                                                      : ldexp((double)(m | 1024), (int)e - 25);
  return (h & 0x8000) ? -v : v;
}

static double bf16_to_double(uint32_t b) {
  uint32_t bits = b << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

/* One little-endian element of raw_data. */
static double raw_elem(const uint8_t *p, int32_t t) {
  uint64_t u = 0;
  int sz = elem_size(t);
  for (int i = sz - 1; i >= 0; i--) u = (u << 8) | p[i];
  switch (t) {
  case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: {
    uint32_t b = (uint32_t)u;
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
  }
  case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: {
    double f;
    memcpy(&f, &u, sizeof f);
    return f;
  }
  case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16: return half_to_double((uint32_t)u);
  case ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16: return bf16_to_double((uint32_t)u);
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT8: return (double)(int8_t)u;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT16: return (double)(int16_t)u;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: return (double)(int32_t)u;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: return (double)(int64_t)u;
  default: return (double)u;
  }
}

void ox_decode_tensor(OxCtx *c, const Onnx__TensorProto *t, const char *name, OxVal *v) {
  memset(v, 0, sizeof *v);
  v->kind = VAL_CONST;
  if (t->n_dims > GT_MAX_DIMS)
    ox_fail(c, "tensor '%s' has rank %zu (at most %d)", name, t->n_dims, (int)GT_MAX_DIMS);
  int32_t dt = t->has_data_type ? t->data_type : 0;
  int sz = elem_size(dt);
  if (!sz) ox_fail(c, "tensor '%s' has unsupported element type %d", name, (int)dt);
  v->ndim = (int)t->n_dims;
  v->nelem = 1;
  for (int i = 0; i < v->ndim; i++) {
    if (t->dims[i] < 0 || (t->dims[i] > 0 && v->nelem > INT64_MAX / 16 / t->dims[i]))
      ox_fail(c, "tensor '%s' has a bad dimension %lld", name, (long long)t->dims[i]);
    v->dims[i] = t->dims[i];
    v->nelem *= t->dims[i];
  }
  v->is_int = elem_is_int(dt);
  if (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
    return; /* weights in an external file: dims are all we need */
  size_t have;
  if (t->has_raw_data) have = t->raw_data.len / (size_t)sz;
  else if (dt == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT) have = t->n_float_data;
  else if (dt == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE) have = t->n_double_data;
  else if (dt == ONNX__TENSOR_PROTO__DATA_TYPE__INT64) have = t->n_int64_data;
  else if (dt == ONNX__TENSOR_PROTO__DATA_TYPE__UINT32 || dt == ONNX__TENSOR_PROTO__DATA_TYPE__UINT64)
    have = t->n_uint64_data;
  else have = t->n_int32_data;
  if ((t->has_raw_data && t->raw_data.len % (size_t)sz) || have != (size_t)v->nelem)
    ox_fail(c, "tensor '%s' holds %zu elements of data, its shape needs %lld", name, have,
            (long long)v->nelem);
  if (v->nelem > OX_MAX_CONST_DATA) return;
  v->data = arena_alloc(c->scratch, (size_t)(v->nelem ? v->nelem : 1) * sizeof(OxSym));
  for (int64_t i = 0; i < v->nelem; i++) {
    double x;
    if (t->has_raw_data) x = raw_elem(t->raw_data.data + i * sz, dt);
    else if (dt == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT) x = t->float_data[i];
    else if (dt == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE) x = t->double_data[i];
    else if (dt == ONNX__TENSOR_PROTO__DATA_TYPE__INT64) x = (double)t->int64_data[i];
    else if (dt == ONNX__TENSOR_PROTO__DATA_TYPE__UINT32 || dt == ONNX__TENSOR_PROTO__DATA_TYPE__UINT64)
      x = (double)t->uint64_data[i];
    else if (dt == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16)
      x = half_to_double((uint32_t)t->int32_data[i] & 0xffff);
    else if (dt == ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16)
      x = bf16_to_double((uint32_t)t->int32_data[i] & 0xffff);
    else x = t->int32_data[i];
    v->data[i].v = x;
  }
}

/* ---------------------------------------------------------------- attributes */

const Onnx__AttributeProto *ox_attr(const Onnx__NodeProto *n, const char *name) {
  for (size_t i = 0; i < n->n_attribute; i++)
    if (n->attribute[i]->name && strcmp(n->attribute[i]->name, name) == 0) return n->attribute[i];
  return NULL;
}

int64_t ox_attr_i(const Onnx__NodeProto *n, const char *name, int64_t def) {
  const Onnx__AttributeProto *a = ox_attr(n, name);
  return a && a->has_i ? a->i : def;
}

float ox_attr_f(const Onnx__NodeProto *n, const char *name, float def) {
  const Onnx__AttributeProto *a = ox_attr(n, name);
  return a && a->has_f ? a->f : def;
}

/* Returns the number of ints (-1 when the attribute is absent); more than max is an error. */
int ox_attr_ints(OxCtx *c, const Onnx__NodeProto *n, const char *name, int64_t *out, int max) {
  const Onnx__AttributeProto *a = ox_attr(n, name);
  if (!a) return -1;
  if (a->n_ints > (size_t)max)
    ox_fail(c, "attribute '%s' has %zu values (at most %d)", name, a->n_ints, max);
  for (size_t i = 0; i < a->n_ints; i++) out[i] = a->ints[i];
  return (int)a->n_ints;
}

static const char *attr_s(const Onnx__NodeProto *n, const char *name, const char *def) {
  const Onnx__AttributeProto *a = ox_attr(n, name);
  static char buf[64];
  if (!a || !a->has_s) return def;
  size_t len = a->s.len < sizeof buf - 1 ? a->s.len : sizeof buf - 1;
  memcpy(buf, a->s.data, len);
  buf[len] = 0;
  return buf;
}

/* ---------------------------------------------------------------- shapes */

int64_t ox_sym_int(OxCtx *c, OxSym s, const char *what) {
  if (s.n) ox_fail(c, "%s depends on the symbolic batch N where a number is needed", what);
  if (s.v >= 9.2e18) return INT64_MAX;
  if (s.v <= -9.2e18) return INT64_MIN;
  return (int64_t)s.v;
}

/* Infers the graph built so far at batch 3 and at batch 5 (once per graph change): a dim that
 * is the same in both is fixed; one that scales 3:5 is k*N. */
static void refresh_shapes(OxCtx *c) {
  GtGraph *g = c->g;
  if (c->cache_nops == g->nops && c->cache_ntensors == g->ntensors && c->dims3) return;
  c->dims3 = arena_alloc(c->scratch, (size_t)g->ntensors * sizeof *c->dims3);
  c->dims5 = arena_alloc(c->scratch, (size_t)g->ntensors * sizeof *c->dims5);
  graph_fill_outputs(g);
  for (int pass = 0; pass < 2; pass++) {
    int64_t(*dst)[GT_MAX_DIMS] = pass ? c->dims5 : c->dims3;
    if (graph_infer(g, pass ? 5 : 3, c->d) != 0) ox_abort(c);
    for (int t = 0; t < g->ntensors; t++)
      memcpy(dst[t], g->tensors[t].dim, sizeof dst[t]);
  }
  c->cache_nops = g->nops;
  c->cache_ntensors = g->ntensors;
}

int ox_act_shape(OxCtx *c, int t, OxSym *dims) {
  const GtTensor *T = &c->g->tensors[t];
  if (T->producer < 0) {
    for (int i = 0; i < T->ndim; i++) {
      dims[i].n = T->decl[i] == GT_DIM_N;
      dims[i].v = T->decl[i] == GT_DIM_N ? 1.0 : (double)T->decl[i];
    }
    return T->ndim;
  }
  refresh_shapes(c);
  for (int i = 0; i < T->ndim; i++) {
    int64_t a = c->dims3[t][i], b = c->dims5[t][i];
    if (a == b) {
      dims[i].v = (double)a;
      dims[i].n = 0;
    } else if (a % 3 == 0 && b == a / 3 * 5) {
      dims[i].v = (double)(a / 3);
      dims[i].n = 1;
    } else {
      ox_fail(c, "dimension %d of '%s' is not a multiple of the batch", i, T->name);
    }
  }
  return T->ndim;
}

static int64_t act_dim(OxCtx *c, int t, int axis, const char *what) {
  OxSym d[GT_MAX_DIMS];
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

/* Encodes a symbolic shape as an IR reshape target: N -> GT_DIM_N, k*N (k != 1) -> -2. */
static void encode_shape(OxCtx *c, const OxSym *d, int nd, GtAttrs *at) {
  int infer = 0;
  if (nd > GT_MAX_DIMS) ox_fail(c, "result has rank %d (at most %d)", nd, (int)GT_MAX_DIMS);
  at->nshape = nd;
  for (int i = 0; i < nd; i++) {
    if (d[i].n && d[i].v == 1.0) {
      at->shape[i] = GT_DIM_N;
    } else if (d[i].n) {
      if (infer++) ox_fail(c, "result shape has two batch-dependent dimensions");
      at->shape[i] = -2;
    } else {
      at->shape[i] = (int64_t)d[i].v;
    }
  }
}

/* ---------------------------------------------------------------- emitting ops */

static void require_unused_extra_outputs(OxCtx *c, const Onnx__NodeProto *n);

static int emit_op(OxCtx *c, const Onnx__NodeProto *n, GtOpKind k, const int *in, int nin,
                   const GtAttrs *at, const char *const *names, int nout) {
  const char *gn[GT_MAX_OPERANDS];
  gt_assert(nout >= 1 && nout <= GT_MAX_OPERANDS);
  for (int i = 0; i < nout; i++) gn[i] = gt_name(c, names[i]);
  int id = graph_add_op(c->g, k, in, nin, gn, nout, at);
  if (id < 0) die("graph_add_op rejected %s with %d operands", opkind_name(k), nin);
  GtOp *op = &c->g->ops[id];
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
static int emit(OxCtx *c, const Onnx__NodeProto *n, GtOpKind k, const int *in, int nin,
                const GtAttrs *at) {
  int nout = k == OP_SPLIT ? (int)n->n_output : 1;
  if (nout > GT_MAX_OPERANDS) ox_fail(c, "%d outputs (at most %d)", nout, (int)GT_MAX_OPERANDS);
  if (k != OP_SPLIT) require_unused_extra_outputs(c, n);
  int id = emit_op(c, n, k, in, nin, at, (const char *const *)n->output, nout);
  for (int i = 0; i < nout; i++) bind_act(c, n->output[i], c->g->ops[id].out[i]);
  return id;
}

static int emit1(OxCtx *c, const Onnx__NodeProto *n, GtOpKind k, int x, const GtAttrs *at) {
  GtAttrs def;
  if (!at) {
    attrs_default(&def);
    at = &def;
  }
  return emit(c, n, k, &x, 1, at);
}

/* A constant used where the IR needs a tensor becomes a graph input holding it (docs/onnx.md,
 * "Constant operands"); one input per constant however often it is used. */
static int const_act(OxCtx *c, OxVal *v) {
  if (v->input_tensor) return v->input_tensor - 1;
  int64_t decl[GT_MAX_DIMS];
  int nd = v->ndim;
  for (int i = 0; i < nd; i++) decl[i] = v->dims[i];
  if (nd == 0) {
    nd = 1;
    decl[0] = 1;
  }
  for (int i = 0; i < nd; i++)
    if (decl[i] < 1) ox_fail(c, "constant '%s' is empty", v->name);
  int t = graph_add_input(c->g, gt_name(c, v->name), nd, decl, c->g->dtype);
  if (t < 0) die("graph_add_input rejected constant '%s'", v->name);
  c->g->tensors[t].line = c->node + 1;
  c->g->tensors[t].col = 1;
  v->input_tensor = t + 1;
  return t;
}

static OxVal *in_val(OxCtx *c, const Onnx__NodeProto *n, size_t i) {
  if (i >= n->n_input || !n->input[i][0]) return NULL;
  OxVal *v = ox_val(c, n->input[i]);
  gt_assert(v); /* checked for every input before mapping */
  return v;
}

static OxVal *need_val(OxCtx *c, const Onnx__NodeProto *n, size_t i, const char *what) {
  OxVal *v = in_val(c, n, i);
  if (!v) ox_fail(c, "missing input %zu (%s)", i, what);
  return v;
}

static int in_act(OxCtx *c, const Onnx__NodeProto *n, size_t i) {
  OxVal *v = need_val(c, n, i, "data");
  return v->kind == VAL_ACT ? v->tensor : const_act(c, v);
}

static OxVal *in_weight(OxCtx *c, const Onnx__NodeProto *n, size_t i, const char *what) {
  OxVal *v = need_val(c, n, i, what);
  if (v->kind != VAL_CONST)
    ox_fail(c, "input %zu (%s) '%s' is computed by the graph; it must be an initializer or a "
               "weight input", i, what, v->name);
  return v;
}

static void alias(OxCtx *c, const char *out, const OxVal *src) {
  if (src->kind == VAL_ACT) bind_act(c, out, src->tensor);
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

static void map_unary(OxCtx *c, const Onnx__NodeProto *n, GtOpKind k) {
  require_unused_extra_outputs(c, n);
  GtAttrs at;
  attrs_default(&at);
  int x = in_act(c, n, 0);
  int id = emit_op(c, n, k, &x, 1, &at, (const char *const *)n->output, 1);
  bind_act(c, n->output[0], c->g->ops[id].out[0]);
}

static void map_relu(OxCtx *c, const Onnx__NodeProto *n) { map_unary(c, n, OP_RELU); }
static void map_sigmoid(OxCtx *c, const Onnx__NodeProto *n) { map_unary(c, n, OP_SIGMOID); }
static void map_tanh(OxCtx *c, const Onnx__NodeProto *n) { map_unary(c, n, OP_TANH); }

static void map_identity(OxCtx *c, const Onnx__NodeProto *n) {
  require_unused_extra_outputs(c, n); /* Dropout's mask */
  alias(c, n->output[0], need_val(c, n, 0, "data"));
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
  const char *ap = attr_s(n, "auto_pad", "NOTSET");
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
  int x = in_act(c, n, 0);
  OxVal *w = in_weight(c, n, 1, "weight");
  if (w->ndim != 3 && w->ndim != 4)
    ox_fail(c, "only 1-D and 2-D convolutions are supported (the weight has rank %d)", w->ndim);
  int sp = w->ndim - 2;
  OxSym xs[GT_MAX_DIMS];
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
  GtAttrs at;
  attrs_default(&at);
  at.units = w->dims[0];
  at.groups = to_int(c, group, "group");
  OxVal *b = in_val(c, n, 2);
  if (b && (b->kind != VAL_CONST || b->nelem != w->dims[0]))
    ox_fail(c, "bias must be a constant of %lld elements", (long long)w->dims[0]);
  at.bias = b != NULL; /* attrs_default() assumes PyTorch's bias=1 */
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

static void map_pool(OxCtx *c, const Onnx__NodeProto *n, GtOpKind kind) {
  require_unused_extra_outputs(c, n); /* MaxPool's indices */
  int x = in_act(c, n, 0);
  OxSym xs[GT_MAX_DIMS];
  int xr = ox_act_shape(c, x, xs);
  int64_t k[2], s[2], dl[2], pads[4], in[2];
  int nk = ox_attr_ints(c, n, "kernel_shape", k, 2);
  if (nk != 2 || xr != 4) ox_fail(c, "only 2-D pooling over NCHW is supported");
  for (int i = 0; i < 2; i++) in[i] = ox_sym_int(c, xs[2 + i], "spatial size");
  spatial_ints(c, n, "strides", 2, 1, s);
  spatial_ints(c, n, "dilations", 2, 1, dl);
  if (dl[0] != 1 || dl[1] != 1) ox_fail(c, "dilated pooling is not supported");
  pads_for(c, n, 2, in, k, s, dl, pads);
  if (ox_attr_i(n, "ceil_mode", 0)) {
    /* ceil((L - k) / s) + 1 outputs; the last window must start inside the input or the
     * begin padding (PyTorch and ONNX Runtime). Express it as extra end padding. */
    for (int i = 0; i < 2; i++) {
      int64_t span = in[i] + pads[i] + pads[2 + i] - k[i];
      if (span < 0) continue;
      int64_t out = ceil_div64(span, s[i]) + 1;
      if ((out - 1) * s[i] >= in[i] + pads[i]) out--;
      int64_t need = (out - 1) * s[i] + k[i] - (in[i] + pads[i] + pads[2 + i]);
      if (need > 0) pads[2 + i] += need;
    }
  }
  GtAttrs at;
  attrs_default(&at);
  for (int i = 0; i < 2; i++) {
    at.kernel[i] = to_int(c, k[i], "kernel");
    at.stride[i] = to_int(c, s[i], "stride");
  }
  for (int i = 0; i < 4; i++) at.pad[i] = to_int(c, pads[i], "pad");
  int id = emit_op(c, n, kind, &x, 1, &at, (const char *const *)n->output, 1);
  bind_act(c, n->output[0], c->g->ops[id].out[0]);
}

static void map_maxpool(OxCtx *c, const Onnx__NodeProto *n) { map_pool(c, n, OP_MAXPOOL); }
static void map_avgpool(OxCtx *c, const Onnx__NodeProto *n) { map_pool(c, n, OP_AVGPOOL); }

static void map_gavgpool(OxCtx *c, const Onnx__NodeProto *n) {
  int x = in_act(c, n, 0);
  OxSym xs[GT_MAX_DIMS];
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
  bind_act(c, n->output[0], c->g->ops[id].out[0]);
}

static void emit_layernorm(OxCtx *c, const Onnx__NodeProto *n, int x, int64_t axis) {
  OxSym xs[GT_MAX_DIMS];
  int r = ox_act_shape(c, x, xs);
  if (norm_axis(c, axis, r, "normalised axis") != r - 1)
    ox_fail(c, "layer normalisation over axis %lld; only the last axis is supported",
            (long long)axis);
  int id = emit_op(c, n, OP_LAYERNORM, &x, 1, NULL, (const char *const *)n->output, 1);
  bind_act(c, n->output[0], c->g->ops[id].out[0]);
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
  OxSym xs[GT_MAX_DIMS];
  int r = ox_act_shape(c, x, xs);
  int64_t axis = ox_attr_i(n, "axis", c->opset < 13 ? 1 : -1);
  int a = norm_axis(c, axis, r, "axis");
  if (c->opset < 13 && a != r - 1) /* before opset 13 Softmax flattens [axis:] into one */
    ox_fail(c, "Softmax (opset %lld) over the flattened axes %d.. is not supported",
            (long long)c->opset, a);
  GtAttrs at;
  attrs_default(&at);
  at.axis = a;
  emit1(c, n, OP_SOFTMAX, x, &at);
}

static void emit_reshape(OxCtx *c, const Onnx__NodeProto *n, int x, const OxSym *d, int nd) {
  GtAttrs at;
  attrs_default(&at);
  encode_shape(c, d, nd, &at);
  emit1(c, n, OP_RESHAPE, x, &at);
}

static void map_flatten(OxCtx *c, const Onnx__NodeProto *n) {
  int x = in_act(c, n, 0);
  OxSym xs[GT_MAX_DIMS], out[2] = {{1, 0}, {1, 0}};
  int r = ox_act_shape(c, x, xs);
  int64_t axis = ox_attr_i(n, "axis", 1);
  int a = axis == r ? r : norm_axis(c, axis, r, "axis");
  for (int i = 0; i < r; i++) {
    OxSym *o = &out[i >= a];
    o->v *= xs[i].v;
    o->n += xs[i].n;
  }
  emit_reshape(c, n, x, out, 2);
}

/* Symbolic shape of a Reshape/Expand target given as a constant. */
static int target_shape(OxCtx *c, const OxVal *t, OxSym *out, const char *what) {
  if (t->kind != VAL_CONST || !t->data)
    ox_fail(c, "the %s is computed from activations, not from shapes and constants", what);
  if (t->ndim != 1 || t->nelem > GT_MAX_DIMS)
    ox_fail(c, "the %s must be a 1-D constant of at most %d elements", what, (int)GT_MAX_DIMS);
  for (int i = 0; i < t->nelem; i++) out[i] = t->data[i];
  return (int)t->nelem;
}

static void map_reshape(OxCtx *c, const Onnx__NodeProto *n) {
  int x = in_act(c, n, 0);
  OxSym xs[GT_MAX_DIMS], d[GT_MAX_DIMS];
  int r = ox_act_shape(c, x, xs);
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
  emit_reshape(c, n, x, d, nd);
}

/* Squeeze/Unsqueeze of an activation: a reshape. */
static int axes_of(OxCtx *c, const Onnx__NodeProto *n, int64_t *axes) {
  if (c->opset < 13) return ox_attr_ints(c, n, "axes", axes, GT_MAX_DIMS);
  OxVal *a = in_val(c, n, 1);
  if (!a) return -1;
  if (a->kind != VAL_CONST || !a->data || a->nelem > GT_MAX_DIMS)
    ox_fail(c, "axes must be a small constant");
  for (int i = 0; i < a->nelem; i++) axes[i] = ox_sym_int(c, a->data[i], "axis");
  return (int)a->nelem;
}

static void map_squeeze(OxCtx *c, const Onnx__NodeProto *n, int unsq) {
  int x = in_act(c, n, 0);
  OxSym xs[GT_MAX_DIMS], d[GT_MAX_DIMS];
  int r = ox_act_shape(c, x, xs);
  int64_t axes[GT_MAX_DIMS];
  int na = axes_of(c, n, axes);
  int nd = unsq ? r + (na < 0 ? 0 : na) : r;
  int mark[GT_MAX_DIMS + GT_MAX_DIMS] = {0};
  if (nd > GT_MAX_DIMS) ox_fail(c, "result has rank %d (at most %d)", nd, (int)GT_MAX_DIMS);
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
  emit_reshape(c, n, x, d, k);
}

static void map_unsqueeze(OxCtx *c, const Onnx__NodeProto *n) { map_squeeze(c, n, 1); }
static void map_squeeze0(OxCtx *c, const Onnx__NodeProto *n) { map_squeeze(c, n, 0); }

static void map_transpose(OxCtx *c, const Onnx__NodeProto *n) {
  int x = in_act(c, n, 0);
  OxSym xs[GT_MAX_DIMS];
  int r = ox_act_shape(c, x, xs);
  int64_t perm[GT_MAX_DIMS];
  int np = ox_attr_ints(c, n, "perm", perm, GT_MAX_DIMS);
  GtAttrs at;
  attrs_default(&at);
  at.nperm = r;
  if (np >= 0 && np != r) ox_fail(c, "perm has %d entries for rank %d", np, r);
  for (int i = 0; i < r; i++)
    at.perm[i] = np < 0 ? r - 1 - i : norm_axis(c, perm[i], r, "perm entry");
  emit1(c, n, OP_TRANSPOSE, x, &at);
}

static void map_split(OxCtx *c, const Onnx__NodeProto *n) {
  int x = in_act(c, n, 0);
  OxSym xs[GT_MAX_DIMS];
  int r = ox_act_shape(c, x, xs);
  int a = norm_axis(c, ox_attr_i(n, "axis", 0), r, "axis");
  int nout = (int)n->n_output;
  if (nout > GT_MAX_OPERANDS) ox_fail(c, "%d outputs (at most %d)", nout, (int)GT_MAX_OPERANDS);
  int64_t len = ox_sym_int(c, xs[a], "split axis"), sizes[GT_MAX_OPERANDS], sum = 0;
  int ns;
  if (c->opset < 13) {
    ns = ox_attr_ints(c, n, "split", sizes, GT_MAX_OPERANDS);
  } else {
    OxVal *s = in_val(c, n, 1);
    ns = -1;
    if (s) {
      if (s->kind != VAL_CONST || !s->data || s->nelem > GT_MAX_OPERANDS)
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
  GtAttrs at;
  attrs_default(&at);
  at.axis = a;
  at.nsizes = ns;
  for (int i = 0; i < ns; i++) {
    if (sizes[i] <= 0) ox_fail(c, "split size %lld", (long long)sizes[i]);
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
  OxSym xs[GT_MAX_DIMS];
  int r = ox_act_shape(c, in[0], xs);
  GtAttrs at;
  attrs_default(&at);
  at.axis = norm_axis(c, ox_attr_i(n, "axis", 0), r, "axis");
  /* More operands than the IR allows: concatenate in chunks of GT_MAX_OPERANDS, then the
   * chunks (the extra copies are documented in docs/onnx.md). */
  while (nin > GT_MAX_OPERANDS) {
    int m = 0;
    for (int i = 0; i < nin; i += GT_MAX_OPERANDS) {
      int k = nin - i < GT_MAX_OPERANDS ? nin - i : GT_MAX_OPERANDS;
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
  GtOp *op = &c->g->ops[p];
  if ((op->kind != OP_DENSE && op->kind != OP_CONV2D && op->kind != OP_CONV1D) || op->at.bias)
    return 0;
  if (b->nelem != op->at.units || consumers(c, x->name) != 1) return 0;
  int feat = op->kind == OP_DENSE ? b->ndim - 1 : b->ndim - (op->kind == OP_CONV2D ? 3 : 2);
  if (feat < 0) return 0;
  for (int i = 0; i < b->ndim; i++)
    if (i != feat && b->dims[i] != 1) return 0;
  OxSym xs[GT_MAX_DIMS];
  int r = ox_act_shape(c, x->tensor, xs);
  if (b->ndim > r) return 0;
  op->at.bias = 1;
  bind_act(c, n->output[0], x->tensor);
  return 1;
}

static void map_binary(OxCtx *c, const Onnx__NodeProto *n, GtOpKind k) {
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
    OxSym xs[GT_MAX_DIMS];
    int r = ox_act_shape(c, x->tensor, xs);
    if (all && cst->ndim <= r) {
      for (int i = 0; i < cst->ndim; i++)
        if (cst->dims[i] != 1) all = 0;
      if (all) {
        bind_act(c, n->output[0], x->tensor);
        return;
      }
    }
  }
  int in[2] = {in_act(c, n, 0), in_act(c, n, 1)};
  GtAttrs at;
  attrs_default(&at);
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
  GtAttrs at;
  attrs_default(&at);
  at.units = units;
  at.bias = bias;
  emit1(c, n, OP_DENSE, x, &at);
}

static void map_matmul(OxCtx *c, const Onnx__NodeProto *n) {
  OxVal *a = need_val(c, n, 0, "A"), *b = need_val(c, n, 1, "B");
  if (a->kind == VAL_ACT && b->kind == VAL_CONST && b->ndim == 2) {
    emit_dense(c, n, a->tensor, b->dims[0], b->dims[1], 0);
    return;
  }
  int in[2] = {in_act(c, n, 0), in_act(c, n, 1)};
  GtAttrs at;
  attrs_default(&at);
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
  OxSym xs[GT_MAX_DIMS];
  int r = ox_act_shape(c, x, xs);
  int64_t axes[GT_MAX_DIMS];
  int na = c->opset < 18 ? ox_attr_ints(c, n, "axes", axes, GT_MAX_DIMS) : axes_of(c, n, axes);
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
  GtAttrs at;
  attrs_default(&at);
  int id = emit_op(c, n, OP_GAVGPOOL, &x, 1, &at, &nm, 1);
  emit_reshape(c, n, c->g->ops[id].out[0], xs, 2);
}

static void map_gather(OxCtx *c, const Onnx__NodeProto *n) {
  OxVal *data = need_val(c, n, 0, "data"), *idx = need_val(c, n, 1, "indices");
  if (data->kind == VAL_CONST && idx->kind == VAL_ACT && data->ndim == 2 &&
      ox_attr_i(n, "axis", 0) == 0) {
    GtAttrs at;
    attrs_default(&at);
    at.vocab = data->dims[0];
    at.dim = data->dims[1];
    at.bag = 1;
    emit1(c, n, OP_EMBEDDING, idx->tensor, &at);
    return;
  }
  ox_fail(c, "Gather is supported as an embedding lookup (a [vocab, dim] constant indexed by "
             "an activation) and inside shape computations");
}

static void map_expand(OxCtx *c, const Onnx__NodeProto *n) {
  OxVal *x = need_val(c, n, 0, "input");
  OxSym t[GT_MAX_DIMS], xs[GT_MAX_DIMS], out[GT_MAX_DIMS];
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
  int64_t decl[GT_MAX_DIMS];
  for (int i = 0; i < nd; i++) {
    if (out[i].n && out[i].v != 1) ox_fail(c, "expanded shape has a multiple of the batch");
    decl[i] = out[i].n ? GT_DIM_N : (int64_t)out[i].v;
  }
  if (nd < 1) ox_fail(c, "Expand to a scalar");
  int tid = graph_add_input(c->g, gt_name(c, n->output[0]), nd, decl, c->g->dtype);
  if (tid < 0) die("graph_add_input rejected '%s'", n->output[0]);
  c->g->tensors[tid].line = c->node + 1;
  c->g->tensors[tid].col = 1;
  bind_act(c, n->output[0], tid);
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
    {"Reshape", map_reshape},
    {"Squeeze", map_squeeze0},
    {"Unsqueeze", map_unsqueeze},
    {"Identity", map_identity},
    {"Dropout", map_identity},
    {"Cast", map_identity},
    {"ReduceMean", map_reducemean},
    {"Gather", map_gather},
    {"Expand", map_expand},
};

/* ---------------------------------------------------------------- graph inputs */

static GtDtype map_dtype(OxCtx *c, int32_t t, const char *name) {
  switch (t) {
  case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: return DT_FP32;
  case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16: return DT_FP16;
  case ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16: return DT_BF16;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT8: case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8:
  case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL: return DT_INT8;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT16: case ONNX__TENSOR_PROTO__DATA_TYPE__UINT16:
    return DT_INT16;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: case ONNX__TENSOR_PROTO__DATA_TYPE__INT64:
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT32: case ONNX__TENSOR_PROTO__DATA_TYPE__UINT64:
    return DT_INT32; /* indices; the IR has no 64-bit type */
  default: ox_fail(c, "input '%s' has unsupported element type %d", name, (int)t);
  }
}

static const Onnx__TypeProto__Tensor *tensor_type(OxCtx *c, const Onnx__ValueInfoProto *vi) {
  const char *name = vi->name ? vi->name : "";
  if (!vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
      !vi->type->tensor_type)
    ox_fail(c, "graph input '%s' is not a tensor", name);
  const Onnx__TypeProto__Tensor *tt = vi->type->tensor_type;
  if (!tt->shape) ox_fail(c, "graph input '%s' has no shape", name);
  if (tt->shape->n_dim > GT_MAX_DIMS)
    ox_fail(c, "graph input '%s' has rank %zu (at most %d)", name, tt->shape->n_dim,
            (int)GT_MAX_DIMS);
  return tt;
}

static int has_symbolic_dim(const Onnx__TypeProto__Tensor *tt) {
  for (size_t i = 0; i < tt->shape->n_dim; i++)
    if (tt->shape->dim[i]->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
      return 1;
  return 0;
}

/* Input slots that hold weights (export_params=False exports pass them as graph inputs). */
static int feeds_weight_slot(const OxCtx *c, const char *name) {
  static const struct {
    const char *op;
    unsigned slots; /* bit i: input i is a weight */
  } slots[] = {
      {"Conv", 6}, {"BatchNormalization", 30}, {"Gemm", 6}, {"MatMul", 2},
      {"LayerNormalization", 6}, {"Gather", 1},
  };
  for (size_t i = 0; i < c->gp->n_node; i++) {
    const Onnx__NodeProto *n = c->gp->node[i];
    for (size_t s = 0; s < sizeof slots / sizeof slots[0]; s++) {
      if (!n->op_type || strcmp(n->op_type, slots[s].op) != 0) continue;
      for (size_t j = 0; j < n->n_input && j < 8; j++)
        if ((slots[s].slots >> j & 1) && strcmp(n->input[j], name) == 0) return 1;
    }
  }
  return 0;
}

static void import_inputs(OxCtx *c) {
  GtGraph *g = c->g;
  const Onnx__GraphProto *gp = c->gp;
  int first_float = 1;
  /* the batch is symbolic when any activation input has a symbolic dim */
  for (size_t i = 0; i < gp->n_input; i++) {
    const Onnx__ValueInfoProto *vi = gp->input[i];
    if (!vi->name || ox_val(c, vi->name)) continue;
    if (has_symbolic_dim(tensor_type(c, vi))) c->symbolic = 1;
  }
  for (size_t i = 0; i < gp->n_input; i++) {
    const Onnx__ValueInfoProto *vi = gp->input[i];
    if (!vi->name || !*vi->name) ox_fail(c, "graph input %zu has no name", i);
    if (ox_val(c, vi->name)) continue; /* an initializer listed as input (IR < 4) */
    const Onnx__TypeProto__Tensor *tt = tensor_type(c, vi);
    int32_t et = tt->has_elem_type ? tt->elem_type : 0;
    int sym = has_symbolic_dim(tt);
    int weight = !sym && (feeds_weight_slot(c, vi->name) ||
                          (c->symbolic && !elem_is_int(et) && elem_size(et)));
    int64_t decl[GT_MAX_DIMS];
    int nd = (int)tt->shape->n_dim;
    for (int k = 0; k < nd; k++) {
      const Onnx__TensorShapeProto__Dimension *dm = tt->shape->dim[k];
      if (dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
        if (dm->dim_value < 1)
          ox_fail(c, "input '%s' has dimension %d of size %lld", vi->name, k,
                  (long long)dm->dim_value);
        decl[k] = dm->dim_value;
      } else if (k == 0) {
        decl[k] = GT_DIM_N;
      } else {
        ox_fail(c, "input '%s': dimension %d is symbolic ('%s'); only the batch (dimension 0) "
                   "may be; export with fixed sizes for the others", vi->name, k,
                dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM
                    ? dm->dim_param : "?");
      }
    }
    if (weight) {
      OxVal w = {0};
      w.ndim = nd;
      w.nelem = 1;
      for (int k = 0; k < nd; k++) {
        w.dims[k] = decl[k];
        w.nelem *= decl[k];
      }
      w.is_int = elem_is_int(et);
      ox_bind_const(c, vi->name, &w);
      continue;
    }
    GtDtype dt = map_dtype(c, et, vi->name);
    if (first_float && !elem_is_int(et)) {
      g->dtype = dt;
      first_float = 0;
    }
    if (nd > 0 && decl[0] != GT_DIM_N && g->default_batch == 0) g->default_batch = decl[0];
    if (nd < 1) ox_fail(c, "input '%s' is a scalar; activations need a rank of 1 or more",
                        vi->name);
    int t = graph_add_input(g, gt_name(c, vi->name), nd, decl, dt);
    if (t < 0) die("graph_add_input rejected '%s'", vi->name);
    bind_act(c, vi->name, t);
  }
}

/* ---------------------------------------------------------------- driver */

static int64_t default_opset(OxCtx *c, const Onnx__ModelProto *m) {
  for (size_t i = 0; i < m->n_opset_import; i++) {
    const Onnx__OperatorSetIdProto *o = m->opset_import[i];
    if ((!o->domain || !*o->domain || strcmp(o->domain, "ai.onnx") == 0) && o->has_version)
      return o->version;
  }
  ox_fail(c, "no opset_import for the default ONNX domain");
}

static void check_outputs(OxCtx *c) {
  GtGraph *g = c->g;
  int64_t b = g->default_batch;
  for (size_t i = 0; i < c->gp->n_output; i++) {
    const Onnx__ValueInfoProto *vi = c->gp->output[i];
    OxVal *v = vi->name ? ox_val(c, vi->name) : NULL;
    if (!v) ox_fail(c, "graph output '%s' is not computed by any node", vi->name ? vi->name : "");
    if (v->kind != VAL_ACT) ox_fail(c, "graph output '%s' is a constant", vi->name);
    const GtTensor *t = &g->tensors[v->tensor];
    if (!vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
        !vi->type->tensor_type || !vi->type->tensor_type->shape)
      continue;
    const Onnx__TensorShapeProto *s = vi->type->tensor_type->shape;
    int bad = (int)s->n_dim != t->ndim;
    for (int k = 0; !bad && k < t->ndim; k++) {
      const Onnx__TensorShapeProto__Dimension *dm = s->dim[k];
      if (dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
        bad = dm->dim_value != t->dim[k];
      else if (dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM)
        bad = k == 0 && t->dim[k] != b;
    }
    if (bad) {
      char want[256] = "", got[256] = "";
      size_t wl = 0, gl = 0;
      for (size_t k = 0; k < s->n_dim && wl < 200; k++) {
        const Onnx__TensorShapeProto__Dimension *dm = s->dim[k];
        if (dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
          wl += (size_t)snprintf(want + wl, sizeof want - wl, "%s%lld", k ? ", " : "",
                                 (long long)dm->dim_value);
        else
          wl += (size_t)snprintf(want + wl, sizeof want - wl, "%s%s", k ? ", " : "",
                                 dm->value_case ==
                                         ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM
                                     ? dm->dim_param : "?");
      }
      for (int k = 0; k < t->ndim && gl < 200; k++)
        gl += (size_t)snprintf(got + gl, sizeof got - gl, "%s%lld", k ? ", " : "",
                               (long long)t->dim[k]);
      ox_fail(c, "graph output '%s' is declared [%s] but computes [%s] at batch %lld", vi->name,
              want, got, (long long)b);
    }
  }
}

static void import_graph(OxCtx *c, const Onnx__ModelProto *m) {
  if (!m->has_ir_version || m->ir_version < 3 || !m->graph)
    ox_fail(c, "not an ONNX model (no ir_version >= 3 and graph)");
  c->gp = m->graph;
  c->opset = default_opset(c, m);
  if (c->opset < 7 || c->opset > 21)
    ox_fail(c, "opset %lld is not supported (7 to 21)", (long long)c->opset);
  const Onnx__GraphProto *gp = c->gp;
  if (gp->n_node == 0) ox_fail(c, "the graph has no nodes");
  GtGraph *g = c->g;
  g->name = arena_strdup(g->arena, gp->name && *gp->name ? gp->name : "model");
  g->file = arena_strdup(g->arena, c->path);
  g->version = 1;
  g->dtype = DT_FP32;
  for (size_t i = 0; i < gp->n_initializer; i++) {
    const Onnx__TensorProto *t = gp->initializer[i];
    if (!t->name || !*t->name) ox_fail(c, "initializer %zu has no name", i);
    OxVal v;
    ox_decode_tensor(c, t, t->name, &v);
    ox_bind_const(c, t->name, &v);
  }
  if (gp->n_sparse_initializer) ox_fail(c, "sparse initializers are not supported");
  for (size_t i = 0; i < gp->n_node; i++) {
    const Onnx__NodeProto *n = gp->node[i];
    if (!n->op_type || !*n->op_type) ox_fail(c, "node %zu has no op_type", i + 1);
    if (n->n_output == 0) ox_fail(c, "node %zu has no outputs", i + 1);
    for (size_t j = 0; j < n->n_output; j++)
      if (!n->output[j]) ox_fail(c, "node %zu has an unnamed output", i + 1);
    if (n->name || n->op_type) ox_map_put(c, &c->producer, n->output[0], (int)i);
    for (size_t j = 1; j < n->n_output; j++)
      if (n->output[j][0]) ox_map_put(c, &c->producer, n->output[j], (int)i);
  }
  import_inputs(c);
  if (g->ninputs == 0) ox_fail(c, "the graph has no activation input");
  c->fuse = arena_alloc(c->scratch, gp->n_node * sizeof *c->fuse);
  ox_fill_fusions(c);

  for (size_t i = 0; i < gp->n_node; i++) {
    const Onnx__NodeProto *n = gp->node[i];
    c->node = (int)i;
    for (size_t j = 0; j < n->n_input; j++)
      if (n->input[j][0] && !ox_val(c, n->input[j]) && c->fuse[i].state != FUSE_SKIP &&
          c->fuse[i].state != FUSE_EMIT)
        ox_fail(c, "input '%s' is not defined before this node", n->input[j]);
    if (c->fuse[i].state == FUSE_SKIP) continue;
    if (c->fuse[i].state == FUSE_EMIT) {
      OxVal *x = ox_val(c, c->fuse[i].x);
      gt_assert(x);
      int xt = x->kind == VAL_ACT ? x->tensor : const_act(c, x);
      if (c->fuse[i].kind == OP_LAYERNORM) emit_layernorm(c, n, xt, c->fuse[i].axis);
      else emit1(c, n, c->fuse[i].kind, xt, NULL);
      continue;
    }
    if (n->domain && *n->domain && strcmp(n->domain, "ai.onnx") != 0)
      ox_fail(c, "unsupported op '%s::%s' (docs/onnx.md lists the supported ops)", n->domain,
              n->op_type);
    if (ox_fold(c, n)) continue;
    size_t k = 0, nt = sizeof map_table / sizeof map_table[0];
    while (k < nt && strcmp(map_table[k].op, n->op_type) != 0) k++;
    if (k == nt)
      ox_fail(c, "unsupported op '%s' (docs/onnx.md lists the supported ops)", n->op_type);
    map_table[k].fn(c, n);
  }
  c->node = -1;
  if (g->default_batch == 0) g->default_batch = 1;
  graph_fill_outputs(g);
  if (graph_infer(g, g->default_batch, c->d) != 0) ox_abort(c);
  check_outputs(c);
}

GtGraph *onnx_load(const char *path, GtDiag *d) {
  size_t len = 0;
  char *buf = read_file(path, &len);
  if (!buf) {
    diag_error(d, path, 0, 0, NULL, "cannot read: %s", strerror(errno));
    return NULL;
  }
  if (len == 0) {
    free(buf);
    diag_error(d, path, 0, 0, NULL, "empty file, not an ONNX model");
    return NULL;
  }
  Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, (const uint8_t *)buf);
  free(buf);
  if (!m) {
    diag_error(d, path, 0, 0, NULL,
               "not a valid ONNX model (the protobuf does not decode: truncated or not ONNX)");
    return NULL;
  }
  OxCtx *volatile cv = calloc(1, sizeof(OxCtx));
  if (!cv) die("out of memory");
  OxCtx *c = cv;
  c->path = path;
  c->d = d;
  c->node = -1;
  c->scratch = arena_new();
  c->g = graph_new("model");
  GtGraph *g = NULL;
  if (setjmp(c->fail) == 0) {
    import_graph(c, m);
    g = c->g;
  } else {
    c = cv;
    graph_free(c->g);
  }
  arena_free(c->scratch);
  free(c);
  onnx__model_proto__free_unpacked(m, NULL);
  return g;
}
