/* gt_testgraph.h — builds small graphs and architectures for the GraphTurbo tests directly
 * as GsGraph / GsArch arrays with their concrete shapes written out (no parser, no shape
 * inference), so the pass tests depend only on the IR contract (sched/graph.h). Shapes are
 * computed here with the usual conv/pool formulas; NCHW; every tensor is fp16.
 */
#ifndef GS_GT_TESTGRAPH_H
#define GS_GT_TESTGRAPH_H

#include <stdarg.h>
#include <string.h>

#include "gt.h"

enum { TG_CAP = 1024 };

static inline GsGraph *tg_new(const char *name, int64_t batch) {
  GsArena *a = arena_new();
  GsGraph *g = arena_alloc(a, sizeof *g);
  g->arena = a;
  g->name = name;
  g->batch = batch;
  g->dtype = DT_FP16;
  g->tensors = arena_alloc(a, sizeof(GsTensor) * TG_CAP);
  g->ops = arena_alloc(a, sizeof(GsOp) * TG_CAP);
  g->cap_tensors = g->cap_ops = TG_CAP;
  return g;
}

static inline void tg_free(GsGraph *g) { arena_free(g->arena); }

static inline int tg_tensor(GsGraph *g, const char *name, int producer, int nd, const int64_t *d) {
  gs_assert(g->ntensors < TG_CAP);
  GsTensor *t = &g->tensors[g->ntensors];
  t->name = arena_strdup(g->arena, name);
  t->ndim = nd;
  for (int k = 0; k < nd; k++) t->dim[k] = t->decl[k] = d[k];
  t->dtype = DT_FP16;
  t->producer = producer;
  return g->ntensors++;
}

static inline int tg_input(GsGraph *g, const char *name, int nd, ...) {
  int64_t d[GS_MAX_DIMS];
  va_list ap;
  va_start(ap, nd);
  for (int k = 0; k < nd; k++) d[k] = va_arg(ap, int64_t);
  va_end(ap);
  return tg_tensor(g, name, -1, nd, d);
}

static inline GsAttrs tg_attrs(void) {
  GsAttrs at;
  memset(&at, 0, sizeof at);
  at.stride[0] = at.stride[1] = 1;
  at.dilation[0] = at.dilation[1] = 1;
  at.groups = 1;
  at.axis = -1;
  return at;
}

/* One op with one output of the given shape; returns the output tensor id. */
static inline int tg_op(GsGraph *g, GsOpKind k, const char *name, const int *in, int nin, const GsAttrs *at,
                 int nd, const int64_t *d) {
  gs_assert(g->nops < TG_CAP);
  int id = g->nops++;
  GsOp *o = &g->ops[id];
  o->kind = k;
  o->name = arena_strdup(g->arena, name);
  o->nin = nin;
  for (int i = 0; i < nin; i++) o->in[i] = in[i];
  o->at = *at;
  o->nout = 1;
  o->out[0] = tg_tensor(g, name, id, nd, d);
  return o->out[0];
}

static inline int tg_unary(GsGraph *g, GsOpKind k, const char *name, int x) {
  GsAttrs at = tg_attrs();
  return tg_op(g, k, name, &x, 1, &at, g->tensors[x].ndim, g->tensors[x].dim);
}

static inline int tg_binary(GsGraph *g, GsOpKind k, const char *name, int a, int b) {
  GsAttrs at = tg_attrs();
  int in[2] = {a, b};
  return tg_op(g, k, name, in, 2, &at, g->tensors[a].ndim, g->tensors[a].dim);
}

static inline int64_t tg_win(int64_t in, int k, int s, int p) { return (in + 2 * p - k) / s + 1; }

static inline int tg_conv(GsGraph *g, const char *name, int x, int64_t cout, int k, int s, int p) {
  GsAttrs at = tg_attrs();
  at.units = cout;
  at.kernel[0] = at.kernel[1] = k;
  at.stride[0] = at.stride[1] = s;
  for (int i = 0; i < 4; i++) at.pad[i] = p;
  const int64_t *d = g->tensors[x].dim;
  int64_t o[4] = {d[0], cout, tg_win(d[2], k, s, p), tg_win(d[3], k, s, p)};
  return tg_op(g, OP_CONV2D, name, &x, 1, &at, 4, o);
}

static inline int tg_maxpool(GsGraph *g, const char *name, int x, int k, int s, int p) {
  GsAttrs at = tg_attrs();
  at.kernel[0] = at.kernel[1] = k;
  at.stride[0] = at.stride[1] = s;
  for (int i = 0; i < 4; i++) at.pad[i] = p;
  const int64_t *d = g->tensors[x].dim;
  int64_t o[4] = {d[0], d[1], tg_win(d[2], k, s, p), tg_win(d[3], k, s, p)};
  return tg_op(g, OP_MAXPOOL, name, &x, 1, &at, 4, o);
}

static inline int tg_resize(GsGraph *g, const char *name, int x, int h, int w, int linear) {
  GsAttrs at = tg_attrs();
  at.size[0] = h;
  at.size[1] = w;
  at.linear = linear;
  const int64_t *d = g->tensors[x].dim;
  int64_t o[4] = {d[0], d[1], h, w};
  return tg_op(g, OP_RESIZE, name, &x, 1, &at, 4, o);
}

/* pad of a rank-4 tensor: pads[8] in ONNX order (begins, then ends), mode GS_PAD_* */
static inline int tg_pad(GsGraph *g, const char *name, int x, const int *pads, int mode) {
  GsAttrs at = tg_attrs();
  at.npads = 8;
  for (int i = 0; i < 8; i++) at.pads[i] = pads[i];
  at.pad_mode = mode;
  const int64_t *d = g->tensors[x].dim;
  int64_t o[4];
  for (int i = 0; i < 4; i++) o[i] = d[i] + pads[i] + pads[4 + i];
  return tg_op(g, OP_PAD, name, &x, 1, &at, 4, o);
}

static inline int tg_gap(GsGraph *g, const char *name, int x) {
  GsAttrs at = tg_attrs();
  const int64_t *d = g->tensors[x].dim;
  int64_t o[4] = {d[0], d[1], 1, 1};
  return tg_op(g, OP_GAVGPOOL, name, &x, 1, &at, 4, o);
}

static inline int tg_flatten(GsGraph *g, const char *name, int x) {
  GsAttrs at = tg_attrs();
  const int64_t *d = g->tensors[x].dim;
  int64_t o[2] = {d[0], d[1] * d[2] * d[3]};
  at.nshape = 2;
  at.shape[0] = GS_DIM_N;
  at.shape[1] = o[1];
  return tg_op(g, OP_RESHAPE, name, &x, 1, &at, 2, o);
}

static inline int tg_dense(GsGraph *g, const char *name, int x, int64_t units) {
  GsAttrs at = tg_attrs();
  at.units = units;
  int64_t o[2] = {g->tensors[x].dim[0], units};
  return tg_op(g, OP_DENSE, name, &x, 1, &at, 2, o);
}

/* conv + batchnorm (+ relu): one ResNet layer. */
static inline int tg_layer(GsGraph *g, const char *name, int x, int64_t cout, int k, int s, int p, int relu) {
  char buf[320]; /* name + ".conv" */
  snprintf(buf, sizeof buf, "%s.conv", name);
  int c = tg_conv(g, buf, x, cout, k, s, p);
  snprintf(buf, sizeof buf, "%s.bn", name);
  int b = tg_unary(g, OP_BATCHNORM, buf, c);
  if (!relu) return b;
  snprintf(buf, sizeof buf, "%s.relu", name);
  return tg_unary(g, OP_RELU, buf, b);
}

/* ResNet v1.5 bottleneck: main path 1x1, 3x3 (stride here), 1x1; then the shortcut (a
 * 1x1 conv + bn when `project`), then add and relu. Ops: 8 + (2) + 2. */
static inline int tg_bottleneck(GsGraph *g, const char *name, int x, int64_t width, int stride, int project) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s.a", name);
  int a = tg_layer(g, buf, x, width, 1, 1, 0, 1);
  snprintf(buf, sizeof buf, "%s.b", name);
  int b = tg_layer(g, buf, a, width, 3, stride, 1, 1);
  snprintf(buf, sizeof buf, "%s.c", name);
  int c = tg_layer(g, buf, b, 4 * width, 1, 1, 0, 0);
  int sc = x;
  if (project) {
    snprintf(buf, sizeof buf, "%s.s", name);
    sc = tg_layer(g, buf, x, 4 * width, 1, stride, 0, 0);
  }
  snprintf(buf, sizeof buf, "%s.add", name);
  int s = tg_binary(g, OP_ADD, buf, c, sc);
  snprintf(buf, sizeof buf, "%s.out", name);
  return tg_unary(g, OP_RELU, buf, s);
}

/* ResNet-50 v1.5 at batch n: stem (4 ops), stages of 3/4/6/3 blocks, head (3 ops). */
static inline GsGraph *tg_resnet50(int64_t n) {
  GsGraph *g = tg_new("resnet50", n);
  int x = tg_input(g, "x", 4, n, (int64_t)3, (int64_t)224, (int64_t)224);
  x = tg_layer(g, "stem", x, 64, 7, 2, 3, 1);
  x = tg_maxpool(g, "stem.pool", x, 3, 2, 1);
  static const int blocks[4] = {3, 4, 6, 3};
  for (int st = 0; st < 4; st++)
    for (int b = 0; b < blocks[st]; b++) {
      char name[32];
      snprintf(name, sizeof name, "s%d.b%d", st + 1, b + 1);
      x = tg_bottleneck(g, name, x, 64 << st, b == 0 && st > 0 ? 2 : 1, b == 0);
    }
  x = tg_gap(g, "head.gap", x);
  x = tg_flatten(g, "head.flat", x);
  tg_dense(g, "head.fc", x, 1000);
  return g;
}

/* An architecture with d clusters of c identical cores, lb bytes of LB per core. */
static inline GsArch tg_arch(int clusters, int cores, int64_t lb, int64_t gb) {
  GsArch a;
  memset(&a, 0, sizeof a);
  a.name = "test";
  a.nclusters = clusters;
  a.gb_bytes = gb;
  a.ncore_kinds = 1;
  a.core_kinds[0].name = "pe";
  a.core_kinds[0].count = cores;
  a.core_kinds[0].lb_bytes = lb;
  a.cores_per_cluster = cores;
  return a;
}

/* The op id of the op named `name`, or -1. */
static inline int tg_op_id(const GsGraph *g, const char *name) {
  for (int i = 0; i < g->nops; i++)
    if (strcmp(g->ops[i].name, name) == 0) return i;
  return -1;
}

#endif
