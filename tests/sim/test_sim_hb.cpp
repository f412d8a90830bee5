// test_sim_hb.cpp — the happens-before clocks (sim/hb.h), in both representations, against dense
// vector clocks written out here from hb.h's definitions (one epoch per queue in every queue's
// clock: a release copies the releaser's clock into a token and advances its epoch, an acquire
// takes the larger of each pair, a barrier joins its arrivals' clocks and hands the join to
// each, the floor is the least of the running queues' clocks). Random runs: signals and waits
// through FIFO token queues that outlive barriers, barriers of random sets of queues with other
// queues working between the arrivals and the releases, queues that join no barrier, retired
// queues, and slots without a queue. After every step every epoch hb.h answers is compared with
// the dense clocks'.
#include <deque>
#include <string>
#include <vector>

#include "hb.h"
#include "simtest.h"
extern "C" {
#include "../unit/rng_testlib.h"
}

namespace {

using Dense = std::vector<uint32_t>;

struct Ref {  // the definitions, dense
  std::vector<Dense> c;
  std::vector<uint32_t> floor;
  std::vector<char> done;
  explicit Ref(int n) : c((size_t)n, Dense((size_t)n, 0)), floor((size_t)n, 0), done((size_t)n, 0) {
    for (int i = 0; i < n; i++) c[(size_t)i][(size_t)i] = 1;
  }
  Dense release(int q) {
    Dense t = c[(size_t)q];
    c[(size_t)q][(size_t)q]++;
    return t;
  }
  void acquire(int q, const Dense &t) {
    for (size_t p = 0; p < t.size(); p++) c[(size_t)q][p] = std::max(c[(size_t)q][p], t[p]);
  }
  void update_floor() {
    for (size_t p = 0; p < c.size(); p++) {
      uint32_t f = UINT32_MAX;
      for (size_t q = 0; q < c.size(); q++)
        if (!done[q]) f = std::min(f, c[q][p]);
      floor[p] = std::max(floor[p], f == UINT32_MAX ? 0 : f);
    }
  }
};

struct Run {
  Rng rng;
  int n, slots;
  std::vector<int> dense, slot_of;
  HbClocks hb;
  Ref ref;
  // token queues: a flag of its owner (the queue that waits), released by any queue
  struct Chan {
    int owner;
    std::deque<HbClock> mine;
    std::deque<Dense> theirs;
  };
  std::vector<Chan> chans;
  std::vector<char> busy;  // waiting at a barrier: does nothing until released
  std::vector<char> in_barriers;  // joins barriers (the others never do)

  Run(uint64_t seed, int nq, bool sparse) : rng{seed}, n(nq), ref(nq) {
    slots = n + (int)(rnd(&rng) % 4);
    dense.assign((size_t)slots, -1);
    for (int s = 0, d = 0; s < slots; s++)  // the slots without a queue fall anywhere
      if (d < n && (slots - s == n - d || rnd(&rng) % 4 != 0)) {
        dense[(size_t)s] = d++;
        slot_of.push_back(s);
      }
    hb.reset(dense, n, sparse ? 0 : n + 1);
    int nc = 1 + (int)(rnd(&rng) % (size_t)(2 * n));
    for (int k = 0; k < nc; k++) chans.push_back(Chan{(int)(rnd(&rng) % (size_t)n), {}, {}});
    busy.assign((size_t)n, 0);
    in_barriers.assign((size_t)n, 1);
    for (int q = 0; q < n; q++)
      if (rnd(&rng) % 5 == 0) in_barriers[(size_t)q] = 0;
  }

  void compare(const char *after) {
    for (int s = 0; s < slots; s++) {
      int dq = dense[(size_t)s];
      assert_int_equal(hb.epoch(s), dq < 0 ? 0 : ref.c[(size_t)dq][(size_t)dq]);
      assert_int_equal(hb.floor(s), dq < 0 ? 0 : ref.floor[(size_t)dq]);
      for (int t = 0; t < slots; t++) {
        int dp = dense[(size_t)t];
        uint32_t want = dq < 0 || dp < 0 ? 0 : ref.c[(size_t)dq][(size_t)dp];
        if (hb.known(s, t) != want) fail_msg("after %s: C_%d[%d] = %u, dense %u", after, s, t, hb.known(s, t), want);
        if (dq >= 0 && dp >= 0 && s != t) {
          assert_true(hb.ordered(t, want, s));
          assert_false(hb.ordered(t, want + 1, s));
        }
      }
    }
  }

  bool can_work(int q) const { return !busy[(size_t)q] && !ref.done[(size_t)q]; }
  int pick() { return (int)(rnd(&rng) % (size_t)n); }

  // one signal or wait by a queue that is free to work (not at a barrier, not retired)
  void work() {
    int q = pick();
    if (!can_work(q)) return;
    Chan &ch = chans[rnd(&rng) % chans.size()];
    if (ch.owner == q && !ch.mine.empty() && rnd(&rng) % 2 == 0) {
      hb.acquire(slot_of[(size_t)q], ch.mine.front());
      ref.acquire(q, ch.theirs.front());
      ch.mine.pop_front();
      ch.theirs.pop_front();
      compare("an acquire");
    } else {
      ch.mine.emplace_back();
      hb.release(slot_of[(size_t)q], &ch.mine.back());
      ch.theirs.push_back(ref.release(q));
      compare("a release");
    }
  }

  // a barrier of some of the queues that join barriers, others working meanwhile
  void barrier(bool chip) {
    std::vector<int> who;
    for (int q = 0; q < n; q++)
      if (can_work(q) && in_barriers[(size_t)q] && (chip || rnd(&rng) % 2 == 0)) who.push_back(q);
    if (who.empty()) return;
    for (size_t i = who.size(); i > 1; i--) std::swap(who[i - 1], who[rnd(&rng) % i]);
    HbClock join;
    Dense rj((size_t)n, 0);
    for (int q : who) {
      hb.arrive(slot_of[(size_t)q], &join);
      for (int p = 0; p < n; p++) rj[(size_t)p] = std::max(rj[(size_t)p], ref.c[(size_t)q][(size_t)p]);
      ref.c[(size_t)q][(size_t)q]++;
      busy[(size_t)q] = 1;
      compare("an arrival");
      for (int k = (int)(rnd(&rng) % 3); k > 0; k--) work();
    }
    for (size_t i = who.size(); i > 1; i--) std::swap(who[i - 1], who[rnd(&rng) % i]);
    for (int q : who) {
      hb.barrier_acquire(slot_of[(size_t)q], &join);
      ref.acquire(q, rj);
      busy[(size_t)q] = 0;
      compare("a barrier's release");
      for (int k = (int)(rnd(&rng) % 3); k > 0; k--) work();
    }
    if (chip) {
      hb.update_floor();
      ref.update_floor();
      compare("the floor");
    }
  }

  void step() {
    uint64_t r = rnd(&rng) % 100;
    if (r < 80) {
      work();
    } else if (r < 95) {
      barrier(r < 88);
    } else if (r == 99) {
      int q = pick();
      if (can_work(q)) {
        hb.retire(slot_of[(size_t)q]);
        ref.done[(size_t)q] = 1;
      }
    } else {
      hb.update_floor();
      ref.update_floor();
      compare("the floor");
    }
  }
};

}  // namespace

// Many small machines, a few steps each, and a few larger ones run longer, with each of the
// two representations (hb.h; the sparse one's entries grow until a barrier or a long list
// gives a clock a base of its own).
static void clocks_match_dense(bool sparse) {
  for (uint64_t seed = 1; seed <= 300; seed++) {
    Run r(seed * 0x9e3779b97f4a7c15ull, 1 + (int)(seed % 12), sparse);
    for (int i = 0; i < 200; i++) r.step();
  }
  for (uint64_t seed = 1; seed <= 3; seed++) {
    Run r(seed * 0xbf58476d1ce4e5b9ull, 30 + (int)(seed * 10), sparse);
    for (int i = 0; i < 600; i++) r.step();
  }
}
static void dense_clocks(void **) { clocks_match_dense(false); }
static void sparse_clocks(void **) { clocks_match_dense(true); }

int sc_main(int, char **) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(dense_clocks),
      cmocka_unit_test(sparse_clocks),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
