// test_sim_tiny.cpp — whole runs on tiny.cfg's machine; every expected cycle count is derived
// here from the formula of docs/timing.md and tiny.cfg's figures (tests/sim/simtest.h).
#include "simtest.h"

static GtArch g_arch;
static Simulator *g_sim;

static SimResult run(Prog &pr, const SimOptions &o = SimOptions()) {
  SimResult r;
  g_sim->run(pr.p, o, &r);
  if (r.status) fprintf(stderr, "%s", r.message.c_str());
  return r;
}

// DDR -> LB, 4096 bytes from DDR address 0 into c0.k0's LB.
// latency = dma 20 + ddr 100 + lb 2 + noc 5 = 127 cycles.
// bandwidths: DDR 2 channels x 16 = 32 B/cycle (4096 B spread 256 B at a time over both),
// NoC link 16 B/cycle, LB port 64 B/cycle -> narrowest 16 -> 4096/16 = 256 cycles.
static void one_dma_ddr_to_lb(void **) {
  Prog pr;
  uint32_t src = pr.region("x.ddr"), dst = pr.region("x.lb"), t = pr.tile("x");
  GtQueue *q = pr.q(0, 0, TQ_IN);
  pr.alloc(q, src, LVL_DDR, 0, 0, 0, 4096, t);
  pr.alloc(q, dst, LVL_LB, 0, 0, 0, 4096);
  pr.mov(q, dst, t, src, t, 4096);
  SimResult r = run(pr);
  assert_int_equal(r.status, 0);
  assert_int_equal(r.cycles, 127 + 4096 / 16);
  assert_int_equal((int64_t)r.stats.get("ddr.read_bytes"), 4096);
  assert_int_equal((int64_t)r.stats.get("lb.write_bytes"), 4096);
}

int sc_main(int, char **) {
  tiny_arch(&g_arch);
  g_sim = new Simulator(&g_arch);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(one_dma_ddr_to_lb),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
