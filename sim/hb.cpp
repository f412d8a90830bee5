// hb.cpp — the vector clocks of hb.h.
// Invariant: C_q[q] >= 1 for every program queue (so epoch 0 means "never"), and C_q only grows.
// Epochs advance once per release, so they stay below the number of instructions of a queue
// (a queue of 2^32 instructions would take 480 GB as a program; it is checked anyway).
#include "hb.h"

#include <algorithm>

extern "C" {
#include "util.h"
}

void HbClocks::reset(const std::vector<int> &dense, int nqueues) {
  dense_ = dense;
  n_ = nqueues;
  c_.assign((size_t)nqueues, HbClock());
  floor_.assign((size_t)nqueues, 0);
  done_.assign((size_t)nqueues, 0);
  for (int i = 0; i < nqueues; i++) {
    c_[(size_t)i].assign((size_t)nqueues, 0);
    c_[(size_t)i][(size_t)i] = 1;
  }
}

uint32_t HbClocks::epoch(int q) const {
  int d = dense_[(size_t)q];
  return d < 0 ? 0 : c_[(size_t)d][(size_t)d];
}

bool HbClocks::ordered(int p, uint32_t e, int q) const {
  if (p == q) return true;
  int dp = dense_[(size_t)p], dq = dense_[(size_t)q];
  return dp >= 0 && dq >= 0 && c_[(size_t)dq][(size_t)dp] >= e;
}

void HbClocks::release(int q, HbClock *token) {
  size_t d = (size_t)dense_[(size_t)q];
  *token = c_[d];
  gs_assert(c_[d][d] < UINT32_MAX);
  c_[d][d]++;
}

// c = max(c, t) entry by entry: a wait joins one clock per flag it consumes, nearly one per
// instruction, over every queue of the program. Vectorised (the Makefile builds this file with
// -fvect-cost-model=dynamic; -O2's cheapest model leaves a loop of unknown length scalar):
// simulations on stcp920 (164 queues) run 2-4% faster (ResNet-50 tvm at batch 16, ViT-B/16 tvm
// at batch 4: medians of five alternating pairs). On x86-64 a second version for AVX2 is picked
// at load time where the CPU has it: the baseline (SSE2) has no unsigned 32-bit maximum and
// emulates one in six instructions per four entries (ResNet-50 tvm at batch 4 on stcp920, the
// checks inline: the joins took 168 M of 4.67 G instructions, 47 M with AVX2; callgrind).
GS_AVX2_CLONES
static void join_max(uint32_t *__restrict c, const uint32_t *__restrict t, size_t n) {
  for (size_t i = 0; i < n; i++) c[i] = std::max(c[i], t[i]);
}

void HbClocks::acquire(int q, const HbClock &token) {
  HbClock &c = c_[(size_t)dense_[(size_t)q]];
  gs_assert(token.size() <= c.size() && &token != &c);
  join_max(c.data(), token.data(), token.size());
}

void HbClocks::arrive(int q, HbClock *join) {
  size_t d = (size_t)dense_[(size_t)q];
  if (join->empty()) join->assign((size_t)n_, 0);
  join_max(join->data(), c_[d].data(), (size_t)n_);
  gs_assert(c_[d][d] < UINT32_MAX);
  c_[d][d]++;
}

uint32_t HbClocks::known(int q, int p) const {
  int dp = dense_[(size_t)p], dq = dense_[(size_t)q];
  return dp >= 0 && dq >= 0 ? c_[(size_t)dq][(size_t)dp] : 0;
}

uint32_t HbClocks::floor(int p) const {
  int d = dense_[(size_t)p];
  return d < 0 ? 0 : floor_[(size_t)d];
}

// O(queues^2): once per chip barrier episode.
void HbClocks::update_floor() {
  std::vector<uint32_t> f((size_t)n_, UINT32_MAX);
  for (size_t q = 0; q < (size_t)n_; q++) {
    if (done_[q]) continue;
    for (size_t p = 0; p < (size_t)n_; p++) f[p] = std::min(f[p], c_[q][p]);
  }
  for (size_t p = 0; p < (size_t)n_; p++) floor_[p] = std::max(floor_[p], f[p] == UINT32_MAX ? 0 : f[p]);
}

void HbClocks::retire(int q) {
  int d = dense_[(size_t)q];
  if (d >= 0) done_[(size_t)d] = 1;
}
