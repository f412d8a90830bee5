/* onnx_imp.h — internal interface between the files of the ONNX importer (onnx_*.c).
 *
 *   onnx_import.c  entry point onnx_load(): file checks, the value table, tensors and
 *                  attributes, weight detection, shapes of activations, the node walk
 *   onnx_map.c     one mapping function per ONNX op
 *   onnx_einsum.c  Einsum's matmul forms (the equation sorted into batch/row/column/k letters)
 *   onnx_fold.c    constant folding of shape-only subgraphs over small tensors whose elements
 *                  may carry the symbolic batch N (OxSym)
 *   onnx_fuse.c    pattern pre-pass: erf-GELU, swish, decomposed layernorm
 *
 * Every ONNX value name maps to one OxVal: an activation (a GT tensor of the graph) or a
 * constant (initializer, Constant output, folded result, or a weight passed as a graph input
 * in an export_params=False model). User errors go through ox_fail(), which prints
 * `file:NODE:1: error: ...` (NODE = 1-based index in graph.node) and longjmps back to
 * onnx_load(), which frees everything and returns NULL.
 */
#ifndef GS_ONNX_IMP_H
#define GS_ONNX_IMP_H

#include <setjmp.h>

#include "graph.h"
#include "onnx/onnx.pb-c.h"

/* A scalar that may carry the symbolic batch: value v * N^n, n in {0, 1}. */
typedef struct {
  double v;
  int n;
} OxSym;

typedef enum { VAL_NONE, VAL_ACT, VAL_CONST } OxValKind;

enum { OX_MAX_CONST_DATA = 1 << 16 }; /* elements decoded from an initializer for folding */
/* elements a folded constant may have: Swin's shifted-window masks are windows x 49 x 49
 * (153,664 at 224x224); 16 bytes each while importing */
enum { OX_MAX_FOLD_DATA = 1 << 20 };

typedef struct {
  OxValKind kind;
  const char *name;         /* ONNX value name */
  int tensor;               /* VAL_ACT: GT tensor id */
  /* VAL_CONST: */
  int ndim;
  int64_t dims[GS_MAX_DIMS];
  int64_t nelem;
  OxSym *data;              /* values when known and small, else NULL (weights) */
  int is_int;               /* integer element type */
  int input_tensor;         /* GT input tensor id + 1 once materialised (ox_const_act) */
  /* VAL_ACT made by a constant-zero Pad: the spatial padding still to fold into the Conv or
   * pool that reads it (top, left, bottom, right; 1-D: left, right in [1] and [3]) */
  int padded;
  int64_t pad[4];
} OxVal;

/* String-keyed open-addressing map (FNV-1a); keys live in the scratch arena. */
typedef struct {
  const char **keys;
  int *vals;
  int cap, len;
} OxMap;

enum { FUSE_NONE, FUSE_SKIP, FUSE_EMIT };
typedef struct {
  int state;                /* FUSE_*: SKIP nodes are absorbed, EMIT nodes emit the fused op */
  GsOpKind kind;            /* fused op (OP_GELU, OP_SWISH, OP_LAYERNORM) */
  const char *x;            /* the pattern's input value */
  int64_t axis;             /* layernorm: the reduced axis as written in the model */
} OxFuse;

typedef struct {
  const char *path;
  GsDiag *d;
  GsArena *scratch;         /* everything below that is not in the graph */
  GsGraph *g;
  Onnx__GraphProto *gp;
  int64_t opset;            /* default-domain opset version */
  int node;                 /* node being imported (index into gp->node), -1 outside */
  jmp_buf fail;
  OxMap vals;               /* ONNX value name -> index into val */
  OxVal **val;              /* stable pointers (arena), array grown by doubling */
  int nval, cap_val;
  OxMap names;              /* GT names in use (sanitised, unique) */
  OxMap producer;           /* value name -> node index */
  OxMap scalars;            /* "scalar_<value>" -> GT input holding that constant */
  OxFuse *fuse;             /* per node */
  int symbolic;             /* some activation input has the symbolic batch */
  /* shape cache: tensor dims inferred at batch 3 and 5, valid while g->nops == cache_nops */
  int cache_nops, cache_ntensors, cache_cap; /* dims3/dims5: heap, freed by onnx_load */
  int64_t (*dims3)[GS_MAX_DIMS], (*dims5)[GS_MAX_DIMS];
} OxCtx;

/* A double as int64_t without undefined behaviour: NaN -> 0, out of range -> the limit. */
static inline int64_t ox_clamp_i64(double v) {
  if (v != v) return 0;
  if (v >= 9.2e18) return INT64_MAX;
  if (v <= -9.2e18) return INT64_MIN;
  return (int64_t)v;
}

/* onnx_import.c */
/* onnx_load() on bytes already in memory (`path` names them in messages): the fuzz target's
 * entry point. */
GsGraph *ox_import_bytes(const char *path, const uint8_t *data, size_t len, GsDiag *d);
_Noreturn void ox_fail(OxCtx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int ox_map_get(const OxMap *m, const char *key);            /* -1 if absent */
void ox_map_put(OxCtx *c, OxMap *m, const char *key, int v);
OxVal *ox_val(OxCtx *c, const char *name);                  /* NULL if unknown */
int64_t ox_elems(OxCtx *c, const int64_t *dims, int nd, const char *what); /* <= 2^53 */
OxVal *ox_new_const(OxCtx *c, const char *name, int ndim, const int64_t *dims, int is_int);
int ox_act_shape(OxCtx *c, int tensor, OxSym *dims);        /* returns ndim */
int ox_act_rank(OxCtx *c, int tensor);
int64_t ox_act_dim(OxCtx *c, int tensor, int axis);        /* a concrete dim (axis < 0: from the end) */
const Onnx__AttributeProto *ox_attr(const Onnx__NodeProto *n, const char *name);
int64_t ox_attr_i(const Onnx__NodeProto *n, const char *name, int64_t def);
float ox_attr_f(const Onnx__NodeProto *n, const char *name, float def);
int ox_attr_ints(OxCtx *c, const Onnx__NodeProto *n, const char *name, int64_t *out, int max);
int ox_attr_floats(OxCtx *c, const Onnx__NodeProto *n, const char *name, double *out, int max);
/* Decodes an ONNX tensor (dims, element type, values when small) into *v, not registered. */
void ox_decode_tensor(OxCtx *c, const Onnx__TensorProto *t, const char *name, OxVal *v);
OxVal *ox_bind_const(OxCtx *c, const char *name, const OxVal *v); /* registers a copy */
_Noreturn void ox_abort(OxCtx *c);                          /* error already reported */
int ox_is_weight_name(const OxCtx *c, const char *name);    /* initializer or weight input */

const char *ox_gs_name(OxCtx *c, const char *onnx_name);    /* sanitised, unique GT name */
void ox_bind_act(OxCtx *c, const char *name, int tensor);     /* name -> activation tensor */
const char *ox_attr_s(const Onnx__NodeProto *n, const char *name, const char *def, char *buf,
                      size_t size);
GsDtype ox_map_dtype(OxCtx *c, int32_t t, const char *name);

/* onnx_map.c: maps one node (or fails naming it as unsupported); emits a fused pattern. */
void ox_map_node(OxCtx *c, const Onnx__NodeProto *n);
void ox_emit_fused(OxCtx *c, const Onnx__NodeProto *n, const OxFuse *f);

/* onnx_map.c's building blocks for mappers in other files: operand i (an error naming `what`
 * when missing), operand i as an activation (a constant becomes an input), an op over `in`
 * whose one output is a new tensor `name` (returns it; binds nothing). */
OxVal *ox_need_input(OxCtx *c, const Onnx__NodeProto *n, size_t i, const char *what);
int ox_input_act(OxCtx *c, const Onnx__NodeProto *n, size_t i);
int ox_emit_named(OxCtx *c, const Onnx__NodeProto *n, GsOpKind k, const int *in, int nin,
                  const GsAttrs *at, const char *name);
/* onnx_einsum.c: Einsum's matmul forms as matmul/dense/transpose. */
void ox_map_einsum(OxCtx *c, const Onnx__NodeProto *n);

/* onnx_fold.c: returns 1 if the node was folded into constants, 0 if it is not foldable
 * (an input is an activation, or the op is not a shape op). */
int ox_fold(OxCtx *c, const Onnx__NodeProto *n);
/* Sym arithmetic shared with the mappers. */
int64_t ox_sym_int(OxCtx *c, OxSym s, const char *what);   /* concrete value or ox_fail */

/* onnx_fuse.c: fills c->fuse for every node (pattern pre-pass; no graph change). */
void ox_fill_fusions(OxCtx *c);

#endif
