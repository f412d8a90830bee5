/* test_emit_copy.c — later clusters copied from cluster 0 (emit_copy.c): the program a
 * schedule makes with copies is, written out (.gtp, which expands the runs), the program made
 * with every cluster emitted one by one (GsLowerOptions.copies_off), byte for byte, with the
 * same DDR tally; over zoo models, the three strategies, and configs of two and four clusters. And
 * copies were made (a test whose programs had none would pass vacuously): at least half the
 * later clusters' instructions, some on the IPU-like chip. Run from the repository root (tests/run.sh does). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "diag_testlib.h"
#include "lower.h"

typedef struct {
  char *bytes;
  size_t n;
  int64_t later, copied;  /* instructions of clusters 1, 2, ...; of them, copied */
  GsEmitTally tally;
} Made;

static Made make(const char *cfg, const char *model, GsSchedKind s, int64_t batch, GtLadder lv,
                 int off) {
  GsDiag d;
  diag_init(&d);
  GsArch *a = arch_load(cfg, NULL, 0, &d);
  GsGraph *g = model_load(model, &d);
  if (!a || !g) fail_msg("%s or %s does not load", cfg, model);
  GsLowerOptions o;
  lower_options_default(&o);
  o.sched = s;
  o.batch = batch;
  o.gt_level = lv;
  o.copies_off = off;
  GsLowered *l = lower_run(g, a, &o, &d);
  if (!l) fail_msg("%s on %s does not schedule", model, cfg);
  Made m = {0};
  for (int i = 0; i < l->prog->nqueues; i++) {
    const GsQueue *q = &l->prog->queues[i];
    if (q->cluster > 0) m.later += q->ninsts;
    m.copied += q->ncopied;
  }
  char path[] = "/tmp/gtsim-emit-copy-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  assert_int_equal(gtp_write(path, l->prog), 0);
  m.bytes = util_read_file(path, &m.n);
  assert_non_null(m.bytes);
  unlink(path);
  m.tally = l->tally;
  m.tally.task = malloc((size_t)l->tally.ntasks * sizeof *m.tally.task);
  assert_non_null(m.tally.task);
  memcpy(m.tally.task, l->tally.task, (size_t)l->tally.ntasks * sizeof *m.tally.task);
  m.tally.episode_task = NULL;
  lower_free(l);
  graph_free(g);
  arch_free(a);
  return m;
}

/* ... and at least `most` of the later clusters' instructions copied (a half, or with 0 some). */
static void same_program_at(const char *cfg, const char *model, GsSchedKind s, int64_t batch,
                            GtLadder lv, double most) {
  Made on = make(cfg, model, s, batch, lv, 0), off = make(cfg, model, s, batch, lv, 1);
  if (on.n != off.n || memcmp(on.bytes, off.bytes, on.n) != 0)
    fail_msg("%s on %s at batch %lld: the program with copies differs", model, cfg,
             (long long)batch);
  assert_int_equal(off.copied, 0);
  if (on.copied == 0 || (double)on.copied < most * (double)on.later)
    fail_msg("%s on %s at batch %lld: %lld of %lld later instructions copied", model, cfg,
             (long long)batch, (long long)on.copied, (long long)on.later);
  assert_int_equal(on.tally.ntasks, off.tally.ntasks);
  assert_int_equal(on.tally.ddr_peak_bytes, off.tally.ddr_peak_bytes);
  for (int t = 0; t < on.tally.ntasks; t++) {
    assert_int_equal(on.tally.task[t].ddr_read, off.tally.task[t].ddr_read);
    assert_int_equal(on.tally.task[t].ddr_write, off.tally.task[t].ddr_write);
    assert_int_equal(on.tally.task[t].spills, off.tally.task[t].spills);
  }
  free(on.bytes);
  free(off.bytes);
  free(on.tally.task);
  free(off.tally.task);
}

static void same_program(const char *cfg, const char *model, GsSchedKind s, int64_t batch) {
  same_program_at(cfg, model, s, batch, GTL_FULL, 0.5);
}

static const char *const MODELS[] = {"workloads/resnet50.gtg", "workloads/bert-128.gtg",
                                     "workloads/mobilenetv2.gtg", "workloads/vit-b16.gtg"};

static void four_clusters(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof MODELS / sizeof *MODELS; i++) {
    same_program("configs/stcp920.cfg", MODELS[i], SCHED_TVM, 4);
    same_program("configs/stcp920.cfg", MODELS[i], SCHED_ASTITCH, 8);
    same_program("configs/stcp920.cfg", MODELS[i], SCHED_GRAPHTURBO, 4);
    same_program("configs/stcp920-hw.cfg", MODELS[i], SCHED_TVM, 8);
    same_program("configs/stcp920-hw.cfg", MODELS[i], SCHED_GRAPHTURBO, 8);
  }
}

static void two_clusters(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof MODELS / sizeof *MODELS; i++) {
    same_program("configs/tiny.cfg", MODELS[i], SCHED_TVM, 2);
    same_program("configs/tiny.cfg", MODELS[i], SCHED_ASTITCH, 4);
    same_program("configs/tiny.cfg", MODELS[i], SCHED_GRAPHTURBO, 4);
  }
}

/* Graphturbo's other levels place slices elsewhere (GB only, LB, instances without staging
 * ahead); an IPU-like chip of two clusters of 1216 cores. */
static void levels_and_ipu(void **state) {
  (void)state;
  for (int lv = GTL_GB; lv < GTL_FULL; lv++) {
    same_program_at("configs/stcp920.cfg", "workloads/resnet50.gtg", SCHED_GRAPHTURBO, 4, (GtLadder)lv, 0.5);
    same_program_at("configs/stcp920.cfg", "workloads/bert-128.gtg", SCHED_GRAPHTURBO, 4, (GtLadder)lv, 0.5);
  }
  /* (at batch 2 many of its layers have fewer rows than a cluster's cores: fewer copies) */
  same_program_at("configs/ipu-gc2.cfg", "workloads/mobilenetv2.gtg", SCHED_TVM, 2, GTL_FULL, 0);
  same_program_at("configs/ipu-gc2.cfg", "workloads/mobilenetv2.gtg", SCHED_GRAPHTURBO, 2,
                  GTL_FULL, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(four_clusters), cmocka_unit_test(two_clusters),
                                     cmocka_unit_test(levels_and_ipu)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
