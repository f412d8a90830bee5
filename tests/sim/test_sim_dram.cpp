// test_sim_dram.cpp — whole runs with the DRAM efficiency model on (docs/timing.md, "DRAM
// efficiency"): configs/tiny.cfg with ddr.model = dram and round DRAM figures, so every
// expected cycle count is derived here by hand:
//   clock 1 GHz (1 ns = 1 cycle); DDR 2 channels x 16 B/cycle, interleave 256, burst 64,
//   latency 100; cluster DMA DDR -> GB: latency 20 + 100 + 10 = 130, GB port 32 B/cycle;
//   rows of 1024 B, 4 banks; tRP + tRCD = 10 + 10 = 20; refresh tRFC 200 every tREFI 1000:
//   the channel's time stretched by 1000 / (1000 - 200) = 1.25; turnarounds w->r 30, r->w 10.
// A channel's time for one transfer: (bytes_ch / 16 + misses' cost + turnaround) · 1.25, a
// miss costing the activate interval 8 less the cycles the channel's page entered last has
// streamed when it is in another bank (a whole 1024 B page: 64 cycles, so nothing), all 20 in
// the same bank.
#include "simtest.h"

static GsArch *g_arch;
static Simulator *g_sim;

static const int64_t L_DDR_GB = 20 + 100 + 10;

static SimResult run(Prog &pr) {
  SimResult r;
  g_sim->run(pr.p, SimOptions(), &r);
  if (r.status) fprintf(stderr, "# %s", r.message.c_str());
  return r;
}

// One sequential read of 65536 B from DDR address 0 into the GB: each channel gets 32768 B
// at channel addresses [0, 32768): 32 rows of 1024 B, all opened (32 misses), 512 bursts. The
// first costs 20; the other 31 open the next bank while the page before streams: hidden.
//   per channel: (32768 / 16 + 20) · 1.25 = 2068 · 1.25 = 2585 cycles
// Each 2048 B chunk gives a channel 1024 B: (64 + 20/32) · 1.25 = 80.8 cycles, more than the
// GB port's 2048 / 32 = 64, so the channels set the pace: 130 + 2585. (Without bank-level
// parallelism every miss would cost 20: 130 + (2048 + 640) · 1.25 = 3490.)
static void sequential_read(void **) {
  Prog pr;
  uint32_t t = pr.tile("x"), src = pr.region("x.ddr"), dst = pr.region("x.gb");
  QRef q = pr.q(0, -1, 0);
  pr.alloc(q, src, LVL_DDR, 0, 0, 0, 65536, t);
  pr.alloc(q, dst, LVL_GB, 0, 0, 0, 65536);
  pr.mov(q, dst, t, src, t, 65536);
  SimResult r = run(pr);
  assert_int_equal(r.status, 0);
  assert_int_equal(r.cycles, L_DDR_GB + (2048 + 20) * 5 / 4);
  assert_int_equal((int64_t)r.stats.get("ddr.row_misses"), 2 * 32);
  assert_true(r.stats.get("ddr.row_hit_rate") == (1024.0 - 64) / 1024);
  assert_int_equal((int64_t)r.stats.get("ddr.turnarounds"), 0);
  assert_true(r.stats.get("ddr.efficiency") == 2048.0 / 2585);
  // the ideal DDR would take 130 + 65536 / 32 = 2178 cycles
}

// Read, write, read on one queue, 4096 B each (2048 B per channel = 2 rows per channel):
//   read  [0, 4096):     rows 0, 1 (banks 0, 1) opened, the second hidden behind page 0:
//                        (128 + 20) · 1.25                                           = 185
//   write [4096, 8192):  rows 2, 3 (banks 2, 3) opened, both hidden behind whole pages of
//                        other banks; read->write: (128 + 10) · 1.25                  = 172.5
//   read  [0, 4096):     banks 0, 1 still hold them, write->read: (128 + 30) · 1.25 = 197.5
// Each transfer is one chunk per 2048 B (two chunks), paced by the channels (80+ > 64); the
// next starts when the previous ends: 3 · 130 + 185 + 172.5 + 197.5 = 945.
static void read_write_turnaround(void **) {
  Prog pr;
  uint32_t tx = pr.tile("x"), ty = pr.tile("y");
  uint32_t x = pr.region("x.ddr"), y = pr.region("y.ddr"), g = pr.region("x.gb"),
           h = pr.region("x2.gb");
  QRef q = pr.q(0, -1, 0);
  pr.alloc(q, x, LVL_DDR, 0, 0, 0, 4096, tx);
  pr.alloc(q, y, LVL_DDR, 0, 0, 4096, 4096);
  pr.alloc(q, g, LVL_GB, 0, 0, 0, 4096);
  pr.alloc(q, h, LVL_GB, 0, 0, 4096, 4096);
  pr.mov(q, g, tx, x, tx, 4096);
  pr.mov(q, y, ty, g, tx, 4096);
  pr.mov(q, h, tx, x, tx, 4096);
  SimResult r = run(pr);
  assert_int_equal(r.status, 0);
  assert_int_equal(r.cycles, 3 * L_DDR_GB + 555);  // 185 + 172.5 + 197.5 = 555: 945
  assert_int_equal((int64_t)r.stats.get("ddr.row_misses"), 2 * 2 + 2 * 2);
  assert_int_equal((int64_t)r.stats.get("ddr.turnarounds"), 2 * 2);
  // bursts: 3 transfers x 2048 / 64 = 32 per channel x 2 channels = 192, of which 8 opened a row
  assert_true(r.stats.get("ddr.row_hit_rate") == (192.0 - 8) / 192);
}

// The model is per run: a second run starts with every row closed and no direction, so it
// takes as long as the first.
static void state_resets_between_runs(void **) {
  for (int i = 0; i < 2; i++) {
    Prog pr;
    uint32_t t = pr.tile("x"), src = pr.region("x.ddr"), dst = pr.region("x.gb");
    QRef q = pr.q(0, -1, 0);
    pr.alloc(q, src, LVL_DDR, 0, 0, 0, 4096, t);
    pr.alloc(q, dst, LVL_GB, 0, 0, 0, 4096);
    pr.mov(q, dst, t, src, t, 4096);
    SimResult r = run(pr);
    assert_int_equal(r.status, 0);
    assert_int_equal(r.cycles, L_DDR_GB + 185);
  }
}

int sc_main(int, char **) {
  const char *sets[] = {"ddr.model=dram",    "ddr.row_bytes=1024", "ddr.banks=4",
                        "ddr.trcd_ns=10",    "ddr.trp_ns=10",      "ddr.trrd_ns=8",
                        "ddr.trfc_ns=200",   "ddr.trefi_ns=1000",  "ddr.twtr_ns=30",
                        "ddr.trtw_ns=10"};
  GsDiag d;
  diag_init(&d);
  g_arch = arch_load("configs/tiny.cfg", sets, (int)(sizeof sets / sizeof sets[0]), &d);
  if (!g_arch) return 1;
  g_sim = new Simulator(g_arch);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(sequential_read),
      cmocka_unit_test(read_write_turnaround),
      cmocka_unit_test(state_resets_between_runs),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  delete g_sim;
  arch_free(g_arch);
  return rc;
}
