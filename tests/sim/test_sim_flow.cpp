// test_sim_flow.cpp — the flow transfer model (sim/flow.h, chip.transfer_model = flow): FlowNet's
// sharing by hand, then whole runs on tiny.cfg's machine (tests/sim/simtest.h) against the same
// programs under the chunk model. Every expected time is derived here, arithmetic alongside.
#include <algorithm>
#include <cmath>
#include <vector>

#include "flow.h"
#include "simtest.h"

static GsArch g_arch;
static Simulator *g_sim;

static bool near(double a, double b) { return std::fabs(a - b) < 1e-9; }

// Resources of 1 byte per cycle, so that a use's service (bytes / bandwidth) = its bytes.
static BwResource res() {
  BwResource r;
  r.bytes_per_cycle = 1;
  return r;
}

// Alone, a flow runs at full speed: it ends after its slowest resource's service (512), and
// each resource is busy its own service.
static void flow_alone_full_speed(void **) {
  BwResource a = res(), b = res();
  FlowNet n;
  n.reset(0);
  BwUse u[2] = {{&a, 512}, {&b, 256}};
  int s = n.add(0, 7, u, 2);
  assert_true(near(n.next_end(), 512));
  std::vector<int> done;
  assert_true(std::isinf(n.step(512, &done)));
  assert_int_equal(done.size(), 1);
  assert_int_equal(done[0], 7);
  assert_false(n.flow(s).live);
  assert_true(near(a.busy, 512) && near(b.busy, 256));
  assert_int_equal(a.fl_flows.size() + b.fl_flows.size(), 0);
  assert_int_equal(a.bytes, 512);
}

// Two flows of 256 cycles on one resource, the second from cycle 128: A alone moves half of
// itself by 128; together each gets half the resource (1/512 of a transfer per cycle), so A's
// other half takes 256 more: A ends at 384, when B has moved half; B alone then ends at 512.
// The resource never idles: 512 = 2 x 256.
static void flow_staggered_share(void **) {
  BwResource r = res();
  FlowNet n;
  n.reset(0);
  BwUse u = {&r, 256};
  std::vector<int> done;
  n.add(0, 1, &u, 1);
  n.add(128, 2, &u, 1);
  assert_true(near(n.next_end(), 384));
  assert_true(near(n.step(384, &done), 512));
  assert_int_equal(done.size(), 1);
  assert_int_equal(done[0], 1);
  done.clear();
  n.step(512, &done);
  assert_int_equal(done[0], 2);
  assert_true(near(r.busy, 512));
}

// Max-min fairness: B uses r1 and r2, A only r1, C and D only r2, every service 100. r2 has
// three flows: they reach it together at u = 1/3 and hold there; r1 then has A rising alone
// over B's 1/3: A gets u = 2/3. Rates are u / 100 of a transfer per cycle.
static void flow_max_min(void **) {
  BwResource r1 = res(), r2 = res();
  FlowNet n;
  n.reset(0);
  BwUse a = {&r1, 100}, b[2] = {{&r1, 100}, {&r2, 100}}, c = {&r2, 100};
  int sa = n.add(0, 0, &a, 1), sb = n.add(0, 1, b, 2);
  int sc = n.add(0, 2, &c, 1), sd = n.add(0, 3, &c, 1);
  assert_true(near(n.flow(sb).rate, 1.0 / 300) && near(n.flow(sc).rate, 1.0 / 300));
  assert_true(near(n.flow(sd).rate, 1.0 / 300));
  assert_true(near(n.flow(sa).rate, 2.0 / 300));
  assert_true(near(n.next_end(), 150));  // A: 1 / (2/300)
}

// Max-min fairness by its definition, on random networks: flows over random subsets of up to
// six resources of random bandwidths, added at random times and ended as they finish. After
// every add and step: (1) no resource serves more than one cycle of work per cycle (the sum of
// u · service / full over its flows <= 1); (2) every flow below full speed has a bottleneck: a
// resource of its path that is full and where no flow gets a larger u. Those two properties
// define the max-min allocation (it is unique), so they check FlowNet::share however it finds
// it. A fixed seed: the same networks every run.
static uint32_t rng(uint32_t *s) {
  *s = *s * 1664525u + 1013904223u;
  return *s >> 8;
}

static void check_max_min(const FlowNet &n, const std::vector<int> &live, BwResource *rs,
                          int nres) {
  // per resource: its load (sum of u · service / full) and the largest u among its flows
  std::vector<double> load((size_t)nres, 0), top((size_t)nres, 0);
  for (int s : live)
    for (const FlowUse &u : n.flow(s).uses) {
      size_t r = (size_t)(u.res - rs);
      load[r] += n.flow(s).u * u.service / n.flow(s).full;
      top[r] = std::max(top[r], n.flow(s).u);
    }
  for (double l : load) assert_true(l <= 1 + 1e-9);
  for (int s : live) {
    const Flow &f = n.flow(s);
    if (f.u >= 1 - 1e-9) continue;
    bool bottleneck = false;
    for (const FlowUse &u : f.uses) {
      size_t r = (size_t)(u.res - rs);
      bottleneck |= load[r] >= 1 - 1e-9 && f.u >= top[r] - 1e-9;
    }
    assert_true(bottleneck);
  }
}

static void flow_random_max_min(void **) {
  uint32_t seed = 12345;
  for (int trial = 0; trial < 300; trial++) {
    BwResource rs[6];
    int nres = 2 + (int)(rng(&seed) % 5);
    for (int r = 0; r < nres; r++) rs[r].bytes_per_cycle = 1 + rng(&seed) % 64;
    FlowNet n;
    n.reset(0);
    std::vector<int> live;
    double t = 0;
    for (int k = 0; k < 12; k++) {
      BwUse uses[6];
      int nu = 0;
      for (int r = 0; r < nres; r++)
        if (rng(&seed) % 2 || (r == nres - 1 && nu == 0))
          uses[nu++] = {&rs[r], (double)(1 + rng(&seed) % 4096)};
      live.push_back(n.add(t, k, uses, nu));
      check_max_min(n, live, rs, nres);
      t += (double)(rng(&seed) % 200);
      if (rng(&seed) % 3 == 0) t = std::max(t, n.next_end());  // let some end
      std::vector<int> done;
      n.step(t, &done);
      live.erase(std::remove_if(live.begin(), live.end(), [&](int s) { return !n.flow(s).live; }),
                 live.end());
      check_max_min(n, live, rs, nres);
    }
  }
}

static SimResult run(Prog &pr, GsTransferModel m) {
  g_arch.transfer_model = m;
  SimResult r;
  g_sim->run(pr.p, SimOptions(), &r);
  g_arch.transfer_model = XFER_CHUNK;
  if (r.status) fprintf(stderr, "# %s", r.message.c_str());
  return r;
}

static const int64_t L_DDR_LB = 20 + 100 + 2 + 5;  // dma + ddr + lb + noc = 127

// Cores 0 and 1 of cluster 0 each load `bytes` from DDR into their LB; the second source
// starts at byte `second_offset` past the first's end.
static SimResult two_loads(int64_t bytes, int64_t rows, int64_t stride, int64_t second_offset,
                           GsTransferModel m) {
  Prog pr;
  uint32_t t = pr.tile("x");
  QRef qa = pr.q(0, 0, TQ_IN), qb = pr.q(0, 1, TQ_IN);
  uint32_t sa = pr.region("a.ddr"), sb = pr.region("b.ddr");
  uint32_t da = pr.region("a.lb"), db = pr.region("b.lb");
  int64_t span = rows * stride;
  pr.alloc(qa, sa, LVL_DDR, 0, 0, 0, span, t);
  pr.alloc(qb, sb, LVL_DDR, 0, 0, span + second_offset, span, t);
  pr.alloc(qa, da, LVL_LB, 0, 0, 0, bytes);
  pr.alloc(qb, db, LVL_LB, 0, 1, 0, bytes);
  for (GsInst *in : {pr.mov(qa, da, t, sa, t, bytes), pr.mov(qb, db, t, sb, t, bytes)}) {
    inst_mov_set_rows(in, rows);
    inst_mov_set_src_stride(in, stride);
  }
  SimResult r = run(pr, m);
  assert_int_equal(r.status, 0);
  return r;
}

// 16 rows of 256 B at a 512 B stride all sit in DDR channel 0 (16 B/cycle): the two loads share
// it. As flows each gets half of it from the start, so both end at 127 + 2 x 4096/16 = 639, and
// each waited 639 - 127 - 256 = 256 cycles for the other; under chunks the total is the same
// (test_sim_tiny). In channel 1 instead (256 B further) they do not meet: 127 + 256 = 383.
static void flow_runs_share_a_channel(void **) {
  SimResult r = two_loads(4096, 16, 512, 0, XFER_FLOW);
  assert_int_equal(r.cycles, L_DDR_LB + 2 * 4096 / 16);
  assert_int_equal((int64_t)r.stats.get("q.c0.k0.dma_in.stall_resource_cycles"), 256);
  assert_int_equal((int64_t)r.stats.get("q.c0.k1.dma_in.stall_resource_cycles"), 256);
  assert_true(near(r.stats.get("ddr.ch0.utilization"), 512.0 / 639.0));
  assert_int_equal(two_loads(4096, 16, 512, 0, XFER_CHUNK).cycles, L_DDR_LB + 2 * 4096 / 16);
  assert_int_equal(two_loads(4096, 16, 512, 256, XFER_FLOW).cycles, L_DDR_LB + 4096 / 16);
}

// 8192 B contiguous each: 4096 B in each DDR channel (256 cycles of it), 512 cycles on the
// core's own NoC link. Each channel carries 256 of the 512 cycles for each of the two flows:
// u = 1 for both fits (2 x 256/512 = 1), so both run at full speed: 127 + 512 = 639, nobody
// waits. So do chunks of 2048 B (1024 B, 64 cycles, on each channel; 128 on the link), each
// resource serving a chunk in its own turn: A's first takes the channels [127, 191] and its
// link [127, 255]; B's the channels [191, 255] and its own link [127, 255]: both end at 255,
// as each pair after them, the last at 639. (When a chunk held every resource of its path
// from one common start, B's chunks ran 64 cycles behind A's to the end: 703.)
static void flow_runs_pipeline_the_path(void **) {
  for (GsTransferModel m : {XFER_FLOW, XFER_CHUNK}) {
    SimResult r = two_loads(8192, 1, 8192, 0, m);
    assert_int_equal(r.cycles, L_DDR_LB + 8192 / 16);
    assert_int_equal((int64_t)r.stats.get("q.c0.k0.dma_in.stall_resource_cycles"), 0);
    assert_int_equal((int64_t)r.stats.get("q.c0.k1.dma_in.stall_resource_cycles"), 0);
  }
}

// One 4096 B transfer from (sl, cluster sc, core sk) to (dl, dc, dk), by a cluster DMA engine or
// the source core's dma_in, under flows; returns the run's cycles.
static int64_t one_mov(GsLevel sl, int sc, int sk, GsLevel dl, int dc, int dk, bool cluster_dma,
                       SimResult *out = nullptr) {
  Prog pr;
  uint32_t t = pr.tile("x");
  QRef q = cluster_dma ? pr.q(sc, -1, 0) : pr.q(sc, sk, TQ_IN);
  uint32_t s = pr.region("src"), d = pr.region("dst");
  pr.alloc(q, s, sl, sc, sk, 0, 4096, t);
  pr.alloc(q, d, dl, dc, dk, sl == dl && sc == dc && sk == dk ? 4096 : 0, 4096);
  pr.mov(q, d, t, s, t, 4096);
  SimResult r = run(pr, XFER_FLOW);
  assert_int_equal(r.status, 0);
  if (out) *out = r;
  return (int64_t)r.cycles;
}

// Alone, a transfer takes latency + bytes / the narrowest bandwidth on its path under flows as
// under chunks (docs/timing.md, "Uncontended"): the paths and figures of test_sim_tiny's
// transfer_paths. Latencies: dma 20, ddr 100, gb 10, lb 2, noc 5, cluster link 10.
static void flow_transfer_paths_alone(void **) {
  SimResult r;
  // DDR -> GB by a cluster DMA engine: DDR 32 B/cycle over both channels, GB port 32
  assert_int_equal(one_mov(LVL_DDR, 0, 0, LVL_GB, 0, 0, true, &r), 20 + 100 + 10 + 4096 / 32);
  assert_int_equal((int64_t)r.stats.get("gb.write_bytes"), 4096);
  // each DDR channel carried 2048 B at 16 B/cycle: busy 128 of the 258 cycles
  assert_true(near(r.stats.get("ddr.ch0.utilization"), 128.0 / 258.0));
  // GB -> LB: GB port 32, NoC link 16, LB port 64 -> 16
  assert_int_equal(one_mov(LVL_GB, 0, 0, LVL_LB, 0, 1, false), 20 + 10 + 2 + 5 + 4096 / 16);
  // LB -> LB across clusters: out link, cluster link and in link 16 B/cycle each
  assert_int_equal(one_mov(LVL_LB, 0, 0, LVL_LB, 1, 0, false, &r), 20 + 2 + 2 + 5 + 10 + 4096 / 16);
  assert_int_equal((int64_t)r.stats.get("cluster_link.bytes"), 4096);
  // LB -> LB inside one LB (two ports of 64: one reads, one writes): 4096 / 64
  assert_int_equal(one_mov(LVL_LB, 0, 0, LVL_LB, 0, 0, false), 20 + 2 + 2 + 4096 / 64);
  // LB -> DDR (a store): LB port, NoC link 16, DDR 32 -> 16
  assert_int_equal(one_mov(LVL_LB, 0, 1, LVL_DDR, 0, 0, false), 20 + 100 + 2 + 5 + 4096 / 16);
}

int sc_main(int, char **) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(flow_alone_full_speed),
      cmocka_unit_test(flow_staggered_share),
      cmocka_unit_test(flow_max_min),
      cmocka_unit_test(flow_random_max_min),
      cmocka_unit_test(flow_runs_share_a_channel),
      cmocka_unit_test(flow_runs_pipeline_the_path),
      cmocka_unit_test(flow_transfer_paths_alone),
  };
  return simtest_main_tiny(&g_arch, &g_sim, tests);
}
