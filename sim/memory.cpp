// memory.cpp — allocation and tile tracking behind the simulator's checks.
// Invariants: the live allocations of one buffer never overlap and lie inside its capacity
// (checked at alloc); `occupancy` is the sum of their sizes; a region's tile changes only at the
// completion of a write. Each buffer keeps its live allocations in an ordered map keyed by
// offset, so the overlap check looks at the two neighbours only (O(log n)).
#include "memory.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>

static const char *level_name(int l) { return l == LVL_DDR ? "DDR" : l == LVL_GB ? "GB" : "LB"; }

static std::string qname(const std::vector<std::string> *names, int q) {
  return names && q >= 0 && (size_t)q < names->size() ? (*names)[(size_t)q] : "?";
}

// In-flight accesses of transfers end when their last chunk has passed (not known ahead).
// Times in messages are cycles from the run's start (origin).
static std::string until_text(double until, double origin) {
  if (until >= 1e299) return "a transfer in flight";
  char b[64];
  snprintf(b, sizeof b, "until cycle %.0f", std::ceil(until - origin - 1e-9) + 0.0);
  return b;
}

// Strictly before, ignoring the sub-picosecond difference between a transfer's exact end and
// the kernel time it wakes at.
static bool before(double now, double until) { return now < until - 1e-6; }

void MemoryState::reset(const GsProgram *p) {
  prog = p;
  for (Buffer &b : bufs) b.reset();
  regions.assign(p->nregions, Region());
}

std::string MemoryState::region_name(uint32_t r) const {
  char buf[48];
  snprintf(buf, sizeof buf, "r%u", r);
  if (prog && prog->region_names && r < prog->nregions && prog->region_names[r])
    return std::string(buf) + " '" + prog->region_names[r] + "'";
  return buf;
}

std::string MemoryState::tile_name(uint32_t t) const {
  char buf[48];
  snprintf(buf, sizeof buf, "t%u", t);
  if (prog && prog->tile_names && t < prog->ntiles && prog->tile_names[t])
    return std::string(buf) + " '" + prog->tile_names[t] + "'";
  return buf;
}

std::string MemoryState::alloc(uint32_t r, int b, int64_t offset, int64_t bytes, uint32_t init,
                               uint32_t final) {
  Region &g = regions[r];
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
  B.live.emplace(offset, std::make_pair(offset + bytes, r));
  B.occupancy += bytes;
  if (B.occupancy > B.peak) B.peak = B.occupancy;
  g = Region();
  g.state = RS_LIVE;
  g.buf = b;
  g.offset = offset;
  g.bytes = bytes;
  g.tile = init;
  g.final = final;
  return "";
}

std::string MemoryState::live_check(uint32_t r) const {
  const Region &g = regions[r];
  if (g.state == RS_LIVE) return "";
  return "use of region " + region_name(r) +
         (g.state == RS_FREED ? " after it was freed" : ", which was never allocated");
}

std::string MemoryState::free_region(uint32_t r, int q, double now) {
  Region &g = regions[r];
  if (g.state != RS_LIVE)
    return "free of region " + region_name(r) +
           (g.state == RS_FREED ? ", which was already freed" : ", which is not allocated");
  if (g.final)
    return "free of region " + region_name(r) + ", a program output: it must hold its final tile " +
           tile_name(g.final) + " when the run ends";
  char msg[320];
  if (g.writer >= 0 && before(now, g.write_until)) {
    snprintf(msg, sizeof msg, "free of region %s while queue %s is still writing it (%s): missing "
             "synchronisation", region_name(r).c_str(), qname(queue_names, g.writer).c_str(),
             until_text(g.write_until, origin).c_str());
    return msg;
  }
  if (g.reader >= 0 && g.reader != q && before(now, g.read_until)) {
    snprintf(msg, sizeof msg, "free of region %s while queue %s still reads it (%s): missing "
             "synchronisation", region_name(r).c_str(), qname(queue_names, g.reader).c_str(),
             until_text(g.read_until, origin).c_str());
    return msg;
  }
  Buffer &B = bufs[(size_t)g.buf];
  B.live.erase(g.offset);
  B.occupancy -= g.bytes;
  g.state = RS_FREED;
  return "";
}

std::string MemoryState::bounds(uint32_t r, int64_t off, int64_t bytes, const char *what) const {
  const Region &g = regions[r];
  if (off >= 0 && bytes >= 0 && off <= g.bytes && bytes <= g.bytes - off) return "";
  char msg[256];
  snprintf(msg, sizeof msg, "%s [%" PRId64 ", %" PRId64 ") of region %s is outside its %" PRId64
           " bytes", what, off, off + bytes, region_name(r).c_str(), g.bytes);
  return msg;
}

std::string MemoryState::read(uint32_t r, uint32_t tile, int64_t off, int64_t bytes, int q,
                              double now, double until) {
  std::string e = live_check(r);
  if (!e.empty()) return e;
  e = bounds(r, off, bytes, "read of bytes");
  if (!e.empty()) return e;
  Region &g = regions[r];
  char msg[320];
  if (g.writer >= 0 && g.writer != q && before(now, g.write_until)) {
    snprintf(msg, sizeof msg, "read of region %s while queue %s is still writing it (%s): missing "
             "synchronisation", region_name(r).c_str(), qname(queue_names, g.writer).c_str(),
             until_text(g.write_until, origin).c_str());
    return msg;
  }
  if (g.tile != tile) {
    if (g.tile == 0)
      snprintf(msg, sizeof msg, "read of region %s expects tile %s, but nothing was ever written "
               "into the region", region_name(r).c_str(), tile_name(tile).c_str());
    else
      snprintf(msg, sizeof msg, "read of region %s expects tile %s, but it holds tile %s (stale)",
               region_name(r).c_str(), tile_name(tile).c_str(), tile_name(g.tile).c_str());
    return msg;
  }
  if (until > g.read_until) {
    g.read_until = until;
    g.reader = q;
  }
  return "";
}

std::string MemoryState::write_begin(uint32_t r, uint32_t tile, int64_t off, int64_t bytes, int q,
                                     double now, double until, bool acc) {
  std::string e = live_check(r);
  if (!e.empty()) return e;
  e = bounds(r, off, bytes, "write of bytes");
  if (!e.empty()) return e;
  Region &g = regions[r];
  char msg[320];
  if (g.writer >= 0 && g.writer != q && before(now, g.write_until)) {
    snprintf(msg, sizeof msg, "write into region %s while queue %s is still writing it (%s): "
             "missing synchronisation", region_name(r).c_str(), qname(queue_names, g.writer).c_str(),
             until_text(g.write_until, origin).c_str());
    return msg;
  }
  if (g.reader >= 0 && g.reader != q && before(now, g.read_until)) {
    snprintf(msg, sizeof msg, "write into region %s while queue %s still reads it (%s): missing "
             "synchronisation", region_name(r).c_str(), qname(queue_names, g.reader).c_str(),
             until_text(g.read_until, origin).c_str());
    return msg;
  }
  if (acc && g.tile != tile) {
    snprintf(msg, sizeof msg, "accumulation into region %s expects tile %s, but it holds %s",
             region_name(r).c_str(), tile_name(tile).c_str(),
             g.tile ? ("tile " + tile_name(g.tile)).c_str() : "nothing");
    return msg;
  }
  g.writer = q;
  g.write_until = until;
  return "";
}

void MemoryState::read_end(uint32_t r, int q, double now) {
  Region &g = regions[r];
  if (g.reader == q) g.read_until = now;
}

void MemoryState::write_end(uint32_t r, uint32_t tile) {
  Region &g = regions[r];
  g.last_tile = g.tile;
  g.tile = tile;
  g.writer = -1;
}

std::string MemoryState::outputs_check() const {
  std::string s;
  for (uint32_t r = 0; r < regions.size(); r++) {
    const Region &g = regions[r];
    if (!g.final || g.state != RS_LIVE) continue;  // a freed output is reported at its free
    if (g.tile == g.final) continue;
    s += "program output region " + region_name(r) + " should hold tile " + tile_name(g.final) +
         (g.tile ? ", but it holds tile " + tile_name(g.tile) : ", but nothing was ever written into it") +
         "\n";
  }
  return s;
}
