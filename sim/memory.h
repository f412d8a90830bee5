// memory.h — buffer and region state (plain C++, no SystemC): which bytes of every DDR/GB/LB
// are allocated to which region, which tile each byte range of a region holds, and which
// queue last wrote and read it (for the happens-before race checks, hb.h). The queues' checks
// call these (checker.h); each returns an empty string when the access is legal, else the check
// message (the caller adds queue, instruction index and text).
#ifndef GS_MEMORY_H
#define GS_MEMORY_H

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "hb.h"
#include "node_cache.h"

extern "C" {
#include "prog.h"
#include "unit_timing.h"
}

// An access: the queue slot, its epoch then (hb.h) and the instruction's index in the queue.
struct Mark {
  int32_t q = -1;
  uint32_t e = 0;
  uint32_t i = 0;
};
inline bool operator==(const Mark &a, const Mark &b) { return a.q == b.q && a.e == b.e && a.i == b.i; }

// Freed bytes of a buffer: who freed them (a later allocation over them must happen after).
struct Freed {
  int64_t end;
  Mark by;
  uint32_t region;
};

struct Buffer {
  std::string name;     // "ddr", "c0.gb", "c0.k1.lb"
  int level = LVL_DDR;  // GsLevel
  int cluster = -1, core = -1;
  int64_t capacity = 0;
  // offset -> (end, region)
  std::map<int64_t, std::pair<int64_t, uint32_t>, std::less<int64_t>,
           NodeCache<std::pair<const int64_t, std::pair<int64_t, uint32_t>>>>
      live;
  // offset -> freed bytes not reused yet
  std::map<int64_t, Freed, std::less<int64_t>, NodeCache<std::pair<const int64_t, Freed>>> freed;
  int64_t occupancy = 0, peak = 0;
  void reset() { live.clear(); freed.clear(); occupancy = peak = 0; }
};

enum RegionState : uint8_t { RS_NEVER, RS_LIVE, RS_FREED };

// What a byte range of a region holds: the tile the last write left in it.
struct Span {
  int64_t end;  // one past its last byte (the map key is its first)
  uint32_t tile;
  bool by_compute;  // written by a gemm/vec (which write at offset 0 of their region)
};
// A region's contents as disjoint byte ranges keyed by their first byte; adjacent ranges that
// hold the same thing are merged, bytes never written have no range.
using SpanMap = std::map<int64_t, Span, std::less<int64_t>, NodeCache<std::pair<const int64_t, Span>>>;

// An access of a region by one queue at one epoch: its pattern and instruction index.
struct AccessRec {
  uint32_t e, i;
  GsAccess ap;
};
// One queue's accesses of a region, in program order (epochs non-decreasing).
struct QueueAccesses {
  int32_t q;
  std::vector<AccessRec> v;
};
// A region's accesses per queue slot, in ascending slot order (a region has a few). Records
// that every queue is known to be after (HbClocks::floor) are dropped as they are met. The
// record vectors of freed regions are reused (MemoryState::spare_): programs allocate millions
// of regions, and growing each one's vectors anew was a sixth of the checks' time.
using AccessLog = std::vector<QueueAccesses>;

// A strided write kept out of its region's ranges for now (MemoryState::hold): the bytes of ap
// hold `tile`.
struct HeldWrite {
  GsAccess ap{};
  uint32_t tile = 0;
  bool by_compute = false;
};

struct Region {
  RegionState state = RS_NEVER;
  int buf = -1;
  int64_t offset = 0, bytes = 0;
  SpanMap spans;       // what each byte range holds, but for the held writes
  // Strided writes not in spans yet, oldest first; their extents are disjoint, and what is in
  // spans of their bytes is older than they are (MemoryState::hold). Room for kHeld of them is
  // made at the region's first held write: few regions have one, and the room in every live
  // region was 80 MiB of BERT-128's peak on ipu-gc2 at batch 2.
  static const int kHeld = 8;
  std::unique_ptr<HeldWrite[]> held;
  int nheld = 0;
  AccessLog writes, reads;
  uint32_t final = 0;  // a program output: the tile it must hold when the run ends
  Mark alloc;          // its allocation: every access must happen after it
  bool logged = false; // in MemoryState::logged_ (records added since the last prune_logs)
};

// The pattern of bytes [off, off + bytes): one row.
GsAccess memory_range(int64_t off, int64_t bytes);
// Does pattern ap lie inside a region of `bytes` bytes (its extent, from its base)? (Inline:
// the model asks it of every transfer's two sides, the checks of every operand.)
inline bool memory_inside(const GsAccess &ap, int64_t bytes) {
  int64_t off = ap.base, n = ap.row_bytes > 0 ? timing_access_extent(&ap) - ap.base : 0;
  return off >= 0 && n >= 0 && off <= bytes && n <= bytes - off;
}
// Do patterns a and b touch a common byte? *lo, *hi: the first stretch of a's that b touches.
bool memory_overlap(const GsAccess &a, const GsAccess &b, int64_t *lo, int64_t *hi);

class MemoryState {
 public:
  std::vector<Buffer> bufs;
  // The state of region r: a never-allocated or a freed one when it has no entry (entries are
  // created on first use by the checks, region_mut: ids need not be dense — a program naming
  // region 67108863 costs one entry, not 2^26 — and freed regions drop theirs).
  const Region &region(uint32_t r) const;
  const GsProgram *prog = nullptr;
  const HbClocks *hb = nullptr;  // the run's clocks (set by the model)

  void reset(const GsProgram *p);
  std::string region_name(uint32_t r) const;
  std::string tile_name(uint32_t t) const;

  // alloc/free by access `who` (zero cost). buf is a Buffer index; `final` marks a program
  // output (0: none).
  std::string alloc(uint32_t r, int buf, int64_t offset, int64_t bytes, uint32_t init,
                    uint32_t final, Mark who);
  std::string free_region(uint32_t r, Mark who);
  // A read of the bytes of pattern ap of region r, which must all hold `tile` (every operand
  // names its extent: isa.def). read and write return false, with *e the message, when the
  // access fails its checks (no message is built when it passes: they run for every access).
  bool read(uint32_t r, uint32_t tile, const GsAccess &ap, Mark who, std::string *e);
  // A write of the bytes of ap, which then hold `tile` (at issue: an access that could see the
  // write in flight does not happen after it, and is reported as a race). `acc`: the write reads
  // those bytes too and they must hold `tile` already. `by_compute`: the writer is a gemm/vec.
  bool write(uint32_t r, uint32_t tile, const GsAccess &ap, Mark who, bool acc, bool by_compute,
             std::string *e);
  // The end-of-run check of the program outputs: one line per output region that is not live
  // or does not hold its final tile in all its bytes (empty when all do).
  std::string outputs_check();
  // Region r's ranges with its held writes in them (what a byte-by-byte model of the writes
  // holds; tests compare the two).
  const SpanMap &contents(uint32_t r);
  // Drops the access records every running queue is ordered after (HbClocks::floor) from the
  // regions accessed since the last call; the model calls it when the floor moves, so the logs
  // hold the accesses since the last chip barrier, not the whole run's.
  void prune_logs();

  // Queue names for messages (filled by the model).
  std::vector<std::string> *queue_names = nullptr;

 private:
  // the live ones (and never-allocated ones used)
  std::unordered_map<uint32_t, Region, std::hash<uint32_t>, std::equal_to<uint32_t>,
                     NodeCache<std::pair<const uint32_t, Region>>>
      regions_;
  // [region id < the program's count]: its entry in regions_ or null (elements of an
  // unordered_map stay put): a hash lookup per access was 3-4% of a run
  std::vector<Region *> index_;
  Region &region_mut(uint32_t r);
  Region *find(uint32_t r) const;
  std::vector<bool> freed_;                        // [region]: freed (and not allocated again)
  std::vector<uint32_t> outputs_;  // regions allocated with a final tile, in allocation order
  std::vector<uint32_t> logged_;   // regions with access records added since prune_logs
  std::vector<std::vector<AccessRec>> spare_;  // emptied record vectors, for the next logs
  std::vector<uint32_t> slots_;                // scratch of drop_superseded
  // (the checks of one access find region r once: g is its entry)
  void log_access(Region &g, uint32_t r, bool write, Mark who, const GsAccess &ap);
  bool hold(Region &g, const GsAccess &ap, uint32_t tile, bool by_compute);
  void settle_one(Region &g, int k);
  void settle(Region &g, const GsAccess *ap);
  Region *usable(uint32_t r, const GsAccess &ap, Mark who, const char *what, std::string *e);
  void release_logs(Region &g);
  void spare_log(std::vector<AccessRec> &v);
  bool live_for(const Region &g, Mark who) const;
  std::string live_check(const Region &g, uint32_t r, Mark who) const;
  std::string bounds(const Region &g, uint32_t r, const GsAccess &ap, const char *what) const;
  bool short_compute(uint32_t r, uint32_t tile, const GsAccess &ap, int64_t bad_lo) const;
  bool holds(uint32_t r, uint32_t tile, const GsAccess &ap, const char *what, std::string *e,
             bool *partial_compute = nullptr) const;
  bool unordered(Region &g, uint32_t r, const GsAccess &ap, Mark who, bool writes,
                 const char *what, std::string *e);
  std::string race(const char *what, uint32_t r, int64_t lo, int64_t hi, const char *other,
                   Mark by) const;
  std::string reuse_check(uint32_t r, const Buffer &B, int64_t off, int64_t end, Mark who) const;
  bool first_unordered(uint32_t r, const AccessLog &log, const GsAccess *ap, Mark who,
                       const char *what, const char *other, std::string *e);
  std::string mark_name(Mark m) const;
};

#endif
