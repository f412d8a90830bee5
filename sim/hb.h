// hb.h — happens-before between the queues of a run: vector clocks (plain C++, no SystemC).
//
// Every queue of the program has a clock C_q: one epoch per queue. C_q[q] is q's own epoch,
// which a release (signal, sempost, barrier arrival) hands on and then advances; C_q[p] is the
// latest epoch of p that q is ordered after. An access by queue p at epoch e happens before the
// current point of queue q iff p == q (queue order) or C_q[p] >= e. Flags and semaphores carry
// tokens: each signal/post pushes a copy of the releasing queue's clock, each wait/semwait that
// consumes a count pops the oldest token and joins it (FIFO: the k-th consumption is ordered
// after the k-th release — one legitimate matching, so a program correct under every timing is
// never reported). A barrier joins the clocks of all arrivals and hands the join to each.
// (The algorithm of ThreadSanitizer v2 and FastTrack, Flanagan & Freund, PLDI 2009.)
//
// Queues are identified by their model slot; only slots with a program queue have a clock, so
// the clocks take (program queues)^2 epochs (672 queues: 1.8 MB).
#ifndef GS_HB_H
#define GS_HB_H

#include <cstdint>
#include <vector>

using HbClock = std::vector<uint32_t>;

class HbClocks {
 public:
  // dense[slot]: the slot's index among the program's queues, -1 for a slot without one.
  void reset(const std::vector<int> &dense, int nqueues);
  // The current epoch of slot q (0 for a slot without a program queue).
  uint32_t epoch(int q) const;
  // Does the access of slot p at epoch e happen before the current point of slot q?
  bool ordered(int p, uint32_t e, int q) const;
  // C_q[p]: the latest epoch of slot p that slot q is ordered after.
  uint32_t known(int q, int p) const;
  // Every queue still running is ordered after slot p's accesses at epochs <= floor(p) (as of
  // the last update_floor(): the model calls it when a chip barrier completes).
  uint32_t floor(int p) const;
  void update_floor();
  // Slot q has executed its last instruction: it accesses nothing any more.
  void retire(int q);
  // A release by q: *token = C_q, then q's epoch advances.
  void release(int q, HbClock *token);
  // An acquire by q: C_q = max(C_q, token).
  void acquire(int q, const HbClock &token);
  // A barrier arrival: *join = max(*join, C_q) (sized on first use), then q's epoch advances.
  void arrive(int q, HbClock *join);
  int nqueues() const { return n_; }

 private:
  int n_ = 0;
  std::vector<int> dense_;
  std::vector<HbClock> c_;
  std::vector<uint32_t> floor_;
  std::vector<char> done_;
};

#endif
