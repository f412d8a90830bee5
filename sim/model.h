// model.h — the SystemC modules (one per hardware resource) and the queues' state.
// Internal to sim/: the public API is sim.h.
#ifndef GS_MODEL_H
#define GS_MODEL_H

#include <systemc>

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "checker.h"
#include "flow.h"
#include "hb.h"
#include "memory.h"
#include "sim.h"
#include "timing.h"
#include "wakeups.h"

class SimRecorder;  // trace.h

// ---- Thin modules: each holds the state of one resource; timing math is in timing.h. ----
struct DdrModule : sc_core::sc_module {
  std::vector<BwResource> channels;  // one per DDR channel
  bool dram_on = false;              // ddr.model = dram: channels lose time to the DRAM below
  DramTiming dt;                     // its figures in chip cycles
  std::vector<DramChannel> dram;     // per channel: open rows, bus direction, counts
  explicit DdrModule(sc_core::sc_module_name n, const GsArch *a);
};
struct GbModule : sc_core::sc_module {  // a cluster's global buffer and its ports
  std::vector<BwResource> ports;
  int buf;  // MemoryState buffer index
  GbModule(sc_core::sc_module_name n, const GsArch *a);
};
struct LbModule : sc_core::sc_module {  // a core's local buffer and its ports
  std::vector<BwResource> ports;
  int buf;
  LbModule(sc_core::sc_module_name n, const GsCoreKind *k);
};
struct NocModule : sc_core::sc_module {  // in-cluster interconnect: one link per core per direction
  std::vector<BwResource> link_in, link_out;
  NocModule(sc_core::sc_module_name n, const GsArch *a);
};
struct DmaEngine : sc_core::sc_module {  // executes the mov instructions of one queue
  int queue;                             // queue slot
  DmaEngine(sc_core::sc_module_name n, int q) : sc_module(n), queue(q) {}
};
// A matrix, vector or scalar unit (or one with several capabilities, like the IPU's tiles).
struct UnitModule : sc_core::sc_module {
  const GsUnitKind *kind;
  int queue;
  UnitModule(sc_core::sc_module_name n, const GsUnitKind *k, int q)
      : sc_module(n), kind(k), queue(q) {}
  // Cycles of a gemm/vec/scalar instruction on this unit (timing.h); -1 if unsupported.
  int64_t cycles(const GsInst &in) const;
};
class SimModel;
struct CoreModule : sc_core::sc_module {
  const GsCoreKind *kind;
  std::unique_ptr<LbModule> lb;
  std::unique_ptr<DmaEngine> dma_in, dma_out;
  std::vector<std::unique_ptr<UnitModule>> units;
  int first_queue;  // queue slot of dma_in; dma_out = +1, unit i = +2+i
  CoreModule(sc_core::sc_module_name n, SimModel &m, int cluster, int core);
};
struct ClusterModule : sc_core::sc_module {
  std::unique_ptr<GbModule> gb;
  std::unique_ptr<NocModule> noc;
  std::vector<std::unique_ptr<CoreModule>> cores;
  std::vector<std::unique_ptr<DmaEngine>> dmas;
  BwResource link_out, link_in;  // the cluster's ends of the inter-cluster link
  int first_dma_queue;
  ClusterModule(sc_core::sc_module_name n, SimModel &m, int cluster);
};

// The resources and fixed costs of one transfer (SimModel::mov_path).
struct MovPath {
  double latency = 0;
  std::vector<BwResource> *ports[2] = {nullptr, nullptr};  // GB/LB ports of each end, or null
  BwResource *links[4] = {};                               // NoC and cluster links crossed
  int nlinks = 0;
  bool noc = false, xcluster = false, same_buf = false;
  bool ddr = false;  // an end in DDR (q.chan and q.pen hold its channels' bytes and penalties)
};

// One buffer as an end of a transfer's path, found once when the model is built (mov_path):
// its ports (GB, LB; null for DDR), its latency, and for an LB its core's NoC links.
struct PathEnd {
  std::vector<BwResource> *ports = nullptr;
  double latency = 0;
  BwResource *link_out = nullptr, *link_in = nullptr;
};

// Where a queue is inside its current instruction, kept across its wake-ups: each wake-up
// runs the queue on (SimModel::queue_run) until it must sleep again.
struct SyncObj;
struct QStep {
  int stage = 0;    // 0: the instruction (or its own wait) has not started; then as exec_* says
  double t0 = 0;    // a transfer's issue, or the start of a flag, barrier or semaphore wait
  double t1 = 0;    // compute: the rep in flight's start
  int64_t d = 0, reps = 0;  // compute: cycles of one rep, reps left
  MovPath mp;       // a transfer: its path and ends
  const Buffer *side[2] = {nullptr, nullptr};
  int64_t bytes = 0, left = 0, built = 0, c = 0;  // its bytes, left to stream, q.uses' piece, in flight
  double ddr_total = 0, stall = 0, t = 0, end = 0, full = 0;  // DDR bytes after bursts, stall,
                    // the next chunk's request, the chunk in flight's end, a flow's time alone
  int slot = -1;    // a flow's slot
  SyncObj *sync = nullptr;  // a barrier waited for
  uint64_t gen = 0, key = 0;  // its generation at arrival; a semaphore's key
};

// What a step of a queue's instruction came to: done, asleep (its event wakes the queue's method
// again, or timer_step runs it at its time), or the run stopped (a failure, an abort).
enum Step { STEP_DONE, STEP_SLEEP, STEP_STOP };

// What a blocked queue waits for (for the deadlock report).
enum WaitKind { WK_NONE, WK_FLAG, WK_BARRIER, WK_SEM, WK_FLOW };

// One queue slot of the architecture (every core queue and cluster DMA queue exists, whether or
// not the program uses it, so signals to a queue without instructions are kept).
struct alignas(64) QState {
  std::string name;
  int cluster = 0, core = -1, index = 0;
  int unit_kind = -1;            // GsArch.units index for unit queues, -1 for DMA queues
  const GsQueue *prog = nullptr;  // the program's queue, null if the program has none
  // What follows changes as the queue runs: on cache lines of its own, as the checker's thread
  // reads the queue's place above (operand_place) while this thread writes below.
  alignas(64) size_t pc = 0;      // the index of the instruction it executes (*cur.at)
  GsCursor cur{};                 // reads prog's instructions in order (released: ~SimModel)
  const GsInst *in = nullptr;     // instruction pc, in cur (only this queue moves it)
  // in's own waits (GsInst.wait, then wait2), its execution
  enum Phase { FETCH, OWN_WAIT, OWN_WAIT2, EXEC, ENDED } phase = FETCH;
  QStep x;
  bool done = false;
  double end = 0;
  struct Flag {
    int64_t count = 0;
    bool from_dma = false;  // last set by a DMA queue (the stall is then "waiting on data")
    int last_from = -1;     // queue slot of the last signal (for the end-of-run report)
  };
  // Its flags: ids below kFlatFlags (every flag a wait= or signal_flag= can name) in a vector
  // grown to the largest used, others in a map (a map lookup per signal and wait: 0.8% of
  // ViT-B/16's simulating thread under tvm).
  static const int64_t kFlatFlags = 256;
  std::vector<Flag> flat_flags;
  std::map<int64_t, Flag> far_flags;
  Flag &flag(int64_t id) {
    if (id < 0 || id >= kFlatFlags) return far_flags[id];
    if ((size_t)id >= flat_flags.size()) flat_flags.resize((size_t)id + 1);
    return flat_flags[(size_t)id];
  }
  Flag *find_flag(int64_t id) {
    if (id >= 0 && id < kFlatFlags) return (size_t)id < flat_flags.size() ? &flat_flags[(size_t)id] : nullptr;
    auto it = far_flags.find(id);
    return it != far_flags.end() ? &it->second : nullptr;
  }
  // f(id, flag) for every flag ever signalled or waited for, in ascending id order
  template <class F> void each_flag(F f) const {
    auto it = far_flags.begin();
    for (; it != far_flags.end() && it->first < 0; ++it) f(it->first, it->second);
    for (size_t i = 0; i < flat_flags.size(); i++) f((int64_t)i, flat_flags[i]);
    for (; it != far_flags.end(); ++it) f(it->first, it->second);
  }
  bool ready = false;  // woken from its flag, barrier, semaphore or flow sleep, not yet run
                       // (in SimModel::ready_ or later_)
  WaitKind wait = WK_NONE;
  int64_t wait_id = 0;
  uint64_t wait_key = 0;  // the barrier or semaphore (model_sync_key)
  // stats (cycles)
  double busy = 0, stall_data = 0, stall_flag = 0, stall_res = 0;
  uint64_t ninst = 0;
  double macs = 0, ideal = 0;   // matrix: MACs done, and cycles they take at peak rate
  std::vector<BwUse> uses;       // scratch for transfers: a chunk's resources
  std::vector<BwUse> ddr_uses;   // scratch: the transfer's DDR channels, whole (ddr_uses)
  std::vector<double> chan;      // scratch: DDR bytes per channel of the current transfer
  std::vector<double> pen;       // scratch: its DRAM penalty cycles per channel (ddr.model = dram)
  void reset() {
    prog = nullptr; pc = 0; in = nullptr; phase = FETCH; x = QStep(); done = false; end = 0;
    ready = false;
    flat_flags.clear(); far_flags.clear(); wait = WK_NONE; wait_id = 0;
    wait_key = 0; busy = stall_data = stall_flag = stall_res = 0; ninst = 0; macs = ideal = 0;
  }
};

struct SyncObj {  // a barrier or a semaphore
  int64_t count = 0;      // barrier: expected arrivals of the current episode; sem: value
  int64_t arrived = 0;
  uint64_t generation = 0;
  bool from_dma = false;  // semaphore: last posted by a DMA queue
  int last_from = -1;     // semaphore: queue slot of the last post (for the end-of-run report)
  std::vector<int> waiters;
};

// What the model knows of a region without asking the checks (checker.h): enough to time a
// transfer and to tell whether an access may be timed before its check's verdict.
struct RegionView {
  RegionState state = RS_NEVER;
  bool final = false;  // a program output (its free is an error)
  int buf = -1;
  int64_t offset = 0, bytes = 0;
};

struct Traffic {
  double ddr_read = 0, ddr_write = 0, gb_read = 0, gb_write = 0, lb_read = 0, lb_write = 0,
         noc = 0, noc_lb_lb = 0, cluster_link = 0, ddr_since_episode = 0;
  double ddr_burst = 0;  // DDR bytes after burst rounding
};

// The longest run the model simulates: 2^43 cycles (2.4 hours at 1 GHz). Model time is kept in
// double cycles with fractions of 1/1000 and in SystemC picoseconds (1000 per cycle): both stay
// exact below it. An instruction that would end later stops the run (docs/timing.md).
static const double kModelMaxCycles = 8796093022208.0;
// The most queues a program may use: the race checks keep a clock of one epoch per queue for
// every queue (hb.h), 4·N² bytes at worst, 256 MiB at this bound (IPU GC2 has 7296 queue
// slots; from 1024 queues on the clocks share bases and usually take far less).
static const int kMaxQueues = 8192;

class SimModel : public sc_core::sc_module {
 public:
  SimModel(sc_core::sc_module_name n, const GsArch *a);
  ~SimModel() override;
  int run(const GsProgram *p, const SimOptions &o, SimResult *r);

  const GsArch *arch;
  std::unique_ptr<DdrModule> ddr;
  std::vector<std::unique_ptr<ClusterModule>> clusters;
  std::vector<QState> queues;       // every queue slot
  std::vector<std::string> qnames;  // queues[i].name, for messages
  // The checks' state: the checker's thread's while a run goes on (on cache lines apart from
  // what the model writes).
  alignas(64) MemoryState mem;
  alignas(64) HbClocks hb;  // happens-before between the program's queues

  // Slots.
  int core_queue(int cluster, int core, int index) const;  // -1 if out of range
  int cluster_dma_queue(int cluster, int engine) const;
  int lb_buffer(int cluster, int core) const;
  int gb_buffer(int cluster) const { return 1 + cluster; }
  CoreModule *core_mod(int cluster, int core) const {
    return clusters[(size_t)cluster]->cores[(size_t)core].get();
  }

 private:
  friend class SimChecker;
  // The memory checks of instruction idx of queue slot qid (run by the checker): its
  // allocation, free, or the reads and writes of its operands; false, with *e the message, when
  // one fails (none is built when they pass: the checks run for every instruction).
  bool check_access(int qid, size_t idx, const GsInst &in, std::string *e);
  bool check_gemm(const QState &q, const GsInst &in, Mark who, std::string *e);
  bool check_vec(const QState &q, const GsInst &in, Mark who, std::string *e);
  std::string located_error(int qid, size_t idx, const GsInst &in, double cycle,
                            const std::string &msg) const;
  bool checks_failed();
  RegionView &view(uint32_t r);
  const RegionView &view_of(uint32_t r) const;
  void controller();
  void queue_run(int q);
  void run_due(int q);
  void queue_done(QState &q, int qid);
  Step exec(QState &q, int qid, const GsInst &in, size_t idx);
  Step exec_mov(QState &q, int qid, const GsInst &in, size_t idx);
  bool mov_begin(QState &q, int qid, const GsInst &in, size_t idx);
  void mov_end(QState &q, int qid, size_t idx);
  PathEnd path_end(const Buffer &b);
  bool mov_path(QState &q, const Buffer *side[2], const GsAccess *pat[2], const int64_t base[2],
                MovPath *mp, std::string *err);
  static void mov_patterns(const GsInst &in, GsAccess *sp, GsAccess *dp);
  int alloc_buffer(const GsInst &in) const;
  double ddr_uses(QState &q, const MovPath &mp);
  void path_uses(QState &q, const MovPath &mp, double c, double f);
  void path_ports(QState &q, const MovPath &mp, bool ready);
  bool mov_stream(QState &q, int qid, size_t idx);
  bool mov_flow(QState &q, int qid, size_t idx);
  void flow_step();
  void flow_schedule(double next);
  // An instruction that would end after kModelMaxCycles stops the run (a check failure).
  bool past_limit(int qid, size_t idx, double end) {
    return end > kModelMaxCycles && limit_failed(qid, idx, end);
  }
  bool limit_failed(int qid, size_t idx, double end);
  Step exec_compute(QState &q, int qid, const GsInst &in, size_t idx);
  void compute_issue(QState &q, int qid, const GsInst &in, size_t idx, const GsUnitKind *u);
  void flag_signal(QState &q, int qid, int queue, int64_t flag);
  Step flag_wait(QState &q, int qid, int64_t flag);
  bool wait_begin(QState &q);
  Step sync_barrier(QState &q, int qid, const GsInst &in, size_t idx);
  Step sync_sem(QState &q, int qid, const GsInst &in);
  bool fail(int qid, size_t idx, const std::string &msg);
  Mark mark(int qid, size_t idx) const { return Mark{qid, hb.epoch(qid), (uint32_t)idx}; }
  bool operand_place(const QState &q, uint32_t r, std::string *e) const;
  double now() const;
  bool sleep_until(QState &q, double t);
  void timer_arm();
  void timer_step();
  void wake_all();
  // Wakes queue w from its flag, barrier, semaphore or flow sleep: it runs once the running
  // queues and those woken before it have (ready_run), as a method the queue's event made
  // runnable would.
  void wake(int w) {
    QState &q = queues[(size_t)w];
    if (q.ready) return;  // already woken (a runnable method is not made runnable twice)
    q.ready = true;
    ready_.push_back(w);
  }
  void ready_run();
  void ready_step();
  void later_step();
  void flow_method();
  int static_check(const GsProgram *p, bool checked, std::string *err);
  int prog_check_collect(const GsProgram *p, std::string *err);
  int bind_queues(const GsProgram *p, std::string *err);
  std::string deadlock_report();
  std::string end_report();
  void reset_run(const GsProgram *p, const SimOptions &o);
  bool choose_chunk(const SimOptions &o, SimResult *r);
  bool open_recorders(const SimOptions &o, SimResult *r);
  void simulate(bool checks_thread);
  std::string checks_where_;  // SimResult::checks of the run
  void register_stats(SimResult *r, double cycles);
  void register_dram_stats(SimStats &st) const;
  void trace_occ(int buf);

  alignas(64) sc_core::sc_event start_ev_;
  const GsProgram *prog_ = nullptr;
  const char *prog_name_ = "program";
  std::function<void(uint64_t, uint64_t)> progress_;  // SimOptions::progress
  uint64_t executed_ = 0, total_ = 0;                  // instructions, for progress_
  static constexpr uint64_t kProgressEvery = 4096;     // progress_ every this many (a power of 2)
  double start_ = 0;       // the run's start in model time (0: now() counts from start_ps_)
  uint64_t start_ps_ = 0;  // the run's start in SystemC time (ps)
  double ps_per_cycle_ = 1000;
  int64_t chunk_ = 0;  // the run's chunk (run: SimOptions::chunk_bytes or chip.chunk_bytes)
  bool flows_on_ = false;       // chip.transfer_model = flow
  FlowNet flows_;               // its transfers in flight
  sc_core::sc_event flow_ev_;   // the next flow's end when it is now (flow_step)
  uint64_t flow_token_ = 0;     // ... when later: the entry -1 - flow_token_ in wakeups_
  // The timed wake-ups (wakeups.h), the kernel's one notification for the earliest, and the
  // queues due at an instant (timer_step's scratch).
  Wakeups wakeups_;
  sc_core::sc_event timer_ev_;
  bool timer_armed_ = false;
  uint64_t timer_at_ = 0;  // SystemC ps, when armed
  bool in_timer_ = false;  // timer_step runs
  uint64_t notified_ = 0;  // events notified so far (timer_step)
  uint64_t now_ps_ = 0;    // model time (SystemC ps; now())
  std::vector<int> due_;
  // The queues woken and not yet run, in the order they were woken (wake, ready_run); those
  // wake_all woke, which run in the next delta cycle (later_step).
  std::vector<int> ready_, later_;
  sc_core::sc_event ready_ev_, later_ev_;  // ready_step: the run's start; later_step
  std::vector<int> flow_done_;  // scratch: the queues whose flows flow_step ended
  bool abort_ = false;
  std::string error_;
  double error_cycle_ = 0;
  uint64_t running_ = 0;
  std::map<uint64_t, SyncObj> barriers_, sems_;  // by model_sync_key
  Traffic traffic_;
  GsActions actions_{};                    // actions.h
  std::vector<GsActions> episode_actions_;  // actions_ at each chip episode's end
  std::vector<GsActions> cluster_episode_actions_;  // and at each cluster episode's
  std::vector<SimEpisode> episodes_;
  std::vector<SimEpisode> cluster_episodes_;
  std::vector<std::unique_ptr<SimRecorder>> recorders_;
  SimChecker checker_{*this};
  std::vector<RegionView> views_;                       // [region id < min(count, 2^20)]
  std::unordered_map<uint32_t, RegionView> views_far_;  // ids past it (hand-written programs)
  std::vector<int64_t> occupancy_;                      // [buffer]: allocated bytes (traces)
  // The buffers as built (name, level, place, capacity): the model's own copy to time
  // transfers with, as mem.bufs is the checker's while a run goes on (reading it shared cache
  // lines with the checker's writes of the same Buffer's maps).
  std::vector<Buffer> buffers_;
  std::vector<PathEnd> path_ends_;  // [buffer]
};

// Barriers and semaphores: the key of id `id` of scope `scope` seen from cluster `cluster`, and
// the key's name in messages ("chip#3", "c1#3").
uint64_t model_sync_key(int scope, int cluster, int64_t id);
std::string model_sync_name(uint64_t key);

// One instruction as text for messages: "mnemonic name=value ..." in isa.def operand order.
std::string model_inst_text(const GsArch *a, const GsProgram *p, const GsInst &in);

#endif
