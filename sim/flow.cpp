// flow.cpp — max-min fair sharing of bandwidth resources among transfers (flow.h).
#include "flow.h"

#include <algorithm>
#include <cmath>
#include <limits>

static const double kInf = std::numeric_limits<double>::infinity();
// A flow whose end, at its rate, is this close to now has ended (model time has 1/1000 cycle
// steps: the kernel wakes at the end rounded to them).
static const double kEndSlack = 1e-6;

void FlowNet::reset(double now) {
  flows_.clear();
  throttled_ = 0;
  free_.clear();
  live_.clear();
  now_ = now;
}

// Every live flow moves on at its rate to `now`. (Its resources are busy for all their service
// cycles: counted when it ends, as the whole transfer moves by then.)
void FlowNet::advance(double now) {
  double dt = now - now_;
  if (dt <= 0) return;
  for (int i : live_) {
    Flow &f = flows_[(size_t)i];
    f.left -= std::min(f.left, f.rate * dt);
  }
  now_ = now;
}

// Progressive filling (flow.h): fl_used = the load of the flows held so far, fl_weight = the
// load per unit of u of those still rising, fl_level = the u at which the resource fills
// (computed again only when a hold changed the resource). Each round finds the lowest such u
// over the resources, holds the rising flows through a resource that fills there (found in
// its list of flows, then taken in slot order), and goes on with the rest.
void FlowNet::share() {
  res_.clear();
  stamp_++;
  size_t rising = live_.size();
  for (int i : live_) {
    Flow &f = flows_[(size_t)i];
    f.rising = true;
    for (FlowUse &u : f.uses) {
      BwResource *r = u.res;
      if (r->fl_stamp != stamp_) {
        r->fl_stamp = stamp_;
        r->fl_used = r->fl_weight = 0;
        r->fl_rising = 0;
        res_.push_back(r);
      }
      r->fl_weight += u.w;
      r->fl_rising++;
      r->fl_dirty = true;
    }
  }
  // a resource whose flows together need at most all of it (the sum of w at u = 1) fills at no
  // u below 1, so it bounds none of them: most are a core's own port or link, with one flow
  act_.clear();
  for (BwResource *r : res_)
    if (r->fl_weight > 1) act_.push_back(r);
  while (rising > 0) {
    double level = 1;
    for (BwResource *r : act_) {
      // only resources with flows still rising bound them (a held resource's weight may keep
      // a rounding residue): so every round holds at least one flow
      if (r->fl_dirty) {
        r->fl_level = r->fl_rising > 0 && r->fl_weight > 0 ? (1 - r->fl_used) / r->fl_weight : kInf;
        r->fl_dirty = false;
      }
      level = std::min(level, r->fl_level);
    }
    level = std::max(level, 0.0);
    held_.clear();
    if (level >= 1) {
      for (int i : live_)
        if (flows_[(size_t)i].rising) held_.push_back(i);
    } else {
      double fills = level * (1 + 1e-12);  // a resource at this level (or within rounding) fills
      for (BwResource *r : act_) {
        if (r->fl_level > fills) continue;
        for (int i : r->fl_flows) {
          Flow &f = flows_[(size_t)i];
          if (!f.rising) continue;
          f.rising = false;
          held_.push_back(i);
        }
      }
      std::sort(held_.begin(), held_.end());  // the sums below add in slot order
    }
    for (int i : held_) {
      Flow *f = &flows_[(size_t)i];
      f->rising = false;
      f->u = level;
      f->rate = level / f->full;
      f->end_at = f->rate > 0 ? now_ + f->left / f->rate : kInf;
      for (FlowUse &u : f->uses) {
        // not level * u.w: (level · service) / full rounds differently, and the sums must
        // stay those of the reference runs
        u.res->fl_used += level * u.service / f->full;
        u.res->fl_weight -= u.w;
        u.res->fl_rising--;
        u.res->fl_dirty = true;
      }
    }
    rising -= held_.size();
    // a resource without rising flows bounds nothing any more (its level would be +inf)
    size_t k = 0;
    for (BwResource *r : act_)
      if (r->fl_rising > 0) act_[k++] = r;
    act_.resize(k);
  }
  throttled_ = 0;
  for (int i : live_) throttled_ += flows_[(size_t)i].u < 1 - 1e-12;
  for (BwResource *r : res_) r->fl_load = r->fl_used;
}

// Whether a new flow over uses[0..n) fits at full speed beside the live flows at their rates:
// then the allocation with it at u = 1 is still the max-min one (every flow below full speed
// keeps its bottleneck, a full resource that the new flow does not use), so it need not be
// shared again (a transfer that meets only idle or part-used resources costs O(its resources),
// not a whole share: a copy inside one LB while the DDR channels are full, say).
bool FlowNet::fits(const Flow &f) const {
  for (const FlowUse &u : f.uses)
    if (u.res->fl_load + u.w > 1 + 1e-12) return false;
  return true;
}

// Whether resource r is full (within rounding): the flows held back are held on full ones.
static bool full(const BwResource *r) { return r->fl_load > 1 - 1e-9; }

int FlowNet::add(double now, int owner, const BwUse *uses, int n) {
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
  f.uses.clear();
  for (int i = 0; i < n; i++)
    f.uses.push_back({uses[i].res, uses[i].bytes, uses[i].bytes / uses[i].res->bytes_per_cycle + uses[i].extra});
  f.full = 0;
  for (const FlowUse &u : f.uses) {
    f.full = std::max(f.full, u.service);
    u.res->fl_flows.push_back(slot);
  }
  for (FlowUse &u : f.uses) u.w = u.service / f.full;
  f.left = 1;
  f.owner = owner;
  f.live = true;
  live_.insert(std::lower_bound(live_.begin(), live_.end(), slot), slot);
  if (fits(f)) {
    f.u = 1;
    f.rate = 1 / f.full;
    f.end_at = now_ + f.full;
    for (const FlowUse &u : f.uses) u.res->fl_load += u.w;
  } else {
    share();
  }
  return slot;
}

double FlowNet::step(double now, std::vector<int> *done) {
  advance(now);
  bool reshare = false;
  size_t k = 0;
  for (int i : live_) {
    Flow &f = flows_[(size_t)i];
    if (f.end_at > now + kEndSlack) {
      live_[k++] = i;
      continue;
    }
    for (FlowUse &u : f.uses) {
      reshare |= full(u.res);
      u.res->busy += u.service;
      u.res->bytes += (uint64_t)timing_llround(u.bytes);
      std::vector<int> &on = u.res->fl_flows;
      *std::find(on.begin(), on.end(), i) = on.back();
      on.pop_back();
      u.res->fl_load = on.empty() ? 0 : u.res->fl_load - f.u * u.service / f.full;
    }
    f.left = 0;
    f.live = false;
    free_.push_back(i);
    done->push_back(f.owner);
  }
  live_.resize(k);
  // Ending a flow that used no full resource frees nothing a held-back flow is held on; with no
  // flow held back, every flow is at full speed already.
  if (reshare && throttled_) share();
  return next_end();
}

double FlowNet::next_end() const {
  double t = kInf;
  for (int i : live_) t = std::min(t, flows_[(size_t)i].end_at);
  return t;
}
