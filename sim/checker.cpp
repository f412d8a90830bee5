// checker.cpp — the checks' thread and the ring of records that feeds it (checker.h).
// Invariants: only the model writes ring_at_[head_local_..] and head_local_; only the thread reads
// ring_at_[tail_..head_) and writes tail_; MemoryState and HbClocks are touched by the thread alone
// between start() and stop(), except after drain() returned, when the thread waits for records.
// Waiting on either side polls (nap): the model spins briefly first, the thread does not.
#include "checker.h"

#include <time.h>

#include <algorithm>
#include <new>

#include "model.h"

extern "C" {
#include "util.h"
}

static inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
static const size_t kStackBytes = 4u << 20;  // the sanitizers' frames are larger
#else
static const size_t kStackBytes = 256u << 10;
#endif

// The model spins this many times before it sleeps 10 us at a time; the thread, out of
// records, sleeps kNapUs (the kernel's timer slack makes any sleep about 50 us anyway).
static const int kSpins = 256;
static const long kNapUs = 50;

void SimChecker::start(bool threaded) {
  stop();
  flag_direct_.clear();
  flag_direct_.resize(m_.queues.size() * (size_t)kDirectFlags);
  flag_tokens_.clear();
  sem_tokens_.clear();
  joins_.clear();
  spare_.clear();
  error_.clear();
  error_cycle_ = 0;
  failed_.store(false);
  head_local_ = tail_seen_ = 0;
  head_.store(0);
  tail_.store(0);
  quit_.store(false);
  threaded_ = threaded;
  start_error_ = 0;
  thread_cpu_s_ = -1;
  if (!threaded_) return;
  if (!ring_mem_) {  // (records and instructions are written before they are read: not zeroed)
    static_assert(kRing * sizeof(InstSlot) % alignof(CheckOp) == 0, "the records' place");
    size_t n = kRing * (sizeof(InstSlot) + sizeof(CheckOp));
    ring_mem_ = aligned_alloc(alignof(InstSlot), n);
    if (!ring_mem_) throw std::bad_alloc();
    util_populate(ring_mem_, n);
    insts_at_ = static_cast<InstSlot *>(ring_mem_);
    ring_at_ = reinterpret_cast<CheckOp *>(insts_at_ + kRing);
  }
  // A stack of its own size: the default (the stack limit, 8 MiB) is address space that a run
  // under a limit (test_limits) misses; the checks recurse nowhere.
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, kStackBytes);
  start_error_ = pthread_create(&thread_, &attr, &SimChecker::thread_entry, this);
  running_ = start_error_ == 0;
  pthread_attr_destroy(&attr);
  // No thread to be had (a process limit, static TLS larger than the stack): inline, the same
  // verdicts; the run says so (SimResult::checks).
  if (!running_) threaded_ = false;
}

SimChecker::~SimChecker() {
  stop();
  free(ring_mem_);
}

void *SimChecker::thread_entry(void *self) {
  SimChecker *c = static_cast<SimChecker *>(self);
  try {
    c->thread_main();
  } catch (const std::bad_alloc &) {
    die("out of memory");
  }
  c->thread_cpu_s_ = cpu_seconds();  // the thread's clock started with it
  return nullptr;
}

double SimChecker::cpu_seconds() {
  struct timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

// On one core, a thread for the checks would only take turns with the simulation.
bool SimChecker::second_core() { return util_two_cores() != 0; }

void SimChecker::stop() {
  if (!running_) return;
  drain();
  quit_.store(true, std::memory_order_release);
  pthread_join(thread_, nullptr);
  running_ = threaded_ = false;
}

// The instructions' streaming stores (access) are ordered before the head by the fence.
void SimChecker::publish() {
  util_stream_fence();
  head_.store(head_local_, std::memory_order_release);
}

// Neither side wakes the other: a wake-up costs the waker a system call, and the model
// publishes every 64 records. The thread, which keeps up, sleeps whenever it has caught up, so
// that it works on batches of records and burns no core spinning (a core another process of a
// sweep may want); the model, which waits only when the ring is full or for a drain, spins a
// little first (docs/timing.md, "Checks on a second core").
static void nap(long us) {
  struct timespec ts = {0, us * 1000};
  nanosleep(&ts, nullptr);
}

// The model waits until the thread has checked up to `upto` (the ring is full, or a drain).
void SimChecker::wait_tail(uint64_t upto) {
  for (int spin = 0; tail_.load(std::memory_order_acquire) < upto; spin++)
    if (spin < kSpins) cpu_relax();
    else nap(10);
}

void SimChecker::wait_for_room() {
  publish();
  wait_tail(head_local_ - kRing + 1);
  tail_seen_ = tail_.load(std::memory_order_acquire);
}

void SimChecker::drain() {
  if (!threaded_) return;
  publish();
  wait_tail(head_local_);
  tail_seen_ = head_local_;
}

// The thread: checks what is published, publishes how far it got, waits when there is nothing.
void SimChecker::thread_main() {
  uint64_t t = 0;
  for (;;) {
    uint64_t h = head_.load(std::memory_order_acquire);
    if (t == h) {
      if (quit_.load(std::memory_order_acquire) && head_.load(std::memory_order_acquire) == t) return;
      nap(kNapUs);
      continue;
    }
    for (; t < h; t++) {
      // The records were written on the model's core: each line comes from there, and one at
      // a time as the loop reached it a sixth of the thread waited for them (perf). Asked for
      // 8 records ahead, published ones only, so that the model has finished writing them.
      if (t + kAhead < h) {
        uint64_t a = (t + kAhead) & (kRing - 1);
        __builtin_prefetch(&ring_at_[a]);
        const char *in = reinterpret_cast<const char *>(&insts_at_[a]);  // two lines
        __builtin_prefetch(in);
        __builtin_prefetch(in + 64);
      }
      apply(ring_at_[t & (kRing - 1)], &insts_at_[t & (kRing - 1)].in);
    }
    tail_.store(t, std::memory_order_release);
  }
}

// A signal or post by q: its clock joins the tokens not consumed yet (hb.h).
void SimChecker::token_release(int q, std::deque<HbClock> &tokens) {
  tokens.emplace_back();
  if (!spare_.empty()) {  // (a spare token has no base)
    tokens.back().all.swap(spare_.back().all);
    tokens.back().ahead.swap(spare_.back().ahead);
    spare_.pop_back();
  }
  m_.hb.release(q, &tokens.back());
}

// A wait by q consumes the oldest token (the model consumed a count: a release came before).
void SimChecker::token_acquire(int q, std::deque<HbClock> &tokens) {
  gs_assert(!tokens.empty());
  m_.hb.acquire(q, tokens.front());
  spare_.emplace_back();  // its vectors' room is kept, not its base
  spare_.back().all.swap(tokens.front().all);
  spare_.back().ahead.swap(tokens.front().ahead);
  tokens.pop_front();
}

void SimChecker::apply(const CheckOp &op, const GsInst *in) {
  if (failed_.load(std::memory_order_relaxed)) return;  // the first failure is the verdict
  HbClocks &hb = m_.hb;
  switch (op.kind) {
  case CK_ACCESS: check_access(op, *in); break;
  case CK_FLAG_REL: token_release(op.q, flag_tokens(op.a, op.v)); break;
  case CK_FLAG_ACQ: token_acquire(op.q, flag_tokens(op.q, op.v)); break;
  case CK_SEM_POST: token_release(op.q, sem_tokens_[(uint64_t)op.v]); break;
  case CK_SEM_WAIT: token_acquire(op.q, sem_tokens_[(uint64_t)op.v]); break;
  case CK_BAR_ARRIVE: hb.arrive(op.q, &joins_[(uint64_t)op.v]); break;
  case CK_BAR_ACQ: hb.barrier_acquire(op.q, &joins_[(uint64_t)op.v]); break;
  case CK_BAR_CLEAR: joins_[(uint64_t)op.v].clear(); break;
  case CK_FLOOR:
    hb.update_floor();  // lets the access logs drop what every queue is ordered after
    m_.mem.prune_logs();
    break;
  case CK_RETIRE: hb.retire(op.q); break;
  default: die("check record kind %d out of range", op.kind);
  }
}

// Checks the memory accesses of queue q's instruction op.idx.
void SimChecker::check_access(const CheckOp &op, const GsInst &in) {
  std::string e;
  if (m_.check_access(op.q, op.idx, in, &e)) return;
  error_ = m_.located_error(op.q, op.idx, in, op.cycle, e);
  error_cycle_ = op.cycle;
  failed_.store(true, std::memory_order_release);
}
