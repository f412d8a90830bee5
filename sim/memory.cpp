// memory.cpp — allocation, tile tracking and race detection behind the simulator's checks.
// Invariants: the live allocations of one buffer never overlap and lie inside its capacity
// (checked at alloc); `occupancy` is the sum of their sizes. Each buffer keeps its live
// allocations in an ordered map keyed by offset, so the overlap check looks at the two
// neighbours only (O(log n)). Each region keeps what every byte range holds in an interval map
// (SpanMap: disjoint ranges, adjacent equal ones merged): the tile, the write that left it and
// the reads since; an access walks it once per contiguous run of its pattern, so a transfer of
// R rows costs O(R log n), like its DDR timing (a tensor stored a block of columns at a time is
// held out of the map until its blocks join: "held writes", below). Races are decided by
// happens-before (hb.h), not by time: an access must happen after the region's allocation, a
// read after the write of every byte it reads, a write after the last write and every read
// since of every byte it writes, a free after all of them, an allocation after the free of any
// bytes it takes over.
#include "memory.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>

static const char *level_name(int l) { return l == LVL_DDR ? "DDR" : l == LVL_GB ? "GB" : "LB"; }

void MemoryState::reset(const GsProgram *p) {
  prog = p;
  for (Buffer &b : bufs) b.reset();
  regions_.clear();
  spare_.clear();
  index_.assign(p ? p->nregions : 0, nullptr);
  freed_.clear();
  outputs_.clear();
  logged_.clear();
}

const Region &MemoryState::region(uint32_t r) const {
  static const Region none;
  static const Region freed = [] {
    Region x;
    x.state = RS_FREED;
    return x;
  }();
  if (const Region *g = find(r)) return *g;
  return r < freed_.size() && freed_[r] ? freed : none;
}

Region *MemoryState::find(uint32_t r) const {
  if (r < index_.size()) return index_[r];
  auto it = regions_.find(r);
  return it != regions_.end() ? const_cast<Region *>(&it->second) : nullptr;
}

Region &MemoryState::region_mut(uint32_t r) {
  if (Region *g = find(r)) return *g;
  Region *g = &regions_[r];
  if (r < index_.size()) index_[r] = g;
  return *g;
}

std::string MemoryState::region_name(uint32_t r) const {
  char buf[48];
  snprintf(buf, sizeof buf, "r%u", r);
  if (const char *nm = prog ? prog_name(prog, 0, r) : nullptr)
    return std::string(buf) + " '" + nm + "'";
  return buf;
}

std::string MemoryState::tile_name(uint32_t t) const {
  char buf[48];
  snprintf(buf, sizeof buf, "t%u", t);
  if (const char *nm = prog ? prog_name(prog, 1, t) : nullptr)
    return std::string(buf) + " '" + nm + "'";
  return buf;
}

// "queue Q, instruction I"
std::string MemoryState::mark_name(Mark m) const {
  std::string q = queue_names && m.q >= 0 && (size_t)m.q < queue_names->size() ? (*queue_names)[(size_t)m.q] : "?";
  return "queue " + q + ", instruction " + std::to_string(m.i);
}

// "WHAT bytes [lo, hi) of region R: OTHER by queue Q2, instruction I2, which does not happen
// before it (no chain of queue order, flags, semaphores and barriers leads from it to here):
// missing synchronisation"
std::string MemoryState::race(const char *what, uint32_t r, int64_t lo, int64_t hi,
                              const char *other, Mark by) const {
  char range[96];
  snprintf(range, sizeof range, " bytes [%" PRId64 ", %" PRId64 ") of region ", lo, hi);
  return std::string(what) + range + region_name(r) + ": " + other + " by " + mark_name(by) +
         ", which does not happen before it: missing synchronisation";
}

// ---- intervals ----

// Removes [lo, hi) from m (values with an `end`): entries it cuts keep their parts outside it.
template <class M> static void ranges_cut(M &m, int64_t lo, int64_t hi) {
  auto it = m.upper_bound(lo);
  if (it != m.begin()) {
    auto p = std::prev(it);
    if (p->second.end > lo) {  // p starts before lo: keep its head, and its tail past hi
      typename M::mapped_type tail = p->second;
      p->second.end = lo;
      if (tail.end > hi) m.emplace(hi, tail);
    }
  }
  it = m.lower_bound(lo);
  while (it != m.end() && it->first < hi) {
    if (it->second.end > hi) {  // keep the tail of the last one it cuts
      typename M::mapped_type tail = it->second;
      m.erase(it);
      m.emplace(hi, tail);
      break;
    }
    it = m.erase(it);
  }
}

static bool same(const Span &a, const Span &b) { return a.tile == b.tile && a.by_compute == b.by_compute; }

// The first range of m that ends after lo.
// (const or not: M is SpanMap or const SpanMap)
template <class M> static auto span_at(M &m, int64_t lo) -> decltype(m.begin()) {
  auto it = m.upper_bound(lo);
  if (it != m.begin() && std::prev(it)->second.end > lo) --it;
  return it;
}

// The first range of m that ends after lo, walked to from `hint` when hint starts at or before
// lo and the answer is a few ranges on (the runs of a pattern come in address order: the next
// run's range is usually the one after the last run's), else looked up from the root. A
// pattern's rows cost O(1) each instead of several descents of a tree of thousands of ranges.
// *before (when given): the range right before the answer when the walk stepped over it (the
// one a write may extend), else m.end().
template <class M, class It> static It span_seek(M &m, It hint, int64_t lo, It *before = nullptr) {
  if (before) *before = m.end();
  if (hint != m.end() && hint->first <= lo) {
    for (int k = 0; k < 8; k++) {  // ranges before hint end at or before hint's start
      if (hint == m.end() || hint->second.end > lo) return hint;
      if (before) *before = hint;
      ++hint;
    }
  }
  if (before) *before = m.end();
  return span_at(m, lo);
}

// Merges range it with its neighbours where they touch and hold the same (the other ranges
// are merged already); returns the range that holds it's bytes then.
static SpanMap::iterator span_join(SpanMap &m, SpanMap::iterator it) {
  if (it != m.begin()) {
    auto p = std::prev(it);
    if (p->second.end == it->first && same(p->second, it->second)) {
      p->second.end = it->second.end;
      m.erase(it);
      it = p;
    }
  }
  auto n = std::next(it);
  if (n != m.end() && n->first == it->second.end && same(it->second, n->second)) {
    it->second.end = n->second.end;
    m.erase(n);
  }
  return it;
}

// Makes bytes [lo, hi) of m one range holding s, merged with the ranges beside it that touch
// it and hold the same, given it = the first range that ends after lo (span_seek): cuts the
// ranges it overlaps, keeping their parts outside [lo, hi). Returns the range that holds the
// bytes then. A neighbour that holds the same is extended or absorbed rather than a new range
// inserted and merged away (a strided write's rows fill the gaps between ranges of one tile:
// one erase per row instead of an insertion and two erasures). `before`: the range right
// before it when span_seek stepped over it, else m.end() (then it is looked up).
static SpanMap::iterator span_write(SpanMap &m, SpanMap::iterator it, SpanMap::iterator before,
                                    int64_t lo, int64_t hi, Span s) {
  if (it != m.end() && it->first <= lo && it->second.end >= hi && same(it->second, s)) return it;
  if (it != m.end() && it->first == lo && it->second.end == hi) {  // the same bytes again
    it->second = s;
    return span_join(m, it);
  }
  auto left = m.end();  // the range [lo, hi) joins, when the one before it holds the same
  if (it != m.end() && it->first < lo) {  // it starts before lo: keep its head
    Span tail = it->second;
    it->second.end = lo;
    if (same(tail, s)) left = it;
    ++it;
    if (tail.end > hi)  // and its tail (it holds something else: the case above took the same)
      return m.emplace_hint(m.emplace_hint(it, hi, tail), lo, s);
  } else if (it != m.begin()) {
    auto p = before != m.end() ? before : std::prev(it);
    if (p->second.end == lo && same(p->second, s)) left = p;
  }
  int64_t end = hi;
  while (it != m.end() && it->first < hi) {
    if (it->second.end > hi) {  // keep the tail of the last one it cuts
      Span tail = it->second;
      it = m.erase(it);
      if (same(tail, s)) end = tail.end;
      else it = m.emplace_hint(it, hi, tail);
      break;
    }
    it = m.erase(it);
  }
  if (end == hi && it != m.end() && it->first == hi && same(it->second, s)) {
    end = it->second.end;
    it = m.erase(it);
  }
  if (left != m.end()) {
    left->second.end = end;
    return left;
  }
  s.end = end;
  return m.emplace_hint(it, lo, s);
}

// The common row of a strided write that continues, row by row, the ranges holding the same
// that end where its rows start (the slices of a tensor's pixels written one after another:
// MobileNet-v2's drains under graphturbo, 4 of every 64 bytes a write): the range after *cur
// ends at lo and holds s, and no range starts before hi. Extends that range to hi, absorbing a
// range holding the same that starts at hi, and makes it *cur; false when the bytes are not so.
// What span_seek and span_write would do there (they walk to the same range and extend it),
// without their general walk and cuts: MobileNet-v2 graphturbo's checks' thread at batch 4,
// 1.7 M such rows, 0.767 G -> 0.699 G instructions (docs/speed.md, "Where the time goes").
// The range after the new c->cur is kept in c->next (next_known), as this row found it: the
// next row starts from it instead of stepping the tree again (each step of a tree's iterator
// walks its links, and mispredicted about once a step).
struct SpanCursor {
  SpanMap::iterator cur, next;  // the range the last run ended in; the one after it
  bool next_known = false;      // whether next is std::next(cur), known without a step
};
static bool span_extend(SpanMap &m, SpanCursor *c, int64_t lo, int64_t hi, const Span &s) {
  if (c->cur == m.end()) return false;
  auto n = c->next_known ? c->next : std::next(c->cur);
  if (n == m.end() || n->first > lo || n->second.end != lo || !same(n->second, s)) return false;
  auto nn = std::next(n);
  if (nn != m.end() && nn->first < hi) return false;
  if (nn != m.end() && nn->first == hi && same(nn->second, s)) {
    n->second.end = nn->second.end;
    nn = m.erase(nn);
  } else {
    n->second.end = hi;
  }
  c->cur = n;
  c->next = nn;
  c->next_known = true;
  return true;
}

GsAccess memory_range(int64_t off, int64_t bytes) { return GsAccess{off, bytes, 1, bytes, 1, bytes}; }

// Calls f(lo, hi) for every contiguous run of pattern ap, in pattern order, until f returns
// false; consecutive rows that touch are one run (rows that follow each other: one run, in O(1)).
template <class F> static bool for_each_run(const GsAccess &ap, F f) {
  if (ap.row_bytes <= 0) return true;
  int64_t rows = std::max<int64_t>(1, ap.rows), planes = std::max<int64_t>(1, ap.planes);
  if (ap.row_stride == ap.row_bytes && (planes == 1 || ap.plane_stride == rows * ap.row_bytes))
    return f(ap.base, ap.base + ap.row_bytes * rows * planes);
  int64_t lo = 0, hi = -1;
  for (int64_t p = 0; p < planes; p++)
    for (int64_t i = 0; i < rows; i++) {
      int64_t a = ap.base + p * ap.plane_stride + i * ap.row_stride;
      if (a == hi) {
        hi += ap.row_bytes;
        continue;
      }
      if (hi > lo && !f(lo, hi)) return false;
      lo = a;
      hi = a + ap.row_bytes;
    }
  return hi <= lo || f(lo, hi);
}

// The first stretch of pattern b's bytes inside [lo, hi), plane by plane, in O(planes).
static bool touches(const GsAccess &b, int64_t lo, int64_t hi, int64_t *x, int64_t *y) {
  int64_t rows = std::max<int64_t>(1, b.rows), planes = std::max<int64_t>(1, b.planes);
  int64_t st = rows > 1 ? b.row_stride : 1, best = INT64_MAX, best_end = 0;
  if (st <= 0) return false;  // no pattern here has one (mov_access, memory_range)
  for (int64_t p = 0; p < planes; p++) {
    int64_t s = b.base + p * b.plane_stride;
    // the first row i that ends after lo: s + i*st + row > lo
    int64_t num = lo - b.row_bytes - s, i = num < 0 ? 0 : num / st + 1;
    if (i >= rows) continue;
    int64_t a = s + i * st;
    if (a >= hi || std::max(lo, a) >= best) continue;
    best = std::max(lo, a);
    best_end = std::min(hi, a + b.row_bytes);
  }
  if (best == INT64_MAX) return false;
  *x = best;
  *y = best_end;
  return true;
}

bool memory_overlap(const GsAccess &a, const GsAccess &b, int64_t *lo, int64_t *hi) {
  if (a.row_bytes <= 0 || b.row_bytes <= 0) return false;
  if (a.base >= timing_access_extent(&b) || b.base >= timing_access_extent(&a)) return false;
  bool hit = false;
  for_each_run(a, [&](int64_t rlo, int64_t rhi) {
    hit = touches(b, rlo, rhi, lo, hi);
    return !hit;
  });
  return hit;
}

// Writes `tile` (by compute or not) into the bytes of ap in m, a run of the pattern at a time.
static void spans_put(SpanMap &m, const GsAccess &ap, uint32_t tile, bool by_compute) {
  SpanCursor c{m.end(), m.end(), false};
  const Span s{0, tile, by_compute};
  for_each_run(ap, [&](int64_t lo, int64_t hi) {
    if (span_extend(m, &c, lo, hi, s)) return true;
    SpanMap::iterator before;
    SpanMap::iterator it = span_seek(m, c.cur, lo, &before);
    c.cur = span_write(m, it, before, lo, hi, Span{hi, tile, by_compute});
    c.next_known = false;
    return true;
  });
}

// ---- held writes ----
// A tensor stored a block of columns at a time (a conv's output, 32 channels of a 128-channel
// pixel per store) is written as rows at one stride, each store's rows beside the last one's.
// Put into the ranges one by one, the first store of a block cuts the region into a range per
// row and the next ones join them back, a tree step per row. Held, a store that continues the
// columns of a held write on the same rows widens it instead, and the block reaches the ranges
// as one write, whole rows at a time (one range when its rows have no gaps left). The ranges
// are the same: held writes are disjoint (a write settles every held write it may meet, but
// the one it continues), so the order in which they reach the ranges does not matter, and
// every access that reads the ranges settles the held writes it may meet first.

// May a and b share a byte? Not when their extents do not meet, nor when both are rows at one
// stride S (one plane) whose columns (their bytes' offsets modulo S) do not meet: the column
// blocks of one tensor, whatever their rows.
static bool may_meet(const GsAccess &a, const GsAccess &b) {
  if (a.base >= timing_access_extent(&b) || b.base >= timing_access_extent(&a)) return false;
  const int64_t S = a.row_stride;
  if (S != b.row_stride || a.rows < 2 || b.rows < 2 || a.row_bytes >= S || b.row_bytes >= S ||
      std::max<int64_t>(1, a.planes) != 1 || std::max<int64_t>(1, b.planes) != 1)
    return true;
  int64_t d = ((b.base - a.base) % S + S) % S;  // b's first column, from a's
  return d < a.row_bytes || S - d < b.row_bytes;
}

// Held write k of g out of the list (the rest keep their order).
static void held_drop(Region &g, int k) {
  HeldWrite *h = g.held.get();
  std::copy(h + k + 1, h + g.nheld, h + k);
  g.nheld--;
}

// Held write k of g into its ranges, out of the list.
void MemoryState::settle_one(Region &g, int k) {
  const HeldWrite &h = g.held[k];
  spans_put(g.spans, h.ap, h.tile, h.by_compute);
  held_drop(g, k);
}

// The held writes of g that may meet ap (every one when ap is null) into its ranges.
void MemoryState::settle(Region &g, const GsAccess *ap) {
  for (int k = g.nheld; k-- > 0;)
    if (!ap || may_meet(g.held[k].ap, *ap)) settle_one(g, k);
}

// How ap (of tile, by compute or not) continues held write h: JOIN_COLUMNS, to the right or to
// the left on the same rows at the same stride, the two together no wider than the stride;
// JOIN_ROWS, below or above in the same columns at the same stride; else JOIN_NONE.
enum Join { JOIN_NONE, JOIN_COLUMNS, JOIN_ROWS };
static Join joins(const HeldWrite &h, const GsAccess &ap, uint32_t tile, bool by_compute) {
  const int64_t S = ap.row_stride;
  if (h.tile != tile || h.by_compute != by_compute || h.ap.row_stride != S) return JOIN_NONE;
  if (h.ap.rows == ap.rows && h.ap.row_bytes + ap.row_bytes <= S &&
      (h.ap.base + h.ap.row_bytes == ap.base || ap.base + ap.row_bytes == h.ap.base))
    return JOIN_COLUMNS;
  if (h.ap.row_bytes == ap.row_bytes &&
      (h.ap.base + h.ap.rows * S == ap.base || ap.base + ap.rows * S == h.ap.base))
    return JOIN_ROWS;
  return JOIN_NONE;
}

// h with the bytes of b, which continue its columns or its rows (how: joins).
static void held_join(HeldWrite &h, const GsAccess &b, Join how) {
  if (how == JOIN_COLUMNS) h.ap.row_bytes += b.row_bytes;
  else h.ap.rows += b.rows;
  h.ap.base = std::min(h.ap.base, b.base);
}

// Holds a write of tile into ap when its rows have gaps (one plane, two rows or more): it
// joins the held write of the same tile and writer kind whose columns it continues, on the
// same rows at the same stride, or whose rows it continues, in the same columns (a tensor
// stored a block of rows of one block of columns at a time: MobileNet-v2's convs under tvm),
// or is held itself (the oldest held write settled when there is no room). False for any
// other write, which the caller puts into the ranges.
bool MemoryState::hold(Region &g, const GsAccess &ap, uint32_t tile, bool by_compute) {
  if (ap.rows < 2 || ap.row_bytes >= ap.row_stride || std::max<int64_t>(1, ap.planes) != 1)
    return false;
  int join = -1;
  Join how = JOIN_NONE;
  for (int k = 0; k < g.nheld && join < 0; k++)
    if ((how = joins(g.held[k], ap, tile, by_compute)) != JOIN_NONE) join = k;
  for (int k = g.nheld; k-- > 0;)
    if (k != join && may_meet(g.held[k].ap, ap)) {
      settle_one(g, k);
      if (join > k) join--;
    }
  if (join < 0) {
    if (!g.held) g.held.reset(new HeldWrite[Region::kHeld]);
    if (g.nheld == Region::kHeld) settle_one(g, 0);
    g.held[g.nheld++] = HeldWrite{ap, tile, by_compute};
    return true;
  }
  // joined, it may now continue another held write's columns or rows (two queues storing the
  // column blocks of the same rows from either end; the last block of rows of a column making
  // it as tall as the column beside it): the two become one, and so on
  held_join(g.held[join], ap, how);
  for (int k = 0; k < g.nheld;) {
    HeldWrite &h = g.held[join];
    how = k == join ? JOIN_NONE : joins(g.held[k], h.ap, h.tile, h.by_compute);
    if (how == JOIN_NONE) {
      k++;
      continue;
    }
    held_join(h, g.held[k].ap, how);
    held_drop(g, k);  // both held, so disjoint: nothing to settle
    if (join > k) join--;
    k = 0;
  }
  return true;
}

const SpanMap &MemoryState::contents(uint32_t r) {
  Region *g = find(r);
  if (g) settle(*g, nullptr);
  return region(r).spans;
}

// ---- allocation ----

// Bytes [off, end) of buffer B that an earlier free released must have been freed before this
// allocation (else, with other timing, the allocation would overlap the live region).
std::string MemoryState::reuse_check(uint32_t r, const Buffer &B, int64_t off, int64_t end,
                                     Mark who) const {
  auto it = B.freed.upper_bound(off);
  if (it != B.freed.begin() && std::prev(it)->second.end > off) --it;
  for (; it != B.freed.end() && it->first < end; ++it) {
    const Freed &f = it->second;
    if (hb->ordered(f.by.q, f.by.e, who.q)) continue;
    char msg[256];
    snprintf(msg, sizeof msg, "allocation of region %s [%" PRId64 ", %" PRId64 ") in %s takes "
             "bytes [%" PRId64 ", %" PRId64 ") of region %s, freed by ", region_name(r).c_str(),
             off, end, B.name.c_str(), std::max(off, it->first), std::min(end, f.end),
             region_name(f.region).c_str());
    return msg + mark_name(f.by) + ", which does not happen before it: missing synchronisation";
  }
  return std::string();
}

std::string MemoryState::alloc(uint32_t r, int b, int64_t offset, int64_t bytes, uint32_t init,
                               uint32_t final, Mark who) {
  Region &g = region_mut(r);
  Buffer &B = bufs[(size_t)b];
  char msg[256];
  if (g.state == RS_LIVE) {
    snprintf(msg, sizeof msg, "region %s is already allocated (in %s at offset %" PRId64 ")",
             region_name(r).c_str(), bufs[(size_t)g.buf].name.c_str(), g.offset);
    return msg;
  }
  if (B.capacity == 0) {
    snprintf(msg, sizeof msg, "%s has no %s (its capacity is 0 bytes)", B.name.c_str(),
             level_name(B.level));
    return msg;
  }
  if (offset < 0 || bytes <= 0 || offset > B.capacity || bytes > B.capacity - offset) {
    snprintf(msg, sizeof msg,
             "allocation of region %s [%" PRId64 ", %" PRId64 ") is beyond the capacity of %s "
             "(%" PRId64 " bytes)",
             region_name(r).c_str(), offset, offset + bytes, B.name.c_str(), B.capacity);
    return msg;
  }
  auto next = B.live.lower_bound(offset);
  const std::pair<const int64_t, std::pair<int64_t, uint32_t>> *hit = nullptr;
  if (next != B.live.end() && next->first < offset + bytes) hit = &*next;
  if (!hit && next != B.live.begin()) {
    auto prev = std::prev(next);
    if (prev->second.first > offset) hit = &*prev;
  }
  if (hit) {
    snprintf(msg, sizeof msg,
             "allocation of region %s [%" PRId64 ", %" PRId64 ") in %s overlaps live region %s "
             "[%" PRId64 ", %" PRId64 ")",
             region_name(r).c_str(), offset, offset + bytes, B.name.c_str(),
             region_name(hit->second.second).c_str(), hit->first, hit->second.first);
    return msg;
  }
  std::string e = reuse_check(r, B, offset, offset + bytes, who);
  if (!e.empty()) return e;
  ranges_cut(B.freed, offset, offset + bytes);
  B.live.emplace(offset, std::make_pair(offset + bytes, r));
  B.occupancy += bytes;
  if (B.occupancy > B.peak) B.peak = B.occupancy;
  release_logs(g);
  g = Region();
  g.state = RS_LIVE;
  if (r < freed_.size()) freed_[r] = false;
  g.buf = b;
  g.offset = offset;
  g.bytes = bytes;
  g.alloc = who;
  if (init) g.spans.emplace(0, Span{bytes, init, false});
  g.final = final;
  if (final) outputs_.push_back(r);
  return std::string();
}

// Is region g live, its allocation happening before `who`?
bool MemoryState::live_for(const Region &g, Mark who) const {
  return g.state == RS_LIVE && hb->ordered(g.alloc.q, g.alloc.e, who.q);
}

// Region r (its state g) is live and its allocation happens before this access.
std::string MemoryState::live_check(const Region &g, uint32_t r, Mark who) const {
  if (live_for(g, who)) return std::string();
  if (g.state != RS_LIVE)
    return "use of region " + region_name(r) +
           (g.state == RS_FREED ? " after it was freed" : ", which was never allocated");
  return "use of region " + region_name(r) + ", allocated by " + mark_name(g.alloc) +
         ", which does not happen before it: missing synchronisation";
}

std::string MemoryState::free_region(uint32_t r, Mark who) {
  const Region &c = region(r);
  if (c.state != RS_LIVE)
    return "free of region " + region_name(r) +
           (c.state == RS_FREED ? ", which was already freed" : ", which is not allocated");
  Region &g = region_mut(r);
  if (g.final)
    return "free of region " + region_name(r) + ", a program output: it must hold its final tile " +
           tile_name(g.final) + " when the run ends";
  std::string e = live_check(g, r, who);
  if (!e.empty() || !unordered(g, r, memory_range(0, g.bytes), who, true, "free of", &e)) return e;
  Buffer &B = bufs[(size_t)g.buf];
  B.live.erase(g.offset);
  B.occupancy -= g.bytes;
  B.freed.emplace(g.offset, Freed{g.offset + g.bytes, who, r});
  // a freed region keeps one bit, not its state: programs allocate millions over a run
  release_logs(g);
  regions_.erase(r);
  if (r < index_.size()) index_[r] = nullptr;
  if (r >= freed_.size()) freed_.resize((size_t)r + 1);
  freed_[r] = true;
  return std::string();
}

// ---- accesses ----

std::string MemoryState::bounds(const Region &g, uint32_t r, const GsAccess &ap,
                                const char *what) const {
  if (memory_inside(ap, g.bytes)) return std::string();
  int64_t off = ap.base, bytes = ap.row_bytes > 0 ? timing_access_extent(&ap) - ap.base : 0;
  char msg[256];
  snprintf(msg, sizeof msg, "%s [%" PRId64 ", %" PRId64 ") of region %s is outside its %" PRId64
           " bytes", what, off, off + bytes, region_name(r).c_str(), g.bytes);
  return msg;
}

// The first access in `log` by another queue that does not happen before `who` and touches
// pattern *ap (any access when ap is null): false and *e the message "WHAT bytes [a, b) of region
// R: OTHER by queue Q2, instruction I2, which does not happen before it: missing
// synchronisation", or true when there is none.
// Each queue's records are in program order, so only those at epochs `who` does not know of —
// the last few — are looked at.
bool MemoryState::first_unordered(uint32_t r, const AccessLog &log, const GsAccess *ap, Mark who,
                                  const char *what, const char *other, std::string *e) {
  for (const QueueAccesses &ql : log) {
    if (ql.q == who.q) continue;
    uint32_t seen = hb->known(who.q, ql.q);
    const std::vector<AccessRec> &v = ql.v;
    for (size_t j = v.size(); j-- > 0 && v[j].e > seen;) {
      int64_t lo = v[j].ap.base, hi = timing_access_extent(&v[j].ap);
      if (ap && !memory_overlap(*ap, v[j].ap, &lo, &hi)) continue;
      *e = race(what, r, lo, hi, other, Mark{ql.q, v[j].e, v[j].i});
      return false;
    }
  }
  return true;
}

// Drops the records of one queue's log that every running queue is ordered after.
static void prune_queue_log(std::vector<AccessRec> &v, const HbClocks &hb, int q) {
  size_t k = 0;
  while (k < v.size() && v[k].e <= hb.floor(q)) k++;
  v.erase(v.begin(), v.begin() + (ptrdiff_t)k);
}

// Keeps an emptied record vector for the next log: at most kSpareLogs of them, each with room
// for at most kSpareRecs records. A reused vector keeps its room in the log it goes to: room
// for 64 held 28 MiB more over the live regions of BERT-128 graphturbo on stcp920 (room for
// 16: none; ResNet-50 tvm at batch 4, checks inline: 4.36 G instructions against 4.28 G).
static const size_t kSpareLogs = 1024, kSpareRecs = 16, kRoomyLog = 8;
void MemoryState::spare_log(std::vector<AccessRec> &v) {
  if (spare_.size() >= kSpareLogs || v.capacity() > kSpareRecs) return;
  v.clear();
  spare_.push_back(std::move(v));
}

// Gives the record vectors of region g's logs to spare_ (it is freed, or allocated anew).
void MemoryState::release_logs(Region &g) {
  for (AccessLog *log : {&g.writes, &g.reads}) {
    for (QueueAccesses &ql : *log) spare_log(ql.v);
    log->clear();
  }
}

static uint64_t pattern_hash(const GsAccess &ap) {
  static_assert(sizeof ap == 6 * sizeof(uint64_t), "a pattern is six 64-bit fields");
  uint64_t w[6];
  memcpy(w, &ap, sizeof w);
  return util_hash_words(w, 6);
}

// Drops every record of v that a later record of the same pattern supersedes (they keep their
// order). *slots: scratch for the open-addressed table of the patterns seen.
static void drop_superseded(std::vector<AccessRec> &v, std::vector<uint32_t> *slots) {
  size_t size = 16;
  while (size < 2 * v.size()) size *= 2;
  slots->assign(size, UINT32_MAX);
  size_t kept = v.size();  // v[kept..] are the newest of their patterns, moved to the end
  for (size_t j = v.size(); j-- > 0;) {
    size_t h = (size_t)pattern_hash(v[j].ap) & (size - 1);
    for (; (*slots)[h] != UINT32_MAX; h = (h + 1) & (size - 1))
      if (memcmp(&v[(*slots)[h]].ap, &v[j].ap, sizeof v[j].ap) == 0) break;
    if ((*slots)[h] != UINT32_MAX) continue;  // a later record has its pattern
    v[--kept] = v[j];
    (*slots)[h] = (uint32_t)kept;
  }
  v.erase(v.begin(), v.begin() + (ptrdiff_t)kept);
}

// Appends the access of `who` to the bytes of ap to region r's log of writes or reads (unless
// the queue's last record is the same pattern at the same epoch; at an earlier one, the new
// record replaces it). A full log first drops the queue's records that every running queue is
// ordered after, and the records a later one of the same pattern supersedes.
// Dropping a superseded record changes no verdict and no message: an access not ordered after
// it is not ordered after the later one either (whose epoch is not lower), and first_unordered,
// which looks at a queue's records newest first, meets the later one first. A queue that reads
// one weight tile, or a few in turn, at every epoch of an episode otherwise logged each once per
// epoch until the next chip barrier: BERT-128 graphturbo on `stcp920` grew 6900 logs of one
// pattern past 512 records, and others of 16-257 patterns to 4096, most of its page faults.
void MemoryState::log_access(Region &g, uint32_t r, bool write, Mark who, const GsAccess &ap) {
  AccessLog &log = write ? g.writes : g.reads;
  size_t k = 0;
  while (k < log.size() && log[k].q < who.q) k++;
  if (k == log.size() || log[k].q != who.q) {
    log.insert(log.begin() + (ptrdiff_t)k, QueueAccesses{who.q, {}});
    if (!spare_.empty()) {
      log[k].v.swap(spare_.back());
      spare_.pop_back();
    }
  }
  std::vector<AccessRec> &v = log[k].v;
  if (!v.empty() && memcmp(&v.back().ap, &ap, sizeof ap) == 0) {
    if (v.back().e != who.e) v.back() = AccessRec{who.e, who.i, ap};  // supersedes it
  } else {
    // room for kSpareRecs at once rather than growing from one record, in a log of a few
    // queues: a region every core reads (a weight in DDR on ipu-gc2, 2432 cores) has a record
    // or two per queue, and that room was 300 MiB of BERT-128's peak there at batch 2
    if (v.capacity() < kSpareRecs && log.size() <= kRoomyLog) v.reserve(kSpareRecs);
    if (v.size() == v.capacity() && v.size() >= 8) {  // amortised O(1): a log that did not
      prune_queue_log(v, *hb, who.q);                 // lose a quarter doubles its room
      drop_superseded(v, &slots_);
      if (v.size() > v.capacity() / 4 * 3) v.reserve(2 * v.capacity());
    }
    v.push_back(AccessRec{who.e, who.i, ap});
  }
  if (!g.logged) {
    g.logged = true;
    logged_.push_back(r);
  }
}

void MemoryState::prune_logs() {
  for (uint32_t r : logged_) {
    Region *gp = find(r);
    if (!gp) continue;  // freed since
    Region &g = *gp;
    g.logged = false;
    for (AccessLog *log : {&g.writes, &g.reads}) {
      size_t kept = 0;
      for (size_t k = 0; k < log->size(); k++) {
        QueueAccesses &ql = (*log)[k];
        prune_queue_log(ql.v, *hb, ql.q);
        if (!ql.v.empty()) {
          if (kept != k) std::swap((*log)[kept], ql);
          kept++;
        } else {
          spare_log(ql.v);
        }
      }
      log->resize(kept);
      // A region every core reads (a weight in DDR on ipu-gc2: 2432 cores) grows its log to a
      // slot per queue between two barriers and kept that room while it lived: 161 MiB of
      // BERT-128's 1274 MiB peak at batch 8 there. Logs of a few queues never reach 64.
      if (log->capacity() > 64 && log->capacity() > 4 * kept) log->shrink_to_fit();
    }
  }
  logged_.clear();
}

// The accesses the bytes of ap must come after: every write of them by another queue and
// (writes: `who` writes or frees them) every read. False with *e the message when one does not.
bool MemoryState::unordered(Region &g, uint32_t r, const GsAccess &ap, Mark who, bool writes,
                            const char *what, std::string *e) {
  return first_unordered(r, g.writes, &ap, who, what, "written", e) &&
         (!writes || first_unordered(r, g.reads, &ap, who, what, "read", e));
}

namespace {
// A stretch of bytes [lo, hi) that does not hold the expected tile, and what it holds instead
// (0: nothing was ever written into it).
struct Bad {
  int64_t lo = 0, hi = 0;
  uint32_t held = 0;
};

// The first stretch of [lo, hi) that does not hold `tile`; consecutive pieces that hold the same
// wrong thing (or nothing) are one stretch.
// *cur: where the last call's walk ended (a hint for span_seek; m.end() at first).
bool first_bad(const SpanMap &m, int64_t lo, int64_t hi, uint32_t tile, Bad *bad,
               SpanMap::const_iterator *cur) {
  bool found = false;
  auto extend = [&](int64_t a, int64_t b, uint32_t held) {  // false: the stretch has ended
    if (!found) {
      *bad = Bad{a, b, held};
      found = true;
      return true;
    }
    if (bad->hi != a || bad->held != held) return false;
    bad->hi = b;
    return true;
  };
  int64_t pos = lo;
  auto it = span_seek(m, *cur, lo);
  for (; it != m.end() && it->first < hi; ++it) {
    *cur = it;
    int64_t a = std::max(lo, it->first), b = std::min(hi, it->second.end);
    if (a > pos && !extend(pos, a, 0)) return true;
    if (it->second.tile != tile ? !extend(a, b, it->second.tile) : found) return true;
    pos = b;
  }
  if (pos < hi) extend(pos, hi, 0);
  return found;
}
}  // namespace

// The read of ap starts with bytes that hold `tile` as a gemm/vec left it, and its first bytes
// that do not hold it (never written, or an older tile) come right after them: the compute
// instruction wrote fewer bytes than the read expects of its result (docs/timing.md, "Warnings").
bool MemoryState::short_compute(uint32_t r, uint32_t tile, const GsAccess &ap, int64_t bad_lo) const {
  const SpanMap &m = region(r).spans;
  auto it = span_at(m, ap.base);
  if (it == m.end() || it->first > ap.base || it->second.tile != tile || !it->second.by_compute) return false;
  return bad_lo > ap.base;  // every byte of the pattern before the first bad one holds `tile`
}

// Every byte of ap must hold `tile`; else false, and *e the message for the first stretch that
// does not, led by `what` ("read of").
bool MemoryState::holds(uint32_t r, uint32_t tile, const GsAccess &ap, const char *what,
                        std::string *e, bool *partial_compute) const {
  const Region &g = region(r);
  Bad bad;
  bool found = false;
  if (ap.row_bytes > 0) {
    // one range holding `tile` from the pattern's first byte to its last: every byte does (the
    // common case, a region that holds one tile: no walk over the rows)
    auto it = span_at(g.spans, ap.base);
    bool one = it != g.spans.end() && it->first <= ap.base && it->second.tile == tile &&
               it->second.end >= timing_access_extent(&ap);
    auto cur = g.spans.end();
    if (!one)
      for_each_run(ap, [&](int64_t lo, int64_t hi) {
        found = first_bad(g.spans, lo, hi, tile, &bad, &cur);
        return !found;
      });
  }
  if (!found) return true;
  if (partial_compute) *partial_compute = short_compute(r, tile, ap, bad.lo);
  std::string head = std::string(what) + " region " + region_name(r) + " expects tile " + tile_name(tile);
  bool whole = bad.lo == 0 && bad.hi == g.bytes;
  char range[96];
  snprintf(range, sizeof range, "bytes [%" PRId64 ", %" PRId64 ")", bad.lo, bad.hi);
  if (bad.held == 0)
    *e = head + ", but nothing was ever written into " + (whole ? std::string("the region") : range + std::string(" of it"));
  else
    *e = head + ", but " + (whole ? std::string("it holds") : range + std::string(" of it hold")) + " tile " +
         tile_name(bad.held) + " (stale)";
  return false;
}

// Region r when it is live, its allocation happens before `who` and pattern ap lies inside it;
// else null, and *e says why (`what` leads the bounds message).
Region *MemoryState::usable(uint32_t r, const GsAccess &ap, Mark who, const char *what,
                            std::string *e) {
  Region *g = find(r);  // null: never allocated, or freed (live_check says which)
  if (g && live_for(*g, who) && memory_inside(ap, g->bytes)) return g;  // no message to build
  *e = live_check(g ? *g : region(r), r, who);
  if (e->empty()) *e = bounds(*g, r, ap, what);
  return nullptr;
}

bool MemoryState::read(uint32_t r, uint32_t tile, const GsAccess &ap, Mark who, std::string *e) {
  Region *g = usable(r, ap, who, "read of bytes", e);
  if (!g || !unordered(*g, r, ap, who, false, "read of", e)) return false;
  settle(*g, &ap);
  bool partial = false;
  if (!holds(r, tile, ap, "read of", e, &partial)) {
    if (partial) *e += " (after the part of the tile a gemm/vec wrote: it wrote less than is read)";
    return false;
  }
  log_access(*g, r, false, who, ap);
  return true;
}

bool MemoryState::write(uint32_t r, uint32_t tile, const GsAccess &ap, Mark who, bool acc,
                        bool by_compute, std::string *e) {
  Region *g = usable(r, ap, who, "write of bytes", e);
  if (!g) return false;
  if (acc) {
    bool ok = unordered(*g, r, ap, who, false, "accumulation into", e);
    settle(*g, &ap);
    if (!ok || !holds(r, tile, ap, "accumulation into", e)) return false;
  }
  if (!unordered(*g, r, ap, who, true, "write into", e)) return false;
  if (acc || !hold(*g, ap, tile, by_compute)) {
    settle(*g, &ap);
    spans_put(g->spans, ap, tile, by_compute);
  }
  log_access(*g, r, true, who, ap);
  return true;
}

std::string MemoryState::outputs_check() {
  std::string s;
  std::vector<uint32_t> ids = outputs_;
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  for (uint32_t r : ids) {
    Region *g = find(r);
    if (!g || !g->final || g->state != RS_LIVE) continue;  // a freed output is reported at its free
    settle(*g, nullptr);
    std::string e;
    if (!holds(r, g->final, memory_range(0, g->bytes), "program output", &e)) s += e + "\n";
  }
  return s;
}
