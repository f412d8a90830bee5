// test_gt_sim.cpp — graphturbo programs (sched/lower_gt.c, emit_slices.c) on the simulator,
// against hand calculations. The machine is configs/tiny.cfg reduced to one cluster with one
// core (as test_lower_sim) and a 2 KiB GB (--set cluster.gb_kib=2), so that a layer output the
// LB does not keep cannot go to the GB either:
//   * a two-conv chain whose intermediate the LB keeps moves only input + weights + output
//     through DDR; when nothing on chip may keep it (gt_stitch = 0, the GB too small) it is
//     spilled, written and read once: exactly 2x its bytes more, the same DDR traffic as tvm;
//   * a program whose kernel boundaries are broken (a barrier removed, two kernels swapped)
//     fails a simulator check or deadlocks (status 2), the intact one runs (status 0);
//   * the same schedule simulated twice gives the same cycles and stats.
// One Simulator per process (SystemC elaborates once): every program runs on the same one.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "sim.h"

extern "C" {
#include "graph.h"
#include "lower.h"
}

extern "C" int sc_main(int argc, char **argv);

static GsArch *g_arch;
static Simulator *g_sim;

// Lowers `text` (batch 1) under strategy s; graphturbo at ladder level `lvl` keeping a
// fraction `stitch` of each LB for layer outputs.
static GsLowered *lower(const char *text, GsSchedKind s, GtLadder lvl, double stitch) {
  GsDiag d;
  diag_init(&d);
  GsGraph *g = gtg_parse("gt.gtg", text, &d);
  if (!g) fail_msg("graph does not parse");
  GsLowerOptions o;
  lower_options_default(&o);
  o.sched = s;
  o.batch = 1;
  o.gt_level = lvl;
  o.gt_stitch = stitch;
  GsLowered *l = lower_run(g, g_arch, &o, &d);
  if (!l) fail_msg("lowering failed");
  return l;
}

static void finish(GsLowered *l) {
  GsGraph *g = l->graph;
  lower_free(l);
  graph_free(g);
}

static int simulate(const GsLowered *l, SimResult *r) {
  SimOptions so;
  return g_sim->run(l->prog, so, r);
}

static void simulate_ok(const GsLowered *l, SimResult *r) {
  if (simulate(l, r) != 0) fail_msg("simulation failed: %s", r->message.c_str());
}

// The slice of tensor `name` (exactly one: one instance, one cluster).
static const GtSlice *slice_of(const GsLowered *l, const char *name) {
  int t = graph_find_tensor(l->graph, name);
  assert_true(t >= 0);
  const GtSlice *found = nullptr;
  for (int i = 0; i < l->nslices; i++)
    if (l->slices[i].tensor == t) {
      assert_null(found);
      found = &l->slices[i];
    }
  assert_non_null(found);
  return found;
}

// ---------------------------------------------------------------------------------------------
// 1, 2: a chain of two 1x1 convs, fp16, no bias, batch 1 on 8x8 pixels:
//   x [1,16,8,8] = 16·64·2 = 2048 B      wa = 32·16·2 = 1024 B
//   a [1,32,8,8] = 32·64·2 = 4096 B      wb = 16·32·2 = 1024 B
//   y [1,16,8,8] = 16·64·2 = 2048 B
// Two layers (a conv is an anchor; nothing elementwise follows it), so two kernels.
// Where `a` can live: the LB is 64 KiB, the default gt_stitch 0.75 keeps 48 KiB of it for
// layer outputs, and 4096 B fit. The GB is 2048 B; lower_fill_gb_split keeps its top for the
// largest gemm weights, min(1024, 2048/4·3) = 1024 B, leaving 1024 B < 4096 B for layer outputs.
// The tiles fit without cutting columns or k (so weights load once, every input row once):
// conv a needs 2·2048 (A) + 1024 (W resident) + 2·4096 (O) = 13312 B, conv b
// 2·4096 + 1024 + 2·2048 = 13312 B, both far below the 64 KiB - 4 KiB below the kept `a`.
static const char *chain =
    "gtg 1\nmodel chain batch=1 dtype=fp16\ninput x: fp16[N, 16, 8, 8]\n"
    "a = conv2d(x) units=32 kernel=1 bias=0\n"
    "y = conv2d(a) units=16 kernel=1 bias=0\n";
static const double X = 2048, WA = 1024, A = 4096, WB = 1024, Y = 2048;

// Levels instances and full (= instances): `a` stays in the LB; DDR reads are x and both
// weights, DDR writes y alone.
static void chain_kept_in_lb(void **) {
  GtLadder levels[] = {GTL_INSTANCES, GTL_FULL};
  for (GtLadder lvl : levels) {
    GsLowered *l = lower(chain, SCHED_GRAPHTURBO, lvl, 0.75);
    assert_int_equal(l->nkernels, 2);
    const GtSlice *s = slice_of(l, "a");
    assert_int_equal(s->want, LVL_LB);
    assert_int_equal(s->level, LVL_LB);
    assert_int_equal(s->bytes, (int64_t)A);
    assert_int_equal(s->kernel, 0);
    assert_int_equal(s->last, 1);
    // y is the graph output: DDR by rule, not a spill
    const GtSlice *so = slice_of(l, "y");
    assert_int_equal(so->want, LVL_DDR);
    assert_int_equal(so->level, LVL_DDR);
    assert_int_equal(l->spills, 0);
    assert_int_equal(l->spill_bytes, 0);
    SimResult r;
    simulate_ok(l, &r);
    assert_true(r.stats.get("ddr.read_bytes") == X + WA + WB);   // 4096
    assert_true(r.stats.get("ddr.write_bytes") == Y);            // 2048
    // the program's own accounting says the same
    assert_int_equal(l->ddr_read, (int64_t)(X + WA + WB));
    assert_int_equal(l->ddr_write, (int64_t)Y);
    finish(l);
  }
}

// gt_stitch = 0: no LB is kept for layer outputs, so `a` falls to the GB, whose 1024 B for
// outputs are too few for its 4096 B: it is spilled to DDR (one slice, one cluster), written
// by conv a and read by conv b: reads 4096 + 4096 = 8192, writes 2048 + 4096 = 6144, exactly
// 2·4096 more than when the LB keeps it.
static void chain_spilled_to_ddr(void **) {
  GtLadder levels[] = {GTL_INSTANCES, GTL_FULL};
  for (GtLadder lvl : levels) {
    GsLowered *l = lower(chain, SCHED_GRAPHTURBO, lvl, 0);
    assert_int_equal(l->nkernels, 2);
    const GtSlice *s = slice_of(l, "a");
    // where it was meant to live depends on the schedule alone, not on gt_stitch: the LB,
    // as in chain_kept_in_lb
    assert_int_equal(s->want, LVL_LB);
    assert_int_equal(s->level, LVL_DDR);
    assert_int_equal(l->spills, 1);
    assert_int_equal(l->spill_bytes, (int64_t)A);
    SimResult r;
    simulate_ok(l, &r);
    assert_true(r.stats.get("ddr.read_bytes") == X + WA + WB + A);  // 8192
    assert_true(r.stats.get("ddr.write_bytes") == Y + A);           // 6144
    assert_int_equal(l->ddr_read, (int64_t)(X + WA + WB + A));
    assert_int_equal(l->ddr_write, (int64_t)(Y + A));
    finish(l);
  }
}

// tvm: a kernel per layer, everything through DDR: the same traffic as the spilled
// graphturbo, i.e. 2·4096 B more in all than graphturbo keeping `a` in the LB.
static void chain_tvm_through_ddr(void **) {
  GsLowered *l = lower(chain, SCHED_TVM, GTL_FULL, 0.75);
  SimResult r;
  simulate_ok(l, &r);
  double rd = r.stats.get("ddr.read_bytes"), wr = r.stats.get("ddr.write_bytes");
  assert_true(rd == X + WA + WB + A);  // 8192
  assert_true(wr == Y + A);            // 6144
  finish(l);
  GsLowered *g = lower(chain, SCHED_GRAPHTURBO, GTL_FULL, 0.75);
  SimResult rg;
  simulate_ok(g, &rg);
  double gt = rg.stats.get("ddr.read_bytes") + rg.stats.get("ddr.write_bytes");
  assert_true(rd + wr - gt == 2 * A);  // 14336 - 6144 = 8192
  finish(g);
}

// ---------------------------------------------------------------------------------------------
// 3, 4: a small model of four layers, each reading the one before:
//   k0 = conv 3x3 16->32 + relu, k1 = maxpool 2x2/2, k2 = conv 1x1 32->32 + relu,
//   k3 = conv 1x1 32->16 (relus fused into their conv's layer: same group, tvm tail rule).
// Batch 1 cannot be split into instances over samples, so one kernel per layer: 4 kernels.
static const char *small =
    "gtg 1\nmodel small batch=1 dtype=fp16\ninput x: fp16[N, 16, 8, 8]\n"
    "c1 = conv2d(x) units=32 kernel=3 pad=1 bias=0\n"
    "r1 = relu(c1)\n"
    "p1 = maxpool(r1) kernel=2 stride=2\n"
    "c2 = conv2d(p1) units=32 kernel=1 bias=0\n"
    "r2 = relu(c2)\n"
    "c3 = conv2d(r2) units=16 kernel=1 bias=0\n";

static std::vector<GsInst> insts_of(const GsQueue &q) {
  GsInst *a = prog_queue_array(&q);
  std::vector<GsInst> v(a, a + q.ninsts);
  free(a);
  return v;
}

static void set_insts(GsQueue *q, const std::vector<GsInst> &v) {
  prog_queue_code_free(q);
  for (const GsInst &in : v) *prog_emit(q) = in;
}

static int count_barriers(const GsQueue &q) {
  int n = 0;
  for (const GsInst &in : insts_of(q)) n += in.op == I_BARRIER;
  return n;
}

// Every queue joins the set-up barrier and one barrier after each kernel (one iteration):
// nkernels + 1 barriers, kernel j's instructions between occurrence j and j + 1.
static void check_barrier_layout(const GsLowered *l) {
  for (int i = 0; i < l->prog->nqueues; i++)
    assert_int_equal(count_barriers(l->prog->queues[i]), l->nkernels + 1);
}

// Does kernel j + 1 read an output of kernel j?
static int reads_previous(const GsLowered *l, int j) {
  const GsGraph *g = l->graph;
  const GsKernel *p = &l->kernels[j], *k = &l->kernels[j + 1];
  const GsOp *last = &g->ops[p->ops[p->nops - 1]];
  for (int a = 0; a < k->nops; a++) {
    const GsOp *op = &g->ops[k->ops[a]];
    for (int i = 0; i < op->nin; i++)
      for (int o = 0; o < last->nout; o++)
        if (op->in[i] == last->out[o]) return 1;
  }
  return 0;
}

// (a) the barrier between kernel j and kernel j + 1 (occurrence j + 1) removed from every queue
static void remove_barrier(GsProgram *p, int j) {
  for (int i = 0; i < p->nqueues; i++) {
    std::vector<GsInst> v = insts_of(p->queues[i]), w;
    int seen = 0;
    for (const GsInst &in : v) {
      if (in.op == I_BARRIER && seen++ == j + 1) continue;
      w.push_back(in);
    }
    assert_int_equal((int)(v.size() - w.size()), 1);
    set_insts(&p->queues[i], w);
  }
}

// (b) the blocks of kernels j and j + 1 swapped in every queue (barriers stay in place):
// segment s is what lies before barrier occurrence s (the last one: after the last barrier);
// kernel j is segment j + 1.
static void swap_kernels(GsProgram *p, int j) {
  for (int i = 0; i < p->nqueues; i++) {
    std::vector<GsInst> v = insts_of(p->queues[i]);
    std::vector<std::vector<GsInst>> seg(1);
    std::vector<GsInst> bars;
    for (const GsInst &in : v) {
      if (in.op == I_BARRIER) {
        bars.push_back(in);
        seg.emplace_back();
      } else {
        seg.back().push_back(in);
      }
    }
    assert_true((int)seg.size() > j + 2);
    std::swap(seg[(size_t)j + 1], seg[(size_t)j + 2]);
    std::vector<GsInst> w;
    for (size_t s = 0; s < seg.size(); s++) {
      w.insert(w.end(), seg[s].begin(), seg[s].end());
      if (s < bars.size()) w.push_back(bars[s]);
    }
    assert_int_equal(w.size(), v.size());
    set_insts(&p->queues[i], w);
  }
}

static void small_model_runs(void **) {
  GsLowered *l = lower(small, SCHED_GRAPHTURBO, GTL_FULL, 0.75);
  assert_int_equal(l->nkernels, 4);
  check_barrier_layout(l);
  for (int j = 0; j + 1 < l->nkernels; j++) assert_true(reads_previous(l, j));
  SimResult r;
  simulate_ok(l, &r);
  assert_true(r.cycles > 0);
  finish(l);
}

static void mutation_missing_barrier(void **) {
  for (int j = 0; j + 1 < 4; j++) {
    GsLowered *l = lower(small, SCHED_GRAPHTURBO, GTL_FULL, 0.75);
    assert_int_equal(l->nkernels, 4);
    check_barrier_layout(l);
    assert_true(reads_previous(l, j));
    remove_barrier(l->prog, j);
    SimResult r;
    int st = simulate(l, &r);
    if (st != 2)
      fail_msg("barrier after kernel %d removed: status %d, expected 2 (%s)", j, st,
               r.message.c_str());
    assert_false(r.message.empty());
    finish(l);
  }
}

static void mutation_swapped_kernels(void **) {
  for (int j = 0; j + 1 < 4; j++) {
    GsLowered *l = lower(small, SCHED_GRAPHTURBO, GTL_FULL, 0.75);
    assert_int_equal(l->nkernels, 4);
    check_barrier_layout(l);
    assert_true(reads_previous(l, j));
    swap_kernels(l->prog, j);
    SimResult r;
    int st = simulate(l, &r);
    if (st != 2)
      fail_msg("kernels %d and %d swapped: status %d, expected 2 (%s)", j, j + 1, st,
               r.message.c_str());
    assert_false(r.message.empty());
    finish(l);
  }
}

// ---------------------------------------------------------------------------------------------
// 4: determinism. The same program twice, and a fresh lowering of the same graph, give the
// same cycles, instruction count, episodes and every stat (name and value, in order) — also
// after a run that failed a check in between (the model is reset between runs).
static void same_result(const SimResult &a, const SimResult &b) {
  assert_int_equal(a.status, 0);
  assert_int_equal(b.status, 0);
  assert_int_equal(a.cycles, b.cycles);
  assert_int_equal(a.instructions, b.instructions);
  assert_int_equal(a.episodes.size(), b.episodes.size());
  for (size_t i = 0; i < a.episodes.size(); i++) {
    assert_int_equal(a.episodes[i].cycle, b.episodes[i].cycle);
    assert_int_equal(a.episodes[i].ddr_bytes, b.episodes[i].ddr_bytes);
  }
  assert_int_equal(a.cluster_episodes.size(), b.cluster_episodes.size());
  for (size_t i = 0; i < a.cluster_episodes.size(); i++)
    assert_int_equal(a.cluster_episodes[i].cycle, b.cluster_episodes[i].cycle);
  const std::vector<SimStat> &sa = a.stats.all(), &sb = b.stats.all();
  assert_int_equal(sa.size(), sb.size());
  for (size_t i = 0; i < sa.size(); i++) {
    assert_string_equal(sa[i].name.c_str(), sb[i].name.c_str());
    if (memcmp(&sa[i].value, &sb[i].value, sizeof(double)) != 0)
      fail_msg("stat %s: %.17g vs %.17g", sa[i].name.c_str(), sa[i].value, sb[i].value);
  }
}

static void deterministic(void **) {
  GsLowered *l = lower(small, SCHED_GRAPHTURBO, GTL_FULL, 0.75);
  SimResult r1, r2, r3, r4;
  simulate_ok(l, &r1);
  simulate_ok(l, &r2);
  same_result(r1, r2);
  // a failing run in between
  GsLowered *bad = lower(small, SCHED_GRAPHTURBO, GTL_FULL, 0.75);
  swap_kernels(bad->prog, 0);
  SimResult rb;
  assert_int_equal(simulate(bad, &rb), 2);
  finish(bad);
  simulate_ok(l, &r3);
  same_result(r1, r3);
  finish(l);
  // a fresh lowering of the same graph
  GsLowered *l2 = lower(small, SCHED_GRAPHTURBO, GTL_FULL, 0.75);
  simulate_ok(l2, &r4);
  same_result(r1, r4);
  finish(l2);
}

int sc_main(int, char **) {
  GsDiag d;
  diag_init(&d);
  const char *sets[] = {"chip.clusters=1", "core.pe.count=1", "cluster.gb_kib=2"};
  g_arch = arch_load("configs/tiny.cfg", sets, 3, &d);
  if (!g_arch) return 1;
  g_sim = new Simulator(g_arch);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(chain_kept_in_lb),
      cmocka_unit_test(chain_spilled_to_ddr),
      cmocka_unit_test(chain_tvm_through_ddr),
      cmocka_unit_test(small_model_runs),
      cmocka_unit_test(mutation_missing_barrier),
      cmocka_unit_test(mutation_swapped_kernels),
      cmocka_unit_test(deterministic),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  delete g_sim;
  arch_free(g_arch);
  return rc;
}
