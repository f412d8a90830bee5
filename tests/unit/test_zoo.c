/* test_zoo.c — the ten zoo models (workloads/NAME.gtg) against published and hand-derived figures.
 *
 * Each model is loaded with gtg_load(), bound to batch 1 with graph_infer(), and the
 * graph_op_cost() of every op is summed. Totals are compared with (a) the published MACs and
 * parameter counts, within 3%, each with its source named next to it, and (b) where a model's
 * layer list makes it practical, an exact figure derived here by hand from that list (BERT at
 * every sequence length, DLRM, Conformer), so that a dropped or duplicated layer is caught
 * even where 3% would hide it. Conventions used by the hand formulas (docs/gtg.md): MACs only
 * for conv/dense/matmul/interaction; params = weights + biases; layernorm and batchnorm have
 * 2 parameters per channel (scale, shift; running statistics are buffers, as in PyTorch's
 * parameter counts); an embedding has vocab x dim parameters.
 * Run from the repository root (tests/run.sh does), so workloads/ is found.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "graph.h"

typedef struct {
  int64_t macs, params;
} Totals;

static GsGraph *load(const char *model, int64_t batch) {
  char path[256];
  snprintf(path, sizeof path, "workloads/%s.gtg", model);
  GsDiag d;
  diag_init(&d);
  GsGraph *g = gtg_load(path, &d);
  if (!g) fail_msg("%s does not load", path);
  if (graph_infer(g, batch, &d) != 0) fail_msg("%s: shape inference fails at batch %lld", path,
                                               (long long)batch);
  return g;
}

static Totals totals(const GsGraph *g) {
  Totals t = {0, 0};
  for (int i = 0; i < g->nops; i++) {
    GsOpCost c = graph_op_cost(g, i);
    t.macs += c.macs;
    t.params += c.params;
  }
  return t;
}

static int64_t params_of_kind(const GsGraph *g, GsOpKind k) {
  int64_t p = 0;
  for (int i = 0; i < g->nops; i++)
    if (g->ops[i].kind == k) p += graph_op_cost(g, i).params;
  return p;
}

static int count_kind(const GsGraph *g, GsOpKind k) {
  int n = 0;
  for (int i = 0; i < g->nops; i++) n += g->ops[i].kind == k;
  return n;
}

/* |got - want| <= 3% of want */
#define assert_within3(what, got, want)                                                    \
  do {                                                                                     \
    double g_ = (double)(got), w_ = (double)(want);                                        \
    if (!(g_ >= 0.97 * w_ && g_ <= 1.03 * w_))                                             \
      fail_msg("%s: %.6g is not within 3%% of the published %.6g (%.2f%%)", what, g_, w_, \
               100.0 * (g_ - w_) / w_);                                                    \
  } while (0)

#define assert_i64(what, got, want)                                                      \
  do {                                                                                   \
    long long g_ = (long long)(got), w_ = (long long)(want);                             \
    if (g_ != w_) fail_msg("%s: got %lld, expected %lld (diff %lld)", what, g_, w_, \
                           g_ - w_);                                                     \
  } while (0)

/* ---- ResNet-50 v1.5 ---------------------------------------------------------------- */
static void test_resnet50(void **state) {
  (void)state;
  GsGraph *g = load("resnet50", 1);
  Totals t = totals(g);
  /* torchvision resnet50 (IMAGENET1K_V1/V2 model card, v1.5): 4.09 GFLOPS (torchvision counts
   * multiply-adds) and 25,557,032 parameters; He et al. 2016 give 3.8e9 for v1, v1.5 moves the
   * stride to the 3x3 conv and costs ~0.3 GMAC more. Commonly quoted: ≈ 4.1 GMAC, 25.6 M. */
  assert_within3("resnet50 MACs", t.macs, 4.1e9);
  assert_within3("resnet50 params", t.params, 25.6e6);
  /* Exact: torchvision's card lists 25,557,032 parameters (batchnorm gamma/beta counted). */
  assert_i64("resnet50 params", t.params, 25557032);
  /* MACs by hand from the layer list at 224x224: stem 7x7/2 to 112², max-pool to 56²; per
   * bottleneck c1 1x1 at the input resolution, c2 3x3 (stride s) and c3 1x1 and the projection
   * at the output resolution; fc 2048 x 1000. */
  int64_t macs = 112 * 112 * 64 * 3 * 49, h = 56, cin = 64;
  static const int64_t width[4] = {64, 128, 256, 512}, nblk[4] = {3, 4, 6, 3};
  for (int s = 0; s < 4; s++)
    for (int b = 0; b < nblk[s]; b++) {
      int64_t w = width[s], ho = (s > 0 && b == 0) ? h / 2 : h;
      macs += h * h * cin * w + ho * ho * w * w * 9 + ho * ho * w * 4 * w;
      if (b == 0) macs += ho * ho * cin * 4 * w;
      h = ho;
      cin = 4 * w;
    }
  macs += 2048 * 1000;
  assert_i64("resnet50 MACs", t.macs, macs);
  /* 53 conv2d: stem 1 + 16 bottlenecks x 3 + 4 downsample projections. */
  assert_int_equal(count_kind(g, OP_CONV2D), 1 + 16 * 3 + 4);
  /* fc layer by hand: 2048 x 1000 + 1000. */
  assert_i64("resnet50 fc params", params_of_kind(g, OP_DENSE), 2048 * 1000 + 1000);
  graph_free(g);
}

/* ---- MobileNet-v2 ------------------------------------------------------------------ */
static void test_mobilenetv2(void **state) {
  (void)state;
  GsGraph *g = load("mobilenetv2", 1);
  Totals t = totals(g);
  /* Sandler et al. 2018 Table 4: 300 M multiply-adds; torchvision mobilenet_v2 model card:
   * 0.30 GFLOPS and 3,504,872 parameters (the paper rounds to 3.4 M). Commonly quoted: 0.30 G, 3.5 M. */
  assert_within3("mobilenetv2 MACs", t.macs, 0.30e9);
  assert_within3("mobilenetv2 params", t.params, 3.5e6);
  assert_i64("mobilenetv2 params", t.params, 3504872); /* torchvision card, exact */
  /* MACs by hand (Sandler et al. Table 2): stem 3x3/2 to 112²; each block expands at the
   * input resolution (not when t = 1), depthwise 3x3 and projects at the output resolution;
   * head 1x1 320 -> 1280 at 7², fc 1280 x 1000. */
  static const int64_t tcns[7][4] = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2},
                                     {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  int64_t macs = 112 * 112 * 32 * 3 * 9, h = 112, cin = 32;
  for (int r = 0; r < 7; r++)
    for (int i = 0; i < tcns[r][2]; i++) {
      int64_t hid = cin * tcns[r][0], ho = i == 0 ? h / tcns[r][3] : h;
      if (tcns[r][0] != 1) macs += h * h * cin * hid;
      macs += ho * ho * hid * 9 + ho * ho * hid * tcns[r][1];
      h = ho;
      cin = tcns[r][1];
    }
  macs += 7 * 7 * 320 * 1280 + 1280 * 1000;
  assert_i64("mobilenetv2 MACs", t.macs, macs);
  /* 17 inverted residual blocks: 17 depthwise convs (groups == channels). */
  int dw = 0;
  for (int i = 0; i < g->nops; i++) {
    const GsOp *o = &g->ops[i];
    if (o->kind == OP_CONV2D && o->at.groups > 1) {
      assert_int_equal(o->at.groups, g->tensors[o->in[0]].dim[1]);
      dw++;
    }
  }
  assert_int_equal(dw, 17);
  graph_free(g);
}

/* ---- DenseNet-121 ------------------------------------------------------------------ */
static void test_densenet121(void **state) {
  (void)state;
  GsGraph *g = load("densenet121", 1);
  Totals t = totals(g);
  /* ≈ 2.9 GMAC and 8.0 M parameters, the commonly quoted DenseNet-121 figures;
   * torchvision densenet121 card: 2.83 GFLOPS (multiply-adds) and 7,978,856 parameters. The
   * layer list is Huang et al., CVPR 2017, Table 1. */
  assert_within3("densenet121 MACs", t.macs, 2.9e9);
  assert_within3("densenet121 params", t.params, 8.0e6);
  assert_i64("densenet121 params", t.params, 7978856); /* torchvision card, exact */
  /* MACs by hand (Huang et al. Table 1): stem 7x7/2 to 112², pool to 56²; a dense layer on c
   * channels at h² costs h²·(c·128 + 128·32·9); a transition h²·c·c/2 before its 2x2 pool;
   * fc 1024 x 1000. This catches a wrong growth in one layer, which 3% would not. */
  static const int64_t nlay[4] = {6, 12, 24, 16};
  int64_t macs = 112 * 112 * 64 * 3 * 49, h = 56, c = 64;
  for (int b = 0; b < 4; b++) {
    for (int l = 0; l < nlay[b]; l++) {
      macs += h * h * (c * 128 + 128 * 32 * 9);
      c += 32;
    }
    if (b < 3) {
      macs += h * h * c * (c / 2);
      c /= 2;
      h /= 2;
    }
  }
  assert_int_equal(c, 1024);
  macs += 1024 * 1000;
  assert_i64("densenet121 MACs", t.macs, macs);
  /* 58 dense layers x 2 convs + stem + 3 transitions = 120 conv2d; one concat per dense layer. */
  assert_int_equal(count_kind(g, OP_CONV2D), 58 * 2 + 1 + 3);
  assert_int_equal(count_kind(g, OP_CONCAT), 6 + 12 + 24 + 16);
  /* Channels before the classifier: ((((64+6*32)/2+12*32)/2+24*32)/2)+16*32 = 1024. */
  assert_i64("densenet121 fc params", params_of_kind(g, OP_DENSE), 1024 * 1000 + 1000);
  graph_free(g);
}

/* ---- ViT-B/16 ---------------------------------------------------------------------- */
static void test_vit_b16(void **state) {
  (void)state;
  GsGraph *g = load("vit-b16", 1);
  Totals t = totals(g);
  /* Dosovitskiy et al. 2021 Table 1: ViT-Base 86 M parameters; torchvision vit_b_16 card:
   * 17.56 GFLOPS (multiply-adds) and 86,567,656 parameters. Commonly quoted: ≈ 17.6 G, 86 M. */
  assert_within3("vit-b16 MACs", t.macs, 17.6e9);
  assert_within3("vit-b16 params", t.params, 86e6);
  assert_i64("vit-b16 params", t.params, 86567656); /* torchvision card, exact */
  /* By hand (S = 197 tokens, D = 768): per layer 4·S·D² + 2·S·D·3072 + 2·S²·D; patch conv
   * 196·768·(3·16·16); head 768·1000. */
  const int64_t S = 197, D = 768;
  int64_t layer = 4 * S * D * D + 2 * S * D * 3072 + 2 * S * S * D;
  assert_i64("vit-b16 MACs", t.macs, 12 * layer + 196 * D * 3 * 16 * 16 + D * 1000);
  graph_free(g);
}

/* ---- BERT-base --------------------------------------------------------------------- */
/* One encoder layer by hand (hidden D, FFN F): Q, K, V, output projections 4·(D·D + D), FFN
 * D·F + F + F·D + D, two layernorms 2·2D. = 7,087,872 for D = 768, F = 3072. */
static int64_t bert_layer_params(int64_t D, int64_t F) {
  return 4 * (D * D + D) + (D * F + F) + (F * D + D) + 2 * (2 * D);
}
/* Embeddings: word 30522, position 512, token type 2 tables of width D, plus a layernorm. */
static int64_t bert_embedding_params(int64_t D) { return (30522 + 512 + 2) * D + 2 * D; }
/* MACs at sequence S: per layer the four projections 4·S·D², the FFN 2·S·D·F, and the two
 * attention products Q·K^T and P·V, S·S·(D/H) each per head, 2·S²·D over all heads. */
static int64_t bert_macs(int64_t S, int64_t D, int64_t F) {
  return 12 * (4 * S * D * D + 2 * S * D * F + 2 * S * S * D);
}

static void check_bert(const char *model, int64_t seq) {
  GsGraph *g = load(model, 1);
  Totals t = totals(g);
  const int64_t D = 768, F = 3072;
  assert_int_equal(bert_layer_params(D, F), 7087872);
  int64_t encoder = 12 * bert_layer_params(D, F);          /* 85,054,464 */
  /* Devlin et al. 2019, §3: BERT-base has 110 M parameters in total; the encoder is
   * ≈ 85 M (12 x 7.08 M). Reconciliation: 110 M ≈ encoder 85.05 M + embeddings 23.84 M + the
   * pooler 0.59 M (768·768 + 768, not in the zoo graph) = 109.48 M. */
  int64_t pooler = D * D + D;
  assert_i64("bert params = embeddings + encoder", t.params, bert_embedding_params(D) + encoder);
  assert_within3("bert encoder params", t.params - bert_embedding_params(D), 85e6);
  assert_within3("bert total params with pooler", t.params + pooler, 110e6);
  assert_i64("bert embedding tables", params_of_kind(g, OP_EMBEDDING), (30522 + 512 + 2) * D);
  /* MACs grow with the sequence as the formula says: linear terms plus the S² attention. */
  assert_i64("bert MACs", t.macs, bert_macs(seq, D, F));
  if (seq == 128) {
    /* The usual BERT-base figure at 128 tokens: ≈ 11.2 GMAC. */
    assert_within3("bert-128 MACs", t.macs, 11.2e9);
  }
  graph_free(g);
}
static void test_bert128(void **state) { (void)state; check_bert("bert-128", 128); }
static void test_bert256(void **state) { (void)state; check_bert("bert-256", 256); }
static void test_bert384(void **state) { (void)state; check_bert("bert-384", 384); }
static void test_bert512(void **state) { (void)state; check_bert("bert-512", 512); }

/* The attention term makes BERT super-linear in S: going 128 -> 512 multiplies the linear
 * part by 4 and the attention part by 16. Checked between two loaded graphs. */
static void test_bert_growth(void **state) {
  (void)state;
  GsGraph *a = load("bert-128", 1), *b = load("bert-512", 1);
  int64_t ma = totals(a).macs, mb = totals(b).macs;
  const int64_t D = 768, F = 3072;
  int64_t lin128 = 12 * 128 * (4 * D * D + 2 * D * F), att128 = 12 * 2 * 128 * 128 * D;
  assert_i64("bert-128", ma, lin128 + att128);
  assert_i64("bert-512", mb, 4 * lin128 + 16 * att128);
  assert_true(mb > 4 * ma);
  graph_free(a);
  graph_free(b);
}

/* ---- DLRM (MLPerf Criteo Terabyte) ------------------------------------------------- */
static void test_dlrm(void **state) {
  (void)state;
  GsGraph *g = load("dlrm", 1);
  Totals t = totals(g);
  /* MLPerf DLRM reference (facebookresearch/dlrm, --max-ind-range=40000000): bottom MLP
   * 13-512-256-128, top MLP 479-1024-1024-512-256-1, 26 tables of these rows, width 128. */
  static const int64_t rows[26] = {39884406, 39043, 17289, 7420, 20263, 3, 7120, 1543, 63,
                                   38532951, 2953546, 403346, 10, 2208, 11938, 155, 4, 976,
                                   14, 39979771, 25641295, 39664984, 585935, 12972, 108, 36};
  static const int64_t bot[] = {13, 512, 256, 128}, top[] = {479, 1024, 1024, 512, 256, 1};
  const int64_t dim = 128, F = 27;     /* 26 embeddings + the bottom-MLP vector */
  int64_t mlp_macs = 0, mlp_params = 0, table_params = 0;
  for (int i = 0; i + 1 < 4; i++) {
    mlp_macs += bot[i] * bot[i + 1];
    mlp_params += bot[i] * bot[i + 1] + bot[i + 1];
  }
  for (int i = 0; i + 1 < 6; i++) {
    mlp_macs += top[i] * top[i + 1];
    mlp_params += top[i] * top[i + 1] + top[i + 1];
  }
  for (int i = 0; i < 26; i++) table_params += rows[i] * dim;
  /* The top MLP input: the F·(F-1)/2 = 351 distinct pairwise dots plus the 128-wide dense
   * vector = 479, as in the reference. */
  assert_int_equal(F * (F - 1) / 2 + dim, top[0]);
  int64_t inter_macs = F * (F - 1) / 2 * dim;   /* one dot of width 128 per pair */
  assert_i64("dlrm MACs", t.macs, mlp_macs + inter_macs);
  assert_i64("dlrm params", t.params, mlp_params + table_params);
  /* The tables dominate: ≈ 24.0 G parameters (≈ 96 GB in fp32, the MLPerf model size). */
  assert_within3("dlrm table params", table_params, 24.0e9);
  assert_int_equal(count_kind(g, OP_EMBEDDING), 26);
  graph_free(g);
}

/* ---- Conformer-M encoder ----------------------------------------------------------- */
static void test_conformer(void **state) {
  (void)state;
  GsGraph *g = load("conformer", 1);
  Totals t = totals(g);
  /* Gulati et al. 2020, Table 1, Conformer (M): 16 blocks, model dim 256, 4 heads, conv kernel
   * 32 (30.7 M parameters including its 640-wide LSTM decoder, which the zoo omits). Input:
   * 1000 frames x 80 mel bins. */
  const int64_t d = 256, L = 16, k = 32, T = 1000, M = 80;
  /* Subsampling: two 3x3 stride-2 convs without padding, then a linear over d·F2. */
  const int64_t T1 = (T - 3) / 2 + 1, F1 = (M - 3) / 2 + 1; /* 499, 39 */
  const int64_t S = (T1 - 3) / 2 + 1, F2 = (F1 - 3) / 2 + 1; /* 249, 19 */
  assert_int_equal(S, 249);
  int64_t sub_macs = d * T1 * F1 * 9 + d * S * F2 * d * 9 + S * (d * F2) * d;
  int64_t sub_params = (9 * d + d) + (d * d * 9 + d) + (d * F2 * d + d);
  /* One block: two half-FFNs (d -> 4d -> d), MHSA (4 projections + two S² products), conv
   * module (pointwise d -> 2d, GLU, depthwise k, batchnorm, pointwise d -> d), 5 layernorms. */
  int64_t blk_macs = 2 * (2 * S * d * 4 * d) + (4 * S * d * d + 2 * S * S * d) +
                     (S * d * 2 * d + S * d * k + S * d * d);
  int64_t ffn_p = (d * 4 * d + 4 * d) + (4 * d * d + d);
  int64_t blk_params = 2 * ffn_p + 4 * (d * d + d) + (d * 2 * d + 2 * d) + (d * k + d) +
                       (d * d + d) + 2 * d /* batchnorm */ + 5 * 2 * d /* layernorms */;
  assert_i64("conformer MACs", t.macs, sub_macs + L * blk_macs);
  assert_i64("conformer params", t.params, sub_params + L * blk_params);
  /* Order of magnitude of the published figure: the encoder is most of the 30.7 M. */
  assert_true(t.params > 20000000 && t.params < 30700000);
  graph_free(g);
}

/* ---- Every model ------------------------------------------------------------------- */
static const struct {
  const char *name;
  int64_t batch;   /* GraphTurbo (OSDI'23) evaluation batch sizes */
  int outputs;     /* graph outputs (tensors nobody consumes) */
} zoo[] = {
    {"resnet50", 64, 1},    {"bert-128", 32, 1}, {"bert-256", 16, 1},
    {"bert-384", 8, 1},     {"bert-512", 8, 1},  {"dlrm", 1024, 1},
    {"mobilenetv2", 128, 1}, {"vit-b16", 32, 2},  /* head + the unused patch tokens */
    {"densenet121", 32, 1}, {"conformer", 12, 1},
};

/* Header batch is the paper's; binding that batch scales MACs by it and leaves params alone
 * (every MAC op works per sample); every op is reached (no dead branch but ViT's tokens). */
static void test_all_batches(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof zoo / sizeof zoo[0]; i++) {
    GsGraph *g1 = load(zoo[i].name, 1);
    if (g1->default_batch != zoo[i].batch)
      fail_msg("%s: header batch %lld, paper %lld", zoo[i].name, (long long)g1->default_batch,
               (long long)zoo[i].batch);
    Totals t1 = totals(g1);
    GsGraph *gb = load(zoo[i].name, zoo[i].batch);
    Totals tb = totals(gb);
    assert_i64(zoo[i].name, tb.macs, zoo[i].batch * t1.macs);
    assert_i64(zoo[i].name, tb.params, t1.params);
    graph_fill_outputs(gb);
    if (gb->noutputs != zoo[i].outputs)
      fail_msg("%s: %d graph outputs, expected %d", zoo[i].name, gb->noutputs, zoo[i].outputs);
    graph_free(g1);
    graph_free(gb);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_resnet50),    cmocka_unit_test(test_mobilenetv2),
      cmocka_unit_test(test_densenet121), cmocka_unit_test(test_vit_b16),
      cmocka_unit_test(test_bert128),     cmocka_unit_test(test_bert256),
      cmocka_unit_test(test_bert384),     cmocka_unit_test(test_bert512),
      cmocka_unit_test(test_bert_growth), cmocka_unit_test(test_dlrm),
      cmocka_unit_test(test_conformer),   cmocka_unit_test(test_all_batches),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
