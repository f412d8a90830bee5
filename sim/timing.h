// timing.h — the timing formulas of the model as plain functions (no SystemC kernel), so unit
// tests call them with known inputs. Every figure comes from GsArch; docs/timing.md derives
// each formula. All results are in cycles of the chip clock.
#ifndef GS_TIMING_H
#define GS_TIMING_H

#include <algorithm>
#include <cstdint>
#include <vector>

extern "C" {
#include "arch.h"
#include "prog.h"
}
#include "unit_timing.h"

// The compute formulas (timing_matrix, timing_vector, timing_scalar) and the DDR's burst
// rounding (timing_ddr_runs, timing_burst_span) are sched/unit_timing.h: the tiler estimates
// tiles with the same functions.

// std::llround(x), inline (libm's is a call, and the model rounds every chunk's bytes and every
// wait's time): the same result for every |x| < 2^63, since x minus its truncation is exact.
// (The two tests are added, not branched on: whether a time rounds up follows the data, and
// as branches they were a sixth of the simulating thread's mispredictions.)
inline int64_t timing_llround(double x) {
  int64_t i = (int64_t)x;
  double f = x - (double)i;
  return i + (int64_t)(f >= 0.5) - (int64_t)(f <= -0.5);
}

// ---- Transfers ----
// A bandwidth resource (a DDR channel, a GB or LB port, a NoC link direction, a cluster link
// direction): it serves one chunk at a time; `free_at` is when it can start the next one.
// Times are fractional cycles so that chunk times that are not whole cycles do not round up
// one by one (a transfer's end is rounded up once).
struct BwResource {
  double bytes_per_cycle = 0;
  double free_at = 0;
  double busy = 0;       // cycles spent serving (for utilization; a flow adds its own as it ends)
  uint64_t bytes = 0;    // bytes served
  // the flow model's (flow.h): the slots of the flows on it now (in no order), and
  // FlowNet::share's scratch
  std::vector<int> fl_flows;
  double fl_used = 0, fl_weight = 0, fl_level = 0;
  double fl_load = 0;  // sum of u x service / full over its live flows
  uint64_t fl_stamp = 0;
  int fl_rising = 0;
  bool fl_dirty = false;  // fl_level is stale
  void reset() { free_at = 0; busy = 0; bytes = 0; fl_load = 0; fl_flows.clear(); }
};

// One use of a resource by a chunk: `bytes` of the chunk pass through `res`, which is also
// busy `extra` cycles moving no data (a DRAM channel's row misses, turnarounds, refresh).
// `dur` and `nbytes` are timing_bw_ready's.
struct BwUse {
  BwResource *res;
  double bytes;
  double extra = 0;
  double dur = 0;       // bytes / res->bytes_per_cycle + extra
  uint64_t nbytes = 0;  // bytes rounded to the nearest whole byte
};

// Fills u's dur and nbytes from its res, bytes and extra.
inline void timing_bw_ready(BwUse *u) {
  u->dur = u->bytes / u->res->bytes_per_cycle + u->extra;
  u->nbytes = (uint64_t)timing_llround(u->bytes);
}

// Reserves every resource of a chunk, each in its own turn, no earlier than `now`:
//   resource r serves it from s_r = max(now, free_at_r) for d_r = bytes_r / bw_r + extra_r,
//   end = max_r (s_r + d_r)   (the chunk has passed when its last resource has served it).
// A free resource does not stand idle until the others on the path are free too. Returns end;
// *start_out receives end - max_r d_r, so that start - now is what the chunk waited for busy
// resources. FIFO per resource: whoever reserves first goes first.
// The uses must be ready (timing_bw_ready: d_r is their dur): a transfer's chunks reuse its
// path's figures, where computing them per chunk was a division and a rounding per resource.
inline double timing_bw_reserve(const BwUse *uses, int nuses, double now, double *start_out) {
  double end = now, dur = 0;
  for (int i = 0; i < nuses; i++) {
    BwResource *r = uses[i].res;
    r->free_at = std::max(now, r->free_at) + uses[i].dur;
    end = std::max(end, r->free_at);
    dur = std::max(dur, uses[i].dur);
    r->busy += uses[i].dur;
    r->bytes += uses[i].nbytes;
  }
  if (start_out) *start_out = end - dur;
  return end;
}

// DDR address mapping: bytes of [addr, addr + len) per channel, channel = (addr / interleave)
// % channels, after rounding the access out to whole bursts (timing_burst_span: a partial
// burst costs a full one). Adds into per_channel[channels].
void timing_ddr_channel_bytes(int64_t addr, int64_t len, int interleave, int channels, int burst,
                              std::vector<double> &per_channel);

// DDR bytes per channel of a mov side's access pattern (GsAccess, unit_timing.h): each run of
// timing_ddr_runs (the whole pattern when its rows are contiguous, else every row) rounded out
// to whole bursts; the channels add up to timing_ddr_bytes.
void timing_ddr_pattern_bytes(const GsAccess &ap, int interleave, int channels, int burst,
                              std::vector<double> &per_channel);

// ---- DRAM efficiency (docs/timing.md, "DRAM efficiency") ----
// The DRAM figures of GsArch in chip cycles.
struct DramTiming {
  int64_t row_bytes = 0;      // row buffer of one bank, in the channel's own addresses
  int banks = 1;
  double miss = 0;            // tRP + tRCD
  double act = 0;             // activate to activate in another bank (<= miss)
  double channel_bpc = 1;     // one channel's bytes per cycle: how long a page's data streams
  double wtr = 0, rtw = 0;    // bus idle turning write->read, read->write
  double refresh = 1;         // tREFI / (tREFI - tRFC)
};
DramTiming timing_dram(const GsArch *a);

// One channel's row buffers and bus direction, and what it has counted since the reset.
struct DramChannel {
  std::vector<int64_t> open_row;  // per bank, -1: no row open
  int64_t page_lo = 0, page_hi = 0;  // the page entered last (open): accesses inside it hit
  int64_t page_bytes = 0;         // bytes streamed from it since it was entered
  int dir = 0;                    // the last transfer's direction: 0 none, 1 read, 2 write
  uint64_t bytes = 0, misses = 0, turnarounds = 0;  // bytes: whole bursts, so bytes / burst
  void reset(int banks);
};

// Walks one DDR side of a transfer (reads when !write) over the channels' DRAM state, in
// address order: every run of timing_ddr_runs rounded out to whole bursts, its bytes split by
// channel (as timing_ddr_pattern_bytes) and each channel's part by row. Mapping of an address
// A in channel c (channel = (A / il) mod nch): channel address CA = (A / (il·nch))·il + A mod
// il; page P = CA / row_bytes, bank = P mod banks, row = P / banks. Entering a page whose bank
// holds another row (or none) is a miss. Adds to penalty[c] the channel's non-data cycles:
//   per miss tRP + tRCD in the bank of the page entered last, else the activate interval
//   less what that page's bytes take to stream (never below 0); plus one turnaround if the
//   channel last went the other way,
// and bytes to bytes[c] (which then add up to timing_ddr_bytes). Refresh is not added here:
// it stretches all of a channel's time (DramTiming::refresh), data and penalties alike.
void timing_dram_side(const GsAccess &ap, int interleave, int channels, int burst,
                      const DramTiming &dt, bool write, std::vector<DramChannel> &st,
                      std::vector<double> &bytes, std::vector<double> &penalty);

// Ideal (uncontended) time of a transfer: latency + ceil(bytes / narrowest bandwidth).
int64_t timing_transfer_ideal(int64_t latency, double bytes, double narrowest_bytes_per_cycle);

#endif
