// timing.cpp — the transfer formulas (docs/timing.md), pure functions of GsArch figures
// (the compute formulas and the DDR's burst rounding are sched/unit_timing.c).
// Invariant: no function here reads a clock or global state; the same inputs give the same
// cycles, so unit tests check them against hand calculations without the SystemC kernel.
#include "timing.h"

#include <algorithm>
#include <cmath>

double timing_bw_reserve(const BwUse *uses, int nuses, double now, double *start_out) {
  double start = now, dur = 0;
  for (int i = 0; i < nuses; i++) {
    start = std::max(start, uses[i].res->free_at);
    dur = std::max(dur, uses[i].bytes / uses[i].res->bytes_per_cycle);
  }
  for (int i = 0; i < nuses; i++) {
    BwResource *r = uses[i].res;
    double d = uses[i].bytes / r->bytes_per_cycle;
    r->free_at = start + d;
    r->busy += d;
    r->bytes += (uint64_t)std::llround(uses[i].bytes);
  }
  if (start_out) *start_out = start;
  return start + dur;
}

void timing_ddr_channel_bytes(int64_t addr, int64_t len, int interleave, int channels, int burst,
                              std::vector<double> &per_channel) {
  if (len <= 0) return;
  int64_t lo, hi;
  timing_burst_span(addr, len, burst, &lo, &hi);
  int64_t il = interleave > 0 ? interleave : hi - lo;
  if (channels <= 1) {
    per_channel[0] += (double)(hi - lo);
    return;
  }
  // One pass per interleave segment; a transfer of B bytes touches B / interleave + 2 of them.
  for (int64_t a = lo; a < hi;) {
    int64_t seg_end = std::min(hi, (a / il + 1) * il);
    per_channel[(size_t)((a / il) % channels)] += (double)(seg_end - a);
    a = seg_end;
  }
}

void timing_ddr_pattern_bytes(const GsAccess &ap, int interleave, int channels, int burst,
                              std::vector<double> &per_channel) {
  GsAccess r = timing_ddr_runs(&ap);
  for (int64_t p = 0; p < r.planes; p++)
    for (int64_t i = 0; i < r.rows; i++)
      timing_ddr_channel_bytes(r.base + p * r.plane_stride + i * r.row_stride, r.row_bytes,
                               interleave, channels, burst, per_channel);
}

int64_t timing_transfer_ideal(int64_t latency, double bytes, double narrowest_bytes_per_cycle) {
  return latency + (int64_t)std::ceil(bytes / narrowest_bytes_per_cycle - 1e-9);
}
