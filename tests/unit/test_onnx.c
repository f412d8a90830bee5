/* test_onnx.c — ONNX import: fixtures made by tests/onnx/make_fixtures.py (run here, into
 * BUILD/onnx-fixtures/unit) are imported, bound to a batch and checked for shapes, op kinds,
 * MACs and parameters. Every expected number is computed below from the layer sizes the
 * generator uses (its docstrings give them), with the IR's accounting conventions of
 * docs/gtg.md: conv MACs = out_h*out_w*units*(C/groups)*kh*kw per sample, dense MACs =
 * rows*K*units, matmul MACs = batch dims*M*K*N; parameters = weights (+ bias when present),
 * batchnorm and layernorm 2 per channel (scale and shift). Conv/pool output size: PyTorch's documented
 * floor((in + p0 + p1 - d*(k-1) - 1) / s) + 1 (ceil for ceil_mode).
 * If python3-onnx is missing, the generation test and every import test fail (no skip). */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "graph.h"

static char fixdir[1100];
static char builddir[1024];
static int gen_status = -1;
static char msg[8192]; /* diagnostics of the last load */

static int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t p0, int64_t p1, int64_t d) {
  return (in + p0 + p1 - d * (k - 1) - 1) / s + 1;
}

static GsGraph *load_diag(const char *name) {
  char path[1200];
  snprintf(path, sizeof path, "%s/%s", fixdir, name);
  GsDiag d;
  diag_init(&d);
  FILE *f = fmemopen(msg, sizeof msg, "w");
  d.out = f;
  GsGraph *g = model_load(path, &d);
  fclose(f);
  return g;
}

static GsGraph *load(const char *name, int64_t batch) {
  GsGraph *g = load_diag(name);
  if (!g) fprintf(stderr, "# %s", msg);
  assert_non_null(g);
  GsDiag d;
  diag_init(&d);
  assert_int_equal(graph_infer(g, batch, &d), 0);
  return g;
}

typedef struct {
  int64_t macs, params;
} Totals;

static Totals totals(const GsGraph *g) {
  Totals t = {0, 0};
  for (int i = 0; i < g->nops; i++) {
    GsOpCost c = graph_op_cost(g, i);
    t.macs += c.macs;
    t.params += c.params;
  }
  return t;
}

static int count(const GsGraph *g, GsOpKind k) {
  int n = 0;
  for (int i = 0; i < g->nops; i++) n += g->ops[i].kind == k;
  return n;
}

static const GsOp *nth_op(const GsGraph *g, GsOpKind k, int nth) {
  for (int i = 0; i < g->nops; i++)
    if (g->ops[i].kind == k && nth-- == 0) return &g->ops[i];
  fail_msg("no op %s #%d", graph_opkind_name(k), nth);
  return NULL;
}

static void assert_shape(const GsTensor *t, int nd, const int64_t *want) {
  assert_int_equal(t->ndim, nd);
  for (int i = 0; i < nd; i++) assert_int_equal(t->dim[i], want[i]);
}

/* The model's output: the graph output made by the last op (Gather/Slice on activations add
 * unread split parts as further outputs, docs/onnx.md). */
static const GsTensor *output(const GsGraph *g) {
  for (int i = 0; i < g->noutputs; i++)
    if (g->tensors[g->outputs[i]].producer == g->nops - 1) return &g->tensors[g->outputs[i]];
  fail_msg("the last op makes no graph output");
  return NULL;
}

static void test_fixtures_generated(void **st) {
  (void)st;
  assert_int_equal(gen_status, 0);
}

/* ResNet-style: stem conv 7x7/2 p3 3->16 on 32x32, BN, ReLU, maxpool 3/2 p1; basic block
 * conv3x3 16->16 p1 (x2, no bias) with BN, residual add; global pool, flatten, Gemm 16->10. */
enum { R_H = 32, R_C = 16, R_CLASSES = 10 };
static int64_t resnet_macs_per_sample(void) {
  int64_t h1 = out_size(R_H, 7, 2, 3, 3, 1);         /* 16 */
  int64_t h2 = out_size(h1, 3, 2, 1, 1, 1);          /* 8 */
  return h1 * h1 * R_C * 3 * 7 * 7                   /* stem */
         + 2 * (h2 * h2 * R_C * R_C * 3 * 3)         /* block convs */
         + R_C * R_CLASSES;                          /* fc */
}
static int64_t resnet_params(void) {
  return R_C * 3 * 7 * 7 + 2 * (R_C * R_C * 3 * 3) + (R_C * R_CLASSES + R_CLASSES) +
         3 * 2 * R_C;                                /* three batchnorms */
}

static void check_resnet(const char *file) {
  enum { B = 3 };
  GsGraph *g = load(file, B);
  Totals t = totals(g);
  assert_int_equal(t.macs, B * resnet_macs_per_sample());
  assert_int_equal(t.params, resnet_params());
  assert_int_equal(count(g, OP_CONV2D), 3);
  assert_int_equal(count(g, OP_BATCHNORM), 3);
  assert_int_equal(count(g, OP_RELU), 3);
  assert_int_equal(count(g, OP_MAXPOOL), 1);
  assert_int_equal(count(g, OP_ADD), 1);
  assert_int_equal(count(g, OP_GAVGPOOL), 1);
  assert_int_equal(count(g, OP_DENSE), 1);
  assert_int_equal(count(g, OP_RESHAPE), 1); /* Flatten */
  assert_int_equal(g->nops, 14);
  /* the weights are never graph inputs, whichever way the export passed them */
  assert_int_equal(g->ninputs, 1);
  assert_int_equal(g->tensors[g->inputs[0]].decl[0], GS_DIM_N);
  const GsOp *stem = nth_op(g, OP_CONV2D, 0);
  assert_int_equal(stem->at.bias, 0);
  assert_int_equal(stem->at.stride[0], 2);
  assert_int_equal(stem->at.pad[0], 3);
  const GsOp *mp = nth_op(g, OP_MAXPOOL, 0);
  int64_t h2 = out_size(out_size(R_H, 7, 2, 3, 3, 1), 3, 2, 1, 1, 1);
  assert_shape(&g->tensors[mp->out[0]], 4, (int64_t[]){B, R_C, h2, h2});
  const GsOp *fc = nth_op(g, OP_DENSE, 0);
  assert_int_equal(fc->at.units, R_CLASSES);
  assert_int_equal(fc->at.bias, 1);
  assert_int_equal(g->noutputs, 1);
  assert_shape(output(g), 2, (int64_t[]){B, R_CLASSES});
  graph_free(g);
}

static void test_resnet_initializers(void **st) {
  (void)st;
  check_resnet("resnet_block.onnx");
}

static void test_resnet_graph_only(void **st) {
  (void)st;
  check_resnet("resnet_block_graphonly.onnx");
}

/* The symbolic batch stays symbolic: MACs scale linearly with the batch bound later. */
static void test_symbolic_batch(void **st) {
  (void)st;
  GsGraph *g = load("resnet_block.onnx", 1);
  int64_t one = totals(g).macs;
  GsDiag d;
  diag_init(&d);
  assert_int_equal(graph_infer(g, 7, &d), 0);
  assert_int_equal(totals(g).macs, 7 * one);
  assert_int_equal(g->default_batch, 1); /* a symbolic batch defaults to 1 (docs/onnx.md) */
  graph_free(g);
}

/* Transformer encoder layer: S=8 tokens, D=16, H=2 heads of dh=8, FFN 32. Q/K/V/O are
 * MatMul + Add(bias) -> dense with bias; scores q.kT and context p.v are activation matmuls. */
enum { E_S = 8, E_D = 16, E_H = 2, E_DH = 8, E_FF = 32 };
static void check_encoder(const char *file) {
  enum { B = 4 };
  GsGraph *g = load(file, B);
  Totals t = totals(g);
  int64_t per_sample = 4 * (int64_t)E_S * E_D * E_D          /* q, k, v, output projections */
                       + 2 * (int64_t)E_H * E_S * E_S * E_DH /* scores and context */
                       + 2 * (int64_t)E_S * E_D * E_FF;      /* FFN up and down */
  assert_int_equal(t.macs, B * per_sample);
  int64_t params = 4 * (E_D * E_D + E_D) + (E_D * E_FF + E_FF) + (E_FF * E_D + E_D) +
                   2 * (2 * E_D); /* two layernorms */
  assert_int_equal(t.params, params);
  assert_int_equal(count(g, OP_DENSE), 6);
  for (int i = 0; i < 6; i++) assert_int_equal(nth_op(g, OP_DENSE, i)->at.bias, 1);
  assert_int_equal(count(g, OP_MATMUL), 2);
  assert_int_equal(count(g, OP_LAYERNORM), 2); /* decomposed form recognised */
  assert_int_equal(count(g, OP_GELU), 1);      /* erf form recognised */
  assert_int_equal(count(g, OP_SOFTMAX), 1);
  assert_int_equal(count(g, OP_TRANSPOSE), 4);
  assert_int_equal(count(g, OP_RESHAPE), 4);
  assert_int_equal(count(g, OP_ADD), 2); /* the two residuals; biases folded */
  assert_int_equal(count(g, OP_SUB), 0);
  assert_int_equal(count(g, OP_MUL), 0);
  assert_int_equal(count(g, OP_DIV), 1); /* scores / sqrt(dh) */
  /* Shape/Gather/Unsqueeze/Concat folded into targets that keep the symbolic batch */
  const GsOp *r = nth_op(g, OP_RESHAPE, 0);
  assert_int_equal(r->at.nshape, 4);
  assert_int_equal(r->at.shape[0], GS_DIM_N);
  assert_int_equal(r->at.shape[2], E_H);
  assert_int_equal(r->at.shape[3], E_DH);
  const GsOp *scores = nth_op(g, OP_MATMUL, 0);
  assert_shape(&g->tensors[scores->out[0]], 4, (int64_t[]){B, E_H, E_S, E_S});
  /* the 1/sqrt(dh) divisor is a constant operand: an input of shape [1] (docs/onnx.md) */
  assert_int_equal(g->ninputs, 2);
  assert_shape(output(g), 3, (int64_t[]){B, E_S, E_D});
  graph_free(g);
}

static void test_encoder(void **st) {
  (void)st;
  check_encoder("encoder.onnx");
}

static void test_encoder_graph_only(void **st) {
  (void)st;
  check_encoder("encoder_graphonly.onnx");
}

/* MobileNet-v2 blocks on [N, 8, 16, 16]: 8 -expand-> 32 -dw3x3/2-> 32 -project-> 16, then
 * 16 -> 64 -> dw3x3/1 -> 16 with residual. No conv has a bias; ReLU6 = Clip(0, 6). */
static void test_mobilenet(void **st) {
  (void)st;
  enum { B = 2, H = 16 };
  GsGraph *g = load("mobilenet_block.onnx", B);
  int64_t h = out_size(H, 3, 2, 1, 1, 1); /* 8 */
  int64_t macs = H * H * 8 * 32 + h * h * 32 * 9 + h * h * 32 * 16  /* block 1 */
                 + h * h * 16 * 64 + h * h * 64 * 9 + h * h * 64 * 16; /* block 2 */
  assert_int_equal(totals(g).macs, B * macs);
  int64_t params = 8 * 32 + 32 * 9 + 32 * 16 + 16 * 64 + 64 * 9 + 64 * 16 +
                   2 * (32 + 32 + 16 + 64 + 64 + 16);
  assert_int_equal(totals(g).params, params);
  assert_int_equal(count(g, OP_RELU6), 4);
  const GsOp *dw = nth_op(g, OP_CONV2D, 1);
  assert_int_equal(dw->at.groups, 32);
  assert_int_equal(dw->at.units, 32);
  assert_int_equal(dw->at.stride[1], 2);
  assert_shape(output(g), 4, (int64_t[]){B, 16, h, h});
  graph_free(g);
}

/* DenseNet: two layers (BN-ReLU-conv1x1 to 32, BN-ReLU-conv3x3 to growth 8) on [N, 16, 7, 7],
 * each concatenating onto the block input; transition BN-ReLU-conv1x1 32->16 and AveragePool
 * 2x2/2 with ceil_mode: ceil((7 - 2) / 2) + 1 = 4. */
static void test_densenet(void **st) {
  (void)st;
  enum { B = 2, H = 7 };
  GsGraph *g = load("densenet_block.onnx", B);
  int64_t px = H * H;
  int64_t macs = px * 16 * 32 + px * 32 * 8 * 9 + px * 24 * 32 + px * 32 * 8 * 9 + px * 32 * 16;
  assert_int_equal(totals(g).macs, B * macs);
  int64_t params = 16 * 32 + 32 * 8 * 9 + 24 * 32 + 32 * 8 * 9 + 32 * 16 +
                   2 * (16 + 32 + 24 + 32 + 32);
  assert_int_equal(totals(g).params, params);
  assert_int_equal(count(g, OP_CONCAT), 2);
  assert_int_equal(nth_op(g, OP_CONCAT, 1)->nin, 3);
  int64_t ph = (H - 2 + 2 - 1) / 2 + 1; /* ceil((7 - 2) / 2) + 1 */
  assert_shape(output(g), 4, (int64_t[]){B, 16, ph, ph});
  graph_free(g);
}

/* Opset 17: Conv1d k3 d2 p2 4->8 with bias on L=32, swish, Split [3, 5], Tanh/Sigmoid, Concat,
 * Transpose to [N, 32, 8], LayerNormalization, Dropout, Flatten, Gemm 256->5 without bias. */
static void test_misc17(void **st) {
  (void)st;
  enum { B = 3, L = 32 };
  GsGraph *g = load("misc17.onnx", B);
  int64_t lo = out_size(L, 3, 1, 2, 2, 2);
  assert_int_equal(lo, 32);
  assert_int_equal(totals(g).macs, B * (lo * 8 * 4 * 3 + lo * 8 * 5));
  assert_int_equal(totals(g).params, 8 * 4 * 3 + 8 + 2 * 8 + lo * 8 * 5);
  const GsOp *cv = nth_op(g, OP_CONV1D, 0);
  assert_int_equal(cv->at.kernel[1], 3);
  assert_int_equal(cv->at.dilation[1], 2);
  assert_int_equal(cv->at.bias, 1);
  assert_shape(&g->tensors[cv->out[0]], 3, (int64_t[]){B, 8, lo});
  assert_int_equal(count(g, OP_SWISH), 1);
  assert_int_equal(count(g, OP_SIGMOID), 1); /* the one outside the swish pattern */
  assert_int_equal(count(g, OP_TANH), 1);
  const GsOp *sp = nth_op(g, OP_SPLIT, 0);
  assert_int_equal(sp->nout, 2);
  assert_int_equal(sp->at.sizes[0], 3);
  assert_int_equal(sp->at.sizes[1], 5);
  assert_int_equal(count(g, OP_LAYERNORM), 1);
  assert_int_equal(nth_op(g, OP_DENSE, 0)->at.bias, 0);
  assert_shape(output(g), 2, (int64_t[]){B, 5});
  graph_free(g);
}

/* mobilenetv3_block(13): conv 8->16 3x3 pad 1 on 8x8 + hardswish, squeeze-excite (global
 * pool, conv 16->4 + relu, conv 4->16 + hardsigmoid, mul), conv 16->8 1x1; opset 17 writes
 * hardswish as HardSwish, opset 13 as Mul(x, HardSigmoid(x)): both import as one hard_swish
 * and one hard_sigmoid (the squeeze-excite's gate), with the same MACs:
 * B * (64*16*8*9 + 16*4 + 4*16 + 64*8*16). Bias-free convs (Builder.conv's default). */
static void test_mobilenetv3(void **st) {
  (void)st;
  enum { B = 2 };
  const char *files[] = {"mobilenetv3_block.onnx", "mobilenetv3_block13.onnx"};
  for (int i = 0; i < 2; i++) {
    GsGraph *g = load(files[i], B);
    assert_int_equal(count(g, OP_HSWISH), 1);
    assert_int_equal(count(g, OP_HSIGMOID), 1);
    assert_int_equal(count(g, OP_MUL), 1);
    assert_int_equal(totals(g).macs, B * (64 * 16 * 8 * 9 + 16 * 4 + 4 * 16 + 64 * 8 * 16));
    /* FLOPs of the two new ops: 5 per element of [B,16,8,8] and 4 per element of [B,16,1,1] */
    const GsOp *hs = nth_op(g, OP_HSWISH, 0), *hg = nth_op(g, OP_HSIGMOID, 0);
    assert_int_equal(graph_op_cost(g, (int)(hs - g->ops)).flops, 5 * B * 16 * 64);
    assert_int_equal(graph_op_cost(g, (int)(hg - g->ops)).flops, 4 * B * 16);
    graph_free(g);
  }
}

/* pad_fold (make_fixtures.py), x [B, 4, 8, 8]: Pad 1 on H and W folds into the 3x3 conv
 * (pad 1 all round: 8x8 out, MACs B*64*8*4*9); a Pad of zeros before the 2x2/2 AveragePool
 * vanishes (pad 0: 4x4); Pad bottom/right 1 before the 2x2/2 MaxPool with pads [1,0,0,0]
 * gives t,l,b,r = 1,0,1,1: height (4+1+1-2)/2+1 = 3, width floor((4+0+1-2)/2)+1 = 2, so
 * [B, 8, 3, 2]. Opset 10 (pads as an attribute) and 13 (pads as an input) import the same
 * graph. */
static void test_pad_fold(void **st) {
  (void)st;
  enum { B = 2 };
  const char *files[] = {"pad_fold.onnx", "pad_fold10.onnx"};
  for (int i = 0; i < 2; i++) {
    GsGraph *g = load(files[i], B);
    assert_int_equal(g->nops, 3);
    const GsOp *cv = nth_op(g, OP_CONV2D, 0), *ap = nth_op(g, OP_AVGPOOL, 0),
               *mp = nth_op(g, OP_MAXPOOL, 0);
    for (int k = 0; k < 4; k++) assert_int_equal(cv->at.pad[k], 1);
    for (int k = 0; k < 4; k++) assert_int_equal(ap->at.pad[k], 0);
    int want[4] = {1, 0, 1, 1};
    for (int k = 0; k < 4; k++) assert_int_equal(mp->at.pad[k], want[k]);
    assert_shape(&g->tensors[cv->out[0]], 4, (int64_t[]){B, 8, 8, 8});
    assert_shape(&g->tensors[ap->out[0]], 4, (int64_t[]){B, 8, 4, 4});
    assert_shape(output(g), 4, (int64_t[]){B, 8, 3, 2});
    assert_int_equal(totals(g).macs, B * 64 * 8 * 4 * 9);
    graph_free(g);
  }
}

/* pad_ops (make_fixtures.py), x [B, 4, 8, 8]: no Pad folds. reflect 1 on H, W -> [B, 4, 10,
 * 10] before a 3x3 conv -> [B, 8, 8, 8] (B*64*8*4*9 MACs); edge C+2 (end), W+3 (end) ->
 * [B, 10, 8, 11]; constant 0.5, H+2 (begin) -> [B, 10, 10, 11]; maxpool 2x2/2 -> [B, 10, 5, 5];
 * zero pad 1 all round, read by a Relu -> [B, 10, 7, 7]; 1x1 conv -> [B, 4, 7, 7] (B*49*4*10).
 * A pad has no MACs and no FLOPs (a copy). pad_reflect and pad_relu (formerly refused): a
 * reflect pad before a conv, a zero pad before a Relu. pad_axes18: opset 18's axes input (-1)
 * with pads 1, 2 -> [B, 4, 8, 11]. */
static void test_pad_ops(void **st) {
  (void)st;
  enum { B = 2 };
  GsGraph *g = load("pad_ops.onnx", B);
  assert_int_equal(count(g, OP_PAD), 4);
  assert_int_equal(g->nops, 8);
  const GsOp *p[4];
  for (int i = 0; i < 4; i++) p[i] = nth_op(g, OP_PAD, i);
  assert_int_equal(p[0]->at.pad_mode, GS_PAD_REFLECT);
  assert_int_equal(p[1]->at.pad_mode, GS_PAD_EDGE);
  assert_int_equal(p[2]->at.pad_mode, GS_PAD_CONSTANT);
  assert_int_equal(p[3]->at.pad_mode, GS_PAD_CONSTANT);
  assert_shape(&g->tensors[p[0]->out[0]], 4, (int64_t[]){B, 4, 10, 10});
  assert_shape(&g->tensors[p[1]->out[0]], 4, (int64_t[]){B, 10, 8, 11});
  assert_shape(&g->tensors[p[2]->out[0]], 4, (int64_t[]){B, 10, 10, 11});
  assert_shape(&g->tensors[p[3]->out[0]], 4, (int64_t[]){B, 10, 7, 7});
  assert_shape(output(g), 4, (int64_t[]){B, 4, 7, 7});
  assert_int_equal(totals(g).macs, B * (64 * 8 * 4 * 9 + 49 * 4 * 10));
  for (int i = 0; i < 4; i++) {
    GsOpCost c = graph_op_cost(g, (int)(p[i] - g->ops));
    assert_int_equal(c.macs, 0);
    assert_int_equal(c.flops, 0);
  }
  graph_free(g);
  g = load("pad_reflect.onnx", B);
  assert_int_equal(count(g, OP_PAD), 1);
  assert_int_equal(totals(g).macs, B * 64 * 4 * 4 * 9);
  graph_free(g);
  g = load("pad_relu.onnx", B);
  assert_int_equal(count(g, OP_PAD), 1);
  assert_shape(output(g), 4, (int64_t[]){B, 4, 10, 10});
  graph_free(g);
  g = load("pad_axes18.onnx", B);
  const GsOp *a = nth_op(g, OP_PAD, 0);
  assert_int_equal(a->at.pad_mode, GS_PAD_EDGE);
  assert_shape(output(g), 4, (int64_t[]){B, 4, 8, 11});
  graph_free(g);
}

/* convtranspose (make_fixtures.py), x [B, 8, 6, 6], by the sub-pixel decomposition: k4 s2 p1
 * 8->4 -> [B, 4, 12, 12]: a conv of 4·4 = 16 units, 2x2 sub-kernels, over 6x6 phases (pads
 * 1,1,0,0), reshape, transpose, reshape; MACs B·36·16·8·4 = exactly the ONNX count
 * B·6·6·8·4·4·4 = 18432 B. k2 s2 p0 4->2 -> [B, 2, 24, 24]: 1x1 conv of 8 units, 4608 B (=
 * B·144·4·2·4). k3 s1 p1 2->3: a plain 3x3 conv, pad 1 -> [B, 3, 24, 24], 31104 B (= B·576·2·
 * 3·9). convtranspose_odd (s does not divide k): k3 s2 p1 op1 -> [B, 4, 12, 12] with 2x2
 * sub-kernels for all 4 phases: 18432 B where the exact count is 10368 B (the documented
 * difference); k3 s2 p1 -> 23x23, cropped from 24x24 by two splits. */
static void test_convtranspose(void **st) {
  (void)st;
  enum { B = 3 };
  GsGraph *g = load("convtranspose.onnx", B);
  assert_int_equal(count(g, OP_CONV2D), 3);
  assert_int_equal(count(g, OP_TRANSPOSE), 2);
  const GsOp *c0 = nth_op(g, OP_CONV2D, 0);
  assert_int_equal(c0->at.units, 16);
  assert_int_equal(c0->at.kernel[0], 2);
  assert_int_equal(c0->at.bias, 1);
  assert_shape(&g->tensors[c0->out[0]], 4, (int64_t[]){B, 16, 6, 6});
  assert_shape(&g->tensors[nth_op(g, OP_TRANSPOSE, 0)->out[0]], 6, (int64_t[]){B, 4, 6, 2, 6, 2});
  assert_shape(output(g), 4, (int64_t[]){B, 3, 24, 24});
  assert_int_equal(graph_op_cost(g, (int)(c0 - g->ops)).macs, B * 6 * 6 * 8 * 4 * 4 * 4);
  assert_int_equal(totals(g).macs, B * (18432 + 4608 + 31104));
  graph_free(g);
  g = load("convtranspose_odd.onnx", B);
  assert_int_equal(count(g, OP_SPLIT), 2);
  assert_shape(output(g), 4, (int64_t[]){B, 2, 23, 23});
  assert_int_equal(totals(g).macs, B * (18432 + 144 * 8 * 4 * 4));
  graph_free(g);
}

/* einsum (make_fixtures.py), x [B, 16, 32]: "bid,jd->bij" and "bid , dj -> bij" with constant
 * W are dense 24 (B*16*32*24 each); viewed as [B, 16, 4, 6]; "bihd,bjhd->bhij" transposes q to
 * [b h i d] and k to [b h d j], a matmul [B, 4, 16, 16] (B*4*16*16*6); "bhij,bjhd->bihd"
 * transposes k to [b h j d], a matmul [B, 4, 16, 6], transposed to [B, 16, 4, 6] (B*4*16*6*16).
 * einsum2d: implicit "ij,jk" of a [B, 8] and a computed [8, 5] is a matmul [B, 5]; "ij->ji" a
 * transpose [5, B]. */
static void test_einsum(void **st) {
  (void)st;
  enum { B = 3 };
  GsGraph *g = load("einsum.onnx", B);
  assert_int_equal(count(g, OP_DENSE), 2);
  assert_int_equal(count(g, OP_MATMUL), 2);
  assert_int_equal(count(g, OP_TRANSPOSE), 4);
  assert_int_equal(nth_op(g, OP_DENSE, 0)->at.units, 24);
  assert_int_equal(nth_op(g, OP_DENSE, 1)->at.units, 24);
  const GsOp *m0 = nth_op(g, OP_MATMUL, 0), *m1 = nth_op(g, OP_MATMUL, 1);
  assert_shape(&g->tensors[m0->out[0]], 4, (int64_t[]){B, 4, 16, 16});
  assert_shape(&g->tensors[m1->out[0]], 4, (int64_t[]){B, 4, 16, 6});
  assert_shape(output(g), 4, (int64_t[]){B, 16, 4, 6});
  assert_int_equal(totals(g).macs, B * (2 * 16 * 32 * 24 + 4 * 16 * 16 * 6 + 4 * 16 * 6 * 16));
  graph_free(g);
  g = load("einsum2d.onnx", B);
  assert_int_equal(count(g, OP_MATMUL), 1);
  assert_shape(&g->tensors[nth_op(g, OP_MATMUL, 0)->out[0]], 2, (int64_t[]){B, 5});
  assert_shape(output(g), 2, (int64_t[]){5, B});
  assert_int_equal(totals(g).macs, B * 8 * 5);
  graph_free(g);
}

/* gelu20: Gemm 16->32 without bias, then opset 20's Gelu twice (erf, tanh approximation). */
static void test_gelu20(void **st) {
  (void)st;
  enum { B = 3 };
  GsGraph *g = load("gelu20.onnx", B);
  assert_int_equal(g->nops, 3);
  assert_int_equal(count(g, OP_GELU), 2);
  assert_int_equal(totals(g).macs, B * 16 * 32);
  graph_free(g);
}

/* resize_block (make_fixtures.py), x [B, 8, 8, 8]: conv 3x3 8->8 (B*64*8*8*9 MACs), Resize
 * linear by scales 2 -> [B, 8, 16, 16] (7 FLOPs per output: B*8*256*7), conv 1x1 8->4
 * (B*256*4*8 MACs), Resize nearest to sizes Concat(Shape[0:2], [32, 24]) -> [B, 4, 32, 24]
 * (no FLOPs). upsample9: Upsample x2 nearest of [B, 4, 5, 5] -> [B, 4, 10, 10]. */
static void test_resize(void **st) {
  (void)st;
  enum { B = 3 };
  GsGraph *g = load("resize_block.onnx", B);
  assert_int_equal(count(g, OP_RESIZE), 2);
  const GsOp *r1 = nth_op(g, OP_RESIZE, 0), *r2 = nth_op(g, OP_RESIZE, 1);
  assert_int_equal(r1->at.linear, 1);
  assert_int_equal(r2->at.linear, 0);
  assert_shape(&g->tensors[r1->out[0]], 4, (int64_t[]){B, 8, 16, 16});
  assert_shape(output(g), 4, (int64_t[]){B, 4, 32, 24});
  assert_int_equal(totals(g).macs, B * (64 * 8 * 8 * 9 + 256 * 4 * 8));
  assert_int_equal(graph_op_cost(g, (int)(r1 - g->ops)).flops, B * 8 * 256 * 7);
  assert_int_equal(graph_op_cost(g, (int)(r2 - g->ops)).flops, 0);
  graph_free(g);
  g = load("upsample9.onnx", B);
  assert_int_equal(count(g, OP_RESIZE), 1);
  assert_shape(output(g), 4, (int64_t[]){B, 4, 10, 10});
  graph_free(g);
}

/* mod_pad: pad = Mod(-20, 7) = 1 (Python's sign rule; C's fmod would give -6), folded into
 * the 7x7/7 conv as bottom and right padding: (20 + 1 - 7) / 7 + 1 = 3 rows and columns,
 * MACs B * 9 * 8 * 3 * 49. */
static void test_mod_pad(void **st) {
  (void)st;
  enum { B = 2 };
  GsGraph *g = load("mod_pad.onnx", B);
  assert_int_equal(g->nops, 1);
  const GsOp *cv = nth_op(g, OP_CONV2D, 0);
  int want[4] = {0, 0, 1, 1};
  for (int k = 0; k < 4; k++) assert_int_equal(cv->at.pad[k], want[k]);
  assert_shape(output(g), 4, (int64_t[]){B, 8, 3, 3});
  assert_int_equal(totals(g).macs, B * 9 * 8 * 3 * 49);
  graph_free(g);
}

/* swin_bits (make_fixtures.py), x [B, 8, 8, 4]: four step-2 slices, each over H and W (two
 * splits per slice, of a [.., 4, 2, ..] view), concat -> [B, 4, 4, 16]; the scale
 * Pow(16 / 2, -0.5) = 0.35355339 folds into a scalar input; dense 16 -> 8 (B*16*16*8 MACs);
 * the three reshape targets fold from ScatterND, Transpose + Squeeze and Where(Not(..)) to
 * [0, -1]: outputs [B, 128], [B, 128], and [B, 32] from the slice y[:, 0:1]. */
static void test_swin_bits(void **st) {
  (void)st;
  enum { B = 2 };
  GsGraph *g = load("swin_bits.onnx", B);
  assert_int_equal(count(g, OP_SPLIT), 4 * 2 + 1);
  const GsOp *cat = nth_op(g, OP_CONCAT, 0);
  assert_shape(&g->tensors[cat->out[0]], 4, (int64_t[]){B, 4, 4, 16});
  assert_int_equal(totals(g).macs, B * 16 * 16 * 8);
  int scale = graph_find_tensor(g, "scalar_0.353553391");
  assert_true(scale >= 0); /* 8^-0.5 to 9 digits */
  /* the declared outputs are the rank-2 ones (the parts slices drop are outputs too, of rank
   * 4 and 5: docs/onnx.md, Limitations) */
  int64_t want[3][2] = {{B, 128}, {B, 128}, {B, 32}};
  int k = 0;
  for (int i = 0; i < g->noutputs; i++)
    if (g->tensors[g->outputs[i]].ndim == 2) assert_shape(&g->tensors[g->outputs[i]], 2, want[k++]);
  assert_int_equal(k, 3);
  graph_free(g);
}

static void test_clip_attrs(void **st) {
  (void)st;
  GsGraph *g = load("clip_attrs.onnx", 2);
  assert_int_equal(g->nops, 2);
  assert_int_equal(g->ops[0].kind, OP_RELU6);
  assert_int_equal(g->ops[1].kind, OP_RELU);
  graph_free(g);
}

/* Ten operands, IR limit GS_MAX_OPERANDS (8): chunks of 8 and 2, then one concat of the two. */
static void test_concat_chunks(void **st) {
  (void)st;
  GsGraph *g = load("concat10.onnx", 2);
  assert_int_equal(count(g, OP_CONCAT), 3);
  assert_shape(output(g), 4, (int64_t[]){2, 20, 4, 4});
  graph_free(g);
}

/* Conv attributes on x [N, 4, 11, 9] (make_fixtures.py conv_variants). */
static void test_conv_variants(void **st) {
  (void)st;
  enum { B = 2 };
  GsGraph *g = load("conv_variants.onnx", B);
  /* c1: 3x3, group 2, stride (2, 1), dilation (2, 1), pads t,l,b,r = 1,0,2,1 */
  int64_t h1 = out_size(11, 3, 2, 1, 2, 2), w1 = out_size(9, 3, 1, 0, 1, 1);
  assert_int_equal(h1, 5);
  assert_int_equal(w1, 8);
  /* c2: 3x3 stride 2 SAME_UPPER: out = ceil(in / 2); total pad = (out-1)*2 + 3 - in, the odd
   * pixel at the end (ONNX operator spec) */
  int64_t h2 = (h1 + 1) / 2, w2 = (w1 + 1) / 2;
  int64_t ph = (h2 - 1) * 2 + 3 - h1, pw = (w2 - 1) * 2 + 3 - w1;
  const GsOp *c1 = nth_op(g, OP_CONV2D, 0), *c2 = nth_op(g, OP_CONV2D, 1);
  assert_int_equal(c1->at.groups, 2);
  assert_int_equal(c1->at.pad[0], 1);
  assert_int_equal(c1->at.pad[1], 0);
  assert_int_equal(c1->at.pad[2], 2);
  assert_int_equal(c1->at.pad[3], 1);
  assert_shape(&g->tensors[c1->out[0]], 4, (int64_t[]){B, 6, h1, w1});
  assert_int_equal(c2->at.pad[0], ph / 2);
  assert_int_equal(c2->at.pad[2], ph - ph / 2);
  assert_int_equal(c2->at.pad[1], pw / 2);
  assert_int_equal(c2->at.pad[3], pw - pw / 2);
  assert_shape(&g->tensors[c2->out[0]], 4, (int64_t[]){B, 8, h2, w2});
  int64_t macs = h1 * w1 * 6 * (4 / 2) * 9 + h2 * w2 * 8 * 6 * 9;
  assert_int_equal(totals(g).macs, B * macs);
  assert_int_equal(count(g, OP_GAVGPOOL), 1); /* ReduceMean over H, W */
  assert_int_equal(count(g, OP_RESHAPE), 3);  /* keepdims=0, Unsqueeze, Squeeze */
  assert_shape(output(g), 2, (int64_t[]){B, 8});
  graph_free(g);
}

/* Add of a reshaped bias constant after a bias-less conv folds into bias=1: one op, with the
 * initializer (folded by value) and graph-only (reshaped by dims only). */
static void test_bias_reshape(void **st) {
  (void)st;
  const char *files[] = {"bias_reshape.onnx", "bias_reshape_graphonly.onnx"};
  for (int i = 0; i < 2; i++) {
    GsGraph *g = load(files[i], 2);
    assert_int_equal(g->nops, 1);
    assert_int_equal(g->ninputs, 1);
    assert_int_equal(g->ops[0].at.bias, 1);
    assert_int_equal(totals(g).params, 8 * 4 * 3 * 3 + 8);
    assert_shape(output(g), 4, (int64_t[]){2, 8, 6, 6});
    graph_free(g);
  }
}

/* x[:, 1:5, 2:-1] of [N, 6, 10]: a split per sliced axis, the middle part kept. */
static void test_slice_activation(void **st) {
  (void)st;
  GsGraph *g = load("slice_act.onnx", 2);
  assert_int_equal(count(g, OP_SPLIT), 2);
  assert_int_equal(nth_op(g, OP_SPLIT, 0)->at.sizes[1], 5 - 1);
  assert_int_equal(nth_op(g, OP_SPLIT, 1)->at.sizes[1], (10 - 1) - 2);
  const GsOp *r = nth_op(g, OP_RELU, 0);
  assert_shape(&g->tensors[r->out[0]], 3, (int64_t[]){2, 4, 7});
  graph_free(g);
}

static int64_t within_3pct(int64_t got, double published) {
  double rel = ((double)got - published) / published;
  return rel < 0 ? -rel <= 0.03 : rel <= 0.03;
}

/* BERT-base (Hugging Face layout, export_params=False): L=12, S=128, D=768, H=12, FF=3072,
 * vocabulary 30522, 512 positions, 2 token types. Published: the encoder has ~85 M parameters
 * and ~11.2 GMAC per sequence of 128 (the commonly quoted figures, as in the GraphTurbo paper's BERT
 * configurations; BERT-base is 110 M with embeddings, Devlin et al. 2019). */
enum { BL = 12, BS = 128, BD = 768, BH = 12, BFF = 3072, BVOCAB = 30522 };
static void test_bert_base(void **st) {
  (void)st;
  enum { B = 2 };
  GsGraph *g = load("bert_base_graphonly.onnx", B);
  int64_t layer_macs = 4 * (int64_t)BS * BD * BD + 2 * (int64_t)BS * BS * BD +
                       2 * (int64_t)BS * BD * BFF;
  Totals t = totals(g);
  assert_int_equal(t.macs, B * BL * layer_macs);
  assert_true(within_3pct(BL * layer_macs, 11.2e9));
  int64_t layer_params = 4 * ((int64_t)BD * BD + BD) + ((int64_t)BD * BFF + BFF) +
                         ((int64_t)BFF * BD + BD) + 2 * (2 * BD);
  assert_true(within_3pct(BL * layer_params, 85e6));
  /* + word and token-type tables and the embedding layernorm; the position rows are a
   * constant input [1, S, D], not parameters (docs/onnx.md) */
  assert_int_equal(t.params, BL * layer_params + (int64_t)BVOCAB * BD + 2 * BD + 2 * BD);
  assert_int_equal(count(g, OP_EMBEDDING), 2);
  assert_int_equal(count(g, OP_DENSE), 6 * BL);
  assert_int_equal(count(g, OP_MATMUL), 2 * BL);
  assert_int_equal(count(g, OP_LAYERNORM), 2 * BL + 1);
  assert_int_equal(count(g, OP_GELU), BL);
  assert_int_equal(count(g, OP_SOFTMAX), BL);
  /* input_ids, token_type_ids, attention_mask (float: it is cast before use), position rows,
   * and the scalars 1, -10000 (mask) and 8 = sqrt(64) shared by every layer */
  assert_int_equal(g->ninputs, 7);
  int mask = graph_find_tensor(g, "attention_mask");
  assert_true(mask >= 0);
  assert_int_equal(g->tensors[mask].dtype, DT_FP32);
  assert_int_equal(g->tensors[graph_find_tensor(g, "input_ids")].dtype, DT_INT32);
  assert_true(graph_find_tensor(g, "scalar_m10000") >= 0);
  assert_shape(output(g), 3, (int64_t[]){B, BS, BD});
  assert_string_equal(g->name, "bert_base_graphonly"); /* not torch's generic "main_graph" */
  graph_free(g);
}

/* torchvision ViT-B/16 (export_params=False): 224x224 image, 16x16 patches -> 196 tokens + class
 * token, D=768, 12 pre-norm layers (H=12, FF=3072), 1000 classes. Published: ~17.6 GMAC and
 * ~86.6 M parameters (torchvision's ViT_B_16 model card: 17.56 GFLOPS, 86,567,656
 * parameters). */
static void test_vit_b16(void **st) {
  (void)st;
  enum { B = 2, P = 16, IMG = 224, D = 768, FF = 3072, L = 12, CLASSES = 1000 };
  GsGraph *g = load("vit_b16_graphonly.onnx", B);
  int64_t tokens = (IMG / P) * (IMG / P), S = tokens + 1;
  int64_t macs = tokens * D * 3 * P * P                                   /* conv_proj */
                 + L * (4 * S * D * D + 2 * S * S * D + 2 * S * D * FF)    /* encoder */
                 + (int64_t)D * CLASSES;                                  /* head */
  Totals t = totals(g);
  assert_int_equal(t.macs, B * macs);
  assert_true(within_3pct(macs, 17.6e9));
  int64_t params = ((int64_t)D * 3 * P * P + D) +
                   L * (4 * ((int64_t)D * D + D) + 2 * (int64_t)D * FF + FF + D + 2 * 2 * D) +
                   2 * D + ((int64_t)D * CLASSES + CLASSES);
  assert_int_equal(t.params, params);
  /* class token and position embedding are constant inputs, not counted (docs/onnx.md) */
  assert_true(within_3pct(params + D + S * D, 86.6e6));
  int cls = graph_find_tensor(g, "class_token");
  assert_true(cls >= 0);
  assert_int_equal(g->tensors[cls].decl[0], GS_DIM_N); /* expanded over the batch */
  assert_int_equal(count(g, OP_SPLIT), L + 1);         /* q/k/v per layer, x[:, 0] */
  assert_int_equal(count(g, OP_LAYERNORM), 2 * L + 1);
  assert_int_equal(g->noutputs, 2); /* logits and the unread tokens 1..196 of x[:, 0] */
  assert_shape(output(g), 2, (int64_t[]){B, CLASSES});
  graph_free(g);
}

/* ---- errors: NULL, a message naming the culprit, never a crash ---- */

static void expect_error(const char *file, const char *const *needles) {
  GsGraph *g = load_diag(file);
  assert_null(g);
  for (; *needles; needles++)
    if (!strstr(msg, *needles)) fail_msg("message lacks '%s': %s", *needles, msg);
}

static void test_error_unsupported(void **st) {
  (void)st;
  expect_error("unsupported.onnx",
               (const char *[]){"unsupported.onnx:2:1: error:", "/head/Hardmax", "Hardmax", 0});
}

static void test_error_bad_shapes(void **st) {
  (void)st;
  expect_error("bad_shapes.onnx", (const char *[]){"bad_shapes.onnx:2:1: error:", "/Add",
                                                   "8, 4, 4", "4, 4, 4", 0});
}

static void test_error_refused_models(void **st) {
  (void)st;
  expect_error("bad_channels.onnx",
               (const char *[]){"bad_channels.onnx:1:1: error: node '/conv/Conv' (Conv):",
                                "conv.weight", "group=1", "the input has 4 channels", 0});
  expect_error("symbolic_seq.onnx",
               (const char *[]){"symbolic_seq.onnx: error:", "dimension 1 is symbolic ('seq')", 0});
  expect_error("clip_range.onnx",
               (const char *[]){"clip_range.onnx:3:1: error: node '/Clip' (Clip):",
                                "min=-1, max=1", 0});
  expect_error("broken_gelu.onnx",
               (const char *[]){"broken_gelu.onnx:3:1: error: node '/Erf' (Erf):",
                                "only inside the erf-GELU and layernorm patterns", 0});
  expect_error("convtranspose_group.onnx",
               (const char *[]){"convtranspose_group.onnx:1:1: error: node '/up/ConvTranspose' "
                                "(ConvTranspose):", "grouped ConvTranspose is not supported", 0});
  expect_error("einsum_bad.onnx",
               (const char *[]){"einsum_bad.onnx:1:1: error: node '/bad/Einsum' (Einsum):",
                                "equation 'bi,bi->b' is not supported", "one row, one column", 0});
  expect_error("einsum_dots.onnx",
               (const char *[]){"einsum_dots.onnx:1:1: error: node '/bad/Einsum' (Einsum):",
                                "'...ij,...jk->...ik'", "no ellipsis", 0});
  expect_error("pad_wrap.onnx", (const char *[]){"pad_wrap.onnx:1:1: error: node '/Pad' (Pad):",
                                                 "mode 'wrap' is not supported", 0});
  expect_error("unsorted.onnx",
               (const char *[]){"unsorted.onnx:1:1: error: node '/second' (Relu):",
                                "input 't' is not defined before this node", 0});
}

static void test_error_truncated(void **st) {
  (void)st;
  expect_error("truncated.onnx", (const char *[]){"truncated.onnx: error:", "not a valid ONNX", 0});
}

static void test_error_random(void **st) {
  (void)st;
  expect_error("random.onnx", (const char *[]){"random.onnx: error:", "ONNX", 0});
}

static void test_error_empty(void **st) {
  (void)st;
  expect_error("empty.onnx", (const char *[]){"empty.onnx: error:", "empty file", 0});
}

static void test_error_missing_and_extension(void **st) {
  (void)st;
  expect_error("no_such_model.onnx", (const char *[]){"no_such_model.onnx: error: cannot read", 0});
  expect_error("resnet_block.txt", (const char *[]){"expected a .gtg or .onnx", 0});
}

/* Every prefix of a valid model: each either imports or fails cleanly (ASan watches). */
static void test_error_every_prefix(void **st) {
  (void)st;
  char src[1200], dst[1200];
  snprintf(src, sizeof src, "%s/mobilenet_block.onnx", fixdir);
  snprintf(dst, sizeof dst, "%s/prefix.onnx", fixdir);
  FILE *f = fopen(src, "rb");
  assert_non_null(f);
  static unsigned char buf[1 << 16];
  size_t len = fread(buf, 1, sizeof buf, f);
  fclose(f);
  assert_true(len > 0 && len < sizeof buf);
  int ok = 0;
  for (size_t cut = 0; cut < len; cut += 97) {
    FILE *o = fopen(dst, "wb");
    assert_non_null(o);
    fwrite(buf, 1, cut, o);
    fclose(o);
    GsGraph *g = load_diag("prefix.onnx");
    if (g) {
      ok++;
      graph_free(g);
    } else {
      assert_non_null(strstr(msg, "prefix.onnx"));
    }
  }
  assert_int_equal(ok, 0); /* no strict prefix of this model is a complete model */
}

/* Byte mutations of valid models (fixed-seed LCG, so every run tries the same inputs): each
 * either imports (and then infers and costs cleanly) or fails with a message naming the file.
 * Run under `make asan` this is the "never a crash" check. */
static void test_error_mutations(void **st) {
  (void)st;
  const char *files[] = {"encoder.onnx", "misc17.onnx", "densenet_block.onnx"};
  static unsigned char buf[1 << 16], mut[1 << 16];
  uint32_t seed = 12345;
  char dst[1200];
  snprintf(dst, sizeof dst, "%s/mutated.onnx", fixdir);
  for (size_t fi = 0; fi < 3; fi++) {
    char src[1200];
    snprintf(src, sizeof src, "%s/%s", fixdir, files[fi]);
    FILE *f = fopen(src, "rb");
    assert_non_null(f);
    size_t len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    assert_true(len > 0 && len < sizeof buf);
    for (int it = 0; it < 150; it++) {
      memcpy(mut, buf, len);
      for (int k = 0; k < 1 + it % 4; k++) {
        seed = seed * 1664525u + 1013904223u;
        size_t at = (seed >> 8) % len;
        seed = seed * 1664525u + 1013904223u;
        mut[at] = (unsigned char)(it % 2 ? mut[at] ^ (1u << (seed >> 29)) : seed >> 24);
      }
      FILE *o = fopen(dst, "wb");
      assert_non_null(o);
      fwrite(mut, 1, len, o);
      fclose(o);
      GsGraph *g = load_diag("mutated.onnx");
      if (!g) {
        assert_non_null(strstr(msg, "mutated.onnx"));
        continue;
      }
      GsDiag d;
      diag_init(&d);
      d.out = fopen("/dev/null", "w");
      if (graph_infer(g, 2, &d) == 0)
        for (int i = 0; i < g->nops; i++) (void)graph_op_cost(g, i);
      fclose(d.out);
      graph_free(g);
    }
  }
}

/* Inputs that once crashed the importer (found by tests/fuzz/fuzz_onnx.c), kept in
 * tests/cases/onnx/regress/: each must now import or fail with a message naming the file. */
static void test_fuzz_regressions(void **st) {
  (void)st;
  const char *dir = "tests/cases/onnx/regress";
  DIR *dp = opendir(dir);
  assert_non_null(dp);
  int seen = 0;
  for (struct dirent *e; (e = readdir(dp));) {
    size_t len = strlen(e->d_name);
    if (len < 5 || strcmp(e->d_name + len - 5, ".onnx") != 0) continue;
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    GsDiag d;
    diag_init(&d);
    FILE *f = fmemopen(msg, sizeof msg, "w");
    d.out = f;
    GsGraph *g = model_load(path, &d);
    fclose(f);
    if (g) graph_free(g);
    else if (!strstr(msg, e->d_name)) fail_msg("%s: no located message: %s", path, msg);
    seen++;
  }
  closedir(dp);
  assert_true(seen >= 1);
}

/* ---- .gtg round trip: write the imported graph, parse it back, same shapes and costs ---- */

static void roundtrip(const char *file) {
  enum { B = 2 };
  GsGraph *g = load(file, B);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  gtg_write(f, g);
  fclose(f);
  GsDiag d;
  diag_init(&d);
  GsGraph *h = gtg_parse("roundtrip.gtg", text, &d);
  if (!h) fprintf(stderr, "# %s\n", text);
  assert_non_null(h);
  assert_int_equal(graph_infer(h, B, &d), 0);
  assert_int_equal(totals(h).macs, totals(g).macs);
  assert_int_equal(totals(h).params, totals(g).params);
  assert_int_equal(h->nops, g->nops);
  assert_int_equal(h->noutputs, g->noutputs);
  const GsTensor *a = output(g), *b = output(h);
  assert_shape(b, a->ndim, a->dim);
  free(text);
  graph_free(h);
  graph_free(g);
}

static void test_roundtrip_gtg(void **st) {
  (void)st;
  const char *files[] = {"resnet_block.onnx", "resnet_block_graphonly.onnx", "encoder.onnx",
                         "mobilenet_block.onnx", "densenet_block.onnx", "misc17.onnx",
                         "clip_attrs.onnx", "concat10.onnx", "slice_act.onnx", "conv_variants.onnx",
                         "bert_base_graphonly.onnx", "vit_b16_graphonly.onnx"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) roundtrip(files[i]);
}

/* gtsim --convert, then gtg_load of its output: same MACs as the direct import. */
static void test_convert_cli(void **st) {
  (void)st;
  const char *gtsim = getenv("GTSIM");
  char exe[1200], cmd[4096], out[1200];
  if (!gtsim) {
    snprintf(exe, sizeof exe, "%s/gtsim", builddir);
    gtsim = exe;
  }
  const char *files[] = {"encoder.onnx", "densenet_block.onnx"};
  for (size_t i = 0; i < 2; i++) {
    snprintf(out, sizeof out, "%s/converted_%zu.gtg", fixdir, i);
    remove(out);
    snprintf(cmd, sizeof cmd, "'%s' --convert '%s/%s' -o '%s'", gtsim, fixdir, files[i], out);
    assert_int_equal(system(cmd), 0);
    GsDiag d;
    diag_init(&d);
    GsGraph *h = gtg_load(out, &d);
    assert_non_null(h);
    assert_int_equal(graph_infer(h, 5, &d), 0);
    GsGraph *g = load(files[i], 5);
    assert_int_equal(totals(h).macs, totals(g).macs);
    assert_int_equal(totals(h).params, totals(g).params);
    graph_free(g);
    graph_free(h);
  }
}

int main(int argc, char **argv) {
  (void)argc;
  /* argv[0] is BUILD/tests/test_onnx: fixtures go to BUILD/onnx-fixtures/unit */
  snprintf(builddir, sizeof builddir, "%s", argv[0]);
  for (int k = 0; k < 2; k++) {
    char *s = strrchr(builddir, '/');
    if (s) *s = 0;
    else snprintf(builddir, sizeof builddir, ".");
  }
  snprintf(fixdir, sizeof fixdir, "%s/onnx-fixtures/unit", builddir);
  char cmd[2400];
  snprintf(cmd, sizeof cmd, "/usr/bin/python3 tests/onnx/make_fixtures.py '%s' >&2", fixdir);
  gen_status = system(cmd);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fixtures_generated),
      cmocka_unit_test(test_resnet_initializers),
      cmocka_unit_test(test_resnet_graph_only),
      cmocka_unit_test(test_symbolic_batch),
      cmocka_unit_test(test_encoder),
      cmocka_unit_test(test_encoder_graph_only),
      cmocka_unit_test(test_mobilenet),
      cmocka_unit_test(test_densenet),
      cmocka_unit_test(test_misc17),
      cmocka_unit_test(test_clip_attrs),
      cmocka_unit_test(test_mobilenetv3),
      cmocka_unit_test(test_pad_fold),
      cmocka_unit_test(test_pad_ops),
      cmocka_unit_test(test_convtranspose),
      cmocka_unit_test(test_einsum),
      cmocka_unit_test(test_gelu20),
      cmocka_unit_test(test_resize),
      cmocka_unit_test(test_mod_pad),
      cmocka_unit_test(test_swin_bits),
      cmocka_unit_test(test_concat_chunks),
      cmocka_unit_test(test_slice_activation),
      cmocka_unit_test(test_bias_reshape),
      cmocka_unit_test(test_conv_variants),
      cmocka_unit_test(test_bert_base),
      cmocka_unit_test(test_vit_b16),
      cmocka_unit_test(test_error_unsupported),
      cmocka_unit_test(test_error_bad_shapes),
      cmocka_unit_test(test_error_refused_models),
      cmocka_unit_test(test_error_truncated),
      cmocka_unit_test(test_error_random),
      cmocka_unit_test(test_error_empty),
      cmocka_unit_test(test_error_missing_and_extension),
      cmocka_unit_test(test_error_every_prefix),
      cmocka_unit_test(test_error_mutations),
      cmocka_unit_test(test_fuzz_regressions),
      cmocka_unit_test(test_roundtrip_gtg),
      cmocka_unit_test(test_convert_cli),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
