/* test_prog_repeat.c — prog_repeats (prog_repeat.c) on hand-made programs whose counts are
 * worked out beside each case: a whole queue repeated under maps of regions and tiles and a
 * shift of its offsets; each kind of difference that ends a run (a value, a region mapped
 * twice, a shift that changes, an offset of 0 against a shifted one); a run found past
 * cluster 0's one-off work; runs shorter than GS_REPEAT_MIN not counted; runs in order along
 * both queues; a queue with no cluster-0 counterpart. (tests/cli/test_repeats.sh compares the
 * count with scripts/cluster_streams.py --segments on scheduled programs.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "prog.h"

/* Queue `index` of core 0 of cluster c, looked up at every use: making a queue may move the
 * others (prog_queue). */
typedef struct {
  GsProgram *p;
  int c, index;
} Q;
static GsInst *emit(Q q) { return prog_emit(prog_queue(q.p, q.c, 0, q.index)); }

/* A load: mov of 64 bytes from region src at src_off into region dst (tile dt). */
static void load(Q q, uint32_t dst, uint32_t dt, uint32_t src, int64_t src_off) {
  GsInst *in = emit(q);
  in->op = I_MOV;
  in->r[0] = dst;
  in->t[0] = dt;
  in->r[1] = src;
  inst_mov_set_bytes(in, 64);
  inst_mov_set_src_off(in, src_off);
}

static void gemm(Q q, uint32_t dst, uint32_t a, int64_t m) {
  GsInst *in = emit(q);
  in->op = I_GEMM;
  in->r[0] = dst;
  in->r[1] = a;
  inst_gemm_set_m(in, m);
  inst_gemm_set_n(in, 4);
  inst_gemm_set_k(in, 4);
}

static void barrier(Q q) {
  GsInst *in = emit(q);
  in->op = I_BARRIER;
  inst_barrier_set_count(in, 2);
}

/* Cluster 1 loads what cluster 0 does, ten times, into other regions and tiles and from 1024
 * bytes further: one run of all ten. */
static void whole_queue(void **state) {
  (void)state;
  GsProgram *p = prog_new();
  Q a = {p, 0, Q_DMA_IN}, b = {p, 1, Q_DMA_IN};
  for (int i = 0; i < 10; i++) load(a, 10 + (uint32_t)(i % 2), 100 + (uint32_t)i, 30, 64 * i);
  for (int i = 0; i < 10; i++) load(b, 20 + (uint32_t)(i % 2), 500 + (uint32_t)i, 40, 1024 + 64 * i);
  GsRepeats r = prog_repeats(p);
  assert_int_equal(r.insts, 20);
  assert_int_equal(r.later, 10);
  assert_int_equal(r.covered, 10);
  assert_int_equal(r.runs, 1);
  prog_free(p);
}

/* Twelve loads; cluster 1's instruction 9 (the 10th) differs in one way, so the run of 9 before
 * it counts and the two after it (shorter than 8) do not. */
static int64_t covered_with(void (*spoil)(GsInst *in)) {
  GsProgram *p = prog_new();
  Q a = {p, 0, Q_DMA_IN}, b = {p, 1, Q_DMA_IN};
  for (int i = 0; i < 12; i++) load(a, 10 + (uint32_t)(i % 2), 100 + (uint32_t)i, 30, 64 * i);
  for (int i = 0; i < 12; i++) {
    load(b, 20 + (uint32_t)(i % 2), 500 + (uint32_t)i, 40, 1024 + 64 * i);
    if (i == 9) spoil((GsInst *)prog_queue_staged(prog_queue(p, 1, 0, Q_DMA_IN)));
  }
  GsRepeats r = prog_repeats(p);
  assert_int_equal(r.later, 12);
  int64_t c = r.covered;
  assert_int_equal(r.runs, c ? 1 : 0);
  prog_free(p);
  return c;
}
static void nothing(GsInst *in) { (void)in; }
static void bytes(GsInst *in) { inst_mov_set_bytes(in, 128); }
static void region_twice(GsInst *in) { in->r[0] = 20; }        /* a's 11 is b's 21 already */
static void tile_twice(GsInst *in) { in->t[0] = 500; }         /* b's 500 is a's 100 already */
static void shift(GsInst *in) { inst_mov_set_src_off(in, 64 * 9); } /* 0 against 1024 so far */
static void signals(GsInst *in) { in->signal = 2; }

static void each_difference_ends_a_run(void **state) {
  (void)state;
  assert_int_equal(covered_with(nothing), 12);
  assert_int_equal(covered_with(bytes), 9);
  assert_int_equal(covered_with(region_twice), 9);
  assert_int_equal(covered_with(tile_twice), 9);
  assert_int_equal(covered_with(shift), 9);
  assert_int_equal(covered_with(signals), 9);
}

/* An offset of 0 is an offset too: cluster 0 reads region 30 at 0 and then at 64, cluster 1
 * region 40 at 0 and then at 1088. The shift is 0 and then 1024: the run ends at the second,
 * so no run of 8 is left (the first is 1 long, the rest are single loads of fresh shifts). */
static void offset_zero_is_a_shift(void **state) {
  (void)state;
  GsProgram *p = prog_new();
  Q a = {p, 0, Q_DMA_IN}, b = {p, 1, Q_DMA_IN};
  for (int i = 0; i < 10; i++) load(a, 10, 100 + (uint32_t)i, 30, i % 2 ? 64 : 0);
  for (int i = 0; i < 10; i++) load(b, 20, 500 + (uint32_t)i, 40, i % 2 ? 1088 : 0);
  GsRepeats r = prog_repeats(p);
  assert_int_equal(r.covered, 0);
  assert_int_equal(r.runs, 0);
  prog_free(p);
}

/* Cluster 0's matrix queue does two gemms of its own (m = 2) first, then ten of m = 4; cluster
 * 1's the ten alone: one run of 10, found past the two. Cluster 0's vector queue has ten gemms,
 * cluster 1's five, a barrier, five: no run reaches 8. Cluster 1's scalar queue has no
 * cluster-0 counterpart: its own. Later clusters: 10 + 11 + 3 = 24, 10 covered in 1 run. */
static void runs_past_one_off_work(void **state) {
  (void)state;
  GsProgram *p = prog_new();
  Q a = {p, 0, Q_UNIT0}, b = {p, 1, Q_UNIT0};
  gemm(a, 9, 8, 2);
  gemm(a, 9, 8, 2);
  for (int i = 0; i < 10; i++) gemm(a, 10, 11, 4);
  for (int i = 0; i < 10; i++) gemm(b, 20, 21, 4);
  Q va = {p, 0, Q_UNIT0 + 1}, vb = {p, 1, Q_UNIT0 + 1};
  for (int i = 0; i < 10; i++) gemm(va, 10, 11, 4);
  for (int i = 0; i < 5; i++) gemm(vb, 20, 21, 4);
  barrier(vb);
  for (int i = 0; i < 5; i++) gemm(vb, 20, 21, 4);
  Q sb = {p, 1, Q_UNIT0 + 2};
  for (int i = 0; i < 3; i++) gemm(sb, 20, 21, 4);
  GsRepeats r = prog_repeats(p);
  assert_int_equal(r.insts, 12 + 10 + 10 + 11 + 3);
  assert_int_equal(r.later, 24);
  assert_int_equal(r.covered, 10);
  assert_int_equal(r.runs, 1);
  prog_free(p);
}

/* Runs are taken in order: cluster 0 loads eight times and then multiplies eight times,
 * cluster 1 the other way round. The gemms make a run (from cluster 0's 9th instruction); the
 * loads would only match before it, so they are cluster 1's own: 8 covered. */
static void runs_in_order(void **state) {
  (void)state;
  GsProgram *p = prog_new();
  Q a = {p, 0, Q_DMA_IN}, b = {p, 1, Q_DMA_IN};
  for (int i = 0; i < 8; i++) load(a, 10, 100 + (uint32_t)i, 30, 64 * i);
  for (int i = 0; i < 8; i++) gemm(a, 10, 11, 4);
  for (int i = 0; i < 8; i++) gemm(b, 20, 21, 4);
  for (int i = 0; i < 8; i++) load(b, 20, 500 + (uint32_t)i, 40, 64 * i);
  GsRepeats r = prog_repeats(p);
  assert_int_equal(r.covered, 8);
  assert_int_equal(r.runs, 1);
  prog_free(p);
}

/* An alloc's cluster is not compared (each cluster allocates in its own buffer), its offset is
 * shifted like any other: cluster 1's eight allocs of LB regions at 4096 further repeat. */
static void alloc_cluster_not_compared(void **state) {
  (void)state;
  GsProgram *p = prog_new();
  for (int c = 0; c < 2; c++) {
    for (int i = 0; i < 8; i++) {
      GsInst *in = emit((Q){p, c, Q_DMA_IN});
      in->op = I_ALLOC;
      in->sub = LVL_LB;
      in->r[0] = (uint32_t)(10 * (c + 1) + i);
      inst_alloc_set_cluster(in, c);
      inst_alloc_set_offset(in, 4096 * c + 256 * i);
      inst_alloc_set_bytes(in, 256);
    }
  }
  GsRepeats r = prog_repeats(p);
  assert_int_equal(r.covered, 8);
  prog_free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(whole_queue),
      cmocka_unit_test(each_difference_ends_a_run),
      cmocka_unit_test(offset_zero_is_a_shift),
      cmocka_unit_test(runs_past_one_off_work),
      cmocka_unit_test(runs_in_order),
      cmocka_unit_test(alloc_cluster_not_compared),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
