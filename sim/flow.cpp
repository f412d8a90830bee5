// flow.cpp — max-min fair sharing of bandwidth resources among transfers (flow.h).
#include "flow.h"

#include <cmath>
#include <limits>

static const double kInf = std::numeric_limits<double>::infinity();
// A flow whose end, at its rate, is this close to now has ended (model time has 1/1000 cycle
// steps: the kernel wakes at the end rounded to them).
static const double kEndSlack = 1e-6;

void FlowNet::reset(double now) {
  flows_.clear();
  free_.clear();
  nlive_ = 0;
  now_ = now;
}

// Every live flow moves on at its rate to `now`; its resources are busy for the share of their
// service cycles it moved.
void FlowNet::advance(double now) {
  double dt = now - now_;
  if (dt <= 0) return;
  for (Flow &f : flows_) {
    if (!f.live) continue;
    double moved = std::min(f.left, f.rate * dt);
    f.left -= moved;
    for (FlowUse &u : f.uses) u.res->busy += moved * u.service;
  }
  now_ = now;
}

// Progressive filling (flow.h): fl_used = the load of the flows held so far, fl_weight = the
// load per unit of u of those still rising.
void FlowNet::share() {
  std::vector<Flow *> rising;
  for (Flow &f : flows_) {
    if (!f.live) continue;
    rising.push_back(&f);
    for (FlowUse &u : f.uses) u.res->fl_used = u.res->fl_weight = 0;
  }
  for (Flow *f : rising)
    for (FlowUse &u : f->uses) u.res->fl_weight += u.service / f->full;
  while (!rising.empty()) {
    double level = 1;
    for (Flow *f : rising)
      for (FlowUse &u : f->uses)
        if (u.res->fl_weight > 0) level = std::min(level, (1 - u.res->fl_used) / u.res->fl_weight);
    level = std::max(level, 0.0);
    std::vector<Flow *> held, next;
    for (Flow *f : rising) {
      bool full = level >= 1;
      for (FlowUse &u : f->uses)
        full |= u.res->fl_weight > 0 && (1 - u.res->fl_used) / u.res->fl_weight <= level * (1 + 1e-12);
      (full ? held : next).push_back(f);
    }
    for (Flow *f : held) {
      f->rate = level / f->full;
      f->end_at = f->rate > 0 ? now_ + f->left / f->rate : kInf;
      for (FlowUse &u : f->uses) {
        u.res->fl_used += level * u.service / f->full;
        u.res->fl_weight -= u.service / f->full;
      }
    }
    rising.swap(next);
  }
}

int FlowNet::add(double now, int owner, const FlowUse *uses, int n) {
  advance(now);
  int slot;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
  } else {
    slot = (int)flows_.size();
    flows_.emplace_back();
  }
  Flow &f = flows_[(size_t)slot];
  f.uses.assign(uses, uses + n);
  f.full = 0;
  for (const FlowUse &u : f.uses) {
    f.full = std::max(f.full, u.service);
    u.res->nflows++;
  }
  f.left = 1;
  f.owner = owner;
  f.live = true;
  nlive_++;
  share();
  return slot;
}

double FlowNet::step(double now, std::vector<int> *done) {
  advance(now);
  bool ended = false;
  for (size_t i = 0; i < flows_.size(); i++) {
    Flow &f = flows_[i];
    if (!f.live || f.end_at > now + kEndSlack) continue;
    for (FlowUse &u : f.uses) {
      u.res->busy += f.left * u.service;  // what rounding left over
      u.res->bytes += (uint64_t)std::llround(u.bytes);
      u.res->nflows--;
    }
    f.left = 0;
    f.live = false;
    nlive_--;
    free_.push_back((int)i);
    done->push_back(f.owner);
    ended = true;
  }
  if (ended) share();
  return next_end();
}

double FlowNet::next_end() const {
  double t = kInf;
  for (const Flow &f : flows_)
    if (f.live) t = std::min(t, f.end_at);
  return t;
}
