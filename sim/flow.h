// flow.h — the flow-level transfer model (chip.transfer_model = flow): plain C++, no SystemC
// kernel, so unit tests drive it with known inputs; docs/timing.md, "Flows", derives it.
//
// A transfer is one flow over the bandwidth resources of its path (DDR channels, GB/LB ports,
// NoC and cluster links). On each resource it needs `service` cycles of that resource's time
// uncontended (its bytes there / the bandwidth, plus a DRAM channel's penalty cycles), so alone
// it takes T = max over its resources of service: the same as the chunk model uncontended.
// Several flows on a resource share it: rates follow max-min fairness over u = the fraction of
// its own full speed a flow gets (rate = u / T of the transfer per cycle), found by progressive
// filling: every flow's u rises together; a resource whose sum of u·service/T reaches 1 holds
// its flows' u there; the others rise on, to 1 at most. Rates change only when a flow starts or
// ends, so a transfer costs two events, not one per chunk. Invariants: a resource never serves
// more than one cycle of work per cycle; a flow alone on its path runs at full speed (u = 1);
// flows are kept and shared in slot order, so equal inputs give equal times (deterministic).
// Cost: a share visits every live flow's uses once, and in each of its rounds only the
// resources that can fill (those whose flows together need more than all of it at full speed:
// mostly the DDR channels and GB ports; a core's own port or link never bounds its one flow).
#ifndef GS_FLOW_H
#define GS_FLOW_H

#include <cstdint>
#include <vector>

#include "timing.h"

// One resource of a flow's path and the cycles of its time the whole transfer needs (from a
// BwUse: bytes / bandwidth + extra).
struct FlowUse {
  BwResource *res;
  double bytes;    // for the resource's statistics
  double service;  // bytes / bandwidth (+ DRAM penalty cycles)
  double w = 0;    // service / the flow's full: its load on the resource per unit of u
};

struct Flow {
  std::vector<FlowUse> uses;
  double full = 0;     // T: cycles alone (max service)
  double left = 1;     // fraction of the transfer not moved yet
  double u = 0;        // the fraction of its full speed it gets now
  double rate = 0;     // fraction per cycle now: u / full
  double end_at = 0;   // when it ends at the current rates
  int owner = -1;      // the queue slot that waits for it
  bool live = false;
  bool rising = false;  // share's: its u not fixed yet
};

class FlowNet {
 public:
  // Drops every flow; time starts at `now`.
  void reset(double now);
  // At time now (>= the last call's): moves every flow on to now, adds a flow over uses[0..n)
  // owned by `owner`, and shares the resources again (not needed when it fits at full speed
  // beside the others at their rates: fits()). Returns its slot. T > 0.
  int add(double now, int owner, const BwUse *uses, int n);
  // At time now: moves every flow on, ends those due by now (their owners into *done, in
  // slot order), shares again if that can change any rate (a flow held back, and an ended one
  // used a full resource). Returns the time the next flow ends
  // (+inf: none live).
  double step(double now, std::vector<int> *done);
  // The time the next live flow ends (+inf: none).
  double next_end() const;
  const Flow &flow(int slot) const { return flows_[(size_t)slot]; }

 private:
  void advance(double now);
  void share();
  bool fits(const Flow &f) const;
  int throttled_ = 0;                         // live flows below full speed
  std::vector<Flow> flows_;
  std::vector<int> free_;
  std::vector<int> live_;                     // the live flows' slots, in slot order
  std::vector<int> held_;                     // share's: the slots a round holds
  std::vector<BwResource *> res_;             // share's: the resources of the live flows
  std::vector<BwResource *> act_;             // share's: those that can fill, flows rising
  uint64_t stamp_ = 0;                        // share's call count (BwResource::fl_stamp)
  double now_ = 0;
};

#endif
