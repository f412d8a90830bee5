/* graph_priv.h — what the graph_*.c and gtg_*.c files share and nobody else uses (not a
 * contract): the .gtg attribute table. */
#ifndef GS_GRAPH_PRIV_H
#define GS_GRAPH_PRIV_H

#include <string.h>

#include "graph.h"

/* ---- .gtg attributes: one table shared by the parser and the writer (gtg_attrs.c) ---- */
#define GTG_K(k) (1u << (k))
#define GTG_CONV (GTG_K(OP_CONV2D) | GTG_K(OP_CONV1D))
#define GTG_POOL (GTG_K(OP_MAXPOOL) | GTG_K(OP_AVGPOOL))
#define GTG_INT_MAX 2147483647LL
#define GTG_BIG ((int64_t)1 << 40) /* largest channel/table/size value accepted */
#define GTG_MAX_VALUES (2 * GS_MAX_DIMS) /* most values of one attribute (pad's pads) */
/* X(enum, name, ops accepting it, ops requiring it, min value, max value, min count, max count) */
#define GTG_ATTRS(X)                                                                              \
  X(GA_UNITS, "units", GTG_CONV | GTG_K(OP_DENSE), GTG_CONV | GTG_K(OP_DENSE), 1, GTG_BIG, 1, 1)   \
  X(GA_KERNEL, "kernel", GTG_CONV | GTG_POOL, GTG_POOL, 1, GTG_INT_MAX, 1, 2)                      \
  X(GA_STRIDE, "stride", GTG_CONV | GTG_POOL, 0, 1, GTG_INT_MAX, 1, 2)                             \
  X(GA_PAD, "pad", GTG_CONV | GTG_POOL, 0, 0, GTG_INT_MAX, 1, 4)                                   \
  X(GA_DILATION, "dilation", GTG_CONV | GTG_POOL, 0, 1, GTG_INT_MAX, 1, 2)                         \
  X(GA_GROUPS, "groups", GTG_CONV, 0, 1, GTG_INT_MAX, 1, 1)                                        \
  X(GA_BIAS, "bias", GTG_CONV | GTG_K(OP_DENSE), 0, 0, 1, 1, 1)                                    \
  X(GA_AXIS, "axis", GTG_K(OP_SOFTMAX) | GTG_K(OP_CONCAT) | GTG_K(OP_SPLIT) | GTG_K(OP_GLU), 0,   \
    -GS_MAX_DIMS, GS_MAX_DIMS - 1, 1, 1)                                                          \
  X(GA_SIZES, "sizes", GTG_K(OP_SPLIT), 0, 1, GTG_BIG, 1, GS_MAX_OPERANDS)                        \
  X(GA_PERM, "perm", GTG_K(OP_TRANSPOSE), GTG_K(OP_TRANSPOSE), 0, GS_MAX_DIMS - 1, 1, GS_MAX_DIMS) \
  X(GA_SHAPE, "shape", GTG_K(OP_RESHAPE), GTG_K(OP_RESHAPE), -1, GTG_BIG, 1, GS_MAX_DIMS)          \
  X(GA_VOCAB, "vocab", GTG_K(OP_EMBEDDING), GTG_K(OP_EMBEDDING), 1, GTG_BIG, 1, 1)                 \
  X(GA_DIM, "dim", GTG_K(OP_EMBEDDING), GTG_K(OP_EMBEDDING), 1, GTG_BIG, 1, 1)                     \
  X(GA_BAG, "bag", GTG_K(OP_EMBEDDING), 0, 1, GTG_BIG, 1, 1)                                       \
  X(GA_SELF, "self_interaction", GTG_K(OP_INTERACTION), 0, 0, 1, 1, 1)                             \
  X(GA_PADI, "pad_interaction", GTG_K(OP_INTERACTION), 0, 0, 1, 1, 1)                              \
  X(GA_CEIL, "ceil_mode", GTG_POOL, 0, 0, 1, 1, 1)                                                \
  X(GA_SIZE, "size", GTG_K(OP_RESIZE), GTG_K(OP_RESIZE), 1, GTG_INT_MAX, 1, 2)                     \
  X(GA_LINEAR, "linear", GTG_K(OP_RESIZE), 0, 0, 1, 1, 1)                                        \
  X(GA_PADS, "pads", GTG_K(OP_PAD), GTG_K(OP_PAD), 0, GTG_INT_MAX, 2, 2 * GS_MAX_DIMS)             \
  X(GA_MODE, "mode", GTG_K(OP_PAD), 0, 0, 2, 1, 1)
typedef enum {
#define X(e, n, k, r, lo, hi, cmin, cmax) e,
  GTG_ATTRS(X)
#undef X
  GA_COUNT
} GtgAttr;
typedef struct {
  const char *name;
  uint32_t kinds, required;
  int64_t lo, hi;
  int cmin, cmax;
} GtgAttrSpec;
extern const GtgAttrSpec gtg_attr_spec[GA_COUNT];
/* Stores n values (already range-checked) into at; returns 0, or -1 with a reason in *why
 * when the count is not allowed for this op kind (e.g. conv1d kernel=1,3). */
int gtg_attr_set(GsAttrs *at, GsOpKind k, GtgAttr a, const int64_t *v, int n, const char **why);
/* Canonical values of attribute a for op kind k (the shortest spelling that parses back to
 * the same GsAttrs); returns the count, 0 when the attribute is unset/empty. */
int gtg_attr_get(const GsAttrs *at, GsOpKind k, GtgAttr a, int64_t *v);

#endif
