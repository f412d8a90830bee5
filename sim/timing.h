// timing.h — the timing formulas of the model as plain functions (no SystemC kernel), so unit
// tests call them with known inputs. Every figure comes from GsArch; docs/timing.md derives
// each formula. All results are in cycles of the chip clock.
#ifndef GS_TIMING_H
#define GS_TIMING_H

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

// ---- Transfers ----
// A bandwidth resource (a DDR channel, a GB or LB port, a NoC link direction, a cluster link
// direction): it serves one chunk at a time; `free_at` is when it can start the next one.
// Times are fractional cycles so that chunk times that are not whole cycles do not round up
// one by one (a transfer's end is rounded up once).
struct BwResource {
  double bytes_per_cycle = 0;
  double free_at = 0;
  double busy = 0;       // cycles spent serving chunks (for utilization)
  uint64_t bytes = 0;    // bytes served
  void reset() { free_at = 0; busy = 0; bytes = 0; }
};

// One use of a resource by a chunk: `bytes` of the chunk pass through `res`.
struct BwUse {
  BwResource *res;
  double bytes;
};

// Reserves every resource of a chunk at once, starting no earlier than `now`:
//   start = max(now, max_r free_at_r),   each r busy for bytes_r / bw_r from start,
//   end = start + max_r bytes_r / bw_r   (the chunk moves at the pace of its slowest resource).
// Returns end; *start_out receives start. FIFO: whoever reserves first goes first.
double timing_bw_reserve(const BwUse *uses, int nuses, double now, double *start_out);

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

// Ideal (uncontended) time of a transfer: latency + ceil(bytes / narrowest bandwidth).
int64_t timing_transfer_ideal(int64_t latency, double bytes, double narrowest_bytes_per_cycle);

#endif
