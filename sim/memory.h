// memory.h — buffer and region state (plain C++, no SystemC): which bytes of every DDR/GB/LB
// are allocated to which region, and which tile each region holds. The queue threads call
// these at issue; each returns an empty string when the access is legal, else the check
// message (the caller adds queue, instruction index and text).
#ifndef GS_MEMORY_H
#define GS_MEMORY_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

extern "C" {
#include "prog.h"
}

struct Buffer {
  std::string name;     // "ddr", "c0.gb", "c0.k1.lb"
  int level = LVL_DDR;  // GsLevel
  int cluster = -1, core = -1;
  int64_t capacity = 0;
  std::map<int64_t, std::pair<int64_t, uint32_t>> live;  // offset -> (end, region)
  int64_t occupancy = 0, peak = 0;
  void reset() { live.clear(); occupancy = peak = 0; }
};

enum RegionState : uint8_t { RS_NEVER, RS_LIVE, RS_FREED };

struct Region {
  RegionState state = RS_NEVER;
  int buf = -1;
  int64_t offset = 0, bytes = 0;
  uint32_t tile = 0;          // tile held now (0: none written yet)
  uint32_t last_tile = 0;     // tile held before the last write (for "stale" messages)
  uint32_t final = 0;         // a program output: the tile it must hold when the run ends
  // In-flight accesses (times in cycles): a write completes at write_until; readers read until
  // read_until. Another queue touching the region meanwhile is a race.
  int writer = -1;            // queue id writing it, -1 none
  double write_until = 0;
  int reader = -1;            // queue id of the read that ends last
  double read_until = 0;
};

class MemoryState {
 public:
  std::vector<Buffer> bufs;
  std::vector<Region> regions;
  const GsProgram *prog = nullptr;
  double origin = 0;  // the run's start (absolute cycles); messages give cycles from it

  void reset(const GsProgram *p);
  std::string region_name(uint32_t r) const;
  std::string tile_name(uint32_t t) const;

  // alloc/free (zero cost). buf is a Buffer index; `final` marks a program output (0: none).
  std::string alloc(uint32_t r, int buf, int64_t offset, int64_t bytes, uint32_t init,
                    uint32_t final);
  // A free by queue q at `now`: the region must be live and no other access in flight.
  std::string free_region(uint32_t r, int q, double now);
  // A read of `bytes` bytes at [off, off+bytes) of region r that must hold `tile`, by queue q
  // from now until `until`. Registers the read.
  std::string read(uint32_t r, uint32_t tile, int64_t off, int64_t bytes, int q, double now,
                   double until);
  // A read registered with an open-ended `until` (a transfer) ends now.
  void read_end(uint32_t r, int q, double now);
  // The start of a write of [off, off+bytes) of region r by queue q, completing at `until`.
  // `acc`: the write reads the region too and it must hold `tile` already.
  std::string write_begin(uint32_t r, uint32_t tile, int64_t off, int64_t bytes, int q,
                          double now, double until, bool acc);
  // The write completes: the region holds `tile`.
  void write_end(uint32_t r, uint32_t tile);
  // The end-of-run check of the program outputs: one line per output region that is not live
  // or does not hold its final tile in all its bytes (empty when all do).
  std::string outputs_check() const;

  // Queue names for messages (filled by the model).
  std::vector<std::string> *queue_names = nullptr;

 private:
  std::string live_check(uint32_t r) const;
  std::string bounds(uint32_t r, int64_t off, int64_t bytes, const char *what) const;
};

#endif
