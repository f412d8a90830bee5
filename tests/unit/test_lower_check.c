/* test_lower_check.c — the lowering's checker (sched/lower_check.c) and lower_plan's stops:
 * real plans of a small CNN pass every step's check under every strategy and on configs with
 * one or two core kinds; a plan corrupted the way a scheduler bug would (an op dropped from a
 * kernel, kernels swapped so a producer runs after its consumer, a head on a unit without its
 * capability, a tensor in the wrong buffer, a tile over its budget, a slice outside its LB or
 * inside a kernel's tile budget, an instance that lost a kernel, weights kept in the GB over
 * each other or over a staging, a kernel making a cluster's or an instance's rows of a tensor
 * that is not batch-major) fails the check of the step
 * whose invariant it breaks — and passes the earlier steps' — with a message naming the step
 * and the kernel, op or tensor; lower_check_step turns a violation into exit 3.
 * Run from the repository root (tests/run.sh does). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "diag_testlib.h"
#include "lower.h"

static GsArch *load_arch(const char *path) {
  GsDiag d;
  diag_init(&d);
  GsArch *a = arch_load(path, NULL, 0, &d);
  if (!a) fail_msg("%s does not load", path);
  return a;
}

/* tests/cases/gtg/tiny_cnn.gtg: conv-bn-relu, maxpool, split, add, reshape, dense. Every
 * strategy makes 5 kernels of it: [c1 b1 r1] [p1] [s1] [y] [logits]. */
static const char *cnn =
    "gtg 1\n"
    "model tiny_cnn batch=4 dtype=fp16\n"
    "input x: fp16[N, 3, 32, 32]\n"
    "c1 = conv2d(x) units=16 kernel=3 pad=1 bias=0\n"
    "b1 = batchnorm(c1)\n"
    "r1 = relu(b1)\n"
    "p1 = maxpool(r1) kernel=2 stride=2\n"
    "s1, s2 = split(p1) axis=1 sizes=8,8\n"
    "y = add(s1, s2)\n"
    "f = reshape(y) shape=N,-1\n"
    "logits = dense(f) units=10\n";

static GsGraph *parse(const char *text) {
  GsDiag d;
  diag_init(&d);
  GsGraph *g = gtg_parse("test.gtg", text, &d);
  if (!g) fail_msg("test graph does not parse");
  return g;
}

static GsLowered *plan(GsGraph *g, const GsArch *a, GsSchedKind s, LowerStep stop) {
  GsDiag d;
  diag_init(&d);
  GsLowerOptions o;
  lower_options_default(&o);
  o.sched = s;
  GsLowered *l = lower_plan(g, a, &o, stop, &d);
  if (!l) fail_msg("planning failed");
  return l;
}

static int tensor_id(const GsGraph *g, const char *name) {
  for (int t = 0; t < g->ntensors; t++)
    if (strcmp(g->tensors[t].name, name) == 0) return t;
  fail_msg("no tensor %s", name);
  return -1;
}

/* lower_check's return value and its message (empty when none). */
static char *check(const GsLowered *l, LowerStep s, int *rc) {
  DiagText dt;
  *rc = lower_check(l, s, diag_text_begin(&dt));
  return diag_text_end(&dt);
}

static void expect_ok(const GsLowered *l, LowerStep s) {
  int rc;
  char *m = check(l, s, &rc);
  if (rc != 0 || m[0]) fail_msg("step %s: unexpected violation: %s", lower_step_name(s), m);
  free(m);
}

/* The check of step s fails naming the step and `what`. */
static void expect_broken(const GsLowered *l, LowerStep s, const char *what) {
  int rc;
  char *m = check(l, s, &rc);
  char step[64];
  snprintf(step, sizeof step, "after lowering step '%s'", lower_step_name(s));
  if (rc != -1 || !strstr(m, step) || !strstr(m, what))
    fail_msg("step %s: rc %d, message '%s', wanted '%s'", lower_step_name(s), rc, m, what);
  free(m);
}

static void expect_ok_until(const GsLowered *l, LowerStep last) {
  for (int s = 0; s < (int)last; s++)
    if (lower_step_runs(l->opt.sched, (LowerStep)s)) expect_ok(l, (LowerStep)s);
}

/* Real plans pass every step's check, on one core kind (tiny, stcp920) and two (goya: a
 * conv's tail split off onto the TPCs). */
static void test_real_plans_pass(void **state) {
  (void)state;
  const char *cfgs[] = {"configs/tiny.cfg", "configs/stcp920.cfg", "configs/goya.cfg"};
  for (int c = 0; c < 3; c++) {
    GsArch *a = load_arch(cfgs[c]);
    GsGraph *g = parse(cnn);
    GsDiag d;
    diag_init(&d);
    if (c == 2) assert_int_equal(graph_cast(g, DT_INT8, &d), 0); /* Goya computes no fp16 */
    for (int s = 0; s < SCHED_COUNT; s++) {
      GsLowered *l = plan(g, a, (GsSchedKind)s, lower_last_step((GsSchedKind)s));
      expect_ok_until(l, LOWER_NSTEPS);
      lower_free(l);
    }
    graph_free(g);
    arch_free(a);
  }
}

/* lower_plan stops after the step asked for: nothing of a later step is there. */
static void test_plan_stops(void **state) {
  (void)state;
  GsArch *a = load_arch("configs/tiny.cfg");
  GsGraph *g = parse(cnn);
  GsLowered *l = plan(g, a, SCHED_TVM, LOWER_KERNELS);
  assert_int_equal(l->nkernels, 5);
  assert_null(l->place);
  lower_free(l);
  l = plan(g, a, SCHED_ASTITCH, LOWER_PLACEMENT);
  assert_non_null(l->place);
  assert_int_equal(l->kernels[0].tr, 0); /* not tiled */
  lower_free(l);
  l = plan(g, a, SCHED_GRAPHTURBO, LOWER_UNITS);
  assert_int_equal(l->nkernels, 5); /* the layers */
  assert_int_equal(l->ninsts, 0);
  assert_int_equal(l->nslices, 0);
  lower_free(l);
  l = plan(g, a, SCHED_GRAPHTURBO, LOWER_SLICES);
  assert_true(l->ninsts >= 1);
  assert_true(l->nslices >= 5);
  assert_null(l->place);
  lower_free(l);
  graph_free(g);
  arch_free(a);
}

/* Kernels: an op dropped from a kernel; a producer moved after its consumer. The relu r1 ends
 * kernel 0 (conv, bn, relu) under tvm and graphturbo, kernel 1 (bn, relu: the conv alone
 * before it) under astitch. */
static void test_kernels_broken(void **state) {
  (void)state;
  GsArch *a = load_arch("configs/tiny.cfg");
  GsGraph *g = parse(cnn);
  for (int s = 0; s < SCHED_COUNT; s++) {
    GsLowered *l = plan(g, a, (GsSchedKind)s, LOWER_UNITS);
    int kr = s == SCHED_ASTITCH, nr = s == SCHED_ASTITCH ? 2 : 3;
    assert_int_equal(l->kernels[kr].nops, nr);
    l->kernels[kr].nops = nr - 1; /* r1 = relu(b1) in no kernel */
    expect_broken(l, LOWER_KERNELS, "op 'r1' is in no kernel");
    expect_broken(l, LOWER_UNITS, "op 'r1' is in no kernel");
    l->kernels[kr].nops = nr;
    GsKernel k0 = l->kernels[kr];
    l->kernels[kr] = l->kernels[kr + 1];
    l->kernels[kr + 1] = k0; /* the maxpool before the kernel that makes its input */
    char msg[128];
    snprintf(msg, sizeof msg,
             "kernel %d 'p1': op 'p1' reads 'r1', which op 'r1' makes in no earlier kernel", kr);
    expect_broken(l, LOWER_KERNELS, msg);
    lower_free(l);
  }
  graph_free(g);
  arch_free(a);
}

/* astitch: the conv given the stitched batchnorm and relu as its tail (tvm's first kernel in
 * place of astitch's first two). */
static void test_astitch_alone_broken(void **state) {
  (void)state;
  GsArch *a = load_arch("configs/tiny.cfg");
  GsGraph *g = parse(cnn);
  GsLowered *l = plan(g, a, SCHED_ASTITCH, LOWER_KERNELS);
  GsLowered *t = plan(g, a, SCHED_TVM, LOWER_KERNELS);
  expect_ok(l, LOWER_KERNELS);
  l->kernels[0] = t->kernels[0];
  l->nkernels--;
  memmove(&l->kernels[1], &l->kernels[2], sizeof(GsKernel) * (size_t)(l->nkernels - 1));
  expect_broken(l, LOWER_KERNELS,
                "kernel 0 'c1': op 'c1' is not memory-intensive but stitched with other ops");
  lower_free(l);
  lower_free(t);
  graph_free(g);
  arch_free(a);
}

/* Units: the dense's head on the vector unit (no matrix capability); a fused tail with no
 * vector unit at all. The kernels' invariants still hold. */
static void test_units_broken(void **state) {
  (void)state;
  GsArch *a = load_arch("configs/tiny.cfg");
  GsGraph *g = parse(cnn);
  GsLowered *l = plan(g, a, SCHED_TVM, LOWER_UNITS);
  GsKernel *dense = &l->kernels[4], *conv = &l->kernels[0];
  int head = dense->unit_head;
  dense->unit_head = conv->unit_tail; /* vec */
  expect_ok(l, LOWER_KERNELS);
  expect_broken(l, LOWER_UNITS, "kernel 4 'logits': head op 'logits' has no matrix unit computing fp16");
  dense->unit_head = head;
  conv->unit_tail = -1;
  expect_broken(l, LOWER_UNITS, "kernel 0 'c1': tail op 'b1' has no vector unit");
  lower_free(l);
  graph_free(g);
  arch_free(a);
}

/* Placement: tvm keeping a tensor in GB; a fused intermediate written out of LB; astitch's GB
 * tensor past the end of the GB's tensor area. */
static void test_placement_broken(void **state) {
  (void)state;
  GsArch *a = load_arch("configs/tiny.cfg");
  GsGraph *g = parse(cnn);
  GsLowered *l = plan(g, a, SCHED_TVM, LOWER_PLACEMENT);
  int r1 = tensor_id(g, "r1"), c1 = tensor_id(g, "c1");
  l->place[r1].level = LVL_GB;
  expect_ok(l, LOWER_UNITS);
  expect_broken(l, LOWER_PLACEMENT, "tvm keeps tensor 'r1' in GB");
  l->place[r1].level = LVL_DDR;
  expect_ok(l, LOWER_PLACEMENT);
  l->place[c1].level = LVL_DDR;
  expect_broken(l, LOWER_PLACEMENT, "kernel 0 'c1': fused intermediate 'c1' lives at level 0");
  lower_free(l);
  l = plan(g, a, SCHED_ASTITCH, LOWER_PLACEMENT);
  assert_int_equal(l->place[r1].level, LVL_GB);
  l->place[r1].gb_offset = l->gb_tensor_bytes - 64;
  expect_broken(l, LOWER_PLACEMENT, "GB tensor 'r1' at");
  lower_free(l);
  graph_free(g);
  arch_free(a);
}

/* Tiling: the conv's tile grown to whole rows: over its budget. Nothing before tiling sees it. */
static void test_tiling_broken(void **state) {
  (void)state;
  GsArch *a = load_arch("configs/tiny.cfg");
  GsGraph *g = parse(cnn);
  for (int s = 0; s < SCHED_COUNT; s++) {
    GsLowered *l = plan(g, a, (GsSchedKind)s, LOWER_TILING);
    assert_true(lower_tile_need(l, &l->kernels[0]) <= lower_kernel_tile_budget(l, &l->kernels[0]));
    l->kernels[0].tr = (int64_t)1 << 20;
    expect_ok_until(l, LOWER_TILING);
    expect_broken(l, LOWER_TILING, "kernel 0 'c1': its worst-case tile needs");
    l->kernels[0].tr = 1;
    l->kernels[0].tk = 0;
    expect_broken(l, LOWER_TILING, "kernel 0 'c1' has tiles 1 x");
    lower_free(l);
  }
  graph_free(g);
  arch_free(a);
}

/* Weights kept in the GB across iterations (lower_wkeep.c): two 128 -> 128 dense layers (32 KiB
 * of weights each) over 3 iterations on tiny (256 KiB GB) keep both, at the GB's top under tvm;
 * a block moved over the other, out of the GB, or into the staging room of a layer no longer
 * kept fails the tiling check. */
static void test_kept_broken(void **state) {
  (void)state;
  GsArch *a = load_arch("configs/tiny.cfg");
  GsGraph *g = parse("gtg 1\nmodel d2 batch=12 dtype=fp16\ninput x: fp16[N, 4, 128]\n"
                     "y1 = dense(x) units=128 bias=0\ny2 = dense(y1) units=128 bias=0\n");
  GsDiag d;
  diag_init(&d);
  GsLowerOptions o;
  lower_options_default(&o);
  o.sched = SCHED_TVM;
  o.batch_per_cluster = 2;
  GsLowered *l = lower_plan(g, a, &o, LOWER_TILING, &d);
  assert_non_null(l);
  assert_int_equal(l->iterations, 3);
  assert_non_null(l->w_kept);
  int h0 = l->kernels[0].head, h1 = l->kernels[1].head;
  assert_int_equal(l->w_kept[h0], 256 * 1024 - 32768);
  assert_int_equal(l->w_kept[h1], 256 * 1024 - 2 * 32768);
  expect_ok(l, LOWER_TILING);
  l->w_kept[h1] = l->w_kept[h0] - 64;
  expect_broken(l, LOWER_TILING, "over another block");
  l->w_kept[h1] = 256 * 1024 - 64;
  expect_broken(l, LOWER_TILING, "outside [0, 262144)");
  l->w_kept[h1] = -1;
  l->w_kept[h0] = 0;
  expect_broken(l, LOWER_TILING, "kernel 1 'y2' stages 32768 bytes of weights at GB 0");
  lower_free(l);
  graph_free(g);
  arch_free(a);
}

/* graphturbo: an instance that lost its last kernel (slices); an LB slice past the end of its
 * core's LB (placement); a kernel's tile budget grown over an LB slice alive during it
 * (staging: the tiles would overwrite the slice; tiling alone cannot see it). */
static void test_graphturbo_broken(void **state) {
  (void)state;
  GsArch *a = load_arch("configs/tiny.cfg");
  GsGraph *g = parse(cnn);
  GsLowered *l = plan(g, a, SCHED_GRAPHTURBO, LOWER_STAGING);
  GtRunInst *last = &l->insts[l->ninsts - 1];
  last->k1--;
  expect_broken(l, LOWER_SLICES, "the instances run 4 kernels of 5");
  last->k1++;
  expect_ok(l, LOWER_SLICES);
  GtSlice *r1 = &l->slices[l->kernels[0].slice0];
  assert_int_equal(r1->tensor, tensor_id(g, "r1"));
  assert_int_equal(r1->level, LVL_LB);
  int64_t off = r1->lb_off[0];
  r1->lb_off[0] = a->core_kinds[0].lb_bytes;
  expect_ok(l, LOWER_SLICES);
  expect_broken(l, LOWER_PLACEMENT, "LB slice 0 of 'r1' on core 0 at 65536");
  r1->lb_off[0] = off;
  l->kernels[1].budget = a->core_kinds[0].lb_bytes; /* r1 is read by kernel 1 */
  expect_ok_until(l, LOWER_STAGING);
  expect_broken(l, LOWER_STAGING, "is below kernel 1's tile budget 65536");
  lower_free(l);
  graph_free(g);
  arch_free(a);
}

/* A kernel making some samples' rows, or a cluster's, of a tensor that is not batch-major
 * (p = relu of a [1, 16, 8] input: every sample reads all 16 rows) breaks placement (any
 * strategy: split over the clusters) and slices (graphturbo: an instance of samples [0, 1)). */
static void test_sample_rows_broken(void **state) {
  (void)state;
  GsArch *a = load_arch("configs/tiny.cfg");
  GsGraph *g = parse("gtg 1\nmodel pos batch=2 dtype=fp16\ninput x: fp16[N, 16, 8]\n"
                     "input q: fp16[1, 16, 8]\np = relu(q)\ny = add(x, p)\n");
  GsLowered *l = plan(g, a, SCHED_TVM, LOWER_PLACEMENT);
  assert_int_equal(l->kernels[0].split_clusters, 0); /* p: on cluster 0 */
  assert_int_equal(l->kernels[1].split_clusters, 1); /* y: each cluster its sample */
  expect_ok(l, LOWER_PLACEMENT);
  l->kernels[0].split_clusters = 1;
  expect_broken(l, LOWER_PLACEMENT, "kernel 0 'p' makes a cluster's rows of 'p', which is not batch-major");
  lower_free(l);
  l = plan(g, a, SCHED_GRAPHTURBO, LOWER_PLACEMENT);
  expect_ok_until(l, LOWER_TILING);
  GtRunInst *ri = &l->insts[l->kernels[0].inst];
  assert_int_equal(ri->s1, 0);
  ri->s1 = 1; /* the instance and its kernels: samples [0, 1) */
  for (int ki = ri->k0; ki < ri->k1; ki++) l->kernels[ki].s1 = 1;
  expect_broken(l, LOWER_SLICES, "kernel 0 'p' makes some samples' rows of 'p', which is not batch-major");
  lower_free(l);
  graph_free(g);
  arch_free(a);
}

/* lower_check_step: a violation is an internal error, exit 3, naming the step. */
static void test_violation_exits_3(void **state) {
  (void)state;
  GsArch *a = load_arch("configs/tiny.cfg");
  GsGraph *g = parse(cnn);
  GsLowered *l = plan(g, a, SCHED_ASTITCH, LOWER_KERNELS);
  l->kernels[2].nops = 0;
  int fd[2];
  assert_int_equal(pipe(fd), 0);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    dup2(fd[1], 2);
    close(fd[0]);
    lower_check_step(l, LOWER_KERNELS);
    _exit(0);
  }
  close(fd[1]);
  char buf[2048];
  size_t n = 0;
  ssize_t r;
  while (n + 1 < sizeof buf && (r = read(fd[0], buf + n, sizeof buf - 1 - n)) > 0) n += (size_t)r;
  buf[n] = 0;
  close(fd[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), GS_EXIT_INTERNAL);
  if (!strstr(buf, "invariant broken after lowering step 'kernels' (astitch): kernel 2 'p1' has no ops") ||
      !strstr(buf, "internal error"))
    fail_msg("stderr: %s", buf);
  l->kernels[2].nops = 1;
  lower_check_step(l, LOWER_KERNELS); /* returns */
  lower_free(l);
  graph_free(g);
  arch_free(a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_real_plans_pass),   cmocka_unit_test(test_plan_stops),
      cmocka_unit_test(test_kernels_broken),    cmocka_unit_test(test_astitch_alone_broken),
      cmocka_unit_test(test_units_broken),
      cmocka_unit_test(test_placement_broken),  cmocka_unit_test(test_tiling_broken),
      cmocka_unit_test(test_graphturbo_broken), cmocka_unit_test(test_violation_exits_3),
      cmocka_unit_test(test_kept_broken),       cmocka_unit_test(test_sample_rows_broken),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
