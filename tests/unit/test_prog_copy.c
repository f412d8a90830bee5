/* test_prog_copy.c — copied runs (prog_copy.c): a queue whose runs copy another cluster's
 * queue under a map reads, writes (.gtp and .gtasm) and checks as the same queue written out
 * instruction by instruction; the static checks refuse a map whose ids do not exist, a run from
 * another core or queue, a tile span that shifts, and a shift that takes a mov past 2^40, and
 * say the same with the checks' thread as without it.
 *
 * The oracle of every comparison is a program built instruction by instruction by `fill`,
 * which makes cluster c's instructions from c's own bases, never through a map. */
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
#include "isa_testlib.h"
#include "prog.h"

/* Ids: region 1 and tile 1 are a DDR input both clusters read (cluster c from byte c·SHIFT on);
 * cluster c's own regions are REG0 + c·NLOCAL + j, its tiles TILE0 + c·NLOCAL + j. */
enum { NLOCAL = 64, REG0 = 2, TILE0 = 2, SHIFT = 1 << 20, NINSTS = 150 };

/* Instruction k of cluster c's stream on core 0's dma_in: an LB alloc every 8, else a load of
 * 256 B of the input into one of the LB regions, with a wait and a signal now and then. */
static void fill(GsInst *in, int c, int k, int64_t shift) {
  memset(in, 0, sizeof *in);
  uint32_t local = (uint32_t)(k % NLOCAL);
  if (k % 8 == 0) {
    in->op = I_ALLOC;
    in->sub = LVL_LB;
    in->r[0] = REG0 + (uint32_t)c * NLOCAL + local;
    inst_alloc_set_cluster(in, c);
    inst_alloc_set_core(in, 0);
    inst_alloc_set_offset(in, (k / 8 % 32) * 1024);
    inst_alloc_set_bytes(in, 1024);
    return;
  }
  in->op = I_MOV;
  in->r[0] = REG0 + (uint32_t)c * NLOCAL + local;
  in->t[0] = TILE0 + (uint32_t)c * NLOCAL + local;
  in->r[1] = 1;
  in->t[1] = 1;
  inst_mov_set_bytes(in, 256);
  inst_mov_set_src_off(in, c * shift + k * 256);
  inst_mov_set_dst_off(in, k % 4 * 256);
  if (k % 5 == 0) in->wait = 1;
  if (k % 7 == 0) in->signal = 1 + Q_UNIT0, in->signal_flag = 2;
}

/* A two-cluster program on tiny: c0.k0.dma_in holds NINSTS instructions of cluster 0; c1.k0.
 * dma_in holds two of its own, then (copied or filled) cluster 1's [10, 10 + n), then one of its
 * own. With `copy` the middle is a run under m (made here from the bases), else filled. */
static GsProgram *build(int copy, int64_t shift, const GsIdSpan *regs, int nregs,
                        const GsIdSpan *tiles, int ntiles, int n) {
  GsProgram *p = prog_new();
  prog_reserve_ids(p, REG0 + 2 * NLOCAL, TILE0 + 2 * NLOCAL);
  int q0 = (int)(prog_queue(p, 0, 0, Q_DMA_IN) - p->queues);
  int q1 = (int)(prog_queue(p, 1, 0, Q_DMA_IN) - p->queues);
  for (int k = 0; k < NINSTS; k++) fill(prog_emit(&p->queues[q0]), 0, k, shift);
  fill(prog_emit(&p->queues[q1]), 1, 0, shift);
  fill(prog_emit(&p->queues[q1]), 1, 1, shift);
  if (copy) {
    const GsIdMap *m = prog_new_map(p, 1, regs, nregs, tiles, ntiles);
    prog_copy_run(p, q1, q0, 10, n, m);
  } else {
    for (int k = 10; k < 10 + n; k++) fill(prog_emit(&p->queues[q1]), 1, k, shift);
  }
  fill(prog_emit(&p->queues[q1]), 1, 3, shift);
  return p;
}

/* The map that takes cluster 0's ids to cluster 1's (as fill makes them). */
static const GsIdSpan REGS[] = {{1, 2, 0, SHIFT}, {REG0, REG0 + NLOCAL, NLOCAL, 0}};
static const GsIdSpan TILES[] = {{TILE0, TILE0 + NLOCAL, NLOCAL, 0}};

static char *gtp_bytes(const GsProgram *p, size_t *n) {
  char path[] = "/tmp/gtsim-copy-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  assert_int_equal(gtp_write(path, p), 0);
  char *b = util_read_file(path, n);
  assert_non_null(b);
  unlink(path);
  return b;
}

/* The static checks' messages (caller frees) and their result in *rc: prog_check's, or with cr
 * prog_check_end's (the checks' thread that watched p being made). */
static char *check_text(const GsProgram *p, const GsArch *a, GsCheckRun *cr, int *rc) {
  DiagText dt;
  GsDiag *d = diag_text_begin(&dt);
  *rc = cr ? prog_check_end(cr, p, d, "f.gtp") : prog_check(p, a, d, "f.gtp");
  return diag_text_end(&dt);
}

/* Copied, the queue is the filled one: each instruction, the .gtp file byte for byte, the
 * assembly text; the program is a run's size smaller in encoded bytes. */
static void copies_read_as_filled(void **state) {
  (void)state;
  GsArch a;
  tiny_arch(&a, 0);
  for (int n = 1; n <= NINSTS - 10; n += 139 - 10) {
    GsProgram *c = build(1, SHIFT, REGS, 2, TILES, 1, n);
    GsProgram *f = build(0, SHIFT, REGS, 2, TILES, 1, n);
    assert_int_equal(c->queues[1].ninsts, n + 3);
    assert_int_equal(c->queues[1].ncopied, n);
    assert_same_program(c, f);
    size_t nc, nf;
    char *bc = gtp_bytes(c, &nc), *bf = gtp_bytes(f, &nf);
    assert_int_equal(nc, nf);
    assert_memory_equal(bc, bf, nc);
    free(bc);
    free(bf);
    char *tc = disassemble(c, &a), *tf = disassemble(f, &a);
    assert_string_equal(tc, tf);
    free(tc);
    free(tf);
    int rc;
    char *msg = check_text(c, &a, NULL, &rc);
    assert_int_equal(rc, 0);
    free(msg);
    prog_free(c);
    prog_free(f);
  }
}

/* A cursor stopped inside a run and released, then started again, reads the same. */
static void cursor_again(void **state) {
  (void)state;
  GsProgram *p = build(1, SHIFT, REGS, 2, TILES, 1, 100);
  GsCursor cur;
  memset(&cur, 0, sizeof cur);
  GsInst first[8];
  for (int round = 0; round < 2; round++) {
    prog_cursor_release(&cur);
    prog_cursor_init(&cur, &p->queues[1]);
    for (int i = 0; i < 8; i++) {
      const GsInst *in = prog_cursor_next(&cur);
      assert_non_null(in);
      if (round == 0) first[i] = *in;
      else assert_memory_equal(in, &first[i], sizeof *in);
    }
  }
  prog_cursor_release(&cur);
  GsInst want;
  fill(&want, 1, 10 + 5, SHIFT); /* instruction 7: the run's sixth */
  assert_memory_equal(&first[7], &want, sizeof want);
  prog_free(p);
}

/* Each bad run, the message that names it. */
static void bad_maps_refused(void **state) {
  (void)state;
  GsArch a;
  tiny_arch(&a, 0);
  const struct {
    GsIdSpan regs[2], tiles[1];
    const char *msg;
  } cases[] = {
      {{{1, 2, 0, SHIFT}, {REG0, REG0 + NLOCAL, 2 * NLOCAL, 0}}, {{TILE0, TILE0 + NLOCAL, NLOCAL, 0}},
       "region span [2, 66) moved by 128 leaves the ids 1..129"},
      {{{1, 2, 0, SHIFT}, {REG0, REG0 + NLOCAL, NLOCAL, 0}}, {{TILE0, TILE0 + NLOCAL, NLOCAL, 8}},
       "tile span [2, 66) shifts offsets by 8"},
      {{{REG0, REG0 + NLOCAL, NLOCAL, 0}, {1, 2, 0, SHIFT}}, {{TILE0, TILE0 + NLOCAL, NLOCAL, 0}},
       "region spans [2, 66) and [1, 2) are out of order or overlap"},
      {{{0, 2, 0, SHIFT}, {REG0, REG0 + NLOCAL, NLOCAL, 0}}, {{TILE0, TILE0 + NLOCAL, NLOCAL, 0}},
       "region span [0, 2) is empty or names id 0"},
      {{{1, 2, 0, GS_OPERAND_MAX}, {REG0, REG0 + NLOCAL, NLOCAL, 0}}, {{TILE0, TILE0 + NLOCAL, NLOCAL, 0}},
       "instruction 2 (mov"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    GsProgram *p = build(1, SHIFT, cases[i].regs, 2, cases[i].tiles, 1, 20);
    int rc;
    char *msg = check_text(p, &a, NULL, &rc);
    assert_int_equal(rc, -1);
    if (!strstr(msg, cases[i].msg)) fail_msg("case %zu: %s", i, msg);
    assert_non_null(strstr(msg, "c1.k0.dma_in"));
    free(msg);
    prog_free(p);
  }
}

/* Cluster 1's dma_in given a run of 4 from queue (0, src_core, dma_in) under a map of cluster
 * map_cluster: prog_check fails, saying `why`. */
static void run_refused(int src_core, int map_cluster, const char *why) {
  GsArch a;
  tiny_arch(&a, 0);
  GsProgram *p = prog_new();
  prog_reserve_ids(p, REG0 + 2 * NLOCAL, TILE0 + 2 * NLOCAL);
  int q0 = (int)(prog_queue(p, 0, src_core, Q_DMA_IN) - p->queues);
  int q1 = (int)(prog_queue(p, 1, 0, Q_DMA_IN) - p->queues);
  for (int k = 0; k < 30; k++) fill(prog_emit(&p->queues[q0]), 0, k, SHIFT);
  prog_copy_run(p, q1, q0, 0, 4, prog_new_map(p, map_cluster, REGS, 2, TILES, 1));
  int rc;
  char *msg = check_text(p, &a, NULL, &rc);
  assert_int_equal(rc, -1);
  if (!strstr(msg, why)) fail_msg("%s", msg);
  free(msg);
  prog_free(p);
}

/* A run whose source is not the same core's queue, and a map of another cluster. */
static void bad_sources_refused(void **state) {
  (void)state;
  run_refused(1, 1, "its source (queue c0.k1.dma_in) is not this queue's core");
  run_refused(0, 0, "its map names cluster 0, not the queue's");
}

/* An error in an own instruction after a run names its place in the queue: the filled
 * program's message, word for word. */
static void own_error_after_run(void **state) {
  (void)state;
  GsArch a;
  tiny_arch(&a, 0);
  GsProgram *progs[2];
  char *msgs[2];
  for (int copy = 0; copy < 2; copy++) {
    GsProgram *p = progs[copy] = build(copy, SHIFT, REGS, 2, TILES, 1, 20);
    GsInst *bad = prog_emit(&p->queues[1]);
    fill(bad, 1, 9, SHIFT);
    bad->dtype = 99; /* a mov names no dtype */
    int rc;
    msgs[copy] = check_text(p, &a, NULL, &rc);
    assert_int_equal(rc, -1);
  }
  assert_non_null(strstr(msgs[0], "instruction 23 "));
  assert_string_equal(msgs[0], msgs[1]);
  for (int i = 0; i < 2; i++) {
    free(msgs[i]);
    prog_free(progs[i]);
  }
}

/* The checks' thread (prog_check_begin, attached or not) passes a good program and finds a bad
 * map as prog_check does, with its messages. */
static void checks_thread(void **state) {
  (void)state;
  GsArch a;
  tiny_arch(&a, 0);
  for (int attach = 0; attach < 2; attach++)
    for (int good = 0; good < 2; good++) {
      GsIdSpan regs[2] = {REGS[0], REGS[1]};
      if (!good) regs[1].delta = 3 * NLOCAL;
      GsCheckRun *cr = prog_check_begin(&a);
      GsProgram *p = prog_new();
      if (attach) prog_check_attach(cr, p);
      prog_reserve_ids(p, REG0 + 2 * NLOCAL, TILE0 + 2 * NLOCAL);
      int q0 = (int)(prog_queue(p, 0, 0, Q_DMA_IN) - p->queues);
      int q1 = (int)(prog_queue(p, 1, 0, Q_DMA_IN) - p->queues);
      for (int k = 0; k < NINSTS; k++) fill(prog_emit(&p->queues[q0]), 0, k, SHIFT);
      fill(prog_emit(&p->queues[q1]), 1, 0, SHIFT);
      prog_check_publish(cr, p);
      prog_copy_run(p, q1, q0, 10, 100, prog_new_map(p, 1, regs, 2, TILES, 1));
      fill(prog_emit(&p->queues[q1]), 1, 3, SHIFT);
      prog_check_publish(cr, p);
      int rc, rc2;
      char *buf = check_text(p, &a, cr, &rc);
      char *want = check_text(p, &a, NULL, &rc2);
      assert_int_equal(rc, good ? 0 : -1);
      assert_int_equal(rc2, rc);
      assert_string_equal(buf, want);
      free(buf);
      free(want);
      prog_free(p);
    }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(copies_read_as_filled), cmocka_unit_test(cursor_again),
      cmocka_unit_test(bad_maps_refused),      cmocka_unit_test(bad_sources_refused),
      cmocka_unit_test(own_error_after_run),   cmocka_unit_test(checks_thread),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
