// checker.h — the run's memory and race checks on a thread of their own (docs/timing.md,
// "Checks on a second core"). Internal to sim/.
//
// The model's queues decide timing; what every instruction reads, writes, allocates and
// frees, and the happens-before order the checks judge those accesses by, do not change timing.
// So the model hands each such event to the checker as a small record, in the order the events
// happen in the simulation, and goes on; a thread of the checker's replays them, in that same
// order, against MemoryState and HbClocks (memory.h, hb.h), which only it touches while the run
// goes on. The state it sees at every record is the one the model would have seen checking
// inline, so the verdict and its message are the same: the first failing access in simulation
// order, located at its queue, instruction and cycle.
//
// Contract with the model:
// - events are handed over in simulation order (one SystemC process runs at a time);
// - `access(q, idx, in, cycle)` hands over instruction idx of queue slot q, which touches
//   memory, as the model decoded it (copied into the ring beside its record, so the checker
//   does not decode the program a second time), for the checks of its operands
//   (SimModel::check_access);
// - before the model reads MemoryState or HbClocks itself, or trusts that an access it is about
//   to time is legal (a region live and the access inside it), it calls `drain()`;
// - `failed()` may be polled at any time; after `drain()` it is final for what was handed over.
#ifndef GS_CHECKER_H
#define GS_CHECKER_H

#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "hb.h"

extern "C" {
#include "prog.h"
}

class SimModel;

enum CheckOpKind : uint8_t {
  CK_ACCESS,       // q's instruction idx: its memory checks
  CK_FLAG_REL,     // q signals flag v of queue slot a
  CK_FLAG_ACQ,     // q consumes a count of its flag v
  CK_SEM_POST,     // q posts semaphore key v
  CK_SEM_WAIT,     // q consumes a post of semaphore key v
  CK_BAR_ARRIVE,   // q arrives at barrier key v
  CK_BAR_ACQ,      // q leaves barrier key v (its episode complete)
  CK_BAR_CLEAR,    // barrier key v's episode is over
  CK_FLOOR,        // a chip barrier completed: drop the access records every queue is after
  CK_RETIRE,       // q executed its last instruction
};

struct CheckOp {
  uint8_t kind;
  int32_t q, a;
  uint32_t idx;
  int64_t v;
  double cycle;  // model time of the event (for the message)
};
// SimChecker::write streams a record as two 16-byte words in this layout.
static_assert(offsetof(CheckOp, q) == 4 && offsetof(CheckOp, a) == 8 &&
                  offsetof(CheckOp, idx) == 12 && offsetof(CheckOp, v) == 16 &&
                  offsetof(CheckOp, cycle) == 24 && sizeof(CheckOp) == 32,
              "CheckOp's layout");

class SimChecker {
  // An access record's instruction, on two cache lines of its own: the model writes them whole,
  // past its caches (util_stream_copy), for the thread's core to read.
  struct alignas(64) InstSlot {
    GsInst in;
    uint8_t pad[128 - sizeof(GsInst)];
  };
  static_assert(sizeof(GsInst) == 120 && sizeof(InstSlot::pad) == 8,
                "an instruction's last word and the pad are one streamed pair");

 public:
  explicit SimChecker(SimModel &m) : m_(m) {}
  ~SimChecker();
  SimChecker(const SimChecker &) = delete;
  SimChecker &operator=(const SimChecker &) = delete;

  // A run starts (its queues bound to their slots).
  // `threaded` false checks every record as it is handed over, on the caller's thread (the
  // same verdicts: test_sim_mutation and test_sim compare).
  void start(bool threaded);
  // The run is over: everything handed over is checked and the thread has ended.
  void stop();
  // Does the process have a second core to check on?
  static bool second_core();
  // Where the run's checks went: its own thread, or (when start() could not make one) inline,
  // with pthread_create's error number.
  bool on_thread() const { return threaded_; }
  int start_error() const { return start_error_; }
  // The processor seconds the last run's thread used (its own clock, read as it ended; valid
  // after stop(); -1 when the run had no thread). What tells which of the two threads bounds a
  // run: wall time cannot, as both run at once.
  double thread_cpu_seconds() const { return thread_cpu_s_; }
  // The calling thread's processor seconds so far.
  static double cpu_seconds();

  void access(int q, size_t idx, const GsInst &in, double cycle) {
    if (!threaded_) return apply({CK_ACCESS, q, 0, (uint32_t)idx, 0, cycle}, &in);
    uint64_t s = claim();
    write(s, CK_ACCESS, q, 0, (uint32_t)idx, 0, cycle);
    util_stream_copy(&insts_at_[s].in, &in, offsetof(GsInst, n[GS_INST_NUM - 1]));
    // the second line written whole: n[9] and the pad
    util_stream_pair(&insts_at_[s].in.n[GS_INST_NUM - 1], (uint64_t)in.n[GS_INST_NUM - 1], 0);
    advance();
  }
  void flag_release(int q, int target, int64_t flag) { put(CK_FLAG_REL, q, target, flag); }
  void flag_acquire(int q, int64_t flag) { put(CK_FLAG_ACQ, q, 0, flag); }
  void sem_post(int q, uint64_t key) { put(CK_SEM_POST, q, 0, (int64_t)key); }
  void sem_wait(int q, uint64_t key) { put(CK_SEM_WAIT, q, 0, (int64_t)key); }
  void barrier_arrive(int q, uint64_t key) { put(CK_BAR_ARRIVE, q, 0, (int64_t)key); }
  void barrier_acquire(int q, uint64_t key) { put(CK_BAR_ACQ, q, 0, (int64_t)key); }
  void barrier_clear(uint64_t key) { put(CK_BAR_CLEAR, 0, 0, (int64_t)key); }
  void floor() { put(CK_FLOOR, 0, 0, 0); }
  void retire(int q) { put(CK_RETIRE, q, 0, 0); }

  // Waits until every record handed over has been checked.
  void drain();
  // A record failed its check (cheap: poll freely; final for what was handed over after drain()).
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  // The first failure: "queue Q, instruction I (TEXT), at cycle C: MSG", and its cycle.
  const std::string &error() const { return error_; }
  double error_cycle() const { return error_cycle_; }

 private:
  static constexpr uint64_t kRing = 1u << 15;  // records in flight (1 MiB, and 3.5 MiB of
                                               // their instructions)
  static constexpr uint64_t kPublish = 64;     // records between publications of the head
  static constexpr uint64_t kAhead = 8;        // records the thread asks the cache for ahead

  // The ring's next slot, once the thread has checked what it held.
  uint64_t claim() {
    if (head_local_ - tail_seen_ == kRing) wait_for_room();
    return head_local_ & (kRing - 1);
  }
  void advance() {
    head_local_++;
    if ((head_local_ & (kPublish - 1)) == 0) publish();
  }
  // A record written where it lies, from registers, past the cache (util_stream_pair): built on
  // the stack and copied, the copy's 16-byte loads waited for the smaller stores that built it
  // (a failed store forward: half of put's samples).
  void write(uint64_t s, CheckOpKind kind, int q, int a, uint32_t idx, int64_t v, double cycle) {
#ifdef __SSE2__  // (x86, little-endian: the words as CheckOp lays its fields out)
    uint64_t c;
    memcpy(&c, &cycle, 8);
    CheckOp *op = &ring_at_[s];
    util_stream_pair(op, (uint64_t)kind | (uint64_t)(uint32_t)q << 32,
                     (uint64_t)(uint32_t)a | (uint64_t)idx << 32);
    util_stream_pair(reinterpret_cast<char *>(op) + 16, (uint64_t)v, c);
#else
    CheckOp &op = ring_at_[s];
    op.kind = kind, op.q = q, op.a = a, op.idx = idx, op.v = v, op.cycle = cycle;
#endif
  }
  void put(CheckOpKind kind, int q, int a, int64_t v) {
    if (!threaded_) return apply({kind, q, a, 0, v, 0}, nullptr);
    write(claim(), kind, q, a, 0, v, 0);
    advance();
  }
  void publish();
  void wait_tail(uint64_t upto);
  void wait_for_room();
  static void *thread_entry(void *self);
  void thread_main();
  // in: an access record's instruction
  void apply(const CheckOp &op, const GsInst *in);
  void check_access(const CheckOp &op, const GsInst &in);
  void token_release(int q, std::deque<HbClock> &tokens);
  void token_acquire(int q, std::deque<HbClock> &tokens);

  // Fixed while a run goes on, read by both threads.
  SimModel &m_;
  bool threaded_ = false;
  int start_error_ = 0;  // pthread_create's error when the thread was asked for and not made
  CheckOp *ring_at_ = nullptr;    // the records, kRing of them (in ring_mem_)
  InstSlot *insts_at_ = nullptr;  // [slot]: the instruction of an access record (in ring_mem_)
  // The model's side: written by the model as it hands records over, on a line of its own (on
  // the line above, they took it from the thread's cache at every record, whose first read is
  // m_: 14% of the thread's samples).
  alignas(64) uint64_t head_local_ = 0;  // the model's next slot
  uint64_t tail_seen_ = 0;               // the model's last view of tail_

  // The thread's side (the model's too when inline, or after drain()): on lines of their own,
  // so that the model's writes above do not take them from the thread's cache.
  struct FlagKey {
    int q;
    int64_t flag;
    bool operator==(const FlagKey &o) const { return q == o.q && flag == o.flag; }
  };
  struct FlagHash {
    size_t operator()(const FlagKey &k) const {
      return std::hash<int64_t>()(k.flag * 1000003 + k.q);
    }
  };
  // The tokens of queue q's flag f: flags below kDirectFlags (every flag the schedulers use)
  // in a table by queue and flag, made at their first use; others in a map. (The map's hash
  // and chain were 8% of the thread on ViT-B/16 graphturbo: a signal and a wait are tokens.)
  static constexpr int64_t kDirectFlags = 8;
  std::deque<HbClock> &flag_tokens(int q, int64_t f) {
    if ((uint64_t)f < (uint64_t)kDirectFlags && (size_t)q < flag_direct_.size() / kDirectFlags) {
      std::unique_ptr<std::deque<HbClock>> &d = flag_direct_[(size_t)q * kDirectFlags + (size_t)f];
      if (!d) d = std::make_unique<std::deque<HbClock>>();
      return *d;
    }
    return flag_tokens_[FlagKey{q, f}];
  }
  // the clocks of the signals and posts not consumed yet (FIFO, hb.h), barriers' joins
  alignas(64) std::vector<std::unique_ptr<std::deque<HbClock>>> flag_direct_;
  std::unordered_map<FlagKey, std::deque<HbClock>, FlagHash> flag_tokens_;
  std::unordered_map<uint64_t, std::deque<HbClock>> sem_tokens_;
  std::unordered_map<uint64_t, HbClock> joins_;
  // consumed tokens' clocks, kept with their capacity: a release copies into one instead of
  // allocating a clock per signal
  std::vector<HbClock> spare_;
  // ring_at_'s and insts_at_'s memory, made at the first threaded start and kept, its pages
  // mapped in one call (util_populate): faulted in one by one, zeroed as a vector's, its 1281
  // pages took the model 13 ms before every process's first record.
  void *ring_mem_ = nullptr;

  // The verdict: written once by the thread, polled by the model before every instruction.
  alignas(64) std::atomic<bool> failed_{false};
  std::string error_;
  double error_cycle_ = 0;

  // The ring's ends: the model publishes records [tail, head), the thread how far it checked.
  alignas(64) std::atomic<uint64_t> head_{0};
  alignas(64) std::atomic<uint64_t> tail_{0};
  alignas(64) std::atomic<bool> quit_{false};  // stop(): the thread ends once it has caught up
  pthread_t thread_{};
  bool running_ = false;  // thread_ runs
  double thread_cpu_s_ = -1;  // written by the thread as it ends, read after the join
};

#endif
