// sim.cpp — Simulator: elaborates the model once, then runs programs one after another.
// A run: reset every piece of model state, check the program statically, attach its queues to
// the queue slots, wake the controller (which spawns one thread per non-empty queue), and let the
// kernel run until it has no events left. Queues still unfinished then are deadlocked: they are
// reported, released with abort_ and drained by a second sc_start, so the next run starts clean.
#include "sim.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "actions.h"
#include "model.h"
#include "trace.h"

using namespace sc_core;

static bool g_simulator_exists = false;

Simulator::Simulator(const GsArch *a) : arch_(a) {
  if (g_simulator_exists)
    die("a second Simulator in one process: SystemC elaborates once (see sim/sim.h)");
  g_simulator_exists = true;
  model_.reset(new SimModel("gtsim", a));
}

Simulator::~Simulator() = default;

int Simulator::run(const GsProgram *p, const SimOptions &o, SimResult *r) {
  return model_->run(p, o, r);
}

// The static checks are prog_check's (sched/prog_check.c: queues, units, cores, clusters,
// engines, ids, dtypes the units support); its messages are collected here, unless the caller
// ran it against this arch already (`checked`: SimOptions::checked_against). Then every program
// queue is bound to its queue slot. Returns the run's status: 0, GS_EXIT_SIM (a check failed)
// or GS_EXIT_INPUT (more queues than the simulator runs), the message in *msg.
int SimModel::static_check(const GsProgram *p, bool checked, std::string *err) {
  if (!checked) {
    int rc = prog_check_collect(p, err);
    if (rc != 0) return rc;
  }
  return bind_queues(p, err);
}

// prog_check with its messages in *err.
int SimModel::prog_check_collect(const GsProgram *p, std::string *err) {
  char *buf = nullptr;
  size_t len = 0;
  FILE *ms = open_memstream(&buf, &len);
  if (!ms) die("open_memstream failed");
  GsDiag d;
  diag_init(&d);
  d.out = ms;
  d.max_errors = 20;
  int rc = prog_check(p, arch, &d, prog_name_);
  fclose(ms);
  std::string msg(buf ? buf : "", len);
  free(buf);
  if (rc != 0) {
    *err = msg.empty() ? std::string(prog_name_) + ": error: the program fails its static checks\n" : msg;
    return GS_EXIT_SIM;
  }
  return 0;
}

// Binds every program queue to its queue slot.
int SimModel::bind_queues(const GsProgram *p, std::string *err) {
  for (int i = 0; i < p->nqueues; i++) {
    const GsQueue &gq = p->queues[i];
    int slot = gq.core >= 0 ? core_queue(gq.cluster, gq.core, gq.index) : cluster_dma_queue(gq.cluster, gq.index);
    gs_assert(slot >= 0 && !queues[(size_t)slot].prog);  // prog_check guarantees both
    queues[(size_t)slot].prog = &gq;
  }
  std::vector<int> dense(queues.size(), -1);
  int n = 0;
  for (size_t i = 0; i < queues.size(); i++)
    if (queues[i].prog) dense[i] = n++;
  if (n > kMaxQueues) {
    *err = std::string(prog_name_) + ": error: the program uses " + std::to_string(n) +
           " queues; the simulator runs at most " + std::to_string(kMaxQueues) +
           " (its race checks keep a clock of one epoch per queue for every queue: 4·N² bytes)\n";
    return GS_EXIT_INPUT;
  }
  hb.reset(dense, n);
  return 0;
}

std::string SimModel::deadlock_report() {
  std::string s = std::string(prog_name_) + ": error: deadlock: the program cannot continue; blocked queues:\n";
  for (QState &q : queues) {
    if (!q.prog || q.done || q.prog->ninsts == 0) continue;
    // (every queue fetches its first instruction as the run starts: at is set here)
    std::string text = q.cur.at ? model_inst_text(arch, prog_, *q.cur.at) : "not started";
    std::string what;
    switch (q.wait) {
    case WK_FLAG: {
      what = "waits for flag " + std::to_string(q.wait_id) + " (never signalled)";
      break;
    }
    case WK_BARRIER: {
      const SyncObj &b = barriers_[q.wait_key];
      what = "waits at barrier " + model_sync_name(q.wait_key) + " (" + std::to_string(b.arrived) + " of " +
             std::to_string(b.count) + " arrived)";
      break;
    }
    case WK_SEM: what = "waits for semaphore " + model_sync_name(q.wait_key) + " (value 0)"; break;
    default: what = "blocked"; break;
    }
    s += "    queue " + q.name + ", instruction " + std::to_string(q.pc) + " (" + text + "): " + what + "\n";
  }
  return s;
}

// The end-of-run checks (docs/timing.md, "At the end of the run"): every program output holds its
// final tile in all its bytes, and no flag or semaphore has a count left (a signal or post that
// no wait consumed). Every problem is listed; an empty string when there is none.
std::string SimModel::end_report() {
  std::string lines = mem.outputs_check();
  for (const QState &q : queues)
    q.each_flag([&](int64_t id, const QState::Flag &f) {
      if (f.count <= 0) return;
      lines += "flag " + std::to_string(id) + " of queue " + q.name + " has " +
               std::to_string(f.count) + " signal(s) that no wait consumed (the last from " +
               qnames[(size_t)f.last_from] + ")\n";
    });
  for (const auto &s : sems_) {
    if (s.second.count <= 0) continue;
    lines += "semaphore " + model_sync_name(s.first) + " has " + std::to_string(s.second.count) +
             " post(s) that no semwait consumed (the last from " +
             qnames[(size_t)s.second.last_from] + ")\n";
  }
  if (lines.empty()) return "";
  std::string s = std::string(prog_name_) + ": error: at the end of the run:\n";
  size_t at = 0;
  while (at < lines.size()) {
    size_t nl = lines.find('\n', at);
    s += "    " + lines.substr(at, nl + 1 - at);
    at = nl + 1;
  }
  return s;
}

static std::string fmt(const char *f, const std::string &a) {
  char b[160];
  snprintf(b, sizeof b, f, a.c_str());
  return b;
}

// ddr.model = dram: what the channels lost to the DRAM (docs/timing.md, "DRAM efficiency").
void SimModel::register_dram_stats(SimStats &st) const {
  uint64_t bursts = 0, misses = 0, turns = 0;
  double data = 0, busy = 0;
  for (size_t c = 0; c < ddr->channels.size(); c++) {
    const DramChannel &d = ddr->dram[c];
    bursts += d.bytes / (uint64_t)std::max(1, arch->ddr_burst_bytes);
    misses += d.misses;
    turns += d.turnarounds;
    data += (double)ddr->channels[c].bytes / ddr->channels[c].bytes_per_cycle;
    busy += ddr->channels[c].busy;
  }
  st.add("ddr.row_misses", "count", "rows opened: accesses to a bank whose open row was another or none",
         (double)misses);
  st.add("ddr.row_hit_rate", "ratio", "DDR bursts that found their row open / DDR bursts",
         bursts ? (double)(bursts - misses) / (double)bursts : 0);
  st.add("ddr.turnarounds", "count", "times a channel turned between reading and writing", (double)turns);
  st.add("ddr.efficiency", "ratio",
         "DDR channels' data cycles (bytes / bandwidth) / busy cycles (with row misses, turnarounds, refresh)",
         busy > 0 ? data / busy : 1);
}

void SimModel::register_stats(SimResult *r, double cycles) {
  SimStats &st = r->stats;
  st.clear();
  double cyc = cycles > 0 ? cycles : 1;
  st.add("cycles", "cycles", "total cycles of the run (last queue's end - start)", cycles);
  st.add("time_s", "s", "cycles at the chip clock", cycles / (arch->clock_mhz * 1e6));
  st.add("clock_mhz", "MHz", "chip clock", arch->clock_mhz);
  st.add("instructions", "count", "instructions executed", (double)r->instructions);
  st.add("chunk_bytes", "B", "transfer chunk size (chip.chunk_bytes; docs/timing.md)", (double)chunk_);
  st.add("ddr.read_bytes", "B", "bytes read from DDR by transfers", traffic_.ddr_read);
  st.add("ddr.write_bytes", "B", "bytes written to DDR by transfers", traffic_.ddr_write);
  st.add("ddr.burst_bytes", "B", "DDR bytes after rounding every access out to whole bursts", traffic_.ddr_burst);
  st.add("ddr.utilization", "ratio", "DDR burst bytes / (DDR bytes per cycle x cycles)",
         traffic_.ddr_burst / (arch->ddr_bytes_per_cycle * cyc));
  for (size_t c = 0; c < ddr->channels.size(); c++)
    st.add("ddr.ch" + std::to_string(c) + ".utilization", "ratio", "busy cycles of DDR channel / cycles",
           ddr->channels[c].busy / cyc);
  if (ddr->dram_on) register_dram_stats(st);
  st.add("gb.read_bytes", "B", "bytes read from global buffers by transfers", traffic_.gb_read);
  st.add("gb.write_bytes", "B", "bytes written to global buffers by transfers", traffic_.gb_write);
  st.add("lb.read_bytes", "B", "bytes read from local buffers by transfers", traffic_.lb_read);
  st.add("lb.write_bytes", "B", "bytes written to local buffers by transfers", traffic_.lb_write);
  st.add("noc.bytes", "B", "bytes through the in-cluster interconnect", traffic_.noc);
  st.add("noc.lb_to_lb_bytes", "B", "of those, bytes from one core's LB to another core's LB",
         traffic_.noc_lb_lb);
  st.add("cluster_link.bytes", "B", "bytes over links between clusters", traffic_.cluster_link);
  st.add("episodes", "count", "chip-scope barrier episodes", (double)episodes_.size());
  for (const QState &q : queues) {
    if (!q.prog || q.prog->ninsts == 0) continue;
    std::string p = "q." + q.name;
    st.add(p + ".instructions", "count", fmt("instructions executed by %s", q.name).c_str(), (double)q.ninst);
    st.add(p + ".busy_cycles", "cycles", "cycles computing or streaming data", q.busy);
    st.add(p + ".utilization", "ratio", "busy cycles / run cycles", q.busy / cyc);
    st.add(p + ".stall_data_cycles", "cycles",
           "cycles waiting on data: transfer latency, or a flag/semaphore last set by a DMA queue", q.stall_data);
    st.add(p + ".stall_flag_cycles", "cycles",
           "cycles waiting on a flag/semaphore set by a unit queue, or at a barrier", q.stall_flag);
    st.add(p + ".stall_resource_cycles", "cycles", "cycles a transfer waited for a busy shared resource",
           q.stall_res);
    if (q.macs > 0) {
      st.add(p + ".macs", "MAC", "multiply-accumulates done", q.macs);
      st.add(p + ".mac_utilization", "ratio", "MACs / (peak MACs per cycle x run cycles)", q.ideal / cyc);
    }
  }
  actions_register_stats(arch, actions_, cycles / (arch->clock_mhz * 1e6), st);
  for (const Buffer &b : mem.bufs) {
    if (b.peak == 0) continue;
    st.add("buf." + b.name + ".peak_bytes", "B", "peak allocated bytes", (double)b.peak);
    st.add("buf." + b.name + ".peak_ratio", "ratio", "peak allocated bytes / capacity",
           (double)b.peak / (double)b.capacity);
  }
}

// Every piece of model state back to its initial value, the resource clocks at the run's start.
void SimModel::reset_run(const GsProgram *p, const SimOptions &o) {
  prog_ = p;
  prog_name_ = o.program_name ? o.program_name : "program";
  progress_ = o.progress;
  executed_ = 0;
  total_ = (uint64_t)prog_ninsts(p);
  abort_ = false;
  error_.clear();
  barriers_.clear();
  sems_.clear();
  traffic_ = Traffic();
  actions_ = GsActions();
  episode_actions_.clear();
  cluster_episode_actions_.clear();
  episodes_.clear();
  cluster_episodes_.clear();
  recorders_.clear();
  for (QState &q : queues) q.reset();
  mem.reset(p);
  // dense for the ids a scheduler hands out (ResNet-50 at batch 64: 15429), a map past 2^20
  // (a hand-written program may name region 67108863: test_sim_limits)
  views_.assign(p ? std::min((size_t)p->nregions, (size_t)1 << 20) : 0, RegionView());
  views_far_.clear();
  occupancy_.assign(mem.bufs.size(), 0);
  start_ps_ = now_ps_ = sc_time_stamp().value();
  start_ = now();
  flows_.reset(start_);
  flow_ev_.cancel();
  flow_token_++;
  wakeups_.clear();  // empty already: every run goes on until the kernel has no events left
  ready_.clear();    // (so are these)
  later_.clear();
  timer_ev_.cancel();
  timer_armed_ = false;
  std::vector<BwResource *> all;
  for (BwResource &c : ddr->channels) all.push_back(&c);
  for (DramChannel &d : ddr->dram) d.reset(ddr->dt.banks);  // every run starts with rows closed
  for (auto &cm : clusters) {
    for (BwResource &x : cm->gb->ports) all.push_back(&x);
    for (BwResource &x : cm->noc->link_in) all.push_back(&x);
    for (BwResource &x : cm->noc->link_out) all.push_back(&x);
    all.push_back(&cm->link_in);
    all.push_back(&cm->link_out);
    for (auto &core : cm->cores)
      for (BwResource &x : core->lb->ports) all.push_back(&x);
  }
  for (BwResource *x : all) {
    x->reset();
    x->free_at = start_;  // resource clocks start at this run's start
  }
}

// The transfer chunk size: the option (the CLI applies GTSIM_CHUNK_BYTES to it), else the
// config's chip.chunk_bytes; an arch built by hand without one is a bug. And the transfer model
// (chip.transfer_model: chunks, or flows).
bool SimModel::choose_chunk(const SimOptions &o, SimResult *r) {
  (void)r;
  chunk_ = o.chunk_bytes > 0 ? o.chunk_bytes : arch->chunk_bytes;
  flows_on_ = arch->transfer_model == XFER_FLOW;
  if (chunk_ <= 0)
    die("transfer chunk of %lld bytes: an arch built by hand must set chunk_bytes", (long long)chunk_);
  return true;
}

// The trace recorders the options ask for, told every buffer and used queue; false when a file
// cannot be opened (the message in r).
bool SimModel::open_recorders(const SimOptions &o, SimResult *r) {
  std::string err;
  TraceView v;
  v.from = o.trace_from;
  v.to = o.trace_to;
  v.instructions = o.perfetto_instructions;
  v.names = o.episode_names;
  if (o.trace_path) {
    auto t = trace_gtt_open(o.trace_path, arch->clock_mhz, v, &err);
    if (!t) { r->status = GS_EXIT_INPUT; r->message = err; return false; }
    recorders_.push_back(std::move(t));
  }
  if (o.perfetto_path) {
    auto t = trace_perfetto_open(o.perfetto_path, arch->clock_mhz, v, &err);
    if (!t) { r->status = GS_EXIT_INPUT; r->message = err; return false; }
    recorders_.push_back(std::move(t));
  }
  for (auto &rec : recorders_) {
    for (size_t b = 0; b < mem.bufs.size(); b++)
      if (mem.bufs[b].capacity > 0) rec->buffer((int)b, mem.bufs[b].name, mem.bufs[b].capacity);
    for (size_t q = 0; q < queues.size(); q++)
      if (queues[q].prog && queues[q].prog->ninsts) rec->queue((int)q, queues[q].name);
  }
  return true;
}

// Runs the kernel until it has no events left, the checks beside it (checker.h); a check that
// failed stops the run, and queues it left blocked are released with abort_ and drained.
// Queues unfinished otherwise are deadlocked: reported, released and drained likewise. Then the
// end-of-run checks when nothing failed before.
void SimModel::simulate(bool checks_thread) {
  running_ = 0;
  for (QState &q : queues)
    if (q.prog && q.prog->ninsts) running_++;
  // The first sc_start initialises the kernel (the controller reaches its wait); only then does a
  // pending notification count as activity for the run-to-starvation sc_start below.
  if (sc_get_status() == SC_ELABORATION) sc_start(SC_ZERO_TIME);
  bool two = SimChecker::second_core();
  checker_.start(checks_thread && two);
  checks_where_ = !checks_thread ? "inline (as asked)"
                  : !two         ? "inline (one core)"
                  : checker_.on_thread()
                      ? "on a second core"
                      : std::string("inline (no thread: ") + strerror(checker_.start_error()) + ")";
  start_ev_.notify(SC_ZERO_TIME);
  sc_start();
  if (!abort_ && checks_failed() && running_ > 0) sc_start();  // release the blocked queues
  if (!abort_ && running_ > 0) {
    error_ = deadlock_report();
    error_cycle_ = now() - start_;
    abort_ = true;
    wake_all();
    sc_start();
  }
  checker_.stop();
  if (error_.empty()) error_ = end_report();  // at the run's end: error_cycle_ stays unused
}

int SimModel::run(const GsProgram *p, const SimOptions &o, SimResult *r) {
  *r = SimResult();
  reset_run(p, o);
  if (!choose_chunk(o, r)) return r->status;
  std::string e;
  if (int st = static_check(p, o.checked_against == arch, &e)) {
    r->status = st;
    r->message = e;
    for (QState &q : queues) q.prog = nullptr;
    return r->status;
  }
  if (!open_recorders(o, r)) {
    recorders_.clear();
    for (QState &q : queues) q.prog = nullptr;
    return r->status;
  }
  double cpu0 = SimChecker::cpu_seconds();
  simulate(o.checks_thread);
  r->model_cpu_s = SimChecker::cpu_seconds() - cpu0;
  double end = start_;
  for (QState &q : queues) {
    if (!q.prog || q.prog->ninsts == 0) continue;
    r->instructions += q.ninst;
    end = std::max(end, q.end);
  }
  if (!error_.empty() && abort_) end = start_ + error_cycle_;
  double cycles = std::max(0.0, std::ceil(end - start_ - 1e-9));
  r->cycles = (uint64_t)cycles;
  r->checks = checks_where_;
  r->checks_cpu_s = checker_.thread_cpu_seconds();
  r->episodes = episodes_;
  r->cluster_episodes = cluster_episodes_;
  r->actions = actions_;
  r->episode_actions = std::move(episode_actions_);  // the next run starts from empty ones
  r->cluster_episode_actions = std::move(cluster_episode_actions_);
  register_stats(r, cycles);
  std::string err;
  for (auto &rec : recorders_)
    if (!rec->finish(r->cycles, &err) && error_.empty()) {
      r->status = GS_EXIT_INPUT;
      r->message = err;
    }
  recorders_.clear();
  if (!error_.empty()) {
    r->status = GS_EXIT_SIM;
    r->message = error_;
  }
  for (QState &q : queues) q.prog = nullptr;
  return r->status;
}
