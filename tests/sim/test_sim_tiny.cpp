// test_sim_tiny.cpp — whole runs on tiny.cfg's machine; every expected cycle count is derived
// here from the formula of docs/timing.md and tiny.cfg's figures (tests/sim/simtest.h):
//   clock 1 GHz; DDR 2 channels x 16 B/cycle, latency 100, interleave 256, burst 64;
//   GB ports 2 x 32 B/cycle, latency 10; NoC link 16 B/cycle per core and direction, latency 5;
//   cluster link 16 B/cycle, latency 10; DMA set-up 20; LB ports 2 x 64 B/cycle, latency 2;
//   mme cube 4x4x4 latency 8; vec 16 fp16 lanes latency 4; scl 1 op/cycle.
#include <unistd.h>
#include <zlib.h>

#include "simtest.h"

static GsArch g_arch;
static Simulator *g_sim;
static SimResult g_last;  // the last run of two_loads()

static SimResult run(Prog &pr, const SimOptions &o = SimOptions()) {
  SimResult r;
  g_sim->run(pr.p, o, &r);
  if (r.status) fprintf(stderr, "# %s", r.message.c_str());
  return r;
}

static bool has(const SimResult &r, const char *s) {
  bool ok = r.message.find(s) != std::string::npos;
  if (!ok) fprintf(stderr, "# message lacks \"%s\":\n# %s\n", s, r.message.c_str());
  return ok;
}

// Latencies of the paths (cycles).
static const int64_t L_DDR_LB = 20 + 100 + 2 + 5;     // dma + ddr + lb + noc = 127
static const int64_t L_DDR_GB = 20 + 100 + 10;        // dma + ddr + gb = 130
static const int64_t L_GB_LB = 20 + 10 + 2 + 5;       // dma + gb + lb + noc = 37
static const int64_t L_LB_LB = 20 + 2 + 2 + 5;        // dma + lb + lb + noc (once) = 29
static const int64_t L_LB_LB_X = 20 + 2 + 2 + 5 + 10; // + cluster link = 39

// A region in DDR holding tile t from the start, and one in an on-chip buffer.
struct Xfer {
  Prog pr;
  uint32_t t = pr.tile("x");
};

static void one_dma_ddr_to_lb(void **) {
  Xfer x;
  uint32_t src = x.pr.region("x.ddr"), dst = x.pr.region("x.lb");
  QRef q = x.pr.q(0, 0, TQ_IN);
  x.pr.alloc(q, src, LVL_DDR, 0, 0, 0, 4096, x.t);
  x.pr.alloc(q, dst, LVL_LB, 0, 0, 0, 4096);
  x.pr.mov(q, dst, x.t, src, x.t, 4096);
  SimResult r = run(x.pr);
  assert_int_equal(r.status, 0);
  // narrowest: NoC link 16 B/cycle (DDR gives 32 over both channels, LB port 64)
  assert_int_equal(r.cycles, L_DDR_LB + 4096 / 16);
  assert_int_equal((int64_t)r.stats.get("ddr.read_bytes"), 4096);
  assert_int_equal((int64_t)r.stats.get("lb.write_bytes"), 4096);
  assert_int_equal((int64_t)r.stats.get("noc.bytes"), 4096);
  assert_int_equal((int64_t)r.stats.get("q.c0.k0.dma_in.stall_data_cycles"), L_DDR_LB);
  assert_int_equal((int64_t)r.stats.get("q.c0.k0.dma_in.busy_cycles"), 4096 / 16);
}

// Two cores load 4096 B each, as 16 rows of 256 B at a 512 B stride: every row starts at a
// multiple of 512, so with 256 B interleave all bytes sit in DDR channel 0 (16 B/cycle).
// Alone: 127 + 4096/16 = 383. Together the channel is shared: 127 + 2*4096/16 = 639 for the
// later one (chunks of 2048 B alternate: A [127,255], B [255,383], A [383,511], B [511,639]).
// Placing the second source 256 B further puts it in channel 1: no contention, 383.
static int64_t two_loads(int64_t second_offset, int64_t chunk = 0) {
  Xfer x;
  QRef qa = x.pr.q(0, 0, TQ_IN), qb = x.pr.q(0, 1, TQ_IN);
  uint32_t sa = x.pr.region("a.ddr"), sb = x.pr.region("b.ddr");
  uint32_t da = x.pr.region("a.lb"), db = x.pr.region("b.lb");
  x.pr.alloc(qa, sa, LVL_DDR, 0, 0, 0, 8192, x.t);
  x.pr.alloc(qb, sb, LVL_DDR, 0, 0, 8192 + second_offset, 8192, x.t);
  x.pr.alloc(qa, da, LVL_LB, 0, 0, 0, 4096);
  x.pr.alloc(qb, db, LVL_LB, 0, 1, 0, 4096);
  GsInst *a = x.pr.mov(qa, da, x.t, sa, x.t, 4096);
  GsInst *b = x.pr.mov(qb, db, x.t, sb, x.t, 4096);
  for (GsInst *in : {a, b}) {
    inst_mov_set_rows(in, 16);
    inst_mov_set_src_stride(in, 512);
  }
  SimOptions o;
  o.chunk_bytes = chunk;
  SimResult r = run(x.pr, o);
  assert_int_equal(r.status, 0);
  g_last = r;
  return (int64_t)r.cycles;
}

static void two_dmas_contend_for_one_channel(void **) {
  assert_int_equal(two_loads(0), L_DDR_LB + 2 * 4096 / 16);
  // resource stalls: A's second chunk waits for B's first (128 cycles); B waits before both of
  // its chunks (128 + 128)
  assert_int_equal((int64_t)g_last.stats.get("q.c0.k0.dma_in.stall_resource_cycles"), 128);
  assert_int_equal((int64_t)g_last.stats.get("q.c0.k1.dma_in.stall_resource_cycles"), 256);
  // channel 0 was busy 2 x 4096 / 16 = 512 of the 639 cycles; channel 1 idle
  assert_true(g_last.stats.get("ddr.ch0.utilization") == 512.0 / 639.0);
  assert_true(g_last.stats.get("ddr.ch1.utilization") == 0);
  assert_int_equal(two_loads(256), L_DDR_LB + 4096 / 16);
  assert_int_equal((int64_t)g_last.stats.get("q.c0.k1.dma_in.stall_resource_cycles"), 0);
  // one chunk per transfer: they serialise whole (A [127, 383], B [383, 639]): same total, but A
  // never waits and B waits its whole 256 cycles
  assert_int_equal(two_loads(0, 4096), L_DDR_LB + 2 * 4096 / 16);
  assert_int_equal((int64_t)g_last.stats.get("q.c0.k0.dma_in.stall_resource_cycles"), 0);
  assert_int_equal((int64_t)g_last.stats.get("q.c0.k1.dma_in.stall_resource_cycles"), 256);
  // 256 B chunks (16 per transfer) alternate finer: A waits 15 x 16, B 16 x 16
  assert_int_equal(two_loads(0, 256), L_DDR_LB + 2 * 4096 / 16);
  assert_int_equal((int64_t)g_last.stats.get("q.c0.k0.dma_in.stall_resource_cycles"), 15 * 16);
  assert_int_equal((int64_t)g_last.stats.get("q.c0.k1.dma_in.stall_resource_cycles"), 16 * 16);
}

// A transfer takes its turn when its latency has passed, not when it is issued: its first
// chunk must not hold a resource through the latency for a request made later (at issue,
// it would also jump ahead of chunks requested before it).
// A (core 0) loads 8192 B from DDR channel 0 (32 rows of 256 B at a 512 B stride): chunks of
// 2048 B, 128 cycles each, the first requested at 127. B (core 1) first copies 2608 B GB->LB
// (its own NoC link, 16 B/cycle: 37 + 128 + 35 = 200), then issues its own 2048 B load from
// channel 0 at 200, its chunk requested at 200 + 127 = 327. A's second chunk, requested at 255,
// goes first: A [127,255] [255,383], B [383,511], A [511,639] [639,767]. Channel 0 never idles:
// 127 + (8192 + 2048) / 16 = 767 (served at issue, B's chunk would take [327,455] and leave the
// channel idle from 255 to 327: 839). Stalls: A's third chunk waits 128 (B), B waits 383 - 327.
static void latency_holds_no_resource(void **) {
  Xfer x;
  QRef qa = x.pr.q(0, 0, TQ_IN), qb = x.pr.q(0, 1, TQ_IN);
  uint32_t sa = x.pr.region("a.ddr"), sb = x.pr.region("b.ddr"), g = x.pr.region("g.gb");
  uint32_t da = x.pr.region("a.lb"), db = x.pr.region("b.lb"), dg = x.pr.region("g.lb");
  x.pr.alloc(qa, sa, LVL_DDR, 0, 0, 0, 16384, x.t);
  x.pr.alloc(qa, da, LVL_LB, 0, 0, 0, 8192);
  x.pr.alloc(qb, sb, LVL_DDR, 0, 0, 16384, 4096, x.t);
  x.pr.alloc(qb, g, LVL_GB, 0, 0, 0, 2608, x.t);
  x.pr.alloc(qb, dg, LVL_LB, 0, 1, 0, 2608);
  x.pr.alloc(qb, db, LVL_LB, 0, 1, 4096, 2048);
  GsInst *a = x.pr.mov(qa, da, x.t, sa, x.t, 8192);
  inst_mov_set_rows(a, 32);
  inst_mov_set_src_stride(a, 512);
  x.pr.mov(qb, dg, x.t, g, x.t, 2608);
  GsInst *b = x.pr.mov(qb, db, x.t, sb, x.t, 2048);
  inst_mov_set_rows(b, 8);
  inst_mov_set_src_stride(b, 512);
  SimResult r = run(x.pr);
  assert_int_equal(r.status, 0);
  assert_int_equal(r.cycles, L_DDR_LB + (8192 + 2048) / 16);
  assert_int_equal((int64_t)r.stats.get("q.c0.k0.dma_in.stall_resource_cycles"), 128);
  assert_int_equal((int64_t)r.stats.get("q.c0.k1.dma_in.stall_resource_cycles"), 383 - 327);
  assert_true(r.stats.get("ddr.ch0.utilization") == 640.0 / 767.0);
}

// Two kernels separated by chip barriers: episode 0 ends when the 4096 B load has arrived
// (383) with 4096 DDR bytes; episode 1 after a 1024 B store, 127 + 1024/16 = 191 later, with
// 1024 DDR bytes. Peak LB occupancy: 4096 + 1024 allocated at once.
static void episodes_attribute_cycles_and_ddr_bytes(void **) {
  Xfer x;
  QRef in = x.pr.q(0, 0, TQ_IN), s = x.pr.q(1, 0, TQ_SCL);
  uint32_t src = x.pr.region("x.ddr"), d = x.pr.region("x.lb"), y = x.pr.region("y.lb"), yd = x.pr.region("y.ddr");
  uint32_t ty = x.pr.tile("y");
  x.pr.alloc(in, src, LVL_DDR, 0, 0, 0, 4096, x.t);
  x.pr.alloc(in, d, LVL_LB, 0, 0, 0, 4096);
  x.pr.alloc(in, y, LVL_LB, 0, 0, 4096, 1024, ty);
  x.pr.alloc(in, yd, LVL_DDR, 0, 0, 65536, 1024);
  x.pr.mov(in, d, x.t, src, x.t, 4096);
  x.pr.barrier(in, SCOPE_CHIP, 0, 2);
  x.pr.mov(in, yd, ty, y, ty, 1024);
  x.pr.barrier(in, SCOPE_CHIP, 0, 2);
  x.pr.barrier(s, SCOPE_CHIP, 0, 2);
  x.pr.barrier(s, SCOPE_CHIP, 0, 2);
  SimResult r = run(x.pr);
  assert_int_equal(r.status, 0);
  assert_int_equal(r.episodes.size(), 2);
  assert_int_equal(r.episodes[0].cycle, 383);
  assert_int_equal(r.episodes[0].ddr_bytes, 4096);
  assert_int_equal(r.episodes[1].cycle, 383 + 127 + 1024 / 16);
  assert_int_equal(r.episodes[1].ddr_bytes, 1024);
  assert_int_equal((int64_t)r.stats.get("buf.c0.k0.lb.peak_bytes"), 4096 + 1024);
  assert_true(r.stats.get("buf.c0.k0.lb.peak_ratio") == 5120.0 / 65536.0);
  assert_int_equal((int64_t)r.stats.get("buf.ddr.peak_bytes"), 4096 + 1024);
}

// One mov between two buffers; returns cycles.
static int64_t one_mov(GsLevel sl, int sc, int sk, GsLevel dl, int dc, int dk, bool cluster_dma,
                       SimResult *out = nullptr) {
  Xfer x;
  QRef q = cluster_dma ? x.pr.q(sc, -1, 0) : x.pr.q(sc, sk, TQ_IN);
  uint32_t s = x.pr.region("src"), d = x.pr.region("dst");
  x.pr.alloc(q, s, sl, sc, sk, 0, 4096, x.t);
  x.pr.alloc(q, d, dl, dc, dk, sl == dl && sc == dc && sk == dk ? 4096 : 0, 4096);
  x.pr.mov(q, d, x.t, s, x.t, 4096);
  SimResult r = run(x.pr);
  assert_int_equal(r.status, 0);
  if (out) *out = r;
  return (int64_t)r.cycles;
}

static void transfer_paths(void **) {
  SimResult r;
  // DDR -> GB by a cluster DMA engine: DDR 32 B/cycle over both channels, GB port 32
  assert_int_equal(one_mov(LVL_DDR, 0, 0, LVL_GB, 0, 0, true, &r), L_DDR_GB + 4096 / 32);
  assert_int_equal((int64_t)r.stats.get("gb.write_bytes"), 4096);
  // GB -> LB: GB port 32, NoC link 16, LB port 64 -> 16
  assert_int_equal(one_mov(LVL_GB, 0, 0, LVL_LB, 0, 1, false), L_GB_LB + 4096 / 16);
  // LB -> LB across the cores of a cluster: out link 16, in link 16
  assert_int_equal(one_mov(LVL_LB, 0, 0, LVL_LB, 0, 1, false), L_LB_LB + 4096 / 16);
  // LB -> LB across clusters: + cluster link 16 B/cycle, latency 10
  assert_int_equal(one_mov(LVL_LB, 0, 0, LVL_LB, 1, 0, false, &r), L_LB_LB_X + 4096 / 16);
  assert_int_equal((int64_t)r.stats.get("cluster_link.bytes"), 4096);
  // LB -> DDR (a store): LB port, NoC link 16, DDR 32 -> 16
  assert_int_equal(one_mov(LVL_LB, 0, 1, LVL_DDR, 0, 0, false, &r), L_DDR_LB + 4096 / 16);
  assert_int_equal((int64_t)r.stats.get("ddr.write_bytes"), 4096);
  // GB -> GB across clusters: GB ports 32, cluster link 16 -> 16; latency dma + 2 gb + link
  assert_int_equal(one_mov(LVL_GB, 0, 0, LVL_GB, 1, 0, true), 20 + 10 + 10 + 10 + 4096 / 16);
}

// Operands sit in c0.k0's LB holding their tiles from the start; returns the run's cycles.
static int64_t one_compute(GsOpcode op, GsVop vop, int64_t elems, GsDtype t, SimResult *out = nullptr) {
  Prog pr;
  uint32_t ta = pr.tile("a"), tb = pr.tile("b"), to = pr.tile("o");
  uint32_t a = pr.region("a"), b = pr.region("b"), o = pr.region("o");
  QRef q = pr.q(0, 0, op == I_GEMM ? TQ_MME : TQ_VEC);
  pr.alloc(q, a, LVL_LB, 0, 0, 0, 8192, ta);
  pr.alloc(q, b, LVL_LB, 0, 0, 8192, 8192, tb);
  pr.alloc(q, o, LVL_LB, 0, 0, 16384, 8192);
  if (op == I_GEMM) pr.gemm(q, o, to, a, ta, b, tb, elems, elems, elems, t);
  else {
    uint32_t b2 = isa_vop_inputs(vop) == 2 ? b : 0, tb2 = isa_vop_inputs(vop) == 2 ? tb : 0;
    GsInst *in = pr.vec(q, vop, o, to, a, ta, elems, t, b2, tb2);
    // one group over all elements (the cost does not depend on it)
    if (isa_vop_needs_param(vop)) inst_vec_set_param(in, elems);
    if (isa_vop_windowed(vop, inst_vec_param(in))) inst_vec_set_a_elems(in, elems);
  }
  SimResult r = run(pr);
  if (out) *out = r;
  return r.status ? -r.status : (int64_t)r.cycles;
}

static void matrix_cube(void **) {
  SimResult r;
  // 16x16x16 fp16: 4*4*4 = 64 blocks + latency 8
  assert_int_equal(one_compute(I_GEMM, V_ADD, 16, DT_FP16, &r), 64 + 8);
  assert_int_equal((int64_t)r.stats.get("q.c0.k0.mme.macs"), 16 * 16 * 16);
  // MAC utilization = (4096 MACs / 64 per cycle) / 72 cycles
  assert_true(r.stats.get("q.c0.k0.mme.mac_utilization") == 64.0 / 72.0);
  assert_int_equal(one_compute(I_GEMM, V_ADD, 16, DT_INT8), 32 + 8);
}

static void vector_each_cost_class(void **) {
  // 1024 fp16 elements = 64 lane-groups of 16; + latency 4
  assert_int_equal(one_compute(I_VEC, V_RELU, 1024, DT_FP16), 4 + 64 * 1);   // simple, cost 1
  assert_int_equal(one_compute(I_VEC, V_MUL, 1024, DT_FP16), 4 + 64 * 1);    // mul, cost 1
  assert_int_equal(one_compute(I_VEC, V_DIV, 1024, DT_FP16), 4 + 64 * 4);    // div, cost 4
  assert_int_equal(one_compute(I_VEC, V_EXP, 1024, DT_FP16), 4 + 64 * 8);    // transc, cost 8
  assert_int_equal(one_compute(I_VEC, V_RSUM, 1024, DT_FP16), 4 + 64 * 2);   // reduce, cost 2
}

// dma_in loads x (127 + 4096/16 = 383) and signals the vec queue, which waits, then relus 2048
// fp16 elements (4 + 128 = 132): 383 + 132 = 515; the vec queue was blocked 383 cycles.
static void flag_orders_queues(void **) {
  Xfer x;
  QRef in = x.pr.q(0, 0, TQ_IN), v = x.pr.q(0, 0, TQ_VEC);
  uint32_t s = x.pr.region("x.ddr"), d = x.pr.region("x.lb"), o = x.pr.region("y.lb"), ty = x.pr.tile("y");
  x.pr.alloc(in, s, LVL_DDR, 0, 0, 0, 4096, x.t);
  x.pr.alloc(in, d, LVL_LB, 0, 0, 0, 4096);
  x.pr.alloc(in, o, LVL_LB, 0, 0, 4096, 4096);
  x.pr.mov(in, d, x.t, s, x.t, 4096);
  x.pr.signal(in, TQ_VEC, 0);
  x.pr.wait(v, 0);
  x.pr.vec(v, V_RELU, o, ty, d, x.t, 2048, DT_FP16);
  SimResult r = run(x.pr);
  assert_int_equal(r.status, 0);
  assert_int_equal(r.cycles, 383 + 4 + 2048 / 16);
  // waiting for dma_in's flag is waiting on data
  assert_int_equal((int64_t)r.stats.get("q.c0.k0.vec.stall_data_cycles"), 383);
  assert_int_equal((int64_t)r.stats.get("q.c0.k0.vec.stall_flag_cycles"), 0);
  // without the flag the vec queue reads x before it arrived: a check error, not a cycle count
  Xfer y;
  in = y.pr.q(0, 0, TQ_IN);
  v = y.pr.q(0, 0, TQ_VEC);
  s = y.pr.region("x.ddr"); d = y.pr.region("x.lb"); o = y.pr.region("y.lb"); ty = y.pr.tile("y");
  QRef sc = y.pr.q(0, 0, TQ_SCL);
  y.pr.alloc(sc, s, LVL_DDR, 0, 0, 0, 4096, y.t);
  y.pr.alloc(sc, d, LVL_LB, 0, 0, 0, 4096);
  y.pr.alloc(sc, o, LVL_LB, 0, 0, 4096, 4096);
  y.pr.signal(sc, TQ_IN, 0);
  y.pr.signal(sc, TQ_VEC, 0);
  y.pr.wait(in, 0);
  y.pr.mov(in, d, y.t, s, y.t, 4096);
  y.pr.wait(v, 0);
  y.pr.vec(v, V_RELU, o, ty, d, y.t, 2048, DT_FP16);
  r = run(y.pr);
  assert_int_equal(r.status, 2);
  // (the scalar queue's signals order nothing between dma_in and vec: a race by happens-before)
  assert_true(has(r, "queue c0.k0.vec, instruction 1 (vec op=relu") &&
              has(r, "read of bytes [0, 4096) of region r2 'x.lb': written by queue c0.k0.dma_in, instruction 1, "
                     "which does not happen before it: missing synchronisation"));
}

// Double buffering: dma_in loads tile i into buffer i%2 and signals vec (flag 0); vec waits,
// computes on it, and signals dma_in (flag 1) that the buffer is free again. A load takes
// T = 127 + 1024/16 = 191 cycles; the steady state per iteration is max(compute, T).
static SimResult double_buffer(GsVop op, int64_t elems, int iters) {
  Prog pr;
  QRef in = pr.q(0, 0, TQ_IN), v = pr.q(0, 0, TQ_VEC);
  uint32_t src = pr.region("x.ddr"), buf[2] = {pr.region("buf0"), pr.region("buf1")}, out = pr.region("out");
  std::vector<uint32_t> tiles;
  for (int i = 0; i < iters; i++) tiles.push_back(pr.tile(("x" + std::to_string(i)).c_str()));
  uint32_t ty = pr.tile("y");
  // DDR holds all tiles in one region; each iteration copies 1024 B of it (the tile name the
  // region holds is the first; the loads name it as their source).
  pr.alloc(in, src, LVL_DDR, 0, 0, 0, 1024 * iters, tiles[0]);
  pr.alloc(in, buf[0], LVL_LB, 0, 0, 0, 1024);
  pr.alloc(in, buf[1], LVL_LB, 0, 0, 1024, 1024);
  pr.alloc(in, out, LVL_LB, 0, 0, 2048, 1024);
  for (int i = 0; i < iters; i++) {
    if (i >= 2) pr.wait(in, 1);
    GsInst *m = pr.mov(in, buf[i % 2], tiles[(size_t)i], src, tiles[0], 1024);
    inst_mov_set_src_off(m, 1024 * i);
    pr.signal(in, TQ_VEC, 0);
    pr.wait(v, 0);
    pr.vec(v, op, out, ty, buf[i % 2], tiles[(size_t)i], elems, DT_FP16);
    if (i + 2 < iters) pr.signal(v, TQ_IN, 1);  // buffer free for tile i + 2 (no count left over)
  }
  SimResult r = run(pr);
  assert_int_equal(r.status, 0);
  return r;
}

static void double_buffer_steady_state(void **) {
  const int64_t T = 127 + 1024 / 16, N = 8;
  // compute-bound: exp on 512 fp16 = 4 + 32*8 = 260 > 191: first load, then N computes
  int64_t C = 4 + 512 / 16 * 8;
  assert_int_equal(double_buffer(V_EXP, 512, N).cycles, T + N * C);
  // there dma_in waits for the vec queue to free a buffer (a flag stall): compute i ends at
  // E_i = T + (i+1)C; load i >= 2 waits for E_{i-2} after load i-1 ended: load 1 ends at 2T,
  // load i-1 >= 2 at E_{i-3} + T; each wait is E_{i-2} - L_{i-1} = C - T, for i = 2..N-1
  SimResult r = double_buffer(V_EXP, 512, N);
  assert_int_equal((int64_t)r.stats.get("q.c0.k0.dma_in.stall_flag_cycles"), (N - 2) * (C - T));
  // transfer-bound: relu on 512 = 4 + 32 = 36 < 191: N loads back to back, then the last compute
  C = 4 + 512 / 16;
  r = double_buffer(V_RELU, 512, N);
  assert_int_equal(r.cycles, N * T + C);
  // the vec queue waits for data: all but its N compute cycles
  assert_int_equal((int64_t)r.stats.get("q.c0.k0.vec.stall_data_cycles"), N * T + C - N * C);
}

// Four scalar queues on two cores of two clusters: chip barrier 0 (count 4) then cluster barriers.
// Before the chip barrier they run 100, 200, 300, 400 cycles; after it 10 each; then a reused
// chip barrier 0 and 5 more cycles: 400 + 10 + 5 = 415. Episodes end at 400 and 410.
static void barriers_across_cores_and_clusters(void **) {
  Prog pr;
  QRef qs[4] = {pr.q(0, 0, TQ_SCL), pr.q(0, 1, TQ_SCL), pr.q(1, 0, TQ_SCL), pr.q(1, 1, TQ_SCL)};
  for (int i = 0; i < 4; i++) {
    pr.scalar(qs[i], 100 * (i + 1));
    pr.barrier(qs[i], SCOPE_CHIP, 0, 4);
    pr.scalar(qs[i], 10);
    pr.barrier(qs[i], SCOPE_CLUSTER, 7, 2);
    pr.barrier(qs[i], SCOPE_CHIP, 0, 4);
    pr.scalar(qs[i], 5);
  }
  SimResult r = run(pr);
  assert_int_equal(r.status, 0);
  assert_int_equal(r.cycles, 400 + 10 + 5);
  assert_int_equal(r.episodes.size(), 2);
  assert_int_equal(r.episodes[0].cycle, 400);
  assert_int_equal(r.episodes[1].cycle, 410);
  assert_int_equal((int64_t)r.stats.get("q.c0.k0.scl.stall_flag_cycles"), 300);
}

// Semaphores: c0.k0's dma_in posts after loading; c1.k1's scl waits (chip scope) then runs 7.
static void semaphore_between_clusters(void **) {
  Xfer x;
  QRef in = x.pr.q(0, 0, TQ_IN), s = x.pr.q(1, 1, TQ_SCL);
  uint32_t src = x.pr.region("x.ddr"), d = x.pr.region("x.lb");
  x.pr.alloc(in, src, LVL_DDR, 0, 0, 0, 4096, x.t);
  x.pr.alloc(in, d, LVL_LB, 0, 0, 0, 4096);
  x.pr.mov(in, d, x.t, src, x.t, 4096);
  x.pr.sem(in, true, SCOPE_CHIP, 3);
  x.pr.sem(s, false, SCOPE_CHIP, 3);
  x.pr.scalar(s, 7);
  SimResult r = run(x.pr);
  assert_int_equal(r.status, 0);
  assert_int_equal(r.cycles, 383 + 7);
}

// ---- checks ----
static void check_stale_and_never_written(void **) {
  Prog pr;
  uint32_t t1 = pr.tile("w.v1"), t2 = pr.tile("w.v2"), ty = pr.tile("y");
  uint32_t a = pr.region("w"), o = pr.region("o");
  QRef v = pr.q(0, 0, TQ_VEC);
  pr.alloc(v, a, LVL_LB, 0, 0, 0, 1024, t1);
  pr.alloc(v, o, LVL_LB, 0, 0, 1024, 1024);
  pr.vec(v, V_RELU, o, ty, a, t2, 256, DT_FP16);
  SimResult r = run(pr);
  assert_int_equal(r.status, 2);
  // the relu reads 256 fp16: bytes [0, 512) of the 1024 that hold w.v1
  assert_true(has(r, "queue c0.k0.vec, instruction 2") && has(r, "expects tile t2 'w.v2'") &&
              has(r, "but bytes [0, 512) of it hold tile t1 'w.v1' (stale)"));
  assert_true(has(r, "(vec op=relu dst=o dst_tile=y a=w a_tile=w.v2 elems=256 dtype=fp16), at cycle 0"));
  Prog p2;
  t1 = p2.tile("w");
  ty = p2.tile("y");
  a = p2.region("w");
  o = p2.region("o");
  v = p2.q(0, 0, TQ_VEC);
  p2.alloc(v, a, LVL_LB, 0, 0, 0, 1024);
  p2.alloc(v, o, LVL_LB, 0, 0, 1024, 1024);
  p2.vec(v, V_RELU, o, ty, a, t1, 256, DT_FP16);
  r = run(p2);
  assert_int_equal(r.status, 2);
  assert_true(has(r, "queue c0.k0.vec, instruction 2") && has(r, "nothing was ever written"));
}

static void check_allocations(void **) {
  {  // overlap
    Prog pr;
    uint32_t a = pr.region("a"), b = pr.region("b");
    QRef q = pr.q(0, 1, TQ_SCL);
    pr.alloc(q, a, LVL_LB, 0, 1, 0, 1024);
    pr.alloc(q, b, LVL_LB, 0, 1, 1000, 100);
    SimResult r = run(pr);
    assert_int_equal(r.status, 2);
    assert_true(has(r, "queue c0.k1.scl, instruction 1") && has(r, "overlaps live region r1 'a' [0, 1024)"));
    assert_true(has(r, "(alloc region=b level=lb core=1 offset=1000 bytes=100)"));
  }
  {  // capacity: tiny's LB has 64 KiB = 65536 bytes
    Prog pr;
    uint32_t a = pr.region("a");
    QRef q = pr.q(0, 0, TQ_SCL);
    pr.alloc(q, a, LVL_LB, 0, 0, 65536 - 100, 101);
    SimResult r = run(pr);
    assert_int_equal(r.status, 2);
    assert_true(has(r, "queue c0.k0.scl, instruction 0") && has(r, "beyond the capacity of c0.k0.lb (65536 bytes)"));
  }
  {  // free of something not allocated, then use after free
    Prog pr;
    uint32_t a = pr.region("a");
    QRef q = pr.q(0, 0, TQ_SCL);
    pr.free_(q, a);
    SimResult r = run(pr);
    assert_int_equal(r.status, 2);
    assert_true(has(r, "queue c0.k0.scl, instruction 0") && has(r, "free of region r1 'a', which is not allocated"));
    Prog p2;
    uint32_t t = p2.tile("t"), ty = p2.tile("y");
    a = p2.region("a");
    uint32_t o = p2.region("o");
    q = p2.q(0, 0, TQ_VEC);
    p2.alloc(q, a, LVL_LB, 0, 0, 0, 1024, t);
    p2.alloc(q, o, LVL_LB, 0, 0, 1024, 1024);
    p2.free_(q, a);
    p2.vec(q, V_RELU, o, ty, a, t, 16, DT_FP16);
    r = run(p2);
    assert_int_equal(r.status, 2);
    assert_true(has(r, "queue c0.k0.vec, instruction 3") && has(r, "use of region r1 'a' after it was freed"));
  }
}

static void check_deadlock_then_next_run_works(void **) {
  Prog pr;
  QRef v = pr.q(0, 0, TQ_VEC), m = pr.q(0, 0, TQ_MME), s = pr.q(1, 0, TQ_SCL);
  pr.wait(v, 3);             // nobody signals flag 3 of vec
  pr.signal(m, TQ_VEC, 2);   // a different flag
  pr.wait(m, 1);
  pr.scalar(s, 50);
  pr.barrier(s, SCOPE_CHIP, 9, 2);
  SimResult r = run(pr);
  assert_int_equal(r.status, 2);
  assert_true(has(r, "deadlock"));
  assert_true(has(r, "queue c0.k0.vec, instruction 0 (wait flag=3): waits for flag 3"));
  assert_true(has(r, "queue c0.k0.mme, instruction 1 (wait flag=1): waits for flag 1"));
  assert_true(has(r, "queue c1.k0.scl, instruction 1 (barrier scope=chip id=9 count=2): waits at barrier chip#9 (1 of 2 arrived)"));
  assert_int_equal(r.cycles, 50);
  // the same Simulator runs the next program normally
  SimResult ok;
  Prog p2;
  p2.scalar(p2.q(0, 0, TQ_SCL), 33);
  assert_int_equal(g_sim->run(p2.p, SimOptions(), &ok), 0);
  assert_int_equal(ok.cycles, 33);
}

static void check_static_references(void **) {
  const struct { int c, k, i; const char *msg; } cases[] = {
      {2, 0, 0, "queue c2.k0.dma_in: cluster 2 does not exist"},
      {0, 2, 0, "queue c0.k2.dma_in: "},
      {0, 0, 5, "queue c0.k0.q5: "},
      {0, -1, 2, "queue c0.dma2: "},
  };
  for (const auto &c : cases) {
    Prog pr;
    pr.scalar(pr.q(c.c, c.k, c.i), 1);
    SimResult r = run(pr);
    assert_int_equal(r.status, 2);
    assert_true(has(r, c.msg));
  }
  Prog pr;  // a gemm on the vector unit's queue
  uint32_t a = pr.region("a");
  pr.gemm(pr.q(0, 1, TQ_VEC), a, 0, a, 0, a, 0, 4, 4, 4, DT_FP16);
  SimResult r = run(pr);
  assert_int_equal(r.status, 2);
  assert_true(has(r, "queue c0.k1.vec, instruction 0 (gemm"));
  Prog p2;  // an allocation in a core that does not exist
  p2.alloc(p2.q(0, 0, TQ_SCL), p2.region("a"), LVL_LB, 0, 3, 0, 16);
  r = run(p2);
  assert_int_equal(r.status, 2);
  assert_true(has(r, "core 3 does not exist"));
}

static void check_dtype_and_reach(void **) {
  SimResult r;
  assert_int_equal(one_compute(I_GEMM, V_ADD, 16, DT_FP32, &r), -2);
  assert_true(has(r, "queue c0.k0.mme, instruction 3 (gemm") && has(r, "unit 'mme' does not support dtype fp32"));
  // an operand in the other core's LB
  Prog pr;
  uint32_t t = pr.tile("t"), ty = pr.tile("y"), a = pr.region("a"), o = pr.region("o");
  QRef v = pr.q(0, 0, TQ_VEC);
  pr.alloc(v, a, LVL_LB, 0, 1, 0, 1024, t);
  pr.alloc(v, o, LVL_LB, 0, 0, 0, 1024);
  pr.vec(v, V_RELU, o, ty, a, t, 16, DT_FP16);
  r = run(pr);
  assert_int_equal(r.status, 2);
  assert_true(has(r, "is in c0.k1.lb, but c0.k0.vec can only reach c0.k0.lb"));
}

// More dynamic checks: barrier count mismatch, semaphore deadlock, an access outside its region,
// a write and a read not ordered by synchronisation (a race), accumulation without the tile, and
// a 3-D transfer whose planes land in both DDR channels.
static void check_sync_bounds_races(void **) {
  {
    Prog pr;
    QRef a = pr.q(0, 0, TQ_SCL), b = pr.q(0, 1, TQ_SCL), c = pr.q(1, 0, TQ_SCL);
    pr.barrier(a, SCOPE_CHIP, 4, 3);
    pr.scalar(b, 5);
    pr.barrier(b, SCOPE_CHIP, 4, 2);
    pr.sem(c, false, SCOPE_CLUSTER, 1);
    SimResult r = run(pr);
    assert_int_equal(r.status, 2);
    assert_true(has(r, "queue c0.k1.scl, instruction 1 (barrier scope=chip id=4 count=2), at cycle 5: "
                       "barrier chip#4: this queue arrives with count 2, but the 1 queue(s) already waiting arrived with count 3"));
  }
  {
    Prog pr;
    pr.sem(pr.q(1, 0, TQ_SCL), false, SCOPE_CLUSTER, 1);
    SimResult r = run(pr);
    assert_int_equal(r.status, 2);
    assert_true(has(r, "queue c1.k0.scl, instruction 0 (semwait scope=cluster id=1): waits for semaphore c1#1 (value 0)"));
  }
  {  // 4096 B from offset 1 of a 4096 B region
    Xfer x;
    QRef q = x.pr.q(0, 0, TQ_IN);
    uint32_t s = x.pr.region("s"), d = x.pr.region("d");
    x.pr.alloc(q, s, LVL_DDR, 0, 0, 0, 4096, x.t);
    x.pr.alloc(q, d, LVL_LB, 0, 0, 0, 8192);
    inst_mov_set_src_off(x.pr.mov(q, d, x.t, s, x.t, 4096), 1);
    SimResult r = run(x.pr);
    assert_int_equal(r.status, 2);
    assert_true(has(r, "read of bytes [1, 4097) of region r1 's' is outside its 4096 bytes"));
  }
  {  // vec tells dma_in the buffer is free BEFORE reading it (4 + 4096/16 = 260 cycles), and
     // dma_in overwrites it at once: a write while another queue still reads
    Xfer x;
    QRef v = x.pr.q(0, 0, TQ_VEC), in = x.pr.q(0, 0, TQ_IN);
    uint32_t a = x.pr.region("a"), o = x.pr.region("o"), s = x.pr.region("s"), t2 = x.pr.tile("x2"), ty = x.pr.tile("y");
    x.pr.alloc(in, a, LVL_LB, 0, 0, 0, 8192, x.t);
    x.pr.alloc(in, o, LVL_LB, 0, 0, 8192, 8192);
    x.pr.alloc(in, s, LVL_DDR, 0, 0, 0, 8192, t2);
    x.pr.signal(in, TQ_VEC, 0);
    x.pr.wait(in, 1);
    x.pr.mov(in, a, t2, s, t2, 8192);
    x.pr.wait(v, 0);
    x.pr.signal(v, TQ_IN, 1);
    x.pr.vec(v, V_RELU, o, ty, a, x.t, 4096, DT_FP16);
    SimResult r = run(x.pr);
    assert_int_equal(r.status, 2);
    // the write and the read are unordered whichever the kernel issues first: the race is
    // reported at the second of them, dma_in's mov (instruction 5) or vec's relu (instruction 2)
    assert_true(has(r, "region r1 'a': ") && has(r, "which does not happen before it: missing synchronisation"));
    assert_true((has(r, "queue c0.k0.dma_in, instruction 5 (mov") && has(r, "read by queue c0.k0.vec, instruction 2")) ||
                (has(r, "queue c0.k0.vec, instruction 2 (vec") && has(r, "written by queue c0.k0.dma_in, instruction 5")));
  }
  {  // the vec queue frees a region dma_in is still loading
    Xfer x;
    QRef in = x.pr.q(0, 0, TQ_IN), v = x.pr.q(0, 0, TQ_VEC);
    uint32_t s = x.pr.region("s"), d = x.pr.region("d");
    x.pr.alloc(in, s, LVL_DDR, 0, 0, 0, 4096, x.t);
    x.pr.alloc(in, d, LVL_LB, 0, 0, 0, 4096);
    x.pr.signal(in, TQ_VEC, 0);
    x.pr.mov(in, d, x.t, s, x.t, 4096);
    x.pr.wait(v, 0);
    x.pr.free_(v, d);
    SimResult r = run(x.pr);
    assert_int_equal(r.status, 2);
    assert_true(has(r, "queue c0.k0.vec, instruction 1 (free region=d), at cycle 0: free of bytes [0, 4096) of region "
                       "r2 'd': written by queue c0.k0.dma_in, instruction 3, which does not happen before it: missing "
                       "synchronisation"));
  }
  {  // acc=1 into a region that holds nothing yet
    Prog pr;
    uint32_t ta = pr.tile("a"), to = pr.tile("o"), a = pr.region("a"), o = pr.region("o");
    QRef m = pr.q(0, 0, TQ_MME);
    pr.alloc(m, a, LVL_LB, 0, 0, 0, 2048, ta);
    pr.alloc(m, o, LVL_LB, 0, 0, 2048, 2048);
    pr.gemm(m, o, to, a, ta, a, ta, 16, 16, 16, DT_FP16)->flags = 1;
    SimResult r = run(pr);
    assert_int_equal(r.status, 2);
    // the 16x16 fp16 result is bytes [0, 512) of the 2048 of o
    assert_true(has(r, "accumulation into region r2 'o' expects tile t2 'o', but nothing was ever written "
                       "into bytes [0, 512) of it"));
  }
  {  // 2 planes x 4 rows x 128 B; source planes 4096 apart, rows 256 apart: every row starts in
     // an even interleave block -> channel 0 only; 1024 B at 16 B/cycle = 64 cycles + 127
    Xfer x;
    QRef q = x.pr.q(0, 0, TQ_IN);
    uint32_t s = x.pr.region("s"), d = x.pr.region("d");
    x.pr.alloc(q, s, LVL_DDR, 0, 0, 0, 8192, x.t);
    x.pr.alloc(q, d, LVL_LB, 0, 0, 0, 1024);
    GsInst *in = x.pr.mov(q, d, x.t, s, x.t, 1024);
    inst_mov_set_rows(in, 4);
    inst_mov_set_src_stride(in, 512);
    inst_mov_set_planes(in, 2);
    inst_mov_set_src_pstride(in, 4096);
    SimResult r = run(x.pr);
    assert_int_equal(r.status, 0);
    assert_int_equal(r.cycles, 127 + 1024 / 16);
    assert_true(r.stats.get("ddr.ch0.utilization") == (1024.0 / 16) / (127 + 64) && r.stats.get("ddr.ch1.utilization") == 0);
  }
}

static void check_cluster_link_missing(void **) {
  // tiny has a cluster link; without one (cluster_link_bytes_per_cycle = 0) LB -> LB across
  // clusters is an error. The arch is changed for this run only.
  double saved = g_arch.cluster_link_bytes_per_cycle;
  g_arch.cluster_link_bytes_per_cycle = 0;
  Xfer x;
  QRef q = x.pr.q(0, 0, TQ_OUT);
  uint32_t s = x.pr.region("s"), d = x.pr.region("d");
  x.pr.alloc(q, s, LVL_LB, 0, 0, 0, 64, x.t);
  x.pr.alloc(q, d, LVL_LB, 1, 0, 0, 64);
  x.pr.mov(q, d, x.t, s, x.t, 64);
  SimResult r = run(x.pr);
  g_arch.cluster_link_bytes_per_cycle = saved;
  assert_int_equal(r.status, 2);
  assert_true(has(r, "transfer from c0.k0.lb to c1.k0.lb needs a link between clusters, but cluster_link_bytes_per_cycle is 0"));
}

// Copied runs (prog_copy.c) simulate as the instructions they stand for: cluster 1's dma_in
// loads its half of a DDR input that cluster 0 allocated, into an LB region of its own, as a
// run copied from cluster 0's queue under a map (the input's offsets shifted by its half, the
// region and tiles moved to cluster 1's), or emitted one by one. The same cycles, instructions
// and DDR bytes; a shift past the input's end is the simulator's to find (exit 2), as the
// static checks know no region's size.
static void copy_program(Prog &pr, bool copy, int64_t shift) {
  QRef in0 = pr.q(0, 0, TQ_IN), in1 = pr.q(1, 0, TQ_IN);
  uint32_t x = pr.region("x"), tx = pr.tile("x");
  uint32_t a[2] = {pr.region(NULL), pr.region(NULL)}, t[2][8];
  for (int c = 0; c < 2; c++)
    for (int k = 0; k < 8; k++) t[c][k] = pr.tile(NULL);
  pr.alloc(in0, x, LVL_DDR, 0, 0, 0, 8192, tx);
  pr.barrier(in0, SCOPE_CHIP, 1, 2);
  pr.barrier(in1, SCOPE_CHIP, 1, 2);
  for (int c = 0; c < (copy ? 1 : 2); c++) {
    QRef q = c ? in1 : in0;
    pr.alloc(q, a[c], LVL_LB, c, 0, 0, 4096);
    for (int k = 0; k < 8; k++)
      inst_mov_set_src_off(pr.mov(q, a[c], t[c][k], x, tx, 512), c * shift + 512 * k);
    pr.free_(q, a[c]);
  }
  if (!copy) return;
  GsIdSpan regs[] = {{x, x + 1, 0, shift}, {a[0], a[0] + 1, a[1] - a[0], 0}};
  GsIdSpan tiles[] = {{t[0][0], t[0][7] + 1, t[1][0] - t[0][0], 0}};
  int q0 = prog_find_queue(pr.p, 0, 0, TQ_IN), q1 = prog_find_queue(pr.p, 1, 0, TQ_IN);
  prog_copy_run(pr.p, q1, q0, 2, 10, prog_new_map(pr.p, 1, regs, 2, tiles, 1));
}

static void copied_runs_simulate_as_emitted(void **) {
  Prog filled, copied, past;
  copy_program(filled, false, 4096);
  copy_program(copied, true, 4096);
  copy_program(past, true, 8192);
  assert_int_equal(copied.p->queues[1].ncopied, 10);
  SimResult f = run(filled), c = run(copied);
  assert_int_equal(f.status, 0);
  assert_int_equal(c.status, 0);
  assert_int_equal(c.cycles, f.cycles);
  assert_int_equal(c.instructions, f.instructions);
  assert_int_equal(c.instructions, (2 + 10) + (1 + 10)); // alloc x, barrier; a barrier
  assert_true(c.actions.ddr_read == f.actions.ddr_read);
  assert_true(c.actions.ddr_read == 2 * 8 * 512);
  SimResult p = run(past);
  assert_int_equal(p.status, 2);
}


static void deterministic_and_traced(void **) {
  SimResult a = double_buffer(V_EXP, 512, 6), b = double_buffer(V_EXP, 512, 6);
  assert_int_equal(a.stats.all().size(), b.stats.all().size());
  for (size_t i = 0; i < a.stats.all().size(); i++) {
    assert_string_equal(a.stats.all()[i].name.c_str(), b.stats.all()[i].name.c_str());
    assert_true(a.stats.all()[i].value == b.stats.all()[i].value);
  }
  // traces: the .gtt.gz decompresses and ends with "end CYCLES"; the JSON parses
  char dir[] = "/tmp/gtsim_trace_XXXXXX";
  assert_non_null(mkdtemp(dir));
  std::string gtt = std::string(dir) + "/t.gtt.gz", js = std::string(dir) + "/t.json";
  Prog pr;
  QRef in = pr.q(0, 0, TQ_IN);
  uint32_t t = pr.tile("x"), s = pr.region("s"), d = pr.region("d");
  pr.alloc(in, s, LVL_DDR, 0, 0, 0, 4096, t);
  pr.alloc(in, d, LVL_LB, 0, 0, 0, 4096);
  pr.mov(in, d, t, s, t, 4096);
  pr.free_(in, d);
  SimOptions o;
  o.trace_path = gtt.c_str();
  o.perfetto_path = js.c_str();
  SimResult r = run(pr, o);
  assert_int_equal(r.status, 0);
  gzFile f = gzopen(gtt.c_str(), "rb");
  assert_non_null(f);
  char line[256], last[256] = "";
  int occ = 0, act = 0;
  while (gzgets(f, line, sizeof line)) {
    if (line[0] == 'o' && line[1] == ' ') occ++;
    if (line[0] == 'a' && line[1] == ' ') act++;
    strcpy(last, line);
  }
  gzclose(f);
  assert_int_equal(occ, 3);  // 2 allocs + 1 free
  assert_int_equal(act, 1);  // the mov
  assert_string_equal(last, "end 383\n");
  std::string cmd = "/usr/bin/python3 -c \"import json,sys; d=json.load(open('" + js +
                    "')); sys.exit(0 if any(e.get('ph')=='X' for e in d['traceEvents']) else 1)\"";
  assert_int_equal(system(cmd.c_str()), 0);
  unlink(gtt.c_str());
  unlink(js.c_str());
  rmdir(dir);
}

int sc_main(int, char **) {
  tiny_arch(&g_arch);
  g_sim = new Simulator(&g_arch);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(one_dma_ddr_to_lb),
      cmocka_unit_test(two_dmas_contend_for_one_channel),
      cmocka_unit_test(latency_holds_no_resource),
      cmocka_unit_test(episodes_attribute_cycles_and_ddr_bytes),
      cmocka_unit_test(transfer_paths),
      cmocka_unit_test(matrix_cube),
      cmocka_unit_test(vector_each_cost_class),
      cmocka_unit_test(flag_orders_queues),
      cmocka_unit_test(double_buffer_steady_state),
      cmocka_unit_test(barriers_across_cores_and_clusters),
      cmocka_unit_test(semaphore_between_clusters),
      cmocka_unit_test(check_stale_and_never_written),
      cmocka_unit_test(check_allocations),
      cmocka_unit_test(check_deadlock_then_next_run_works),
      cmocka_unit_test(check_static_references),
      cmocka_unit_test(check_dtype_and_reach),
      cmocka_unit_test(check_sync_bounds_races),
      cmocka_unit_test(check_cluster_link_missing),
      cmocka_unit_test(deterministic_and_traced),
      cmocka_unit_test(copied_runs_simulate_as_emitted),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  delete g_sim;
  return rc;
}
