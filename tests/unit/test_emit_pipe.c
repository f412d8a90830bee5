/* test_emit_pipe.c — the emitter's pipe (emit_impl.h): the synchronisation protocol every
 * kernel's streams use between a producer queue and a consumer queue, with two slots.
 * Expected streams are derived by hand from the protocol's definition: take k (k = 0, 1, ...)
 * uses slot k mod 2 and, from k = 2 on, first waits for the free flag on the producer's queue;
 * every give is one signal of that flag from the consumer to the producer's slot; a drain
 * waits once per release still owed, min(takes, 2). So with n takes, n gives and a drain the
 * producer waits max(n - 2, 0) + min(n, 2) = n times, exactly once per give: the flag is zero
 * again. A pipe with waits = 0 counts its takes and emits nothing. Then a cluster DMA queue
 * serving a core without DMA (qsem): the same protocol through cluster semaphores.
 * Waits and signals are counted where they are, as instructions or folded into one (GsInst's
 * wait and signal); test_folding checks where the emitter folds them, by the rule in
 * emit_impl.h: a wait into the queue's next instruction, a signal into its last one when that
 * has none and no wait is pending.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "emit_impl.h"

typedef struct {
  GsProgram *p;
  struct GsEmitState s;
  unsigned char qsem[2];
  uint8_t pend_wait[2 * 2]; /* [queue][2] */
  GsInst *last[2];
  int64_t fold_at[2];
  Emit e;
} Fixture;

static void fixture(Fixture *f, int semaphores) {
  memset(f, 0, sizeof *f);
  f->p = prog_new();
  prog_queue(f->p, 0, 0, Q_DMA_IN);  /* queue 0: producer */
  prog_queue(f->p, 0, 0, Q_DMA_OUT); /* queue 1: consumer */
  f->qsem[0] = f->qsem[1] = (unsigned char)semaphores;
  f->s.qsem = f->qsem;
  f->s.pend_wait = f->pend_wait;
  f->s.last = f->last;
  f->s.fold_at = f->fold_at;
  f->e.p = f->p;
  f->e.s = &f->s;
}

/* Instructions of opcode op in queue q; for I_WAIT and I_SIGNAL, the waits and signals, as
 * instructions or carried by one. */
static int count(const GsProgram *p, int q, GsOpcode op) {
  int n = 0;
  GsCursor cur;
  for (prog_cursor_init(&cur, &p->queues[q]); prog_cursor_next(&cur) != NULL;)
    n += (cur.at->op == op) + (op == I_WAIT && cur.at->wait) + (op == I_WAIT && cur.at->wait2) +
         (op == I_SIGNAL && cur.at->signal) + (op == I_SIGNAL && cur.at->signal2);
  return n;
}

static void test_slots_and_waits(void **state) {
  (void)state;
  Fixture f;
  fixture(&f, 0);
  EmitPipe pp = emit_pipe(0, Q_DMA_IN, F_AFREE, 1);
  int want_slot[5] = {0, 1, 0, 1, 0};
  for (int k = 0; k < 5; k++) {
    int waits_before = count(f.p, 0, I_WAIT);
    assert_int_equal(emit_pipe_take(&f.e, &pp), want_slot[k]);
    emit_flush(&f.e); /* a pending wait into the program */
    assert_int_equal(count(f.p, 0, I_WAIT) - waits_before, k >= 2); /* from the third take on */
    emit_pipe_give(&f.e, &pp, 1);
  }
  assert_int_equal(count(f.p, 0, I_WAIT), 3);   /* takes 2, 3, 4 */
  assert_int_equal(count(f.p, 1, I_SIGNAL), 5); /* one per give */
  emit_pipe_drain(&f.e, &pp);
  emit_flush(&f.e);
  assert_int_equal(count(f.p, 0, I_WAIT), 5);   /* + min(5, 2): one wait per give */
  GsInst *sig = prog_queue_array(&f.p->queues[1]);
  assert_int_equal(sig->sub, Q_DMA_IN);          /* to the producer's slot */
  assert_int_equal(inst_signal_flag(sig), F_AFREE);
  assert_int_equal(sig->signal, 1 + Q_DMA_IN);   /* the second give, folded into the first */
  assert_int_equal(sig->signal_flag, F_AFREE);
  assert_int_equal(sig->signal2, 1 + Q_DMA_IN);  /* and the third, as its second */
  assert_int_equal(sig->signal2_flag, F_AFREE);
  assert_int_equal(f.p->queues[1].ninsts, 2);    /* gives 4 and 5: another signal carrying one */
  free(sig);
  prog_free(f.p);
}

static void test_short_pipes_drain_what_they_owe(void **state) {
  (void)state;
  for (int n = 0; n <= 2; n++) {
    Fixture f;
    fixture(&f, 0);
    EmitPipe pp = emit_pipe(0, Q_DMA_IN, F_WFREE, 1);
    for (int k = 0; k < n; k++) {
      emit_pipe_take(&f.e, &pp);
      emit_pipe_give(&f.e, &pp, 1);
    }
    emit_pipe_drain(&f.e, &pp);
    emit_flush(&f.e);
    assert_int_equal(count(f.p, 0, I_WAIT), n); /* no take waited; the drain waits n times */
    prog_free(f.p);
  }
}

static void test_riding_pipe_emits_nothing(void **state) {
  (void)state;
  Fixture f;
  fixture(&f, 0);
  EmitPipe pp = emit_pipe(0, Q_DMA_IN, F_WFREE, 0);
  for (int k = 0; k < 4; k++) {
    assert_int_equal(emit_pipe_take(&f.e, &pp), k % 2);
    emit_pipe_give(&f.e, &pp, 1);
  }
  emit_pipe_drain(&f.e, &pp);
  assert_int_equal(pp.n, 4);
  assert_int_equal(prog_ninsts(f.p), 0);
  prog_free(f.p);
}

static void test_through_semaphores(void **state) {
  (void)state;
  Fixture f;
  fixture(&f, 1);
  EmitPipe pp = emit_pipe(0, Q_DMA_IN, F_AFREE, 1);
  for (int k = 0; k < 3; k++) {
    emit_pipe_take(&f.e, &pp);
    emit_pipe_give(&f.e, &pp, 1);
  }
  emit_pipe_drain(&f.e, &pp);
  assert_int_equal(count(f.p, 0, I_SEMWAIT), 3); /* take 2, then min(3, 2) */
  assert_int_equal(count(f.p, 1, I_SEMPOST), 3);
  assert_int_equal(count(f.p, 0, I_WAIT) + count(f.p, 1, I_SIGNAL), 0);
  /* the post and the waits name the same semaphore */
  GsInst *post = prog_queue_array(&f.p->queues[1]), *wait = prog_queue_array(&f.p->queues[0]);
  assert_int_equal(inst_sempost_id(post), inst_semwait_id(wait));
  free(post);
  free(wait);
  prog_free(f.p);
}

/* Where waits and signals go, by the rule (emit_impl.h), on queue 0 (dma_in) with signals to
 * queue 1 (dma_out, flag 1) and waits on flag 2. */
static void test_folding(void **state) {
  (void)state;
  Fixture f;
  fixture(&f, 0);
  emit_signal(&f.e, 0, 1, Q_DMA_OUT, 1); /* no instruction yet: #0 signal */
  emit_inst(&f.e, 0, I_MOV);             /* #1 mov */
  emit_signal(&f.e, 0, 1, Q_DMA_OUT, 1); /* into #1 */
  emit_signal(&f.e, 0, 1, Q_DMA_OUT, 1); /* #1 has one: into its signal2 */
  emit_signal(&f.e, 0, 1, Q_DMA_OUT, 1); /* #1 has two: #2, a signal of its own */
  emit_wait(&f.e, 0, 2);
  emit_inst(&f.e, 0, I_MOV);             /* #3 mov, after the wait: carries it */
  emit_wait(&f.e, 0, 2);
  emit_signal(&f.e, 0, 1, Q_DMA_OUT, 1); /* a wait is pending: #4 signal carrying it */
  emit_wait(&f.e, 0, 2);
  emit_wait(&f.e, 0, 2);                 /* #5 wait carrying the first */
  emit_flush(&f.e);
  emit_flush(&f.e);                      /* nothing pending is nothing written */
  GsInst *q = prog_queue_array(&f.p->queues[0]);
  assert_int_equal(f.p->queues[0].ninsts, 6);
  GsOpcode want_op[6] = {I_SIGNAL, I_MOV, I_SIGNAL, I_MOV, I_SIGNAL, I_WAIT};
  int want_wait[6] = {0, 0, 0, 3, 3, 3}, want_signal[6] = {0, 2, 0, 0, 0, 0};
  int want_signal2[6] = {0, 2, 0, 0, 0, 0};
  for (int i = 0; i < 6; i++) {
    assert_int_equal(q[i].op, want_op[i]);
    assert_int_equal(q[i].wait, want_wait[i]);          /* 1 + flag 2 */
    assert_int_equal(q[i].signal, want_signal[i]);      /* 1 + Q_DMA_OUT */
    assert_int_equal(q[i].signal_flag, want_signal[i] ? 1 : 0);
    assert_int_equal(q[i].signal2, want_signal2[i]);    /* 1 + Q_DMA_OUT */
    assert_int_equal(q[i].signal2_flag, want_signal2[i] ? 1 : 0);
  }
  assert_int_equal(inst_wait_flag(&q[5]), 2);
  free(q);
  prog_free(f.p);
}

/* emit_gemm (emit_impl.h): the same gemm again is one more rep of the last instruction, unless
 * that carries a signal, a wait is pending, or m·n·k·reps would pass GS_OPERAND_MAX. */
static void test_gemm_reps(void **state) {
  (void)state;
  Fixture f;
  fixture(&f, 0);
  GsInst g = {0};
  g.op = I_GEMM;
  g.r[0] = 1, g.r[1] = 2, g.r[2] = 3, g.t[0] = 4, g.t[1] = 5, g.t[2] = 6;
  inst_gemm_set_m(&g, 16);
  inst_gemm_set_n(&g, 16);
  inst_gemm_set_k(&g, 16);
  emit_gemm(&f.e, 0, &g);                /* #0 */
  emit_gemm(&f.e, 0, &g);                /* #0 reps=2 */
  emit_gemm(&f.e, 0, &g);                /* #0 reps=3 */
  g.flags = 1;
  emit_gemm(&f.e, 0, &g);                /* acc differs: #1 */
  emit_signal(&f.e, 0, 1, Q_DMA_OUT, 0); /* into #1 */
  emit_gemm(&f.e, 0, &g);                /* #1 signals after it: #2 */
  emit_wait(&f.e, 0, 2);
  emit_gemm(&f.e, 0, &g);                /* a wait is pending: #3, carrying it */
  emit_gemm(&f.e, 0, &g);                /* #3 reps=2: its wait comes before the first */
  GsInst big = g;                        /* 2^13 · 2^13 · 2^13 = 2^39 MACs: two fit, not three */
  inst_gemm_set_m(&big, 8192);
  inst_gemm_set_n(&big, 8192);
  inst_gemm_set_k(&big, 8192);
  emit_gemm(&f.e, 0, &big);              /* #4 */
  emit_gemm(&f.e, 0, &big);              /* #4 reps=2 */
  emit_gemm(&f.e, 0, &big);              /* #5 */
  GsInst *q = prog_queue_array(&f.p->queues[0]);
  assert_int_equal(f.p->queues[0].ninsts, 6);
  int64_t want_reps[6] = {3, 0, 0, 2, 2, 0};
  int want_wait[6] = {0, 0, 0, 3, 0, 0}, want_signal[6] = {0, 2, 0, 0, 0, 0};
  for (int i = 0; i < 6; i++) {
    assert_int_equal(q[i].op, I_GEMM);
    assert_int_equal(inst_gemm_reps(&q[i]), want_reps[i]);
    assert_int_equal(q[i].wait, want_wait[i]);
    assert_int_equal(q[i].signal, want_signal[i]);
    assert_int_equal(q[i].flags, i > 0);
  }
  assert_int_equal(inst_gemm_m(&q[5]), 8192);
  free(q);
  prog_free(f.p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_slots_and_waits),
      cmocka_unit_test(test_short_pipes_drain_what_they_owe),
      cmocka_unit_test(test_riding_pipe_emits_nothing),
      cmocka_unit_test(test_through_semaphores),
      cmocka_unit_test(test_folding),
      cmocka_unit_test(test_gemm_reps),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
