// test_sim_fuzz.cpp — random programs on tiny.cfg's machine, from a fixed-seed generator (the
// same 150 programs on every run). Each program is correct by construction: on every core a
// double-buffered load -> compute -> store loop of random length, tile size, DDR placement
// (so transfers contend in random ways), compute unit per iteration, transfer chunk size, plus
// scalar work and a closing chip barrier. Then each program is mutated once by dropping one
// `signal`. Oracles:
//   - a correct program ends with status 0; its DDR traffic is exactly the sum of its loads and
//     stores; it lasts at least as long as each core's compute (from timing.h) and as each
//     queue's busy time; a second run gives identical stats (determinism);
//   - a program missing a signal never crashes and stops with status 2: either a check (the
//     data race it creates) or the deadlock of the wait that is never satisfied;
//   - a program missing a wait never crashes and ends with status 2: every wait of the
//     generator orders a write before a read of the same bytes or a read before their
//     overwrite, so without it the two accesses are unordered by happens-before, whichever the
//     timing runs first (docs/timing.md, "Races"): a race, or a read of the tile before it
//     (stale) when the read runs first (the overwrite would be the race).
// The suite also runs under ASan/UBSan (make asan).
#include <algorithm>
#include <vector>

#include "simtest.h"

static GsArch g_arch;
static Simulator *g_sim;


struct Facts {
  int64_t ddr_read = 0, ddr_write = 0, compute_max = 0, chunk = 0;
  int signals = 0, waits = 0;
};

// Builds program number `seed`; drops the `drop`-th signal, or the `drop_wait`-th wait (-1: none).
static void build(Prog &pr, uint64_t seed, int drop, Facts *f, int drop_wait = -1) {
  SimtestRng rng{seed * 0x9e3779b97f4a7c15ull + 1};
  int nsig = 0, nwait = 0;
  auto signal = [&](QRef q, int target, int64_t flag) {
    if (nsig++ != drop) pr.signal(q, target, flag);
  };
  auto wait = [&](QRef q, int64_t flag) {
    if (nwait++ != drop_wait) pr.wait(q, flag);
  };
  f->chunk = 256 << rng.below(6);  // 256 .. 8192
  QRef fin[2][2][4];
  int parts = 0;
  for (int c = 0; c < 2; c++)
    for (int k = 0; k < 2; k++) {
      int iters = 1 + (int)rng.below(6);
      int64_t S = 512 * (1 + rng.below(8));  // tile bytes: 512 .. 4096 (fp16: S/2 elements)
      QRef in = pr.q(c, k, TQ_IN), out = pr.q(c, k, TQ_OUT);
      QRef units[2] = {pr.q(c, k, TQ_MME), pr.q(c, k, TQ_VEC)};
      uint32_t buf[2] = {pr.region(nullptr), pr.region(nullptr)}, o = pr.region(nullptr), w = pr.region(nullptr);
      uint32_t dst = pr.region(nullptr), tw = pr.tile(nullptr);
      pr.alloc(in, buf[0], LVL_LB, c, k, 0, S);
      pr.alloc(in, buf[1], LVL_LB, c, k, S, S);
      pr.alloc(in, o, LVL_LB, c, k, 2 * S, S);
      pr.alloc(in, w, LVL_LB, c, k, 3 * S, 512, tw);  // a 16x16 fp16 weight tile
      pr.alloc(out, dst, LVL_DDR, 0, 0, (int64_t)(c * 2 + k) << 20, S);
      int64_t compute = 0;
      std::vector<int> unit_of(iters);
      for (int i = 0; i < iters; i++) unit_of[(size_t)i] = (int)rng.below(2);
      for (int i = 0; i < iters; i++) {
        uint32_t tx = pr.tile(nullptr), ty = pr.tile(nullptr), src = pr.region(nullptr);
        // each iteration's input at a random 64-byte aligned DDR address (random channels)
        pr.alloc(in, src, LVL_DDR, 0, 0, (64LL << 20) + ((int64_t)(c * 2 + k) << 22) + (int64_t)i * 65536 + 64 * rng.below(64), S, tx);
        int u = unit_of[(size_t)i];
        QRef U = units[u];
        if (i >= 2) wait(in, 1);  // buffer i%2 freed by iteration i-2's compute
        pr.mov(in, buf[i % 2], tx, src, tx, S);
        signal(in, TQ_MME + u, 0);
        wait(U, 0);
        if (i >= 1) wait(U, 3);  // o stored by the previous iteration
        int64_t ob = S;  // bytes of the result: the store moves exactly those
        if (u == 0) {
          // m x 16 x 16 fp16 with m*16*2 <= S: a is buf, b the weight tile
          int64_t m = S / 32;
          pr.gemm(U, o, ty, buf[i % 2], tx, w, tw, m, 16, 16, DT_FP16);
          compute += timing_matrix(&g_arch.units[0], m, 16, 16, DT_FP16);
        } else {
          GsVop op = (GsVop)(rng.below(V_COUNT));
          GsInst *v = pr.vec(U, op, o, ty, buf[i % 2], tx, S / 2, DT_FP16, isa_vop_inputs(op) == 2 ? w : 0,
                             isa_vop_inputs(op) == 2 ? tw : 0);
          // one group: the checks need 1 <= param <= elems
          if (isa_vop_needs_param(op)) inst_vec_set_param(v, S / 2);
          // every operand names its extent: b, the 256 fp16 of the weight tile; a windowed a,
          // the S / 2 elements the buffer holds
          if (isa_vop_inputs(op) == 2) inst_vec_set_b_elems(v, 256);
          if (isa_vop_windowed(op, inst_vec_param(v))) inst_vec_set_a_elems(v, S / 2);
          compute += timing_vector(&g_arch.units[1], op, S / 2, DT_FP16);
          // reductions, dot products and pooling leave one result per group or window (isa.def)
          ob = 2 * isa_vop_out_elems(op, S / 2, inst_vec_param(v));
        }
        if (i + 2 < iters) signal(U, TQ_IN, 1);  // every signal has its wait
        signal(U, TQ_OUT, 4);
        wait(out, 4);
        pr.mov(out, dst, ty, o, ty, ob);
        if (i + 1 < iters) signal(out, TQ_MME + unit_of[(size_t)i + 1], 3);
        f->ddr_read += S;
        f->ddr_write += ob;
      }
      f->compute_max = std::max(f->compute_max, compute);
      QRef s = pr.q(c, k, TQ_SCL);
      pr.scalar(s, 1 + rng.below(200));
      fin[c][k][0] = in;
      fin[c][k][1] = out;
      fin[c][k][2] = s;
      parts += 3;
    }
  for (int c = 0; c < 2; c++)
    for (int k = 0; k < 2; k++)
      for (int j = 0; j < 3; j++) pr.barrier(fin[c][k][j], SCOPE_CHIP, 1, parts);
  f->signals = nsig;
  f->waits = nwait;
}

static void random_programs(void **) {
  int dropped_checks = 0, dropped_deadlocks = 0, races = 0, stale = 0;
  for (uint64_t seed = 1; seed <= 150; seed++) {
    Prog pr;
    Facts f;
    build(pr, seed, -1, &f);
    SimOptions o;
    o.chunk_bytes = f.chunk;
    SimResult a, b;
    int sa = g_sim->run(pr.p, o, &a);
    if (sa) fprintf(stderr, "# seed %llu: %s", (unsigned long long)seed, a.message.c_str());
    assert_int_equal(sa, 0);
    assert_int_equal(g_sim->run(pr.p, o, &b), 0);
    assert_int_equal(a.cycles, b.cycles);
    assert_int_equal(a.stats.all().size(), b.stats.all().size());
    for (size_t i = 0; i < a.stats.all().size(); i++) assert_true(a.stats.all()[i].value == b.stats.all()[i].value);
    assert_int_equal((int64_t)a.stats.get("ddr.read_bytes"), f.ddr_read);
    assert_int_equal((int64_t)a.stats.get("ddr.write_bytes"), f.ddr_write);
    assert_true((int64_t)a.cycles >= f.compute_max);
    for (const SimStat &s : a.stats.all())
      if (s.name.size() > 12 && s.name.compare(s.name.size() - 12, 12, ".busy_cycles") == 0)
        assert_true(s.value <= (double)a.cycles + 1e-6);
    assert_int_equal(a.episodes.size(), 1);
    // drop one signal: a race or a deadlock, reported, never a crash or a plausible number
    Prog bad;
    Facts g;
    build(bad, seed, (int)((seed * 7919) % (uint64_t)f.signals), &g);
    SimResult r;
    int st = g_sim->run(bad.p, o, &r);
    assert_int_equal(st, 2);
    if (r.message.find("deadlock") != std::string::npos) dropped_deadlocks++;
    else dropped_checks++;
    assert_true(r.message.find("program: error: ") == 0);
    // drop one wait instead
    Prog racy;
    build(racy, seed, -1, &g, (int)((seed * 104729) % (uint64_t)f.waits));
    st = g_sim->run(racy.p, o, &r);
    assert_int_equal(st, 2);
    if (getenv("FUZZ_SHOW")) fprintf(stderr, "# %s", r.message.c_str());
    assert_true(r.message.find("program: error: queue ") == 0);
    if (r.message.find("which does not happen before it: missing synchronisation") != std::string::npos) {
      races++;
    } else {
      assert_true(r.message.find("(stale)") != std::string::npos);
      stale++;
    }
  }
  fprintf(stderr, "# 150 correct programs; with a signal dropped: %d deadlocks, %d check reports; "
          "with a wait dropped: %d races, %d stale reads\n", dropped_deadlocks, dropped_checks, races, stale);
}

int sc_main(int, char **) {
  tiny_arch(&g_arch);
  g_sim = new Simulator(&g_arch);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(random_programs),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  delete g_sim;
  return rc;
}
