// actions.h — action counting for energy (sim/actions.cpp): what every completed instruction
// did, by unit kind and memory level. Internal to sim/.
#ifndef GS_ACTIONS_H
#define GS_ACTIONS_H

#include "memory.h"
#include "sim.h"

// A transfer of `bytes` from src to dst (over a core's interconnect link when noc, between
// clusters when xcluster).
void actions_transfer(GsActions *x, const GsArch *a, const Buffer &src, const Buffer &dst,
                      bool noc, bool xcluster, double bytes);
// A gemm, vec or scalar instruction on unit kind `unit_kind` of core `core` (index in its
// cluster), which read and wrote these operand bytes in the buffer its unit reaches.
void actions_compute(GsActions *x, const GsArch *a, int unit_kind, int core, const GsInst &in,
                     double read_bytes, double write_bytes);
// The counts as stats "actions.*"; with an [energy] section, their energy as "energy.*".
void actions_register_stats(const GsArch *a, const GsActions &x, double seconds, SimStats &st);

#endif
