// timing.cpp — the transfer formulas (docs/timing.md), pure functions of GsArch figures
// (the compute formulas and the DDR's burst rounding are sched/unit_timing.c), and the DRAM
// efficiency model's walk of a transfer's addresses over the channels' row buffers (the only
// state here: the DramChannel vector its caller owns and passes in).
// Invariant: no function here reads a clock or global state (the walk's cache of periods only
// saves work: its entries are pure functions of their keys); the same inputs give the same
// cycles, so unit tests check them against hand calculations without the SystemC kernel.
#include "timing.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <numeric>

// The DDR's geometry for a walk over rows: the figures, and when burst, interleave and channel
// count are powers of two (every shipped config) their shifts, so that a row inside one
// interleave segment costs no division (the walk was a seventh of a simulation on stcp920).
namespace {
struct DdrGeom {
  int64_t il;  // interleave bytes; <= 0: none (a run stays in the channel it starts in)
  int channels, burst;
  bool pow2;   // burst (<= 1: 1), il and channels powers of two, il > 0 and channels > 1
  int64_t bmask, ilmask, chmask;
  int ilsh, chsh;
  DdrGeom(int interleave, int nch, int b) : il(interleave), channels(nch), burst(b) {
    auto p2 = [](int64_t v) { return v > 0 && (v & (v - 1)) == 0; };
    int64_t B = b > 1 ? b : 1;
    pow2 = p2(B) && p2(il) && nch > 1 && p2(nch);
    bmask = B - 1;
    ilmask = il - 1;
    chmask = nch - 1;
    ilsh = pow2 ? __builtin_ctzll((unsigned long long)il) : 0;
    chsh = pow2 ? __builtin_ctzll((unsigned long long)nch) : 0;
  }
  // With pow2 and addr >= 0: whether [addr, addr + len), rounded out to bursts, lies inside one
  // interleave segment (as most strided rows do), and then its channel, channel address and
  // bytes, by shifts and masks.
  bool one_segment(int64_t addr, int64_t len, int64_t *ch, int64_t *ca, int64_t *n) const {
    int64_t lo = addr & ~bmask, hi = (addr + len + bmask) & ~bmask, first = lo >> ilsh;
    if (first != (hi - 1) >> ilsh) return false;
    *ch = first & chmask;
    *ca = ((first >> chsh) << ilsh) | (lo & ilmask);
    *n = hi - lo;
    return true;
  }
};
}  // namespace

// Calls fn(channel, channel address, bytes) for the whole bursts that [addr, addr + len)
// touches, once per channel it reaches, in the order the channels first appear. Interleave
// segment s (bytes [s·il, (s + 1)·il)) is in channel s mod channels at channel address
// (s / channels)·il, so the segments a run gives one channel follow each other there and are
// one piece. fn must keep its state per channel (both callers do): then a piece gives what its
// segments one by one would, and a run of B bytes costs at most `channels` calls instead of
// B / il. (The channel address drops the channel-select bits: (a / (il·channels))·il + a mod il.)
template <class Fn>
static void ddr_segments(int64_t addr, int64_t len, const DdrGeom &g, Fn &fn) {
  if (len <= 0) return;
  int64_t ch0, ca0, n0;  // the same figures as below
  if (g.pow2 && addr >= 0 && g.one_segment(addr, len, &ch0, &ca0, &n0)) {
    fn((size_t)ch0, ca0, n0);
    return;
  }
  int channels = g.channels;
  int64_t lo, hi;
  timing_burst_span(addr, len, g.burst, &lo, &hi);
  if (channels <= 1) {
    fn(0, lo, hi - lo);
    return;
  }
  int64_t il = g.il > 0 ? g.il : hi - lo;
  int64_t first = timing_udiv(lo, il), last = timing_udiv(hi - 1, il);
  int64_t nch = std::min<int64_t>(channels, last - first + 1);
  for (int64_t j = 0; j < nch; j++) {
    int64_t seg = first + j, q = timing_udiv(seg, channels);
    // its segments: seg, seg + channels, ... up to last; whole ones but for the run's ends
    int64_t n = timing_udiv(last - seg, channels) + 1;
    int64_t start = j == 0 ? lo - seg * il : 0;
    int64_t lseg = seg + (n - 1) * channels;
    int64_t bytes = n * il - start - (lseg == last ? (last + 1) * il - hi : 0);
    fn((size_t)(seg - q * channels), q * il + start, bytes);
  }
}

// ddr_segments for every run of pattern ap (timing_ddr_runs), in address order.
template <class Fn>
static void ddr_rows(const GsAccess &ap, const DdrGeom &g, Fn &fn) {
  GsAccess r = timing_ddr_runs(&ap);
  for (int64_t p = 0; p < r.planes; p++) {
    int64_t addr = r.base + p * r.plane_stride;
    for (int64_t i = 0; i < r.rows; i++, addr += r.row_stride)
      ddr_segments(addr, r.row_bytes, g, fn);
  }
}

void timing_ddr_channel_bytes(int64_t addr, int64_t len, int interleave, int channels, int burst,
                              std::vector<double> &per_channel) {
  timing_ddr_pattern_bytes(GsAccess{addr, len, 1, len, 1, len}, interleave, channels, burst,
                           per_channel);
}

void timing_ddr_pattern_bytes(const GsAccess &ap, int interleave, int channels, int burst,
                              std::vector<double> &per_channel) {
  auto add = [&](size_t ch, int64_t, int64_t n) { per_channel[ch] += (double)n; };
  ddr_rows(ap, DdrGeom(interleave, channels, burst), add);
}

DramTiming timing_dram(const GsArch *a) {
  DramTiming d;
  d.row_bytes = a->ddr_row_bytes > 0 ? a->ddr_row_bytes : 1;
  d.banks = a->ddr_banks > 0 ? a->ddr_banks : 1;
  d.miss = a->ddr_miss_cycles;
  d.act = a->ddr_act_cycles;
  d.channel_bpc = a->ddr_channels > 0 ? a->ddr_bytes_per_cycle / a->ddr_channels : 1;
  d.wtr = a->ddr_wtr_cycles;
  d.rtw = a->ddr_rtw_cycles;
  d.refresh = a->ddr_refresh_factor >= 1 ? a->ddr_refresh_factor : 1;
  return d;
}

void DramChannel::reset(int banks) {
  open_row.assign((size_t)std::max(1, banks), -1);
  page_lo = page_hi = page_bytes = 0;
  dir = 0;
  bytes = misses = turnarounds = 0;
}

// The pages a piece of a channel's address space [ca, ca + n) enters beyond the open one: row
// misses and their penalty cycles into *penalty (the walk's slow path, out of its loop).
static void dram_enter_pages(DramChannel &c, int64_t ca, int64_t n, const DramTiming &dt,
                             double *penalty) {
  int64_t last = timing_udiv(ca + n - 1, dt.row_bytes);
  for (int64_t pg = timing_udiv(ca, dt.row_bytes); pg <= last; pg++) {
    int64_t in_page = std::min(ca + n, (pg + 1) * dt.row_bytes) - std::max(ca, pg * dt.row_bytes);
    int64_t &open = c.open_row[(size_t)(pg % dt.banks)];
    if (open != pg / dt.banks) {
      open = pg / dt.banks;
      c.misses++;
      // a row conflict in the bank of the page entered last waits for all of tRP + tRCD;
      // another bank's row was opened ahead, while that page streamed (bank-level
      // parallelism), no sooner than one activate interval after its own
      bool same_bank = pg % dt.banks == (c.page_lo / dt.row_bytes) % dt.banks;
      double hidden = (double)c.page_bytes / dt.channel_bpc;
      *penalty += same_bank ? dt.miss : std::max(0.0, dt.act - hidden);
      c.page_bytes = 0;
    } else if (pg * dt.row_bytes != c.page_lo) {
      c.page_bytes = 0;  // a hit in another open row: that page's stream starts here
    }
    c.page_lo = pg * dt.row_bytes;
    c.page_hi = c.page_lo + dt.row_bytes;
    c.page_bytes += in_page;
  }
}

// The longest period (in rows) dram_rows_periodic takes: a stride of 16 bytes on a 1 KiB
// interleave period (every shipped config's strides are multiples of 16); and the most pieces
// (a row's part in one channel) a period's rows may make.
static const int kMaxPeriod = 64, kMaxPieces = 256;

// One period's pieces (dram_plane_periodic) for a plane that starts rem bytes into a span of
// il·nch, grouped by channel (each channel's in row order; a row has at most one piece in a
// channel), with each channel's extent and bytes. With the geometry in powers of two, a plane
// q spans further makes the same pieces, each q·il channel bytes on, so one entry serves every
// plane and transfer of the same stride, row length and residue (a tensor's slices, a tile's
// planes): building the pieces was about half of the periodic walk (MobileNet-v2 tvm on
// stcp920).
namespace {
struct DramPeriod {
  int64_t rem = -1, S = 0, len = 0, P = 0, il = 0, nch = 0, bmask = 0;  // the key
  bool over = false;             // more than kMaxPieces pieces: walk the rows one by one
  int64_t row[kMaxPieces], ca[kMaxPieces], n[kMaxPieces];
  std::vector<int> first;        // channel c's pieces are [first[c], first[c + 1])
  std::vector<int64_t> lo, end, sum;  // channel c's: lowest and end channel address, bytes
  std::vector<int> at;           // build's: the next place of each channel's pieces
  // (the vectors keep their room from one build to the next: no allocation once warm)

  bool is(int64_t r, int64_t s, int64_t l, int64_t p, const DdrGeom &g) const {
    return rem == r && S == s && len == l && P == p && il == g.il && nch == g.channels &&
           bmask == g.bmask;
  }
  void build(int64_t r, int64_t s, int64_t l, int64_t p, const DdrGeom &g) {
    rem = r, S = s, len = l, P = p, il = g.il, nch = g.channels, bmask = g.bmask;
    int64_t prow[kMaxPieces], pch[kMaxPieces], pca[kMaxPieces], pn[kMaxPieces];
    int np = 0;
    over = false;
    for (int64_t j = 0; j < P && !over; j++) {
      auto piece = [&](size_t c, int64_t a, int64_t bytes) {
        if (np == kMaxPieces) {
          over = true;
          return;
        }
        prow[np] = j, pch[np] = (int64_t)c, pca[np] = a, pn[np] = bytes;
        np++;
      };
      ddr_segments(rem + j * S, len, g, piece);
    }
    if (over) return;
    first.assign((size_t)nch + 1, 0);
    lo.assign((size_t)nch, INT64_MAX), end.assign((size_t)nch, 0), sum.assign((size_t)nch, 0);
    for (int i = 0; i < np; i++) {
      size_t c = (size_t)pch[i];
      first[c + 1]++;
      lo[c] = std::min(lo[c], pca[i]), end[c] = std::max(end[c], pca[i] + pn[i]), sum[c] += pn[i];
    }
    for (size_t c = 0; c < (size_t)nch; c++) first[c + 1] += first[c];
    at.assign(first.begin(), first.end() - 1);
    for (int i = 0; i < np; i++) {  // a stable counting sort: row order within a channel
      int k = at[(size_t)pch[i]]++;
      row[k] = prow[i], ca[k] = pca[i], n[k] = pn[i];
    }
  }
};
}  // namespace

static const int kPeriodCache = 64;  // entries, a power of two

// The period of a plane at b (>= 0) from a small cache of the last ones built on this thread;
// *shift: the channel bytes its pieces lie beyond the entry's. The cache only saves work: an
// entry is a pure function of its key, so results do not depend on what it holds.
static const DramPeriod &dram_period(int64_t b, const GsAccess &r, const DdrGeom &g, int64_t P,
                                     int64_t *shift) {
  // on the heap: a static thread-local block this size would take its room from the stack of
  // every thread (the checks' thread has 256 KiB, and could not start). Kept to the thread's
  // end and not freed then (the model's thread is the process's): a thread_local with a
  // destructor registers it with the C library, which aborts the process when it cannot
  // (docs/timing.md, "Limits").
  static thread_local DramPeriod *cache;
  if (!cache) cache = new DramPeriod[kPeriodCache];
  const int64_t span = g.il * g.channels, rem = b & (span - 1);
  *shift = (b >> (g.ilsh + g.chsh)) << g.ilsh;
  uint64_t h = (uint64_t)rem * 0x9e3779b97f4a7c15ull ^ (uint64_t)r.row_stride * 0xc2b2ae3d27d4eb4full ^
               (uint64_t)r.row_bytes * 0x165667b19e3779f9ull;
  DramPeriod &e = cache[(h ^ h >> 29 ^ h >> 47) & (kPeriodCache - 1)];
  if (!e.is(rem, r.row_stride, r.row_bytes, P, g)) e.build(rem, r.row_stride, r.row_bytes, P, g);
  return e;
}

// One plane's rows from address b (timing_dram_side's seg for each), a period at a time: with
// the geometry in powers of two, the pieces row i makes (ddr_segments: its part in each channel
// it reaches, its burst span's place there) depend only on (b + i·S) mod il·nch, which repeats
// every P = il·nch / gcd(S, il·nch) rows, row i + P's piece in a channel lying D = P·S / nch
// channel bytes after row i's. So a channel's pieces are those of the residues j < P that
// reach it, period after period, and a run of periods whose pieces all stay inside the
// channel's open page, its direction already set (nothing but bytes added), is added in one
// step: the walk costs per page, not per row. Channels keep their state apart (ddr_segments'
// contract), and a row has at most one piece per channel, so walking the channels one after
// another, each's pieces in row order, gives what the rows in address order give, bit for bit
// (the byte sums are integers). False, having done nothing, when a period makes more than
// kMaxPieces pieces (the caller walks it row by row).
template <class Seg>
static bool dram_plane_periodic(int64_t b, const GsAccess &r, const DdrGeom &g, int64_t P,
                                int dir, DramChannel *stp, double *bp, Seg &seg) {
  int64_t shift;
  const DramPeriod &pd = dram_period(b, r, g, P, &shift);
  if (pd.over) return false;
  const int64_t D = P * r.row_stride / g.channels, K_all = r.rows / P, rest = r.rows % P;
  for (int64_t c = 0; c < g.channels; c++) {
    const int64_t sum = pd.sum[(size_t)c];
    if (sum == 0) continue;
    const int64_t lo = pd.lo[(size_t)c] + shift, end = pd.end[(size_t)c] + shift;
    const int i0 = pd.first[(size_t)c], i1 = pd.first[(size_t)c + 1];
    DramChannel &C = stp[c];
    for (int64_t k = 0; k < K_all;) {
      int64_t off = k * D;
      if (C.dir == dir && lo + off >= C.page_lo && end + off <= C.page_hi) {
        int64_t K = std::min(K_all - k, (C.page_hi - end - off) / D + 1), add = K * sum;
        bp[c] += (double)add;
        C.bytes += (uint64_t)add;
        C.page_bytes += add;
        k += K;
        continue;
      }
      for (int i = i0; i < i1; i++) seg((size_t)c, pd.ca[i] + shift + off, pd.n[i]);
      k++;
    }
    for (int i = i0; i < i1 && pd.row[i] < rest; i++)
      seg((size_t)c, pd.ca[i] + shift + K_all * D, pd.n[i]);
  }
  return true;
}

// timing_dram_side's walk of the runs r, plane by plane through dram_plane_periodic (a plane it
// does not take row by row); false, having done nothing, when the pattern has no period to
// exploit (then the caller walks it row by row).
template <class Seg>
static bool dram_rows_periodic(const GsAccess &r, const DdrGeom &g, int dir, DramChannel *stp,
                               double *bp, Seg &seg) {
  if (!g.pow2 || r.row_bytes <= 0 || r.base < 0 || r.row_stride <= 0 || r.plane_stride < 0)
    return false;
  const int64_t span = g.il * g.channels, P = span / std::gcd(r.row_stride, span);
  // (a burst no longer than the period's span, so that shifting a row by periods shifts its
  // burst span with it)
  if (P > kMaxPeriod || r.rows < 2 * P || g.bmask >= span) return false;
  for (int64_t p = 0; p < r.planes; p++) {
    int64_t b = r.base + p * r.plane_stride;
    if (dram_plane_periodic(b, r, g, P, dir, stp, bp, seg)) continue;
    for (int64_t i = 0; i < r.rows; i++) ddr_segments(b + i * r.row_stride, r.row_bytes, g, seg);
  }
  return true;
}

void timing_dram_side(const GsAccess &ap, int interleave, int channels, int burst,
                      const DramTiming &dt, bool write, std::vector<DramChannel> &st,
                      std::vector<double> &bytes, std::vector<double> &penalty) {
  const int dir = write ? 2 : 1;
  // the arrays by pointer: through the vectors, every store to a double reloaded their data
  DramChannel *stp = st.data();
  double *bp = bytes.data(), *pp = penalty.data();
  auto seg = [stp, bp, pp, dir, write, &dt](size_t ch, int64_t ca, int64_t n) {
    DramChannel &c = stp[ch];
    if (c.dir != dir) {  // the first access of this side to the channel decides its direction
      if (c.dir != 0) {
        pp[ch] += write ? dt.rtw : dt.wtr;
        c.turnarounds++;
      }
      c.dir = dir;
    }
    bp[ch] += (double)n;
    c.bytes += (uint64_t)n;
    if (ca >= c.page_lo && ca + n <= c.page_hi) c.page_bytes += n;  // inside the open page
    else dram_enter_pages(c, ca, n, dt, &pp[ch]);
  };
  DdrGeom g(interleave, channels, burst);
  if (!dram_rows_periodic(timing_ddr_runs(&ap), g, dir, stp, bp, seg)) ddr_rows(ap, g, seg);
}

int64_t timing_transfer_ideal(int64_t latency, double bytes, double narrowest_bytes_per_cycle) {
  return latency + (int64_t)std::ceil(bytes / narrowest_bytes_per_cycle - 1e-9);
}
