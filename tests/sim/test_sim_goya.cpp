// test_sim_goya.cpp — a heterogeneous cluster like Habana Goya: 8 TPC cores with a
// local buffer and a vector unit, plus one GEMM core WITHOUT local buffer whose matrix unit
// reads and writes the cluster's global buffer. Figures are tiny.cfg's ([A], round numbers)
// except the core mix; expected cycles are computed here.
#include "simtest.h"

static GsArch g_arch;
static Simulator *g_sim;
enum { GEMM_CORE = 8 };

static SimResult run(Prog &pr) {
  SimResult r;
  g_sim->run(pr.p, SimOptions(), &r);
  if (r.status) fprintf(stderr, "# %s", r.message.c_str());
  return r;
}

// c0.dma0 loads A and B (4096 B each) DDR -> GB: (20 + 100 + 10) + 4096/32 = 258 each, 516.
// The GEMM core's mme waits on cluster semaphore 0, multiplies 32x32x32 fp16 out of the GB:
// 8*8*8 = 512 blocks + 8 = 520, posts semaphore 1. TPC core 0 loads the 2048 B result GB -> LB:
// (20 + 10 + 2 + 5) + 2048/16 = 165, signals its vec queue, which relus 1024 fp16: 4 + 64 = 68.
static void gemm_core_without_lb_feeds_tpc(void **) {
  Prog pr;
  uint32_t ta = pr.tile("A"), tb = pr.tile("B"), tc = pr.tile("C"), ty = pr.tile("Y");
  uint32_t da = pr.region("A.ddr"), db = pr.region("B.ddr"), ga = pr.region("A.gb"), gb = pr.region("B.gb");
  uint32_t gc = pr.region("C.gb"), lc = pr.region("C.lb"), ly = pr.region("Y.lb");
  QRef dma = pr.q(0, -1, 0), mme = pr.q(0, GEMM_CORE, 2), in = pr.q(0, 0, 0), vec = pr.q(0, 0, 2);
  pr.alloc(dma, da, LVL_DDR, 0, 0, 0, 4096, ta);
  pr.alloc(dma, db, LVL_DDR, 0, 0, 4096, 4096, tb);
  pr.alloc(dma, ga, LVL_GB, 0, 0, 0, 4096);
  pr.alloc(dma, gb, LVL_GB, 0, 0, 4096, 4096);
  pr.alloc(dma, gc, LVL_GB, 0, 0, 8192, 2048);
  pr.mov(dma, ga, ta, da, ta, 4096);
  pr.mov(dma, gb, tb, db, tb, 4096);
  pr.sem(dma, true, SCOPE_CLUSTER, 0);
  pr.sem(mme, false, SCOPE_CLUSTER, 0);
  pr.gemm(mme, gc, tc, ga, ta, gb, tb, 32, 32, 32, DT_FP16);
  pr.sem(mme, true, SCOPE_CLUSTER, 1);
  pr.sem(in, false, SCOPE_CLUSTER, 1);
  pr.alloc(in, lc, LVL_LB, 0, 0, 0, 2048);
  pr.alloc(in, ly, LVL_LB, 0, 0, 2048, 2048);
  pr.mov(in, lc, tc, gc, tc, 2048);
  pr.signal(in, 2, 0);
  pr.wait(vec, 0);
  pr.vec(vec, V_RELU, ly, ty, lc, tc, 1024, DT_FP16);
  SimResult r = run(pr);
  assert_int_equal(r.status, 0);
  assert_int_equal(r.cycles, 2 * 258 + 520 + 165 + 68);
  assert_int_equal((int64_t)r.stats.get("q.c0.k8.mme.macs"), 32 * 32 * 32);
}

static void gemm_core_has_no_lb_and_no_vector_unit(void **) {
  Prog pr;
  pr.alloc(pr.q(0, GEMM_CORE, 2), pr.region("x"), LVL_LB, 0, GEMM_CORE, 0, 64);
  SimResult r = run(pr);
  assert_int_equal(r.status, 2);
  assert_true(r.message.find("queue c0.k8.mme, instruction 0 (alloc") != std::string::npos);
  assert_true(r.message.find("core 8 (kind 'gemm') has no local buffer") != std::string::npos);
  Prog p3;  // the GEMM core kind has no DMA engine (dma_engines = 0)
  QRef d = p3.q(0, GEMM_CORE, 0);
  uint32_t t = p3.tile("t"), a = p3.region("a"), b = p3.region("b");
  p3.alloc(d, a, LVL_GB, 0, 0, 0, 64, t);
  p3.alloc(d, b, LVL_GB, 0, 0, 64, 64);
  p3.mov(d, b, t, a, t, 64);
  r = run(p3);
  assert_int_equal(r.status, 2);
  assert_true(r.message.find("queue c0.k8.dma_in: core kind 'gemm' has no DMA engine (dma_engines = 0)") != std::string::npos);
  Prog p2;  // queue 3 does not exist on the GEMM core (dma_in, dma_out, mme)
  p2.scalar(p2.q(0, GEMM_CORE, 3), 1);
  r = run(p2);
  assert_int_equal(r.status, 2);
  assert_true(r.message.find("queue c0.k8.q3: ") != std::string::npos);
}

int sc_main(int, char **) {
  tiny_arch(&g_arch);
  g_arch.nclusters = 1;
  g_arch.gb_bytes = 1 << 20;
  g_arch.ncore_kinds = 2;
  GsCoreKind *tpc = &g_arch.core_kinds[0], *gemm = &g_arch.core_kinds[1];
  tpc->name = "tpc";
  tpc->count = 8;
  tpc->lb_bytes = 80 << 10;
  tpc->nunits = 1;
  tpc->unit[0] = 1;  // vec
  *gemm = *tpc;
  gemm->name = "gemm";
  gemm->count = 1;
  gemm->lb_bytes = 0;
  gemm->dma_engines = 0;
  gemm->unit[0] = 0;  // mme
  g_arch.cores_per_cluster = 9;
  g_sim = new Simulator(&g_arch);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(gemm_core_without_lb_feeds_tpc),
      cmocka_unit_test(gemm_core_has_no_lb_and_no_vector_unit),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  delete g_sim;
  return rc;
}
