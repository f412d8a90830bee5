/* test_lower_memo.c — the lowering's memo of kernel tilings (lower_tiling.c): a plan made with
 * it is the plan made with every tiling searched afresh (GsLowerOptions.tiling_afresh), text for
 * text (lower_dump after the last step), on zoo models whose graphturbo plans tile every kernel
 * once per LB share tried for slices, each model's own batch and odd ones whose iterations are
 * sized again; and the memo was used (a test of a memo never asked would pass vacuously).
 * Then each input of the key moved alone (a kernel's budget, an operand's level, the cores its
 * kind may use, the GB split, the batch): tiling again through the memo gives what a fresh
 * search gives, and the move changed some kernel's tiles (else it would test nothing).
 * The kernels tiled on two threads (GsLowerOptions.tiling_threads): the same plans, the same
 * memo hits, and a kernel that cannot be tiled reported as one thread reports it.
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
#include "lower.h"

/* The plan of model on cfg up to `stop` (its arch and graph in *a, *g: the caller frees). */
static GsLowered *lower_zoo(const char *cfg, const char *model, GsSchedKind s, int64_t batch,
                            int afresh, int threads, LowerStep stop, GsArch **a, GsGraph **g) {
  GsDiag d;
  diag_init(&d);
  *a = arch_load(cfg, NULL, 0, &d);
  *g = model_load(model, &d);
  if (!*a || !*g) fail_msg("%s or %s does not load", cfg, model);
  GsLowerOptions o;
  lower_options_default(&o);
  o.sched = s;
  o.batch = batch;
  o.tiling_afresh = afresh;
  o.tiling_threads = threads;
  GsLowered *l = lower_plan(*g, *a, &o, stop, &d);
  if (!l) fail_msg("%s on %s does not plan", model, cfg);
  return l;
}

/* The plan's text after its last step, how many tilings came from the memo and how many
 * kernels it tiled. */
static char *plan_text(const char *cfg, const char *model, GsSchedKind s, int64_t batch,
                       int afresh, int threads, int64_t *hits, int *nkernels) {
  GsArch *a;
  GsGraph *g;
  LowerStep last = lower_last_step(s);
  GsLowered *l = lower_zoo(cfg, model, s, batch, afresh, threads, last, &a, &g);
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  lower_dump(m, l, last);
  fclose(m);
  *hits = lower_tiling_memo_hits(l);
  *nkernels = l->nkernels;
  lower_free(l);
  graph_free(g);
  arch_free(a);
  return buf;
}

static const struct {
  const char *cfg, *model;
  GsSchedKind s;
  int64_t batch; /* 0: the model's */
} runs[] = {
    {"configs/stcp920.cfg", "workloads/mobilenetv2.gtg", SCHED_GRAPHTURBO, 0},
    {"configs/stcp920.cfg", "workloads/bert-128.gtg", SCHED_GRAPHTURBO, 0},
    {"configs/stcp920.cfg", "workloads/resnet50.gtg", SCHED_GRAPHTURBO, 0},
    {"configs/stcp920.cfg", "workloads/resnet50.gtg", SCHED_GRAPHTURBO, 13},
    {"configs/stcp920-hw.cfg", "workloads/vit-b16.gtg", SCHED_GRAPHTURBO, 4},
    {"configs/tiny.cfg", "workloads/densenet121.gtg", SCHED_GRAPHTURBO, 3},
    {"configs/stcp920.cfg", "workloads/bert-128.gtg", SCHED_TVM, 0},
    {"configs/ascend910.cfg", "workloads/conformer.gtg", SCHED_ASTITCH, 2},
};

/* Run i's plan as made by default (memo, one thread) against with `afresh` and `threads`: the
 * same text, or the test fails naming `how`; the memo's hits of both; the plan's kernels. */
static int same_plan(size_t i, int afresh, int threads, const char *how, int64_t *hits,
                     int64_t *hits_other) {
  int na, nb;
  char *a = plan_text(runs[i].cfg, runs[i].model, runs[i].s, runs[i].batch, 0, 1, hits, &na);
  char *b = plan_text(runs[i].cfg, runs[i].model, runs[i].s, runs[i].batch, afresh, threads,
                      hits_other, &nb);
  if (strcmp(a, b) != 0)
    fail_msg("%s on %s (%s): the plan differs %s", runs[i].model, runs[i].cfg,
             lower_sched_name(runs[i].s), how);
  assert_int_equal(na, nb);
  free(a);
  free(b);
  return na;
}

static void same_plans(void **state) {
  (void)state;
  int64_t used = 0;
  for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
    int64_t hits, none;
    same_plan(i, 1, 1, "without the memo", &hits, &none);
    assert_int_equal(none, 0);
    used += hits;
  }
  print_message("# %lld tilings taken from the memo\n", (long long)used);
  assert_true(used > 100);
}

/* Every kernel's partition and tiles, as text. */
static char *tilings(const GsLowered *l) {
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  for (int ki = 0; ki < l->nkernels; ki++) {
    const GsKernel *k = &l->kernels[ki];
    fprintf(m, "%d: %d %d %lld %lld %lld %d %d %d %d %d %.17g %.17g\n", ki, k->pr, k->pc,
            (long long)k->tr, (long long)k->tc, (long long)k->tk, k->w_resident, k->cols_outer,
            k->packed_k, k->w_via_gb, k->w_chunks, k->est_ddr_cycles, k->est_compute_cycles);
  }
  fclose(m);
  return buf;
}

/* Tiles l again through its memo and afresh: the same, and not what `before` was. */
static void retile_same(GsLowered *l, const char *before, const char *what) {
  GsDiag d;
  diag_init(&d);
  assert_int_equal(lower_fill_tiling(l, &d), 0);
  char *memo = tilings(l);
  l->opt.tiling_afresh = 1;
  assert_int_equal(lower_fill_tiling(l, &d), 0);
  l->opt.tiling_afresh = 0;
  char *fresh = tilings(l);
  if (strcmp(memo, fresh) != 0) fail_msg("%s: the memo's tiles are not a fresh search's", what);
  if (strcmp(before, fresh) == 0) fail_msg("%s changed no kernel's tiles", what);
  free(memo);
  free(fresh);
}

static void each_input(void **state) {
  (void)state;
  GsArch *a;
  GsGraph *g;
  GsLowered *l = lower_zoo("configs/stcp920.cfg", "workloads/resnet50.gtg", SCHED_ASTITCH, 8, 0,
                           1, LOWER_TILING, &a, &g);
  char *t0 = tilings(l);
  for (int ki = 0; ki < l->nkernels; ki++) l->kernels[ki].budget = 24 * 1024;
  retile_same(l, t0, "a smaller budget");
  for (int ki = 0; ki < l->nkernels; ki++) l->kernels[ki].budget = 0;
  char *t1 = tilings(l);
  retile_same(l, t1, "the budget back"); /* the first answers again, from the memo */
  free(t1);
  for (int t = 0; t < g->ntensors; t++)
    if (l->place[t].level == LVL_GB) l->place[t].level = LVL_DDR;
  retile_same(l, t0, "operands in DDR");
  t1 = tilings(l);
  l->active_cores[0] = 2;
  retile_same(l, t1, "two cores");
  l->active_cores[0] = 0;
  free(t1);
  t1 = tilings(l);
  l->gb_tensor_bytes = a->gb_bytes - 4096;
  retile_same(l, t1, "a GB split leaving weights no room");
  free(t1);
  t1 = tilings(l);
  GsDiag d;
  diag_init(&d);
  assert_int_equal(graph_infer(g, 4, &d), 0);
  retile_same(l, t1, "batch 4");
  free(t1);
  free(t0);
  lower_free(l);
  graph_free(g);
  arch_free(a);
}

/* Every run's plan with its kernels tiled on two threads is its plan on one, with as many
 * tilings taken from the memo (each key's kernels are one thread's, in order), and some runs
 * had enough kernels to be split (LOWER_TILING_SPLIT_MIN): each of these plans 86 to 1443. */
static void same_on_two_threads(void **state) {
  (void)state;
  int split = 0;
  for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
    int64_t hits1, hits2;
    split += same_plan(i, 0, 2, "on two threads", &hits1, &hits2) >= LOWER_TILING_SPLIT_MIN;
    assert_int_equal(hits1, hits2);
  }
  assert_int_equal(split, (int)(sizeof runs / sizeof *runs));
}

/* lower_fill_tiling's message on `threads` threads with the kernels `small` marks left 64
 * bytes for tiles (it fails, once). */
static char *failure_text(GsLowered *l, const char *small, int threads) {
  int64_t *keep = malloc(sizeof *keep * (size_t)l->nkernels);
  assert_non_null(keep);
  for (int ki = 0; ki < l->nkernels; ki++) {
    keep[ki] = l->kernels[ki].budget;
    if (small[ki]) l->kernels[ki].budget = 64;
  }
  l->opt.tiling_threads = threads;
  DiagText dt;
  assert_int_equal(lower_fill_tiling(l, diag_text_begin(&dt)), -1);
  char *buf = diag_text_end(&dt);
  assert_int_equal(dt.d.nerrors, 1);
  for (int ki = 0; ki < l->nkernels; ki++) l->kernels[ki].budget = keep[ki];
  free(keep);
  return buf;
}

/* Kernels that cannot be tiled in BERT-128's plan — every kernel with tiles (so that each thread
 * meets one), then the last alone: on two threads the message names the first in the plan,
 * word for word as one thread gives it. */
static void failure_on_two_threads(void **state) {
  (void)state;
  GsArch *a;
  GsGraph *g;
  GsLowered *l = lower_zoo("configs/stcp920.cfg", "workloads/bert-128.gtg", SCHED_TVM, 0, 0, 1,
                           LOWER_TILING, &a, &g);
  assert_true(l->nkernels >= LOWER_TILING_SPLIT_MIN);
  char *small = calloc((size_t)l->nkernels, 1);
  assert_non_null(small);
  int first = -1, last = -1;
  for (int ki = 0; ki < l->nkernels; ki++)
    if (l->kernels[ki].tr > 1 || l->kernels[ki].tc > 1) { /* a kernel with tiles: not a copy */
      small[ki] = 1;
      if (first < 0) first = ki;
      last = ki;
    }
  assert_true(first >= 0 && last > first);
  for (int alone = 0; alone < 2; alone++) {
    if (alone) {
      memset(small, 0, (size_t)l->nkernels);
      small[last] = 1;
    }
    const char *name = l->kernels[alone ? last : first].name;
    char *one = failure_text(l, small, 1), *two = failure_text(l, small, 2);
    if (!strstr(one, "cannot be tiled") || !strstr(one, name)) fail_msg("one thread: %s", one);
    if (strcmp(one, two) != 0) fail_msg("one thread: %s\ntwo: %s", one, two);
    free(one);
    free(two);
  }
  free(small);
  lower_free(l);
  graph_free(g);
  arch_free(a);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(same_plans), cmocka_unit_test(each_input),
                                     cmocka_unit_test(same_on_two_threads),
                                     cmocka_unit_test(failure_on_two_threads)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
