/* onnx_import.c — ONNX model -> graph IR, through the protobuf-c code generated at build time
 * from Debian's onnx.proto (docs/onnx.md is the user-facing description of what maps to what).
 *
 * Algorithm: unpack the ModelProto; register initializers as constants; classify the graph
 * inputs into activations and weights (export_params=False models pass weights as inputs);
 * run the pattern pre-pass (onnx_fuse.c); then walk the nodes once in their (topological)
 * order. Each node is either absorbed by a pattern, folded into constants (onnx_fold.c, shape
 * arithmetic with the symbolic batch carried as N), or mapped to GT ops by one function per
 * ONNX op (onnx_map.c; no-ops such as Identity and Dropout alias their output to their input).
 * Finally the whole graph is inferred at its default batch and the declared output shapes are
 * checked. Shapes of activations, where a mapping needs them, come from
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
const char *ox_gs_name(OxCtx *c, const char *onnx_name) {
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

void ox_bind_act(OxCtx *c, const char *name, int tensor) {
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

int64_t ox_elems(OxCtx *c, const int64_t *dims, int nd, const char *what) {
  int64_t k = 1;
  for (int i = 0; i < nd; i++) {
    if (dims[i] < 0 || (dims[i] > 0 && k > ((int64_t)1 << 53) / dims[i]))
      ox_fail(c, "%s has a bad or too large shape", what);
    k *= dims[i];
  }
  return k;
}

OxVal *ox_new_const(OxCtx *c, const char *name, int ndim, const int64_t *dims, int is_int) {
  OxVal tmp = {0};
  if (ndim > GS_MAX_DIMS) ox_fail(c, "constant '%s' has rank %d (at most %d)", name, ndim,
                                  (int)GS_MAX_DIMS);
  tmp.ndim = ndim;
  tmp.nelem = ox_elems(c, dims, ndim, name);
  for (int i = 0; i < ndim; i++) tmp.dims[i] = dims[i];
  tmp.is_int = is_int;
  if (tmp.nelem > OX_MAX_FOLD_DATA)
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

/* UINT32 and UINT64 values are stored in uint64_data */
static int is_u64(int32_t t) {
  return t == ONNX__TENSOR_PROTO__DATA_TYPE__UINT32 || t == ONNX__TENSOR_PROTO__DATA_TYPE__UINT64;
}

void ox_decode_tensor(OxCtx *c, const Onnx__TensorProto *t, const char *name, OxVal *v) {
  memset(v, 0, sizeof *v);
  v->kind = VAL_CONST;
  if (t->n_dims > GS_MAX_DIMS)
    ox_fail(c, "tensor '%s' has rank %zu (at most %d)", name, t->n_dims, (int)GS_MAX_DIMS);
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
  else if (is_u64(dt)) have = t->n_uint64_data;
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
    else if (is_u64(dt)) x = (double)t->uint64_data[i];
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

/* Returns the number of floats (-1 when the attribute is absent); more than max is an error. */
int ox_attr_floats(OxCtx *c, const Onnx__NodeProto *n, const char *name, double *out, int max) {
  const Onnx__AttributeProto *a = ox_attr(n, name);
  if (!a) return -1;
  if (a->n_floats > (size_t)max)
    ox_fail(c, "attribute '%s' has %zu values (at most %d)", name, a->n_floats, max);
  for (size_t i = 0; i < a->n_floats; i++) out[i] = a->floats[i];
  return (int)a->n_floats;
}

/* A string attribute copied into buf (truncated to its size), or def when absent. */
const char *ox_attr_s(const Onnx__NodeProto *n, const char *name, const char *def,
                          char *buf, size_t size) {
  const Onnx__AttributeProto *a = ox_attr(n, name);
  if (!a || !a->has_s) return def;
  size_t len = a->s.len < size - 1 ? a->s.len : size - 1;
  memcpy(buf, a->s.data, len);
  buf[len] = 0;
  return buf;
}

/* ---------------------------------------------------------------- shapes */

int64_t ox_sym_int(OxCtx *c, OxSym s, const char *what) {
  if (s.n) ox_fail(c, "%s depends on the symbolic batch N where a number is needed", what);
  if (s.v != s.v) ox_fail(c, "%s is not a number", what);
  return ox_clamp_i64(s.v);
}

/* Infers the graph built so far at batch 3 and at batch 5 (once per graph change): a dim that
 * is the same in both is fixed; one that scales 3:5 is k*N. A graph without a symbolic batch
 * binds only its own (graph_infer): both passes use it and every dim is fixed. */
static void refresh_shapes(OxCtx *c) {
  GsGraph *g = c->g;
  if (c->cache_nops == g->nops && c->cache_ntensors == g->ntensors && c->dims3) return;
  if (g->ntensors > c->cache_cap) {
    int cap = 2 * g->ntensors;
    void *a = realloc(c->dims3, (size_t)cap * sizeof *c->dims3);
    if (a) c->dims3 = a;
    void *b = realloc(c->dims5, (size_t)cap * sizeof *c->dims5);
    if (!a || !b) die("out of memory");
    c->dims5 = b;
    c->cache_cap = cap;
  }
  graph_fill_outputs(g);
  for (int pass = 0; pass < 2; pass++) {
    int64_t(*dst)[GS_MAX_DIMS] = pass ? c->dims5 : c->dims3;
    int64_t b = !c->symbolic ? (g->default_batch > 0 ? g->default_batch : 1) : pass ? 5 : 3;
    if (graph_infer(g, b, c->d) != 0) ox_abort(c);
    for (int t = 0; t < g->ntensors; t++)
      memcpy(dst[t], g->tensors[t].dim, sizeof dst[t]);
  }
  c->cache_nops = g->nops;
  c->cache_ntensors = g->ntensors;
}

int ox_act_shape(OxCtx *c, int t, OxSym *dims) {
  const GsTensor *T = &c->g->tensors[t];
  if (T->producer < 0) {
    for (int i = 0; i < T->ndim; i++) {
      dims[i].n = T->decl[i] == GS_DIM_N;
      dims[i].v = T->decl[i] == GS_DIM_N ? 1.0 : (double)T->decl[i];
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

/* ---------------------------------------------------------------- graph inputs */

GsDtype ox_map_dtype(OxCtx *c, int32_t t, const char *name) {
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
  if (tt->shape->n_dim > GS_MAX_DIMS)
    ox_fail(c, "graph input '%s' has rank %zu (at most %d)", name, tt->shape->n_dim,
            (int)GS_MAX_DIMS);
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
  GsGraph *g = c->g;
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
    int64_t decl[GS_MAX_DIMS];
    int nd = (int)tt->shape->n_dim;
    for (int k = 0; k < nd; k++) {
      const Onnx__TensorShapeProto__Dimension *dm = tt->shape->dim[k];
      if (dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
        if (dm->dim_value < 1)
          ox_fail(c, "input '%s' has dimension %d of size %lld", vi->name, k,
                  (long long)dm->dim_value);
        decl[k] = dm->dim_value;
      } else if (k == 0) {
        decl[k] = GS_DIM_N;
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
      for (int k = 0; k < nd; k++) w.dims[k] = decl[k];
      w.nelem = ox_elems(c, decl, nd, vi->name);
      w.is_int = elem_is_int(et);
      ox_bind_const(c, vi->name, &w);
      continue;
    }
    GsDtype dt = ox_map_dtype(c, et, vi->name);
    if (first_float && !elem_is_int(et)) {
      g->dtype = dt;
      first_float = 0;
    }
    if (nd > 0 && decl[0] != GS_DIM_N && g->default_batch == 0) g->default_batch = decl[0];
    if (nd < 1) ox_fail(c, "input '%s' is a scalar; activations need a rank of 1 or more",
                        vi->name);
    int t = graph_add_input(g, ox_gs_name(c, vi->name), nd, decl, dt);
    if (t < 0) die("graph_add_input rejected '%s'", vi->name);
    ox_bind_act(c, vi->name, t);
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
  GsGraph *g = c->g;
  int64_t b = g->default_batch;
  for (size_t i = 0; i < c->gp->n_output; i++) {
    const Onnx__ValueInfoProto *vi = c->gp->output[i];
    OxVal *v = vi->name ? ox_val(c, vi->name) : NULL;
    if (!v) ox_fail(c, "graph output '%s' is not computed by any node", vi->name ? vi->name : "");
    if (v->kind != VAL_ACT) ox_fail(c, "graph output '%s' is a constant", vi->name);
    const GsTensor *t = &g->tensors[v->tensor];
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

/* The graph's name, unless it is empty or an exporter's generic one; then the file name
 * without directory and extension ("models/resnet50.onnx" -> "resnet50"). */
static const char *model_name(OxCtx *c, const char *graph_name) {
  static const char *const generic[] = {"main_graph", "torch_jit", "torch-jit-export", "tf2onnx"};
  int use = graph_name && *graph_name;
  for (size_t i = 0; use && i < sizeof generic / sizeof generic[0]; i++)
    if (strcmp(graph_name, generic[i]) == 0) use = 0;
  if (use) return arena_strdup(c->g->arena, graph_name);
  const char *base = strrchr(c->path, '/');
  base = base ? base + 1 : c->path;
  const char *dot = strrchr(base, '.');
  size_t len = dot && dot != base ? (size_t)(dot - base) : strlen(base);
  return arena_strndup(c->g->arena, base, len);
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
  GsGraph *g = c->g;
  g->name = model_name(c, gp->name);
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
      ox_emit_fused(c, n, &c->fuse[i]);
      continue;
    }
    if (n->domain && *n->domain && strcmp(n->domain, "ai.onnx") != 0)
      ox_fail(c, "unsupported op '%s::%s' (docs/onnx.md lists the supported ops)", n->domain,
              n->op_type);
    if (ox_fold(c, n)) continue;
    ox_map_node(c, n);
  }
  c->node = -1;
  if (g->default_batch == 0) g->default_batch = 1;
  graph_fill_outputs(g);
  if (graph_infer(g, g->default_batch, c->d) != 0) ox_abort(c);
  check_outputs(c);
}

GsGraph *onnx_load(const char *path, GsDiag *d) {
  size_t len = 0;
  char *buf = util_read_file(path, &len);
  if (!buf) {
    diag_error(d, path, 0, 0, NULL, "cannot read: %s", strerror(errno));
    return NULL;
  }
  GsGraph *g = ox_import_bytes(path, (const uint8_t *)buf, len, d);
  free(buf);
  return g;
}

GsGraph *ox_import_bytes(const char *path, const uint8_t *data, size_t len, GsDiag *d) {
  if (len == 0) {
    diag_error(d, path, 0, 0, NULL, "empty file, not an ONNX model");
    return NULL;
  }
  Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, data);
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
  c->g->default_batch = 0; /* a fixed-batch input sets it (import_inputs), else 1 at the end */
  GsGraph *g = NULL;
  if (setjmp(c->fail) == 0) {
    import_graph(c, m);
    g = c->g;
  } else {
    c = cv;
    graph_free(c->g);
  }
  arena_free(c->scratch);
  free(c->dims3);
  free(c->dims5);
  free(c);
  onnx__model_proto__free_unpacked(m, NULL);
  return g;
}
