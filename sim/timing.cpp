// timing.cpp — the transfer formulas (docs/timing.md), pure functions of GtArch figures
// (the compute formulas are sched/unit_timing.c).
// Invariant: no function here reads a clock or global state; the same inputs give the same
// cycles, so unit tests check them against hand calculations without the SystemC kernel.
#include "timing.h"

#include <algorithm>
#include <cmath>

static int64_t cdiv(int64_t a, int64_t b) { return b <= 0 ? 0 : (a + b - 1) / b; }

double bw_reserve(const BwUse *uses, int nuses, double now, double *start_out) {
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

void ddr_channel_bytes(int64_t addr, int64_t len, int interleave, int channels, int burst,
                       std::vector<double> &per_channel) {
  if (len <= 0) return;
  int64_t lo = addr, hi = addr + len;
  if (burst > 1) {
    lo = addr / burst * burst;
    hi = cdiv(addr + len, burst) * burst;
  }
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

int64_t AccessPattern::extent() const {
  return base + (planes - 1) * plane_stride + (rows - 1) * row_stride + row_bytes;
}

void ddr_pattern_bytes(const AccessPattern &ap, int interleave, int channels, int burst,
                       std::vector<double> &per_channel) {
  if (ap.rows <= 1 && ap.planes <= 1) {
    ddr_channel_bytes(ap.base, ap.row_bytes, interleave, channels, burst, per_channel);
    return;
  }
  // Rows that follow each other without a gap form one contiguous run.
  if (ap.row_stride == ap.row_bytes && (ap.planes <= 1 || ap.plane_stride == ap.rows * ap.row_bytes)) {
    ddr_channel_bytes(ap.base, ap.row_bytes * ap.rows * ap.planes, interleave, channels, burst,
                      per_channel);
    return;
  }
  for (int64_t p = 0; p < ap.planes; p++)
    for (int64_t r = 0; r < ap.rows; r++)
      ddr_channel_bytes(ap.base + p * ap.plane_stride + r * ap.row_stride, ap.row_bytes,
                        interleave, channels, burst, per_channel);
}

int64_t timing_transfer_ideal(int64_t latency, double bytes, double narrowest_bytes_per_cycle) {
  return latency + (int64_t)std::ceil(bytes / narrowest_bytes_per_cycle - 1e-9);
}
