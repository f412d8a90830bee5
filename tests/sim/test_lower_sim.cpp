// test_lower_sim.cpp — scheduled programs on the simulator, against hand calculations from
// configs/tiny.cfg reduced to one cluster with one core (--set chip.clusters=1,
// core.pe.count=1), so that a kernel is one pipeline of tiles on one core:
//   * a compute-bound 1x1 conv: its cycles are the matrix unit's MAC time plus at most 8 %
//     (filling the pipeline, the per-gemm latency, the last store);
//   * a memory-bound 1x1 conv: its cycles are the streaming time of its input over the core's
//     NoC link plus at most 30 % (DMA set-up per transfer, the last tile's compute and store);
//   * the DDR bytes the simulator counts for a TVM kernel are inputs + weights + outputs;
//   * simulated time is never below the roofline bound.
// One Simulator per process (SystemC elaborates once): every program runs on the same one.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "sim.h"

extern "C" {
#include "graph.h"
#include "lower.h"
#include "report.h"
}

extern "C" int sc_main(int argc, char **argv);

static GsArch *g_arch;
static Simulator *g_sim;

struct Run {
  GsLowered *l;
  SimResult r;
};

static Run schedule_and_run(const char *text, GsSchedKind s) {
  GsDiag d;
  diag_init(&d);
  GsGraph *g = gtg_parse("conv.gtg", text, &d);
  if (!g) fail_msg("graph does not parse");
  GsLowerOptions o;
  lower_options_default(&o);
  o.sched = s;
  o.batch = 1;
  Run run;
  run.l = lower_run(g, g_arch, &o, &d);
  if (!run.l) fail_msg("lowering failed");
  SimOptions so;
  g_sim->run(run.l->prog, so, &run.r);
  if (run.r.status) fail_msg("simulation failed: %s", run.r.message.c_str());
  return run;
}

static void finish(Run &run) {
  GsGraph *g = run.l->graph;
  lower_free(run.l);
  graph_free(g);
}

// 1x1 conv, 256 -> 64 channels on 16x16, fp16, no bias: MACs = 16·16·64·256 = 4194304. The
// cube is 4x4x4 at rate 1 = 64 MAC/cycle and every gemm dimension is a multiple of 4 (m = 16
// pixels per output row, n = 64, k = 256), so the MAC time is exactly 4194304 / 64 = 65536
// cycles. Data: 128 KiB in + 32 KiB weights + 32 KiB out ≈ 12288 cycles at the 16 B/cycle
// link, far below: compute-bound.
static const char *conv_compute =
    "gtg 1\nmodel cc batch=1 dtype=fp16\ninput x: fp16[N, 256, 16, 16]\n"
    "y = conv2d(x) units=64 kernel=1 bias=0\n";

static void conv_compute_bound(void **) {
  Run run = schedule_and_run(conv_compute, SCHED_TVM);
  double mac_cycles = 16.0 * 16 * 64 * 256 / 64;
  assert_true((double)run.r.cycles >= mac_cycles);
  assert_true((double)run.r.cycles <= mac_cycles * 1.08);
  // the TVM kernel moves inputs + weights once in, outputs once out
  double in = 256.0 * 16 * 16 * 2, w = 64.0 * 256 * 2, out = 64.0 * 16 * 16 * 2;
  assert_true(run.r.stats.get("ddr.read_bytes") == in + w);
  assert_true(run.r.stats.get("ddr.write_bytes") == out);
  assert_int_equal(run.l->tally.task[0].ddr_read, (int64_t)(in + w));
  finish(run);
}

// 1x1 conv, 4 -> 4 channels on 128x128: MACs = 16384·16 = 262144, 4096 cycles of MACs; but
// 128 KiB in (and 128 KiB out) at the core's 16 B/cycle NoC link in (and out) = 8192 cycles
// each way, concurrently (two DDR channels give 32 B/cycle, exactly both streams):
// memory-bound at 8192 cycles of streaming.
// The pipeline by hand: an output row is 128 px × 4 ch × 2 B = 1 KiB in and 1 KiB out; input
// and output are double-buffered in the 64 KiB LB next to 32 B of weights, so a tile holds
// 15 rows (4 × 15 KiB + 64 B ≤ 64 KiB < 4 × 16 KiB) and there are ceil(128 / 15) = 9 tiles.
// Every mov pays its set-up (dma 20 + DDR 100 + LB 2 + NoC 5 = 127 cycles) in its queue, so:
// weights 127 + 2, nine input loads 9 × 127 + 8192, then the last tile (8 rows = 1024 px):
// its gemm ceil(1024/4)·1·1 + 8 = 264 and its store 127 + 8192 / 16 = 639.
static const char *conv_memory =
    "gtg 1\nmodel cm batch=1 dtype=fp16\ninput x: fp16[N, 4, 128, 128]\n"
    "y = conv2d(x) units=4 kernel=1 bias=0\n";

static void conv_memory_bound(void **) {
  Run run = schedule_and_run(conv_memory, SCHED_TVM);
  double stream = 4.0 * 128 * 128 * 2 / 16;
  double pipeline = (127 + 2) + 9 * 127 + stream + (1024 / 4 + 8) + (127 + 8192 / 16);
  assert_true((double)run.r.cycles >= stream);
  // at most 20 % above the hand pipeline: the load and store streams share the two DDR
  // channels at exactly their 32 B/cycle, so bursts of one delay the other
  if ((double)run.r.cycles > pipeline * 1.20)
    fail_msg("%llu cycles, hand pipeline %.0f", (unsigned long long)run.r.cycles, pipeline);
  assert_true(run.r.stats.get("ddr.read_bytes") == 4.0 * 128 * 128 * 2 + 4 * 4 * 2);
  assert_true(run.r.stats.get("ddr.write_bytes") == 4.0 * 128 * 128 * 2);
  finish(run);
}

// Every strategy, both convs: the simulated time is at least the roofline bound, and the
// report's kernel cycles (from the barrier episodes) add up to the run's cycles.
static void never_below_roofline(void **) {
  const char *graphs[] = {conv_compute, conv_memory};
  for (const char *gr : graphs)
    for (int s = 0; s < SCHED_COUNT; s++) {
      Run run = schedule_and_run(gr, (GsSchedKind)s);
      GsRunStats rs;
      memset(&rs, 0, sizeof rs);
      report_init_units(&rs, g_arch);
      std::vector<uint64_t> ep;
      for (const SimEpisode &e : run.r.episodes) ep.push_back(e.cycle);
      for (const SimEpisode &e : run.r.cluster_episodes) ep.push_back(e.cycle); // one cluster
      std::sort(ep.begin(), ep.end());
      rs.cycles = run.r.cycles;
      rs.nepisodes = (int)ep.size();
      rs.episode_end = ep.data();
      const GsSchedSummary *m = lower_summary(run.l);
      GsRunSummary sum = report_summary(m, &rs);
      assert_true(sum.time_s >= sum.bound_s);
      assert_true(sum.bound_s > 0);
      uint64_t total = ep.empty() ? 0 : ep[0];
      std::vector<uint64_t> cyc((size_t)m->ntasks);
      report_task_cycles(m, &rs, cyc.data());
      for (int k = 0; k < m->ntasks; k++) total += cyc[(size_t)k];
      assert_true(total <= run.r.cycles && run.r.cycles - total <= 1);
      finish(run);
    }
}

int sc_main(int, char **) {
  GsDiag d;
  diag_init(&d);
  const char *sets[] = {"chip.clusters=1", "core.pe.count=1"};
  g_arch = arch_load("configs/tiny.cfg", sets, 2, &d);
  if (!g_arch) return 1;
  g_sim = new Simulator(g_arch);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(conv_compute_bound),
      cmocka_unit_test(conv_memory_bound),
      cmocka_unit_test(never_below_roofline),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  delete g_sim;
  arch_free(g_arch);
  return rc;
}
