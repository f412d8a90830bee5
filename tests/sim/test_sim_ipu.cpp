// test_sim_ipu.cpp — an IPU-GC2-like chip (2 IPUs x 1216 tiles, no shared SRAM):
// 2 clusters x 1216 cores = 2432 cores, no GB, each core one unit that does both matrix and
// vector work (queues dma_in, dma_out, ipu: 7296 queues). Figures are tiny.cfg's otherwise.
#include "simtest.h"

static GsArch g_arch;
static Simulator *g_sim;
enum { CORES = 1216, Q_IPU = 2 };

// Every core relus 256 fp16 out of its LB (4 + 256/16 = 20 cycles) and joins chip barrier 0
// (count 2432, the episode ends at 20). Then c0.k5 sends 1024 B to c1.k1215's LB across the
// cluster link: (20 + 2 + 2 + 5 + 10) + 1024/16 = 103. Total 123.
static void all_cores_then_exchange(void **) {
  Prog pr;
  uint32_t tx = pr.tile("x"), ty = pr.tile("y");
  for (int c = 0; c < 2; c++)
    for (int k = 0; k < CORES; k++) {
      QRef q = pr.q(c, k, Q_IPU);
      uint32_t a = pr.region(nullptr), o = pr.region(nullptr);
      pr.alloc(q, a, LVL_LB, c, k, 0, 512, tx);
      pr.alloc(q, o, LVL_LB, c, k, 512, 512);
      pr.vec(q, V_RELU, o, ty, a, tx, 256, DT_FP16);
      pr.barrier(q, SCOPE_CHIP, 0, 2 * CORES);
      if (c == 0 && k == 5) pr.signal(q, 1, 0);
    }
  QRef out = pr.q(0, 5, 1);
  uint32_t src = pr.region("src"), dst = pr.region("dst");
  pr.alloc(out, src, LVL_LB, 0, 5, 1024, 1024, tx);
  pr.alloc(out, dst, LVL_LB, 1, CORES - 1, 1024, 1024);
  pr.wait(out, 0);
  pr.mov(out, dst, tx, src, tx, 1024);
  SimResult r;
  g_sim->run(pr.p, SimOptions(), &r);
  if (r.status) fprintf(stderr, "# %s", r.message.c_str());
  assert_int_equal(r.status, 0);
  assert_int_equal(r.cycles, 20 + 39 + 1024 / 16);
  assert_int_equal(r.episodes.size(), 1);
  assert_int_equal(r.episodes[0].cycle, 20);
  assert_int_equal((int64_t)r.stats.get("instructions"), 2 * CORES * 4 + 1 + 4);
}

static void no_gb(void **) {
  Prog pr;
  pr.alloc(pr.q(1, 7, 0), pr.region("g"), LVL_GB, 1, 0, 0, 64);
  SimResult r;
  g_sim->run(pr.p, SimOptions(), &r);
  assert_int_equal(r.status, 2);
  assert_true(r.message.find("queue c1.k7.dma_in, instruction 0 (alloc") != std::string::npos);
  assert_true(r.message.find("has no global buffer") != std::string::npos);
}

int sc_main(int, char **) {
  tiny_arch(&g_arch);
  g_arch.gb_bytes = 0;
  GsCoreKind *k = &g_arch.core_kinds[0];
  k->name = "tile";
  k->count = CORES;
  k->lb_bytes = 256 << 10;
  k->nunits = 1;
  k->unit[0] = 3;
  GsUnitKind *u = &g_arch.units[3];
  *u = g_arch.units[1];  // vec's lanes and costs
  u->name = "ipu";
  u->caps = CAP_MATRIX | CAP_VECTOR;
  u->shape = MAT_CUBE;
  u->cube_m = u->cube_n = u->cube_k = 4;
  u->mac_rate[DT_FP16] = 1;
  g_arch.nunit_kinds = 4;
  g_arch.cores_per_cluster = CORES;
  g_sim = new Simulator(&g_arch);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(all_cores_then_exchange),
      cmocka_unit_test(no_gb),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  delete g_sim;
  return rc;
}
