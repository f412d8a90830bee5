/* test_graph.c — the graph IR builder, shape inference per op kind and per-op accounting.
 * Every expected shape and count is computed in the test from the formula written next to it
 * (conv/pool: out = floor((in + p0 + p1 - d(k-1) - 1)/s) + 1, PyTorch's documented rule). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "graph.h"

enum { B = 2 }; /* batch bound by graph_infer in these tests */
#define N GS_DIM_N

static GsGraph *g;
static int x0;

static int setup(void **st) {
  (void)st;
  g = graph_new("t");
  return 0;
}
static int teardown(void **st) {
  (void)st;
  graph_free(g);
  return 0;
}

static int input(const char *name, int ndim, const int64_t *d) {
  int id = graph_add_input(g, name, ndim, d, DT_FP16);
  assert_true(id >= 0);
  return id;
}

static int op1(GsOpKind k, int a, const char *out, const GsAttrs *at) {
  int o = graph_add_op(g, k, &a, 1, &out, 1, at);
  assert_true(o >= 0);
  return o;
}

static int op2(GsOpKind k, int a, int b, const char *out) {
  int in[2] = {a, b};
  int o = graph_add_op(g, k, in, 2, &out, 1, NULL);
  assert_true(o >= 0);
  return o;
}

/* Runs graph_infer with messages captured into buf; returns its result. */
static char msg[4096];
static int infer(void) {
  GsDiag d;
  diag_init(&d);
  FILE *f = fmemopen(msg, sizeof msg, "w");
  d.out = f;
  int r = graph_infer(g, B, &d);
  fclose(f);
  return r;
}

static void assert_shape(int op, int j, int ndim, ...) {
  const GsTensor *t = &g->tensors[g->ops[op].out[j]];
  assert_int_equal(t->ndim, ndim);
  va_list ap;
  va_start(ap, ndim);
  for (int i = 0; i < ndim; i++) assert_int_equal(t->dim[i], va_arg(ap, int64_t));
  va_end(ap);
}

static GsAttrs conv(int64_t units, int k, int s, int p, int dil, int groups, int bias) {
  GsAttrs a;
  graph_attrs_default(&a);
  a.units = units;
  a.kernel[0] = a.kernel[1] = k;
  a.stride[0] = a.stride[1] = s;
  for (int i = 0; i < 4; i++) a.pad[i] = p;
  a.dilation[0] = a.dilation[1] = dil;
  a.groups = groups;
  a.bias = bias;
  return a;
}

static int64_t win(int64_t in, int k, int s, int p, int d) { return (in + 2 * p - d * (k - 1) - 1) / s + 1; }

static void test_conv2d_stem(void **st) {
  (void)st;
  x0 = input("x", 4, (int64_t[]){N, 3, 224, 224});
  GsAttrs a = conv(64, 7, 2, 3, 1, 1, 0);
  int o = op1(OP_CONV2D, x0, "c", &a);
  assert_int_equal(infer(), 0);
  int64_t h = win(224, 7, 2, 3, 1); /* (224+6-6-1)/2+1 = 112 */
  assert_int_equal(h, 112);
  assert_shape(o, 0, 4, (int64_t)B, (int64_t)64, h, h);
  GsOpCost c = graph_op_cost(g, o);
  assert_int_equal(c.macs, (int64_t)B * 64 * h * h * 3 * 7 * 7);
  assert_int_equal(c.params, 64 * 3 * 7 * 7);
  assert_int_equal(c.flops, 2 * c.macs);
  assert_int_equal(c.param_bytes, 2 * c.params);
  assert_int_equal(c.in_bytes, (int64_t)B * 3 * 224 * 224 * 2);
  assert_int_equal(c.out_bytes, (int64_t)B * 64 * h * h * 2);
}

static void test_conv2d_dilation_groups_bias(void **st) {
  (void)st;
  x0 = input("x", 4, (int64_t[]){N, 64, 33, 32});
  GsAttrs a = conv(128, 3, 2, 2, 2, 4, 1);
  int o = op1(OP_CONV2D, x0, "c", &a);
  assert_int_equal(infer(), 0);
  int64_t h = win(33, 3, 2, 2, 2), w = win(32, 3, 2, 2, 2); /* (33+4-5)/2+1=17, (31)/2+1=16 */
  assert_int_equal(h, 17);
  assert_int_equal(w, 16);
  assert_shape(o, 0, 4, (int64_t)B, (int64_t)128, h, w);
  GsOpCost c = graph_op_cost(g, o);
  assert_int_equal(c.macs, (int64_t)B * 128 * h * w * (64 / 4) * 9);
  assert_int_equal(c.params, 128 * (64 / 4) * 9 + 128);
  assert_int_equal(c.flops, 2 * c.macs + (int64_t)B * 128 * h * w); /* + one bias add each */
}

static void test_conv2d_asymmetric(void **st) {
  (void)st;
  x0 = input("x", 4, (int64_t[]){N, 8, 17, 17});
  GsAttrs a = conv(8, 1, 1, 0, 1, 1, 0);
  a.kernel[0] = 1, a.kernel[1] = 7;
  a.pad[0] = 0, a.pad[1] = 3, a.pad[2] = 0, a.pad[3] = 3; /* Inception 1x7 */
  int o = op1(OP_CONV2D, x0, "c", &a);
  assert_int_equal(infer(), 0);
  assert_shape(o, 0, 4, (int64_t)B, (int64_t)8, (int64_t)17, (int64_t)17);
  assert_int_equal(graph_op_cost(g, o).macs, (int64_t)B * 8 * 17 * 17 * 8 * 7);
}

static void test_depthwise(void **st) {
  (void)st;
  x0 = input("x", 4, (int64_t[]){N, 32, 112, 112});
  GsAttrs a = conv(32, 3, 2, 1, 1, 32, 0);
  int o = op1(OP_CONV2D, x0, "dw", &a);
  assert_int_equal(infer(), 0);
  int64_t h = win(112, 3, 2, 1, 1); /* (112+2-3)/2+1 = 56 */
  assert_int_equal(h, 56);
  assert_shape(o, 0, 4, (int64_t)B, (int64_t)32, h, h);
  GsOpCost c = graph_op_cost(g, o);
  assert_int_equal(c.macs, (int64_t)B * 32 * h * h * 1 * 9); /* Cin/groups = 1 */
  assert_int_equal(c.params, 32 * 9);
}

static void test_conv1d(void **st) {
  (void)st;
  x0 = input("x", 3, (int64_t[]){N, 144, 100});
  GsAttrs a = conv(144, 31, 1, 15, 1, 144, 1); /* Conformer depthwise conv, kernel 31 */
  int o = op1(OP_CONV1D, x0, "c", &a);
  GsAttrs p = conv(288, 1, 1, 0, 1, 1, 1);
  int o2 = op1(OP_CONV1D, g->ops[o].out[0], "pw", &p);
  GsAttrs s = conv(16, 3, 2, 0, 1, 1, 0);
  int o3 = op1(OP_CONV1D, x0, "sub", &s);
  assert_int_equal(infer(), 0);
  assert_shape(o, 0, 3, (int64_t)B, (int64_t)144, (int64_t)100);
  assert_shape(o2, 0, 3, (int64_t)B, (int64_t)288, (int64_t)100);
  assert_shape(o3, 0, 3, (int64_t)B, (int64_t)16, win(100, 3, 2, 0, 1)); /* 97/2+1 = 49 */
  GsOpCost c = graph_op_cost(g, o);
  assert_int_equal(c.macs, (int64_t)B * 144 * 100 * 31);
  assert_int_equal(c.params, 144 * 31 + 144);
  assert_int_equal(graph_op_cost(g, o2).params, 288 * 144 + 288);
}

static GsAttrs pool(int k, int s, int p, int ceil_mode) {
  GsAttrs a = conv(0, k, s, p, 1, 1, 0);
  a.ceil_mode = ceil_mode;
  return a;
}

static void test_pool_floor_ceil(void **st) {
  (void)st;
  x0 = input("x", 4, (int64_t[]){N, 8, 112, 5});
  GsAttrs fl = pool(3, 2, 0, 0), ce = pool(3, 2, 0, 1), pe = pool(2, 2, 1, 1);
  int a = op1(OP_MAXPOOL, x0, "a", &fl);
  int b = op1(OP_MAXPOOL, x0, "b", &ce);
  int c = op1(OP_AVGPOOL, x0, "c", &pe);
  assert_int_equal(infer(), 0);
  /* floor: (112-3)/2+1 = 55; (5-3)/2+1 = 2.  ceil: ceil(109/2)+1 = 56; ceil(2/2)+1 = 2. */
  assert_shape(a, 0, 4, (int64_t)B, (int64_t)8, (int64_t)55, (int64_t)2);
  assert_shape(b, 0, 4, (int64_t)B, (int64_t)8, (int64_t)56, (int64_t)2);
  /* k2 s2 p1 ceil on 5: ceil((5+2-2)/2)+1 = 4, but window 4 would start at 3*2 = 6 >= 5+1,
   * i.e. entirely in the padding, so PyTorch drops it: 3. On 112: ceil(112/2)+1 = 57, start
   * 56*2 = 112 >= 113? no, so 57 stays. */
  assert_shape(c, 0, 4, (int64_t)B, (int64_t)8, (int64_t)57, (int64_t)3);
  assert_int_equal(graph_op_cost(g, a).flops, (int64_t)B * 8 * 55 * 2 * 9);
  assert_int_equal(graph_op_cost(g, a).macs, 0);
}

static void test_global_avgpool(void **st) {
  (void)st;
  x0 = input("x", 4, (int64_t[]){N, 2048, 7, 7});
  int o = op1(OP_GAVGPOOL, x0, "p", NULL);
  assert_int_equal(infer(), 0);
  assert_shape(o, 0, 4, (int64_t)B, (int64_t)2048, (int64_t)1, (int64_t)1);
  assert_int_equal(graph_op_cost(g, o).flops, (int64_t)B * 2048 * 49);
}

static void test_broadcast(void **st) {
  (void)st;
  x0 = input("x", 4, (int64_t[]){N, 64, 56, 56});
  int s = input("s", 3, (int64_t[]){64, 1, 1});
  int u = input("u", 3, (int64_t[]){N, 1, 5});
  int v = input("v", 2, (int64_t[]){3, 1});
  int a = op2(OP_ADD, x0, s, "a");
  int b = op2(OP_MUL, u, v, "b");
  int c = op2(OP_DIV, v, u, "c");
  int d = op2(OP_SUB, x0, x0, "d");
  assert_int_equal(infer(), 0);
  assert_shape(a, 0, 4, (int64_t)B, (int64_t)64, (int64_t)56, (int64_t)56);
  assert_shape(b, 0, 3, (int64_t)B, (int64_t)3, (int64_t)5);
  assert_shape(c, 0, 3, (int64_t)B, (int64_t)3, (int64_t)5);
  assert_shape(d, 0, 4, (int64_t)B, (int64_t)64, (int64_t)56, (int64_t)56);
  assert_int_equal(graph_op_cost(g, b).flops, (int64_t)B * 3 * 5);
}

static void test_broadcast_mismatch(void **st) {
  (void)st;
  x0 = input("x", 2, (int64_t[]){N, 64});
  int y = input("y", 1, (int64_t[]){32});
  op2(OP_ADD, x0, y, "z");
  assert_int_equal(infer(), -1);
  assert_non_null(strstr(msg, "[2, 64]"));
  assert_non_null(strstr(msg, "[32]"));
  assert_non_null(strstr(msg, "add 'z'"));
}

static void test_matmul_broadcast(void **st) {
  (void)st;
  int q = input("q", 4, (int64_t[]){N, 12, 128, 64});
  int k = input("k", 4, (int64_t[]){N, 12, 64, 128});
  int a = input("a", 4, (int64_t[]){N, 1, 8, 16});
  int b = input("b", 3, (int64_t[]){5, 16, 2});
  int o = op2(OP_MATMUL, q, k, "s");
  int o2 = op2(OP_MATMUL, a, b, "t");
  assert_int_equal(infer(), 0);
  assert_shape(o, 0, 4, (int64_t)B, (int64_t)12, (int64_t)128, (int64_t)128);
  assert_shape(o2, 0, 4, (int64_t)B, (int64_t)5, (int64_t)8, (int64_t)2);
  assert_int_equal(graph_op_cost(g, o).macs, (int64_t)B * 12 * 128 * 128 * 64); /* M·N·K */
  assert_int_equal(graph_op_cost(g, o2).macs, (int64_t)B * 5 * 8 * 2 * 16);
  assert_int_equal(graph_op_cost(g, o).params, 0);
}

static void test_matmul_inner_mismatch(void **st) {
  (void)st;
  int a = input("a", 3, (int64_t[]){N, 8, 16});
  int b = input("b", 2, (int64_t[]){15, 4});
  op2(OP_MATMUL, a, b, "t");
  assert_int_equal(infer(), -1);
  assert_non_null(strstr(msg, "[2, 8, 16]"));
  assert_non_null(strstr(msg, "[15, 4]"));
}

static void test_dense_norms(void **st) {
  (void)st;
  x0 = input("x", 3, (int64_t[]){N, 128, 768});
  GsAttrs a;
  graph_attrs_default(&a);
  a.units = 3072;
  int d = op1(OP_DENSE, x0, "d", &a);
  int ln = op1(OP_LAYERNORM, x0, "ln", NULL);
  int c = input("c", 4, (int64_t[]){N, 256, 14, 14});
  int bn = op1(OP_BATCHNORM, c, "bn", NULL);
  assert_int_equal(infer(), 0);
  assert_shape(d, 0, 3, (int64_t)B, (int64_t)128, (int64_t)3072);
  GsOpCost k = graph_op_cost(g, d);
  assert_int_equal(k.macs, (int64_t)B * 128 * 768 * 3072);
  assert_int_equal(k.params, 768 * 3072 + 3072);
  assert_int_equal(graph_op_cost(g, ln).params, 2 * 768);
  assert_int_equal(graph_op_cost(g, ln).flops, 7 * (int64_t)B * 128 * 768);
  assert_int_equal(graph_op_cost(g, bn).params, 2 * 256); /* gamma, beta (torchvision) */
  assert_int_equal(graph_op_cost(g, bn).flops, 2 * (int64_t)B * 256 * 14 * 14);
}

static void test_activations(void **st) {
  (void)st;
  x0 = input("x", 3, (int64_t[]){N, 512, 10});
  static const struct {
    GsOpKind k;
    int flops;
  } t[] = {{OP_RELU, 1}, {OP_RELU6, 2}, {OP_GELU, 5}, {OP_SIGMOID, 3},
           {OP_SWISH, 4}, {OP_TANH, 1}, {OP_SOFTMAX, 5}};
  int ops[7];
  for (int i = 0; i < 7; i++) {
    char name[16];
    snprintf(name, sizeof name, "a%d", i);
    ops[i] = op1(t[i].k, x0, name, NULL);
  }
  GsAttrs a;
  graph_attrs_default(&a);
  a.axis = 1;
  int glu = op1(OP_GLU, x0, "glu", &a);
  assert_int_equal(infer(), 0);
  for (int i = 0; i < 7; i++) {
    assert_shape(ops[i], 0, 3, (int64_t)B, (int64_t)512, (int64_t)10);
    assert_int_equal(graph_op_cost(g, ops[i]).flops, (int64_t)t[i].flops * B * 512 * 10);
  }
  assert_shape(glu, 0, 3, (int64_t)B, (int64_t)256, (int64_t)10);
  assert_int_equal(graph_op_cost(g, glu).flops, 4 * (int64_t)B * 256 * 10);
}

static void test_split_concat(void **st) {
  (void)st;
  x0 = input("x", 4, (int64_t[]){N, 64, 8, 8});
  GsAttrs a;
  graph_attrs_default(&a);
  a.axis = 1;
  a.nsizes = 2;
  a.sizes[0] = 16, a.sizes[1] = 48;
  const char *outs[] = {"s1", "s2"};
  int sp = graph_add_op(g, OP_SPLIT, &x0, 1, outs, 2, &a);
  assert_true(sp >= 0);
  GsAttrs e;
  graph_attrs_default(&e);
  e.axis = -3;
  const char *q[] = {"q0", "q1", "q2", "q3"};
  int eq = graph_add_op(g, OP_SPLIT, &x0, 1, q, 4, &e); /* no sizes: 4 equal parts */
  assert_true(eq >= 0);
  GsAttrs c;
  graph_attrs_default(&c);
  c.axis = 1;
  int in[3] = {g->ops[sp].out[1], g->ops[sp].out[0], g->ops[eq].out[2]};
  const char *cn = "cat";
  int ct = graph_add_op(g, OP_CONCAT, in, 3, &cn, 1, &c);
  assert_int_equal(infer(), 0);
  assert_shape(sp, 0, 4, (int64_t)B, (int64_t)16, (int64_t)8, (int64_t)8);
  assert_shape(sp, 1, 4, (int64_t)B, (int64_t)48, (int64_t)8, (int64_t)8);
  for (int j = 0; j < 4; j++) assert_shape(eq, j, 4, (int64_t)B, (int64_t)16, (int64_t)8, (int64_t)8);
  assert_shape(ct, 0, 4, (int64_t)B, (int64_t)(48 + 16 + 16), (int64_t)8, (int64_t)8);
  assert_int_equal(graph_op_cost(g, ct).flops, 0);
}

static void test_split_bad_sizes(void **st) {
  (void)st;
  x0 = input("x", 2, (int64_t[]){N, 64});
  GsAttrs a;
  graph_attrs_default(&a);
  a.nsizes = 2;
  a.sizes[0] = 16, a.sizes[1] = 32;
  const char *outs[] = {"s1", "s2"};
  assert_true(graph_add_op(g, OP_SPLIT, &x0, 1, outs, 2, &a) >= 0);
  assert_int_equal(infer(), -1);
  assert_non_null(strstr(msg, "sum to 48"));
}

static void test_transpose_reshape(void **st) {
  (void)st;
  x0 = input("x", 3, (int64_t[]){N, 128, 768});
  GsAttrs r;
  graph_attrs_default(&r);
  r.nshape = 4;
  r.shape[0] = GS_DIM_N, r.shape[1] = 128, r.shape[2] = 12, r.shape[3] = 64;
  int rs = op1(OP_RESHAPE, x0, "r", &r);
  GsAttrs t;
  graph_attrs_default(&t);
  t.nperm = 4;
  t.perm[0] = 0, t.perm[1] = 2, t.perm[2] = 1, t.perm[3] = 3;
  int tr = op1(OP_TRANSPOSE, g->ops[rs].out[0], "t", &t);
  GsAttrs f;
  graph_attrs_default(&f);
  f.nshape = 2;
  f.shape[0] = -2, f.shape[1] = 768; /* -2: inferred = N*128 */
  int fl = op1(OP_RESHAPE, x0, "f", &f);
  assert_int_equal(infer(), 0);
  assert_shape(rs, 0, 4, (int64_t)B, (int64_t)128, (int64_t)12, (int64_t)64);
  assert_shape(tr, 0, 4, (int64_t)B, (int64_t)12, (int64_t)128, (int64_t)64);
  assert_shape(fl, 0, 2, (int64_t)B * 128, (int64_t)768);
}

static void test_reshape_bad_count(void **st) {
  (void)st;
  x0 = input("x", 2, (int64_t[]){N, 10});
  GsAttrs r;
  graph_attrs_default(&r);
  r.nshape = 2;
  r.shape[0] = GS_DIM_N, r.shape[1] = 3;
  op1(OP_RESHAPE, x0, "r", &r);
  assert_int_equal(infer(), -1);
  assert_non_null(strstr(msg, "[2, 10]"));
  assert_non_null(strstr(msg, "[2, 3]"));
}

static void test_embedding(void **st) {
  (void)st;
  int ids = graph_add_input(g, "ids", 2, (int64_t[]){N, 128}, DT_INT32);
  int bag = graph_add_input(g, "bag", 2, (int64_t[]){N, 20}, DT_INT32);
  GsAttrs a;
  graph_attrs_default(&a);
  a.vocab = 30522, a.dim = 768;
  int e = op1(OP_EMBEDDING, ids, "e", &a);
  GsAttrs b;
  graph_attrs_default(&b);
  b.vocab = 1000, b.dim = 64, b.bag = 20;
  int eb = op1(OP_EMBEDDING, bag, "eb", &b);
  assert_int_equal(infer(), 0);
  assert_shape(e, 0, 3, (int64_t)B, (int64_t)128, (int64_t)768);
  assert_int_equal(g->tensors[g->ops[e].out[0]].dtype, DT_FP16); /* the graph's dtype */
  assert_shape(eb, 0, 2, (int64_t)B, (int64_t)64);
  GsOpCost c = graph_op_cost(g, eb);
  assert_int_equal(c.params, 1000 * 64);
  assert_int_equal(c.flops, (int64_t)B * 64 * 19); /* 19 adds per output element of a bag */
  assert_int_equal(c.in_bytes, (int64_t)B * 20 * 4);
  assert_int_equal(graph_op_cost(g, e).params, (int64_t)30522 * 768);
}

static void test_interaction(void **st) {
  (void)st;
  x0 = input("x", 3, (int64_t[]){N, 27, 128}); /* MLPerf DLRM: 1 dense + 26 sparse, D=128 */
  GsAttrs p;
  graph_attrs_default(&p);
  p.pad_interaction = 1;
  GsAttrs s;
  graph_attrs_default(&s);
  s.self_interaction = 1;
  int a = op1(OP_INTERACTION, x0, "a", NULL);
  int b = op1(OP_INTERACTION, x0, "b", &p);
  int c = op1(OP_INTERACTION, x0, "c", &s);
  assert_int_equal(infer(), 0);
  assert_shape(a, 0, 2, (int64_t)B, (int64_t)(27 * 26 / 2));          /* 351 */
  assert_shape(b, 0, 2, (int64_t)B, (int64_t)(27 * 26 / 2 + 128));    /* 479 */
  assert_shape(c, 0, 2, (int64_t)B, (int64_t)(27 * 28 / 2));          /* 378 */
  assert_int_equal(graph_op_cost(g, a).macs, (int64_t)B * 351 * 128);
}

static void test_conv_errors(void **st) {
  (void)st;
  x0 = input("x", 4, (int64_t[]){N, 6, 4, 4});
  GsAttrs a = conv(8, 3, 1, 0, 1, 4, 0); /* 6 channels, groups 4 */
  op1(OP_CONV2D, x0, "c", &a);
  assert_int_equal(infer(), -1);
  assert_non_null(strstr(msg, "groups=4"));
  assert_non_null(strstr(msg, "[2, 6, 4, 4]"));
}

static void test_kernel_too_big(void **st) {
  (void)st;
  x0 = input("x", 4, (int64_t[]){N, 6, 4, 4});
  GsAttrs a = conv(8, 5, 1, 0, 1, 1, 0);
  op1(OP_CONV2D, x0, "c", &a);
  assert_int_equal(infer(), -1);
  assert_non_null(strstr(msg, "does not fit"));
}

static void test_builder_rejects(void **st) {
  (void)st;
  x0 = input("x", 2, (int64_t[]){N, 4});
  assert_int_equal(graph_add_input(g, "x", 1, (int64_t[]){3}, DT_FP16), -1); /* redefined */
  assert_int_equal(graph_add_input(g, "y", 0, NULL, DT_FP16), -1);
  assert_int_equal(graph_add_input(g, "y", 1, (int64_t[]){0}, DT_FP16), -1);
  const char *o = "z";
  int two[2] = {x0, x0};
  assert_int_equal(graph_add_op(g, OP_RELU, two, 2, &o, 1, NULL), -1); /* operand count */
  int bad = 7;
  assert_int_equal(graph_add_op(g, OP_RELU, &bad, 1, &o, 1, NULL), -1); /* no tensor 7 */
  const char *dup = "x";
  assert_int_equal(graph_add_op(g, OP_RELU, &x0, 1, &dup, 1, NULL), -1);
  const char *outs[] = {"a", "a"};
  assert_int_equal(graph_add_op(g, OP_SPLIT, &x0, 1, outs, 2, NULL), -1);
  assert_int_equal(graph_add_op(g, OP_RELU, &x0, 1, outs, 2, NULL), -1); /* 2 outputs */
  assert_int_equal(g->nops, 0);
  assert_int_equal(graph_find_tensor(g, "x"), x0);
  assert_int_equal(graph_find_tensor(g, "nope"), -1);
}

static void test_batch_rebind(void **st) {
  (void)st;
  x0 = input("x", 2, (int64_t[]){N, 4});
  int o = op1(OP_RELU, x0, "y", NULL);
  GsDiag d;
  diag_init(&d);
  assert_int_equal(graph_infer(g, 7, &d), 0);
  assert_shape(o, 0, 2, (int64_t)7, (int64_t)4);
  assert_int_equal(graph_infer(g, 3, &d), 0);
  assert_shape(o, 0, 2, (int64_t)3, (int64_t)4);
  FILE *f = fmemopen(msg, sizeof msg, "w");
  d.out = f;
  assert_int_equal(graph_infer(g, 0, &d), -1);
  fclose(f);
  assert_non_null(strstr(msg, "batch"));
}

static void test_many_names(void **st) {
  (void)st;
  /* 5000 tensors: the name index must keep finding every one after its rehashes. */
  int prev = input("t0", 1, (int64_t[]){N});
  for (int i = 1; i < 5000; i++) {
    char name[16];
    snprintf(name, sizeof name, "t%d", i);
    int o = op1(OP_RELU, prev, name, NULL); /* may move g->ops: index it afterwards */
    prev = g->ops[o].out[0];
  }
  for (int i = 0; i < 5000; i += 7) {
    char name[16];
    snprintf(name, sizeof name, "t%d", i);
    assert_int_equal(graph_find_tensor(g, name), i);
  }
  graph_fill_outputs(g);
  assert_int_equal(g->noutputs, 1);
  assert_int_equal(g->outputs[0], 4999);
}

static void test_peak_live(void **st) {
  (void)st;
  /* x[N,100] -> a = relu(x) -> b = relu(a) -> c = add(a, b). Bytes per tensor: 2*100*2 = 400.
   * op0: x, a live = 800; op1: x is dead after op0 -> a, b = 800; op2: a, b, c = 1200. */
  x0 = input("x", 2, (int64_t[]){N, 100});
  int a = op1(OP_RELU, x0, "a", NULL);
  int b = op1(OP_RELU, g->ops[a].out[0], "b", NULL);
  op2(OP_ADD, g->ops[a].out[0], g->ops[b].out[0], "c");
  assert_int_equal(infer(), 0);
  int at;
  assert_int_equal(graph_peak_live_bytes(g, &at), 3 * B * 100 * 2);
  assert_int_equal(at, 2);
}

static void test_graph_check(void **st) {
  (void)st;
  x0 = input("x", 2, (int64_t[]){N, 4});
  int a = op1(OP_RELU, x0, "a", NULL);
  int b = op1(OP_RELU, g->ops[a].out[0], "b", NULL);
  assert_null(graph_check(g)); /* before inference: dims not checked */
  assert_int_equal(infer(), 0);
  assert_null(graph_check(g));
  /* Swap the two ops: b now reads a's output before it is defined. */
  GsOp tmp = g->ops[a];
  g->ops[a] = g->ops[b];
  g->ops[b] = tmp;
  const char *m = graph_check(g);
  assert_non_null(m);
  assert_non_null(strstr(m, "before it is defined"));
  g->ops[b] = g->ops[a];
  g->ops[a] = tmp;
  assert_null(graph_check(g));
  g->tensors[g->ops[b].out[0]].producer = a; /* wrong producer id */
  assert_non_null(strstr(graph_check(g), "another producer"));
  g->tensors[g->ops[b].out[0]].producer = b;
  g->tensors[g->ops[b].out[0]].dim[1] = 0;
  assert_non_null(strstr(graph_check(g), "has dim 1 = 0"));
}

static void test_opkind_names(void **st) {
  (void)st;
  for (int k = 0; k < OP_COUNT; k++) {
    GsOpKind p;
    assert_int_equal(graph_opkind_parse(graph_opkind_name((GsOpKind)k), &p), 0);
    assert_int_equal(p, k);
  }
  GsOpKind p;
  assert_int_equal(graph_opkind_parse("conv3d", &p), -1);
  assert_true(gtg_name_valid("layer1.0_conv"));
  assert_false(gtg_name_valid("1x"));
  assert_true(gtg_name_valid("bert-128"));
  assert_false(gtg_name_valid("a/b"));
  assert_false(gtg_name_valid("-a"));
  assert_false(gtg_name_valid(""));
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
int main(void) {
  const struct CMUnitTest tests[] = {
      T(test_conv2d_stem),       T(test_conv2d_dilation_groups_bias), T(test_conv2d_asymmetric),
      T(test_depthwise),         T(test_conv1d),                      T(test_pool_floor_ceil),
      T(test_global_avgpool),    T(test_broadcast),                   T(test_broadcast_mismatch),
      T(test_matmul_broadcast),  T(test_matmul_inner_mismatch),       T(test_dense_norms),
      T(test_activations),       T(test_split_concat),                T(test_split_bad_sizes),
      T(test_transpose_reshape), T(test_reshape_bad_count),           T(test_embedding),
      T(test_interaction),       T(test_conv_errors),                 T(test_kernel_too_big),
      T(test_builder_rejects),   T(test_batch_rebind),                T(test_many_names),
      T(test_peak_live),         T(test_opkind_names),                T(test_graph_check),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
