/* isa_testlib.h — shared by the ISA tests (include after cmocka.h).
 * tiny_arch(): configs/tiny.cfg as a GsArch filled by hand, for the ISA tests (they must
 * not depend on the config parser; test_isa_check compares it with arch_load of the file).
 * Only the fields the assembler and prog_check read are filled. A second core kind
 * "gemm" (no LB; units mme, scl) is added when `hetero` is set, to test queue names across
 * core kinds (like Goya's TPC + GEMM cores). */
#ifndef GS_ISA_TESTLIB_H
#define GS_ISA_TESTLIB_H
#include <stdio.h>
#include <string.h>

#include "prog.h"

static inline void tiny_arch(GsArch *a, int hetero) {
  memset(a, 0, sizeof *a);
  a->name = "tiny";
  a->clock_mhz = 1000;
  a->nclusters = 2;
  a->ddr_channels = 2;
  a->gb_bytes = 256 * 1024;
  a->dma_engines = 2;
  a->nunit_kinds = 3;
  GsUnitKind *m = &a->units[0], *v = &a->units[1], *s = &a->units[2];
  m->name = "mme";
  m->caps = CAP_MATRIX;
  m->shape = MAT_CUBE;
  m->cube_m = m->cube_n = m->cube_k = 4;
  m->mac_rate[DT_FP16] = 1;
  m->mac_rate[DT_INT8] = 2;
  v->name = "vec";
  v->caps = CAP_VECTOR;
  v->lanes[DT_FP16] = 16;
  v->lanes[DT_FP32] = 8;
  v->lanes[DT_INT8] = 32;
  s->name = "scl";
  s->caps = CAP_SCALAR;
  s->scalar_ops_per_cycle = 1;
  GsCoreKind *k = &a->core_kinds[0];
  k->name = "pe";
  k->count = 2;
  k->lb_bytes = 64 * 1024;
  k->nunits = 3;
  k->unit[0] = 0;
  k->unit[1] = 1;
  k->unit[2] = 2;
  k->dma_engines = 1;
  a->ncore_kinds = 1;
  if (hetero) {
    GsCoreKind *g = &a->core_kinds[1];
    g->name = "gemm";
    g->count = 1;
    g->lb_bytes = 0;
    g->nunits = 2;
    g->unit[0] = 0; /* mme */
    g->unit[1] = 2; /* scl: queue 3 is vec on pe cores, scl on this one */
    a->ncore_kinds = 2;
  }
  a->cores_per_cluster = hetero ? 3 : 2;
}

/* p as assembly text (gtasm_write; caller frees). */
static inline char *disassemble(const GsProgram *p, const GsArch *a) {
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  assert_int_equal(gtasm_write(m, a, p), 0);
  fclose(m);
  return buf;
}

/* Instruction i of queue q, decoded into one of four rotating slots (so two can be compared). */
static inline const GsInst *inst(const GsProgram *p, int q, size_t i) {
  static GsInst slot[4];
  static int next;
  static GsCursor cur;
  assert_true(q < p->nqueues);
  assert_true((int64_t)i < p->queues[q].ninsts);
  prog_cursor_init(&cur, &p->queues[q]);
  const GsInst *in = NULL;
  for (size_t k = 0; k <= i; k++) in = prog_cursor_next(&cur);
  next = (next + 1) % 4;
  slot[next] = *in;
  return &slot[next];
}

static inline void assert_same_program(const GsProgram *a, const GsProgram *b) {
  assert_int_equal(a->nqueues, b->nqueues);
  assert_int_equal(a->nregions, b->nregions);
  assert_int_equal(a->ntiles, b->ntiles);
  for (int q = 0; q < a->nqueues; q++) {
    assert_int_equal(a->queues[q].cluster, b->queues[q].cluster);
    assert_int_equal(a->queues[q].core, b->queues[q].core);
    assert_int_equal(a->queues[q].index, b->queues[q].index);
    assert_int_equal(a->queues[q].ninsts, b->queues[q].ninsts);
    GsInst *xa = prog_queue_array(&a->queues[q]), *ya = prog_queue_array(&b->queues[q]);
    for (int64_t i = 0; i < a->queues[q].ninsts; i++) {
      const GsInst *x = &xa[i], *y = &ya[i];
      assert_int_equal(x->op, y->op);
      assert_int_equal(x->sub, y->sub);
      assert_int_equal(x->dtype, y->dtype);
      assert_int_equal(x->flags, y->flags);
      for (int k = 0; k < 3; k++) {
        assert_int_equal(x->r[k], y->r[k]);
        assert_int_equal(x->t[k], y->t[k]);
      }
      for (int k = 0; k < GS_INST_NUM; k++)
        assert_int_equal(isa_inst_field(x, OPF_NUM, k), isa_inst_field(y, OPF_NUM, k));
    }
    free(xa);
    free(ya);
  }
  for (uint32_t i = 0; i < a->ntiles; i++) {
    const char *x = prog_name(a, 1, i), *y = prog_name(b, 1, i);
    assert_true((x == NULL) == (y == NULL));
    if (x) assert_string_equal(x, y);
  }
  for (uint32_t i = 0; i < a->nregions; i++) {
    const char *x = prog_name(a, 0, i), *y = prog_name(b, 0, i);
    assert_true((x == NULL) == (y == NULL));
    if (x) assert_string_equal(x, y);
  }
}

/* every_opcode_program(): every opcode, every VOP, odd names, unnamed ids, extreme numbers. */
/* A program built through the emitter API with every opcode, every VOP, all dtypes,
 * odd names (quotes, spaces, brackets), unnamed ids, negative and 64-bit numbers. */
static inline GsProgram *every_opcode_program(void) {
  GsProgram *p = prog_new();
  uint32_t r1 = prog_new_region(p, "in[0]");
  uint32_t r2 = prog_new_region(p, "has space \"and\" quote\\");
  uint32_t r3 = prog_new_region(p, NULL);
  uint32_t t1 = prog_new_tile(p, "x.0:1$a-b");
  uint32_t t2 = prog_new_tile(p, "9starts with digit");
  uint32_t t3 = prog_new_tile(p, NULL);
  prog_reserve_ids(p, 10, 12); /* unused ids at the end survive too */
  GsQueue *q = prog_queue(p, 1, 1, Q_UNIT0 + 1); /* c1.k1.vec */
  for (int v = 0; v < V_COUNT; v++) {
    GsInst *in = prog_emit(q);
    in->op = I_VEC;
    in->sub = (uint8_t)v;
    in->r[0] = r1;
    in->t[0] = t1;
    in->r[1] = r2;
    in->t[1] = t2;
    in->r[2] = isa_vop_inputs((GsVop)v) == 2 ? r3 : 0;
    in->t[2] = isa_vop_inputs((GsVop)v) == 2 ? t3 : 0;
    inst_vec_set_elems(in, 1000 + v);
    inst_vec_set_param(in, v);
    if (in->r[2]) inst_vec_set_b_elems(in, 500 + v);
    if (isa_vop_windowed((GsVop)v, v)) inst_vec_set_a_elems(in, 2000 + v);
    inst_vec_set_dst_off(in, 2 * v);
    in->dtype = (uint8_t)(v % DT_COUNT);
  }
  q = prog_queue(p, 0, -1, 1); /* c0.dma1 */
  GsInst *in = prog_emit(q);
  in->op = I_MOV;
  in->r[0] = r1;
  in->t[0] = t1;
  in->r[1] = r3;
  in->t[1] = t3;
  inst_mov_set_bytes(in, INT64_MAX);
  inst_mov_set_dst_off(in, INT64_MAX - 1);
  inst_mov_set_src_off(in, INT64_MAX - 2);
  inst_mov_set_rows(in, INT64_MAX - 3);
  inst_mov_set_src_stride(in, INT64_MAX - 4);
  inst_mov_set_dst_stride(in, INT64_MAX - 5);
  inst_mov_set_planes(in, INT64_MAX - 6);
  inst_mov_set_src_pstride(in, INT64_MAX - 7);
  inst_mov_set_dst_pstride(in, INT64_MAX - 8);
  in->r[2] = r2; /* a gather's index list */
  in->t[2] = t2;
  inst_mov_set_idx_bytes(in, INT64_MAX - 9);
  in = prog_emit(q);
  in->op = I_SEMPOST;
  in->sub = SCOPE_CHIP;
  inst_sempost_set_id(in, 3);
  in = prog_emit(q);
  in->op = I_SEMWAIT;
  in->sub = SCOPE_CLUSTER;
  inst_semwait_set_id(in, -7); /* not valid for prog_check, but the text must carry it */
  q = prog_queue(p, 0, 0, Q_UNIT0); /* c0.k0.mme */
  in = prog_emit(q);
  in->op = I_GEMM;
  in->r[0] = 9;
  in->t[0] = 11;
  in->r[1] = r1;
  in->t[1] = t1;
  in->r[2] = r2;
  in->t[2] = t2;
  inst_gemm_set_m(in, 64);
  inst_gemm_set_n(in, 48);
  inst_gemm_set_k(in, 16);
  in->dtype = DT_INT8;
  in->flags = 1;
  in = prog_emit(q);
  in->op = I_BARRIER;
  in->sub = SCOPE_CHIP;
  inst_barrier_set_id(in, 2);
  inst_barrier_set_count(in, 4);
  in = prog_emit(q);
  in->op = I_SIGNAL;
  in->sub = Q_DMA_OUT;
  inst_signal_set_flag(in, 5);
  in = prog_emit(q);
  in->op = I_WAIT;
  inst_wait_set_flag(in, INT64_MIN);
  q = prog_queue(p, 1, 0, Q_UNIT0 + 2); /* c1.k0.scl */
  in = prog_emit(q);
  in->op = I_SCALAR;
  inst_scalar_set_ops(in, 12);
  in = prog_emit(q);
  in->op = I_ALLOC;
  in->r[0] = r3;
  in->sub = LVL_GB;
  inst_alloc_set_cluster(in, 1);
  inst_alloc_set_offset(in, 4096);
  inst_alloc_set_bytes(in, 512);
  in->t[0] = t2;
  in = prog_emit(q);
  in->op = I_FREE;
  in->r[0] = r3;
  prog_queue(p, 1, 1, Q_DMA_IN); /* an empty queue is kept */
  return p;
}

#endif
