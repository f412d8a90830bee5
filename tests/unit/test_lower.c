/* test_lower.c — the tvm/astitch lowering without the simulator: kernel grouping of small
 * hand-written graphs (expected kernels listed by hand from the rules in docs/schedulers.md),
 * DDR bytes of a TVM kernel against inputs + weights + outputs computed here, iterations,
 * local-buffer capacity, Goya's split of a tail without a vector unit, untileable ops as user
 * errors, the static program check, determinism, and the tiling choices of docs/schedulers.md
 * "Where the baselines lose time" (sampled pixels of a strided 1x1 conv, whole channels of a
 * 3-channel stem, per-core rotated k and column loops).
 * Run from the repository root (tests/run.sh does). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "diag_testlib.h"
#include "isa_testlib.h"
#include "lower.h"

static GsArch *load_arch(const char *path, const char *const *sets, int n) {
  GsDiag d;
  diag_init(&d);
  GsArch *a = arch_load(path, sets, n, &d);
  if (!a) fail_msg("%s does not load", path);
  return a;
}

static GsGraph *parse(const char *text) {
  GsDiag d;
  diag_init(&d);
  GsGraph *g = gtg_parse("test.gtg", text, &d);
  if (!g) fail_msg("test graph does not parse");
  return g;
}

static GsLowered *lower(GsGraph *g, const GsArch *a, GsSchedKind s, int64_t batch, int64_t bpc) {
  GsDiag d;
  diag_init(&d);
  GsLowerOptions o;
  lower_options_default(&o);
  o.sched = s;
  o.batch = batch;
  o.batch_per_cluster = bpc;
  GsLowered *l = lower_run(g, a, &o, &d);
  if (!l) fail_msg("lowering failed");
  return l;
}

/* A small ResNet-like graph: conv-bn-relu, maxpool, conv-bn + residual add + relu, global
 * pool, reshape, dense, softmax. */
static const char *resnetish =
    "gtg 1\n"
    "model r batch=4 dtype=fp16\n"
    "input x: fp16[N, 3, 16, 16]\n"
    "c1 = conv2d(x) units=8 kernel=3 pad=1\n"
    "b1 = batchnorm(c1)\n"
    "r1 = relu(b1)\n"
    "p1 = maxpool(r1) kernel=2 stride=2\n"
    "c2 = conv2d(p1) units=8 kernel=3 pad=1\n"
    "b2 = batchnorm(c2)\n"
    "a2 = add(b2, p1)\n"
    "r2 = relu(a2)\n"
    "g = global_avgpool(r2)\n"
    "f = reshape(g) shape=N,8\n"
    "d = dense(f) units=10 bias=1\n"
    "s = softmax(d)\n";

static void expect_kernels(const GsLowered *l, int n, const int *sizes, const GsOpKind *heads) {
  assert_int_equal(l->nkernels, n);
  for (int i = 0; i < n; i++) {
    assert_int_equal(l->kernels[i].nops, sizes[i]);
    assert_int_equal(l->graph->ops[l->kernels[i].head].kind, heads[i]);
  }
}

/* TVM: anchors take their elementwise tails (bn, relu, the residual add); everything else
 * is a kernel of its own; the reshape is no kernel at all. */
static void test_group_tvm(void **state) {
  (void)state;
  GsArch *a = load_arch("configs/tiny.cfg", NULL, 0);
  GsGraph *g = parse(resnetish);
  GsLowered *l = lower(g, a, SCHED_TVM, 4, 0);
  int sizes[] = {3, 1, 4, 1, 1, 1};
  GsOpKind heads[] = {OP_CONV2D, OP_MAXPOOL, OP_CONV2D, OP_GAVGPOOL, OP_DENSE, OP_SOFTMAX};
  expect_kernels(l, 6, sizes, heads);
  /* Table 3: every kernel output in DDR (r1 p1 r2 g d s: 6); the fused intermediates in LB:
   * c1 b1 of the first kernel, c2 b2 a2 of the third (5); the reshape's output is an alias */
  assert_int_equal(l->outputs_ddr, 6);
  assert_int_equal(l->outputs_lb, 5);
  assert_int_equal(l->outputs_gb, 0);
  lower_free(l);
  graph_free(g);
  arch_free(a);
}

/* dense + residual add, then layernorm and gelu: tvm 3 kernels (the add fused into the dense);
 * astitch runs each dense alone and stitches add, layernorm (its rows, 32 x 2 B, fit a tile)
 * and gelu into one kernel; the dense's output and the stitched kernel's stay in GB. */
static const char *bertish =
    "gtg 1\n"
    "model b batch=2 dtype=fp16\n"
    "input x: fp16[N, 16, 32]\n"
    "d = dense(x) units=32 bias=1\n"
    "a = add(d, x)\n"
    "n = layernorm(a)\n"
    "e = gelu(n)\n"
    "o = dense(e) units=32\n";

static void test_group_astitch(void **state) {
  (void)state;
  GsArch *a = load_arch("configs/tiny.cfg", NULL, 0);
  GsGraph *g = parse(bertish);
  GsLowered *t = lower(g, a, SCHED_TVM, 2, 0);
  int ts[] = {2, 1, 1, 1};
  GsOpKind th[] = {OP_DENSE, OP_LAYERNORM, OP_GELU, OP_DENSE};
  expect_kernels(t, 4, ts, th);
  lower_free(t);
  GsLowered *s = lower(g, a, SCHED_ASTITCH, 2, 0);
  int ss[] = {1, 3, 1};
  GsOpKind sh[] = {OP_DENSE, OP_ADD, OP_DENSE};
  expect_kernels(s, 3, ss, sh);
  /* per cluster 1 sample × 16 × 32 × 2 B = 1 KiB fits tiny's GB: d and e in GB, the model
   * output o in DDR; a and n stay in LB (stitched, per tile) */
  assert_int_equal(s->outputs_gb, 2);
  assert_int_equal(s->outputs_ddr, 1);
  assert_int_equal(s->outputs_lb, 2);
  lower_free(s);
  graph_free(g);
  arch_free(a);
}

/* Bytes moved from and to DDR, summed over the program's movs by the level of their regions
 * (read from the alloc instructions): independent of the lowering's own counters. */
static void program_ddr_bytes(const GsProgram *p, int64_t *rd, int64_t *wr) {
  unsigned char *lvl = calloc(p->nregions, 1);
  GsCursor cur;
  for (int q = 0; q < p->nqueues; q++)
    for (prog_cursor_init(&cur, &p->queues[q]); prog_cursor_next(&cur) != NULL;) {
      const GsInst *in = cur.at;
      if (in->op == I_ALLOC) lvl[in->r[0]] = (unsigned char)(in->sub + 1);
    }
  *rd = *wr = 0;
  for (int q = 0; q < p->nqueues; q++)
    for (prog_cursor_init(&cur, &p->queues[q]); prog_cursor_next(&cur) != NULL;) {
      const GsInst *in = cur.at;
      if (in->op != I_MOV) continue;
      if (lvl[in->r[1]] == LVL_DDR + 1) *rd += inst_mov_bytes(in);
      if (lvl[in->r[0]] == LVL_DDR + 1) *wr += inst_mov_bytes(in);
    }
  free(lvl);
}

/* A TVM kernel reads its inputs and weights once and writes its output once: a dense layer
 * x[8, 64] · W[64, 32] + b on one cluster (weights staged once through its GB). */
static void test_tvm_kernel_ddr_bytes(void **state) {
  (void)state;
  const char *sets[] = {"chip.clusters=1"};
  GsArch *a = load_arch("configs/tiny.cfg", sets, 1);
  GsGraph *g = parse("gtg 1\nmodel d batch=8 dtype=fp16\ninput x: fp16[N, 64]\n"
                     "y = dense(x) units=32 bias=1\n");
  GsLowered *l = lower(g, a, SCHED_TVM, 8, 0);
  int64_t in = 8 * 64 * 2, w = 32 * (64 + 1) * 2, out = 8 * 32 * 2;
  int64_t rd, wr;
  program_ddr_bytes(l->prog, &rd, &wr);
  assert_int_equal(rd, in + w);
  assert_int_equal(wr, out);
  assert_int_equal(l->tally.task[0].ddr_read, in + w);
  assert_int_equal(l->tally.task[0].ddr_write, out);
  /* roofline inputs: 2 FLOP per MAC + one bias add per output; compulsory = in + w + out */
  assert_int_equal(l->total_flops, 2 * 8 * 64 * 32 + 8 * 32);
  assert_int_equal(l->compulsory_ddr_bytes, in + w + out);
  lower_free(l);
  graph_free(g);
  arch_free(a);
}

static int64_t count_op(const GsProgram *p, GsOpcode op) {
  int64_t n = 0;
  GsCursor cur;
  for (int q = 0; q < p->nqueues; q++)
    for (prog_cursor_init(&cur, &p->queues[q]); prog_cursor_next(&cur) != NULL;)
      if (cur.at->op == op) n++;
  return n;
}

/* --batch 8 --batch-per-cluster 1 on tiny's 2 clusters: 2 samples per iteration, 4
 * iterations, each a set-up barrier plus one per kernel (in every queue). --batch 5 with 2
 * per cluster: iterations of 4 and 1 samples. */
static void test_iterations(void **state) {
  (void)state;
  GsArch *a = load_arch("configs/tiny.cfg", NULL, 0);
  GsGraph *g = parse(resnetish);
  GsLowered *l = lower(g, a, SCHED_TVM, 8, 1);
  assert_int_equal(l->iterations, 4);
  assert_int_equal(l->per_cluster, 1);
  /* per iteration a set-up episode, then one after each of the 6 kernels */
  assert_int_equal(l->tally.nepisodes, 4 * (6 + 1));
  assert_int_equal(count_op(l->prog, I_BARRIER), l->tally.nepisodes * l->prog->nqueues);
  for (int e = 0; e < l->tally.nepisodes; e++)
    assert_int_equal(l->tally.episode_task[e], e % 7 - 1);
  lower_free(l);
  l = lower(g, a, SCHED_TVM, 5, 2);
  assert_int_equal(l->iterations, 2);
  assert_int_equal(l->batch, 5);
  lower_free(l);
  graph_free(g);
  arch_free(a);
}

/* Without --batch-per-cluster the whole share goes in one iteration unless it does not fit DDR.
 * resnetish keeps per sample in DDR: x 3·16·16·2 = 1536, r1 8·16·16·2 = 4096, p1 1024, r2 1024,
 * g 16, d 20, s 20 = 7736 B; weights are under 2 KiB. With 1 MiB of DDR and batch 256 on 2
 * clusters: a 128-sample share is 256 · 7736 = 1980416 B (too much), 64 per cluster is
 * 128 · 7736 = 990208 B (+ weights < 1048576): 2 iterations of 64 per cluster. */
static void test_iterations_when_ddr_is_small(void **state) {
  (void)state;
  const char *sets[] = {"ddr.capacity_mib=1"};
  GsArch *a = load_arch("configs/tiny.cfg", sets, 1);
  GsGraph *g = parse(resnetish);
  GsLowered *l = lower(g, a, SCHED_TVM, 256, 0);
  assert_int_equal(l->per_cluster, 64);
  assert_int_equal(l->iterations, 2);
  lower_free(l);
  graph_free(g);
  arch_free(a);
}

/* No LB allocation of any core reaches past its local buffer, and every program passes the
 * static check, on tiny and on the paper's 64 KiB stcp920. */
static void check_program(const GsLowered *l, const GsArch *a) {
  GsCursor cur;
  for (int q = 0; q < l->prog->nqueues; q++)
    for (prog_cursor_init(&cur, &l->prog->queues[q]); prog_cursor_next(&cur) != NULL;) {
      const GsInst *in = cur.at;
      if (in->op != I_ALLOC || in->sub != LVL_LB) continue;
      assert_true(inst_alloc_offset(in) + inst_alloc_bytes(in) <=
                  arch_core(a, (int)inst_alloc_core(in))->lb_bytes);
    }
  GsDiag d;
  diag_init(&d);
  assert_int_equal(prog_check(l->prog, a, &d, "lowered"), 0);
}

/* Broadcast operands (docs/schedulers.md, "How each op becomes instructions"), batch 4 on one
 * cluster, by DDR bytes. x [N, s, 64] is read once and the output written once. A periodic
 * operand p [1, s, 64] is read under every output row: N·s rows of 128 B, with s = 16 (tiles
 * inside a period) and s = 2 (tiles of whole periods, each reading p's 2 rows again; before,
 * p was sliced at 64 / N elements per row and read once in all). A per-row scale c [N, s, 1]:
 * 2 B per output row. */
static void test_broadcast_operands(void **state) {
  (void)state;
  const char *sets[] = {"chip.clusters=1"};
  GsArch *a = load_arch("configs/tiny.cfg", sets, 1);
  const char *ops[] = {"add(x, p)", "add(x, p)", "mul(x, c)"};
  const int seq[] = {16, 2, 16}, per_row[] = {128, 128, 2};
  for (int i = 0; i < 3; i++) {
    char text[512];
    snprintf(text, sizeof text,
             "gtg 1\nmodel b batch=4 dtype=fp16\ninput x: fp16[N, %d, 64]\n"
             "input p: fp16[1, %d, 64]\ninput c: fp16[N, %d, 1]\ny = %s\n", seq[i], seq[i],
             seq[i], ops[i]);
    GsGraph *g = parse(text);
    GsLowered *l = lower(g, a, SCHED_TVM, 4, 0);
    check_program(l, a);
    int64_t rows = 4 * seq[i], act = rows * 64 * 2;
    int64_t rd, wr;
    program_ddr_bytes(l->prog, &rd, &wr);
    assert_int_equal(rd, act + rows * per_row[i]);
    assert_int_equal(wr, act);
    lower_free(l);
    graph_free(g);
  }
  arch_free(a);
}

static void test_fits_and_checks(void **state) {
  (void)state;
  const char *cfgs[] = {"configs/tiny.cfg", "configs/stcp920.cfg", "configs/goya.cfg"};
  for (int c = 0; c < 3; c++) {
    GsArch *a = load_arch(cfgs[c], NULL, 0);
    GsGraph *g = parse(resnetish);
    GsDiag d;
    diag_init(&d);
    if (c == 2) assert_int_equal(graph_cast(g, DT_INT8, &d), 0); /* Goya computes no fp16 */
    for (int s = 0; s < SCHED_COUNT; s++) {
      GsLowered *l = lower(g, a, (GsSchedKind)s, 8, 0);
      check_program(l, a);
      lower_free(l);
    }
    graph_free(g);
    arch_free(a);
  }
}

/* Goya: the GEMM core has a matrix unit and no vector unit, the TPCs the opposite: a conv's
 * relu tail cannot stay in the conv's kernel and becomes a kernel on the TPCs. Goya computes no
 * fp16: an fp16 model is refused with a message that suggests --dtype int8 (never computed in
 * another dtype behind the user's back); cast to int8 (graph_cast, --dtype) it runs. */
static void test_goya_tail_split(void **state) {
  (void)state;
  GsArch *a = load_arch("configs/goya.cfg", NULL, 0);
  GsGraph *g = parse("gtg 1\nmodel c batch=1 dtype=fp16\ninput x: fp16[N, 16, 8, 8]\n"
                     "c = conv2d(x) units=16 kernel=3 pad=1\nr = relu(c)\n");
  DiagText dt;
  GsLowerOptions o;
  lower_options_default(&o);
  o.sched = SCHED_TVM;
  o.batch = 1;
  assert_null(lower_run(g, a, &o, diag_text_begin(&dt)));
  char *buf = diag_text_end(&dt);
  assert_non_null(strstr(buf, "computes in fp16"));
  assert_non_null(strstr(buf, "config 'goya' has no matrix unit for fp16"));
  assert_non_null(strstr(buf, "--dtype int8"));
  free(buf);
  GsDiag d;
  diag_init(&d);
  assert_int_equal(graph_cast(g, DT_INT8, &d), 0);
  assert_int_equal(g->tensors[0].dtype, DT_INT8);
  GsLowered *l = lower(g, a, SCHED_TVM, 1, 0);
  assert_int_equal(l->nkernels, 2);
  assert_string_equal(a->core_kinds[l->kernels[0].core_kind].name, "gemm");
  assert_string_equal(a->core_kinds[l->kernels[1].core_kind].name, "tpc");
  assert_int_equal(l->kernels[0].cdt_head, DT_INT8);
  check_program(l, a);
  lower_free(l);
  graph_free(g);
  arch_free(a);
}

/* lower_run with a check (GsLowerOptions.check) publishes every kernel to it: what
 * prog_check_end finds is prog_check's (none, for each strategy over four iterations), the
 * program is the one lower_run makes without a check (whose thread encodes half its queues),
 * the GsLowered does not keep the check, and a lowering that fails halts it (goya has no fp16
 * matrix unit) so the caller only ends it. */
static void test_checked_while_emitted(void **state) {
  (void)state;
  GsArch *a = load_arch("configs/tiny.cfg", NULL, 0);
  GsGraph *g = parse(resnetish);
  static const GsSchedKind kinds[] = {SCHED_TVM, SCHED_ASTITCH, SCHED_GRAPHTURBO};
  for (int i = 0; i < 3; i++) {
    GsDiag d;
    diag_init(&d);
    GsLowerOptions o;
    lower_options_default(&o);
    o.sched = kinds[i];
    o.batch = 8;
    o.batch_per_cluster = 1;
    o.check = prog_check_begin(a);
    GsLowered *l = lower_run(g, a, &o, &d);
    assert_non_null(l);
    assert_null(l->opt.check);
    assert_int_equal(prog_check_end(o.check, l->prog, &d, "x"), 0);
    assert_int_equal(d.nerrors, 0);
    o.check = NULL; /* the same program, every queue encoded on this thread */
    GsLowered *alone = lower_run(g, a, &o, &d);
    assert_same_program(l->prog, alone->prog);
    lower_free(alone);
    lower_free(l);
  }
  graph_free(g);
  arch_free(a);
  a = load_arch("configs/goya.cfg", NULL, 0);
  g = parse("gtg 1\nmodel c batch=1 dtype=fp16\ninput x: fp16[N, 16, 8, 8]\n"
            "c = conv2d(x) units=16 kernel=3 pad=1\n");
  GsDiag d;
  diag_init(&d);
  d.out = fopen("/dev/null", "w");
  GsLowerOptions o;
  lower_options_default(&o);
  o.check = prog_check_begin(a);
  assert_null(lower_run(g, a, &o, &d));
  assert_int_equal(prog_check_end(o.check, NULL, &d, "x"), 0);
  fclose(d.out);
  graph_free(g);
  arch_free(a);
}

/* A layernorm row of 2^20 fp16 values (2 MiB) cannot fit tiny's 64 KiB LB: a user error that
 * names the kernel and both sizes. */
static void test_untileable(void **state) {
  (void)state;
  GsArch *a = load_arch("configs/tiny.cfg", NULL, 0);
  GsGraph *g = parse("gtg 1\nmodel n batch=1 dtype=fp16\ninput x: fp16[N, 1048576]\n"
                     "y = layernorm(x)\n");
  DiagText dt;
  GsLowerOptions o;
  lower_options_default(&o);
  o.sched = SCHED_TVM;
  o.batch = 1;
  GsLowered *l = lower_run(g, a, &o, diag_text_begin(&dt));
  char *buf = diag_text_end(&dt);
  assert_null(l);
  assert_int_equal(dt.d.nerrors, 1);
  assert_non_null(strstr(buf, "test.gtg:4:"));
  assert_non_null(strstr(buf, "cannot be tiled"));
  assert_non_null(strstr(buf, "65536"));
  free(buf);
  graph_free(g);
  arch_free(a);
}

static char *asm_text(const GsLowered *l, const GsArch *a) {
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&buf, &len);
  gtasm_write(mem, a, l->prog);
  fclose(mem);
  return buf;
}

static void test_deterministic(void **state) {
  (void)state;
  GsArch *a = load_arch("configs/tiny.cfg", NULL, 0);
  GsGraph *g = parse(resnetish);
  GsLowered *l1 = lower(g, a, SCHED_ASTITCH, 4, 0);
  char *t1 = asm_text(l1, a);
  GsLowered *l2 = lower(g, a, SCHED_ASTITCH, 4, 0);
  char *t2 = asm_text(l2, a);
  assert_string_equal(t1, t2);
  free(t1);
  free(t2);
  lower_free(l1);
  lower_free(l2);
  graph_free(g);
  arch_free(a);
}

/* A strided 1x1 conv (ResNet's downsampling shortcut) loads only the pixels it samples:
 * x[1, 16, 8, 8] -> 16 channels at stride 2 uses the 4 x 4 pixels (2h, 2w), 16 channels each:
 * 4·4·16·2 = 512 B of input (all of it would be 8·8·16·2 = 2048 B, and whole input rows
 * 0..2 and 4..6 of the two cores' output rows 1536 B), plus 16·16·2 = 512 B of weights once. */
static void test_strided_pointwise_reads_sampled_pixels(void **state) {
  (void)state;
  const char *sets[] = {"chip.clusters=1"};
  GsArch *a = load_arch("configs/tiny.cfg", sets, 1);
  GsGraph *g = parse("gtg 1\nmodel s batch=1 dtype=fp16\ninput x: fp16[N, 16, 8, 8]\n"
                     "y = conv2d(x) units=16 kernel=1 stride=2 bias=0\n");
  GsLowered *l = lower(g, a, SCHED_TVM, 1, 0);
  int64_t in = 4 * 4 * 16 * 2, w = 16 * 16 * 2, out = 4 * 4 * 16 * 2;
  int64_t rd, wr;
  program_ddr_bytes(l->prog, &rd, &wr);
  assert_int_equal(rd, in + w);
  assert_int_equal(wr, out);
  assert_int_equal(l->tally.task[0].ddr_read, in + w);
  lower_free(l);
  graph_free(g);
  arch_free(a);
}

/* ResNet-50's stem (7x7/2 conv over 3 input channels, 224 x 224) on STCP920 keeps all 3
 * channels in one k chunk: channels-last, a chunk of c channels is a row of 2c bytes per
 * pixel, and every such row costs a whole 64-byte DDR burst, so cutting 6-byte pixels into
 * 2- or 4-byte pieces moves the same bursts two or three times. */
static void test_stem_keeps_channels_whole(void **state) {
  (void)state;
  GsArch *a = load_arch("configs/stcp920.cfg", NULL, 0);
  GsGraph *g = parse("gtg 1\nmodel s batch=64 dtype=fp16\ninput x: fp16[N, 3, 224, 224]\n"
                     "y = conv2d(x) units=64 kernel=7 stride=2 pad=3 bias=0\n");
  GsLowered *l = lower(g, a, SCHED_TVM, 64, 0);
  assert_int_equal(l->kernels[0].tk, 3);
  lower_free(l);
  graph_free(g);
  arch_free(a);
}

/* Offset in tensor `name` of the first transfer from (side "src") or to (side "dst") it in
 * queue `queue` of the program text (its src_off=/dst_off=, 0 when absent). */
static long long first_mov_off(const char *text, const char *queue, const char *side,
                               const char *name) {
  char hdr[64], pat[64], key[16];
  snprintf(hdr, sizeof hdr, ".queue %s\n", queue);
  snprintf(key, sizeof key, "%s_off=", side);
  const char *q = strstr(text, hdr);
  if (!q) fail_msg("no queue %s", queue);
  const char *end = strstr(q + 1, ".queue ");
  snprintf(pat, sizeof pat, " %s=%s ", side, name);
  const char *m = strstr(q, pat);
  if (!m || (end && m > end)) fail_msg("queue %s moves no %s", queue, name);
  const char *bol = m;
  while (bol > q && bol[-1] != '\n') bol--;
  const char *eol = strchr(m, '\n');
  const char *o = strstr(bol, key);
  if (!o || (eol && o > eol)) return 0;
  return atoll(o + strlen(key));
}
static long long first_load_off(const char *text, const char *queue, const char *name) {
  return first_mov_off(text, queue, "src", name);
}

/* Core i of the chip walks the k chunks from chunk i mod (chunks): a dense layer whose
 * 16384 x 64 fp16 weights (2 MiB) cannot sit in a 64 KiB LB is cut in k; on one cluster of
 * tiny's 2 cores with batch 2 core 0 takes sample 0 and core 1 sample 1, so core 0's first
 * input load is at byte 0 and core 1's at sample 1's row (16384 · 2 B) plus one chunk. */
static void test_k_loop_rotated_per_core(void **state) {
  (void)state;
  const char *sets[] = {"chip.clusters=1"};
  GsArch *a = load_arch("configs/tiny.cfg", sets, 1);
  GsGraph *g = parse("gtg 1\nmodel d batch=2 dtype=fp16\ninput x: fp16[N, 16384]\n"
                     "y = dense(x) units=64 bias=0\n");
  GsLowered *l = lower(g, a, SCHED_TVM, 2, 0);
  int64_t tk = l->kernels[0].tk;
  assert_true(tk < 16384); /* cut in k */
  char *t = asm_text(l, a);
  assert_int_equal(first_load_off(t, "c0.k0.dma_in", "t:x"), 0);
  assert_int_equal(first_load_off(t, "c0.k1.dma_in", "t:x"), 16384 * 2 + tk * 2);
  free(t);
  lower_free(l);
  graph_free(g);
  arch_free(a);
}

/* The same for column tiles: a dense layer with 16384 output columns (2 MiB of weights) is
 * cut into column tiles; with one sample per core each core stores into its own piece of y
 * (a region of 16384 · 2 = 32768 bytes: "t:y[0,32768)" and "t:y[32768,65536)"), core 0's
 * first store at byte 0 of its piece and core 1's one column tile in. */
static void test_column_loop_rotated_per_core(void **state) {
  (void)state;
  const char *sets[] = {"chip.clusters=1"};
  GsArch *a = load_arch("configs/tiny.cfg", sets, 1);
  GsGraph *g = parse("gtg 1\nmodel d batch=2 dtype=fp16\ninput x: fp16[N, 64]\n"
                     "y = dense(x) units=16384 bias=0\n");
  GsLowered *l = lower(g, a, SCHED_TVM, 2, 0);
  int64_t tc = l->kernels[0].tc;
  assert_true(tc < 16384); /* cut in columns */
  char *t = asm_text(l, a);
  assert_int_equal(first_mov_off(t, "c0.k0.dma_out", "dst", "\"t:y[0,32768)\""), 0);
  assert_int_equal(first_mov_off(t, "c0.k1.dma_out", "dst", "\"t:y[32768,65536)\""), tc * 2);
  free(t);
  lower_free(l);
  graph_free(g);
  arch_free(a);
}

/* Column parts (lower_core_cols) are whole matrix-unit column blocks, the first parts one block
 * more: 1000 columns in blocks of 16 are 63 blocks (the last one 8 columns); over 8 cores that is
 * 7 blocks each and 7 parts with one more: parts 0..6 take 8 blocks (128 columns), part 7 the
 * rest, 1000 - 7 x 128 = 104. Fewer columns than parts x blocks: single columns. */
static void test_core_cols_whole_blocks(void **state) {
  (void)state;
  GsGeom gm;
  memset(&gm, 0, sizeof gm);
  gm.cols = 1000;
  gm.col_align = 16;
  GsKernel k;
  memset(&k, 0, sizeof k);
  k.pc = 8;
  int64_t c0, c1;
  for (int j = 0; j < 7; j++) {
    lower_core_cols(&gm, &k, j, &c0, &c1);
    assert_int_equal(c0, 128 * j);
    assert_int_equal(c1, 128 * (j + 1));
  }
  lower_core_cols(&gm, &k, 7, &c0, &c1);
  assert_int_equal(c0, 896);
  assert_int_equal(c1, 1000);
  gm.cols = 100; /* 100 < 8 x 16: single columns, 13 for parts 0..3, 12 after */
  lower_core_cols(&gm, &k, 3, &c0, &c1);
  assert_int_equal(c0, 39);
  assert_int_equal(c1, 52);
  lower_core_cols(&gm, &k, 4, &c0, &c1);
  assert_int_equal(c0, 52);
  assert_int_equal(c1, 64);
}

/* A view by hand: rows [512, 1536) of a 256-byte pitch, bytes [128, 192) of each: 4 rows of
 * 64 bytes at a stride of 256 from byte 640; it holds byte 640 + 256 + 63 and not 640 + 64. */
static void test_view_pattern(void **state) {
  (void)state;
  GsView v = {512, 1536, 256, 128, 192};
  GsSpan s = view_span(&v);
  assert_int_equal(s.off, 640);
  assert_int_equal(s.row_bytes, 64);
  assert_int_equal(s.rows, 4);
  assert_int_equal(s.stride, 256);
  assert_int_equal(view_bytes(&v), 256);
  assert_false(view_whole(&v));
  assert_true(view_has(&v, 640 + 256 + 63));
  assert_false(view_has(&v, 640 + 64));
  assert_false(view_has(&v, 511));
  assert_false(view_has(&v, 1536 + 128));
}

/* The core's view of a column-split output: two 1x1 convs' first, 128 -> 128 channels on one
 * row of 8 pixels, on one cluster of tiny (2 cores, tests/cli/test_cols.sh derives its plan):
 * rows only would leave a core idle, so each core takes 64 channels; core 1's view of y is all
 * 8 pixels (rows [0, 2048) of a 128 x 2 = 256-byte pitch), bytes [128, 256) of each. */
static void test_core_view_of_column_split(void **state) {
  (void)state;
  const char *sets[] = {"chip.clusters=1"};
  GsArch *a = load_arch("configs/tiny.cfg", sets, 1);
  GsGraph *g = parse("gtg 1\nmodel c batch=1 dtype=fp16\ninput x: fp16[N, 128, 1, 8]\n"
                     "y = conv2d(x) units=128 kernel=1 bias=0\n");
  GsLowered *l = lower(g, a, SCHED_TVM, 1, 0);
  const GsKernel *k = &l->kernels[0];
  assert_int_equal(k->pr, 1);
  assert_int_equal(k->pc, 2);
  GsKernelPart kp;
  lower_kernel_part(g, a, k, &kp);
  int y = g->ops[k->head].out[0];
  GsView v0 = lower_core_view(g, a, k, &kp, y, 0, 0), v1 = lower_core_view(g, a, k, &kp, y, 0, 1);
  assert_int_equal(v1.lo, 0);
  assert_int_equal(v1.hi, 2048);
  assert_int_equal(v1.pitch, 256);
  assert_int_equal(v1.b0, 128);
  assert_int_equal(v1.b1, 256);
  assert_int_equal(v0.b0, 0);
  assert_int_equal(v0.b1, 128);
  lower_free(l);
  graph_free(g);
  arch_free(a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_group_tvm),        cmocka_unit_test(test_group_astitch),
      cmocka_unit_test(test_tvm_kernel_ddr_bytes), cmocka_unit_test(test_iterations),
      cmocka_unit_test(test_iterations_when_ddr_is_small),
      cmocka_unit_test(test_fits_and_checks),  cmocka_unit_test(test_checked_while_emitted),
      cmocka_unit_test(test_goya_tail_split),
      cmocka_unit_test(test_untileable),       cmocka_unit_test(test_deterministic),
      cmocka_unit_test(test_strided_pointwise_reads_sampled_pixels),
      cmocka_unit_test(test_stem_keeps_channels_whole),
      cmocka_unit_test(test_k_loop_rotated_per_core),
      cmocka_unit_test(test_column_loop_rotated_per_core),
      cmocka_unit_test(test_core_cols_whole_blocks),
      cmocka_unit_test(test_view_pattern),
      cmocka_unit_test(test_core_view_of_column_split),
      cmocka_unit_test(test_broadcast_operands),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
