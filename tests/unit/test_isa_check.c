/* test_isa_check.c — prog_check, the static checks against an arch: one case per rule,
 * each starting from a valid one-instruction program and breaking one thing, with the
 * expected message (queue, instruction index and text, and what is wrong) written out. */
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

static GsArch tiny, hetero, nogb;

static int setup(void **state) {
  (void)state;
  tiny_arch(&tiny, 0);
  tiny_arch(&hetero, 1);
  tiny_arch(&nogb, 0);
  nogb.gb_bytes = 0; /* like the IPU: no global buffer */
  return 0;
}

/* Runs prog_check (with cr: ends that check of p as it was emitted, prog_check_end) printing
 * at most max_errors messages; returns them (caller frees), the result in *rc and the errors
 * found in *nerrors. */
static char *check_max_run(const GsProgram *p, const GsArch *a, int max_errors, int *rc,
                           int *nerrors, GsCheckRun *cr) {
  DiagText dt;
  GsDiag *d = diag_text_begin(&dt);
  d->max_errors = max_errors;
  *rc = cr ? prog_check_end(cr, p, d, "f.gtp") : prog_check(p, a, d, "f.gtp");
  char *buf = diag_text_end(&dt);
  assert_true((*rc == 0) == (d->nerrors == 0));
  *nerrors = d->nerrors;
  return buf;
}

static char *check_max(const GsProgram *p, const GsArch *a, int max_errors, int *rc, int *nerrors) {
  return check_max_run(p, a, max_errors, rc, nerrors, NULL);
}

static char *check(const GsProgram *p, const GsArch *a, int *rc) {
  int nerrors;
  return check_max(p, a, 50, rc, &nerrors);
}

static void expect_ok(const GsProgram *p, const GsArch *a) {
  int rc;
  char *msg = check(p, a, &rc);
  if (rc != 0) fail_msg("expected no error, got:\n%s", msg);
  free(msg);
}

static void expect_error(const GsProgram *p, const GsArch *a, const char *want) {
  int rc;
  char *msg = check(p, a, &rc);
  if (rc == 0 || !strstr(msg, want)) fail_msg("expected \"%s\", got \"%s\"", want, msg);
  free(msg);
}

/* A valid program with one instruction of `op` on a queue that takes it; returns the
 * instruction so a case can break one field. Regions 1..3 and tiles 1..3 exist. */
static GsInst *one(GsProgram **pp, GsOpcode op) {
  GsProgram *p = prog_new();
  for (int i = 0; i < 3; i++) {
    prog_new_region(p, NULL);
    prog_new_tile(p, NULL);
  }
  int index = isa_engine(op) == E_DMA ? Q_DMA_IN
              : isa_engine(op) == E_VECTOR ? Q_UNIT0 + 1
              : isa_engine(op) == E_SCALAR ? Q_UNIT0 + 2
                                           : Q_UNIT0;
  GsInst *in = prog_emit(prog_queue(p, 1, 1, index));
  in->op = (uint8_t)op;
  switch (op) {
  case I_ALLOC:
    in->r[0] = 1;
    in->sub = LVL_LB;
    inst_alloc_set_cluster(in, 1);
    inst_alloc_set_core(in, 1);
    inst_alloc_set_bytes(in, 4096);
    break;
  case I_FREE: in->r[0] = 1; break;
  case I_MOV:
    in->r[0] = 1, in->t[0] = 1, in->r[1] = 2, in->t[1] = 2;
    inst_mov_set_bytes(in, 4096);
    break;
  case I_GEMM:
    in->r[0] = 1, in->t[0] = 1, in->r[1] = 2, in->t[1] = 2, in->r[2] = 3, in->t[2] = 3;
    inst_gemm_set_m(in, 16);
    inst_gemm_set_n(in, 16);
    inst_gemm_set_k(in, 16);
    in->dtype = DT_FP16;
    break;
  case I_VEC:
    in->sub = V_RELU;
    in->r[0] = 1, in->t[0] = 1, in->r[1] = 2, in->t[1] = 2;
    inst_vec_set_elems(in, 1024);
    in->dtype = DT_FP16;
    break;
  case I_SCALAR: inst_scalar_set_ops(in, 10); break;
  case I_SIGNAL: in->sub = Q_DMA_OUT; break;
  case I_BARRIER:
    in->sub = SCOPE_CHIP;
    inst_barrier_set_count(in, 4);
    break;
  default: break;
  }
  *pp = p;
  return in;
}

static void test_valid_each_opcode(void **state) {
  (void)state;
  for (int op = 0; op < I_COUNT; op++) {
    GsProgram *p;
    one(&p, (GsOpcode)op);
    expect_ok(p, &tiny);
    prog_free(p);
  }
}

static void test_message_format(void **state) {
  (void)state;
  GsProgram *p;
  GsInst *in = one(&p, I_GEMM);
  inst_gemm_set_n(in, 0);
  expect_error(p, &tiny,
               "f.gtp: error: queue c1.k1.mme, instruction 0 (gemm dst=1 dst_tile=1 a=2 a_tile=2 "
               "b=3 b_tile=3 m=16 k=16 dtype=fp16): n must be positive\n");
  prog_free(p);
}

static void test_queues(void **state) {
  (void)state;
  GsProgram *p = prog_new();
  prog_queue(p, 2, 0, Q_DMA_IN);
  expect_error(p, &tiny, "queue c2.k0.dma_in: cluster 2 does not exist (arch 'tiny' has 2)");
  prog_free(p);
  p = prog_new();
  prog_queue(p, 0, 2, Q_DMA_IN);
  expect_error(p, &tiny, "queue c0.k2.dma_in: core 2 does not exist (arch 'tiny' has 2 per cluster)");
  /* hetero has a third core, of kind gemm, which has no DMA engine (like Goya's GEMM core) */
  expect_error(p, &hetero, "queue c0.k2.dma_in: core kind 'gemm' has no DMA engine (dma_engines = 0): no dma_in queue");
  p->queues[0].index = Q_UNIT0;
  expect_ok(p, &hetero);
  prog_free(p);
  p = prog_new();
  prog_queue(p, 0, 1, Q_UNIT0 + 3);
  expect_error(p, &tiny, "queue c0.k1.q5: queue index 5 does not exist (core kind 'pe' has 5 "
               "queues: dma_in, dma_out and 3 units)");
  prog_free(p);
  p = prog_new();
  prog_queue(p, 0, 2, Q_UNIT0 + 2);
  expect_error(p, &hetero, "queue c0.k2.q4: queue index 4 does not exist (core kind 'gemm' has 4");
  prog_free(p);
  p = prog_new();
  prog_queue(p, 1, -1, 2);
  expect_error(p, &tiny, "queue c1.dma2: cluster DMA engine 2 does not exist (arch 'tiny' has 2 per cluster)");
  prog_free(p);
  p = prog_new();
  prog_queue(p, 0, 0, Q_DMA_IN);
  prog_queue(p, 0, 0, Q_DMA_OUT);
  p->queues[1].index = Q_DMA_IN; /* what a broken writer could produce */
  expect_error(p, &tiny, "queue c0.k0.dma_in appears twice");
  prog_free(p);
}

static void test_engines(void **state) {
  (void)state;
  static const struct {
    GsOpcode op;
    int index;
    const char *want;
  } cases[] = {
      {I_GEMM, Q_DMA_IN, "gemm runs on a matrix unit, not on a DMA queue"},
      {I_GEMM, Q_UNIT0 + 1, "gemm runs on a matrix unit; unit 'vec' is not one"},
      {I_VEC, Q_UNIT0, "vec runs on a vector unit; unit 'mme' is not one"},
      {I_SCALAR, Q_UNIT0 + 1, "scalar runs on a scalar unit; unit 'vec' is not one"},
      {I_MOV, Q_UNIT0, "mov runs on a DMA queue (dma_in, dma_out or a cluster DMA engine), not on a unit queue"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    GsProgram *p;
    one(&p, cases[i].op);
    p->queues[0].index = cases[i].index;
    expect_error(p, &tiny, cases[i].want);
    prog_free(p);
  }
  /* mov on a cluster DMA queue and on dma_out is fine; sync ops go anywhere */
  GsProgram *p;
  one(&p, I_MOV);
  p->queues[0].core = -1;
  p->queues[0].index = 1;
  expect_ok(p, &tiny);
  p->queues[0].core = 0;
  p->queues[0].index = Q_DMA_OUT;
  expect_ok(p, &tiny);
  prog_free(p);
  one(&p, I_BARRIER);
  p->queues[0].core = -1;
  p->queues[0].index = 0;
  expect_ok(p, &tiny);
  prog_free(p);
}

static void test_enum_operands(void **state) {
  (void)state;
  GsProgram *p;
  GsInst *in = one(&p, I_VEC);
  in->sub = V_COUNT;
  char want[64]; /* the first op past the table, and the table's range */
  snprintf(want, sizeof want, "vector op %d out of range (0..%d)", (int)V_COUNT, (int)V_COUNT - 1);
  expect_error(p, &tiny, want);
  in->sub = V_RELU;
  in->dtype = DT_COUNT;
  expect_error(p, &tiny, "dtype 6 out of range (0..5)");
  in->dtype = DT_INT16; /* tiny's vec has no int16 lanes */
  expect_error(p, &tiny, "unit 'vec' does not support dtype int16");
  prog_free(p);
  in = one(&p, I_GEMM);
  in->dtype = DT_FP32; /* tiny's mme has rate_fp16 and rate_int8 only */
  expect_error(p, &tiny, "unit 'mme' does not support dtype fp32");
  in->dtype = DT_INT8;
  expect_ok(p, &tiny);
  prog_free(p);
  in = one(&p, I_ALLOC);
  in->sub = 3;
  expect_error(p, &tiny, "level 3 out of range");
  prog_free(p);
  in = one(&p, I_SEMPOST);
  in->sub = 2;
  expect_error(p, &tiny, "scope 2 out of range");
  prog_free(p);
  in = one(&p, I_GEMM);
  in->op = 200;
  expect_error(p, &tiny, "instruction 0 (opcode 200): opcode 200 out of range (0..10)");
  prog_free(p);
}

static void test_flags(void **state) {
  (void)state;
  GsProgram *p;
  GsInst *in = one(&p, I_SIGNAL);
  in->sub = Q_UNIT0 + 3;
  expect_error(p, &tiny, "signal target: queue index 5 does not exist");
  in->sub = Q_UNIT0 + 2;
  expect_ok(p, &tiny);
  p->queues[0].core = -1;
  p->queues[0].index = 0;
  expect_error(p, &tiny, "queue c1.dma0, instruction 0 (signal queue=scl): flags are per core");
  prog_free(p);
  one(&p, I_WAIT);
  p->queues[0].core = -1;
  p->queues[0].index = 1;
  expect_error(p, &tiny, "queue c1.dma1, instruction 0 (wait): flags are per core");
  prog_free(p);
}

/* The waits and signal any instruction carries (GsInst: 1 + the flag or queue, 0: none). */
static void test_carried_sync(void **state) {
  (void)state;
  GsProgram *p;
  GsInst *in = one(&p, I_VEC);
  in->wait = 1 + GS_SYNC_FLAG_MAX;
  in->signal = 1 + Q_DMA_OUT;
  in->signal_flag = GS_SYNC_FLAG_MAX;
  expect_ok(p, &tiny);
  in->signal_flag = GS_SYNC_FLAG_MAX + 1;
  expect_error(p, &tiny, "signal_flag=255 out of range (0..254)");
  in->signal_flag = 3;
  in->signal = 1 + Q_UNIT0 + 3; /* tiny's pe has 3 units: queues 0..4 */
  expect_error(p, &tiny, "vec op=relu dst=1 dst_tile=1 a=2 a_tile=2 elems=1024 dtype=fp16 wait=254 "
                         "signal=q5 signal_flag=3): signal target: queue index 5 does not exist");
  in->signal = 1 + Q_DMA_OUT; /* a target found valid once is no pass for another one */
  GsInst first = *in;
  in = prog_emit(&p->queues[0]); /* instruction 1: instruction 0 with another target */
  *in = first;
  in->signal = 1 + Q_UNIT0 + 3;
  expect_error(p, &tiny, "instruction 1 (vec op=relu dst=1 dst_tile=1 a=2 a_tile=2 elems=1024 "
                         "dtype=fp16 wait=254 signal=q5 signal_flag=3): signal target: queue index 5");
  in->signal = 0;
  expect_error(p, &tiny, "signal_flag without signal (the queue to signal)");
  in->signal_flag = 0;
  in->wait2 = 1 + GS_SYNC_FLAG_MAX; /* a second wait, after wait's */
  expect_ok(p, &tiny);
  in->wait = 0;
  expect_error(p, &tiny, "wait2 without wait (the flag waited on first)");
  in->wait2 = 0;
  in->signal = 1 + Q_DMA_IN;
  in->signal2 = 1 + Q_DMA_OUT; /* a second signal, after signal's */
  in->signal2_flag = GS_SYNC_FLAG_MAX;
  expect_ok(p, &tiny);
  in->signal2_flag = GS_SYNC_FLAG_MAX + 1;
  expect_error(p, &tiny, "signal2_flag=255 out of range (0..254)");
  in->signal2_flag = 2;
  in->signal2 = 1 + Q_UNIT0 + 3;
  expect_error(p, &tiny, "signal=dma_in signal2=q5 signal2_flag=2): signal target: queue index 5 "
                         "does not exist");
  in->signal2 = 0;
  expect_error(p, &tiny, "signal2_flag without signal2 (the queue to signal)");
  in->signal2 = 1 + Q_DMA_OUT;
  in->signal = 0;
  expect_error(p, &tiny, "signal2 without signal (the queue signalled first)");
  in->signal2 = in->signal2_flag = 0;
  in->reserved[5] = 1;
  expect_error(p, &tiny, "the reserved bytes must be 0");
  prog_free(p);
  in = one(&p, I_MOV);
  in->wait = 1;
  p->queues[0].core = -1;
  expect_error(p, &tiny, "queue c1.dma0, instruction 0 (mov dst=1 dst_tile=1 src=2 src_tile=2 "
                         "bytes=4096 wait=0): flags are per core");
  in->wait = 0;
  in->wait2 = 1; /* (and without wait) */
  expect_error(p, &tiny, "queue c1.dma0, instruction 0 (mov dst=1 dst_tile=1 src=2 src_tile=2 "
                         "bytes=4096 wait2=0): flags are per core");
  in->wait2 = 0;
  in->signal2 = 1; /* (and without signal) */
  expect_error(p, &tiny, "queue c1.dma0, instruction 0 (mov dst=1 dst_tile=1 src=2 src_tile=2 "
                         "bytes=4096 signal2=dma_in): flags are per core");
  prog_free(p);
}

static void test_ids(void **state) {
  (void)state;
  GsProgram *p;
  GsInst *in = one(&p, I_MOV);
  in->r[1] = 4;
  expect_error(p, &tiny, "src: region 4 out of range (the program has ids 1..3)");
  in->r[1] = 2;
  in->t[0] = 9;
  expect_error(p, &tiny, "dst_tile: tile 9 out of range (the program has ids 1..3)");
  in->t[0] = 1;
  in->r[1] = 0;
  expect_error(p, &tiny, "src names no region");
  in->r[1] = 2;
  in->t[1] = 0;
  expect_error(p, &tiny, "src_tile: a data instruction names the tile of every region it uses");
  prog_free(p);
  /* b of a one-input vop may be 0, of a two-input vop it may not */
  in = one(&p, I_VEC);
  expect_ok(p, &tiny);
  in->sub = V_ADD;
  expect_error(p, &tiny, "b names no region");
  in->r[2] = 3;
  in->t[2] = 3;
  expect_error(p, &tiny, "b and b_elems go together"); /* b's extent is named */
  inst_vec_set_b_elems(in, 16);
  expect_ok(p, &tiny);
  in->sub = V_BNORM; /* its scale and shift are an operand too */
  expect_ok(p, &tiny);
  in->r[2] = in->t[2] = 0;
  expect_error(p, &tiny, "b names no region");
  in->sub = V_RELU;
  expect_error(p, &tiny, "b and b_elems go together"); /* an extent without an operand */
  prog_free(p);
  /* a gather's index list: idx and idx_bytes, or neither */
  in = one(&p, I_MOV);
  in->r[2] = 3;
  in->t[2] = 3;
  expect_error(p, &tiny, "idx and idx_bytes go together");
  inst_mov_set_idx_bytes(in, 8);
  expect_ok(p, &tiny);
  in->t[2] = 0;
  expect_error(p, &tiny, "idx_tile: a data instruction names the tile of every region it uses");
  prog_free(p);
  /* alloc's init tile may be 0 */
  in = one(&p, I_ALLOC);
  expect_ok(p, &tiny);
  in->r[0] = 0;
  expect_error(p, &tiny, "region names no region");
  prog_free(p);
}

static void test_alloc_places(void **state) {
  (void)state;
  GsProgram *p;
  GsInst *in = one(&p, I_ALLOC);
  inst_alloc_set_cluster(in, 2);
  expect_error(p, &tiny, "cluster 2 does not exist (arch 'tiny' has 2)");
  inst_alloc_set_cluster(in, 1);
  inst_alloc_set_core(in, 2);
  expect_error(p, &tiny, "core 2 does not exist (arch 'tiny' has 2 per cluster)");
  expect_error(p, &hetero, "core 2 (kind 'gemm') has no local buffer");
  in->sub = LVL_GB;
  expect_ok(p, &tiny); /* core is ignored for the GB: it is the cluster's */
  expect_error(p, &nogb, "arch 'tiny' has no global buffer");
  in->sub = LVL_DDR;
  inst_alloc_set_cluster(in, 7);
  expect_ok(p, &tiny); /* DDR is the chip's: cluster and core are ignored */
  prog_free(p);
}

static void test_numbers(void **state) {
  (void)state;
  GsProgram *p;
  GsInst *in = one(&p, I_MOV);
  inst_mov_set_dst_off(in, -4);
  expect_error(p, &tiny, "dst_off=-4 is negative");
  inst_mov_set_dst_off(in, 0);
  inst_mov_set_bytes(in, 0);
  expect_error(p, &tiny, "bytes must be positive");
  inst_mov_set_bytes(in, 4096);
  inst_mov_set_rows(in, 3);
  expect_error(p, &tiny, "bytes=4096 is not a multiple of rows=3 x planes=1");
  inst_mov_set_rows(in, 4);
  inst_mov_set_planes(in, 8); /* 4 rows x 8 planes = 32, divides 4096 */
  expect_ok(p, &tiny);
  inst_mov_set_planes(in, INT64_MAX);
  expect_error(p, &tiny, "planes=9223372036854775807 exceeds 2^40");
  inst_mov_set_planes(in, 1);
  /* 4 rows of 1024 B 2^39 apart reach 3 x 2^39 + 1024 > 2^40; 2^38 apart, 3 x 2^38 + 1024 */
  inst_mov_set_src_stride(in, (int64_t)1 << 39);
  expect_error(p, &tiny, "the pattern reaches past byte 2^40");
  inst_mov_set_src_stride(in, (int64_t)1 << 38);
  expect_ok(p, &tiny);
  prog_free(p);
  in = one(&p, I_GEMM); /* 2^20 x 2^10 x 2^10 = 2^40 MACs: the most */
  inst_gemm_set_m(in, 1 << 20);
  inst_gemm_set_n(in, 1 << 10);
  inst_gemm_set_k(in, 1 << 10);
  expect_ok(p, &tiny);
  inst_gemm_set_reps(in, 1); /* reps 0 and 1 are one run */
  expect_ok(p, &tiny);
  inst_gemm_set_k(in, 1 << 9); /* 2^39 MACs twice: the most; three times: too many */
  inst_gemm_set_reps(in, 2);
  expect_ok(p, &tiny);
  inst_gemm_set_reps(in, 3);
  expect_error(p, &tiny, "m x n x k x reps = 549755813888 x 3 exceeds 2^40 multiply-accumulates");
  inst_gemm_set_reps(in, -1);
  expect_error(p, &tiny, "reps=-1 is negative");
  inst_gemm_set_reps(in, 0);
  inst_gemm_set_k(in, (1 << 10) + 1);
  expect_error(p, &tiny, "m x n x k = 1048576 x 1024 x 1025 exceeds 2^40 multiply-accumulates");
  inst_gemm_set_m(in, (int64_t)1 << 32); /* each below 2^40, their product far beyond 2^64 */
  inst_gemm_set_n(in, (int64_t)1 << 32);
  inst_gemm_set_k(in, (int64_t)1 << 32);
  expect_error(p, &tiny, "exceeds 2^40 multiply-accumulates");
  prog_free(p);
  in = one(&p, I_SCALAR);
  inst_scalar_set_ops(in, ((int64_t)1 << 40) + 1);
  expect_error(p, &tiny, "ops=1099511627777 exceeds 2^40");
  inst_scalar_set_ops(in, (int64_t)1 << 40);
  expect_ok(p, &tiny);
  prog_free(p);
  in = one(&p, I_BARRIER);
  inst_barrier_set_count(in, 0);
  expect_error(p, &tiny, "count must be positive");
  prog_free(p);
}

/* One transfer never writes a byte twice: destination rows and planes may not overlap (4096 B
 * as 4 rows of 1024 B need a stride of 1024 or more; 4 x 8 planes of 128 B rows with stride
 * 128 need a plane stride of 3 x 128 + 128 = 512); source rows may (a sliding window). */
static void test_overlapping_rows(void **state) {
  (void)state;
  GsProgram *p;
  GsInst *in = one(&p, I_MOV);
  inst_mov_set_rows(in, 4);
  inst_mov_set_dst_stride(in, 1000);
  expect_error(p, &tiny, "dst_stride=1000 is shorter than a row (1024 bytes): the rows overlap");
  inst_mov_set_dst_stride(in, 1024);
  expect_ok(p, &tiny);
  inst_mov_set_src_stride(in, 512); /* overlapping source rows are fine */
  expect_ok(p, &tiny);
  inst_mov_set_src_stride(in, 0);
  inst_mov_set_planes(in, 8);
  inst_mov_set_dst_stride(in, 128);
  inst_mov_set_dst_pstride(in, 511);
  expect_error(p, &tiny, "dst_pstride=511 is shorter than a plane (512 bytes): the planes overlap");
  inst_mov_set_dst_pstride(in, 512);
  expect_ok(p, &tiny);
  prog_free(p);
}

/* Grouped and windowed vector ops need 1 <= param <= elems. */
static void test_vec_param(void **state) {
  (void)state;
  GsProgram *p;
  GsInst *in = one(&p, I_VEC);
  in->sub = V_SOFTMAX;
  expect_error(p, &tiny, "vec softmax needs 1 <= param <= elems (param=0, elems=1024)");
  inst_vec_set_param(in, 2048);
  expect_error(p, &tiny, "vec softmax needs 1 <= param <= elems (param=2048, elems=1024)");
  inst_vec_set_param(in, 64);
  expect_ok(p, &tiny);
  in->sub = V_POOLMAX;
  inst_vec_set_param(in, 0);
  expect_error(p, &tiny, "vec poolmax needs 1 <= param <= elems");
  inst_vec_set_param(in, 4); /* window reads: a's extent must be named */
  expect_error(p, &tiny, "vec poolmax reads elements of a again: a_elems must name how many a holds");
  inst_vec_set_a_elems(in, 256);
  expect_ok(p, &tiny);
  in->sub = V_RELU; /* elementwise: param is a window (a depthwise conv's), a_elems needed */
  inst_vec_set_a_elems(in, 0);
  expect_error(p, &tiny, "vec relu with a window param reads elements of a again");
  inst_vec_set_param(in, 0);
  expect_ok(p, &tiny);
  inst_vec_set_elem_bytes(in, 3); /* a stored element is 1, 2, 4 or 8 bytes */
  expect_error(p, &tiny, "elem_bytes=3: a stored element is 1, 2, 4 or 8 bytes");
  inst_vec_set_elem_bytes(in, 2);
  expect_ok(p, &tiny);
  prog_free(p);
}

static void test_unused_fields(void **state) {
  (void)state;
  GsProgram *p;
  GsInst *in = one(&p, I_FREE);
  isa_inst_set_field(in, OPF_NUM, 5, 3);
  expect_error(p, &tiny, "field n5 is not used by free and must be 0");
  isa_inst_set_field(in, OPF_NUM, 5, 0);
  in->t[2] = 1;
  expect_error(p, &tiny, "field t2 is not used by free and must be 0");
  in->t[2] = 0;
  in->dtype = 1;
  expect_error(p, &tiny, "field dtype is not used by free and must be 0");
  in->dtype = 0;
  in->flags = 1;
  expect_error(p, &tiny, "field flags is not used by free and must be 0");
  in->flags = 0;
  in->sub = 1;
  expect_error(p, &tiny, "field sub is not used by free and must be 0");
  prog_free(p);
}

/* Every field of every opcode, from isa.def's operand table: a region, tile or number field the
 * opcode does not name is an error when not 0, and every integer operand it names is an error
 * when negative or above 2^40 (the checks test n[] four fields at a time: every index here,
 * n8 and n9 included, which no vector holds). */
static void test_every_field(void **state) {
  (void)state;
  static const char *const kind[] = {"r", "t", "n"};
  const GsOperandField fld[] = {OPF_REGION, OPF_TILE, OPF_NUM};
  char want[128];
  for (int op = 0; op < I_COUNT; op++)
    for (int f = 0; f < 3; f++)
      for (int k = 0; k < (f < 2 ? 3 : GS_INST_NUM); k++) {
        const GsOperand *named = NULL;
        for (int i = 0; i < isa_operand_count((GsOpcode)op); i++) {
          const GsOperand *o = isa_operand((GsOpcode)op, i);
          if (o->field == fld[f] && o->index == k) named = o;
        }
        GsProgram *p;
        GsInst *in = one(&p, (GsOpcode)op);
        if (!named) {
          isa_inst_set_field(in, fld[f], k, 1);
          snprintf(want, sizeof want, "field %s%d is not used by %s and must be 0", kind[f], k,
                   isa_mnemonic((GsOpcode)op));
          expect_error(p, &tiny, want);
        } else if (named->kind == OPK_INT) {
          isa_inst_set_field(in, fld[f], k, ((int64_t)1 << 40) + 1);
          snprintf(want, sizeof want, "%s=1099511627777 exceeds 2^40", named->name);
          expect_error(p, &tiny, want);
          isa_inst_set_field(in, fld[f], k, -1);
          snprintf(want, sizeof want, "%s=-1 is negative", named->name);
          expect_error(p, &tiny, want);
        }
        prog_free(p);
      }
}

/* Every error is reported, in program order, not only the first. */
static void test_all_reported(void **state) {
  (void)state;
  GsProgram *p;
  GsInst *in = one(&p, I_GEMM);
  inst_gemm_set_m(in, 0);
  in->dtype = DT_FP32;
  GsInst first = *in; /* in is valid until the next prog_emit on its queue */
  GsInst *in2 = prog_emit(&p->queues[0]);
  *in2 = first;
  inst_gemm_set_m(in2, 16);
  int rc;
  char *msg = check(p, &tiny, &rc);
  assert_int_equal(rc, -1);
  const char *a = strstr(msg, "instruction 0 (gemm"), *b = strstr(msg, "instruction 1 (gemm");
  assert_non_null(a);
  assert_non_null(b);
  assert_true(a < b);
  int lines = 0;
  for (const char *c = msg; *c; c++) lines += *c == '\n';
  assert_int_equal(lines, 3); /* m positive and dtype on 0, dtype on 1 */
  free(msg);
  prog_free(p);
}

/* A program of 4 queues x 300 k signals (1.2 M instructions) on cores 0 and 1 of cluster 0,
 * so prog_check splits it: queues 0 and 1 (600 k instructions, the first half) on the caller's
 * thread, 2 and 3 on another. Signal `bad[k]` of queue k (-1: none) names flag -1. */
enum { SPLIT_PER_QUEUE = 300000 };
static GsProgram *split_program(const int bad[4]) {
  GsProgram *p = prog_new();
  for (int k = 0; k < 4; k++) {
    GsQueue *q = prog_queue(p, 0, k / 2, k % 2);
    for (int i = 0; i < SPLIT_PER_QUEUE; i++) {
      GsInst *in = prog_emit(q);
      in->op = I_SIGNAL;
      in->sub = (uint8_t)(1 - k % 2); /* the other DMA queue of the core */
      inst_signal_set_flag(in, i == bad[k] ? -1 : i % 4);
    }
  }
  return p;
}

/* The two halves checked at once report what one pass does: the messages of both, the first
 * half's first, and no more than max_errors of them. */
static void test_split_halves(void **state) {
  (void)state;
  static const int none[4] = {-1, -1, -1, -1}, second[4] = {-1, -1, -1, 5},
                   both[4] = {7, -1, 9, -1};
  GsProgram *p = split_program(none);
  assert_true(prog_ninsts(p) >= PROG_CHECK_SPLIT_MIN);
  expect_ok(p, &tiny);
  prog_free(p);
  p = split_program(second);
  int rc;
  char *msg = check(p, &tiny, &rc);
  assert_int_equal(rc, -1);
  assert_string_equal(msg, "f.gtp: error: queue c0.k1.dma_out, instruction 5 (signal "
                           "queue=dma_in flag=-1): flag=-1 is negative\n");
  free(msg);
  prog_free(p);
  p = split_program(both);
  msg = check(p, &tiny, &rc);
  assert_string_equal(msg, "f.gtp: error: queue c0.k0.dma_in, instruction 7 (signal "
                           "queue=dma_out flag=-1): flag=-1 is negative\n"
                           "f.gtp: error: queue c0.k1.dma_in, instruction 9 (signal "
                           "queue=dma_out flag=-1): flag=-1 is negative\n");
  free(msg);
  int nerrors;
  msg = check_max(p, &tiny, 1, &rc, &nerrors);
  assert_int_equal(nerrors, 2);
  assert_non_null(strstr(msg, "c0.k0.dma_in, instruction 7"));
  assert_null(strstr(msg, "c0.k1.dma_in"));
  free(msg);
  prog_free(p);
}

/* ---- the check while a program is emitted (prog_check_begin) ---- */

/* A program emitted in 20 "kernels", each publishing to cr (NULL: none) when it is done: a
 * kernel makes a region and a tile and gives each of 4 queues of cluster 0 (dma_in and dma_out
 * of cores 0 and 1) 1000 signals and a mov into the new region. Signal `bad` (counted over the
 * whole program, -1: none) names flag -1. With RUN_LATE the first kernel's mov names the region
 * the second kernel makes (it exists when the program is done); RUN_STRAY adds a queue of a
 * cluster tiny does not have; RUN_BAD_LAST makes the program's last instruction (staged at
 * every publication) a mov of 0 bytes; RUN_FIX_STAGED publishes the first kernel's first mov
 * with 0 bytes, staged, and mends it before the queue's next instruction, as an emitter may;
 * RUN_ATTACH attaches the program to cr, whose thread then encodes and checks queues 1 and 2
 * (prog_check_takes; 40 k instructions: the thread's ring of 16 k goes round twice). */
enum { RUN_KERNELS = 20, RUN_SIGNALS = 1000 };
enum { RUN_LATE = 1, RUN_STRAY = 2, RUN_BAD_LAST = 4, RUN_FIX_STAGED = 8, RUN_ATTACH = 16 };
static GsProgram *run_program(GsCheckRun *cr, long bad, unsigned flags) {
  GsProgram *p = prog_new();
  if (flags & RUN_ATTACH) prog_check_attach(cr, p);
  long n = 0;
  GsInst *mend = NULL;
  for (int k = 0; k < RUN_KERNELS; k++) {
    uint32_t r = prog_new_region(p, NULL), t = prog_new_tile(p, NULL);
    for (int q = 0; q < 4; q++) {
      GsQueue *qu = prog_queue(p, 0, q / 2, q % 2);
      if (mend && q == 0) { /* still staged: the queue's next instruction comes now */
        inst_mov_set_bytes(mend, 64);
        mend = NULL;
      }
      for (int i = 0; i < RUN_SIGNALS; i++, n++) {
        GsInst *in = prog_emit(qu);
        in->op = I_SIGNAL;
        in->sub = (uint8_t)(1 - q % 2);
        inst_signal_set_flag(in, n == bad ? -1 : i % 4);
      }
      GsInst *in = prog_emit(qu);
      in->op = I_MOV;
      in->r[0] = flags & RUN_LATE && k == 0 ? r + 1 : r, in->t[0] = t, in->r[1] = r, in->t[1] = t;
      int zero = (flags & RUN_BAD_LAST && k == RUN_KERNELS - 1 && q == 3) ||
                 (flags & RUN_FIX_STAGED && k == 0 && q == 0);
      inst_mov_set_bytes(in, zero ? 0 : 64);
      if (flags & RUN_FIX_STAGED && k == 0 && q == 0) mend = in;
    }
    if (flags & RUN_STRAY && k == 3) prog_emit(prog_queue(p, 7, 0, 0))->op = I_FREE;
    prog_check_publish(cr, p);
  }
  prog_new_region(p, NULL); /* the one a late mov names */
  return p;
}

/* What prog_check_end returns and prints for run_program(bad, flags) checked as it is emitted
 * is what prog_check returns and prints for the finished program; *rc: that result. */
static void expect_run_as_check(long bad, unsigned flags, int *rc) {
  GsCheckRun *cr = prog_check_begin(&tiny);
  GsProgram *p = run_program(cr, bad, flags);
  int nerrors, want_rc;
  char *buf = check_max_run(p, &tiny, 50, rc, &nerrors, cr);
  char *want = check(p, &tiny, &want_rc);
  assert_int_equal(*rc, want_rc);
  assert_string_equal(buf, want);
  free(buf);
  free(want);
  prog_free(p);
}

static void test_check_while_emitted(void **state) {
  (void)state;
  long per_kernel = 4 * (RUN_SIGNALS + 1);
  int rc;
  for (unsigned attach = 0; attach <= RUN_ATTACH; attach += RUN_ATTACH) {
    expect_run_as_check(-1, attach, &rc); /* clean */
    assert_int_equal(rc, 0);
    expect_run_as_check(2 * per_kernel + 1500, attach, &rc); /* early: the thread's to find */
    assert_int_equal(rc, -1);
    /* the first signal of the last kernel's last queue */
    expect_run_as_check(RUN_KERNELS * per_kernel - 1 - RUN_SIGNALS, attach, &rc);
    assert_int_equal(rc, -1);
    expect_run_as_check(-1, RUN_STRAY | attach, &rc); /* a queue tiny does not have */
    assert_int_equal(rc, -1);
    expect_run_as_check(-1, RUN_BAD_LAST | attach, &rc); /* only the end sees the staged one */
    assert_int_equal(rc, -1);
    expect_run_as_check(-1, RUN_FIX_STAGED | attach, &rc); /* a staged one may still change */
    assert_int_equal(rc, 0);
    /* a region made after the instruction naming it was published: prog_check's verdict */
    expect_run_as_check(-1, RUN_LATE | attach, &rc);
    assert_int_equal(rc, 0);
    /* an emitter that fails halts the check before it frees the program (lower_free) */
    GsCheckRun *cr = prog_check_begin(&tiny);
    GsProgram *p = run_program(cr, 5, attach);
    prog_check_halt(cr);
    prog_free(p);
    assert_int_equal(prog_check_end(cr, NULL, NULL, "f.gtp"), 0); /* no program: nothing */
  }
}

/* A program attached to cr as it is made: ENC_CHECKED instructions in each of four queues of
 * cluster 1, core 1, made in turn (dma_in, the matrix unit, the vector unit, dma_out: the
 * thread encodes and checks the unit queues, prog_check_takes), movs on the DMA queues, gemms
 * and vector ops on the units. Instruction `at` of queue `bad` (not the first) is broken by
 * `how`: 1 a mov (not run by a unit), 2 a tile id that never exists. */
enum { ENC_CHECKED = 3000 };
static GsProgram *checked_program(GsCheckRun *cr, int bad, int at, int how) {
  GsProgram *p = prog_new();
  prog_check_attach(cr, p);
  static const int index[4] = {Q_DMA_IN, Q_UNIT0, Q_UNIT0 + 1, Q_DMA_OUT};
  assert_true(!prog_check_takes(0) && prog_check_takes(1) && prog_check_takes(2));
  for (int k = 0; k < 4; k++) prog_queue(p, 1, 1, index[k]);
  uint32_t r = prog_new_region(p, NULL), t = prog_new_tile(p, NULL);
  prog_new_region(p, NULL), prog_new_tile(p, NULL);
  for (int i = 0; i < ENC_CHECKED; i++) {
    for (int k = 0; k < 4; k++) {
      GsInst *in = prog_emit(&p->queues[k]);
      GsOpcode op = k == 0 || k == 3 || (k == bad && i == at && how == 1) ? I_MOV
                    : k == 1                                              ? I_GEMM
                                                                          : I_VEC;
      in->op = (uint8_t)op;
      in->r[0] = r, in->t[0] = k == bad && i == at && how == 2 ? t + 5 : t;
      in->r[1] = r + 1, in->t[1] = t + 1;
      if (op == I_MOV) inst_mov_set_bytes(in, 64 + i % 7);
      if (op == I_GEMM) {
        in->r[2] = r + 1, in->t[2] = t + 1, in->dtype = DT_FP16;
        inst_gemm_set_m(in, 16), inst_gemm_set_n(in, 16), inst_gemm_set_k(in, 16 + i % 3);
      }
      if (op == I_VEC) {
        in->sub = V_RELU, in->dtype = DT_FP16;
        inst_vec_set_elems(in, 1024 + i % 5);
      }
    }
    if (i % 1000 == 999) prog_check_publish(cr, p);
  }
  return p;
}

/* The instructions the thread encodes are checked there as they come, each against its own
 * queue's unit and the ids: the verdict and messages are prog_check's. An error the thread's
 * checks missed there would go unseen (the end checks only those queues' staged last ones). */
static void test_checked_as_encoded(void **state) {
  (void)state;
  static const struct { int bad, at, how, rc; } cases[] = {
      {-1, 0, 0, 0},    /* clean */
      {1, 1, 1, -1},    /* a mov on the matrix unit, early */
      {2, 2500, 1, -1}, /* a mov on the vector unit, late */
      {2, 7, 2, -1},    /* a tile that never exists */
      {1, 1500, 2, -1},
      {1, ENC_CHECKED - 1, 1, -1}, /* the last, staged: the end checks it */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    GsCheckRun *cr = prog_check_begin(&tiny);
    GsProgram *p = checked_program(cr, cases[i].bad, cases[i].at, cases[i].how);
    int rc, want_rc, nerrors;
    char *got = check_max_run(p, &tiny, 50, &rc, &nerrors, cr);
    char *want = check(p, &tiny, &want_rc);
    assert_int_equal(want_rc, cases[i].rc);
    assert_int_equal(rc, want_rc);
    assert_string_equal(got, want);
    free(got);
    free(want);
    prog_free(p);
  }
}

/* The thread's state of the queues it checks moves when queues are made after it began (a
 * hundred here, past the 64 it first keeps room for); the queue it was checking goes on. An
 * ASan build sees a check through the state's old place. tiny with 8 clusters: 96 queues. */
static void test_checked_as_encoded_queues_made_later(void **state) {
  (void)state;
  GsArch wide = tiny;
  wide.nclusters = 8;
  GsCheckRun *cr = prog_check_begin(&wide);
  GsProgram *p = prog_new();
  prog_check_attach(cr, p);
  prog_queue(p, 0, 0, Q_DMA_IN);
  GsQueue *q = prog_queue(p, 0, 0, Q_DMA_OUT); /* taken by the thread */
  assert_true(prog_check_takes(1));
  uint32_t r = prog_new_region(p, NULL), t = prog_new_tile(p, NULL);
  for (int i = 0; i < 6000; i++) {
    if (i == 3000) { /* every other queue of the chip, made now */
      for (int c = 0; c < wide.nclusters; c++)
        for (int k = -1; k < 2; k++)
          for (int x = 0; x < (k < 0 ? wide.dma_engines : Q_UNIT0 + 3); x++) prog_queue(p, c, k, x);
      q = &p->queues[1];
      prog_check_publish(cr, p);
    }
    GsInst *in = prog_emit(q);
    in->op = I_MOV;
    in->r[0] = in->r[1] = r, in->t[0] = in->t[1] = t;
    inst_mov_set_bytes(in, 64);
    in->signal = 1 + Q_DMA_IN; /* a signal target: checked against the queue's core */
  }
  assert_true(p->nqueues > 64);
  int rc, want_rc, nerrors;
  char *got = check_max_run(p, &wide, 50, &rc, &nerrors, cr);
  char *want = check(p, &wide, &want_rc);
  assert_int_equal(want_rc, 0);
  assert_int_equal(rc, 0);
  assert_string_equal(got, want);
  free(got);
  free(want);
  prog_free(p);
}

/* Appends prog_code_export's pieces to the memstream ctx. */
static void put_stream(void *ctx, const void *b, size_t n) { fwrite(b, 1, n, ctx); }

/* A queue's records as prog_code_export gives them (caller frees), their size in *n. */
static char *queue_bytes(const GsQueue *q, size_t *n) {
  char *buf = NULL;
  FILE *m = open_memstream(&buf, n);
  prog_code_export(q, put_stream, m);
  fclose(m);
  return buf;
}

/* Queue k gets up to 30 k instructions whose fields step by k and turn over at odd periods,
 * so that the encoder's rows and strides are at work; queues 3 and 4 start at the 1000th. With
 * cr the program is attached to it at instruction attach_at (0: before any queue is made;
 * ENC_LATE: after queues 0-2, before 3 and 4), and then the queues prog_check_takes are
 * encoded on the thread (whose checks fail at once on these instructions: it goes on encoding). Attached or
 * not, and however the two threads interleave, each queue's records are the same bytes, and
 * the attachment is gone after the halt. */
enum { ENC_QUEUES = 5, ENC_PER_QUEUE = 30000, ENC_LATE = 1000 };
static GsProgram *encode_program(GsCheckRun *cr, int attach_at) {
  GsProgram *p = prog_new();
  for (int i = 0; i < ENC_PER_QUEUE; i++) {
    for (int k = 0; k < ENC_QUEUES; k++) {
      if (cr && i == attach_at && k == 0) prog_check_attach(cr, p);
      if (k >= 3 && i < ENC_LATE) continue;
      GsInst *in = prog_emit(prog_queue(p, k / 2, k % 2, k % 2));
      in->op = i % 7 == 3 ? I_SIGNAL : I_MOV;
      in->t[0] = (uint32_t)(i % 1000 * (k + 1)), in->r[0] = (uint32_t)(i % 3);
      in->n[0] = (int64_t)i * (k + 2) % 4099, in->n[1] = i / 13;
    }
    if (cr && i % 977 == 0) prog_check_publish(cr, p);
  }
  return p;
}

static void test_encode_on_check_thread(void **state) {
  (void)state;
  GsProgram *want = encode_program(NULL, 0);
  int rc;
  free(check(want, &tiny, &rc));
  assert_int_equal(rc, -1); /* so the thread's checks stop, and it goes on encoding */
  for (int attach_at = 0; attach_at <= ENC_LATE; attach_at += ENC_LATE) {
    GsCheckRun *cr = prog_check_begin(&tiny);
    GsProgram *p = encode_program(cr, attach_at);
    prog_check_halt(cr);
    assert_null(p->run);
    assert_int_equal(p->nqueues, want->nqueues);
    for (int qi = 0; qi < p->nqueues; qi++) {
      const GsQueue *q = &p->queues[qi];
      const GsQueue *w = &want->queues[prog_find_queue(want, q->cluster, q->core, q->index)];
      assert_null(q->run);
      assert_int_equal(q->ninsts, w->ninsts);
      assert_int_equal(prog_queue_encoded(q), q->ninsts - 1); /* all but the staged one */
      size_t n, wn;
      char *got = queue_bytes(q, &n), *exp = queue_bytes(w, &wn);
      assert_int_equal(n, wn);
      assert_memory_equal(got, exp, n);
      free(got);
      free(exp);
    }
    prog_free(p);
    assert_int_equal(prog_check_end(cr, NULL, NULL, "f.gtp"), 0);
  }
  prog_free(want);
}

/* Without an arch prog_check still checks shapes and ranges (used by --emit). */
static void test_null_arch(void **state) {
  (void)state;
  GsProgram *p;
  GsInst *in = one(&p, I_GEMM);
  expect_ok(p, NULL);
  p->queues[0].index = Q_DMA_OUT;
  expect_error(p, NULL, "queue c1.k1.dma_out, instruction 0 (gemm");
  in->op = I_MOV; /* still the queue's last instruction, so still editable */
  expect_error(p, NULL, "idx and idx_bytes go together"); /* r2 is a mov's index list */
  prog_free(p);
}

/* The hand-built arch the ISA tests use is configs/tiny.cfg: compare with the parser's view
 * of the file, field by field for everything the assembler and prog_check read. */
static void test_tiny_matches_config(void **state) {
  (void)state;
  GsDiag d;
  diag_init(&d);
  GsArch *a = arch_load("configs/tiny.cfg", NULL, 0, &d);
  assert_non_null(a);
  assert_string_equal(a->name, tiny.name);
  assert_int_equal(a->nclusters, tiny.nclusters);
  assert_int_equal(a->dma_engines, tiny.dma_engines);
  assert_int_equal(a->gb_bytes, tiny.gb_bytes);
  assert_int_equal(a->cores_per_cluster, tiny.cores_per_cluster);
  assert_int_equal(a->ncore_kinds, tiny.ncore_kinds);
  for (int k = 0; k < a->ncore_kinds; k++) {
    const GsCoreKind *x = &a->core_kinds[k], *y = &tiny.core_kinds[k];
    assert_string_equal(x->name, y->name);
    assert_int_equal(x->count, y->count);
    assert_int_equal(x->lb_bytes, y->lb_bytes);
    assert_int_equal(x->nunits, y->nunits);
    for (int u = 0; u < x->nunits; u++) {
      const GsUnitKind *ux = &a->units[x->unit[u]], *uy = &tiny.units[y->unit[u]];
      assert_string_equal(ux->name, uy->name);
      assert_int_equal(ux->caps, uy->caps);
      for (int t = 0; t < DT_COUNT; t++) {
        assert_int_equal(ux->lanes[t], uy->lanes[t]);
        assert_true(ux->mac_rate[t] == uy->mac_rate[t]);
      }
    }
  }
  arch_free(a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_valid_each_opcode), cmocka_unit_test(test_message_format),
      cmocka_unit_test(test_queues),            cmocka_unit_test(test_engines),
      cmocka_unit_test(test_enum_operands),     cmocka_unit_test(test_flags),
      cmocka_unit_test(test_carried_sync),
      cmocka_unit_test(test_ids),               cmocka_unit_test(test_alloc_places),
      cmocka_unit_test(test_numbers),           cmocka_unit_test(test_unused_fields),
      cmocka_unit_test(test_every_field),
      cmocka_unit_test(test_all_reported),      cmocka_unit_test(test_null_arch),
      cmocka_unit_test(test_tiny_matches_config), cmocka_unit_test(test_overlapping_rows),
      cmocka_unit_test(test_vec_param),         cmocka_unit_test(test_split_halves),
      cmocka_unit_test(test_check_while_emitted),
      cmocka_unit_test(test_encode_on_check_thread),
      cmocka_unit_test(test_checked_as_encoded),
      cmocka_unit_test(test_checked_as_encoded_queues_made_later),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
