// model.cpp — the SystemC model: modules per resource, a state machine per program queue.
//
// Algorithm: every non-empty queue of the program executes its instructions in order
// (queue_run). An instruction does its effect at issue (checks, region reads and writes,
// resource reservations), then sleeps until its completion time (one timed wake-up per compute
// instruction, one per transfer chunk: wakeups_, run by timer_step) and completes. There is no
// per-cycle tick: time only advances through those sleeps. Flags, barriers and semaphores put a
// queue to sleep until the releasing queue wakes it (wake: it runs after the queues running and
// woken before it, ready_run), and order queues for the race checks (hb.h). A sleeping queue's
// place inside its instruction is its QStep (model.h): each exec_* step goes on from its stage
// and returns STEP_SLEEP (a timed wake-up queued, or a wake to wait for), STEP_DONE or
// STEP_STOP; queue_run loops over them. The queues run inside the kernel's five processes: the
// controller thread and ready_step, which start each run; timer_step, at the earliest wake-up;
// flow_method and later_step, in a delta cycle when notified.
// Invariants: the tile state and the access logs change at issue (an access that could see a
// write in flight does not happen after it: a race, memory.cpp); shared bandwidth resources
// are reserved chunk by chunk in request order (FIFO; same-time requests in the order the
// queues run: the wake-ups in the kernel's heap order, wakeups.h, then the queues they woke in
// the order they were woken, ready_run, as the kernel ran a method per queue);
// the first check failure stops every queue (abort_) and is the one reported.
#include "model.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

#include "actions.h"
#include "trace.h"

using namespace sc_core;

// Runs a process's body (the controller's, timer_step's, the delta-cycle methods'; the queues
// run inside them). An exception must not leave it: SystemC turns one into a report by
// allocating, which under memory exhaustion throws again inside its handler (std::terminate,
// exit 134). Out of memory is exit 3 with a message, as on the C side (die: it also removes the
// temporary output files).
template <class F>
static void guarded(F body) {
  try {
    body();
  } catch (const std::bad_alloc &) {
    die("out of memory");
  } catch (const std::exception &e) {
    die("%s", e.what());
  }
}

DdrModule::DdrModule(sc_module_name n, const GsArch *a) : sc_module(n) {
  channels.resize((size_t)std::max(1, a->ddr_channels));
  for (BwResource &c : channels) c.bytes_per_cycle = a->ddr_bytes_per_cycle / (double)channels.size();
  dram_on = a->ddr_model == DDR_DRAM;
  dt = timing_dram(a);
  dram.resize(channels.size());
  for (DramChannel &d : dram) d.reset(dt.banks);
}
GbModule::GbModule(sc_module_name n, const GsArch *a) : sc_module(n), buf(-1) {
  ports.resize((size_t)std::max(1, a->gb_ports));
  for (BwResource &p : ports) p.bytes_per_cycle = a->gb_port_bytes_per_cycle;
}
LbModule::LbModule(sc_module_name n, const GsCoreKind *k) : sc_module(n), buf(-1) {
  ports.resize((size_t)std::max(1, k->lb_ports));
  for (BwResource &p : ports) p.bytes_per_cycle = k->lb_port_bytes_per_cycle;
}
NocModule::NocModule(sc_module_name n, const GsArch *a) : sc_module(n) {
  link_in.resize((size_t)a->cores_per_cluster);
  link_out.resize((size_t)a->cores_per_cluster);
  for (BwResource &l : link_in) l.bytes_per_cycle = a->noc_link_bytes_per_cycle;
  for (BwResource &l : link_out) l.bytes_per_cycle = a->noc_link_bytes_per_cycle;
}

// Queue names as in assembly (sched/gtasm.c), e.g. "c0.k3.mme", "c0.dma1".
static std::string queue_name(const GsArch *a, int cluster, int core, int index) {
  GsQueue gq;
  memset(&gq, 0, sizeof gq);
  gq.cluster = cluster;
  gq.core = core;
  gq.index = index;
  char buf[96];
  return gtasm_queue_name(a, &gq, buf, sizeof buf);
}

// Adds queue slot (cluster, core, index) to the model; returns its id.
static int add_queue(SimModel &m, int cluster, int core, int index, int unit_kind) {
  QState q;
  q.cluster = cluster;
  q.core = core;
  q.index = index;
  q.unit_kind = unit_kind;
  q.name = queue_name(m.arch, cluster, core, index);
  m.queues.push_back(std::move(q));
  return (int)m.queues.size() - 1;
}

// The hierarchy is built top-down, each module constructing its children, so SystemC names
// are gtsim.c0.k1.mme etc.; queue slots and buffers are numbered in this construction order.
CoreModule::CoreModule(sc_module_name n, SimModel &m, int c, int k)
    : sc_module(n), kind(&m.arch->core_kinds[arch_core_kind_of(m.arch, k)]) {
  const GsArch *a = m.arch;
  lb.reset(new LbModule("lb", kind));
  Buffer l;
  l.name = "c" + std::to_string(c) + ".k" + std::to_string(k) + ".lb";
  l.level = LVL_LB;
  l.cluster = c;
  l.core = k;
  l.capacity = kind->lb_bytes;
  lb->buf = (int)m.mem.bufs.size();
  m.mem.bufs.push_back(l);
  first_queue = add_queue(m, c, k, Q_DMA_IN, -1);
  dma_in.reset(new DmaEngine("dma_in", first_queue));
  dma_out.reset(new DmaEngine("dma_out", add_queue(m, c, k, Q_DMA_OUT, -1)));
  for (int i = 0; i < kind->nunits; i++) {
    const GsUnitKind *u = &a->units[kind->unit[i]];
    int q = add_queue(m, c, k, Q_UNIT0 + i, kind->unit[i]);
    std::string un = u->name;  // a kind listing one unit twice gets "mme" and "mme_1"
    for (int j = 0; j < i; j++)
      if (kind->unit[j] == kind->unit[i]) un = std::string(u->name) + "_" + std::to_string(i);
    units.emplace_back(new UnitModule(un.c_str(), u, q));
  }
}

ClusterModule::ClusterModule(sc_module_name n, SimModel &m, int c) : sc_module(n) {
  const GsArch *a = m.arch;
  gb.reset(new GbModule("gb", a));
  gb->buf = m.gb_buffer(c);
  noc.reset(new NocModule("noc", a));
  link_in.bytes_per_cycle = link_out.bytes_per_cycle = a->cluster_link_bytes_per_cycle;
  for (int k = 0; k < a->cores_per_cluster; k++)
    cores.emplace_back(new CoreModule(("k" + std::to_string(k)).c_str(), m, c, k));
  first_dma_queue = (int)m.queues.size();
  for (int e = 0; e < a->dma_engines; e++) {
    int q = add_queue(m, c, -1, e, -1);
    dmas.emplace_back(new DmaEngine(("dma" + std::to_string(e)).c_str(), q));
  }
}

int64_t UnitModule::cycles(const GsInst &in) const {
  switch (in.op) {
  case I_GEMM:  // one of its reps
    return timing_matrix(kind, inst_gemm_m(&in), inst_gemm_n(&in), inst_gemm_k(&in),
                         (GsDtype)in.dtype);
  case I_VEC: return timing_vector(kind, (GsVop)in.sub, inst_vec_elems(&in), (GsDtype)in.dtype);
  case I_SCALAR: return timing_scalar(kind, inst_scalar_ops(&in));
  default: return -1;
  }
}

SC_HAS_PROCESS(SimModel);

SimModel::SimModel(sc_module_name n, const GsArch *a) : sc_module(n), arch(a) {
  ps_per_cycle_ = (double)sc_time(1, SC_NS).value();  // one cycle = one SystemC nanosecond
  ddr.reset(new DdrModule("ddr", a));
  Buffer dbuf;
  dbuf.name = "ddr";
  dbuf.level = LVL_DDR;
  dbuf.capacity = a->ddr_capacity_bytes;
  mem.bufs.push_back(dbuf);
  for (int c = 0; c < a->nclusters; c++) {
    Buffer g;
    g.name = "c" + std::to_string(c) + ".gb";
    g.level = LVL_GB;
    g.cluster = c;
    g.capacity = a->gb_bytes;
    mem.bufs.push_back(g);
  }
  for (int c = 0; c < a->nclusters; c++)
    clusters.emplace_back(new ClusterModule(("c" + std::to_string(c)).c_str(), *this, c));
  buffers_ = mem.bufs;
  for (const Buffer &b : buffers_) path_ends_.push_back(path_end(b));
  for (QState &q : queues) qnames.push_back(q.name);
  mem.queue_names = &qnames;
  mem.hb = &hb;
  for (QState &q : queues) {
    q.chan.resize(ddr->channels.size());
    q.pen.resize(ddr->channels.size());
  }
  SC_THREAD(controller);
  SC_METHOD(ready_step);
  sensitive << ready_ev_;
  dont_initialize();
  SC_METHOD(later_step);
  sensitive << later_ev_;
  dont_initialize();
  SC_METHOD(flow_method);
  sensitive << flow_ev_;
  dont_initialize();
  SC_METHOD(timer_step);
  sensitive << timer_ev_;
  dont_initialize();
}

SimModel::~SimModel() {
  for (QState &q : queues) prog_cursor_release(&q.cur);
}

int SimModel::core_queue(int cluster, int core, int index) const {
  if (cluster < 0 || cluster >= arch->nclusters || core < 0 || core >= arch->cores_per_cluster)
    return -1;
  const CoreModule *cm = core_mod(cluster, core);
  if (index < 0 || index >= 2 + cm->kind->nunits) return -1;
  return cm->first_queue + index;
}

int SimModel::cluster_dma_queue(int cluster, int engine) const {
  if (cluster < 0 || cluster >= arch->nclusters || engine < 0 || engine >= arch->dma_engines)
    return -1;
  return clusters[(size_t)cluster]->first_dma_queue + engine;
}

int SimModel::lb_buffer(int cluster, int core) const { return core_mod(cluster, core)->lb->buf; }

// The buffer an alloc instruction takes its bytes from.
int SimModel::alloc_buffer(const GsInst &in) const {
  int cluster = (int)inst_alloc_cluster(&in), core = (int)inst_alloc_core(&in);
  return in.sub == LVL_DDR ? 0 : in.sub == LVL_GB ? gb_buffer(cluster) : lb_buffer(cluster, core);
}

// Model time is counted in cycles from the start of the current run (start_ps_), so that a run
// computes the same numbers whatever ran before it in the process. It is now_ps_, which
// timer_step moves; the kernel's own time follows it at each of its notifications, and may lag
// behind it in between (timer_step).
double SimModel::now() const { return (double)(now_ps_ - start_ps_) / ps_per_cycle_; }

// Puts queue q to sleep until model time t (timer_step runs it then) and says so; false when t
// is not later than now (the queue goes on at once).
__attribute__((always_inline)) inline bool SimModel::sleep_until(QState &q, double t) {
  uint64_t target = start_ps_ + (uint64_t)timing_llround(t * ps_per_cycle_);
  if (target <= now_ps_) return false;
  wakeups_.insert({target, &q - queues.data()});
  if (!in_timer_) timer_arm();  // inside timer_step, which arms it as it returns
  return true;
}

// The kernel's notification for the earliest wake-up (a cancelled one too: timer_step drops
// it then). Inside timer_step, which arms it once when it returns, nothing.
void SimModel::timer_arm() {
  if (in_timer_ || wakeups_.empty()) return;
  uint64_t t = wakeups_.top().t;
  if (timer_armed_ && timer_at_ <= t) return;
  timer_ev_.notify(sc_time::from_value(t - sc_time_stamp().value()));  // replaces a later one
  timer_armed_ = true;
  timer_at_ = t;
}

// The timed wake-ups, instant by instant, as the kernel took its timed notifications when each
// sleeping queue had one of its own. It advances to the next instant as the kernel advanced its
// time: the cancelled entries on top are dropped (only then: that order of the heap's
// operations is what keeps same-instant order), and every entry due is taken in heap order
// before any runs. Then the flows' end runs first, then the queues in that order, then the
// queues they woke, by a signal or a flow's end (ready_run). When the kernel has nothing else
// to do at this instant (no delta notification), the next instant follows the same way, here:
// what the kernel would do next, without its time advance, its own heap and a process dispatch
// per instant. Otherwise it returns, and the kernel is notified for the next instant.
void SimModel::timer_step() {
  timer_armed_ = false;
  in_timer_ = true;
  auto cancelled = [&](const Wakeup &w) { return w.who < 0 && -1 - w.who != (int64_t)flow_token_; };
  // The kernel is asked whether anything else is due at this instant before each instant after
  // the first, and again only when the model has notified an event since it last said no
  // (notified_): nothing else it does makes kernel activity. idle_at: notified_ when it last
  // said no (never yet: another value).
  uint64_t idle_at = notified_ - 1;
  guarded([&]() {
    for (bool first = true;; first = false) {
      if (!first && idle_at != notified_) {
        if (sc_pending_activity_at_current_time()) break;
        idle_at = notified_;
      }
      while (!wakeups_.empty() && cancelled(wakeups_.top())) wakeups_.extract_top();
      if (wakeups_.empty()) break;
      uint64_t t = wakeups_.top().t;
      gs_assert(t > now_ps_);
      now_ps_ = t;
      Wakeup w = wakeups_.extract_top();
      if (w.who >= 0 && (wakeups_.empty() || wakeups_.top().t != t)) {
        run_due((int)w.who);  // the only one due (the commonest instant): no list
        if (!ready_.empty()) ready_run();
        continue;
      }
      bool flow_due = false;
      due_.clear();
      for (;;) {
        if (w.who >= 0) due_.push_back((int)w.who);
        else if (!cancelled(w)) flow_due = true;
        if (wakeups_.empty() || wakeups_.top().t != t) break;
        w = wakeups_.extract_top();
      }
      if (flow_due) flow_step();
      for (int qid : due_) run_due(qid);
      if (!ready_.empty()) ready_run();
    }
  });
  in_timer_ = false;
  timer_arm();
}

// Runs queue qid, due from its timed sleep. When that was a chunk of a transfer, the transfer
// goes on here (mov_stream) and the queue's method is entered only when it has ended: what
// queue_run would do, without its fetch and dispatch for every chunk. Under chunks, stage 3 is
// a chunk in flight (mov_stream alone sets it), so the instruction is not read: its line and
// the queue's phase were two of a chunk's ten L1 misses.
__attribute__((always_inline)) inline void SimModel::run_due(int qid) {
  QState &q = queues[(size_t)qid];
  if (!flows_on_ && q.x.stage == 3 && mov_stream(q, qid, q.pc)) return;
  queue_run(qid);
}

// Runs the woken queues in the order they were woken, and those they wake after them, until
// none is left: what the kernel did when every queue was a method its event made runnable
// (one runnable already is not made so again: QState::ready), at the same point, after the
// process that woke them. (The kernel's method for each queue, its dispatch and event
// triggers, cost 8% of the simulating thread: docs/speed.md, "Where the time goes".)
void SimModel::ready_run() {
  for (size_t i = 0; i < ready_.size(); i++) {  // (ready_ grows as queues wake others)
    int qid = ready_[i];
    queues[(size_t)qid].ready = false;
    queue_run(qid);
  }
  ready_.clear();
}

// The methods around it: the queues a run starts with (controller), those woken in a delta
// cycle (wake_all) and those a flow's end woke there (flow_step, when the end is now).
void SimModel::ready_step() {
  guarded([this]() { ready_run(); });
}
void SimModel::later_step() {
  guarded([this]() {
    ready_.insert(ready_.end(), later_.begin(), later_.end());
    later_.clear();
    ready_run();
  });
}
void SimModel::flow_method() {
  guarded([this]() {
    flow_step();
    ready_run();
  });
}

// Every queue asleep on a flag, barrier, semaphore or flow runs again in the next delta cycle:
// the run is over (an abort, a deadlock), and each finds so and ends.
void SimModel::wake_all() {
  bool any = false;
  for (size_t i = 0; i < queues.size(); i++) {
    QState &q = queues[i];
    if (q.wait == WK_NONE || q.ready) continue;
    q.ready = true;
    later_.push_back((int)i);
    any = true;
  }
  if (!any) return;
  notified_++;
  later_ev_.notify(SC_ZERO_TIME);
}

void SimModel::trace_occ(int buf) {
  for (auto &r : recorders_) r->occupancy(now() - start_, buf, occupancy_[(size_t)buf]);
}

std::string model_inst_text(const GsArch *a, const GsProgram *p, const GsInst &in) {
  char buf[512];
  gtasm_inst_format(a, p, &in, buf, sizeof buf);
  return buf;
}

// "PROGRAM: error: queue Q, instruction I (TEXT), at cycle C: MSG" (cycle: since the run's start)
std::string SimModel::located_error(int qid, size_t idx, const GsInst &in, double cycle,
                                    const std::string &msg) const {
  char cyc[64];
  snprintf(cyc, sizeof cyc, "), at cycle %.0f: ", std::ceil(cycle - 1e-9) + 0.0);
  return std::string(prog_name_) + ": error: queue " + queues[(size_t)qid].name +
         ", instruction " + std::to_string(idx) + " (" + model_inst_text(arch, prog_, in) + cyc +
         msg + "\n";
}

// A failure the model finds itself. A check handed over before it came first in simulation
// order: when one failed, that is the run's failure.
bool SimModel::fail(int qid, size_t idx, const std::string &msg) {
  if (abort_ || checks_failed()) return false;
  abort_ = true;
  error_cycle_ = now() - start_;
  error_ = located_error(qid, idx, *queues[(size_t)qid].cur.at, error_cycle_, msg);
  wake_all();
  return false;
}

// Waits for the checks of everything handed over; when one failed, the run stops with it.
bool SimModel::checks_failed() {
  checker_.drain();
  if (!checker_.failed()) return false;
  if (!abort_) {
    abort_ = true;
    error_ = checker_.error();
    error_cycle_ = checker_.error_cycle();
    wake_all();
  }
  return true;
}

// The model's view of region r (checker.h): allocated and freed as the model executes, without
// the checks' verdicts (a failed allocation stops the run before its view matters).
RegionView &SimModel::view(uint32_t r) {
  return r < views_.size() ? views_[r] : views_far_[r];
}
const RegionView &SimModel::view_of(uint32_t r) const {
  static const RegionView none;
  if (r < views_.size()) return views_[r];
  auto it = views_far_.find(r);
  return it != views_far_.end() ? it->second : none;
}

// Is the region of view v live, with pattern ap inside it? What a transfer needs to be timed
// before its checks have passed (its buffer, and no walk past the region's bytes); the checks
// decide the rest.
static bool view_live(const RegionView &v, const GsAccess &ap) {
  return v.state == RS_LIVE && memory_inside(ap, v.bytes);
}

// Compute units reach their own core's LB; a core without LB (Goya's GEMM core) its cluster GB.
// False, with *e the message, when region r is not.
bool SimModel::operand_place(const QState &q, uint32_t r, std::string *e) const {
  const Region &g = mem.region(r);
  if (g.state != RS_LIVE) return true;  // the read/write check reports it
  const CoreModule *cm = core_mod(q.cluster, q.core);
  int want = cm->kind->lb_bytes > 0 ? cm->lb->buf : gb_buffer(q.cluster);
  if (g.buf == want) return true;
  *e = "operand region " + mem.region_name(r) + " is in " + mem.bufs[(size_t)g.buf].name +
       ", but " + q.name + " can only reach " + mem.bufs[(size_t)want].name;
  return false;
}

// ---- The checks of an instruction's memory accesses (run by the checker, checker.h) ----

// A gemm reads a (m x k, or its packed taps' raw tile) and w (k x n) and writes (or accumulates
// into) r (m x n), all in the unit's reach. (These checks return false with *e the message.)
bool SimModel::check_gemm(const QState &q, const GsInst &in, Mark who, std::string *e) {
  int64_t es = isa_elem_bytes(&in);
  int64_t m = inst_gemm_m(&in), n = inst_gemm_n(&in), k = inst_gemm_k(&in);
  for (int i = 0; i < 3; i++)
    if (!operand_place(q, in.r[i], e)) return false;
  int64_t an = inst_gemm_a_elems(&in) ? inst_gemm_a_elems(&in) : m * k;  // packed taps: raw tile
  return mem.read(in.r[1], in.t[1], memory_range(0, an * es), who, e) &&
         mem.read(in.r[2], in.t[2], memory_range(0, k * n * es), who, e) &&
         mem.write(in.r[0], in.t[0], memory_range(0, m * n * es), who, in.flags & 1, true, e);
}

// A vec reads every operand with its named extent: a's a_elems (0: elems), b's b_elems; and
// writes the result from dst_off on.
bool SimModel::check_vec(const QState &q, const GsInst &in, Mark who, std::string *e) {
  int64_t es = isa_elem_bytes(&in);
  int64_t elems = inst_vec_elems(&in);
  int64_t out = isa_vop_out_elems((GsVop)in.sub, elems, inst_vec_param(&in));
  int64_t an = inst_vec_a_elems(&in) ? inst_vec_a_elems(&in) : elems;
  if (!operand_place(q, in.r[1], e) || (in.r[2] && !operand_place(q, in.r[2], e)) ||
      !operand_place(q, in.r[0], e))
    return false;
  return mem.read(in.r[1], in.t[1], memory_range(0, an * es), who, e) &&
         (!in.r[2] || mem.read(in.r[2], in.t[2], memory_range(0, inst_vec_b_elems(&in) * es), who, e)) &&
         mem.write(in.r[0], in.t[0], memory_range(inst_vec_dst_off(&in), out * es), who, false, true, e);
}

bool SimModel::check_access(int qid, size_t idx, const GsInst &in, std::string *e) {
  const QState &q = queues[(size_t)qid];
  Mark who = mark(qid, idx);
  switch (in.op) {
  case I_ALLOC:
    *e = mem.alloc(in.r[0], alloc_buffer(in), inst_alloc_offset(&in), inst_alloc_bytes(&in),
                   in.t[0], in.t[1], who);
    return e->empty();
  case I_FREE: *e = mem.free_region(in.r[0], who); return e->empty();
  case I_MOV: {
    // a gather first reads its index list (named: idx, idx_bytes), then the rows it selects
    GsAccess sp, dp;
    mov_patterns(in, &sp, &dp);
    return (!in.r[2] || mem.read(in.r[2], in.t[2], memory_range(0, inst_mov_idx_bytes(&in)), who, e)) &&
           mem.read(in.r[1], in.t[1], sp, who, e) && mem.write(in.r[0], in.t[0], dp, who, false, false, e);
  }
  case I_GEMM: return check_gemm(q, in, who, e);
  case I_VEC: return check_vec(q, in, who, e);
  default: return true;
  }
}

// Stage 0 issues the instruction; stage 1 is a rep in flight (q.x.reps left, this one included).
Step SimModel::exec_compute(QState &q, int qid, const GsInst &in, size_t idx) {
  QStep &x = q.x;
  if (x.stage == 1) {  // woke at the end of a rep
    q.busy += (double)x.d;
    for (auto &rec : recorders_)
      rec->activity(qid, x.t1 - start_, x.t1 + (double)x.d - start_,
                    isa_mnemonic((GsOpcode)in.op), idx);
    if (abort_) return STEP_STOP;
    x.reps--;
  } else {
    const UnitModule *unit = core_mod(q.cluster, q.core)->units[(size_t)(q.index - Q_UNIT0)].get();
    // prog_check rejected unsupported dtypes and negative sizes: a -1 here is a bug.
    x.d = unit->cycles(in);
    gs_assert(x.d >= 0);
    compute_issue(q, qid, in, idx, unit->kind);
    x.reps = isa_gemm_reps(&in);
    x.stage = 1;
  }
  // A gemm's reps run as that many copies of it in a row: a timed wait and an activity each,
  // so the run's events, and with them the order of queues woken at one instant (which decides
  // who takes a shared port first), are those of the copies.
  for (; x.reps > 0; x.reps--) {
    double t1 = now(), t2 = t1 + (double)x.d;
    if (past_limit(qid, idx, t2)) return STEP_STOP;
    x.t1 = t1;
    if (sleep_until(q, t2)) return STEP_SLEEP;
    q.busy += (double)x.d;
    for (auto &rec : recorders_)
      rec->activity(qid, t1 - start_, t2 - start_, isa_mnemonic((GsOpcode)in.op), idx);
    if (abort_) return STEP_STOP;
  }
  return STEP_DONE;
}

// A compute instruction's effects at issue: its checks handed over, its work and energy counted.
void SimModel::compute_issue(QState &q, int qid, const GsInst &in, size_t idx, const GsUnitKind *u) {
  GsDtype dt = (GsDtype)in.dtype;
  int64_t es = isa_elem_bytes(&in);  // operands as stored (the unit computes in dt)
  if (in.op != I_SCALAR) checker_.access(qid, idx, in, now() - start_);
  double rd = 0, wr = 0;  // operand bytes read and written (energy: actions.h)
  if (in.op == I_GEMM) {
    int64_t m = inst_gemm_m(&in), n = inst_gemm_n(&in), k = inst_gemm_k(&in);
    double reps = (double)isa_gemm_reps(&in);  // the checks of one rep are those of every rep
    rd = (double)((m * k + k * n + (in.flags & 1 ? m * n : 0)) * es) * reps;
    wr = (double)(m * n * es) * reps;
    q.macs += (double)m * (double)n * (double)k * reps;
    q.ideal += (double)m * (double)n * (double)k * reps / arch_unit_macs_per_cycle(u, dt);
  } else if (in.op == I_VEC) {
    GsVop op = (GsVop)in.sub;
    int64_t elems = inst_vec_elems(&in), param = inst_vec_param(&in);
    int64_t out = isa_vop_out_elems(op, elems, param);
    // energy (actions.h): every element of a the op reads (a window's again), of b as far as
    // elems reaches into it, and the results
    if (in.r[2]) rd += (double)std::min(elems * es, view_of(in.r[2]).bytes);
    rd += (double)(elems * es);
    wr = (double)(out * es);
  }
  actions_compute(&actions_, arch, q.unit_kind, q.core, in, rd, wr);
}

namespace {
// The port of a buffer a piece of a transfer goes through, other than `skip` when there is a
// choice (lowest index on a tie): under chunks the one that frees first, under flows the one
// with the fewest flows on it now.
// (Called for every chunk. The comparisons are selects, with the model's kind decided once: which
// port frees first follows the times, and as branches they mispredicted a sixth of the
// simulating thread's mispredictions. Every figure is finite, so the first port that is not
// `skip` wins against the start, as before.)
template <bool kFlows>
BwResource *pick_port(std::vector<BwResource> &ports, const BwResource *skip) {
  BwResource *best = nullptr;
  double best_v = std::numeric_limits<double>::infinity();
  for (BwResource *p = ports.data(), *end = p + ports.size(); p != end; p++) {
    double v = kFlows ? (double)p->fl_flows.size() : p->free_at;
    bool take = (p != skip) & (v < best_v);
    best = take ? p : best;
    best_v = take ? v : best_v;
  }
  return best;
}
}  // namespace

// One side of a mov as an access pattern: a stride of 0 means the row's (plane's) length.
static GsAccess mov_access(int64_t off, int64_t row, int64_t rows, int64_t stride, int64_t planes,
                           int64_t pstride) {
  GsAccess a{off, row, rows, stride ? stride : row, planes, 0};
  a.plane_stride = pstride ? pstride : rows * a.row_stride;
  return a;
}

// A mov's source and destination patterns; its bytes are a multiple of rows·planes, checked
// (exec_mov) before anyone asks.
void SimModel::mov_patterns(const GsInst &in, GsAccess *sp, GsAccess *dp) {
  int64_t rows = inst_mov_rows(&in) ? inst_mov_rows(&in) : 1;
  int64_t planes = inst_mov_planes(&in) ? inst_mov_planes(&in) : 1;
  int64_t row = inst_mov_bytes(&in) / (rows * planes);
  *sp = mov_access(inst_mov_src_off(&in), row, rows, inst_mov_src_stride(&in), planes,
                   inst_mov_src_pstride(&in));
  *dp = mov_access(inst_mov_dst_off(&in), row, rows, inst_mov_dst_stride(&in), planes,
                   inst_mov_dst_pstride(&in));
}

// Buffer b as an end of a transfer's path: DDR has no ports, a GB its cluster's, an LB its
// core's and the core's links to the cluster's NoC.
PathEnd SimModel::path_end(const Buffer &b) {
  PathEnd e;
  if (b.level == LVL_DDR) {
    e.latency = arch->ddr_latency_cycles;
  } else if (b.level == LVL_GB) {
    e.ports = &clusters[(size_t)b.cluster]->gb->ports;
    e.latency = arch->gb_latency_cycles;
  } else {
    CoreModule *cm = core_mod(b.cluster, b.core);
    NocModule *noc = clusters[(size_t)b.cluster]->noc.get();
    e.ports = &cm->lb->ports;
    e.latency = cm->kind->lb_latency_cycles;
    e.link_out = &noc->link_out[(size_t)b.core];
    e.link_in = &noc->link_in[(size_t)b.core];
  }
  return e;
}

// The path of a transfer between buffers SB and DB (both in buffers_): DDR channels by address
// (bytes per channel into q.chan, when an end is in DDR), GB/LB ports, NoC links, the cluster
// link, and the latency of its pieces. False when the path needs a link between clusters that
// the arch does not have (the message in *err).
bool SimModel::mov_path(QState &q, const Buffer *side[2], const GsAccess *pat[2],
                        const int64_t base[2], MovPath *mp, std::string *err) {
  const Buffer &SB = *side[0], &DB = *side[1];
  mp->latency = arch->dma_latency_cycles;
  mp->ddr = SB.level == LVL_DDR || DB.level == LVL_DDR;
  if (mp->ddr) {  // (most transfers on a chip with LBs move between GB and LB)
    std::fill(q.chan.begin(), q.chan.end(), 0.0);
    std::fill(q.pen.begin(), q.pen.end(), 0.0);
  }
  const PathEnd *end[2] = {&path_ends_[(size_t)(side[0] - buffers_.data())],
                           &path_ends_[(size_t)(side[1] - buffers_.data())]};
  for (int s = 0; s < 2; s++) {
    mp->ports[s] = end[s]->ports;
    if (side[s]->level == LVL_DDR) {
      GsAccess a = *pat[s];
      a.base += base[s];
      if (ddr->dram_on)  // the source side reads, the destination side writes
        timing_dram_side(a, arch->ddr_interleave_bytes, (int)q.chan.size(), arch->ddr_burst_bytes,
                         ddr->dt, s == 1, ddr->dram, q.chan, q.pen);
      else
        timing_ddr_pattern_bytes(a, arch->ddr_interleave_bytes, (int)q.chan.size(),
                                 arch->ddr_burst_bytes, q.chan);
    }
    mp->latency += end[s]->latency;
  }
  mp->same_buf = side[0] == side[1];
  mp->nlinks = 0;
  mp->noc = false;
  if (end[0]->link_out && !mp->same_buf) { mp->links[mp->nlinks++] = end[0]->link_out; mp->noc = true; }
  if (end[1]->link_in && !mp->same_buf) { mp->links[mp->nlinks++] = end[1]->link_in; mp->noc = true; }
  if (mp->noc) mp->latency += arch->noc_latency_cycles;
  mp->xcluster = SB.level != LVL_DDR && DB.level != LVL_DDR && SB.cluster != DB.cluster;
  if (mp->xcluster) {
    if (arch->cluster_link_bytes_per_cycle <= 0) {
      *err = "transfer from " + SB.name + " to " + DB.name +
             " needs a link between clusters, but cluster_link_bytes_per_cycle is 0 (go through DDR)";
      return false;
    }
    mp->links[mp->nlinks++] = &clusters[(size_t)SB.cluster]->link_out;
    mp->links[mp->nlinks++] = &clusters[(size_t)DB.cluster]->link_in;
    mp->latency += arch->cluster_link_latency_cycles;
  }
  return true;
}

// past_limit's failure (model.h): out of line, as it is taken once a run at most.
bool SimModel::limit_failed(int qid, size_t idx, double end) {
  char msg[200];
  snprintf(msg, sizeof msg, "it would end at cycle %.0f, past the %.0f cycles (2^43) a run may last",
           std::ceil(end), kModelMaxCycles);
  fail(qid, idx, msg);
  return true;
}

// The transfer's DDR channels into q.ddr_uses, each with its bytes and its non-data cycles
// (none without an end in DDR, whose q.chan and q.pen mov_path left as they were); returns
// the bytes. DRAM: the row misses and turnarounds, and refresh stretching all of the channel's
// time, data and penalties: (data + penalty)·refresh − data.
double SimModel::ddr_uses(QState &q, const MovPath &mp) {
  q.ddr_uses.clear();
  double total = 0;
  if (!mp.ddr) return total;
  for (size_t ch = 0; ch < q.chan.size(); ch++) {
    total += q.chan[ch];
    if (q.chan[ch] <= 0) continue;
    BwUse &u = q.ddr_uses.emplace_back();  // (filled in place: path_uses)
    u.res = &ddr->channels[ch];
    u.bytes = q.chan[ch];
    u.extra = ddr->dram_on ? q.chan[ch] / u.res->bytes_per_cycle * (ddr->dt.refresh - 1) +
                                 q.pen[ch] * ddr->dt.refresh
                           : 0;
  }
  return total;
}

// A copy inside a buffer of one port: it reads and writes through that port.
static bool one_port_copy(const MovPath &mp) {
  return mp.same_buf && mp.ports[0] && mp.ports[0]->size() == 1;
}

// The resources a piece of c bytes, the fraction f of the transfer, crosses, into q.uses: its
// share of the DDR channels (q.ddr_uses), the GB/LB ports (path_ports) and the links. Each use's
// fields are written where it lies: a use built aside and copied in was stored in 8-byte parts
// and read back in 16-byte ones, a stalled load per use (perf: a third of this function).
void SimModel::path_uses(QState &q, const MovPath &mp, double c, double f) {
  bool one_port = one_port_copy(mp);
  size_t nports =
      one_port ? 1 : (size_t)(mp.ports[0] != nullptr) + (size_t)(mp.ports[1] != nullptr);
  q.uses.resize(q.ddr_uses.size() + nports + (size_t)mp.nlinks);
  BwUse *u = q.uses.data();
  auto put = [&u](BwResource *r, double bytes, double extra) {
    u->res = r;
    u->bytes = bytes;
    u->extra = extra;
    timing_bw_ready(u++);
  };
  for (const BwUse &d : q.ddr_uses) put(d.res, d.bytes * f, d.extra * f);
  if (one_port) {
    // A copy inside a one-port buffer reads and writes through that port.
    put(&(*mp.ports[0])[0], 2.0 * c, 0);
  } else {
    for (size_t s = 0; s < nports; s++, u++) {  // path_ports picks and readies them
      u->bytes = c;
      u->extra = 0;
    }
    path_ports(q, mp, false);
  }
  for (int i = 0; i < mp.nlinks; i++) put(mp.links[i], c, 0);
}

// Use u on port p. A ready use is already on a port of p's buffer, whose ports all have one
// bandwidth: its figures stay.
template <bool kReady>
static void set_port(BwUse *u, BwResource *p) {
  u->res = p;
  if (!kReady) timing_bw_ready(u);
}

// The GB/LB ports of q.uses (after the DDR channels) picked again for the next piece (a copy
// inside one buffer reads through one port and writes through another); the rest of a piece of
// the same size is the same.
template <bool kFlows, bool kReady>
static void ports_into(BwUse *u, const MovPath &mp) {
  BwResource *p0 = mp.ports[0] ? pick_port<kFlows>(*mp.ports[0], nullptr) : nullptr;
  if (p0) set_port<kReady>(u++, p0);
  // (skip written only where there is one: with nullptr the choice is left without a test of
  // it, which GCC compiled as branches)
  if (mp.ports[1])
    set_port<kReady>(u, mp.same_buf ? pick_port<kFlows>(*mp.ports[1], p0)
                                    : pick_port<kFlows>(*mp.ports[1], nullptr));
}

// ready: q.uses hold this path's previous piece, of the same size (mov_stream).
__attribute__((always_inline)) inline void SimModel::path_ports(QState &q, const MovPath &mp, bool ready) {
  if (one_port_copy(mp)) return;
  BwUse *u = q.uses.data() + q.ddr_uses.size();
  if (flows_on_) ports_into<true, false>(u, mp);
  else if (ready) ports_into<false, true>(u, mp);
  else ports_into<false, false>(u, mp);
}

// Streams a transfer's chunks from q.x.t; each reserves its path (timing_bw_reserve) and
// the queue sleeps until it has passed, so a competing transfer's chunks interleave with this
// one's. The first chunk is requested only at q.x.t (the issue plus the latency): reserved at
// the issue, it would go before chunks other queues request in between, and leave its
// resources idle until q.x.t. q.x.stall adds the cycles its chunks waited for busy resources.
// Stage 1: not started; 2: streaming; 3: chunk q.x.c in flight until q.x.end. True while the
// queue sleeps.
__attribute__((always_inline)) inline bool SimModel::mov_stream(QState &q, int qid, size_t idx) {
  QStep &x = q.x;
  if (x.stage == 1) {
    x.stage = 2;
    if (!past_limit(qid, idx, x.t) && sleep_until(q, x.t)) return true;
  } else if (x.stage == 3) {
    x.t = x.end;
    x.left -= x.c;
    x.stage = 2;
  }
  while (x.left > 0 && !abort_) {
    int64_t c = std::min(chunk_, x.left);
    if (c == x.built) path_ports(q, x.mp, true);
    else path_uses(q, x.mp, (double)c, (double)c / (double)x.bytes);
    x.built = c;
    double start;
    // (the end kept in x.end alone: a local, live across sleep_until's call, was given a place
    // in memory for all its life, and the reservation's maxima went through it)
    x.end = timing_bw_reserve(q.uses.data(), (int)q.uses.size(), x.t, &start);
    if (past_limit(qid, idx, x.end)) break;
    x.stall += start - x.t;
    if (sleep_until(q, x.end)) {
      x.c = c;
      x.stage = 3;
      return true;
    }
    x.t = x.end;
    x.left -= c;
  }
  return false;
}

// The flow model (flow.h): from time q.x.t the transfer is one flow over its path; the queue
// sleeps until flow_step ends it. q.x.stall is the cycles it took beyond its time alone. Stage
// 1: not started; 2: its latency passed; 3: its flow in flight. True while the queue sleeps.
bool SimModel::mov_flow(QState &q, int qid, size_t idx) {
  QStep &x = q.x;
  if (x.stage == 1) {
    if (past_limit(qid, idx, x.t)) return false;
    x.stage = 2;
    if (sleep_until(q, x.t)) return true;
  }
  if (x.stage == 2) {
    if (x.bytes == 0 || abort_) return false;
    path_uses(q, x.mp, (double)x.bytes, 1);
    x.slot = flows_.add(x.t, qid, q.uses.data(), (int)q.uses.size());
    x.full = flows_.flow(x.slot).full;
    if (past_limit(qid, idx, x.t + x.full)) return false;
    flow_schedule(flows_.next_end());
    x.stage = 3;
  }
  // ended when the slot is free or another queue's flow took it (ended flows free their slot)
  const Flow &f = flows_.flow(x.slot);
  if (f.live && f.owner == qid && !abort_) {
    q.wait = WK_FLOW;
    return true;
  }
  q.wait = WK_NONE;
  x.stall = std::max(0.0, now() - x.t - x.full);
  return false;
}

// The kernel's wake-up for the next flow's end: one pending notification, the earliest; at this
// instant a delta notification (flow_method runs flow_step in the next delta cycle).
void SimModel::flow_schedule(double next) {
  flow_ev_.cancel();
  flow_token_++;  // cancels its entry in wakeups_
  if (next == std::numeric_limits<double>::infinity()) return;
  // rounded up, so that the flow has ended when the kernel wakes (FlowNet::step's slack)
  uint64_t target = start_ps_ + (uint64_t)std::ceil(next * ps_per_cycle_ - 1e-9);
  if (target <= now_ps_) {
    notified_++;
    flow_ev_.notify(SC_ZERO_TIME);
    return;
  }
  wakeups_.insert({target, -1 - (int64_t)flow_token_});
  timer_arm();
}

// Ends the flows due now and wakes their queues.
void SimModel::flow_step() {
  flow_done_.clear();
  double next = flows_.step(now(), &flow_done_);
  for (int w : flow_done_) wake(w);
  flow_schedule(next);
}

// Stage 0 issues the transfer (mov_begin); then it streams (mov_stream or mov_flow, stages 1-3)
// and completes (mov_end).
__attribute__((always_inline)) inline Step SimModel::exec_mov(QState &q, int qid, const GsInst &in,
                                                         size_t idx) {
  if (q.x.stage == 0 && !mov_begin(q, qid, in, idx)) return STEP_STOP;
  if (flows_on_ ? mov_flow(q, qid, idx) : mov_stream(q, qid, idx)) return STEP_SLEEP;
  if (abort_) return STEP_STOP;
  mov_end(q, qid, idx);
  return STEP_DONE;
}

// A transfer's checks handed over, its path and its DDR channels found (into q.x); false when
// the run stops.
bool SimModel::mov_begin(QState &q, int qid, const GsInst &in, size_t idx) {
  uint32_t rd = in.r[0], rs = in.r[1];
  int64_t bytes = inst_mov_bytes(&in);
  int64_t rows = inst_mov_rows(&in) ? inst_mov_rows(&in) : 1;
  int64_t planes = inst_mov_planes(&in) ? inst_mov_planes(&in) : 1;
  char msg[200];
  if (bytes < 0 || rows < 0 || planes < 0) return fail(qid, idx, "negative byte, row or plane count");
  if (bytes % (rows * planes)) {
    snprintf(msg, sizeof msg, "bytes %" PRId64 " is not a multiple of rows·planes = %" PRId64, bytes,
             rows * planes);
    return fail(qid, idx, msg);
  }
  GsAccess sp, dp;
  mov_patterns(in, &sp, &dp);
  double t0 = now();
  checker_.access(qid, idx, in, t0 - start_);
  // Timing it needs both regions, and walks the patterns: when the view says that is not
  // safe, the check just handed over fails (checker.h).
  const RegionView &S = view_of(rs), &D = view_of(rd);
  bool safe = view_live(S, sp) && view_live(D, dp) &&
              (!in.r[2] || view_live(view_of(in.r[2]), memory_range(0, inst_mov_idx_bytes(&in))));
  if (!safe) {
    bool failed = checks_failed();
    gs_assert(failed || abort_);
    return false;
  }
  QStep &x = q.x;
  x.side[0] = &buffers_[(size_t)S.buf];
  x.side[1] = &buffers_[(size_t)D.buf];
  const GsAccess *pat[2] = {&sp, &dp};
  const int64_t base[2] = {S.offset, D.offset};
  x.mp = MovPath();
  std::string e;
  if (!mov_path(q, x.side, pat, base, &x.mp, &e)) return fail(qid, idx, e);
  x.ddr_total = ddr_uses(q, x.mp);
  x.t0 = t0;
  x.bytes = x.left = bytes;
  x.built = 0;
  x.stall = 0;
  x.t = t0 + x.mp.latency;
  x.stage = 1;
  return true;
}

// A transfer's end (the last chunk's or the flow's, as the kernel woke at it): traffic, energy,
// stats and traces.
void SimModel::mov_end(QState &q, int qid, size_t idx) {
  const QStep &x = q.x;
  const MovPath &mp = x.mp;
  double t0 = x.t0, t1 = now();
  const Buffer &SB = *x.side[0], &DB = *x.side[1];
  double b = (double)x.bytes;
  if (SB.level == LVL_DDR) traffic_.ddr_read += b;
  if (DB.level == LVL_DDR) traffic_.ddr_write += b;
  if (SB.level == LVL_GB) traffic_.gb_read += b;
  if (DB.level == LVL_GB) traffic_.gb_write += b;
  if (SB.level == LVL_LB) traffic_.lb_read += b;
  if (DB.level == LVL_LB) traffic_.lb_write += b;
  if (mp.noc) traffic_.noc += b;
  if (mp.noc && SB.level == LVL_LB && DB.level == LVL_LB) traffic_.noc_lb_lb += b;
  if (mp.xcluster) traffic_.cluster_link += b;
  traffic_.ddr_burst += x.ddr_total;
  traffic_.ddr_since_episode += (SB.level == LVL_DDR ? b : 0) + (DB.level == LVL_DDR ? b : 0);
  actions_transfer(&actions_, arch, SB, DB, mp.noc, mp.xcluster, b);
  q.stall_data += mp.latency;
  q.stall_res += x.stall;
  q.busy += (t1 - t0) - mp.latency - x.stall;
  for (auto &r : recorders_) {
    r->activity(qid, t0 - start_, t1 - start_, "mov", idx);
    r->traffic(t0 - start_, t1 - start_, (SB.level == LVL_DDR ? b : 0) + (DB.level == LVL_DDR ? b : 0),
               mp.noc ? b : 0);
  }
}

// The key of a barrier or semaphore: chip-wide ids, or ids per cluster (ids < 2^41, clusters
// < 2^16: prog_check bounds them), ordered cluster by cluster, then the chip's.
uint64_t model_sync_key(int scope, int cluster, int64_t id) {
  return (scope == SCOPE_CHIP ? 1ull << 63 : (uint64_t)cluster << 44) | (uint64_t)id;
}

// Its name in messages: "chip#ID" or "cCLUSTER#ID".
std::string model_sync_name(uint64_t key) {
  char name[64];
  uint64_t id = key & ((1ull << 44) - 1);
  if (key >> 63) snprintf(name, sizeof name, "chip#%" PRIu64, id);
  else snprintf(name, sizeof name, "c%" PRIu64 "#%" PRIu64, key >> 44, id);
  return name;
}

// Stage 1: waiting for the last arrival.
Step SimModel::sync_barrier(QState &q, int qid, const GsInst &in, size_t idx) {
  QStep &x = q.x;
  if (x.stage == 1) {
    if (abort_) return STEP_STOP;
    if (x.sync->generation == x.gen) return STEP_SLEEP;  // woken by something else
    q.wait = WK_NONE;
    q.stall_flag += now() - x.t0;
    return STEP_DONE;
  }
  double t0 = now();
  int64_t count = inst_barrier_count(&in);
  uint64_t key = model_sync_key(in.sub, q.cluster, inst_barrier_id(&in));
  SyncObj &b = barriers_[key];
  if (count <= 0) {
    fail(qid, idx, "barrier count must be positive");
    return STEP_STOP;
  }
  if (b.arrived > 0 && b.count != count) {
    char msg[200];
    snprintf(msg, sizeof msg, "barrier %s: this queue arrives with count %" PRId64 ", but the "
             "%" PRId64 " queue(s) already waiting arrived with count %" PRId64, model_sync_name(key).c_str(), count,
             b.arrived, b.count);
    fail(qid, idx, msg);
    return STEP_STOP;
  }
  b.count = count;
  b.arrived++;
  checker_.barrier_arrive(qid, key);
  if (b.arrived == b.count) {
    b.generation++;
    b.arrived = 0;
    checker_.barrier_acquire(qid, key);
    for (int w : b.waiters) {
      checker_.barrier_acquire(w, key);  // the waiters are blocked: their clocks stand still
      wake(w);
    }
    b.waiters.clear();
    checker_.barrier_clear(key);
    if (in.sub == SCOPE_CHIP) {
      checker_.floor();  // lets the access logs drop what every queue is ordered after
      episodes_.push_back({(uint64_t)std::ceil(t0 - start_ - 1e-9), (uint64_t)traffic_.ddr_since_episode, -1});
      episode_actions_.push_back(actions_);
      traffic_.ddr_since_episode = 0;
    } else {
      cluster_episodes_.push_back({(uint64_t)std::ceil(t0 - start_ - 1e-9), 0, q.cluster});
      if (q.cluster == 0) cluster_episode_actions_.push_back(actions_);  // what the report uses
    }
    if (in.sub == SCOPE_CHIP || q.cluster == 0)
      for (auto &r : recorders_) r->episode(t0 - start_);
    return STEP_DONE;
  }
  b.waiters.push_back(qid);
  x.sync = &b;  // a node of barriers_: it stays where it is
  x.gen = b.generation;
  x.t0 = t0;
  x.stage = 1;
  q.wait = WK_BARRIER;
  q.wait_key = key;
  return STEP_SLEEP;
}

// A flag or semaphore wait's step begins: woken (stage 1), its sleep is over, and false when the
// run was aborted meanwhile; else (stage 0) the wait starts now.
bool SimModel::wait_begin(QState &q) {
  if (q.x.stage != 1) {
    q.x.t0 = now();
    return true;
  }
  q.wait = WK_NONE;
  return !abort_;
}

// Stage 1: a semwait waiting for a post.
Step SimModel::sync_sem(QState &q, int qid, const GsInst &in) {
  QStep &x = q.x;
  if (!wait_begin(q)) return STEP_STOP;
  if (x.stage == 0) {
    int64_t id = in.op == I_SEMPOST ? inst_sempost_id(&in) : inst_semwait_id(&in);
    x.key = model_sync_key(in.sub, q.cluster, id);
  }
  uint64_t key = x.key;
  SyncObj &s = sems_[key];
  if (in.op == I_SEMPOST) {
    s.count++;
    s.from_dma = q.unit_kind < 0;
    s.last_from = qid;
    checker_.sem_post(qid, key);
    for (int w : s.waiters) wake(w);
    s.waiters.clear();
    return STEP_DONE;
  }
  if (s.count == 0) {
    s.waiters.push_back(qid);
    q.wait = WK_SEM;
    q.wait_key = key;
    x.stage = 1;
    return STEP_SLEEP;
  }
  s.count--;
  checker_.sem_wait(qid, key);
  // a DMA queue posts when data has arrived: waiting on data; a unit, when a buffer is free
  if (s.from_dma) q.stall_data += now() - x.t0;
  else q.stall_flag += now() - x.t0;
  // Back at zero with nobody waiting, it is what a semaphore never used is (its next post sets
  // the rest): dropped, so that the map holds the semaphores in use, not every id the program
  // ever named (18 k on ViT-B/16 graphturbo, each lookup a walk of 14 nodes).
  if (s.count == 0 && s.waiters.empty()) sems_.erase(key);
  return STEP_DONE;
}

// Increments flag `flag` of queue `queue` of q's core (or cluster, for a cluster DMA queue).
void SimModel::flag_signal(QState &q, int qid, int queue, int64_t flag) {
  int t = q.core >= 0 ? core_queue(q.cluster, q.core, queue) : cluster_dma_queue(q.cluster, queue);
  QState &tq = queues[(size_t)t];
  QState::Flag &f = tq.flag(flag);
  f.count++;
  f.from_dma = q.unit_kind < 0;
  f.last_from = qid;
  checker_.flag_release(qid, t, flag);
  if (tq.wait != WK_NONE) wake(t);  // else nobody sleeps on it (queue_run)
}

// Waits until q's flag `flag` is non-zero and decrements it. Stage 1: waiting.
Step SimModel::flag_wait(QState &q, int qid, int64_t flag) {
  QStep &x = q.x;
  if (!wait_begin(q)) return STEP_STOP;
  QState::Flag *f = q.find_flag(flag);
  if (f && f->count > 0) {
    f->count--;
    checker_.flag_acquire(qid, flag);
    // Waiting for a DMA queue's signal is waiting for data to arrive; for a unit's, for a
    // buffer or a result (a flag stall).
    if (f->from_dma) q.stall_data += now() - x.t0;
    else q.stall_flag += now() - x.t0;
    return STEP_DONE;
  }
  q.wait = WK_FLAG;
  q.wait_id = flag;
  x.stage = 1;
  return STEP_SLEEP;
}

// One step of instruction in: to its end, or until the queue must sleep.
__attribute__((always_inline)) inline Step SimModel::exec(QState &q, int qid, const GsInst &in,
                                                     size_t idx) {
  switch (in.op) {
  case I_ALLOC: {
    int b = alloc_buffer(in);
    checker_.access(qid, idx, in, now() - start_);
    RegionView &v = view(in.r[0]);
    if (v.state != RS_LIVE) {  // else the check fails: already allocated
      v = RegionView{RS_LIVE, in.t[1] != 0, b, inst_alloc_offset(&in), inst_alloc_bytes(&in)};
      occupancy_[(size_t)b] += v.bytes;
    }
    if (!recorders_.empty()) trace_occ(b);
    return STEP_DONE;
  }
  case I_FREE: {
    checker_.access(qid, idx, in, now() - start_);
    RegionView &v = view(in.r[0]);
    if (v.state != RS_LIVE || v.final) return STEP_DONE;  // the check fails
    v.state = RS_FREED;
    occupancy_[(size_t)v.buf] -= v.bytes;
    if (!recorders_.empty()) trace_occ(v.buf);
    return STEP_DONE;
  }
  case I_MOV: return exec_mov(q, qid, in, idx);
  case I_GEMM:
  case I_VEC:
  case I_SCALAR: return exec_compute(q, qid, in, idx);
  case I_SIGNAL:
    flag_signal(q, qid, in.sub, inst_signal_flag(&in));
    return STEP_DONE;
  case I_WAIT: return flag_wait(q, qid, inst_wait_flag(&in));
  case I_BARRIER: return sync_barrier(q, qid, in, idx);
  case I_SEMPOST:
  case I_SEMWAIT: return sync_sem(q, qid, in);
  default: die("opcode %d out of range", in.op);
  }
}

// A queue's method: runs the queue's instructions in order from where it slept, until one must
// sleep again or the queue ends.
void SimModel::queue_run(int qid) {
  QState &q = queues[(size_t)qid];
  if (q.phase == QState::ENDED) return;  // woken after it stopped (an aborted run's wake_all)
  size_t n = (size_t)q.prog->ninsts;
  for (;;) {
    if (q.phase == QState::FETCH) {
      size_t i = q.in ? q.pc + 1 : 0;
      if (i >= n || abort_ || (checker_.failed() && checks_failed())) return queue_done(q, qid);
      q.pc = i;
      q.in = prog_cursor_next(&q.cur);
      q.x.stage = 0;
      q.phase = q.in->wait ? QState::OWN_WAIT : QState::EXEC;  // its own waits and signal: GsInst
    }
    const GsInst &in = *q.in;
    Step st = q.phase == QState::EXEC       ? exec(q, qid, in, q.pc)
              : q.phase == QState::OWN_WAIT ? flag_wait(q, qid, in.wait - 1)
                                            : flag_wait(q, qid, in.wait2 - 1);
    if (st == STEP_SLEEP) return;
    if (st == STEP_STOP) return queue_done(q, qid);
    q.x.stage = 0;
    if (q.phase != QState::EXEC) {  // (wait2 only with wait: prog_check)
      q.phase = q.phase == QState::OWN_WAIT && in.wait2 ? QState::OWN_WAIT2 : QState::EXEC;
      continue;
    }
    if (in.signal) flag_signal(q, qid, in.signal - 1, in.signal_flag);
    if (in.signal2) flag_signal(q, qid, in.signal2 - 1, in.signal2_flag);  // (only with signal)
    q.ninst++;
    if ((++executed_ & (kProgressEvery - 1)) == 0 && progress_) progress_(executed_, total_);
    if (q.pc + 1 == n) q.done = true;
    q.phase = QState::FETCH;
  }
}

void SimModel::queue_done(QState &q, int qid) {
  q.phase = QState::ENDED;
  q.end = now();
  checker_.retire(qid);
  running_--;
}

// Starts each run: every queue with instructions runs, in slot order (ready_step, once this
// thread waits again), as it did when each was a method made runnable here.
void SimModel::controller() {
  for (;;) {
    wait(start_ev_);
    guarded([this]() {
      for (size_t i = 0; i < queues.size(); i++) {
        QState &q = queues[i];
        if (!q.prog || q.prog->ninsts == 0) continue;
        prog_cursor_release(&q.cur);
        prog_cursor_init(&q.cur, q.prog);
        wake((int)i);
      }
    });
    ready_ev_.notify();
  }
}
