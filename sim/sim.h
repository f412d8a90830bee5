// sim.h — the public API of the SystemC hardware model: run a Program on an architecture.
//
// Module map of sim/ (C++17 on SystemC 2.3). Free functions start with their module's prefix,
// given first below (classes scope their own members):
//   sim.h/sim.cpp       this API: Simulator (elaborates once), run() of one program after another
//   timing.h/.cpp       timing_: the transfers' part of the timing model (the rest is
//                       sched/unit_timing.h) as plain functions (no SystemC): bandwidth
//                       reservation of shared resources, DDR bytes per channel
//                       (docs/timing.md)
//   memory.h/.cpp       memory_: buffer and region state: allocations, occupancy, the tile each
//                       byte range of a region holds, its access log (the checks)
//   hb.h/.cpp           happens-before between queues: vector clocks (the race checks)
//   checker.h/.cpp      SimChecker: those checks on a thread of their own beside the model, fed
//                       records in simulation order (docs/timing.md, "Checks on a second core")
//   model.h/.cpp        model_: the SystemC modules, one per resource, and the queues
//   stats.cpp           the stats registry and its text/JSON printers
//   actions.h/.cpp      actions_: counts of what instructions did (MACs, element passes, bytes
//                       per level), for energy (sched/energy.h), and their stats
//   trace.h/.cpp        trace_: recorders: the .gtt.gz occupancy/activity trace and Perfetto JSON
//   cli.h, main.cpp     cli_: the command line: options, modes, cli_main() (main and sc_main)
//   cli_*.cpp           cli_: one file per mode (run, convert, stats, graphturbo dumps), output,
//                       names of configs and models through the search path (cli_find.cpp)
//
// Time: one SystemC nanosecond is one cycle of the chip clock (whatever clock_mhz is); stats
// convert cycles to seconds with clock_mhz. Every run starts at the kernel's current time and
// its cycles are end - start.
//
// Lifetime: SystemC 2.3 elaborates once per process, so a process has at most ONE Simulator,
// for one architecture, constructed before the first run. Any number of programs may then be
// run one after another on it (the kernel is resumed with sc_start; all model state is reset
// between runs), including after a run that failed a check or deadlocked.
#ifndef GS_SIM_H
#define GS_SIM_H

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

extern "C" {
#include "arch.h"
#include "energy.h"
#include "prog.h"
}

// One registered statistic. Names are dotted paths ("ddr.read_bytes", "q.c0.k1.mme.busy").
struct SimStat {
  std::string name, unit, desc;
  double value;
};

// The stats registry: models keep plain counters; after a run they are registered here with
// name, unit and description; printers are separate. Order = registration
// order, which is deterministic.
class SimStats {
 public:
  void add(const std::string &name, const char *unit, const char *desc, double value);
  const SimStat *find(const std::string &name) const;  // nullptr when absent
  double get(const std::string &name) const;           // 0 when absent
  const std::vector<SimStat> &all() const { return stats_; }
  void clear() { stats_.clear(); }
  void print_text(FILE *out) const;
  void print_json(FILE *out) const;  // {"stats":[{"name":..,"unit":..,"desc":..,"value":..}]}
  void print_csv(FILE *out) const;   // header name,value,unit,desc; one row per stat

 private:
  std::vector<SimStat> stats_;
};

struct SimOptions {
  const char *trace_path = nullptr;     // --trace FILE.gtt.gz (traces/README.md)
  const char *perfetto_path = nullptr;  // --perfetto FILE.json (Chrome trace-event JSON)
  // --trace-detail: the Perfetto trace has a slice per queue per barrier episode (false: named
  // by episode_names, the task each episode ends) or per instruction (true).
  bool perfetto_instructions = false;
  std::vector<std::string> episode_names;  // [episode]: chip episodes and cluster 0's, in order
  // --trace-window FROM:TO: both traces keep only what happens in cycles [from, to) (to < 0: to
  // the end), slices clipped to it.
  double trace_from = 0, trace_to = -1;
  const char *program_name = nullptr;   // file name used in check messages (may be null)
  // Transfer chunk size in bytes: transfers are split into chunks that reserve the shared
  // resources one after another, so concurrent transfers share bandwidth (docs/timing.md).
  // 0 = the config's chip.chunk_bytes (docs/config.md; the CLI applies GTSIM_CHUNK_BYTES to it).
  int64_t chunk_bytes = 0;
  // Called with (instructions executed, instructions in the program) every 4096 executed
  // instructions, from inside the run: for a progress indicator (sim/cli_progress.cpp prints
  // percentage, elapsed time and ETA). It should be cheap (read a clock, print now and then).
  // Empty: not called (the run's only cost is the instruction counter it keeps anyway).
  std::function<void(uint64_t done, uint64_t total)> progress;
  // The arch the caller has already run prog_check against on this very program (the CLI does,
  // before --emit writes it): when it is this simulator's, the run does not decode and check the
  // program a second time (the same function on the same inputs; prog_check and its decoding
  // were about 5% of a run's profile). Null: checked here.
  const GsArch *checked_against = nullptr;
  // The memory and race checks of the run on a thread of their own, beside the simulation
  // (sim/checker.h; docs/timing.md, "Checks on a second core"), when the machine has a second
  // core; false: inline, on the simulating thread. The verdicts and messages are the same.
  bool checks_thread = true;
};

// Per barrier episode (the kernel boundary marker of the schedulers).
struct SimEpisode {
  uint64_t cycle;       // completion cycle of the episode, relative to the run's start
  uint64_t ddr_bytes;   // chip scope: DDR bytes (read + write) whose transfers completed after
                        // the previous chip episode (or the start) and no later than this one
  int cluster;          // -1: a chip-scope barrier; else the cluster of a cluster-scope one
};

struct SimResult {
  int status = 0;          // 0 ok, 1 bad input (unusable option/file), 2 check failed/deadlock
  std::string message;     // the check/deadlock report (several lines), empty when ok
  uint64_t cycles = 0;     // cycles of this run (end of the last queue - start)
  uint64_t instructions = 0;  // instructions executed
  // Where the run's checks ran: "on a second core", or "inline (as asked)", "inline (one core)",
  // "inline (no thread: REASON)" (the verdicts are the same; the wall time is not)
  std::string checks;
  // Processor seconds of the simulation (not of the static check before it) on the simulating
  // thread (the checks' too when they ran inline), and on the checks' thread (-1: inline).
  // Which thread bounds a run with a second core is the one with more; `gtsim --timing` prints
  // both. They vary with the machine and its load, as wall time does: not part of the report.
  double model_cpu_s = 0, checks_cpu_s = -1;
  std::vector<SimEpisode> episodes;  // chip-scope barrier episodes, in completion order
  std::vector<SimEpisode> cluster_episodes;  // cluster-scope ones, in completion order
  GsActions actions{};     // what the run did, by unit kind and level (sched/energy.h)
  std::vector<GsActions> episode_actions;  // actions up to the end of each chip episode
  // and of each of cluster 0's cluster episodes, in order (the report's kernel boundaries are
  // the chip episodes and cluster 0's: a snapshot per episode of every cluster grew with the
  // program, 1.7 KB each)
  std::vector<GsActions> cluster_episode_actions;
  SimStats stats;          // everything else, registered by name (docs/timing.md, "Stats")
};

class SimModel;  // model.h

class Simulator {
 public:
  // Elaborates the modules for `a` (which must outlive the Simulator). At most one per process.
  explicit Simulator(const GsArch *a);
  ~Simulator();
  Simulator(const Simulator &) = delete;
  Simulator &operator=(const Simulator &) = delete;

  // Runs one program to completion (or to the first check failure / a deadlock) and fills r.
  // Returns r->status. The program must outlive the call only.
  int run(const GsProgram *p, const SimOptions &o, SimResult *r);

 private:
  const GsArch *arch_;
  std::unique_ptr<SimModel> model_;
};

#endif
