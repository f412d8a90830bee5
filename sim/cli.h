// cli.h — options shared by the modes of the gtsim command line (sim/main.cpp).
#ifndef GS_CLI_H
#define GS_CLI_H
#include <cstdint>
#include <cstdio>
#include <deque>
#include <functional>
#include <set>
#include <string>
#include <vector>

extern "C" {
#include "arch.h"
#include "gt.h"
#include "lower.h"
#include "report.h"
}

struct CliOptions {
  std::vector<std::string> given; // long names of the options given ("arch", "o" for -o), in order
  std::deque<std::string> owned;  // strings the fields below may point into (resolved names)
  const char *arch = nullptr;     // --arch, resolved to a file (sim/cli_find.cpp)
  std::vector<const char *> sets;
  std::vector<const char *> inputs;
  const char *output = nullptr;   // -o
  bool describe = false, json = false, csv = false, config_doc = false;
  bool stats = false;             // --stats (sim/cli_stats.cpp)
  long long batch = 0;            // --batch B; 0 = the model file's own batch
  int dtype = -1;                 // --dtype T (a GsDtype); -1 = the model's own
  const char *convert = nullptr;  // --convert MODEL (sim/cli_convert.cpp)
  const char *disasm = nullptr;   // --disasm PROG: print PROG as .gtasm
  const char *emit = nullptr;     // --emit OUT.gtp|OUT.gtasm: write the program
  bool isa_doc = false;           // --isa-doc: print docs/isa.md
  const char *sched = nullptr;    // --sched tvm|astitch|graphturbo (default graphturbo)
  const char *dump_after = nullptr; // --dump-after PASS|STEP: graphturbo state after PASS, or
                                    // the lowering's plan after STEP
  bool dump_schedule = false;     // --dump-schedule: the final graphturbo schedule
  GtOptions gt = gt_defaults();   // --gt-* (sim/cli_gt.cpp, docs/graphturbo.md)
  bool gt_time = false;           // --gt-time: per-pass wall times on stderr
  int gt_level = GTL_FULL;        // --gt-level gb|lb|instances|full (kernel generation)
  int gt_spill = GT_SPILL_LONGEST; // --gt-spill longest|largest
  double gt_stitch = 0.75;        // --gt-stitch F: fraction of each LB for kept tensors
  bool gt_stitch_set = false;     // --gt-stitch given
  int gt_prefetch = GT_PREFETCH_DEFAULT; // --gt-prefetch N: weights staged up to N kernels ahead
  double gt_prefetch_gb = 1;      // --gt-prefetch-gb F: GB fraction weights staged ahead may hold
  int gt_cols = 0;                // --gt-cols rows|split: layers with few rows may split columns
  static GtOptions gt_defaults() {
    GtOptions g;
    gt_options_default(&g);
    return g;
  }
  const char *trace = nullptr;    // --trace FILE.gtt.gz (program runs; traces/README.md)
  const char *perfetto = nullptr; // --perfetto FILE.json (program runs)
  bool trace_instructions = false; // --trace-detail instruction (default kernel)
  double trace_from = 0, trace_to = -1; // --trace-window FROM:TO cycles (TO < 0: to the end)
  const char *compare = nullptr;  // --compare a,b: one table, a row per strategy (sim/cli_run.cpp)
  long long batch_per_cluster = 0; // --batch-per-cluster P; 0 = the whole share if it fits
  bool batch_per_cluster_auto = false; // --batch-per-cluster auto: the best divisor, by simulation
  bool objective_latency = false;  // --objective latency (default throughput), for auto
  bool timing = false;            // --timing: scheduling and simulation wall time on stderr
  int progress = 0;               // --progress 1, --no-progress -1; 0: when stderr is a terminal
  bool checks_inline = false;     // --checks-inline: the run's checks on the simulating thread
  bool schedule_only = false;     // --schedule-only: schedule and check, no simulation (cli_run.cpp)
  bool repeats = false;           // --repeats: with --schedule-only, prog_repeats's count
};

// The version: the release and the git commit it was built from ("0.1.0+a3d556f").
const char *cli_version();
// Was option NAME (its long name, "o" for -o) given?
bool cli_given(const CliOptions &o, const char *name);

// Names of configs and models through the search path (sim/cli_find.cpp, docs/cli.md).
enum CliFileKind { CLI_FIND_ARCH, CLI_FIND_MODEL };
// The directory above d, or a file's directory ("/opt/gtsim/bin" -> "/opt/gtsim", "x" -> ".").
std::string cli_parent(const std::string &d);
// The directories a bare name of `kind` is looked for in, in order.
std::vector<std::string> cli_search_dirs(CliFileKind kind);
// The file `name` names: itself, or with its kind's extension added, in the search directories
// (a name with a '/' only as a path, returned as given when missing). Unknown: exit 1 after "gtsim: OPTION: no ... 'NAME'"
// (OPTION "" for the input file),
// the directories searched and the close matches.
std::string cli_find(CliFileKind kind, const char *name, const char *option);

// GTSIM_CHUNK_BYTES if set (null if not); exits 1 when it is not an integer in 1..2^30.
const char *cli_chunk_env();
// Loads --arch with GTSIM_CHUNK_BYTES, then the --set overrides; exits 1 with the parser's
// messages on error.
GsArch *cli_load_arch(const CliOptions &o);
int cli_main(int argc, char **argv);
// --stats mode (sim/cli_stats.cpp); returns the exit status.
int cli_stats(const CliOptions &o);
// Model runs: schedule + simulate + report (sim/cli_run.cpp); returns the exit status.
int cli_run_model(const CliOptions &o);
// --schedule-only: the model scheduled and its program checked (and written by --emit), not
// simulated; a line on stdout says what the program holds (docs/cli.md).
int cli_schedule_only(const CliOptions &o);
// model_load(), then the --dtype cast (graph_cast) when given; NULL after an error to d.
GsGraph *cli_load_model(const CliOptions &o, const char *path, GsDiag *d);

// Parses a --batch value: an integer in 1..2^40, or -1.
long long cli_parse_batch(const char *s);
// --convert mode (sim/cli_convert.cpp): MODEL (.onnx or .gtg) -> -o OUT.gtg; exit status.
int cli_convert(const CliOptions &o);
// --dump-after / --dump-schedule mode (sim/cli_gt.cpp); returns the exit status.
int cli_gt_dump(const CliOptions &o);
// --dump-after STEP for a lowering step (sim/cli_run.cpp): the plan after STEP under --sched
// (docs/schedulers.md, "Lowering steps"); returns the exit status.
int cli_lower_dump(const CliOptions &o, LowerStep step);
// Applies one --gt-NAME VALUE option; returns 0, or 1 after printing a usage error.
int cli_gt_option(CliOptions &o, const char *name, const char *value);
// The context of a model run's report (sim/cli_context.cpp, docs/cli.md "Report context").
struct CliContextField {
  std::string key, value;  // value as text
  bool numeric;            // JSON: written as a number
};
// One candidate of --batch-per-cluster auto (sim/cli_run.cpp).
struct CliAutotuneRow {
  long long per_cluster;
  int iterations;
  uint64_t cycles;
  double throughput, latency_s;  // samples/s; s per iteration
  int status;                    // 0: ran; else the exit status it failed with
};
struct CliContextRun {
  std::string strategy;    // "tvm", "graphturbo:full", ...
  long long batch_per_cluster;
  std::vector<CliAutotuneRow> autotune;  // --batch-per-cluster auto's candidates (else empty)
};
struct CliContext {
  std::vector<CliContextField> fields;  // version, arch, arch file, model, model file, batch, chunk
  std::vector<CliContextField> sets;    // every --set override, in order (the last of a key wins)
  std::vector<CliContextRun> runs;      // one per report row of --compare; one otherwise
};
// The shared fields and the --set overrides (runs left for the caller to fill).
CliContext cli_context(const CliOptions &o, const GsArch *a, const char *model, long long batch);
// `report` (format f, a --compare table or not) with the context added: leading columns on
// every CSV record, a "context" member first in the JSON object, a last line of text.
std::string cli_context_apply(const std::string &report, GsReportFormat f, bool compare,
                              const CliContext &c);
// Renders with `print` into memory, then writes it atomically to `path` (-o FILE), or to stdout
// when `path` is null (sim/cli_output.cpp). Returns 0, or 1 after "PATH: error: cannot write:
// REASON" on stderr.
int cli_write_output(const char *path, const std::function<void(FILE *)> &print);
// Before a mode's work: every output file (-o, --emit, --trace, --perfetto) can be created
// now (util_check_writable), names no input file and no other output (a device such as
// /dev/null aside; --convert's -o may be its own model, or "-" for stdout). Returns 0, or 1
// after "PATH: error: ..." on stderr (docs/cli.md, "Outputs").
int cli_check_outputs(const CliOptions &o);
// The progress line on stderr (sim/cli_progress.cpp, docs/cli.md "Progress and timing on
// stderr"). Setup once: mode is CliOptions::progress (0: only when stderr is a terminal).
void cli_progress_setup(int mode);
bool cli_progress_on();
// Shows a stage on the progress line ("gtsim: tvm: scheduling x.gtg ..."); null erases it.
void cli_progress_stage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
// Seconds of CLOCK_MONOTONIC.
double cli_wall_seconds();
// --timing's processor seconds of a simulation's threads: "processor time: model M s, checks
// C s", or "processor time: model M s with the checks" when they ran inline.
struct SimResult;
std::string cli_thread_times(const SimResult &r);
// --timing's account of a simulation that took `seconds` of wall time: "simulate S s, N
// instructions, M MiB held (B B each); processor time: ...; checks on a second core".
std::string cli_sim_timing(const SimResult &r, const GsProgram *p, double seconds);
// The progress of one simulation of `total` instructions (0: unknown) named `who` (a strategy,
// a program file). The constructor sets so->progress when progress is on (the simulator calls
// it every 4096 instructions; it must not outlive this object); finish(done) prints the last
// figures after the run and erases the line on a terminal.
struct SimOptions;
class CliSimProgress {
 public:
  CliSimProgress(const char *who, uint64_t total, SimOptions *so);
  CliSimProgress(const CliSimProgress &) = delete;
  CliSimProgress &operator=(const CliSimProgress &) = delete;
  void finish(uint64_t done);

 private:
  void update(uint64_t done, bool last);
  std::string who_;
  uint64_t total_;
  double t0_, shown_;
};
// The trace files and their view (--trace, --perfetto, --trace-detail, --trace-window) into so.
void cli_trace_options(const CliOptions &o, SimOptions *so);
#endif
