/* test_ivl.c — the interval allocator (sched/ivl.h): blocks with known lifetimes [t0, t1]
 * (inclusive steps) placed in [lo, cap), blocks alive at a common step never sharing bytes.
 * Hand-derived cases: bottom-up first fit into a gap between live blocks, blocks disjoint in
 * time reusing the same bytes, top-down placement from the top and into the highest gap,
 * rounding of sizes to `align`, -1 when nothing fits (and nothing placed), ivl_remove then a
 * new allocation reusing the space, ivl_lowest at several steps, and lo > 0. Program order
 * (ivl_take, ivl_remove): takes without a free in between land where a bump pointer would put
 * them, freed bytes are reused lowest gap first (the emitter's DDR iterations and LB tiles),
 * and a taken block is alive at every step next to blocks with lifetimes. ivl_peak: the
 * high-water mark, which removals do not lower and refusals do not raise. The oracle of every
 * expected offset is the arithmetic in the comment next to it ("[a,b)" is a block's byte range,
 * "alive" the blocks whose step ranges meet the new block's).
 * Then randomized property tests (fixed seed, both policies, a few thousand allocations and
 * some removals; and program order, takes and removes): blocks overlapping in time have
 * disjoint bytes, every block lies in [lo, cap) at a multiple of align with its size rounded up
 * to align, a brute force over every aligned offset confirms the answer is the lowest
 * (bottom-up) or highest (top-down) feasible one and that -1 comes only when no aligned offset
 * is feasible, and ivl_peak is the highest end ever placed; takes with no removal follow a
 * bump pointer exactly.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ivl.h"

/* ---------------- hand-derived cases ---------------- */

static void bottom_up_first_fit_in_gap(void **state) {
  (void)state;
  GsIvl v;
  ivl_init(&v, 0, 256, 16, IVL_BOTTOM_UP);
  /* empty buffer: the lowest offset is lo = 0; A = [0,32) over steps 0..9 */
  assert_int_equal(ivl_alloc(&v, 32, 0, 9, 1), 0);
  /* B alive at steps 0..2 meets A: first offset past A is 32; B = [32,80) */
  assert_int_equal(ivl_alloc(&v, 48, 0, 2, 2), 32);
  /* C over 0..9 meets A and B: past B is 80; C = [80,112) */
  assert_int_equal(ivl_alloc(&v, 32, 0, 9, 3), 80);
  /* Over steps 5..9 B is dead, so A = [0,32) and C = [80,112) leave the gap [32,80) (48 bytes).
   * D (16 bytes) over 5..9: 0 hits A, 32 is free -> 32 (the lowest, though the gap is larger
   * than D and the space above C is larger still). D = [32,48) */
  assert_int_equal(ivl_alloc(&v, 16, 5, 9, 4), 32);
  /* E (48) over 5..9: alive A, D, C. What is left of the gap is [48,80) = 32 bytes < 48, so the
   * next candidate is the end of C: 112. E = [112,160) */
  assert_int_equal(ivl_alloc(&v, 48, 5, 9, 5), 112);
  /* F (32) over 5..9: [48,80) is exactly 32 bytes -> 48 (first fit from the bottom) */
  assert_int_equal(ivl_alloc(&v, 32, 5, 9, 6), 48);
  /* G (16) over steps 2..5 meets every block: A (0..9), B (0..2, at step 2), C, and D, E, F
   * (5..9, at step 5); together they cover [0,160) without a hole, so G goes to 160 */
  assert_int_equal(ivl_alloc(&v, 16, 2, 5, 7), 160);
  assert_int_equal(v.n, 7);
  ivl_free(&v);
}

static void disjoint_lifetimes_share_bytes(void **state) {
  (void)state;
  GsIvl v;
  ivl_init(&v, 0, 128, 16, IVL_BOTTOM_UP);
  /* A = [0,64) over 0..3 */
  assert_int_equal(ivl_alloc(&v, 64, 0, 3, 1), 0);
  /* B over 4..7: A's steps 0..3 end before 4, nothing alive -> the same bytes, 0 */
  assert_int_equal(ivl_alloc(&v, 64, 4, 7, 2), 0);
  /* C over 3..4 meets A (step 3) and B (step 4), both at [0,64) -> 64 */
  assert_int_equal(ivl_alloc(&v, 64, 3, 4, 3), 64);
  /* D over step 8 only: A, B, C all ended -> 0 */
  assert_int_equal(ivl_alloc(&v, 64, 8, 8, 4), 0);
  /* E over 7..8: the ends are inclusive, so it meets B (step 7) and D (step 8), both at
   * [0,64); C (3..4) is dead -> 64 */
  assert_int_equal(ivl_alloc(&v, 64, 7, 8, 5), 64);
  /* F over 4..7 meets B [0,64), C [64,128) (step 4) and E [64,128) (step 7): the 128-byte
   * buffer is full over those steps -> -1 */
  assert_int_equal(ivl_alloc(&v, 16, 4, 7, 6), -1);
  ivl_free(&v);
}

static void top_down_from_top_and_highest_gap(void **state) {
  (void)state;
  GsIvl v;
  ivl_init(&v, 0, 256, 16, IVL_TOP_DOWN);
  /* empty: the highest offset is cap - 32 = 224; A = [224,256) over 0..9 */
  assert_int_equal(ivl_alloc(&v, 32, 0, 9, 1), 224);
  /* B (48) over 0..2: cap - 48 = 208 overlaps A; A.off - 48 = 176 fits -> B = [176,224) */
  assert_int_equal(ivl_alloc(&v, 48, 0, 2, 2), 176);
  /* C (32) over 0..9 meets A and B: 224 hits A, 224 - 32 = 192 hits B, 176 - 32 = 144 fits ->
   * C = [144,176) */
  assert_int_equal(ivl_alloc(&v, 32, 0, 9, 3), 144);
  /* Over steps 5..9 B is dead: alive A [224,256), C [144,176), gap [176,224).
   * D (16): candidates 240 (hits A), 224 - 16 = 208 (free), 144 - 16 = 128 (free); the highest
   * is 208, the top of the gap (bottom-up would have taken 176). D = [208,224) */
  assert_int_equal(ivl_alloc(&v, 16, 5, 9, 4), 208);
  /* E (48) over 5..9, alive A, C, D: 240 hits A; 224-48 = 176 -> [176,224) hits D;
   * 144-48 = 96 -> [96,144) free; 208-48 = 160 -> [160,208) hits C. Highest: 96. */
  assert_int_equal(ivl_alloc(&v, 48, 5, 9, 5), 96);
  /* F (32) over 5..9, alive A, C, D, E [96,144): 240 hits A; 224-32 = 192 -> [192,224) hits D;
   * 144-32 = 112 hits E; 208-32 = 176 -> [176,208) free; 96-32 = 64 free. Highest: 176. */
  assert_int_equal(ivl_alloc(&v, 32, 5, 9, 6), 176);
  ivl_free(&v);
}

static void sizes_rounded_to_align(void **state) {
  (void)state;
  GsIvl v;
  ivl_init(&v, 0, 1024, 64, IVL_BOTTOM_UP);
  /* 1 byte -> ceil(1/64)*64 = 64: A = [0,64) */
  assert_int_equal(ivl_alloc(&v, 1, 0, 0, 1), 0);
  assert_int_equal(v.b[0].bytes, 64);
  /* 65 bytes -> 128, placed past A: B = [64,192) */
  assert_int_equal(ivl_alloc(&v, 65, 0, 0, 2), 64);
  assert_int_equal(v.b[1].bytes, 128);
  /* 64 bytes stay 64: past B, 192 */
  assert_int_equal(ivl_alloc(&v, 64, 0, 0, 3), 192);
  assert_int_equal(v.b[2].bytes, 64);
  ivl_free(&v);

  /* exact fill: four 50-byte blocks are 64 bytes each in a 256-byte buffer -> 0, 64, 128, 192,
   * and a fifth (64 more bytes) does not fit although 4*50 = 200 < 256 */
  ivl_init(&v, 0, 256, 64, IVL_BOTTOM_UP);
  for (int i = 0; i < 4; i++) assert_int_equal(ivl_alloc(&v, 50, 0, 0, i), 64 * i);
  assert_int_equal(ivl_alloc(&v, 50, 0, 0, 4), -1);
  ivl_free(&v);

  /* top-down with a cap that is not a multiple of align: 100 bytes -> 128,
   * (1000 - 128) = 872 rounded down to a multiple of 64 = 13*64 = 832; A = [832,960) */
  ivl_init(&v, 0, 1000, 64, IVL_TOP_DOWN);
  assert_int_equal(ivl_alloc(&v, 100, 0, 0, 1), 832);
  /* 10 bytes -> 64: (1000-64) = 936 -> 14*64 = 896, [896,960) hits A; 832 - 64 = 768 free */
  assert_int_equal(ivl_alloc(&v, 10, 0, 0, 2), 768);
  ivl_free(&v);
}

static void full_returns_minus_one_and_places_nothing(void **state) {
  (void)state;
  GsIvl v;
  ivl_init(&v, 0, 256, 16, IVL_BOTTOM_UP);
  /* A = [0,128), B = [128,224) over 0..5; [224,256) = 32 bytes left over those steps */
  assert_int_equal(ivl_alloc(&v, 128, 0, 5, 1), 0);
  assert_int_equal(ivl_alloc(&v, 96, 0, 5, 2), 128);
  /* 48 > 32 over 3..4 -> -1, and nothing is recorded */
  assert_int_equal(ivl_alloc(&v, 48, 3, 4, 3), -1);
  assert_int_equal(v.n, 2);
  /* larger than the whole buffer, even at a step where it is empty -> -1 */
  assert_int_equal(ivl_alloc(&v, 257, 9, 9, 4), -1);
  assert_int_equal(v.n, 2);
  /* a smaller one still fits in the 32 bytes: 224 (so the refused 48 bytes occupy nothing) */
  assert_int_equal(ivl_alloc(&v, 32, 3, 4, 5), 224);
  assert_int_equal(v.n, 3);
  /* now full over step 3: even 1 byte (-> 16) is refused */
  assert_int_equal(ivl_alloc(&v, 1, 3, 3, 6), -1);
  assert_int_equal(v.n, 3);
  /* at step 6 every block is dead: 0 */
  assert_int_equal(ivl_alloc(&v, 1, 6, 6, 7), 0);
  ivl_free(&v);

  /* top-down: A fills [0,256) over 0..1; a 16-byte block over step 1 has no room -> -1 */
  ivl_init(&v, 0, 256, 16, IVL_TOP_DOWN);
  assert_int_equal(ivl_alloc(&v, 256, 0, 1, 1), 0);
  assert_int_equal(ivl_alloc(&v, 16, 1, 1, 2), -1);
  assert_int_equal(v.n, 1);
  /* ... and over step 2 the highest offset is 256 - 16 = 240 */
  assert_int_equal(ivl_alloc(&v, 16, 2, 2, 3), 240);
  ivl_free(&v);
}

static void remove_then_realloc(void **state) {
  (void)state;
  GsIvl v;
  ivl_init(&v, 0, 256, 16, IVL_BOTTOM_UP);
  /* A = [0,64), B = [64,128), C = [128,192), all over 0..9 */
  assert_int_equal(ivl_alloc(&v, 64, 0, 9, 10), 0);
  assert_int_equal(ivl_alloc(&v, 64, 0, 9, 11), 64);
  assert_int_equal(ivl_alloc(&v, 64, 0, 9, 12), 128);
  /* removing B reopens [64,128): D goes there (the lowest hole) */
  assert_int_equal(ivl_remove(&v, 11), 0);
  assert_int_equal(v.n, 2);
  assert_int_equal(ivl_alloc(&v, 64, 0, 9, 13), 64);
  /* B is gone: removing it again, or an id never used, is -1 and changes nothing */
  assert_int_equal(ivl_remove(&v, 11), -1);
  assert_int_equal(ivl_remove(&v, 99), -1);
  assert_int_equal(v.n, 3);
  /* E = [192,256) fills the buffer */
  assert_int_equal(ivl_alloc(&v, 64, 0, 9, 14), 192);
  assert_int_equal(ivl_alloc(&v, 16, 5, 5, 15), -1);
  /* remove A (id 10) and C (id 12): left D [64,128), E [192,256); F -> 0, G -> 128 */
  assert_int_equal(ivl_remove(&v, 10), 0);
  assert_int_equal(ivl_remove(&v, 12), 0);
  assert_int_equal(ivl_alloc(&v, 64, 0, 9, 16), 0);
  assert_int_equal(ivl_alloc(&v, 64, 0, 9, 17), 128);
  /* removed blocks no longer count for ivl_lowest either: at step 0 the lowest is F at 0 */
  assert_int_equal(ivl_lowest(&v, 0), 0);
  ivl_free(&v);

  /* top-down: A = [192,256), B = [128,192); remove A, C takes A's place at the top (192) */
  ivl_init(&v, 0, 256, 16, IVL_TOP_DOWN);
  assert_int_equal(ivl_alloc(&v, 64, 0, 3, 1), 192);
  assert_int_equal(ivl_alloc(&v, 64, 0, 3, 2), 128);
  assert_int_equal(ivl_remove(&v, 1), 0);
  assert_int_equal(ivl_alloc(&v, 64, 0, 3, 3), 192);
  ivl_free(&v);
}

static void lowest_at_steps(void **state) {
  (void)state;
  GsIvl v;
  ivl_init(&v, 0, 256, 16, IVL_TOP_DOWN);
  /* no block: cap */
  assert_int_equal(ivl_lowest(&v, 0), 256);
  /* A (32) over 0..3 -> 256-32 = 224 */
  assert_int_equal(ivl_alloc(&v, 32, 0, 3, 1), 224);
  /* B (32) over 2..5 meets A (steps 2, 3): 224 hits A, 224-32 = 192 free -> 192 */
  assert_int_equal(ivl_alloc(&v, 32, 2, 5, 2), 192);
  /* C (64) over 5..6 meets B (step 5) only: 256-64 = 192 -> [192,256) hits B [192,224);
   * 192-64 = 128 free -> 128 */
  assert_int_equal(ivl_alloc(&v, 64, 5, 6, 3), 128);
  /* alive at t: 0, 1 -> A (224); 2, 3 -> A, B: min(224,192) = 192; 4 -> B (192);
   * 5 -> B, C: min(192,128) = 128; 6 -> C (128); 7 and -1 -> none: cap 256 */
  assert_int_equal(ivl_lowest(&v, -1), 256);
  assert_int_equal(ivl_lowest(&v, 0), 224);
  assert_int_equal(ivl_lowest(&v, 1), 224);
  assert_int_equal(ivl_lowest(&v, 2), 192);
  assert_int_equal(ivl_lowest(&v, 3), 192);
  assert_int_equal(ivl_lowest(&v, 4), 192);
  assert_int_equal(ivl_lowest(&v, 5), 128);
  assert_int_equal(ivl_lowest(&v, 6), 128);
  assert_int_equal(ivl_lowest(&v, 7), 256);
  ivl_free(&v);
}

static void lo_respected(void **state) {
  (void)state;
  GsIvl v;
  /* bottom-up in [64,256): the first block starts at lo = 64, not 0 */
  ivl_init(&v, 64, 256, 16, IVL_BOTTOM_UP);
  assert_int_equal(ivl_lowest(&v, 0), 256);
  assert_int_equal(ivl_alloc(&v, 32, 0, 0, 1), 64);   /* [64,96) */
  assert_int_equal(ivl_alloc(&v, 128, 0, 0, 2), 96);  /* [96,224) */
  assert_int_equal(ivl_alloc(&v, 32, 0, 0, 3), 224);  /* [224,256) */
  /* 256 - 64 = 192 bytes, all used at step 0; although [0,64) is unused it is below lo */
  assert_int_equal(ivl_alloc(&v, 16, 0, 0, 4), -1);
  assert_int_equal(ivl_lowest(&v, 0), 64);
  ivl_free(&v);

  /* top-down in [64,256): A (96) -> 256-96 = 160; B (96) -> 160-96 = 64 = lo;
   * C (16) would go to 64-16 = 48 < lo -> -1 */
  ivl_init(&v, 64, 256, 16, IVL_TOP_DOWN);
  assert_int_equal(ivl_alloc(&v, 96, 0, 0, 1), 160);
  assert_int_equal(ivl_alloc(&v, 96, 0, 0, 2), 64);
  assert_int_equal(ivl_alloc(&v, 16, 0, 0, 3), -1);
  /* a block that needs more than cap - lo = 192 bytes never fits */
  assert_int_equal(ivl_alloc(&v, 200, 5, 5, 4), -1);
  ivl_free(&v);

  /* align 1, lo = 100, cap = 300 (nothing to round): bottom-up 50 -> 100, then 150;
   * top-down 50 -> 300-50 = 250, then 200 */
  ivl_init(&v, 100, 300, 1, IVL_BOTTOM_UP);
  assert_int_equal(ivl_alloc(&v, 50, 0, 0, 1), 100);
  assert_int_equal(ivl_alloc(&v, 50, 0, 0, 2), 150);
  ivl_free(&v);
  ivl_init(&v, 100, 300, 1, IVL_TOP_DOWN);
  assert_int_equal(ivl_alloc(&v, 50, 0, 0, 1), 250);
  assert_int_equal(ivl_alloc(&v, 50, 0, 0, 2), 200);
  /* 200 - 100 = 100 bytes left: 101 does not fit, 100 does, at lo */
  assert_int_equal(ivl_alloc(&v, 101, 0, 0, 3), -1);
  assert_int_equal(ivl_alloc(&v, 100, 0, 0, 4), 100);
  ivl_free(&v);
}

static void take_without_free_is_a_bump(void **state) {
  (void)state;
  GsIvl v;
  /* the emitter's DDR: unbounded, 256-byte alignment; a bump pointer would advance by each size
   * rounded up to 256 */
  ivl_init(&v, 0, INT64_MAX, 256, IVL_BOTTOM_UP);
  assert_int_equal(ivl_peak(&v), 0);               /* nothing yet: lo */
  /* 1000 -> 1024 bytes at 0; bump 0 + 1024 = 1024 */
  assert_int_equal(ivl_take(&v, 1000, -1), 0);
  assert_int_equal(ivl_peak(&v), 1024);
  /* 256 stays 256 at 1024; bump 1024 + 256 = 1280 */
  assert_int_equal(ivl_take(&v, 256, -1), 1024);
  assert_int_equal(ivl_peak(&v), 1280);
  /* 1 -> 256 at 1280; bump 1536 */
  assert_int_equal(ivl_take(&v, 1, -1), 1280);
  /* 513 -> 768 at 1536; bump 2304 */
  assert_int_equal(ivl_take(&v, 513, 7), 1536);
  assert_int_equal(ivl_peak(&v), 2304);
  /* 0 bytes count as 1 -> 256 at 2304 (a bump adding 0 would not move) */
  assert_int_equal(ivl_take(&v, 0, 8), 2304);
  assert_int_equal(ivl_peak(&v), 2560);
  assert_int_equal(v.n, 5);
  ivl_free(&v);

  /* a core's tile regions: 64-byte alignment in a budget of 512; 100 -> 128 at 0, 64 at 128,
   * 200 -> 256 at 192 (ends at 448); 65 -> 128 would end at 576 > 512 -> -1, where the bump
   * pointer asserted */
  ivl_init(&v, 0, 512, 64, IVL_BOTTOM_UP);
  assert_int_equal(ivl_take(&v, 100, 1), 0);
  assert_int_equal(ivl_take(&v, 64, 2), 128);
  assert_int_equal(ivl_take(&v, 200, 3), 192);
  assert_int_equal(ivl_take(&v, 65, 4), -1);
  assert_int_equal(v.n, 3);
  /* 64 bytes still fit: [448,512) */
  assert_int_equal(ivl_take(&v, 64, 5), 448);
  assert_int_equal(ivl_peak(&v), 512);
  ivl_free(&v);
}

static void take_remove_in_program_order(void **state) {
  (void)state;
  GsIvl v;
  /* DDR over two iterations: W = [0,512) for the whole run (id -1); iteration 0 takes
   * A (300 -> 512) at 512 and B (100 -> 256) at 1024 */
  ivl_init(&v, 0, INT64_MAX, 256, IVL_BOTTOM_UP);
  assert_int_equal(ivl_take(&v, 512, -1), 0);
  assert_int_equal(ivl_take(&v, 300, 1), 512);
  assert_int_equal(ivl_take(&v, 100, 2), 1024);
  assert_int_equal(ivl_peak(&v), 1280);
  /* its end frees A and B; iteration 1 takes the same sizes: only W is alive, so A goes to the
   * end of W (512) and B past A (1024), as in iteration 0; the peak stays 1280 */
  assert_int_equal(ivl_remove(&v, 1), 0);
  assert_int_equal(ivl_remove(&v, 2), 0);
  assert_int_equal(v.n, 1);
  assert_int_equal(ivl_peak(&v), 1280);
  assert_int_equal(ivl_take(&v, 300, 1), 512);
  assert_int_equal(ivl_take(&v, 100, 2), 1024);
  assert_int_equal(ivl_peak(&v), 1280);
  /* a larger iteration: C (1000 -> 1024) past B, at 1280; the peak rises to 2304 */
  assert_int_equal(ivl_take(&v, 1000, 3), 1280);
  assert_int_equal(ivl_peak(&v), 2304);
  ivl_free(&v);

  /* a freed block in the middle: A = [0,128), B = [128,256), C = [256,384) (align 64);
   * free B; D (64) takes the lowest gap, 128; E (128) does not fit in [192,256) (64 bytes)
   * and goes past C to 384; F (64) fills [192,256) */
  ivl_init(&v, 0, 1024, 64, IVL_BOTTOM_UP);
  assert_int_equal(ivl_take(&v, 128, 1), 0);
  assert_int_equal(ivl_take(&v, 128, 2), 128);
  assert_int_equal(ivl_take(&v, 128, 3), 256);
  assert_int_equal(ivl_remove(&v, 2), 0);
  assert_int_equal(ivl_take(&v, 64, 4), 128);
  assert_int_equal(ivl_take(&v, 128, 5), 384);
  assert_int_equal(ivl_take(&v, 64, 6), 192);
  /* the blocks are kept in placement order: A, C, D, E, F */
  assert_int_equal(v.n, 5);
  assert_int_equal(v.b[0].id, 1);
  assert_int_equal(v.b[1].id, 3);
  assert_int_equal(v.b[4].id, 6);
  assert_int_equal(ivl_peak(&v), 512);
  ivl_free(&v);

  /* taken blocks next to blocks with lifetimes: X = [0,64) over steps 5..6; T taken is alive
   * at every step, so it meets X -> 64; Y over step 9 meets T but not X -> 0; Z over step 6
   * meets X and T -> past T, 128. ivl_lowest at step 100: only T is alive there -> 64 */
  ivl_init(&v, 0, 1024, 64, IVL_BOTTOM_UP);
  assert_int_equal(ivl_alloc(&v, 64, 5, 6, 1), 0);
  assert_int_equal(ivl_take(&v, 64, 2), 64);
  assert_int_equal(ivl_alloc(&v, 64, 9, 9, 3), 0);
  assert_int_equal(ivl_alloc(&v, 64, 6, 6, 4), 128);
  assert_int_equal(ivl_lowest(&v, 100), 64);
  /* freeing T frees its bytes at every step: W over step 6 (alive X [0,64), Z [128,192))
   * -> 64 */
  assert_int_equal(ivl_remove(&v, 2), 0);
  assert_int_equal(ivl_alloc(&v, 64, 6, 6, 5), 64);
  ivl_free(&v);

  /* top-down takes: from the top of [0,1000) (align 16): 100 -> 112 at (1000-112) = 888
   * rounded down to 880; then 880 - 112 = 768 */
  ivl_init(&v, 0, 1000, 16, IVL_TOP_DOWN);
  assert_int_equal(ivl_take(&v, 100, 1), 880);
  assert_int_equal(ivl_take(&v, 100, 2), 768);
  assert_int_equal(ivl_peak(&v), 992);
  ivl_free(&v);
}

static void peak_is_high_water_mark(void **state) {
  (void)state;
  GsIvl v;
  ivl_init(&v, 128, 1024, 64, IVL_BOTTOM_UP);
  /* no block: lo */
  assert_int_equal(ivl_peak(&v), 128);
  /* A (100 -> 128) over 0..1 at lo: [128,256) */
  assert_int_equal(ivl_alloc(&v, 100, 0, 1, 1), 128);
  assert_int_equal(ivl_peak(&v), 256);
  /* B (128) over 2..3 is disjoint from A in time: the same bytes, the peak stays 256 */
  assert_int_equal(ivl_alloc(&v, 128, 2, 3, 2), 128);
  assert_int_equal(ivl_peak(&v), 256);
  /* C (200 -> 256) over 1..2 meets A and B, both [128,256): [256,512), peak 512 */
  assert_int_equal(ivl_alloc(&v, 200, 1, 2, 3), 256);
  assert_int_equal(ivl_peak(&v), 512);
  /* removing C does not lower it */
  assert_int_equal(ivl_remove(&v, 3), 0);
  assert_int_equal(ivl_peak(&v), 512);
  /* a refused block does not raise it: 1024 - 128 = 896 < 1000 */
  assert_int_equal(ivl_alloc(&v, 1000, 7, 7, 4), -1);
  assert_int_equal(ivl_peak(&v), 512);
  /* ivl_place raises it: [640,704) */
  ivl_place(&v, 640, 64, 0, 0, 5);
  assert_int_equal(ivl_peak(&v), 704);
  /* a new start forgets it */
  ivl_free(&v);
  ivl_init(&v, 128, 1024, 64, IVL_BOTTOM_UP);
  assert_int_equal(ivl_peak(&v), 128);
  ivl_free(&v);

  /* top-down: the mark is the highest end, set by the first block: (1000 - 112) rounded down
   * to 16 is 880, [880,992) */
  ivl_init(&v, 0, 1000, 16, IVL_TOP_DOWN);
  assert_int_equal(ivl_alloc(&v, 100, 0, 0, 1), 880);
  assert_int_equal(ivl_alloc(&v, 100, 0, 0, 2), 768);
  assert_int_equal(ivl_peak(&v), 992);
  ivl_free(&v);
}

/* ---------------- randomized property tests ---------------- */

static uint64_t rng_state;
static uint32_t rnd(void) { /* xorshift64*, fixed seed per run */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (uint32_t)((rng_state * 2685821657736338717ULL) >> 32);
}
static int64_t rnd_in(int64_t lo, int64_t hi) { /* uniform-ish in [lo, hi] */
  return lo + (int64_t)(rnd() % (uint32_t)(hi - lo + 1));
}

typedef struct {
  int64_t off, bytes;
  int t0, t1, id;
} Ref;

static int time_overlap(int a0, int a1, int b0, int b1) { return a0 <= b1 && b0 <= a1; }
static int byte_overlap(int64_t a, int64_t an, int64_t b, int64_t bn) { return a < b + bn && b < a + an; }

/* Is [off, off+bytes) free of every block in ref[0..n) alive at some step of [t0, t1]? */
static int feasible(const Ref *ref, int n, int64_t off, int64_t bytes, int t0, int t1) {
  for (int i = 0; i < n; i++)
    if (time_overlap(ref[i].t0, ref[i].t1, t0, t1) && byte_overlap(ref[i].off, ref[i].bytes, off, bytes))
      return 0;
  return 1;
}

/* lo is a multiple of align in every configuration (with an unaligned lo, bottom-up places a
 * first block at lo itself, which is then not a multiple of align); cap need not be one. */
static void run_random(GsIvlPolicy pol, int64_t lo, int64_t cap, int64_t align, int nalloc) {
  GsIvl v;
  ivl_init(&v, lo, cap, align, pol);
  Ref *ref = calloc((size_t)nalloc, sizeof(Ref));
  assert_non_null(ref);
  int n = 0, placed = 0, refused = 0;
  int64_t mark = lo; /* the highest end placed */
  const int T = 48; /* steps */
  for (int k = 0; k < nalloc; k++) {
    /* now and then remove a random live block */
    if (n > 0 && rnd() % 8 == 0) {
      int j = (int)(rnd() % (uint32_t)n);
      assert_int_equal(ivl_remove(&v, ref[j].id), 0);
      ref[j] = ref[--n];
      assert_int_equal(v.n, n);
    }
    int64_t want = rnd() % 16 == 0 ? rnd_in(1, cap) : rnd_in(1, (cap - lo) / 6);
    int t0 = (int)rnd_in(0, T - 1), t1 = t0 + (int)rnd_in(0, 8);
    int64_t r = (want + align - 1) / align * align; /* the size rounded up to align */
    int64_t off = ivl_alloc(&v, want, t0, t1, k);
    /* brute force over every aligned offset: the first (bottom-up) or last (top-down)
     * feasible one; lo is aligned, so the aligned offsets in range are lo, lo+align, ... */
    int64_t expect = -1;
    for (int64_t x = lo; x + r <= cap; x += align)
      if (feasible(ref, n, x, r, t0, t1)) {
        expect = x;
        if (pol == IVL_BOTTOM_UP) break;
      }
    if (off != expect)
      fail_msg("alloc %d (%s, lo %lld cap %lld align %lld): %lld bytes over [%d,%d] -> %lld, brute force %lld",
               k, pol == IVL_BOTTOM_UP ? "bottom-up" : "top-down", (long long)lo, (long long)cap,
               (long long)align, (long long)want, t0, t1, (long long)off, (long long)expect);
    if (off < 0) {
      assert_int_equal(v.n, n); /* nothing placed */
      refused++;
      continue;
    }
    assert_true(off >= lo && off + r <= cap);
    assert_int_equal(off % align, 0);
    assert_int_equal(v.n, n + 1);
    assert_int_equal(v.b[v.n - 1].off, off);
    assert_int_equal(v.b[v.n - 1].bytes, r);
    ref[n++] = (Ref){off, r, t0, t1, k};
    placed++;
    if (off + r > mark) mark = off + r;
    assert_int_equal(ivl_peak(&v), mark);
  }
  /* final pairwise check over what the allocator holds (not over the mirror) */
  assert_int_equal(v.n, n);
  for (int i = 0; i < v.n; i++) {
    const GsIvlBlock *a = &v.b[i];
    assert_true(a->off >= lo && a->off + a->bytes <= cap);
    assert_int_equal(a->off % align, 0);
    assert_int_equal(a->bytes % align, 0);
    for (int j = i + 1; j < v.n; j++) {
      const GsIvlBlock *b = &v.b[j];
      if (time_overlap(a->t0, a->t1, b->t0, b->t1) && byte_overlap(a->off, a->bytes, b->off, b->bytes))
        fail_msg("blocks %d [%lld,+%lld) steps %d..%d and %d [%lld,+%lld) steps %d..%d overlap", a->id,
                 (long long)a->off, (long long)a->bytes, a->t0, a->t1, b->id, (long long)b->off,
                 (long long)b->bytes, b->t0, b->t1);
    }
  }
  /* ivl_lowest against the mirror at every step */
  for (int t = -1; t <= T + 9; t++) {
    int64_t low = cap;
    for (int i = 0; i < n; i++)
      if (ref[i].t0 <= t && t <= ref[i].t1 && ref[i].off < low) low = ref[i].off;
    assert_int_equal(ivl_lowest(&v, t), low);
  }
  /* the test would prove little if almost everything were refused or accepted */
  assert_true(placed > nalloc / 5 && refused > 0);
  free(ref);
  ivl_free(&v);
}

static void random_property(void **state) {
  (void)state;
  rng_state = 0x9e3779b97f4a7c15ULL;
  static const struct {
    int64_t lo, cap, align;
  } cfg[] = {
      {0, 4096, 64},
      {0, 1000, 16}, /* cap not a multiple of align */
      {256, 2048, 32},
      {0, 300, 1},
      {96, 1003, 8},
  };
  for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
    run_random(IVL_BOTTOM_UP, cfg[c].lo, cfg[c].cap, cfg[c].align, 800);
    run_random(IVL_TOP_DOWN, cfg[c].lo, cfg[c].cap, cfg[c].align, 800);
  }
}

/* Program order at random, bottom-up: first 200 takes without a removal, each where a bump
 * pointer puts it; then takes and removals (half the steps each) checked against a brute force
 * over every aligned offset (a taken block is alive at every step), and ivl_peak against the
 * highest end placed. */
static void random_program_order(void **state) {
  (void)state;
  rng_state = 0x2545f4914f6cdd1dULL;
  GsIvl v;
  ivl_init(&v, 0, INT64_MAX, 256, IVL_BOTTOM_UP);
  int64_t bump = 0;
  for (int k = 0; k < 200; k++) {
    int64_t want = rnd_in(1, 100000);
    assert_int_equal(ivl_take(&v, want, k), bump);
    bump += (want + 255) / 256 * 256;
    assert_int_equal(ivl_peak(&v), bump);
  }
  ivl_free(&v);

  const int64_t lo = 64, cap = 4096, align = 64;
  const int nop = 2000;
  ivl_init(&v, lo, cap, align, IVL_BOTTOM_UP);
  Ref *ref = calloc((size_t)nop, sizeof(Ref));
  assert_non_null(ref);
  int n = 0, placed = 0, refused = 0;
  int64_t mark = lo;
  for (int k = 0; k < nop; k++) {
    if (n > 0 && rnd() % 2 == 0) {
      int j = (int)(rnd() % (uint32_t)n);
      assert_int_equal(ivl_remove(&v, ref[j].id), 0);
      ref[j] = ref[--n];
      continue;
    }
    int64_t want = rnd_in(1, (cap - lo) / 4);
    int64_t r = (want + align - 1) / align * align;
    int64_t off = ivl_take(&v, want, k), expect = -1;
    for (int64_t x = lo; x + r <= cap && expect < 0; x += align)
      if (feasible(ref, n, x, r, 0, 0)) expect = x;
    if (off != expect)
      fail_msg("take %d: %lld bytes -> %lld, brute force %lld", k, (long long)want, (long long)off,
               (long long)expect);
    if (off < 0) {
      refused++;
      continue;
    }
    ref[n++] = (Ref){off, r, INT_MIN, INT_MAX, k};
    placed++;
    if (off + r > mark) mark = off + r;
    assert_int_equal(ivl_peak(&v), mark);
    assert_int_equal(v.n, n);
  }
  assert_true(placed > nop / 5 && refused > 0);
  free(ref);
  ivl_free(&v);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(bottom_up_first_fit_in_gap),
      cmocka_unit_test(disjoint_lifetimes_share_bytes),
      cmocka_unit_test(top_down_from_top_and_highest_gap),
      cmocka_unit_test(sizes_rounded_to_align),
      cmocka_unit_test(full_returns_minus_one_and_places_nothing),
      cmocka_unit_test(remove_then_realloc),
      cmocka_unit_test(lowest_at_steps),
      cmocka_unit_test(lo_respected),
      cmocka_unit_test(take_without_free_is_a_bump),
      cmocka_unit_test(take_remove_in_program_order),
      cmocka_unit_test(peak_is_high_water_mark),
      cmocka_unit_test(random_property),
      cmocka_unit_test(random_program_order),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
