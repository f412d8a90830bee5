// sim.cpp — Simulator: elaborates the model once, then runs programs one after another.
// A run: reset every piece of model state, check the program statically, attach its queues to
// the queue slots, wake the controller (which spawns one thread per non-empty queue), and let the
// kernel run until it has no events left. Queues still unfinished then are deadlocked: they are
// reported, released with abort_ and drained by a second sc_start, so the next run starts clean.
#include "sim.h"

#include <cinttypes>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "model.h"
#include "trace.h"

using namespace sc_core;

static bool g_simulator_exists = false;

Simulator::Simulator(const GtArch *a) : arch_(a) {
  if (g_simulator_exists)
    die("a second Simulator in one process: SystemC elaborates once (see sim/sim.h)");
  g_simulator_exists = true;
  model_.reset(new SimModel("gtsim", a));
}

Simulator::~Simulator() = default;

int Simulator::run(const GtProgram *p, const SimOptions &o, SimResult *r) {
  return model_->run(p, o, r);
}

static const char *engine_text(GtEngine e) {
  switch (e) {
  case E_DMA: return "a DMA queue";
  case E_MATRIX: return "a matrix unit";
  case E_VECTOR: return "a vector unit";
  case E_SCALAR: return "a scalar unit";
  default: return "any queue";
  }
}

// The static part of the checks: every queue, unit, core, cluster, region, tile, opcode and
// operand kind the program names exists in this architecture.
std::string SimModel::static_check(const GtProgram *p) {
  char msg[320];
  std::string where = std::string(prog_name_) + ": error: ";
  for (int i = 0; i < p->nqueues; i++) {
    const GtQueue &gq = p->queues[i];
    int slot = gq.core >= 0 ? core_queue(gq.cluster, gq.core, gq.index)
                            : cluster_dma_queue(gq.cluster, gq.index);
    if (slot < 0) {
      if (gq.cluster < 0 || gq.cluster >= arch->nclusters)
        snprintf(msg, sizeof msg, "queue of cluster %d: the config has %d cluster(s)", gq.cluster,
                 arch->nclusters);
      else if (gq.core >= arch->cores_per_cluster)
        snprintf(msg, sizeof msg, "queue of core c%d.k%d: the config has %d core(s) per cluster",
                 gq.cluster, gq.core, arch->cores_per_cluster);
      else if (gq.core < 0)
        snprintf(msg, sizeof msg, "cluster DMA queue c%d.dma%d: the config has %d DMA engine(s) per "
                 "cluster", gq.cluster, gq.index, arch->dma_engines);
      else
        snprintf(msg, sizeof msg, "queue %d of core c%d.k%d: its core kind '%s' has %d unit(s), "
                 "so queues 0..%d", gq.index, gq.cluster, gq.core,
                 core_mod(gq.cluster, gq.core)->kind->name, core_mod(gq.cluster, gq.core)->kind->nunits,
                 1 + core_mod(gq.cluster, gq.core)->kind->nunits);
      return where + msg + "\n";
    }
    QState &q = queues[(size_t)slot];
    if (q.prog) return where + "queue " + q.name + " appears twice in the program\n";
    q.prog = &gq;
    const GtUnitKind *u = q.unit_kind >= 0 ? &arch->units[q.unit_kind] : nullptr;
    const GtInst *insts = (const GtInst *)gq.insts.data;
    for (size_t k = 0; k < gq.insts.len; k++) {
      const GtInst &in = insts[k];
      // Message parts are built only when a check fails (this loop sees every instruction).
      auto hd = [&]() { return where + q.name + "[" + std::to_string(k) + "]: "; };
      auto tx = [&]() { return "\n    " + q.name + "[" + std::to_string(k) + "]: " + inst_text(*this, p, q, in) + "\n"; };
#define head hd()
#define text tx()
      if (in.op >= I_COUNT) {
        snprintf(msg, sizeof msg, "unknown opcode %u", in.op);
        return head + msg + "\n";
      }
      GtEngine e = isa_engine((GtOpcode)in.op);
      bool ok = e == E_ANY || (e == E_DMA && !u) || (e == E_MATRIX && u && (u->caps & CAP_MATRIX)) ||
                (e == E_VECTOR && u && (u->caps & CAP_VECTOR)) || (e == E_SCALAR && u && (u->caps & CAP_SCALAR));
      if (!ok)
        return head + isa_mnemonic((GtOpcode)in.op) + " needs " + engine_text(e) + ", but " + q.name +
               " is " + (u ? std::string("unit '") + u->name + "'" : std::string("a DMA queue")) + text;
      for (int j = 0; j < 3; j++) {
        if (in.r[j] >= p->nregions) {
          snprintf(msg, sizeof msg, "region id %u is out of range (the program has %u)", in.r[j], p->nregions - 1);
          return head + msg + text;
        }
        if (in.t[j] >= p->ntiles) {
          snprintf(msg, sizeof msg, "tile id %u is out of range (the program has %u)", in.t[j], p->ntiles - 1);
          return head + msg + text;
        }
      }
      bool needs_r0 = in.op == I_ALLOC || in.op == I_FREE || in.op == I_MOV || in.op == I_GEMM || in.op == I_VEC;
      bool needs_r1 = in.op == I_MOV || in.op == I_GEMM || in.op == I_VEC;
      if ((needs_r0 && !in.r[0]) || (needs_r1 && !in.r[1]) || (in.op == I_GEMM && !in.r[2]))
        return head + "a region operand is missing (region 0)" + text;
      if ((in.op == I_GEMM || in.op == I_VEC) && in.dtype >= DT_COUNT)
        return head + "unknown dtype " + std::to_string(in.dtype) + text;
      switch (in.op) {
      case I_ALLOC:
        if (in.sub > LVL_LB) return head + "unknown memory level " + std::to_string(in.sub) + text;
        if (in.sub != LVL_DDR && (in.n[0] < 0 || in.n[0] >= arch->nclusters)) {
          snprintf(msg, sizeof msg, "cluster %" PRId64 " does not exist (the config has %d)", in.n[0], arch->nclusters);
          return head + msg + text;
        }
        if (in.sub == LVL_LB && (in.n[1] < 0 || in.n[1] >= arch->cores_per_cluster)) {
          snprintf(msg, sizeof msg, "core %" PRId64 " does not exist (the config has %d per cluster)", in.n[1],
                   arch->cores_per_cluster);
          return head + msg + text;
        }
        break;
      case I_VEC:
        if (in.sub >= V_COUNT) return head + "unknown vector op " + std::to_string(in.sub) + text;
        if (vop_inputs((GtVop)in.sub) == 2 && !in.r[2])
          return head + std::string("vector op ") + vop_name((GtVop)in.sub) + " needs operand b" + text;
        break;
      case I_SIGNAL: {
        int t = q.core >= 0 ? core_queue(q.cluster, q.core, in.sub) : cluster_dma_queue(q.cluster, in.sub);
        if (t < 0) return head + "signal to queue " + std::to_string(in.sub) + ", which this core does not have" + text;
        break;
      }
      case I_BARRIER:
      case I_SEMPOST:
      case I_SEMWAIT:
        if (in.sub > SCOPE_CHIP) return head + "unknown scope " + std::to_string(in.sub) + text;
        break;
      default: break;
      }
#undef head
#undef text
    }
  }
  return "";
}

std::string SimModel::deadlock_report() {
  std::string s = std::string(prog_name_) + ": error: deadlock: the program cannot continue; blocked queues:\n";
  for (QState &q : queues) {
    if (!q.prog || q.done || q.prog->insts.len == 0) continue;
    const GtInst &in = ((const GtInst *)q.prog->insts.data)[q.pc];
    std::string what;
    switch (q.wait) {
    case WK_FLAG: {
      what = "waits for flag " + std::to_string(q.wait_id) + " (never signalled)";
      break;
    }
    case WK_BARRIER: {
      const SyncObj &b = barriers_[q.wait_key];
      what = "waits at barrier " + q.wait_key + " (" + std::to_string(b.arrived) + " of " +
             std::to_string(b.count) + " arrived)";
      break;
    }
    case WK_SEM: what = "waits for semaphore " + q.wait_key + " (value 0)"; break;
    default: what = "blocked"; break;
    }
    s += "    " + q.name + "[" + std::to_string(q.pc) + "] " + inst_text(*this, prog_, q, in) + ": " + what + "\n";
  }
  return s;
}

static std::string fmt(const char *f, const std::string &a) {
  char b[160];
  snprintf(b, sizeof b, f, a.c_str());
  return b;
}

void SimModel::register_stats(SimResult *r, double cycles) {
  SimStats &st = r->stats;
  st.clear();
  double cyc = cycles > 0 ? cycles : 1;
  st.add("cycles", "cycles", "total cycles of the run (last queue's end - start)", cycles);
  st.add("time_s", "s", "cycles at the chip clock", cycles / (arch->clock_mhz * 1e6));
  st.add("clock_mhz", "MHz", "chip clock", arch->clock_mhz);
  st.add("instructions", "count", "instructions executed", (double)r->instructions);
  st.add("ddr.read_bytes", "B", "bytes read from DDR by transfers", traffic_.ddr_read);
  st.add("ddr.write_bytes", "B", "bytes written to DDR by transfers", traffic_.ddr_write);
  st.add("ddr.burst_bytes", "B", "DDR bytes after rounding every access out to whole bursts", traffic_.ddr_burst);
  st.add("ddr.utilization", "ratio", "DDR burst bytes / (DDR bytes per cycle x cycles)",
         traffic_.ddr_burst / (arch->ddr_bytes_per_cycle * cyc));
  for (size_t c = 0; c < ddr->channels.size(); c++)
    st.add("ddr.ch" + std::to_string(c) + ".utilization", "ratio", "busy cycles of DDR channel / cycles",
           ddr->channels[c].busy / cyc);
  st.add("gb.read_bytes", "B", "bytes read from global buffers by transfers", traffic_.gb_read);
  st.add("gb.write_bytes", "B", "bytes written to global buffers by transfers", traffic_.gb_write);
  st.add("lb.read_bytes", "B", "bytes read from local buffers by transfers", traffic_.lb_read);
  st.add("lb.write_bytes", "B", "bytes written to local buffers by transfers", traffic_.lb_write);
  st.add("noc.bytes", "B", "bytes through the in-cluster interconnect", traffic_.noc);
  st.add("cluster_link.bytes", "B", "bytes over links between clusters", traffic_.cluster_link);
  st.add("episodes", "count", "chip-scope barrier episodes", (double)episodes_.size());
  for (const QState &q : queues) {
    if (!q.prog || q.prog->insts.len == 0) continue;
    std::string p = "q." + q.name;
    st.add(p + ".instructions", "count", fmt("instructions executed by %s", q.name).c_str(), (double)q.ninst);
    st.add(p + ".busy_cycles", "cycles", "cycles computing or streaming data", q.busy);
    st.add(p + ".utilization", "ratio", "busy cycles / run cycles", q.busy / cyc);
    st.add(p + ".stall_data_cycles", "cycles", "cycles waiting for transfer latency (data in flight)", q.stall_data);
    st.add(p + ".stall_sync_cycles", "cycles", "cycles blocked on flags, barriers, semaphores", q.stall_sync);
    st.add(p + ".stall_resource_cycles", "cycles", "cycles a transfer waited for a busy shared resource",
           q.stall_res);
    if (q.macs > 0) {
      st.add(p + ".macs", "MAC", "multiply-accumulates done", q.macs);
      st.add(p + ".mac_utilization", "ratio", "MACs / (peak MACs per cycle x run cycles)", q.ideal / cyc);
    }
  }
  for (const Buffer &b : mem.bufs) {
    if (b.peak == 0) continue;
    st.add("buf." + b.name + ".peak_bytes", "B", "peak allocated bytes", (double)b.peak);
    st.add("buf." + b.name + ".peak_ratio", "ratio", "peak allocated bytes / capacity",
           (double)b.peak / (double)b.capacity);
  }
}

int SimModel::run(const GtProgram *p, const SimOptions &o, SimResult *r) {
  *r = SimResult();
  prog_ = p;
  prog_name_ = o.program_name ? o.program_name : "program";
  abort_ = false;
  error_.clear();
  barriers_.clear();
  sems_.clear();
  traffic_ = Traffic();
  episodes_.clear();
  recorders_.clear();
  for (QState &q : queues) q.reset();
  for (BwResource &c : ddr->channels) c.reset();
  for (auto &cm : clusters) {
    for (BwResource &x : cm->gb->ports) x.reset();
    for (BwResource &x : cm->noc->link_in) x.reset();
    for (BwResource &x : cm->noc->link_out) x.reset();
    cm->link_in.reset();
    cm->link_out.reset();
    for (auto &core : cm->cores)
      for (BwResource &x : core->lb->ports) x.reset();
  }
  mem.reset(p);
  start_ = now();
  // Resource clocks start at this run's start.
  for (BwResource &c : ddr->channels) c.free_at = start_;
  for (auto &cm : clusters) {
    for (BwResource &x : cm->gb->ports) x.free_at = start_;
    for (BwResource &x : cm->noc->link_in) x.free_at = start_;
    for (BwResource &x : cm->noc->link_out) x.free_at = start_;
    cm->link_in.free_at = cm->link_out.free_at = start_;
    for (auto &core : cm->cores)
      for (BwResource &x : core->lb->ports) x.free_at = start_;
  }
  chunk_ = o.chunk_bytes;
  if (chunk_ <= 0) {
    const char *env = getenv("GTSIM_CHUNK_BYTES");
    chunk_ = env && atoll(env) > 0 ? atoll(env) : 2048;
  }
  std::string e = o.static_check ? static_check(p) : std::string();
  if (!o.static_check) {
    for (int i = 0; i < p->nqueues; i++) {
      const GtQueue &gq = p->queues[i];
      int slot = gq.core >= 0 ? core_queue(gq.cluster, gq.core, gq.index) : cluster_dma_queue(gq.cluster, gq.index);
      if (slot >= 0) queues[(size_t)slot].prog = &gq;
    }
  }
  if (!e.empty()) {
    r->status = GT_EXIT_SIM;
    r->message = e;
    for (QState &q : queues) q.prog = nullptr;
    return r->status;
  }
  std::string err;
  if (o.trace_path) {
    auto t = gtt_open(o.trace_path, arch->clock_mhz, &err);
    if (!t) { r->status = GT_EXIT_INPUT; r->message = err; return r->status; }
    recorders_.push_back(std::move(t));
  }
  if (o.perfetto_path) {
    auto t = perfetto_open(o.perfetto_path, arch->clock_mhz, &err);
    if (!t) { r->status = GT_EXIT_INPUT; r->message = err; return r->status; }
    recorders_.push_back(std::move(t));
  }
  for (auto &rec : recorders_) {
    for (size_t b = 0; b < mem.bufs.size(); b++)
      if (mem.bufs[b].capacity > 0) rec->buffer((int)b, mem.bufs[b].name, mem.bufs[b].capacity);
    for (size_t q = 0; q < queues.size(); q++)
      if (queues[q].prog && queues[q].prog->insts.len) rec->queue((int)q, queues[q].name);
  }
  running_ = 0;
  for (QState &q : queues)
    if (q.prog && q.prog->insts.len) running_++;
  // The first sc_start initialises the kernel (the controller reaches its wait); only then does a
  // pending notification count as activity for the run-to-starvation sc_start below.
  if (sc_get_status() == SC_ELABORATION) sc_start(SC_ZERO_TIME);
  start_ev_.notify(SC_ZERO_TIME);
  sc_start();
  if (!abort_ && running_ > 0) {
    error_ = deadlock_report();
    error_cycle_ = now() - start_;
    abort_ = true;
    wake_all();
    sc_start();
  }
  double end = start_;
  for (QState &q : queues) {
    if (!q.prog || q.prog->insts.len == 0) continue;
    r->instructions += q.ninst;
    end = std::max(end, q.end);
  }
  if (!error_.empty()) end = start_ + error_cycle_;
  double cycles = std::ceil(end - start_ - 1e-9);
  r->cycles = (uint64_t)cycles;
  r->episodes = episodes_;
  register_stats(r, cycles);
  for (auto &rec : recorders_)
    if (!rec->finish(r->cycles, &err) && error_.empty()) {
      r->status = GT_EXIT_INPUT;
      r->message = err;
    }
  recorders_.clear();
  if (!error_.empty()) {
    r->status = GT_EXIT_SIM;
    r->message = error_;
  }
  for (QState &q : queues) q.prog = nullptr;
  return r->status;
}
