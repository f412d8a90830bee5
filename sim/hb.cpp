// hb.cpp — the vector clocks of hb.h, dense or sparse.
// Invariants: a queue's own epoch is >= 1 (so epoch 0 means "never"), and every component of a
// clock only grows. Sparse: a clock's entries are sorted by queue and each is above its base's
// component; a queue's clock has no entry for itself (its epoch is own_[q], never below its
// base's component). Epochs advance once per release, so they stay below the number of
// instructions of a queue (a queue of 2^32 instructions would take 480 GB as a program; it is
// checked anyway).
#include "hb.h"

#include <algorithm>

extern "C" {
#include "util.h"
}

// A sparse clock with more entries than this gets a base of its own (its entries folded in): a
// queue that learns of many others without a barrier (a cluster DMA queue serving every core)
// would otherwise copy a long list at every signal.
static const size_t kMaxAhead = 48;

void HbClocks::reset(const std::vector<int> &dense, int nqueues, int sparse_from) {
  dense_ = dense;
  n_ = nqueues;
  sparse_ = nqueues >= sparse_from;
  floor_.assign((size_t)nqueues, 0);
  done_.assign((size_t)nqueues, 0);
  d_.clear();
  c_.clear();
  own_.clear();
  if (!sparse_) {
    d_.assign((size_t)nqueues, std::vector<uint32_t>((size_t)nqueues, 0));
    for (int i = 0; i < nqueues; i++) d_[(size_t)i][(size_t)i] = 1;
    return;
  }
  Base z = std::make_shared<const std::vector<uint32_t>>((size_t)nqueues, 0);
  c_.assign((size_t)nqueues, Clock());
  for (Clock &c : c_) c.base = z;
  own_.assign((size_t)nqueues, 1);
}

uint32_t HbClocks::sparse_at(int dq, int dp) const {
  if (dq == dp) return own_[(size_t)dq];
  const Clock &c = c_[(size_t)dq];
  for (const Entry &x : c.ahead) {
    if (x.p < (uint32_t)dp) continue;
    if (x.p == (uint32_t)dp) return x.e;
    break;
  }
  return (*c.base)[(size_t)dp];
}

uint32_t HbClocks::epoch(int q) const {
  int d = dense_[(size_t)q];
  return d < 0 ? 0 : at(d, d);
}

bool HbClocks::ordered(int p, uint32_t e, int q) const {
  if (p == q) return true;
  int dp = dense_[(size_t)p], dq = dense_[(size_t)q];
  return dp >= 0 && dq >= 0 && at(dq, dp) >= e;
}

uint32_t HbClocks::known(int q, int p) const {
  int dp = dense_[(size_t)p], dq = dense_[(size_t)q];
  return dp >= 0 && dq >= 0 ? at(dq, dp) : 0;
}

// c = max(c, t) entry by entry: a dense wait joins one clock per flag it consumes, nearly one
// per instruction, over every queue of the program. Vectorised (the Makefile builds this file
// with -fvect-cost-model=dynamic; -O2's cheapest model leaves a loop of unknown length scalar):
// simulations on stcp920 (164 queues) run 2-4% faster (ResNet-50 tvm at batch 16, ViT-B/16 tvm
// at batch 4: medians of five alternating pairs). On x86-64 a second version for AVX2 is picked
// at load time where the CPU has it: the baseline (SSE2) has no unsigned 32-bit maximum and
// emulates one in six instructions per four entries (ResNet-50 tvm at batch 4 on stcp920, the
// checks inline: the joins took 168 M of 4.67 G instructions, 47 M with AVX2; callgrind).
GS_AVX2_CLONES
static void join_max(uint32_t *__restrict c, const uint32_t *__restrict t, size_t n) {
  for (size_t i = 0; i < n; i++) c[i] = std::max(c[i], t[i]);
}

// ---- sparse clocks' pieces ----

// *into = the larger of *into and `from` entry by entry (both sorted, on the same base),
// leaving out queue `skip` (-1: none).
void HbClocks::merge(std::vector<Entry> *into, const std::vector<Entry> &from, int skip) const {
  std::vector<Entry> &a = *into;
  size_t i = 0;
  for (const Entry &x : from) {
    if (x.p == (uint32_t)skip) continue;
    while (i < a.size() && a[i].p < x.p) i++;
    if (i < a.size() && a[i].p == x.p) a[i].e = std::max(a[i].e, x.e);
    else a.insert(a.begin() + (ptrdiff_t)i, x);
    i++;
  }
}

// The whole sparse clock c, one epoch per queue.
void HbClocks::whole(const Clock &c, std::vector<uint32_t> *out) const {
  *out = *c.base;
  for (const Entry &x : c.ahead) (*out)[x.p] = x.e;
}

// c becomes the clock `all` on a base of its own.
void HbClocks::rebase(Clock *c, const std::vector<uint32_t> &all) {
  c->base = std::make_shared<const std::vector<uint32_t>>(all);
  c->ahead.clear();
}

// *c = C_q of dense queue dq, its own epoch among the entries.
void HbClocks::take_own(int dq, Clock *c) const {
  const Clock &q = c_[(size_t)dq];
  c->base = q.base;
  c->ahead = q.ahead;
  uint32_t own = own_[(size_t)dq];
  if (own <= (*q.base)[(size_t)dq]) return;
  auto it = std::lower_bound(c->ahead.begin(), c->ahead.end(), (uint32_t)dq,
                             [](const Entry &x, uint32_t p) { return x.p < p; });
  c->ahead.insert(it, Entry{(uint32_t)dq, own});
}

// ---- the operations ----

void HbClocks::release(int q, Clock *token) {
  size_t d = (size_t)dense_[(size_t)q];
  uint32_t &own = sparse_ ? own_[d] : d_[d][d];
  if (sparse_) take_own((int)d, token);
  else token->all = d_[d];
  gs_assert(own < UINT32_MAX);
  own++;
}

void HbClocks::acquire(int q, const Clock &token) {
  int d = dense_[(size_t)q];
  gs_assert(!token.empty());
  if (!sparse_) {
    std::vector<uint32_t> &c = d_[(size_t)d];
    gs_assert(token.all.size() == c.size() && &token.all != &c);
    join_max(c.data(), token.all.data(), c.size());
    return;
  }
  Clock &c = c_[(size_t)d];
  gs_assert(&token != &c);
  if (token.base == c.base) {
    merge(&c.ahead, token.ahead, d);
    if (c.ahead.size() <= kMaxAhead) return;
    whole(c, &scratch_);
  } else {  // another base: whole clocks
    whole(c, &scratch_);
    whole(token, &scratch2_);
    join_max(scratch_.data(), scratch2_.data(), (size_t)n_);
  }
  rebase(&c, scratch_);
}

void HbClocks::arrive(int q, Clock *join) {
  size_t d = (size_t)dense_[(size_t)q];
  if (!sparse_) {
    if (join->all.empty()) join->all.assign((size_t)n_, 0);
    join_max(join->all.data(), d_[d].data(), (size_t)n_);
    gs_assert(d_[d][d] < UINT32_MAX);
    d_[d][d]++;
    return;
  }
  Clock mine;
  take_own((int)d, &mine);
  if (join->empty()) {
    *join = std::move(mine);
  } else if (join->base == mine.base) {
    merge(&join->ahead, mine.ahead, -1);
  } else {
    whole(*join, &scratch_);
    whole(mine, &scratch2_);
    join_max(scratch_.data(), scratch2_.data(), (size_t)n_);
    rebase(join, scratch_);
  }
  if (join->ahead.size() > kMaxAhead) {
    whole(*join, &scratch_);
    rebase(join, scratch_);
  }
  gs_assert(own_[d] < UINT32_MAX);
  own_[d]++;
}

// Sparse: q's clock was part of the join when it arrived, and only its own epoch has moved
// since, so the join as a base without entries is its clock. The first release makes the join
// so (one copy per barrier), and every queue it releases shares it.
void HbClocks::barrier_acquire(int q, Clock *join) {
  if (!sparse_) return acquire(q, *join);
  int d = dense_[(size_t)q];
  Clock &c = c_[(size_t)d];
  gs_assert(!join->empty());
  if (!join->ahead.empty()) {
    whole(*join, &scratch_);
    rebase(join, scratch_);
  }
  for (const Entry &x : c.ahead) gs_assert(x.e <= (*join->base)[x.p]);  // (it arrived)
  c.base = join->base;
  c.ahead.clear();
}

uint32_t HbClocks::floor(int p) const {
  int d = dense_[(size_t)p];
  return d < 0 ? 0 : floor_[(size_t)d];
}

// The least C_q[p] over the running queues q, sparse: the queues sharing a base are taken
// together; their least is the base's component unless each of them is ahead of it there (or
// is p itself, whose own epoch is never below it), which is then looked at one by one.
void HbClocks::sparse_floor(std::vector<uint32_t> *f) const {
  std::vector<std::pair<const std::vector<uint32_t> *, int>> by_base;
  for (int q = 0; q < n_; q++)
    if (!done_[(size_t)q]) by_base.push_back({c_[(size_t)q].base.get(), q});
  std::sort(by_base.begin(), by_base.end());
  std::vector<uint32_t> ahead_of((size_t)n_);
  std::vector<char> member((size_t)n_);
  for (size_t g = 0, h; g < by_base.size(); g = h) {
    for (h = g; h < by_base.size() && by_base[h].first == by_base[g].first;) h++;
    const std::vector<uint32_t> &b = *by_base[g].first;
    std::fill(ahead_of.begin(), ahead_of.end(), 0);
    for (size_t k = g; k < h; k++) {
      int q = by_base[k].second;
      member[(size_t)q] = 1;
      for (const Entry &x : c_[(size_t)q].ahead) ahead_of[x.p]++;
    }
    for (size_t p = 0; p < (size_t)n_; p++) {
      if (h - g > ahead_of[p] + (size_t)member[p]) {
        (*f)[p] = std::min((*f)[p], b[p]);
        continue;
      }
      for (size_t k = g; k < h; k++) (*f)[p] = std::min((*f)[p], at(by_base[k].second, (int)p));
    }
    for (size_t k = g; k < h; k++) member[(size_t)by_base[k].second] = 0;
  }
}

// Once per chip barrier episode: O(queues^2) dense, O(queues x bases + entries) sparse.
void HbClocks::update_floor() {
  std::vector<uint32_t> f((size_t)n_, UINT32_MAX);
  if (sparse_) {
    sparse_floor(&f);
  } else {
    for (size_t q = 0; q < (size_t)n_; q++) {
      if (done_[q]) continue;
      for (size_t p = 0; p < (size_t)n_; p++) f[p] = std::min(f[p], d_[q][p]);
    }
  }
  for (size_t p = 0; p < (size_t)n_; p++) floor_[p] = std::max(floor_[p], f[p] == UINT32_MAX ? 0 : f[p]);
}

void HbClocks::retire(int q) {
  int d = dense_[(size_t)q];
  if (d >= 0) done_[(size_t)d] = 1;
}
