// test_sim_matrix.cpp — matrix units of both shapes in whole runs: a tiny.cfg core whose unit
// list is cube 4x4x4 (mme), systolic 4x8 output-stationary (sos) and weight-stationary (sws).
// Expected cycles come from docs/timing.md's formulas, computed here.
#include "simtest.h"

static GsArch g_arch;
static Simulator *g_sim;
enum { Q_MME = 2, Q_SOS = 3, Q_SWS = 4 };

static int64_t gemm_on(int queue, int64_t m, int64_t n, int64_t k, GsDtype t) {
  Prog pr;
  uint32_t ta = pr.tile("a"), tb = pr.tile("b"), to = pr.tile("o");
  uint32_t a = pr.region("a"), b = pr.region("b"), o = pr.region("o");
  QRef q = pr.q(0, 0, queue);
  pr.alloc(q, a, LVL_LB, 0, 0, 0, 16384, ta);
  pr.alloc(q, b, LVL_LB, 0, 0, 16384, 16384, tb);
  pr.alloc(q, o, LVL_LB, 0, 0, 32768, 16384);
  pr.gemm(q, o, to, a, ta, b, tb, m, n, k, t);
  SimResult r;
  g_sim->run(pr.p, SimOptions(), &r);
  if (r.status) fprintf(stderr, "# %s", r.message.c_str());
  return r.status ? -1 : (int64_t)r.cycles;
}

static void cube(void **) {
  // 32x16x64: ceil(32/4)*ceil(16/4)*ceil(64/4) = 8*4*16 = 512 blocks + latency 8
  assert_int_equal(gemm_on(Q_MME, 32, 16, 64, DT_FP16), 512 + 8);
}

static void systolic_output_stationary(void **) {
  // R=4, C=8, latency 6. folds = ceil(32/4)*ceil(16/8) = 16; per fold k(64) + R + C - 2 = 74
  assert_int_equal(gemm_on(Q_SOS, 32, 16, 64, DT_FP16), 16 * 74 + 6);
  // int8 at rate 2 streams k in 32: per fold 32 + 10 = 42
  assert_int_equal(gemm_on(Q_SOS, 32, 16, 64, DT_INT8), 16 * 42 + 6);
}

static void systolic_weight_stationary(void **) {
  // folds = ceil(k/R)*ceil(n/C) = 16*2 = 32; per fold 2*4 + 8 - 2 + m(32) = 46
  assert_int_equal(gemm_on(Q_SWS, 32, 16, 64, DT_FP16), 32 * 46 + 6);
  // a tall m favours WS: m=256 n=8 k=4: OS folds 64*1, per fold 4+4+8-2 = 14 -> 896;
  // WS folds 1*1, per fold 2*4+8-2+256 = 270
  assert_int_equal(gemm_on(Q_SOS, 256, 8, 4, DT_FP16), 64 * 14 + 6);
  assert_int_equal(gemm_on(Q_SWS, 256, 8, 4, DT_FP16), 1 * 270 + 6);
}

int sc_main(int, char **) {
  tiny_arch(&g_arch);
  for (int i = 3; i < 5; i++) {
    GsUnitKind *u = &g_arch.units[i];
    memset(u, 0, sizeof *u);
    u->name = i == 3 ? "sos" : "sws";
    u->caps = CAP_MATRIX;
    u->shape = MAT_SYSTOLIC;
    u->sys_rows = 4;
    u->sys_cols = 8;
    u->dataflow = i == 3 ? DF_OUTPUT_STATIONARY : DF_WEIGHT_STATIONARY;
    u->mac_rate[DT_FP16] = 1;
    u->mac_rate[DT_INT8] = 2;
    u->matrix_latency_cycles = 6;
  }
  g_arch.nunit_kinds = 5;
  GsCoreKind *k = &g_arch.core_kinds[0];
  k->nunits = 4;
  k->unit[0] = 0;  // mme
  k->unit[1] = 3;  // sos
  k->unit[2] = 4;  // sws
  k->unit[3] = 1;  // vec
  g_sim = new Simulator(&g_arch);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cube),
      cmocka_unit_test(systolic_output_stationary),
      cmocka_unit_test(systolic_weight_stationary),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  delete g_sim;
  return rc;
}
