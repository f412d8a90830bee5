/* test_gt_spill.c — GraphTurbo's spill rule (§4.3): gt_spill_victim and gt_spill_pass
 * (sched/lower.h, lower_gt.c) on slices built by hand, without a graph or an arch.
 * A slice made at step `kernel` and last read at step `last` occupies, at LVL_LB, lb_bytes[i]
 * on core core0+i over steps [kernel, last]; at LVL_GB, `bytes` over [kernel-1, last]. The pass
 * walks the steps and, while the slices alive at a step on one resource exceed cap, moves the
 * victim down. Rules: GT_SPILL_LONGEST = longest-lived (last - kernel), then larger, then lower
 * index; GT_SPILL_LARGEST = larger, then longer-lived, then lower index.
 * Cases: the paper's Fig. 12 on one core (alive sets worked out by hand below) with equal sizes
 * and with one tensor made larger; a capacity that holds everything; slices at another level
 * not counted; several victims at one step; a slice alone over cap; the GB level (lifetime one
 * step earlier); two cores with only core 1 over capacity; the victim's tie-breaking.
 * Oracle: the expected level of every slice is derived in the comment above it by walking the
 * steps by hand; sizes are in bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lower.h"

/* A slice on cores core0 .. core0+ncores-1 with the per-core bytes in lbb (owned by the caller;
 * lbo receives nothing here but must be valid), at level `level`. */
static GtSlice mk(int kernel, int last, int level, int64_t bytes, int core0, int ncores, int64_t *lbb,
                  int64_t *lbo) {
  GtSlice s;
  memset(&s, 0, sizeof s);
  s.tensor = kernel;
  s.kernel = kernel;
  s.last = last;
  s.want = s.level = level;
  s.bytes = bytes;
  s.gb_off = -1;
  s.core0 = core0;
  s.ncores = ncores;
  s.lb_bytes = lbb;
  s.lb_off = lbo;
  return s;
}

/* ---------------- the paper's Fig. 12 on one core ---------------- */

/* DAG: in1->ct1->out1; out1->ct2->out2; out1->ct3->out3->ct4->out4; out1->ct5->out5;
 * {out2,out4}->ct6->out6; {out6,out5}->ct7->out7. Execution order ct1, ct2, ct3, ct4, ct6, ct5,
 * ct7 = steps 0..6. A slice is made by its task's step and last read by its last reader's:
 *   out1: made 0 (ct1), read by ct2 (1), ct3 (2), ct5 (5)  -> [0,5], lifetime 5
 *   out2: made 1 (ct2), read by ct6 (4)                    -> [1,4], lifetime 3
 *   out3: made 2 (ct3), read by ct4 (3)                    -> [2,3], lifetime 1
 *   out4: made 3 (ct4), read by ct6 (4)                    -> [3,4], lifetime 1
 *   out6: made 4 (ct6), read by ct7 (6)                    -> [4,6], lifetime 2
 *   out5: made 5 (ct5), read by ct7 (6)                    -> [5,6], lifetime 1
 *   out7: made 6 (ct7), no reader (last = kernel)          -> [6,6], lifetime 0
 * Alive at each step (LB: over [kernel, last]):
 *   t0: out1                     t4: out1, out2, out4, out6
 *   t1: out1, out2               t5: out1, out6, out5
 *   t2: out1, out2, out3         t6: out6, out5, out7
 *   t3: out1, out2, out3, out4
 * With equal sizes the peak is 4 slices, at steps 3 and 4. */
enum { OUT1, OUT2, OUT3, OUT4, OUT6, OUT5, OUT7, NFIG };
static const int fig_kernel[NFIG] = {0, 1, 2, 3, 4, 5, 6};
static const int fig_last[NFIG] = {5, 4, 3, 4, 6, 6, 6};
static const char *const fig_name[NFIG] = {"out1", "out2", "out3", "out4", "out6", "out5", "out7"};

typedef struct {
  GtSlice s[NFIG];
  int64_t lbb[NFIG][1], lbo[NFIG][1];
} Fig12;

/* Every slice at LVL_LB on core 0 alone, of `size` bytes except `big` (-1: none) of big_bytes. */
static void fig12(Fig12 *f, int64_t size, int big, int64_t big_bytes) {
  for (int i = 0; i < NFIG; i++) {
    int64_t b = i == big ? big_bytes : size;
    f->lbb[i][0] = b;
    f->lbo[i][0] = -1;
    f->s[i] = mk(fig_kernel[i], fig_last[i], LVL_LB, b, 0, 1, f->lbb[i], f->lbo[i]);
  }
}

/* Every slice is at LVL_GB (moved) when its bit is set in `moved`, else at LVL_LB. */
static void expect_moved(const Fig12 *f, unsigned moved) {
  for (int i = 0; i < NFIG; i++) {
    int want = (moved >> i) & 1u ? LVL_GB : LVL_LB;
    if (f->s[i].level != want)
      fail_msg("%s is at level %d, expected %d", fig_name[i], f->s[i].level, want);
  }
}

static void fig12_equal_sizes(void **state) {
  (void)state;
  Fig12 f;
  /* 100 bytes each, cap 300 = three slices. LONGEST walk:
   *   t0 100, t1 200, t2 300: fit.
   *   t3 out1..out4 = 400 > 300: lifetimes 5, 3, 1, 1 -> out1 moves; 300 fits.
   *   t4 out2, out4, out6 = 300 (out1 gone): fits. t5 out6, out5 = 200; t6 out6, out5, out7 = 300.
   * Only out1 moves. */
  fig12(&f, 100, -1, 0);
  gt_spill_pass(f.s, NFIG, 7, LVL_LB, 1, 300, GT_SPILL_LONGEST, LVL_GB);
  expect_moved(&f, 1u << OUT1);
  /* LARGEST with equal sizes: at t3 every candidate has 100 bytes, so the tie goes to the
   * longer-lived, out1 again; the rest of the walk is the one above. Only out1 moves. */
  fig12(&f, 100, -1, 0);
  gt_spill_pass(f.s, NFIG, 7, LVL_LB, 1, 300, GT_SPILL_LARGEST, LVL_GB);
  expect_moved(&f, 1u << OUT1);
}

static void fig12_largest_spills_a_big_tensor(void **state) {
  (void)state;
  Fig12 f;
  /* out2 made the largest (150), the rest 100, cap 350.
   * LARGEST: t0 100, t1 250, t2 out1+out2+out3 = 350 fits.
   *   t3: 100+150+100+100 = 450 > 350 -> the largest, out2, moves; 300 fits.
   *   t4: out1+out4+out6 = 300; t5: out1+out6+out5 = 300; t6: out6+out5+out7 = 300: fit.
   * Only out2 moves; out1 stays. */
  fig12(&f, 100, OUT2, 150);
  gt_spill_pass(f.s, NFIG, 7, LVL_LB, 1, 350, GT_SPILL_LARGEST, LVL_GB);
  expect_moved(&f, 1u << OUT2);
  /* LONGEST on the same slices: t3 450 > 350 -> lifetimes out1 5, out2 3, out3 1, out4 1 ->
   * out1 moves; 350 fits. t4: out2+out4+out6 = 150+100+100 = 350 fits; t5: 200; t6: 300.
   * Only out1 moves. */
  fig12(&f, 100, OUT2, 150);
  gt_spill_pass(f.s, NFIG, 7, LVL_LB, 1, 350, GT_SPILL_LONGEST, LVL_GB);
  expect_moved(&f, 1u << OUT1);

  /* out6 made the largest (150), the rest 100, cap 300 (three of the 100-byte ones).
   * out6 is not alive at step 3, where the first overflow is, so it cannot be the first victim.
   * LARGEST: t2 300 fits; t3 out1..out4 = 400 > 300, all 100 bytes -> tie -> the longer-lived,
   *   out1 (5) moves; 300 fits.
   *   t4: out2+out4+out6 = 100+100+150 = 350 > 300 -> out6 (150) moves; 200 fits.
   *   t5: out5 = 100; t6: out5+out7 = 200. out1 and out6 move (not out6 alone). */
  fig12(&f, 100, OUT6, 150);
  gt_spill_pass(f.s, NFIG, 7, LVL_LB, 1, 300, GT_SPILL_LARGEST, LVL_GB);
  expect_moved(&f, 1u << OUT1 | 1u << OUT6);
  /* LONGEST on the same slices: t3 -> out1 moves as before.
   *   t4: out2+out4+out6 = 350 > 300 -> lifetimes out2 3, out4 1, out6 2 -> out2 moves; 250.
   *   t5: out6+out5 = 250 fits.
   *   t6: out6+out5+out7 = 150+100+100 = 350 > 300 -> lifetimes 2, 1, 0 -> out6 moves; 200.
   * out1, out2 and out6 move. */
  fig12(&f, 100, OUT6, 150);
  gt_spill_pass(f.s, NFIG, 7, LVL_LB, 1, 300, GT_SPILL_LONGEST, LVL_GB);
  expect_moved(&f, 1u << OUT1 | 1u << OUT2 | 1u << OUT6);
}

static void fig12_capacity_holds_all(void **state) {
  (void)state;
  Fig12 f;
  /* equal sizes: the peak is 4 * 100 = 400 (t3, t4); cap 400 is enough (the pass spills only
   * when the sum exceeds cap), so nothing moves under either rule */
  fig12(&f, 100, -1, 0);
  gt_spill_pass(f.s, NFIG, 7, LVL_LB, 1, 400, GT_SPILL_LONGEST, LVL_GB);
  expect_moved(&f, 0);
  gt_spill_pass(f.s, NFIG, 7, LVL_LB, 1, 400, GT_SPILL_LARGEST, LVL_GB);
  expect_moved(&f, 0);
  /* out6 at 150: t4 = out1+out2+out4+out6 = 450, the new peak; cap 450 holds it */
  fig12(&f, 100, OUT6, 150);
  gt_spill_pass(f.s, NFIG, 7, LVL_LB, 1, 450, GT_SPILL_LONGEST, LVL_GB);
  expect_moved(&f, 0);
  /* ... cap 449 does not: t3 = 400 fits, t4 = 450 > 449 -> LONGEST: out1 (5) moves; 350.
   * t5: out6+out5 = 250; t6: out6+out5+out7 = 350. Only out1. */
  gt_spill_pass(f.s, NFIG, 7, LVL_LB, 1, 449, GT_SPILL_LONGEST, LVL_GB);
  expect_moved(&f, 1u << OUT1);
}

static void other_levels_not_counted(void **state) {
  (void)state;
  Fig12 f;
  /* equal sizes, cap 300, but out2 is already at LVL_GB: the LB pass ignores it.
   * LB alive: t3 out1, out3, out4 = 300; t4 out1, out4, out6 = 300; t5 out1, out6, out5 = 300;
   * t6 out6, out5, out7 = 300; all fit -> nothing else moves and out2 stays at GB */
  fig12(&f, 100, -1, 0);
  f.s[OUT2].level = LVL_GB;
  gt_spill_pass(f.s, NFIG, 7, LVL_LB, 1, 300, GT_SPILL_LONGEST, LVL_GB);
  expect_moved(&f, 1u << OUT2);
  /* a slice already at DDR is not moved up to `down` either */
  fig12(&f, 100, -1, 0);
  f.s[OUT1].level = LVL_DDR;
  gt_spill_pass(f.s, NFIG, 7, LVL_LB, 1, 300, GT_SPILL_LONGEST, LVL_GB);
  /* without out1: t3 out2, out3, out4 = 300, t4 out2, out4, out6 = 300: nothing else moves */
  assert_int_equal(f.s[OUT1].level, LVL_DDR);
  for (int i = OUT2; i < NFIG; i++) assert_int_equal(f.s[i].level, LVL_LB);
}

static void several_victims_at_one_step(void **state) {
  (void)state;
  int64_t lbb[4][1] = {{100}, {100}, {100}, {500}}, lbo[4][1];
  GtSlice s[3];
  /* A [0,3], B [1,3], C [1,2], all 100 bytes, cap 100. t0: A = 100 fits.
   * t1: A+B+C = 300 > 100 -> LONGEST: lifetimes 3, 2, 1 -> A moves; 200 > 100 -> B moves; C
   * alone = 100 fits. */
  s[0] = mk(0, 3, LVL_LB, 100, 0, 1, lbb[0], lbo[0]);
  s[1] = mk(1, 3, LVL_LB, 100, 0, 1, lbb[1], lbo[1]);
  s[2] = mk(1, 2, LVL_LB, 100, 0, 1, lbb[2], lbo[2]);
  gt_spill_pass(s, 3, 4, LVL_LB, 1, 100, GT_SPILL_LONGEST, LVL_DDR);
  assert_int_equal(s[0].level, LVL_DDR);
  assert_int_equal(s[1].level, LVL_DDR);
  assert_int_equal(s[2].level, LVL_LB);
  /* a slice larger than cap on its own moves even when nothing else is alive: D [0,0] of 500
   * bytes, E [1,1] of 100, cap 300. t0: D alone = 500 > 300 -> D moves; t1: E = 100 fits. */
  GtSlice t[2];
  t[0] = mk(0, 0, LVL_LB, 500, 0, 1, lbb[3], lbo[3]);
  t[1] = mk(1, 1, LVL_LB, 100, 0, 1, lbb[0], lbo[0]);
  gt_spill_pass(t, 2, 2, LVL_LB, 1, 300, GT_SPILL_LARGEST, LVL_GB);
  assert_int_equal(t[0].level, LVL_GB);
  assert_int_equal(t[1].level, LVL_LB);
}

/* ---------------- the GB level ---------------- */

static void gb_lifetime_starts_a_step_earlier(void **state) {
  (void)state;
  int64_t lbb[2][1] = {{100}, {120}}, lbo[2][1];
  GtSlice s[2];
  /* A made at 0, last read at 1, 100 bytes; B made at 2, last read at 2, 120 bytes; cap 150.
   * LB lifetimes: A [0,1], B [2,2] -> never alive together -> nothing moves (either rule). */
  for (int rule = 0; rule < 2; rule++) {
    s[0] = mk(0, 1, LVL_LB, 100, 0, 1, lbb[0], lbo[0]);
    s[1] = mk(2, 2, LVL_LB, 120, 0, 1, lbb[1], lbo[1]);
    gt_spill_pass(s, 2, 3, LVL_LB, 1, 150, (GtSpillRule)rule, LVL_GB);
    assert_int_equal(s[0].level, LVL_LB);
    assert_int_equal(s[1].level, LVL_LB);
  }
  /* GB lifetimes: A [-1,1], B [1,2] -> both at step 1: 100+120 = 220 > 150.
   * LONGEST: lifetimes A 1 - 0 = 1, B 2 - 2 = 0 -> A moves down to DDR; B alone 120 fits. */
  s[0] = mk(0, 1, LVL_GB, 100, 0, 1, lbb[0], lbo[0]);
  s[1] = mk(2, 2, LVL_GB, 120, 0, 1, lbb[1], lbo[1]);
  gt_spill_pass(s, 2, 3, LVL_GB, 1, 150, GT_SPILL_LONGEST, LVL_DDR);
  assert_int_equal(s[0].level, LVL_DDR);
  assert_int_equal(s[1].level, LVL_GB);
  /* LARGEST: B (120) > A (100) -> B moves; A alone 100 fits */
  s[0] = mk(0, 1, LVL_GB, 100, 0, 1, lbb[0], lbo[0]);
  s[1] = mk(2, 2, LVL_GB, 120, 0, 1, lbb[1], lbo[1]);
  gt_spill_pass(s, 2, 3, LVL_GB, 1, 150, GT_SPILL_LARGEST, LVL_DDR);
  assert_int_equal(s[0].level, LVL_GB);
  assert_int_equal(s[1].level, LVL_DDR);
  /* GB counts `bytes`, not the per-core bytes: with no cores at all (ncores 0, no arrays) the
   * walk is the same, A [-1,1] and B [1,2] meet at step 1 -> LONGEST moves A */
  s[0] = mk(0, 1, LVL_GB, 100, 0, 0, NULL, NULL);
  s[1] = mk(2, 2, LVL_GB, 120, 0, 0, NULL, NULL);
  gt_spill_pass(s, 2, 3, LVL_GB, 1, 150, GT_SPILL_LONGEST, LVL_DDR);
  assert_int_equal(s[0].level, LVL_DDR);
  assert_int_equal(s[1].level, LVL_GB);
}

/* ---------------- two cores ---------------- */

static void two_cores_only_core1_over(void **state) {
  (void)state;
  int64_t b0[1] = {100}, b1[2] = {50, 100}, b2[1] = {100}, o0[1], o1[2], o2[1];
  GtSlice s[3];
  /* S0 on core 0 only, 100 bytes, [0,5] (the longest-lived of all, lifetime 5);
   * S1 on cores 0 and 1, 50 + 100 bytes, [1,3] (lifetime 2);
   * S2 on core 1 only, 100 bytes, [1,2] (lifetime 1). cap 150 per core.
   * Core 0: S0 over 0..5, S1 (50) over 1..3 -> at most 150: never over.
   * Core 1: S1 (100) over 1..3, S2 (100) over 1..2 -> 200 > 150 at step 1.
   * At step 1 on core 1 the candidates are S1 and S2 only (S0 has no bytes there):
   * LONGEST: S1 (2) > S2 (1) -> S1 moves (off both cores); S2 alone = 100 fits. S0 stays. */
  s[0] = mk(0, 5, LVL_LB, 100, 0, 1, b0, o0);
  s[1] = mk(1, 3, LVL_LB, 150, 0, 2, b1, o1);
  s[2] = mk(1, 2, LVL_LB, 100, 1, 1, b2, o2);
  gt_spill_pass(s, 3, 6, LVL_LB, 2, 150, GT_SPILL_LONGEST, LVL_GB);
  assert_int_equal(s[0].level, LVL_LB);
  assert_int_equal(s[1].level, LVL_GB);
  assert_int_equal(s[2].level, LVL_LB);
  /* S2 made to live longer, [1,4] (lifetime 3 > S1's 2): LONGEST now moves S2, the slice on
   * core 1 alone; S1 (100) alone on core 1 fits, and S0 still stays. */
  s[0] = mk(0, 5, LVL_LB, 100, 0, 1, b0, o0);
  s[1] = mk(1, 3, LVL_LB, 150, 0, 2, b1, o1);
  s[2] = mk(1, 4, LVL_LB, 100, 1, 1, b2, o2);
  gt_spill_pass(s, 3, 6, LVL_LB, 2, 150, GT_SPILL_LONGEST, LVL_GB);
  assert_int_equal(s[0].level, LVL_LB);
  assert_int_equal(s[1].level, LVL_LB);
  assert_int_equal(s[2].level, LVL_GB);
  /* a cap of 149: core 0 now overflows too, at step 1 (S0 100 + S1 50 = 150 > 149), and core 0
   * is walked before core 1 at each step: candidates S0 (5), S1 (2) -> LONGEST moves S0;
   * core 0 then holds S1's 50. Core 1 at step 1: S1 + S2 = 200 > 149 -> S2 (3) moves; 100 fits.
   * S1 alone stays. */
  s[0] = mk(0, 5, LVL_LB, 100, 0, 1, b0, o0);
  s[1] = mk(1, 3, LVL_LB, 150, 0, 2, b1, o1);
  s[2] = mk(1, 4, LVL_LB, 100, 1, 1, b2, o2);
  gt_spill_pass(s, 3, 6, LVL_LB, 2, 149, GT_SPILL_LONGEST, LVL_GB);
  assert_int_equal(s[0].level, LVL_GB);
  assert_int_equal(s[1].level, LVL_LB);
  assert_int_equal(s[2].level, LVL_GB);
}

/* ---------------- the victim's tie-breaking ---------------- */

static void victim_tie_breaking(void **state) {
  (void)state;
  GtSlice s[6];
  /* index: kernel, last (lifetime), bytes
   *   0: 0, 4 (4), 100      3: 1, 5 (4), 300
   *   1: 2, 3 (1), 500      4: 0, 4 (4), 300
   *   2: 1, 2 (1), 500      5: 3, 4 (1), 100 */
  s[0] = mk(0, 4, LVL_LB, 100, 0, 0, NULL, NULL);
  s[1] = mk(2, 3, LVL_LB, 500, 0, 0, NULL, NULL);
  s[2] = mk(1, 2, LVL_LB, 500, 0, 0, NULL, NULL);
  s[3] = mk(1, 5, LVL_LB, 300, 0, 0, NULL, NULL);
  s[4] = mk(0, 4, LVL_LB, 300, 0, 0, NULL, NULL);
  s[5] = mk(3, 4, LVL_LB, 100, 0, 0, NULL, NULL);

  /* LONGEST, lifetimes differ: {0 (4, 100 B), 1 (1, 500 B)} -> 0, though it is smaller */
  int c01[] = {1, 0};
  assert_int_equal(gt_spill_victim(s, c01, 2, GT_SPILL_LONGEST), 0);
  /* LARGEST, sizes differ: the same pair -> 1 (500 > 100), though it lives shorter */
  assert_int_equal(gt_spill_victim(s, c01, 2, GT_SPILL_LARGEST), 1);
  /* LONGEST, equal lifetimes (0, 3, 4 all live 4): the larger -> 3 or 4 (300 > 100); those tie
   * on both -> the lower index, 3, whatever the order of cand */
  int c034[] = {4, 0, 3};
  assert_int_equal(gt_spill_victim(s, c034, 3, GT_SPILL_LONGEST), 3);
  int c430[] = {0, 3, 4};
  assert_int_equal(gt_spill_victim(s, c430, 3, GT_SPILL_LONGEST), 3);
  /* LARGEST, equal sizes (1 and 2: 500 B, lifetime 1 each) -> lower index 1 */
  int c21[] = {2, 1};
  assert_int_equal(gt_spill_victim(s, c21, 2, GT_SPILL_LARGEST), 1);
  /* LARGEST, equal sizes (3 and 4: 300 B), equal lifetimes (4) -> 3; with 0 (100 B) added the
   * answer is the same (100 < 300) */
  assert_int_equal(gt_spill_victim(s, c034, 3, GT_SPILL_LARGEST), 3);
  /* LARGEST, equal sizes, different lifetimes: 0 (100 B, 4) and 5 (100 B, 1) -> 0, the
   * longer-lived, even listed second */
  int c50[] = {5, 0};
  assert_int_equal(gt_spill_victim(s, c50, 2, GT_SPILL_LARGEST), 0);
  /* LONGEST, equal lifetimes and sizes with the higher index first: 2 and 1 (both 1, 500) -> 1 */
  assert_int_equal(gt_spill_victim(s, c21, 2, GT_SPILL_LONGEST), 1);
  /* LONGEST, equal lifetimes, different sizes: 5 (1, 100) and 2 (1, 500) -> 2 */
  int c52[] = {5, 2};
  assert_int_equal(gt_spill_victim(s, c52, 2, GT_SPILL_LONGEST), 2);
  /* all six. LONGEST: the longest lifetime is 4 (0, 3, 4); of those the largest 300 (3, 4);
   * lower index -> 3. LARGEST: the largest 500 (1, 2); lifetimes both 1; lower index -> 1. */
  int call[] = {5, 4, 3, 2, 1, 0};
  assert_int_equal(gt_spill_victim(s, call, 6, GT_SPILL_LONGEST), 3);
  assert_int_equal(gt_spill_victim(s, call, 6, GT_SPILL_LARGEST), 1);
  /* only the listed slices compete: {5, 2} under LARGEST -> 2 (500 > 100), though 1 (also 500,
   * lower index) is not listed */
  assert_int_equal(gt_spill_victim(s, c52, 2, GT_SPILL_LARGEST), 2);
  /* one candidate: itself */
  int c5[] = {5};
  assert_int_equal(gt_spill_victim(s, c5, 1, GT_SPILL_LONGEST), 5);
  assert_int_equal(gt_spill_victim(s, c5, 1, GT_SPILL_LARGEST), 5);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(fig12_equal_sizes),
      cmocka_unit_test(fig12_largest_spills_a_big_tensor),
      cmocka_unit_test(fig12_capacity_holds_all),
      cmocka_unit_test(other_levels_not_counted),
      cmocka_unit_test(several_victims_at_one_step),
      cmocka_unit_test(gb_lifetime_starts_a_step_earlier),
      cmocka_unit_test(two_cores_only_core1_over),
      cmocka_unit_test(victim_tie_breaking),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
