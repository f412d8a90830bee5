/* gtg_attrs.c — the .gtg attribute vocabulary (GTG_ATTRS in graph_priv.h) and the mapping
 * between attribute values as written and GsAttrs fields, shared by parser and writer.
 * Invariant (what makes the round trip exact): for every attribute a and op kind k,
 * gtg_attr_set(at, k, a, v, gtg_attr_get(at', k, a, v)) reproduces in `at` the fields of at'
 * that a controls for k, whenever at' was itself produced by gtg_attr_set from defaults.
 * Spellings are the same for every window op (conv1d included: its width is index 1, and
 * graph_infer() rejects height entries that are neither neutral nor equal to the width).
 */
#include "graph_priv.h"

const GtgAttrSpec gtg_attr_spec[GA_COUNT] = {
#define X(e, n, k, r, lo, hi, cmin, cmax) {n, k, r, lo, hi, cmin, cmax},
    GTG_ATTRS(X)
#undef X
};

static int set_pair(int *f, const int64_t *v, int n, const char **why) {
  if (n > 2) return *why = "takes 1 or 2 values (h,w)", -1;
  f[0] = (int)v[0];
  f[1] = (int)(n == 2 ? v[1] : v[0]);
  return 0;
}

int gtg_attr_set(GsAttrs *at, GsOpKind k, GtgAttr a, const int64_t *v, int n, const char **why) {
  (void)k;
  switch (a) {
  case GA_UNITS: at->units = v[0]; return 0;
  case GA_KERNEL: return set_pair(at->kernel, v, n, why);
  case GA_STRIDE: return set_pair(at->stride, v, n, why);
  case GA_DILATION: return set_pair(at->dilation, v, n, why);
  case GA_PAD:
    if (n == 3) return *why = "takes 1 value, 2 (h,w) or 4 (top,left,bottom,right)", -1;
    for (int i = 0; i < 4; i++) at->pad[i] = (int)(n == 4 ? v[i] : n == 2 ? v[i % 2] : v[0]);
    return 0;
  case GA_GROUPS: at->groups = (int)v[0]; return 0;
  case GA_BIAS: at->bias = (int)v[0]; return 0;
  case GA_AXIS: at->axis = (int)v[0]; return 0;
  case GA_SIZES:
    at->nsizes = n;
    for (int i = 0; i < n; i++) at->sizes[i] = v[i];
    return 0;
  case GA_PERM:
    at->nperm = n;
    for (int i = 0; i < n; i++) at->perm[i] = (int)v[i];
    return 0;
  case GA_SHAPE:
    at->nshape = n;
    for (int i = 0; i < n; i++) at->shape[i] = v[i];
    return 0;
  case GA_VOCAB: at->vocab = v[0]; return 0;
  case GA_DIM: at->dim = v[0]; return 0;
  case GA_BAG: at->bag = v[0]; return 0;
  case GA_SELF: at->self_interaction = (int)v[0]; return 0;
  case GA_PADI: at->pad_interaction = (int)v[0]; return 0;
  case GA_CEIL: at->ceil_mode = (int)v[0]; return 0;
  case GA_SIZE: return set_pair(at->size, v, n, why);
  case GA_LINEAR: at->linear = (int)v[0]; return 0;
  case GA_PADS:
    if (n % 2) return *why = "takes an even count: the begins of every axis, then the ends", -1;
    at->npads = n;
    for (int i = 0; i < n; i++) at->pads[i] = (int)v[i];
    return 0;
  case GA_MODE: at->pad_mode = (int)v[0]; return 0;
  case GA_COUNT: break;
  }
  die("bad attribute %d", (int)a);
}

static int get_pair(const int *f, int64_t *v) {
  v[0] = f[0];
  v[1] = f[1];
  return f[0] == f[1] ? 1 : 2;
}

int gtg_attr_get(const GsAttrs *at, GsOpKind k, GtgAttr a, int64_t *v) {
  (void)k;
  switch (a) {
  case GA_UNITS: return v[0] = at->units, 1;
  case GA_KERNEL: return get_pair(at->kernel, v);
  case GA_STRIDE: return get_pair(at->stride, v);
  case GA_DILATION: return get_pair(at->dilation, v);
  case GA_PAD: {
    const int *p = at->pad;
    for (int i = 0; i < 4; i++) v[i] = p[i];
    if (p[0] == p[2] && p[1] == p[3]) return p[0] == p[1] ? 1 : 2;
    return 4;
  }
  case GA_GROUPS: return v[0] = at->groups, 1;
  case GA_BIAS: return v[0] = at->bias, 1;
  case GA_AXIS: return v[0] = at->axis, 1;
  case GA_SIZES:
    for (int i = 0; i < at->nsizes && i < GS_MAX_OPERANDS; i++) v[i] = at->sizes[i];
    return at->nsizes < GS_MAX_OPERANDS ? at->nsizes : GS_MAX_OPERANDS;
  case GA_PERM:
    for (int i = 0; i < at->nperm && i < GS_MAX_DIMS; i++) v[i] = at->perm[i];
    return at->nperm < GS_MAX_DIMS ? at->nperm : GS_MAX_DIMS;
  case GA_SHAPE:
    for (int i = 0; i < at->nshape && i < GS_MAX_DIMS; i++) v[i] = at->shape[i];
    return at->nshape < GS_MAX_DIMS ? at->nshape : GS_MAX_DIMS;
  case GA_VOCAB: return v[0] = at->vocab, 1;
  case GA_DIM: return v[0] = at->dim, 1;
  case GA_BAG: return v[0] = at->bag, 1;
  case GA_SELF: return v[0] = at->self_interaction, 1;
  case GA_PADI: return v[0] = at->pad_interaction, 1;
  case GA_CEIL: return v[0] = at->ceil_mode, 1;
  case GA_SIZE: return get_pair(at->size, v);
  case GA_LINEAR: return v[0] = at->linear, 1;
  case GA_PADS:
    for (int i = 0; i < at->npads && i < GTG_MAX_VALUES; i++) v[i] = at->pads[i];
    return at->npads < GTG_MAX_VALUES ? at->npads : GTG_MAX_VALUES;
  case GA_MODE: return v[0] = at->pad_mode, 1;
  case GA_COUNT: break;
  }
  die("bad attribute %d", (int)a);
}
