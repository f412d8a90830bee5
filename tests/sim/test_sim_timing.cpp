// test_sim_timing.cpp — the timing formulas of sim/timing.h without the SystemC kernel.
// Each expected value is computed here by hand from docs/timing.md's formula and tiny.cfg's
// figures (tests/sim/simtest.h), with the arithmetic next to it.
#include <algorithm>
#include <cmath>
#include <vector>

#include <systemc>

#include "simtest.h"
#include "wakeups.h"
extern "C" {
#include "../unit/rng_testlib.h"
}

static GsArch A;

static void cube_fp16_int8_and_rounding(void **) {
  const GsUnitKind *u = &A.units[0];  // cube 4x4x4, rate fp16 1, int8 2, latency 8
  // 16x16x16: ceil(16/4)^3 = 64 blocks at 1 per cycle + 8
  assert_int_equal(timing_matrix(u, 16, 16, 16, DT_FP16), 64 + 8);
  // int8 at rate 2: 64 / 2 = 32 + 8
  assert_int_equal(timing_matrix(u, 16, 16, 16, DT_INT8), 32 + 8);
  // a partial block costs a whole one: ceil(5/4)=2, 1, 1 -> 2 blocks + 8
  assert_int_equal(timing_matrix(u, 5, 4, 4, DT_FP16), 2 + 8);
  // int8 with an odd block count rounds up once: 3 blocks / 2 = 1.5 -> 2 + 8
  assert_int_equal(timing_matrix(u, 12, 4, 4, DT_INT8), 2 + 8);
  // fp32 has no rate in tiny.cfg: unsupported
  assert_int_equal(timing_matrix(u, 16, 16, 16, DT_FP32), -1);
  // the vector unit is not a matrix unit
  assert_int_equal(timing_matrix(&A.units[1], 4, 4, 4, DT_FP16), -1);
}

static void systolic_os_ws(void **) {
  GsUnitKind u;
  memset(&u, 0, sizeof u);
  u.caps = CAP_MATRIX;
  u.shape = MAT_SYSTOLIC;
  u.sys_rows = 4;
  u.sys_cols = 8;
  u.mac_rate[DT_FP16] = 1;
  u.mac_rate[DT_INT8] = 2;
  u.matrix_latency_cycles = 3;
  u.dataflow = DF_OUTPUT_STATIONARY;
  // SCALE-Sim v2, stall-free (R=4, C=8, latency 3 on top)
  // OS, m=8 n=16 k=32: folds = ceil(8/4)*ceil(16/8) = 4, per fold k + R + C - 2 = 32 + 10 = 42
  assert_int_equal(timing_matrix(&u, 8, 16, 32, DT_FP16), 4 * 42 + 3);
  // int8 streams k at twice the rate: 16 + 10 = 26
  assert_int_equal(timing_matrix(&u, 8, 16, 32, DT_INT8), 4 * 26 + 3);
  u.dataflow = DF_WEIGHT_STATIONARY;
  // WS: folds = ceil(k/R)*ceil(n/C) = 8*2 = 16, T = m = 8: 2*4 + 8 - 2 + 8 = 22
  assert_int_equal(timing_matrix(&u, 8, 16, 32, DT_FP16), 16 * 22 + 3);
  // partial folds count whole: k=5 -> 2 folds of rows, n=9 -> 2 of columns, T = m = 1
  assert_int_equal(timing_matrix(&u, 1, 9, 5, DT_FP16), 4 * (2 * 4 + 8 - 2 + 1) + 3);
  u.dataflow = DF_INPUT_STATIONARY;
  // IS: folds = ceil(k/R)*ceil(m/C) = 8*1 = 8, T = n = 16: 2*4 + 8 - 2 + 16 = 30
  assert_int_equal(timing_matrix(&u, 8, 16, 32, DT_FP16), 8 * 30 + 3);
  u.preload_overlap = 1;
  // IS overlapped: 8 folds of max(T=16, R=4) = 16, plus 2R + C - 2 = 14 once
  assert_int_equal(timing_matrix(&u, 8, 16, 32, DT_FP16), 8 * 16 + 14 + 3);
  u.dataflow = DF_WEIGHT_STATIONARY;
  // WS overlapped: 16 folds of max(T=m=8, 4) + 14; with m=2 the load (R=4) bounds each fold
  assert_int_equal(timing_matrix(&u, 8, 16, 32, DT_FP16), 16 * 8 + 14 + 3);
  assert_int_equal(timing_matrix(&u, 2, 16, 32, DT_FP16), 16 * 4 + 14 + 3);
}

static void vector_per_class(void **) {
  const GsUnitKind *u = &A.units[1];  // lanes fp16 16; costs simple 1 mul 1 div 4 transc 8 reduce 2
  // 1000 fp16 elements -> ceil(1000/16) = 63 lane-groups; + latency 4
  assert_int_equal(timing_vector(u, V_RELU, 1000, DT_FP16), 4 + 63 * 1);  // 1 simple pass
  assert_int_equal(timing_vector(u, V_MUL, 1000, DT_FP16), 4 + 63 * 1);   // 1 mul pass
  assert_int_equal(timing_vector(u, V_DIV, 1000, DT_FP16), 4 + 63 * 4);   // 1 div pass
  assert_int_equal(timing_vector(u, V_EXP, 1000, DT_FP16), 4 + 63 * 8);   // 1 transc pass
  assert_int_equal(timing_vector(u, V_RSUM, 1000, DT_FP16), 4 + 63 * 2);  // 1 reduce pass
  // softmax (isa.def): 2 simple + 1 div + 1 transc + 2 reduce = 2 + 4 + 8 + 4 = 18 per group
  assert_int_equal(timing_vector(u, V_SOFTMAX, 1000, DT_FP16), 4 + 63 * 18);
  // fp32 has 8 lanes: ceil(1000/8) = 125
  assert_int_equal(timing_vector(u, V_RELU, 1000, DT_FP32), 4 + 125);
  // bf16 has no lanes in tiny.cfg
  assert_int_equal(timing_vector(u, V_RELU, 1000, DT_BF16), -1);
}

static void scalar_ops(void **) {
  GsUnitKind u = A.units[2];
  assert_int_equal(timing_scalar(&u, 10), 10);  // 1 op per cycle
  u.scalar_ops_per_cycle = 4;
  assert_int_equal(timing_scalar(&u, 10), 3);   // ceil(10/4)
  assert_int_equal(timing_scalar(&A.units[0], 10), -1);
}

static void ddr_mapping(void **) {
  std::vector<double> ch(2, 0.0);
  // 1024 B from 0, 256 B interleave over 2 channels: 512 each
  timing_ddr_channel_bytes(0, 1024, 256, 2, 64, ch);
  assert_true(ch[0] == 512 && ch[1] == 512);
  ch.assign(2, 0);
  // [100, 200) rounds out to bursts [64, 256): 192 B, all in channel 0
  timing_ddr_channel_bytes(100, 100, 256, 2, 64, ch);
  assert_true(ch[0] == 192 && ch[1] == 0);
  ch.assign(2, 0);
  // [200, 300) -> [192, 320): 64 B in channel 0, 64 B in channel 1
  timing_ddr_channel_bytes(200, 100, 256, 2, 64, ch);
  assert_true(ch[0] == 64 && ch[1] == 64);
  ch.assign(2, 0);
  // 16 rows of 256 B with a 512 B stride: every row starts at a multiple of 512 -> channel 0
  GsAccess ap{0, 256, 16, 512, 1, 0};
  timing_ddr_pattern_bytes(ap, 256, 2, 64, ch);
  assert_true(ch[0] == 4096 && ch[1] == 0);
  assert_int_equal(timing_access_extent(&ap), 15 * 512 + 256);
}

// Every burst a pattern touches, counted once per row into its channel by the definition
// (channel = (address / interleave) mod channels), against the walk: by shifts on a power-of-two
// geometry, by divisions on others (3 channels, a 384 B interleave, 96 B bursts).
static void ddr_mapping_by_bursts(void **) {
  const int geo[][3] = {{256, 4, 64}, {2048, 8, 32}, {384, 3, 96}, {256, 2, 1}, {512, 4, 128}};
  Rng g{0x243f6a8885a308d3ull};
  for (const auto &G : geo) {
    int il = G[0], nch = G[1], burst = G[2];
    for (int k = 0; k < 300; k++) {
      int64_t rows = 1 + (int64_t)(rnd(&g) % 6), row = 1 + (int64_t)(rnd(&g) % 700);
      int64_t stride = row + (int64_t)(rnd(&g) % 900), base = (int64_t)(rnd(&g) % 20000);
      GsAccess ap{base, row, rows, stride, 1, 0};
      std::vector<double> walk((size_t)nch, 0.0), want((size_t)nch, 0.0);
      timing_ddr_pattern_bytes(ap, il, nch, burst, walk);
      GsAccess r = timing_ddr_runs(&ap);
      int64_t B = burst > 1 ? burst : 1;
      for (int64_t i = 0; i < r.rows; i++) {
        int64_t a = r.base + i * r.row_stride;
        for (int64_t b = a / B * B; b < a + r.row_bytes; b += B) want[(size_t)(b / il % nch)] += (double)B;
      }
      assert_true(walk == want);
    }
  }
}

// Round DRAM figures: rows of 1024 B, 4 banks; miss 20 cycles, activates in other banks every
// 8, turnarounds w->r 30 / r->w 10; a channel moves 16 B/cycle.
static DramTiming round_dram() {
  DramTiming dt;
  dt.row_bytes = 1024;
  dt.banks = 4;
  dt.miss = 20;
  dt.act = 8;
  dt.wtr = 30;
  dt.rtw = 10;
  dt.channel_bpc = 16;
  return dt;
}

// The DRAM model's walk (docs/timing.md, "DRAM efficiency") with round_dram's figures on 2
// channels, 256 B interleave, burst 64: a miss in another bank than the page streaming last
// costs 8 less that page's bytes / 16 cycles (a whole page: 64 >= 8, nothing), a miss in the
// same bank all 20.
static void dram_rows_and_turnarounds(void **) {
  DramTiming dt = round_dram();
  std::vector<DramChannel> st(2);
  for (DramChannel &c : st) c.reset(dt.banks);
  std::vector<double> by(2, 0.0), pen(2, 0.0);
  // 8192 B read from 0: 4096 B per channel at channel addresses [0, 4096) = pages 0..3 in
  // banks 0..3, every one opened: 4 misses per channel; 64 bursts per channel. The first pays
  // 20; pages 1..3 open while the whole page before them streams (64 cycles): hidden
  GsAccess seq{0, 8192, 1, 8192, 1, 8192};
  timing_dram_side(seq, 256, 2, 64, dt, false, st, by, pen);
  assert_true(by[0] == 4096 && by[1] == 4096);
  assert_true(pen[0] == 20 && pen[1] == 20);
  assert_true(st[0].misses == 4 && st[0].bytes == 64 * 64 && st[0].turnarounds == 0);
  // read again: every row is still open, no penalty
  by.assign(2, 0);
  pen.assign(2, 0);
  timing_dram_side(seq, 256, 2, 64, dt, false, st, by, pen);
  assert_true(pen[0] == 0 && pen[1] == 0 && st[0].misses == 4);
  // write 512 B at 8192: channel addresses [4096, 4352) in each channel = page 4, bank 0,
  // row 1 (bank 0 holds row 0): a miss, hidden behind page 3 (bank 3, streamed whole), plus
  // the read->write turnaround per channel
  GsAccess w{8192, 512, 1, 512, 1, 512};
  timing_dram_side(w, 256, 2, 64, dt, true, st, by, pen);
  assert_true(pen[0] == 10 && pen[1] == 10 && st[0].misses == 5);
  assert_true(st[1].turnarounds == 1 && st[1].dir == 2);
  // read 256 B at 0 (channel 0 only: page 0, bank 0 now holds row 1): a row conflict in the
  // bank of the page entered last, nothing to hide it: the whole miss + write->read
  pen.assign(2, 0);
  GsAccess r{0, 256, 1, 256, 1, 256};
  timing_dram_side(r, 256, 2, 64, dt, false, st, by, pen);
  assert_true(pen[0] == 20 + 30 && pen[1] == 0);
  assert_true(st[0].turnarounds == 2 && st[1].turnarounds == 1);
  // 8 rows of 64 B at a 2048 B stride from 4096: all in channel 0 (2048 = 8 x 256), channel
  // addresses 2048 + 1024 i: pages 2, 3, 4, ... 9 -> banks 2, 3, 0, 1, 2, 3, 0, 1, rows 0, 0,
  // 1, 1, 2, 2, 2, 2: pages 2 and 3 are open (row 0), bank 0 holds row 0 again since the read
  // above, so page 4 (row 1) misses, page 5 (bank 1 row 1) misses, 6..9 miss: 6 misses, each
  // in another bank than the page before, which streamed only 64 B (4 cycles): 6 x (8 - 4)
  // (rows opening one activate interval apart, not one whole miss after another)
  pen.assign(2, 0);
  GsAccess strided{4096, 64, 8, 2048, 1, 0};
  timing_dram_side(strided, 256, 2, 64, dt, false, st, by, pen);
  assert_true(pen[0] == 6 * (8 - 4) && pen[1] == 0 && st[0].misses == 5 + 1 + 6);
}

// A run's bytes reach each channel as one piece (timing.cpp, ddr_segments): the DRAM state and
// charges must be what the run's interleave segments give one by one, in address order (each
// segment walked as a transfer of its own: one segment, one piece). Random runs on 4 channels,
// interleave 256, burst 64, round_dram's figures, reads and writes mixed.
static void dram_pieces_as_segments(void **) {
  DramTiming dt = round_dram();
  const int nch = 4, il = 256, burst = 64;
  std::vector<DramChannel> a(nch), b(nch);
  for (int i = 0; i < nch; i++) a[(size_t)i].reset(dt.banks), b[(size_t)i].reset(dt.banks);
  Rng g{0x2545f4914f6cdd1dull};
  for (int k = 0; k < 400; k++) {
    int64_t lo = (int64_t)(rnd(&g) % 40000), len = 1 + (int64_t)(rnd(&g) % 9000);
    bool write = rnd(&g) % 3 == 0;
    std::vector<double> by_a(nch, 0.0), pen_a(nch, 0.0), by_b(nch, 0.0), pen_b(nch, 0.0);
    timing_dram_side(GsAccess{lo, len, 1, len, 1, len}, il, nch, burst, dt, write, a, by_a, pen_a);
    int64_t blo = lo / burst * burst, bhi = (lo + len + burst - 1) / burst * burst;
    for (int64_t s = blo; s < bhi;) {
      int64_t e = std::min(bhi, (s / il + 1) * il);
      timing_dram_side(GsAccess{s, e - s, 1, e - s, 1, e - s}, il, nch, burst, dt, write, b, by_b, pen_b);
      s = e;
    }
    for (int c = 0; c < nch; c++) {
      const DramChannel &p = a[(size_t)c], &q = b[(size_t)c];
      assert_true(by_a[(size_t)c] == by_b[(size_t)c] && pen_a[(size_t)c] == pen_b[(size_t)c]);
      assert_true(p.open_row == q.open_row && p.page_lo == q.page_lo && p.page_hi == q.page_hi);
      assert_true(p.page_bytes == q.page_bytes && p.dir == q.dir && p.bytes == q.bytes);
      assert_true(p.misses == q.misses && p.turnarounds == q.turnarounds);
    }
  }
}

// Walks pattern pat on state a as one transfer, and its rows (timing_ddr_runs: rows that touch
// are one) one by one in address order on state b, each as a transfer of its own: the charges
// and the DRAM state must agree.
static void walk_as_rows(const GsAccess &pat, int il, int nch, int burst, const DramTiming &dt,
                         bool write, std::vector<DramChannel> &a, std::vector<DramChannel> &b) {
  const size_t n = (size_t)nch;
  std::vector<double> by_a(n, 0.0), pen_a(n, 0.0), by_b(n, 0.0), pen_b(n, 0.0);
  timing_dram_side(pat, il, nch, burst, dt, write, a, by_a, pen_a);
  GsAccess r = timing_ddr_runs(&pat);
  for (int64_t p = 0; p < r.planes; p++)
    for (int64_t i = 0; i < r.rows; i++) {
      int64_t at = r.base + p * r.plane_stride + i * r.row_stride, len = r.row_bytes;
      timing_dram_side(GsAccess{at, len, 1, len, 1, len}, il, nch, burst, dt, write, b, by_b, pen_b);
    }
  for (size_t c = 0; c < n; c++) {
    const DramChannel &x = a[c], &y = b[c];
    assert_true(by_a[c] == by_b[c] && pen_a[c] == pen_b[c]);
    assert_true(x.open_row == y.open_row && x.page_lo == y.page_lo && x.page_hi == y.page_hi);
    assert_true(x.page_bytes == y.page_bytes && x.dir == y.dir && x.bytes == y.bytes);
    assert_true(x.misses == y.misses && x.turnarounds == y.turnarounds);
  }
}

struct DramGeo {
  int il, nch, burst;
  int64_t page;
};
static const DramGeo kDramGeos[] = {{256, 4, 64, 1024}, {256, 2, 64, 8192}, {128, 8, 32, 1024}};

// A strided pattern's walk goes channel by channel, a period of rows at a time, and adds a run
// of periods that stay inside a channel's open page in one step (timing.cpp,
// dram_rows_periodic): the DRAM state and charges must be what its rows give walked one by one
// (walk_as_rows). Random patterns (strides of 16 B to 4 KiB and odd ones, rows that cross
// segments or overlap, several planes, reads and writes mixed) on three geometries, pages of
// 1 KiB and 8 KiB.
static void dram_periodic_as_rows(void **) {
  const int64_t strides[] = {16, 32, 48, 64, 96, 128, 256, 512, 768, 1024, 2048, 4096, 100, 3};
  Rng g{0x9e3779b97f4a7c15ull};
  for (const DramGeo &geo : kDramGeos) {
    DramTiming dt = round_dram();
    dt.row_bytes = geo.page;
    std::vector<DramChannel> a((size_t)geo.nch), b((size_t)geo.nch);
    for (size_t i = 0; i < (size_t)geo.nch; i++) a[i].reset(dt.banks), b[i].reset(dt.banks);
    for (int k = 0; k < 600; k++) {
      int64_t stride = strides[rnd(&g) % (sizeof strides / sizeof *strides)];
      int64_t row = 1 + (int64_t)(rnd(&g) % (rnd(&g) % 4 == 0 ? 300 : 64));
      int64_t rows = 1 + (int64_t)(rnd(&g) % 200), planes = 1 + (int64_t)(rnd(&g) % 3);
      int64_t base = (int64_t)(rnd(&g) % 100000);
      int64_t pstride = rows * stride + (int64_t)(rnd(&g) % 5000);
      walk_as_rows(GsAccess{base, row, rows, stride, planes, pstride}, geo.il, geo.nch, geo.burst,
                   dt, rnd(&g) % 3 == 0, a, b);
    }
  }
}

// The walk keeps the pieces of the periods it built and takes them again for a plane whose base
// lies the same distance into a span of il·channels bytes (timing.cpp, dram_period). A few
// patterns over and over, at bases whole spans apart and at eight residues each, the three
// geometries taking turns (so entries are taken and replaced across geometries too), planes a
// whole number of spans apart or not: the same as the rows one by one every time.
static void dram_period_cache_as_rows(void **) {
  struct Pat {
    int64_t rem, row, stride;
  } pats[] = {{0, 64, 256}, {48, 16, 64}, {200, 100, 96}, {17, 40, 4096}, {0, 300, 512}, {96, 64, 48}};
  Rng g{0x2545f4914f6cdd1dull};
  std::vector<DramTiming> dts;
  std::vector<std::vector<DramChannel>> as, bs;
  for (const DramGeo &geo : kDramGeos) {
    DramTiming dt = round_dram();
    dt.row_bytes = geo.page;
    dts.push_back(dt);
    as.emplace_back((size_t)geo.nch), bs.emplace_back((size_t)geo.nch);
    for (size_t i = 0; i < (size_t)geo.nch; i++) as.back()[i].reset(dt.banks), bs.back()[i].reset(dt.banks);
  }
  for (int k = 0; k < 3000; k++) {
    size_t gi = rnd(&g) % 3;
    const DramGeo &geo = kDramGeos[gi];
    const Pat &p = pats[rnd(&g) % (sizeof pats / sizeof *pats)];
    int64_t span = (int64_t)geo.il * geo.nch, rows = 64 + (int64_t)(rnd(&g) % 300);
    int64_t rem = p.rem + 16 * (int64_t)(rnd(&g) % 8);  // 144 keys in all: more than it holds
    int64_t base = rem + span * (int64_t)(rnd(&g) % 200), planes = 1 + (int64_t)(rnd(&g) % 3);
    int64_t pstride = (rows * p.stride + span) / span * span + (rnd(&g) % 2 ? 0 : 16 * (int64_t)(rnd(&g) % 8));
    walk_as_rows(GsAccess{base, p.row, rows, p.stride, planes, pstride}, geo.il, geo.nch,
                 geo.burst, dts[gi], rnd(&g) % 3 == 0, as[gi], bs[gi]);
  }
}

// The burst rounding the simulator and the tiler share (unit_timing.h), burst 64.
static void ddr_bursts(void **) {
  int64_t lo, hi;
  timing_burst_span(100, 100, 64, &lo, &hi);  // [100, 200) -> [64, 256)
  assert_true(lo == 64 && hi == 256);
  timing_burst_span(100, 100, 1, &lo, &hi);   // no bursts: the bytes themselves
  assert_true(lo == 100 && hi == 200);
  // contiguous rows and planes are one run: 4 x 96 B from 0 -> [0, 384), 384 B
  GsAccess all{0, 96, 2, 96, 2, 192};
  GsAccess r = timing_ddr_runs(&all);
  assert_true(r.rows == 1 && r.planes == 1 && r.row_bytes == 384);
  assert_int_equal(timing_ddr_bytes(&all, 64), 384);
  // rows contiguous inside a plane but planes 1024 apart: every row is a run of its own
  // [0,96)->128, [96,192)->[64,192) 128, [1024,1120)->128, [1120,1216)->[1088,1216) 128
  GsAccess planes{0, 96, 2, 96, 2, 1024};
  r = timing_ddr_runs(&planes);
  assert_true(r.rows == 2 && r.planes == 2 && r.row_bytes == 96);
  assert_int_equal(timing_ddr_bytes(&planes, 64), 4 * 128);
  std::vector<double> ch(2, 0.0);
  timing_ddr_pattern_bytes(planes, 256, 2, 64, ch);  // the channels add up to the same bytes
  assert_true(ch[0] + ch[1] == 4 * 128);
  // the bound: runs 96 apart from 0 start at multiples of g = gcd(64, 0, 96) = 32, so each
  // 64 B run is charged as if it started at 64 - 32 = 32: [32, 96) -> [0, 128), 3 x 128;
  // at their addresses [0,64) 64, [96,160)->[64,192) 128, [192,256) 64 = 256
  GsAccess odd{0, 64, 3, 96, 1, 0};
  assert_int_equal(timing_ddr_bytes_bound(&odd, 64), 3 * 128);
  assert_int_equal(timing_ddr_bytes(&odd, 64), 256);
  // burst-aligned runs: the bound is exact, 4 rows of 100 B at a 128 B stride -> 4 x 128
  GsAccess al{0, 100, 4, 128, 1, 0};
  assert_int_equal(timing_ddr_bytes_bound(&al, 64), 512);
  assert_int_equal(timing_ddr_bytes(&al, 64), 512);
}

// timing_llround is std::llround inline: the halves round away from zero, and the largest double
// below 0.5 rounds down (adding 0.5 and truncating would give 1).
static void llround_inline(void **) {
  const double edge[] = {0, 0.5, 1.5, 2.5, -0.5, -2.5, 0.49999999999999994, -0.49999999999999994,
                         4503599627370495.5, 4503599627370497.0, 9007199254740993.0, 1e18, -1e18,
                         123456.49999999999, 0.999999999999, 1e-300};
  for (double x : edge) assert_true(timing_llround(x) == std::llround(x));
  Rng g{0x9e3779b97f4a7c15ull};
  for (int k = 0; k < 100000; k++) {
    double x = (double)(rnd(&g) >> 11) / (double)(1ull << (rnd(&g) % 53));  // all magnitudes
    assert_true(timing_llround(x) == std::llround(x) && timing_llround(-x) == std::llround(-x));
  }
}

// The model's wake-up heap (sim/wakeups.h) against the kernel's own (sc_ppq_base, the heap of
// SystemC's timed notifications, compared by time as the kernel compares them): the same inserts
// and extractions give the same entries in the same order, ties included. Few distinct times, so
// that most comparisons are ties, whose order is what a run's cycles depend on.
namespace {
int earlier_first(const void *a, const void *b) {
  const Wakeup *x = (const Wakeup *)a, *y = (const Wakeup *)b;
  return x->t < y->t ? 1 : x->t > y->t ? -1 : 0;
}
}  // namespace

static void wakeups_as_kernel_heap(void **) {
  Rng g{0x2545f4914f6cdd1dull};
  for (int round = 0; round < 200; round++) {
    sc_core::sc_ppq<Wakeup *> kernel(16, earlier_first);  // starts small: it must grow too
    Wakeups mine;
    std::vector<Wakeup> pool(4000);
    size_t used = 0;
    uint64_t span = 1 + rnd(&g) % 8, now = 0;
    for (int step = 0; step < 2000; step++) {
      if (kernel.empty() || (rnd(&g) % 3 && used < pool.size())) {
        Wakeup e{now + rnd(&g) % span, (int64_t)used};
        pool[used++] = e;
        kernel.insert(&pool[(size_t)e.who]);
        mine.insert(e);
      } else {
        Wakeup *k = kernel.extract_top();
        Wakeup m = mine.extract_top();
        assert_true(k->who == m.who && k->t == m.t);
        now = m.t;  // as the kernel's time only moves forward
      }
      assert_true(kernel.size() == (int)mine.size());
    }
    while (!kernel.empty()) assert_true(kernel.extract_top()->who == mine.extract_top().who);
    assert_true(mine.empty());
  }
}

static void reservation_interleaves(void **) {
  BwResource ddr, linkA, linkB;
  ddr.bytes_per_cycle = 16;
  linkA.bytes_per_cycle = linkB.bytes_per_cycle = 64;
  BwUse a[2] = {{&ddr, 256}, {&linkA, 256}}, b[2] = {{&ddr, 256}, {&linkB, 256}};
  for (BwUse *u : {&a[0], &a[1], &b[0], &b[1]}) timing_bw_ready(u);
  double s;
  // A first at t=0: 256/16 = 16 cycles on the shared channel
  assert_true(timing_bw_reserve(a, 2, 0, &s) == 16 && s == 0);
  // B at t=0 waits for the channel: [16, 32]
  assert_true(timing_bw_reserve(b, 2, 0, &s) == 32 && s == 16);
  // A's second chunk, requested when its first ended (16), goes after B's: [32, 48]
  assert_true(timing_bw_reserve(a, 2, 16, &s) == 48 && s == 32);
  // the channel served 3 chunks of 16 cycles
  assert_true(ddr.busy == 48 && ddr.bytes == 768);
  // Each resource serves a chunk in its own turn: at t=16 a chunk of 256 B over a free second
  // channel (16 cycles: [16, 32]) and link A, busy until 20 (4 cycles: [20, 24]), ends at 32,
  // having waited for nothing that held it back (32 - 16 = its slowest part). Starting both at
  // 20, when both are free, would end at 36 and leave the channel idle for 4 cycles.
  BwResource ddr2;
  ddr2.bytes_per_cycle = 16;
  BwUse c[2] = {{&ddr2, 256}, {&linkA, 256}};
  for (BwUse *u : {&c[0], &c[1]}) timing_bw_ready(u);
  assert_true(linkA.free_at == 20);
  assert_true(timing_bw_reserve(c, 2, 16, &s) == 32 && s == 16);
  assert_true(ddr2.free_at == 32 && linkA.free_at == 24);
  // a lone transfer: latency 127 + 4096 / 16
  assert_int_equal(timing_transfer_ideal(127, 4096, 16), 127 + 256);
}

// The tests' hand-built machine is configs/tiny.cfg: every figure the model reads is equal.
static void hand_built_tiny_is_tiny_cfg(void **) {
  GsDiag d;
  diag_init(&d);
  GsArch *L = arch_load("configs/tiny.cfg", NULL, 0, &d);
  assert_non_null(L);
  assert_true(L->clock_mhz == A.clock_mhz && L->nclusters == A.nclusters);
  assert_true(L->cluster_link_bytes_per_cycle == A.cluster_link_bytes_per_cycle);
  assert_int_equal(L->cluster_link_latency_cycles, A.cluster_link_latency_cycles);
  assert_int_equal(L->ddr_channels, A.ddr_channels);
  assert_true(L->ddr_bytes_per_cycle == A.ddr_bytes_per_cycle);
  assert_int_equal(L->ddr_latency_cycles, A.ddr_latency_cycles);
  assert_int_equal(L->ddr_burst_bytes, A.ddr_burst_bytes);
  assert_int_equal(L->ddr_capacity_bytes, A.ddr_capacity_bytes);
  assert_int_equal(L->ddr_interleave_bytes, A.ddr_interleave_bytes);
  assert_int_equal(L->ddr_model, A.ddr_model);  // ideal: the tests' formulas assume it
  assert_int_equal(L->gb_bytes, A.gb_bytes);
  assert_int_equal(L->gb_ports, A.gb_ports);
  assert_true(L->gb_port_bytes_per_cycle == A.gb_port_bytes_per_cycle);
  assert_int_equal(L->gb_latency_cycles, A.gb_latency_cycles);
  assert_true(L->noc_link_bytes_per_cycle == A.noc_link_bytes_per_cycle);
  assert_int_equal(L->noc_latency_cycles, A.noc_latency_cycles);
  assert_int_equal(L->dma_engines, A.dma_engines);
  assert_int_equal(L->dma_latency_cycles, A.dma_latency_cycles);
  assert_int_equal(L->ncore_kinds, 1);
  assert_int_equal(L->cores_per_cluster, A.cores_per_cluster);
  const GsCoreKind *lk = &L->core_kinds[0], *ak = &A.core_kinds[0];
  assert_int_equal(lk->count, ak->count);
  assert_int_equal(lk->lb_bytes, ak->lb_bytes);
  assert_int_equal(lk->lb_ports, ak->lb_ports);
  assert_true(lk->lb_port_bytes_per_cycle == ak->lb_port_bytes_per_cycle);
  assert_int_equal(lk->lb_latency_cycles, ak->lb_latency_cycles);
  assert_int_equal(lk->nunits, ak->nunits);
  for (int i = 0; i < lk->nunits; i++) {
    const GsUnitKind *lu = &L->units[lk->unit[i]], *au = &A.units[ak->unit[i]];
    assert_string_equal(lu->name, au->name);
    assert_int_equal(lu->caps, au->caps);
    if (lu->caps & CAP_MATRIX) {
      assert_int_equal(lu->shape, au->shape);
      assert_true(lu->cube_m == au->cube_m && lu->cube_n == au->cube_n && lu->cube_k == au->cube_k);
      assert_int_equal(lu->matrix_latency_cycles, au->matrix_latency_cycles);
    }
    for (int t = 0; t < DT_COUNT; t++) {
      if (lu->caps & CAP_MATRIX) assert_true(lu->mac_rate[t] == au->mac_rate[t]);
      if (lu->caps & CAP_VECTOR) assert_int_equal(lu->lanes[t], au->lanes[t]);
    }
    if (lu->caps & CAP_VECTOR) {
      for (int c = 0; c < VC_COUNT; c++) assert_int_equal(lu->op_cost[c], au->op_cost[c]);
      assert_int_equal(lu->vector_latency_cycles, au->vector_latency_cycles);
    }
    if (lu->caps & CAP_SCALAR) assert_int_equal(lu->scalar_ops_per_cycle, au->scalar_ops_per_cycle);
  }
  arch_free(L);
}

int sc_main(int, char **) {
  tiny_arch(&A);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cube_fp16_int8_and_rounding),
      cmocka_unit_test(systolic_os_ws),
      cmocka_unit_test(vector_per_class),
      cmocka_unit_test(scalar_ops),
      cmocka_unit_test(ddr_mapping),
      cmocka_unit_test(ddr_mapping_by_bursts),
      cmocka_unit_test(ddr_bursts),
      cmocka_unit_test(dram_rows_and_turnarounds),
      cmocka_unit_test(dram_pieces_as_segments),
      cmocka_unit_test(dram_periodic_as_rows),
      cmocka_unit_test(dram_period_cache_as_rows),
      cmocka_unit_test(llround_inline),
      cmocka_unit_test(wakeups_as_kernel_heap),
      cmocka_unit_test(reservation_interleaves),
      cmocka_unit_test(hand_built_tiny_is_tiny_cfg),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
