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
// Two representations, chosen by the number of program queues (reset), with the same answers:
// - Dense, below kSparseFrom queues: each clock is one epoch per queue, a token a copy of it,
//   a join one pass over it (vectorised). On `stcp920`'s 164 queues that is a few dozen
//   instructions.
// - Sparse, from kSparseFrom queues on: a clock is a shared base (an immutable vector of every
//   queue's epoch, held by reference) and the short sorted list of the entries where it is
//   ahead of its base. A barrier hands every queue it releases the same base, the join, and a
//   queue then learns of a few others only (those of its core), so a token and its join cost
//   that list; only a token on another base (one that crossed a barrier) is joined over all
//   queues. Dense clocks of IPU GC2's 7296 queues took 213 MB, and a 29 KB copy and join at
//   every signal and wait; lists of 20-48 entries cost more than dense joins on `stcp920`.
#ifndef GS_HB_H
#define GS_HB_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

class HbClocks {
 public:
  static const int kSparseFrom = 1024;
  // An immutable base, shared (one thread touches the clocks).
  using Base = std::shared_ptr<const std::vector<uint32_t>>;
  struct Entry {
    uint32_t p, e;  // component p (a dense queue index) is e
  };
  // A token or a barrier's join. Dense: `all`, one epoch per queue. Sparse: component p is the
  // entry for p in `ahead` (sorted by p, each above base[p]) when there is one, else base[p].
  struct Clock {
    std::vector<uint32_t> all;
    Base base;
    std::vector<Entry> ahead;
    void clear() {  // (the vectors keep their room)
      all.clear();
      base.reset();
      ahead.clear();
    }
    bool empty() const { return all.empty() && !base; }
  };

  // dense[slot]: the slot's index among the program's queues, -1 for a slot without one. The
  // sparse representation from sparse_from queues on (tests choose either).
  void reset(const std::vector<int> &dense, int nqueues, int sparse_from = kSparseFrom);
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
  void release(int q, Clock *token);
  // An acquire by q: C_q = max(C_q, token).
  void acquire(int q, const Clock &token);
  // A barrier arrival: *join = max(*join, C_q) (empty: none yet), then q's epoch advances.
  void arrive(int q, Clock *join);
  // The release of a barrier to q, which arrived at it and has done nothing since: C_q =
  // max(C_q, join), which is the join but for q's own epoch. (Sparse: the join is made the
  // base of every queue it releases, a copy on the first, so that they share one.)
  void barrier_acquire(int q, Clock *join);
  int nqueues() const { return n_; }

 private:
  // C_dq[dp], dense queue indices (the dense case inline: the checks ask it of every access)
  uint32_t at(int dq, int dp) const { return sparse_ ? sparse_at(dq, dp) : d_[(std::size_t)dq][(std::size_t)dp]; }
  uint32_t sparse_at(int dq, int dp) const;
  void merge(std::vector<Entry> *into, const std::vector<Entry> &from, int skip) const;
  void whole(const Clock &c, std::vector<uint32_t> *out) const;
  void rebase(Clock *c, const std::vector<uint32_t> &all);
  void take_own(int dq, Clock *c) const;
  void sparse_floor(std::vector<uint32_t> *f) const;

  int n_ = 0;
  bool sparse_ = false;
  std::vector<int> dense_;
  std::vector<std::vector<uint32_t>> d_;  // dense: C_q, its own epoch in it
  std::vector<Clock> c_;                  // sparse: C_q but for its own epoch, own_[q]
  std::vector<uint32_t> own_;
  std::vector<uint32_t> floor_;
  std::vector<char> done_;
  std::vector<uint32_t> scratch_, scratch2_;  // whole clocks being joined
};

using HbClock = HbClocks::Clock;

#endif
