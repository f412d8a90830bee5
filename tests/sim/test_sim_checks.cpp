// test_sim_checks.cpp — the data-flow checks of docs/timing.md ("Checks") on tiny.cfg's machine,
// each with a correct program that must pass and mutations of it that must be reported. The
// expected messages are composed here from the programs (region and tile ids are numbered in
// creation order from 1, byte ranges follow from the transfer patterns).
#include <string>
#include <vector>

#include "memory.h"
#include "simtest.h"
extern "C" {
#include "../unit/rng_testlib.h"
}

static GsArch g_arch;
static Simulator *g_sim;

static SimResult run(Prog &pr) {
  SimResult r;
  SimOptions o;
  g_sim->run(pr.p, o, &r);
  return r;
}

static bool has(const std::string &text, const std::string &s) {
  bool ok = text.find(s) != std::string::npos;
  if (!ok) fprintf(stderr, "# lacks \"%s\":\n# %s\n", s.c_str(), text.c_str());
  return ok;
}

// ---- the byte ranges themselves ----

// A 96-byte DDR region r of program p, whose writes ranges_after_writes checks against a
// byte-by-byte model.
struct RangeBench {
  GsProgram *p = prog_new();
  uint32_t r = prog_new_region(p, "y");
  HbClocks hb;
  MemoryState m;
  std::vector<int> bytes;  // tile * 2 + by_compute; 0: never written
  Mark who{0, 1, 0};
  RangeBench() {
    hb.reset(std::vector<int>{0}, 1);
    Buffer ddr;
    ddr.capacity = 1 << 20;
    m.bufs.push_back(ddr);
    m.hb = &hb;
  }
  ~RangeBench() { prog_free(p); }
  void start() {
    m.reset(p);
    who = Mark{0, 1, 0};
    assert_true(m.alloc(r, 0, 0, 96, 0, 0, who).empty());
    bytes.assign(96, 0);
  }
  // writes ap with tile (by compute or not), then compares the region's ranges with the model
  void write(const GsAccess &ap, uint32_t tile, bool comp) {
    put(ap, tile, comp);
    check();
  }
  // writes ap with tile into the region and into the model
  void put(const GsAccess &ap, uint32_t tile, bool comp) {
    who.i++;
    std::string e;
    assert_true(m.write(r, tile, ap, who, false, comp, &e));
    assert_true(e.empty());
    for (int64_t i = 0; i < ap.rows; i++)
      for (int64_t b = 0; b < ap.row_bytes; b++)
        bytes[(size_t)(ap.base + i * ap.row_stride + b)] = (int)tile * 2 + comp;
  }
  // a read of ap expecting tile passes exactly when every byte of it holds tile in the model
  void read(const GsAccess &ap, uint32_t tile) {
    who.i++;
    bool all = true;
    for (int64_t i = 0; i < ap.rows; i++)
      for (int64_t b = 0; b < ap.row_bytes; b++)
        all = all && bytes[(size_t)(ap.base + i * ap.row_stride + b)] / 2 == (int)tile;
    std::string e;
    bool ok = m.read(r, tile, ap, who, &e);
    assert_int_equal(ok, all);
    assert_int_equal(e.empty(), all);
  }
  // the region's ranges (its held writes settled) against the model: maximal runs of equal
  // non-zero bytes
  void check() {
    std::vector<std::pair<int64_t, int64_t>> want;
    for (int64_t b = 0; b < 96; b++) {
      if (!bytes[(size_t)b]) continue;
      if (b > 0 && bytes[(size_t)b] == bytes[(size_t)b - 1]) want.back().second = b + 1;
      else want.push_back({b, b + 1});
    }
    const SpanMap &sp = m.contents(r);
    assert_int_equal(sp.size(), want.size());
    size_t k = 0;
    for (const auto &e : sp) {
      assert_int_equal(e.first, want[k].first);
      assert_int_equal(e.second.end, want[k].second);
      assert_int_equal((int)e.second.tile * 2 + e.second.by_compute, bytes[(size_t)e.first]);
      k++;
    }
  }
};

// MemoryState keeps a region's contents as merged byte ranges (memory.cpp, span_write). Random
// strided writes of three tiles, by transfers and by compute, into a 96-byte region: after
// every write the ranges must be exactly what a byte-by-byte model holds, cut where two
// neighbouring bytes differ (in tile or writer kind) and nowhere else.
static void ranges_match_bytes(void **) {
  RangeBench t;
  Rng g{0x9e3779b97f4a7c15ull};
  for (int trial = 0; trial < 300; trial++) {
    t.start();
    for (int w = 0; w < 30; w++) {
      int64_t row = 1 + (int64_t)(rnd(&g) % 8), rows = 1 + (int64_t)(rnd(&g) % 6);
      int64_t stride = row + (int64_t)(rnd(&g) % 6), base = (int64_t)(rnd(&g) % 16);
      uint32_t tile = 1 + (uint32_t)(rnd(&g) % 3);
      bool comp = rnd(&g) % 4 == 0;
      t.write(GsAccess{base, row, rows, stride, 1, rows * stride}, tile, comp);
    }
  }
}

// The same model for a tensor's slices written one after another (span_extend's case): k
// slices of w bytes in every k·w-byte pixel, each slice a write of all pixels (or of the pixels
// from a random one on), in a random order, mostly of one tile, now and then another tile or by
// compute, so that a slice's rows continue, or do not continue, the ranges before them and
// reach, or do not reach, the next slice's.
static void ranges_match_bytes_slices(void **) {
  RangeBench t;
  Rng g{0x2545f4914f6cdd1dull};
  for (int trial = 0; trial < 300; trial++) {
    t.start();
    int64_t k = 2 + (int64_t)(rnd(&g) % 5), w = 1 + (int64_t)(rnd(&g) % 4), px = 96 / (k * w);
    for (int pass = 0; pass < 3; pass++) {
      std::vector<int64_t> order;
      for (int64_t j = 0; j < k; j++) order.push_back(j);
      if (rnd(&g) % 2)
        for (size_t j = order.size(); j > 1; j--) std::swap(order[j - 1], order[rnd(&g) % j]);
      for (int64_t j : order) {
        int64_t p0 = rnd(&g) % 4 == 0 ? (int64_t)(rnd(&g) % (uint64_t)px) : 0;
        uint32_t tile = rnd(&g) % 5 == 0 ? 2 : 1;
        bool comp = rnd(&g) % 7 == 0;
        t.write(GsAccess{p0 * k * w + j * w, w, px - p0, k * w, 1, (px - p0) * k * w}, tile, comp);
      }
    }
  }
}

// A tensor's column blocks, as a conv stores them (memory.cpp, "held writes"): a region of rows
// at a stride of S bytes, each store one block of c columns over a run of rows, blocks
// coming from either end as two queues would store them, and among them other strided and
// whole writes, now and then of another tile or by compute, and reads. The region keeps some
// stores out of its ranges; a read must still see every byte as the model holds it (the
// verdict is the model's: every byte of the read holds its tile), and the ranges, looked at
// now and then (their held writes settled), must be the model's.
static void held_writes_match_bytes(void **) {
  RangeBench t;
  Rng g{0x3c6ef372fe94f82bull};
  // a block: c columns of rows r0 .. r0 + n; now and then shifted off the blocks' grid by a few
  // bytes, so that it meets one or two blocks in part
  auto pattern = [&](int64_t S, int64_t c) {
    int64_t rows = 96 / S, r0 = rnd(&g) % 3 == 0 ? (int64_t)(rnd(&g) % (uint64_t)rows) : 0;
    int64_t n = rows - r0 - (rnd(&g) % 4 == 0 && rows - r0 > 1 ? 1 : 0);
    int64_t j = (int64_t)(rnd(&g) % (uint64_t)(S / c));
    int64_t shift = rnd(&g) % 5 == 0 ? (int64_t)(rnd(&g) % (uint64_t)c) : 0;
    if (r0 * S + j * c + shift + (n - 1) * S + c > 96) {  // past the region's end
      if (n > 1) n--;
      else shift = 0;
    }
    return GsAccess{r0 * S + j * c + shift, c, n, S, 1, n * S};
  };
  for (int trial = 0; trial < 400; trial++) {
    t.start();
    int64_t S = 16 * (1 + (int64_t)(rnd(&g) % 2)), c = 4 * (1 + (int64_t)(rnd(&g) % 2));
    uint32_t main_tile = 1 + (uint32_t)(rnd(&g) % 2);
    for (int k = 0; k < 40; k++) {
      uint64_t what = rnd(&g) % 10;
      uint32_t tile = rnd(&g) % 6 == 0 ? 3 : main_tile;
      bool comp = rnd(&g) % 9 == 0;
      if (what < 6) {
        t.put(pattern(S, c), tile, comp);
      } else if (what < 8) {
        int64_t row = 1 + (int64_t)(rnd(&g) % 8), rows = 1 + (int64_t)(rnd(&g) % 6);
        int64_t stride = row + (int64_t)(rnd(&g) % 6), base = (int64_t)(rnd(&g) % 16);
        t.put(GsAccess{base, row, rows, stride, 1, rows * stride}, tile, comp);
      } else {
        GsAccess ap = rnd(&g) % 2 ? pattern(S, c) : memory_range((int64_t)(rnd(&g) % 64), 32);
        int held = t.bytes[(size_t)ap.base] / 2;
        t.read(ap, held && rnd(&g) % 4 ? (uint32_t)held : tile);
      }
      if (rnd(&g) % 4 == 0) t.check();
    }
    t.check();
  }
}

// A tensor stored a block of rows of one block of columns at a time (memory.cpp, hold: a
// store that continues a held write's rows joins it, as one that continues its columns does):
// a region of 96/S rows at a stride of S bytes cut into blocks of rows and of columns, each
// block one store, in column-major, row-major or a random order, each order run forwards or
// backwards, mostly of one tile, now and then of another or by compute, and reads of a block
// or a whole column. Reads must see every byte as the model holds it and the ranges, looked at
// now and then, must be the model's.
static void held_row_blocks_match_bytes(void **) {
  RangeBench t;
  Rng g{0x510e527fade682d1ull};
  for (int trial = 0; trial < 400; trial++) {
    t.start();
    int64_t S = 16 * (1 + (int64_t)(rnd(&g) % 2)), c = 4 * (1 + (int64_t)(rnd(&g) % 2));
    int64_t rows = 96 / S, rb = 2 + (int64_t)(rnd(&g) % 2);  // rows per block: 2 or 3
    int64_t nr = rows / rb, nc = S / c;
    std::vector<std::pair<int64_t, int64_t>> blocks;  // (block of rows, block of columns)
    int order = (int)(rnd(&g) % 3);
    for (int64_t i = 0; i < nr * nc; i++)
      blocks.push_back(order == 0 ? std::make_pair(i % nr, i / nr) : std::make_pair(i / nc, i % nc));
    if (order == 2)
      for (size_t j = blocks.size(); j > 1; j--) std::swap(blocks[j - 1], blocks[rnd(&g) % j]);
    if (rnd(&g) % 2) std::reverse(blocks.begin(), blocks.end());
    for (auto [br, bc] : blocks) {
      uint32_t tile = rnd(&g) % 8 == 0 ? 2 : 1;
      bool comp = rnd(&g) % 11 == 0;
      t.put(GsAccess{br * rb * S + bc * c, c, rb, S, 1, rb * S}, tile, comp);
      if (rnd(&g) % 5 == 0) {
        bool block = rnd(&g) % 2;  // else the whole column
        int64_t r0 = block ? br * rb : 0, n = block ? rb : nr * rb;
        t.read(GsAccess{r0 * S + bc * c, c, n, S, 1, n * S}, 1);
      }
      if (rnd(&g) % 4 == 0) t.check();
    }
    t.check();
  }
}

// ---- byte ranges ----

// A DDR region y of 512 B is filled by two transfers from an LB tile x of 256 B, each 4 rows of
// 64 B at a 128 B stride: the first into bytes [128r, 128r + 64), the second (dst_off 64) into
// [128r + 64, 128r + 128); then all 512 B of y are read back into the LB. One queue does it all
// (program order). `mut`: 0 none, 1 no second transfer, 2 the second leaves the old tile,
// 3 the first leaves the old tile, 4 the read-back reads 640 B of a 640 B region.
static SimResult columns(int mut) {
  Prog pr;
  uint32_t tx = pr.tile("x"), ty = pr.tile("y"), told = pr.tile("y.old");
  uint32_t x = pr.region("x"), y = pr.region("y"), z = pr.region("z");
  QRef q = pr.q(0, 0, TQ_OUT);
  int64_t ybytes = mut == 4 ? 640 : 512;
  pr.alloc(q, x, LVL_LB, 0, 0, 0, 256, tx);
  pr.alloc(q, y, LVL_DDR, 0, 0, 0, ybytes);
  pr.alloc(q, z, LVL_LB, 0, 0, 1024, ybytes);
  for (int half = 0; half < 2; half++) {
    if (half == 1 && mut == 1) continue;
    bool old = (half == 1 && mut == 2) || (half == 0 && mut == 3);
    GsInst *m = pr.mov(q, y, old ? told : ty, x, tx, 256);
    inst_mov_set_rows(m, 4);
    inst_mov_set_dst_stride(m, 128);
    inst_mov_set_dst_off(m, 64 * half);
  }
  pr.mov(q, z, ty, y, ty, ybytes);
  return run(pr);
}

static void pieces_of_a_region(void **) {
  assert_int_equal(columns(0).status, 0);
  const std::string at = "queue c0.k0.dma_out, instruction 5 (mov dst=z dst_tile=y src=y src_tile=y ";
  const std::string head = "read of region r2 'y' expects tile t2 'y', but ";
  SimResult r = columns(1);  // row 0's second half is the first stretch never written
  assert_int_equal(r.status, 2);
  assert_true(has(r.message, "instruction 4 (mov dst=z") &&
              has(r.message, head + "nothing was ever written into bytes [64, 128) of it"));
  r = columns(2);
  assert_int_equal(r.status, 2);
  assert_true(has(r.message, at) && has(r.message, head + "bytes [64, 128) of it hold tile t3 'y.old' (stale)"));
  r = columns(3);  // a wrong tile in a piece that is not the last one written
  assert_int_equal(r.status, 2);
  assert_true(has(r.message, at) && has(r.message, head + "bytes [0, 64) of it hold tile t3 'y.old' (stale)"));
  r = columns(4);
  assert_int_equal(r.status, 2);
  assert_true(has(r.message, head + "nothing was ever written into bytes [512, 640) of it"));
}

// Every operand is read over the extent the instruction names (isa.def): a's a_elems where elems
// counts window reads (pooling), b's b_elems. A byte missing anywhere in them is reported, not
// only their first byte; so is an extent past the region.
static void operands_with_extent(void **) {
  for (int mut = 0; mut < 5; mut++) {
    Prog pr;
    uint32_t ta = pr.tile("a"), tb = pr.tile("b"), to = pr.tile("o"), tp = pr.tile("p");
    uint32_t a = pr.region("a"), b = pr.region("b"), o = pr.region("o"), bd = pr.region("b.ddr");
    QRef v = pr.q(0, 0, TQ_VEC), in = pr.q(0, 0, TQ_IN);
    pr.alloc(v, a, LVL_LB, 0, 0, 0, 1024, ta);
    pr.alloc(in, b, LVL_LB, 0, 0, 1024, 1024);
    pr.alloc(v, o, LVL_LB, 0, 0, 2048, 1024);
    pr.alloc(in, bd, LVL_DDR, 0, 0, 0, 1024, tb);
    // b: all 1024 B hold tile b (mut 1: none; mut 2: all but its last 32 B)
    if (mut != 1) pr.mov(in, b, tb, bd, tb, mut == 2 ? 992 : 1024);
    pr.signal(in, TQ_VEC, 0);
    pr.wait(v, 0);
    pr.vec(v, V_ADD, o, to, a, ta, 512, DT_FP16, b, tb);  // b_elems 512: bytes [0, 1024)
    // pooling over a's 512 fp16 (1024 B), window 4: 512 window reads (mut 4: a_elems 1024, 2 KiB)
    GsInst *p = pr.vec(v, V_POOLMAX, o, tp, a, ta, 512, DT_FP16);
    inst_vec_set_param(p, 4);
    inst_vec_set_a_elems(p, mut == 4 ? 1024 : 512);
    if (mut == 3) pr.vec(v, V_RELU, o, to, a, ta, 1024, DT_FP16);  // 2048 B: beyond a's bytes
    SimResult r = run(pr);
    if (mut == 0) {
      assert_int_equal(r.status, 0);
      continue;
    }
    assert_int_equal(r.status, 2);
    std::string b_head = "read of region r2 'b' expects tile t2 'b', but nothing was ever written into ";
    if (mut == 1) assert_true(has(r.message, b_head + "the region"));
    if (mut == 2) assert_true(has(r.message, b_head + "bytes [992, 1024) of it"));
    if (mut >= 3) assert_true(has(r.message, "read of bytes [0, 2048) of region r1 'a' is outside its 1024 bytes"));
  }
}

// Results assembled side by side in one region: each vec writes its part from dst_off on, with
// the same tile; the store of the whole region then finds that tile in every byte (mut 1: the
// second part written at offset 0 too, so bytes [128, 256) were never written).
static void results_side_by_side(void **) {
  for (int mut = 0; mut < 2; mut++) {
    Prog pr;
    uint32_t ta = pr.tile("a"), ty = pr.tile("y");
    uint32_t a = pr.region("a"), y = pr.region("y"), d = pr.region("d");
    QRef v = pr.q(0, 0, TQ_VEC), out = pr.q(0, 0, TQ_OUT);
    pr.alloc(v, a, LVL_LB, 0, 0, 0, 256, ta);
    pr.alloc(v, y, LVL_LB, 0, 0, 256, 256);
    pr.alloc(out, d, LVL_DDR, 0, 0, 0, 256);
    pr.vec(v, V_RELU, y, ty, a, ta, 64, DT_FP16);  // bytes [0, 128)
    GsInst *p = pr.vec(v, V_RELU, y, ty, a, ta, 64, DT_FP16);
    if (mut == 0) inst_vec_set_dst_off(p, 128);  // bytes [128, 256)
    pr.signal(v, TQ_OUT, 0);
    pr.wait(out, 0);
    pr.mov(out, d, ty, y, ty, 256);
    SimResult r = run(pr);
    if (mut == 0) {
      assert_int_equal(r.status, 0);
    } else {
      assert_int_equal(r.status, 2);
      assert_true(has(r.message, "nothing was ever written into bytes [128, 256) of it"));
    }
  }
}

// A gather names its index list (idx, idx_bytes): the list must hold its tile in every byte read
// (mut 1: never loaded; mut 2: its load not yet ordered before the gather: another queue wrote it).
static void gather_reads_its_indices(void **) {
  for (int mut = 0; mut < 3; mut++) {
    Prog pr;
    uint32_t tt = pr.tile("table"), ti = pr.tile("ids"), tr = pr.tile("rows");
    uint32_t table = pr.region("table"), ids_d = pr.region("ids.ddr"), ids = pr.region("ids");
    uint32_t rows = pr.region("rows");
    QRef in = pr.q(0, 0, TQ_IN), out = pr.q(0, 0, TQ_OUT);
    pr.alloc(in, table, LVL_DDR, 0, 0, 0, 4096, tt);
    pr.alloc(in, ids_d, LVL_DDR, 0, 0, 4096, 16, ti);
    pr.alloc(in, ids, LVL_LB, 0, 0, 0, 64);
    pr.alloc(in, rows, LVL_LB, 0, 0, 64, 512);
    pr.barrier(in, SCOPE_CLUSTER, 0, 2);  // the allocations before both queues' accesses
    pr.barrier(out, SCOPE_CLUSTER, 0, 2);
    if (mut == 0) pr.mov(in, ids, ti, ids_d, ti, 16);
    if (mut == 2) {  // loaded by dma_out, in time (dma_in first copies 2 KiB: it is there when
                     // the gather runs), but nothing orders the load before the gather
      uint32_t pad = pr.region("pad");
      pr.alloc(in, pad, LVL_LB, 0, 0, 1024, 2048);
      pr.mov(in, pad, tt, table, tt, 2048);
      pr.mov(out, ids, ti, ids_d, ti, 16);
      pr.signal(out, TQ_IN, 0);  // (consumed after the gather: no order before it)
    }
    GsInst *g = pr.mov(in, rows, tr, table, tt, 512);  // 4 rows of 128 B every 1 KiB
    inst_mov_set_rows(g, 4);
    inst_mov_set_src_stride(g, 1024);
    g->r[2] = ids;
    g->t[2] = ti;
    inst_mov_set_idx_bytes(g, 16);
    if (mut == 2) pr.wait(in, 0);
    SimResult r = run(pr);
    if (mut == 0) {
      assert_int_equal(r.status, 0);
      continue;
    }
    assert_int_equal(r.status, 2);
    if (mut == 1) assert_true(has(r.message, "read of region r3 'ids' expects tile t2 'ids', but nothing was ever written into bytes [0, 16) of it"));
    if (mut == 2) assert_true(has(r.message, "read of bytes [0, 16) of region r3 'ids'"));
  }
}

// A tile read beyond what a compute instruction wrote of it (and never written otherwise) is an
// error that says so; the same bytes missing after a transfer are the plain error.
static void compute_wrote_less_than_read(void **) {
  for (int by_mov = 0; by_mov < 2; by_mov++) {
    Prog pr;
    uint32_t ta = pr.tile("a"), ty = pr.tile("y");
    uint32_t a = pr.region("a"), y = pr.region("y"), d = pr.region("d");
    QRef v = pr.q(0, 0, TQ_VEC), in = pr.q(0, 0, TQ_IN), out = pr.q(0, 0, TQ_OUT);
    QRef w = by_mov ? in : v;  // who writes y
    pr.alloc(w, a, LVL_LB, 0, 0, 0, 256, ta);
    pr.alloc(w, y, LVL_LB, 0, 0, 256, 256);
    pr.alloc(out, d, LVL_DDR, 0, 0, 0, 256);
    if (by_mov) pr.mov(w, y, ty, a, ta, 128);
    else pr.vec(w, V_RELU, y, ty, a, ta, 64, DT_FP16);  // 64 fp16: bytes [0, 128)
    pr.signal(w, TQ_OUT, 0);
    pr.wait(out, 0);
    pr.mov(out, d, ty, y, ty, 256);
    SimResult r = run(pr);
    std::string what = "read of region r2 'y' expects tile t2 'y', but nothing was ever written into bytes [128, 256) of it";
    assert_int_equal(r.status, 2);
    assert_true(has(r.message, "queue c0.k0.dma_out, instruction 2 (mov dst=d"));
    std::string why = " (after the part of the tile a gemm/vec wrote: it wrote less than is read)";
    assert_true(has(r.message, what + (by_mov ? "\n" : why)));
  }
}

// A unit that computes in a narrower dtype than the tensors are stored in: an int8 gemm on
// fp16 operands names the stored element size (elem_bytes=2) and reads and writes 8x8x2 = 128 B
// each; the store of the 128 B result finds it all (mut 1: without elem_bytes the gemm writes
// 8x8x1 = 64 B, and the store reads 64 B more than it wrote: the error says so).
static void stored_element_size(void **) {
  for (int mut = 0; mut < 2; mut++) {
    Prog pr;
    uint32_t ta = pr.tile("a"), tb = pr.tile("b"), ty = pr.tile("y");
    uint32_t a = pr.region("a"), b = pr.region("b"), y = pr.region("y"), d = pr.region("d");
    QRef mm = pr.q(0, 0, TQ_MME), out = pr.q(0, 0, TQ_OUT);
    pr.alloc(mm, a, LVL_LB, 0, 0, 0, 128, ta);
    pr.alloc(mm, b, LVL_LB, 0, 0, 128, 128, tb);
    pr.alloc(mm, y, LVL_LB, 0, 0, 256, 128);
    pr.alloc(out, d, LVL_DDR, 0, 0, 0, 128);
    GsInst *g = pr.gemm(mm, y, ty, a, ta, b, tb, 8, 8, 8, DT_INT8);
    if (mut == 0) inst_gemm_set_elem_bytes(g, 2);
    pr.signal(mm, TQ_OUT, 0);
    pr.wait(out, 0);
    pr.mov(out, d, ty, y, ty, 128);
    SimResult r = run(pr);
    if (mut == 0) {
      assert_int_equal(r.status, 0);
      continue;
    }
    assert_int_equal(r.status, 2);
    assert_true(has(r.message, "nothing was ever written into bytes [64, 128) of it (after the part of "
                               "the tile a gemm/vec wrote: it wrote less than is read)"));
  }
}

// ---- races by happens-before ----

static const std::string kRace = ", which does not happen before it: missing synchronisation";

// The cluster DMA queue c0.dma0 loads 2 KiB of weights from DDR into the GB and posts semaphore
// 1; core 0's dma_in first copies 16 KiB inside its LB (20 + 2 + 2 = 24 cycles of latency, then
// 16384 B through the LB's two 64 B/cycle ports: 256, ends at 280), then waits for the semaphore
// and copies the weights into its LB. The GB load ends at 130 + 2048/32 = 194, long before:
// without the semwait the copy still finds the weights there. A check by time passes that
// program; by happens-before it is a race (the example).
static SimResult gb_weights(bool semwait) {
  Prog pr;
  uint32_t tw = pr.tile("w"), tx = pr.tile("x");
  uint32_t wd = pr.region("w.ddr"), wg = pr.region("w.gb"), xa = pr.region("x.a");
  uint32_t xb = pr.region("x.b"), wl = pr.region("w.lb");
  QRef dma = pr.q(0, -1, 0), in = pr.q(0, 0, TQ_IN);
  pr.alloc(dma, wd, LVL_DDR, 0, 0, 0, 2048, tw);
  pr.alloc(dma, wg, LVL_GB, 0, 0, 0, 2048);
  pr.barrier(dma, SCOPE_CLUSTER, 0, 2);  // the allocation before both queues' accesses
  pr.barrier(in, SCOPE_CLUSTER, 0, 2);
  pr.mov(dma, wg, tw, wd, tw, 2048);
  pr.sem(dma, true, SCOPE_CLUSTER, 1);
  pr.alloc(in, xa, LVL_LB, 0, 0, 0, 16384, tx);
  pr.alloc(in, xb, LVL_LB, 0, 0, 16384, 16384);
  pr.alloc(in, wl, LVL_LB, 0, 0, 32768, 2048);
  pr.mov(in, xb, tx, xa, tx, 16384);
  if (semwait) pr.sem(in, false, SCOPE_CLUSTER, 1);
  pr.mov(in, wl, tw, wg, tw, 2048);
  if (!semwait) pr.sem(in, false, SCOPE_CLUSTER, 1);  // (no post left over)
  return run(pr);
}

static void race_hidden_by_timing(void **) {
  SimResult r = gb_weights(true);
  assert_int_equal(r.status, 0);
  // then GB -> LB: 20 + 10 + 2 + 5 = 37, 2048 B through the 16 B/cycle NoC link: 128
  assert_int_equal(r.cycles, 280 + 37 + 2048 / 16);
  r = gb_weights(false);
  assert_int_equal(r.status, 2);
  assert_true(has(r.message, "queue c0.k0.dma_in, instruction 5 (mov dst=w.lb dst_tile=w src=w.gb src_tile=w") &&
              has(r.message, "at cycle 280: read of bytes [0, 2048) of region r2 'w.gb': written by queue c0.dma0, "
                             "instruction 3" + kRace));
}

// Semaphore posts are tokens consumed in order: dma_out of core 0 stores x1, posts, stores x2,
// posts; dma_in of core 1 loads 16 KiB first (1151 cycles: both posts are long done), then
// waits once and reads x2. It is ordered after the first post only: x2's store is a race. With
// a second semwait it is not.
static SimResult two_posts(int waits) {
  Prog pr;
  uint32_t t1 = pr.tile("x1"), t2 = pr.tile("x2"), tb = pr.tile("b");
  uint32_t s1 = pr.region("s1"), s2 = pr.region("s2"), x1 = pr.region("x1"), x2 = pr.region("x2");
  uint32_t bd = pr.region("b.ddr"), bl = pr.region("b.lb"), y = pr.region("y");
  QRef out = pr.q(0, 0, TQ_OUT), in = pr.q(0, 1, TQ_IN), sc = pr.q(0, 0, TQ_SCL);
  pr.alloc(sc, s1, LVL_LB, 0, 0, 0, 256, t1);
  pr.alloc(sc, s2, LVL_LB, 0, 0, 256, 256, t2);
  pr.alloc(sc, x1, LVL_DDR, 0, 0, 0, 256);
  pr.alloc(sc, x2, LVL_DDR, 0, 0, 256, 256);
  pr.alloc(sc, bd, LVL_DDR, 0, 0, 65536, 16384, tb);
  pr.alloc(sc, bl, LVL_LB, 0, 1, 0, 16384);
  pr.alloc(sc, y, LVL_LB, 0, 1, 16384, 256);
  pr.barrier(sc, SCOPE_CLUSTER, 0, 3);  // the allocations before everything else
  pr.barrier(out, SCOPE_CLUSTER, 0, 3);
  pr.barrier(in, SCOPE_CLUSTER, 0, 3);
  pr.mov(out, x1, t1, s1, t1, 256);
  pr.sem(out, true, SCOPE_CLUSTER, 5);
  pr.mov(out, x2, t2, s2, t2, 256);
  pr.sem(out, true, SCOPE_CLUSTER, 5);
  pr.mov(in, bl, tb, bd, tb, 16384);
  for (int i = 0; i < waits; i++) pr.sem(in, false, SCOPE_CLUSTER, 5);
  pr.mov(in, y, t2, x2, t2, 256);
  if (waits < 2) pr.sem(in, false, SCOPE_CLUSTER, 5);  // consume the second post afterwards
  return run(pr);
}

static void semaphore_tokens_in_order(void **) {
  assert_int_equal(two_posts(2).status, 0);
  SimResult r = two_posts(1);
  assert_int_equal(r.status, 2);
  assert_true(has(r.message, "queue c0.k1.dma_in, instruction 3 (mov dst=y") &&
              has(r.message, "read of bytes [0, 256) of region r4 'x2': written by queue c0.k0.dma_out, instruction 3" + kRace));
}

// Allocation and free order too: a region allocated by one queue and used by another with
// nothing in between; bytes freed by one queue and allocated again by another. Each passes with
// a flag between the two (mut 0) and is reported without it.
static void allocations_in_order(void **) {
  for (int mut = 0; mut < 3; mut++) {
    Prog pr;
    uint32_t ta = pr.tile("a"), ty = pr.tile("y");
    uint32_t a = pr.region("a"), y = pr.region("y"), z = pr.region("z");
    QRef v = pr.q(0, 0, TQ_VEC), in = pr.q(0, 0, TQ_IN);
    pr.alloc(in, a, LVL_LB, 0, 0, 0, 256, ta);
    pr.alloc(in, y, LVL_LB, 0, 0, 256, 256);
    if (mut != 1) pr.signal(in, TQ_VEC, 0);
    if (mut != 1) pr.wait(v, 0);
    pr.vec(v, V_RELU, y, ty, a, ta, 128, DT_FP16);
    pr.free_(v, y);
    if (mut != 2) pr.signal(v, TQ_IN, 1);
    if (mut != 2) pr.wait(in, 1);
    pr.alloc(in, z, LVL_LB, 0, 0, 256, 256);
    SimResult r = run(pr);
    if (mut == 0) assert_int_equal(r.status, 0);
    if (mut == 1)
      assert_true(r.status == 2 && has(r.message, "queue c0.k0.vec, instruction 0 (vec") &&
                  has(r.message, "use of region r1 'a', allocated by queue c0.k0.dma_in, instruction 0" + kRace));
    if (mut == 2) {
      // the free may run first (then the allocation is the race) or not (an overlap)
      assert_int_equal(r.status, 2);
      std::string race = "allocation of region r3 'z' [256, 512) in c0.k0.lb takes bytes [256, 512) of region "
                         "r2 'y', freed by queue c0.k0.vec, instruction 1" + kRace;
      std::string overlap = "allocation of region r3 'z' [256, 512) in c0.k0.lb overlaps live region r2 'y'";
      assert_true(has(r.message, r.message.find(overlap) != std::string::npos ? overlap : race));
    }
  }
}

// A queue that reads a few patterns of a region in turn, now and then at a new epoch, and
// another queue that writes some bytes of it after learning of the reads up to some point: the
// write must be reported exactly when a read it does not know of overlaps it, naming the newest
// such read (first_unordered looks at a queue's records newest first), as a list of every read
// says; and the log must hold about a record per pattern, not one per epoch (memory.cpp,
// log_access: a record a later one of its pattern supersedes is dropped).
static void superseded_reads_keep_verdicts(void **) {
  struct Read {
    uint32_t e, i;
    int64_t lo, hi;
  };
  Rng g{0x2545f4914f6cdd1dull};
  for (int trial = 0; trial < 200; trial++) {
    GsProgram *p = prog_new();
    uint32_t r = prog_new_region(p, "w");
    HbClocks hb;
    hb.reset(std::vector<int>{0, 1}, 2);
    MemoryState m;
    Buffer ddr;
    ddr.capacity = 1 << 20;
    m.bufs.push_back(ddr);
    m.hb = &hb;
    m.reset(p);
    std::string e;
    Mark w0{0, hb.epoch(0), 1};
    assert_true(m.alloc(r, 0, 0, 4096, 0, 0, w0).empty());
    assert_true(m.write(r, 5, memory_range(0, 4096), w0, false, false, &e));
    HbClock known;  // what queue 1 learns: the write, then the reads up to a random one
    hb.release(0, &known);
    size_t npat = 1 + rnd(&g) % 20, nreads = 400 + rnd(&g) % 400, learn = rnd(&g) % nreads;
    std::vector<std::pair<int64_t, int64_t>> pat;
    for (size_t k = 0; k < npat; k++) {
      int64_t lo = (int64_t)(rnd(&g) % 4000);
      pat.push_back({lo, lo + 1 + (int64_t)(rnd(&g) % (uint64_t)(4096 - lo))});
    }
    std::vector<Read> reads;
    for (size_t n = 0; n < nreads; n++) {
      HbClock tok;
      if (rnd(&g) % 2) hb.release(0, n == learn ? &known : &tok);
      const std::pair<int64_t, int64_t> &x = pat[rnd(&g) % 4 ? n % npat : rnd(&g) % npat];
      Read rd{hb.epoch(0), (uint32_t)(2 + n), x.first, x.second};
      assert_true(m.read(r, 5, memory_range(rd.lo, rd.hi - rd.lo), Mark{0, rd.e, rd.i}, &e));
      const Read *last = reads.empty() ? nullptr : &reads.back();
      if (!last || last->e != rd.e || last->lo != rd.lo || last->hi != rd.hi)
        reads.push_back(rd);  // (the same read again at the same epoch is the earlier one)
    }
    size_t recs = 0;
    for (const QueueAccesses &ql : m.region(r).reads) recs += ql.v.size();
    assert_true(recs <= std::max<size_t>(16, 4 * npat));
    hb.acquire(1, known);
    uint32_t seen = hb.known(1, 0);
    int64_t lo = (int64_t)(rnd(&g) % 4096), hi = lo + 1 + (int64_t)(rnd(&g) % (uint64_t)(4096 - lo));
    const Read *hit = nullptr;
    for (size_t k = reads.size(); k-- > 0 && !hit;)
      if (reads[k].e > seen && reads[k].lo < hi && lo < reads[k].hi) hit = &reads[k];
    bool ok = m.write(r, 6, memory_range(lo, hi - lo), Mark{1, hb.epoch(1), 1}, false, false, &e);
    assert_int_equal(ok, hit == nullptr);
    if (hit) {
      char want[160];
      snprintf(want, sizeof want, "write into bytes [%lld, %lld) of region ",
               (long long)std::max(lo, hit->lo), (long long)std::min(hi, hit->hi));
      assert_true(has(e, want));
      assert_true(has(e, ": read by queue ?, instruction " + std::to_string(hit->i) + ","));
    }
    prog_free(p);
  }
}

// ---- the static check ----

// A run skips prog_check only when told the program passed it against this very arch
// (SimOptions::checked_against): a copy of the arch elsewhere in memory does not count, so a mov
// of 0 bytes is still reported; a correct program runs the same with the check skipped.
static void static_check_skipped_only_for_its_arch(void **) {
  for (int bad = 0; bad < 2; bad++) {
    Prog pr;
    uint32_t tx = pr.tile("x"), ty = pr.tile("y");
    uint32_t x = pr.region("x"), y = pr.region("y");
    QRef q = pr.q(0, 0, TQ_OUT);
    pr.alloc(q, x, LVL_LB, 0, 0, 0, 256, tx);
    pr.alloc(q, y, LVL_LB, 0, 0, 256, 256);
    pr.mov(q, y, ty, x, tx, bad ? 0 : 256);
    GsArch other = g_arch;
    SimOptions o;
    SimResult plain, elsewhere, same;
    g_sim->run(pr.p, o, &plain);
    o.checked_against = &other;
    g_sim->run(pr.p, o, &elsewhere);
    if (bad) {
      assert_int_equal(plain.status, 2);
      assert_true(has(plain.message, "bytes must be positive"));
      assert_int_equal(elsewhere.status, 2);
      assert_string_equal(elsewhere.message.c_str(), plain.message.c_str());
      continue;
    }
    o.checked_against = &g_arch;
    g_sim->run(pr.p, o, &same);
    assert_int_equal(plain.status, 0);
    assert_int_equal(same.status, 0);
    assert_int_equal(same.cycles, plain.cycles);
  }
}

int sc_main(int, char **) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ranges_match_bytes),
      cmocka_unit_test(ranges_match_bytes_slices),
      cmocka_unit_test(held_row_blocks_match_bytes),
      cmocka_unit_test(held_writes_match_bytes),
      cmocka_unit_test(pieces_of_a_region),
      cmocka_unit_test(operands_with_extent),
      cmocka_unit_test(results_side_by_side),
      cmocka_unit_test(gather_reads_its_indices),
      cmocka_unit_test(compute_wrote_less_than_read),
      cmocka_unit_test(stored_element_size),
      cmocka_unit_test(race_hidden_by_timing),
      cmocka_unit_test(superseded_reads_keep_verdicts),
      cmocka_unit_test(semaphore_tokens_in_order),
      cmocka_unit_test(allocations_in_order),
      cmocka_unit_test(static_check_skipped_only_for_its_arch),
  };
  return simtest_main_tiny(&g_arch, &g_sim, tests);
}
