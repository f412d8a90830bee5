// cli_run.cpp — the model-run mode of gtsim: MODEL.gtg|MODEL.onnx with --arch → schedule with
// each requested strategy (sched/lower.h), simulate every program on ONE elaborated Simulator
// (SystemC elaborates once per process), and print the report (sched/report.h) or, with
// --compare, one table with a row per strategy. --emit writes the scheduled program.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cli.h"
#include "sim.h"

extern "C" {
#include "graph.h"
#include "lower.h"
#include "prog.h"
#include "report.h"
#include "util.h"
}

// One strategy of --sched/--compare: a name, and for graphturbo an optional ":LEVEL".
struct Strategy {
  GsSchedKind kind;
  int level;  // GtLadder; -1: --gt-level's
};

// Splits "tvm,astitch,graphturbo:lb" into strategies; exits 1 naming an unknown one.
static std::vector<Strategy> parse_strategies(const char *list, const char *what) {
  std::vector<Strategy> v;
  std::string s(list);
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t comma = s.find(',', pos);
    std::string item = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    size_t colon = item.find(':');
    std::string name = item.substr(0, colon);
    Strategy st{SCHED_TVM, -1};
    if (lower_sched_parse(name.c_str(), &st.kind) != 0) {
      fprintf(stderr, "gtsim: %s: unknown strategy '%s' (known: tvm, astitch, graphturbo)\n", what,
              name.c_str());
      exit(GS_EXIT_INPUT);
    }
    if (colon != std::string::npos) {
      GtLadder lv;
      if (st.kind != SCHED_GRAPHTURBO) {
        fprintf(stderr, "gtsim: %s: '%s': only graphturbo takes a level\n", what, item.c_str());
        exit(GS_EXIT_INPUT);
      }
      if (gt_ladder_parse(item.c_str() + colon + 1, &lv) != 0) {
        fprintf(stderr, "gtsim: %s: '%s': unknown level (known: gb, lb, instances, full)\n", what,
                item.c_str());
        exit(GS_EXIT_INPUT);
      }
      st.level = lv;
    }
    v.push_back(st);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return v;
}

// The --gt-* options given must be read by some strategy: exits 1 naming the first one that
// is not (no graphturbo strategy; --gt-level when every graphturbo strategy names its level;
// --gt-time, which only the graphturbo dumps print).
static void check_gt_options(const CliOptions &o, const std::vector<Strategy> &v, const char *what) {
  bool gt = false, level_free = false;
  for (const Strategy &s : v) {
    gt |= s.kind == SCHED_GRAPHTURBO;
    level_free |= s.kind == SCHED_GRAPHTURBO && s.level < 0;
  }
  for (const std::string &g : o.given) {
    if (g.compare(0, 3, "gt-") != 0) continue;
    const char *why = !gt ? "no strategy is graphturbo"
                      : g == "gt-level" && !level_free ? "every graphturbo strategy names its level"
                      : g == "gt-time" ? "it times the graphturbo dumps (--dump-after PASS)"
                      : nullptr;
    if (!why) continue;
    fprintf(stderr, "gtsim: --%s is not used by %s: %s\n(try 'gtsim --help')\n", g.c_str(), what, why);
    exit(GS_EXIT_INPUT);
  }
}

// Unit busy cycles by unit kind from the simulator's per-queue stats "q.cC.kK.UNIT.busy_cycles".
static void fill_runstats(GsRunStats *rs, const GsArch *a, const SimResult &r,
                          std::vector<uint64_t> &episodes, std::vector<GsActions> &actions) {
  memset(rs, 0, sizeof *rs);
  report_init_units(rs, a);
  rs->cycles = r.cycles;
  // kernel boundaries as cluster 0 sees them: chip barriers and its own cluster barriers
  // with the actions up to each (chip-wide counts, also at cluster 0's own barriers)
  std::vector<std::pair<uint64_t, const GsActions *>> ep;
  for (size_t i = 0; i < r.episodes.size(); i++) ep.push_back({r.episodes[i].cycle, &r.episode_actions[i]});
  for (size_t i = 0, j = 0; i < r.cluster_episodes.size(); i++)
    if (r.cluster_episodes[i].cluster == 0)
      ep.push_back({r.cluster_episodes[i].cycle, &r.cluster_episode_actions[j++]});
  std::stable_sort(ep.begin(), ep.end(),
                   [](const std::pair<uint64_t, const GsActions *> &x,
                      const std::pair<uint64_t, const GsActions *> &y) { return x.first < y.first; });
  episodes.clear();
  actions.clear();
  for (const auto &e : ep) {
    episodes.push_back(e.first);
    actions.push_back(*e.second);
  }
  rs->nepisodes = (int)episodes.size();
  rs->episode_end = episodes.data();
  rs->episode_actions = actions.data();
  rs->actions = r.actions;
  rs->ddr_read = r.stats.get("ddr.read_bytes");
  rs->ddr_write = r.stats.get("ddr.write_bytes");
  rs->ddr_dram = r.stats.find("ddr.efficiency") != nullptr;
  rs->ddr_row_hit_rate = rs->ddr_dram ? r.stats.get("ddr.row_hit_rate") : 1;
  rs->ddr_efficiency = rs->ddr_dram ? r.stats.get("ddr.efficiency") : 1;
  // per unit kind, summed over its queues: "q.cC.kK.UNIT.<what>_cycles"
  static const char *const what[] = {".busy_cycles", ".stall_data_cycles", ".stall_flag_cycles",
                                     ".stall_resource_cycles"};
  for (const SimStat &s : r.stats.all()) {
    if (s.name.compare(0, 2, "q.") != 0) continue;
    for (int w = 0; w < 4; w++) {
      std::string suffix = what[w];
      if (s.name.size() <= suffix.size() ||
          s.name.compare(s.name.size() - suffix.size(), suffix.size(), suffix) != 0)
        continue;
      std::string q = s.name.substr(2, s.name.size() - 2 - suffix.size()); // cC.kK.UNIT
      size_t dot = q.rfind('.');
      if (dot == std::string::npos || q.find(".k") == std::string::npos) continue;
      std::string unit = q.substr(dot + 1);
      for (int u = 0; u < rs->nunits; u++) {
        if (unit != rs->units[u].name) continue;
        GsUnitUse *x = &rs->units[u];
        double *field[] = {&x->busy_cycles, &x->stall_data_cycles, &x->stall_flag_cycles,
                           &x->stall_resource_cycles};
        *field[w] += s.value;
      }
    }
  }
}

// The lowering options of strategy `stg` under the command line's options.
static GsLowerOptions lower_options(const CliOptions &o, const Strategy &stg) {
  GsLowerOptions lo;
  lower_options_default(&lo);
  lo.sched = stg.kind;
  lo.batch = o.batch;
  lo.batch_per_cluster = o.batch_per_cluster;
  lo.gt = o.gt;
  lo.gt_level = (GtLadder)(stg.level >= 0 ? stg.level : o.gt_level);
  lo.gt_spill = (GtSpillRule)o.gt_spill;
  lo.gt_stitch = o.gt_stitch;
  lo.gt_stitch_fixed = o.gt_stitch_set;
  lo.gt_prefetch = o.gt_prefetch;
  lo.gt_prefetch_gb = o.gt_prefetch_gb;
  lo.gt_cols = o.gt_cols;
  return lo;
}

int cli_lower_dump(const CliOptions &o, LowerStep step) {
  if (o.compare) {
    fprintf(stderr, "gtsim: --dump-after %s shows one strategy: use --sched, not --compare\n",
            lower_step_name(step));
    return GS_EXIT_INPUT;
  }
  if (o.json || o.csv) {
    fprintf(stderr, "gtsim: --dump-after %s prints text only (no --json or --csv)\n", lower_step_name(step));
    return GS_EXIT_INPUT;
  }
  if (!o.arch || o.inputs.size() != 1) {
    fprintf(stderr, "gtsim: --dump-after %s needs --arch FILE and exactly one model file\n",
            lower_step_name(step));
    return GS_EXIT_INPUT;
  }
  std::vector<Strategy> one = parse_strategies(o.sched ? o.sched : "graphturbo", "--sched");
  check_gt_options(o, one, "--dump-after STEP");
  Strategy stg = one[0];
  if (!lower_step_runs(stg.kind, step)) {
    std::string steps;
    for (int s = 0; s < LOWER_NSTEPS; s++)
      if (lower_step_runs(stg.kind, (LowerStep)s))
        steps += std::string(steps.empty() ? "" : ", ") + lower_step_name((LowerStep)s);
    fprintf(stderr, "gtsim: --dump-after: '%s' is a graphturbo lowering step; %s has %s\n",
            lower_step_name(step), lower_sched_name(stg.kind), steps.c_str());
    return GS_EXIT_INPUT;
  }
  GsArch *a = cli_load_arch(o);
  GsDiag d;
  diag_init(&d);
  d.max_errors = 20;
  GsGraph *g = cli_load_model(o, o.inputs[0], &d);
  GsLowerOptions lo = lower_options(o, stg);
  GsLowered *l = g ? lower_plan(g, a, &lo, step, &d) : nullptr;
  int rc = GS_EXIT_INPUT;
  if (l) rc = cli_write_output(o.output, [&](FILE *f) { lower_dump(f, l, step); });
  lower_free(l);
  graph_free(g);
  arch_free(a);
  return rc;
}

struct RunOut {
  GsLowered *l = nullptr;
  GsRunStats rs;
  std::vector<uint64_t> episodes;
  std::vector<GsActions> episode_actions;
  double tune_throughput = 0, tune_latency = 0;  // --batch-per-cluster auto: its figures
  RunOut() = default;
  RunOut(const RunOut &) = delete;
  RunOut &operator=(const RunOut &) = delete;
  ~RunOut() { lower_free(l); }
};

// The report of one run, or with --compare the table of all, with its context (to stdout or
// -o FILE).
static int write_report(const CliOptions &o, const GsArch *a,
                        const std::vector<std::unique_ptr<RunOut>> &runs,
                        const std::vector<std::vector<CliAutotuneRow>> &tunes, const std::string &model) {
  GsReportFormat f = o.json ? REPORT_JSON : o.csv ? REPORT_CSV : REPORT_TEXT;
  CliContext ctx = cli_context(o, a, model.c_str(), (long long)runs[0]->l->batch);
  std::vector<const GsSchedSummary *> ms;
  std::vector<const GsRunStats *> rss;
  for (size_t i = 0; i < runs.size(); i++) {
    ms.push_back(lower_summary(runs[i]->l));
    rss.push_back(&runs[i]->rs);
    ctx.runs.push_back({ms[i]->strategy, (long long)ms[i]->per_cluster, tunes[i]});
  }
  char *buf = nullptr;
  size_t len = 0;
  FILE *mem = open_memstream(&buf, &len);
  if (!mem) die("open_memstream failed");
  if (o.compare) report_compare(mem, f, ms.data(), rss.data(), (int)runs.size(), model.c_str());
  else report_write(mem, f, ms[0], rss[0], model.c_str(), o.arch);
  fclose(mem);
  std::string text = cli_context_apply(std::string(buf, len), f, o.compare != nullptr, ctx);
  free(buf);
  return cli_write_output(o.output, [&](FILE *out) { fwrite(text.data(), 1, text.size(), out); });
}

// What one model run works with.
struct RunEnv {
  const CliOptions &o;
  Simulator *sim;  // null under --schedule-only
  GsGraph *g;
  const GsArch *a;
  const char *path;
  GsDiag *d;
};

void cli_trace_options(const CliOptions &o, SimOptions *so) {
  so->trace_path = o.trace;
  so->perfetto_path = o.perfetto;
  so->perfetto_instructions = o.trace_instructions;
  so->trace_from = o.trace_from;
  so->trace_to = o.trace_to;
}

// The name of each barrier episode of a scheduled run, for the Perfetto trace's slices: the
// task it ends, after its graphturbo instance when the schedule has them ("g3.1 layer2.0.c1").
static std::vector<std::string> episode_names(const GsSchedSummary &m) {
  std::vector<std::string> inst((size_t)m.ntasks);
  for (int g = 0; g < m.ngroups; g++)
    for (int t = m.group[g].t0; t < m.group[g].t1 && t < m.ntasks; t++)
      inst[(size_t)t] = "g" + std::to_string(m.group[g].group) + "." + std::to_string(m.group[g].index) + " ";
  std::vector<std::string> v;
  for (int e = 0; e < m.nepisodes; e++) {
    int t = m.episode_task[e];
    v.push_back(t < 0 || t >= m.ntasks ? "set-up" : inst[(size_t)t] + m.task[t].name);
  }
  return v;
}

// Simulates ro's program (with the command line's traces when `traces`) and fills its stats;
// returns 0, or the exit status after printing the simulator's report.
static int simulate(const RunEnv &e, RunOut *ro, bool traces, double t_sched) {
  GsSchedKind k = ro->l->opt.sched;
  SimOptions so;
  so.program_name = e.path;
  so.checked_against = e.a;  // run_one's prog_check
  so.checks_thread = !e.o.checks_inline;
  if (traces) {
    cli_trace_options(e.o, &so);
    if (so.perfetto_path) so.episode_names = episode_names(*lower_summary(ro->l));
  }
  SimResult r;
  double t1 = cli_wall_seconds();
  CliSimProgress pr(lower_sched_name(k), (uint64_t)prog_ninsts(ro->l->prog), &so);
  int st = e.sim->run(ro->l->prog, so, &r);
  pr.finish(r.instructions);
  if (e.o.timing)
    fprintf(stderr, "timing %s: schedule %.3f s, %s\n", lower_sched_name(k), t_sched,
            cli_sim_timing(r, ro->l->prog, cli_wall_seconds() - t1).c_str());
  if (st != 0) {
    fprintf(stderr, "%s: error: the %s schedule failed in the simulator:\n%s\n", e.path,
            lower_sched_name(k), r.message.c_str());
    return st == 1 ? GS_EXIT_INPUT : GS_EXIT_SIM;
  }
  fill_runstats(&ro->rs, e.a, r, ro->episodes, ro->episode_actions);
  return GS_EXIT_OK;
}

// Schedules with lowering options lo into ro, its program checked as it is emitted (and
// written to --emit's path when `emit`); returns 0 or the exit status after printing why.
static int schedule_one(const RunEnv &e, const GsLowerOptions &lo, bool emit, RunOut *ro) {
  cli_progress_stage("gtsim: %s: scheduling %s ...", lower_sched_name(lo.sched), e.path);
  GsLowerOptions checked = lo;  // the program is checked as it is emitted, on a second core
  checked.check = prog_check_begin(e.a);
  ro->l = lower_run(e.g, e.a, &checked, e.d);
  int bad = prog_check_end(checked.check, ro->l ? ro->l->prog : nullptr, e.d, e.path);
  cli_progress_stage(nullptr);
  if (!ro->l) return GS_EXIT_INPUT;
  if (bad)
    die("the %s schedule of %s fails the static program check", lower_sched_name(lo.sched), e.path);
  if (emit && prog_save(e.o.emit, e.a, ro->l->prog) != 0) {
    fprintf(stderr, "%s: error: cannot write: %s\n", e.o.emit, strerror(errno));
    return GS_EXIT_INPUT;
  }
  return GS_EXIT_OK;
}

// schedule_one, then the simulation; returns 0 or the exit status after printing why.
static int run_one(const RunEnv &e, const GsLowerOptions &lo, bool emit, bool traces, RunOut *ro) {
  double t0 = cli_wall_seconds();
  int rc = schedule_one(e, lo, emit, ro);
  return rc != GS_EXIT_OK ? rc : simulate(e, ro, traces, cli_wall_seconds() - t0);
}

// --batch-per-cluster auto (docs/cli.md, "Batches per cluster"): every divisor P of the
// per-cluster share ceil(B / clusters) is scheduled and simulated; the best by --objective
// (highest throughput, or lowest latency per iteration; the smaller P on a tie) is kept in
// *best, every candidate's figures in *rows. Traces and --emit are written for the best.
static int autotune(const RunEnv &e, const Strategy &stg, std::unique_ptr<RunOut> *best,
                    std::vector<CliAutotuneRow> *rows) {
  long long B = e.o.batch > 0 ? e.o.batch : (long long)e.g->default_batch;
  long long D = e.a->nclusters, share = (B + D - 1) / D;
  for (long long p = 1; p <= share; p++) {
    if (share % p != 0) continue;
    GsLowerOptions lo = lower_options(e.o, stg);
    lo.batch_per_cluster = p;
    auto ro = std::make_unique<RunOut>();
    CliAutotuneRow row{p, (int)((B + p * D - 1) / (p * D)), 0, 0, 0, 0};
    row.status = run_one(e, lo, false, false, ro.get());
    if (row.status == GS_EXIT_OK) {
      GsRunSummary s = report_summary(lower_summary(ro->l), &ro->rs);
      row.cycles = ro->rs.cycles;
      row.throughput = s.throughput;
      row.latency_s = s.latency_s;
      bool better = !*best || (e.o.objective_latency ? row.latency_s < (*best)->tune_latency
                                                      : row.throughput > (*best)->tune_throughput);
      ro->tune_throughput = row.throughput;
      ro->tune_latency = row.latency_s;
      if (better) *best = std::move(ro);
    }
    rows->push_back(row);
  }
  if (!*best) {
    fprintf(stderr, "%s: error: --batch-per-cluster auto: no candidate of 1..%lld ran under %s\n",
            e.path, share, lower_sched_name(stg.kind));
    return GS_EXIT_INPUT;
  }
  if (e.o.emit && prog_save(e.o.emit, e.a, (*best)->l->prog) != 0) {
    fprintf(stderr, "%s: error: cannot write: %s\n", e.o.emit, strerror(errno));
    return GS_EXIT_INPUT;
  }
  bool traces = !e.o.compare && (e.o.trace || e.o.perfetto);
  return traces ? simulate(e, best->get(), true, 0) : GS_EXIT_OK;
}

// The command line's checks of a model run; returns 0 or the exit status after the message.
static int check_run_options(const CliOptions &o) {
  if (!o.arch || o.inputs.size() != 1 || (o.json && o.csv)) {
    fprintf(stderr, "gtsim: %s\n", !o.arch ? "running a model needs --arch FILE"
                                  : o.inputs.size() != 1 ? "give exactly one model file"
                                                         : "--json and --csv exclude each other");
    return GS_EXIT_INPUT;
  }
  const char *one_run = o.emit ? "--emit" : o.sched ? "--sched" : o.trace ? "--trace" : o.perfetto ? "--perfetto" : nullptr;
  if (o.compare && one_run) {
    fprintf(stderr, "gtsim: %s is not used by --compare: it %s one run (use --sched)\n", one_run,
            o.sched && !o.emit ? "names the strategy of" : "writes the output of");
    return GS_EXIT_INPUT;
  }
  if (cli_given(o, "objective") && !o.batch_per_cluster_auto) {
    fprintf(stderr, "gtsim: --objective is not used: it chooses among --batch-per-cluster auto's candidates\n");
    return GS_EXIT_INPUT;
  }
  if (o.emit && !util_has_ext(o.emit, ".gtp") && !util_has_ext(o.emit, ".gtasm")) {
    fprintf(stderr, "gtsim: --emit: output must end in .gtp or .gtasm: %s\n", o.emit);
    return GS_EXIT_INPUT;
  }
  return GS_EXIT_OK;
}

// A model run's config (exits 1 on an error in it) and model, read with diagnostics into *d;
// null (and nothing left to free) when the model has errors.
static GsGraph *load_inputs(const CliOptions &o, GsDiag *d, GsArch **a) {
  *a = cli_load_arch(o);
  diag_init(d);
  d->max_errors = 20;
  GsGraph *g = cli_load_model(o, o.inputs[0], d);
  if (!g) arch_free(*a);
  return g;
}

int cli_run_model(const CliOptions &o) {
  int rc = check_run_options(o);
  if (rc != GS_EXIT_OK) return rc;
  std::vector<Strategy> strategies =
      o.compare ? parse_strategies(o.compare, "--compare") : parse_strategies(o.sched ? o.sched : "graphturbo", "--sched");
  check_gt_options(o, strategies, "this run");
  GsArch *a;
  GsDiag d;
  GsGraph *g = load_inputs(o, &d, &a);
  if (!g) return GS_EXIT_INPUT;
  Simulator sim(a);
  RunEnv e{o, &sim, g, a, o.inputs[0], &d};
  std::vector<std::unique_ptr<RunOut>> runs;
  std::vector<std::vector<CliAutotuneRow>> tunes;
  for (const Strategy &stg : strategies) {
    std::unique_ptr<RunOut> ro;
    tunes.emplace_back();
    if (o.batch_per_cluster_auto) {
      rc = autotune(e, stg, &ro, &tunes.back());
    } else {
      ro = std::make_unique<RunOut>();
      rc = run_one(e, lower_options(o, stg), o.emit != nullptr, !o.compare, ro.get());
    }
    if (rc != GS_EXIT_OK) break;
    // The report needs the plan and the stats, not the program: without it a --compare of
    // six strategies holds one program at a time instead of six (BERT on stcp920: GBs each).
    prog_free(ro->l->prog);
    ro->l->prog = nullptr;
    runs.push_back(std::move(ro));
  }
  if (rc == GS_EXIT_OK) rc = write_report(o, a, runs, tunes, g->name ? g->name : o.inputs[0]);
  runs.clear();
  graph_free(g);
  arch_free(a);
  return rc;
}

// --repeats: what clusters 1, 2, ... repeat of cluster 0's (prog_repeats), one line.
static void print_repeats(const GsProgram *p) {
  GsRepeats r = prog_repeats(p);
  printf("repeats: %lld of %lld instructions in clusters 1 and up, %lld (%.1f%%) in %lld runs of "
         "at least %d that repeat cluster 0's (%.1f%% of the program)\n",
         (long long)r.later, (long long)r.insts, (long long)r.covered,
         r.later ? 100.0 * (double)r.covered / (double)r.later : 0.0, (long long)r.runs,
         GS_REPEAT_MIN, r.insts ? 100.0 * (double)r.covered / (double)r.insts : 0.0);
}

// --schedule-only (docs/cli.md, "Scheduling only"): the strategy of --sched, its program
// checked as a run's is and written by --emit, and no Simulator at all. What needs a
// simulation is refused: the mode's options leave out the report's and the traces', and
// --batch-per-cluster auto, which picks by simulating, is an error here.
int cli_schedule_only(const CliOptions &o) {
  int rc = check_run_options(o);
  if (rc != GS_EXIT_OK) return rc;
  if (o.batch_per_cluster_auto) {
    fprintf(stderr, "gtsim: --schedule-only: --batch-per-cluster auto picks its candidate by "
            "simulating each; give a number\n");
    return GS_EXIT_INPUT;
  }
  std::vector<Strategy> strategies = parse_strategies(o.sched ? o.sched : "graphturbo", "--sched");
  check_gt_options(o, strategies, "this run");
  GsArch *a;
  GsDiag d;
  GsGraph *g = load_inputs(o, &d, &a);
  if (!g) return GS_EXIT_INPUT;
  RunEnv e{o, nullptr, g, a, o.inputs[0], &d};
  RunOut ro;
  double t0 = cli_wall_seconds();
  rc = schedule_one(e, lower_options(o, strategies[0]), o.emit != nullptr, &ro);
  if (rc == GS_EXIT_OK) {
    const GsProgram *p = ro.l->prog;
    double t = cli_wall_seconds() - t0, bytes = (double)prog_code_bytes(p);
    uint64_t n = (uint64_t)prog_ninsts(p);
    const char *name = lower_sched_name(strategies[0].kind);
    if (o.timing) fprintf(stderr, "timing %s: schedule %.3f s\n", name, t);
    printf("%s: %s schedule of %s at batch %lld on %s: %llu instructions in %d queues, "
           "%.1f MiB encoded (%.2f B each); the static checks passed%s%s\n",
           o.inputs[0], name, g->name ? g->name : o.inputs[0], (long long)g->batch, a->name,
           (unsigned long long)n, p->nqueues, bytes / 1048576.0, bytes / (double)(n ? n : 1),
           o.emit ? "; written to " : "", o.emit ? o.emit : "");
    if (o.repeats) print_repeats(p);
  }
  lower_free(ro.l);  // before the graph and the arch it points into
  ro.l = nullptr;
  graph_free(g);
  arch_free(a);
  return rc;
}
