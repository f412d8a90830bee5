// wakeups.h — the model's timed wake-ups (a queue's end of a compute instruction or of a
// transfer chunk, the next flow's end) in one heap of its own: plain C++, no SystemC kernel.
//
// Why: a queue that slept with a timed notification put one entry on the kernel's heap of timed
// events, whose comparisons go through a function pointer to events scattered in memory (9% of
// a run on stcp920), and was then dispatched as a process of its own. Here the entries are 16
// bytes side by side, compared inline; the kernel holds one notification, for the earliest, and
// SimModel::timer_step runs the queues due from it.
// Contract: entries come out in exactly the order the kernel's heap (sc_ppq_base: a binary
// max-heap, 1-indexed, after Cormen-Leiserson-Rivest, "larger" meaning earlier) gives its
// notifications, ties included, for the same sequence of inserts and extractions. Same-instant
// wake-ups decide who takes a shared port first, so this keeps every cycle count of a run as it
// was with the kernel's heap; tests/sim/test_sim_timing.cpp checks the order against
// sc_ppq_base itself. A cancelled entry stays in the heap, as the kernel's do, and is dropped
// from the top when time advances, where the kernel drops its own (SimModel::timer_step).
#ifndef GS_WAKEUPS_H
#define GS_WAKEUPS_H

#include <cstdint>
#include <vector>

struct Wakeup {
  uint64_t t;   // SystemC time (ps)
  int64_t who;  // >= 0: a queue slot; < 0: the flow model's entry -1 - token (SimModel)
};

class Wakeups {
 public:
  bool empty() const { return heap_.size() == 2; }
  size_t size() const { return heap_.size() - 2; }
  const Wakeup &top() const { return heap_[1]; }
  void clear() { heap_.resize(2); }

  void insert(Wakeup e) {
    size_t i = heap_.size() - 1;  // the end's place
    heap_.push_back(kEnd);
    while (i > 1 && heap_[i / 2].t > e.t) {  // the parent is later: it moves down
      heap_[i] = heap_[i / 2];
      i /= 2;
    }
    heap_[i] = e;
  }

  Wakeup extract_top() {
    Wakeup top = heap_[1];
    heap_.pop_back();  // the end
    heap_[1] = heap_.back();
    heap_.back() = kEnd;
    sift_down(1);
    return top;
  }

 private:
  // As the kernel's: the earlier child replaces the parent only when strictly earlier, and the
  // right child only when strictly earlier than the winner so far. That is: along the path of
  // earlier children from i (the right one when strictly earlier than the left: on a tie both
  // have the winner's time), whose times only grow, every entry strictly earlier than e moves
  // up a level, and e takes the place of the first that is not. Found here as Floyd does: every
  // entry of the path moves up, down to the last level, then those that are not strictly earlier
  // than e move back down from the bottom, where e (the heap's last entry) usually belongs. Each
  // level down is then a comparison of two children and no test of e, whose outcome would be a
  // branch to mispredict. A missing right child is the end, never earlier.
  // test_sim_timing's wakeups_as_kernel_heap checks the order against the kernel's heap.
  void sift_down(size_t from) {
    size_t n = heap_.size() - 2, i = from;
    Wakeup *h = heap_.data();
    const Wakeup e = h[i];
    for (size_t l; (l = 2 * i) <= n;) {
      size_t c = l + (size_t)(h[l + 1].t < h[l].t);
      h[i] = h[c];
      i = c;
    }
    for (; i > from && h[i / 2].t >= e.t; i /= 2) h[i] = h[i / 2];
    h[i] = e;
  }

  // [0] unused: the heap is 1-indexed. Its last slot holds kEnd, later than any entry, so that
  // the last entry's missing right child needs no test.
  static constexpr Wakeup kEnd{UINT64_MAX, 0};
  std::vector<Wakeup> heap_{Wakeup{0, 0}, kEnd};
};

#endif
