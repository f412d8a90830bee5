// main.cpp — the gtsim command line: parses options, picks one mode (the Mode table: model
// and program runs, --describe, --stats, --convert, --disasm, --emit of a program, the dumps,
// --config-doc, --isa-doc), refuses any option or input the mode does not read, resolves
// config and model names (sim/cli_find.cpp), then runs the mode (docs/cli.md).
// Exit codes: README.md, "Exit status".
#include <getopt.h>
#include <malloc.h>
#include <systemc>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cli.h"
#include "sim.h"

extern "C" {
#include "arch.h"
#include "prog.h"
#include "util.h"
}

#include "version.h"  // GTSIM_VERSION: the release and the git commit, written by the Makefile

const char *cli_version() { return GTSIM_VERSION; }

static const char *usage_text =
    "usage: gtsim --arch CFG [options] [MODEL|PROG.gtasm|PROG.gtp]\n"
    "       gtsim --arch CFG --describe [--json]\n"
    "\n"
    "Architecture:\n"
    "  --arch NAME            architecture config: a .cfg file, or a name looked up in\n"
    "                         ., $GTSIM_PATH, the installed and the source configs/\n"
    "                         (.cfg may be left off; docs/cli.md, docs/config.md)\n"
    "  --set SEC.KEY=VALUE    override one config key (repeatable), validated like the file\n"
    "  --describe             print the resolved config and derived peak figures\n"
    "  --config-doc           print docs/config.md (generated from the schema table)\n"
    "Model:\n"
    "  MODEL                  a .gtg or .onnx file, or a name (resnet50) looked up like\n"
    "                         --arch, in workloads/ (.gtg/.onnx may be left off)\n"
    "  --stats                per-op-kind counts, MACs, FLOPs, parameters, activation bytes\n"
    "                         and the largest live activation of MODEL (no --arch needed;\n"
    "                         --json or --csv for machine-readable output)\n"
    "  --batch B              bind the symbolic batch N to B (default: the file's batch=)\n"
    "  --dtype T              cast the model's activations and weights to T (fp16, bf16,\n"
    "                         int8, fp32) before scheduling; integer ids stay (docs/cli.md)\n"
    "  --convert MODEL -o OUT.gtg\n"
    "                         write MODEL (.onnx or .gtg) as .gtg text (docs/onnx.md);\n"
    "                         with --batch B the file's default batch becomes B\n"
    "Scheduling (docs/graphturbo.md):\n"
    "  --sched NAME           graphturbo (default), tvm or astitch (docs/schedulers.md);\n"
    "                         graphturbo:LEVEL sets --gt-level\n"
    "  --batch-per-cluster P  samples per cluster per iteration (default: the whole share);\n"
    "                         auto: try every divisor of the share by simulation, keep the\n"
    "                         best and print the candidates (docs/cli.md)\n"
    "  --objective O          what auto maximises: throughput (default) or latency\n"
    "  --compare A,B          run each strategy and print one table, a row per strategy;\n"
    "                         graphturbo:LEVEL runs graphturbo at a ladder level\n"
    "  --timing               print scheduling (or a program's loading) and simulation\n"
    "                         times to stderr\n"
    "  --dump-after PASS      print the graphturbo state after PASS (splitinfo, group,\n"
    "                         instances, order, bind, concat) and exit\n"
    "  --dump-after STEP      print the lowering's plan after STEP for --sched and exit:\n"
    "                         kernels, units, placement, tiling; graphturbo also slices\n"
    "                         (after units) and staging (last) (docs/schedulers.md)\n"
    "  --dump-schedule        print the final graphturbo schedule (--json: as JSON) and exit\n"
    "  --gt-lb-scope S        LB capacity of Alg. 1: cluster (all LBs, default) or core\n"
    "  --gt-lb-bytes N        LB capacity of Alg. 1 in bytes (overrides --gt-lb-scope)\n"
    "  --gt-init I            initial sub-graphs: chain (default), layer or op\n"
    "  --gt-max-recompute F   reject splits recomputing more than F of the work (0.25)\n"
    "  --gt-order O           instance order: auto (the lower peak memory of bfs and dfs,\n"
    "                         default), bfs, dfs, footprint (heaviest ready instance first)\n"
    "                         or optimal (least peak: bound, exact DP, then ILP on GLPK)\n"
    "  --gt-order-time-limit S\n"
    "                         seconds the ILP of --gt-order optimal may run (default 2)\n"
    "  --gt-footprint F       Alg. 1's peak: op (largest op working set, default) or live\n"
    "  --gt-time              print the wall time of each pass on stderr\n"    "  --gt-level L           kernel generation's ladder level: gb (one kernel per group,\n"
    "                         outputs in GB), lb (in LB), instances (+ instances and their\n"
    "                         order), full (default; + the next layer's weights staged\n"
    "                         during this one)\n"
    "  --gt-spill R           the tensor a full buffer gives up first: longest (liveness in\n"
    "                         kernels, default) or largest\n"
    "  --gt-stitch F          fraction of each LB for tensors kept between kernels (0.75,\n"
    "                         less when that halves the estimate; given: kept)\n"
    "  --gt-prefetch N        level full: stage a layer's weights in GB up to N layers\n"
    "                         ahead (0-8, default 2; 0: at the layer's own start)\n"
    "  --gt-prefetch-gb F     level full: fraction of the GB that weights staged ahead may\n"
    "                         hold at once (0-1, default 1)\n"
    "  --gt-cols M            layers with fewer rows than cores: rows (default: split rows\n"
    "                         only) or split (their columns too, by the tiler's estimate)\n"
    "Programs (docs/isa.md):\n"
    "  --disasm PROG          print PROG (.gtp or .gtasm) as .gtasm; --arch gives unit names\n"
    "  --emit OUT             write the program to OUT (.gtp or .gtasm): with a model, the\n"
    "                         scheduled program (also simulated, unless --schedule-only); with\n"
    "                         a .gtasm/.gtp input this assembles/converts it (checked against\n"
    "                         --arch if given)\n"
    "  --schedule-only        schedule the model and check its program (write it with --emit),\n"
    "                         without simulating it: a line on stdout says what it holds\n"
    "  --repeats              with --schedule-only: also how much of the program clusters\n"
    "                         1, 2, ... repeat of cluster 0's (docs/cli.md)\n"
    "  --isa-doc              print docs/isa.md (generated from sched/isa.def)\n"
    "Simulation (docs/timing.md):\n"
    "  PROG.gtasm|PROG.gtp    run a program on --arch and print its stats (text, --json, --csv)\n"
    "  --trace FILE.gtt.gz    buffer occupancy and unit activity over time (traces/README.md)\n"
    "  --perfetto FILE.json   the same as Chrome trace-event JSON for ui.perfetto.dev\n"
    "  --trace-detail D       Perfetto slices per kernel (default: a slice per queue and\n"
    "                         barrier episode, named by its kernel) or per instruction\n"
    "  --trace-window A:B     both traces keep only cycles [A, B) (B empty: to the end)\n"
    "                         (the transfer chunk size is the config key chip.chunk_bytes;\n"
    "                         env GTSIM_CHUNK_BYTES overrides it, --set overrides both)\n"
    "Output:\n"
    "  -o FILE                write the report (or doc, dump, listing) to FILE, complete or\n"
    "                         not at all, instead of stdout\n"
    "  --json                 JSON instead of text\n"
    "  --csv                  CSV instead of text (reports)\n"
    "  --progress             show a run's progress on stderr (the stage; simulating: % of\n"
    "                         instructions done, elapsed, time left) also when stderr is\n"
    "                         not a terminal, a line per update (default: terminal only)\n"
    "  --no-progress          never show it (docs/cli.md)\n"
    "  --checks-inline        run the simulator's checks on the simulating thread, not on a\n"
    "                         second core beside it (for runs sharing every core: a sweep)\n"
    "Other:\n"
    "  An option or input file the mode does not read is an error (docs/cli.md).\n"
    "  -h, --help             this text\n"
    "  --version              print the version\n"
    "\n"
    "Exit status: 0 ok, 1 bad input, 2 simulation error, 3 internal error.\n";

[[noreturn]] static void usage_error(const char *msg) {
  fprintf(stderr, "gtsim: %s\n(try 'gtsim --help')\n", msg);
  exit(GS_EXIT_INPUT);
}

// --sched NAME: tvm, astitch, graphturbo or graphturbo:LEVEL (the level is checked where the
// strategies are parsed, sim/cli_run.cpp).
static const char *sched_option(const char *v) {
  if (strcmp(v, "tvm") && strcmp(v, "astitch") && strcmp(v, "graphturbo") &&
      strncmp(v, "graphturbo:", 11) != 0)
    usage_error((std::string("--sched takes tvm, astitch or graphturbo[:LEVEL], not '") + v + "'").c_str());
  return v;
}

static bool is_program_file(const char *path) {
  return util_has_ext(path, ".gtasm") || util_has_ext(path, ".gtp");
}

// Loads a .gtasm/.gtp program (assembled against a, which may be null); exits 1 on error.
static GsProgram *load_program_or_exit(const char *path, const GsArch *a) {
  GsDiag d;
  diag_init(&d);
  d.max_errors = 20;
  if (!is_program_file(path)) usage_error((std::string("not a program file (.gtasm or .gtp): ") + path).c_str());
  GsProgram *p = prog_load(path, a, &d);
  if (!p) exit(GS_EXIT_INPUT);
  return p;
}

// --disasm PROG: the program as .gtasm on stdout (or -o FILE). No static checks: a program
// that fails them is exactly what one wants to read.
static int cmd_disasm(const CliOptions &o) {
  GsArch *a = o.arch ? cli_load_arch(o) : nullptr;
  GsProgram *p = load_program_or_exit(o.disasm, a);
  int rc = GS_EXIT_OK;
  if (o.output) {
    if (prog_save(o.output, a, p) != 0) {
      fprintf(stderr, "%s: error: cannot write: %s\n", o.output, strerror(errno));
      rc = GS_EXIT_INPUT;
    }
  } else if (gtasm_write(stdout, a, p) != 0) {
    rc = GS_EXIT_INPUT;
  }
  prog_free(p);
  if (a) arch_free(a);
  return rc;
}

// PROG.gtasm|PROG.gtp --emit OUT.gtp|OUT.gtasm: assemble or convert; with --arch the program
// must pass prog_check first, so a written .gtp is one the simulator accepts statically.
static int cmd_emit_program(const CliOptions &o) {
  if (!util_has_ext(o.emit, ".gtp") && !util_has_ext(o.emit, ".gtasm"))
    usage_error((std::string("--emit: output must end in .gtp or .gtasm: ") + o.emit).c_str());
  GsArch *a = o.arch ? cli_load_arch(o) : nullptr;
  GsProgram *p = load_program_or_exit(o.inputs[0], a);
  GsDiag d;
  diag_init(&d);
  d.max_errors = 20;
  int rc = GS_EXIT_OK;
  if (a && prog_check(p, a, &d, o.inputs[0]) != 0) {
    rc = GS_EXIT_INPUT;
  } else if (prog_save(o.emit, a, p) != 0) {
    fprintf(stderr, "%s: error: cannot write: %s\n", o.emit, strerror(errno));
    rc = GS_EXIT_INPUT;
  }
  prog_free(p);
  if (a) arch_free(a);
  return rc;
}

// PROG.gtasm|PROG.gtp with --arch: simulate it and print the stats (text or --json, to
// stdout or -o FILE). A failed check or a deadlock prints its report to stderr and exits 2.
static int cmd_run_program(const CliOptions &o) {
  if (!o.arch) usage_error("running a program needs --arch FILE");
  if (o.json && o.csv) usage_error("--json and --csv exclude each other");
  GsArch *a = cli_load_arch(o);
  double t0 = cli_wall_seconds();
  GsProgram *p = load_program_or_exit(o.inputs[0], a);
  double t_load = cli_wall_seconds() - t0;
  int rc;
  {
    Simulator sim(a);
    SimOptions so;
    cli_trace_options(o, &so);
    so.program_name = o.inputs[0];
    so.checks_thread = !o.checks_inline;
    SimResult r;
    CliSimProgress pr(o.inputs[0], (uint64_t)prog_ninsts(p), &so);
    double t1 = cli_wall_seconds();
    rc = sim.run(p, so, &r);
    pr.finish(r.instructions);
    if (o.timing)
      fprintf(stderr, "timing: load %.3f s, %s\n", t_load,
              cli_sim_timing(r, p, cli_wall_seconds() - t1).c_str());
    if (rc != 0) {
      fputs(r.message.c_str(), stderr);
    } else {
      rc = cli_write_output(o.output, [&](FILE *ms) {
        if (o.json) r.stats.print_json(ms);
        else if (o.csv) r.stats.print_csv(ms);
        else r.stats.print_text(ms);
      });
    }
  }
  prog_free(p);
  arch_free(a);
  return rc;
}

// The long options and their codes (short ones are their own characters).
enum {
  O_ARCH = 256, O_SET, O_DESCRIBE, O_JSON, O_CSV, O_VERSION, O_CONFIG_DOC,
  O_DISASM, O_EMIT, O_ISA_DOC,
};
enum { O_STATS = 320, O_BATCH, O_DTYPE };
enum { O_CONVERT = 330 };
enum { O_SCHED = 384, O_DUMP_AFTER, O_DUMP_SCHEDULE, O_GT_OPT };
enum { O_TRACE = 340, O_PERFETTO };
enum { O_COMPARE = 400, O_BPC, O_TIMING, O_OBJECTIVE, O_TRACE_DETAIL, O_TRACE_WINDOW };
enum { O_PROGRESS = 420, O_NO_PROGRESS, O_CHECKS_INLINE, O_SCHEDULE_ONLY, O_REPEATS };
static const struct option longopts[] = {
    {"arch", required_argument, 0, O_ARCH},
    {"set", required_argument, 0, O_SET},
    {"describe", no_argument, 0, O_DESCRIBE},
    {"json", no_argument, 0, O_JSON},
    {"csv", no_argument, 0, O_CSV},
    {"config-doc", no_argument, 0, O_CONFIG_DOC},
    {"disasm", required_argument, 0, O_DISASM},
    {"emit", required_argument, 0, O_EMIT},
    {"isa-doc", no_argument, 0, O_ISA_DOC},
    {"version", no_argument, 0, O_VERSION},
    {"help", no_argument, 0, 'h'},
    {"stats", no_argument, 0, O_STATS},
    {"batch", required_argument, 0, O_BATCH},
    {"dtype", required_argument, 0, O_DTYPE},
    {"convert", required_argument, 0, O_CONVERT},
    {"sched", required_argument, 0, O_SCHED},
    {"dump-after", required_argument, 0, O_DUMP_AFTER},
    {"dump-schedule", no_argument, 0, O_DUMP_SCHEDULE},
    {"gt-lb-scope", required_argument, 0, O_GT_OPT},
    {"gt-lb-bytes", required_argument, 0, O_GT_OPT},
    {"gt-init", required_argument, 0, O_GT_OPT},
    {"gt-max-recompute", required_argument, 0, O_GT_OPT},
    {"gt-order", required_argument, 0, O_GT_OPT},
    {"gt-order-time-limit", required_argument, 0, O_GT_OPT},
    {"gt-time", no_argument, 0, O_GT_OPT},
    {"gt-footprint", required_argument, 0, O_GT_OPT},
    {"gt-level", required_argument, 0, O_GT_OPT},
    {"gt-spill", required_argument, 0, O_GT_OPT},
    {"gt-stitch", required_argument, 0, O_GT_OPT},
    {"gt-prefetch", required_argument, 0, O_GT_OPT},
    {"gt-prefetch-gb", required_argument, 0, O_GT_OPT},
    {"gt-cols", required_argument, 0, O_GT_OPT},
    {"trace", required_argument, 0, O_TRACE},
    {"perfetto", required_argument, 0, O_PERFETTO},
    {"compare", required_argument, 0, O_COMPARE},
    {"batch-per-cluster", required_argument, 0, O_BPC},
    {"timing", no_argument, 0, O_TIMING},
    {"objective", required_argument, 0, O_OBJECTIVE},
    {"trace-detail", required_argument, 0, O_TRACE_DETAIL},
    {"trace-window", required_argument, 0, O_TRACE_WINDOW},
    {"progress", no_argument, 0, O_PROGRESS},
    {"no-progress", no_argument, 0, O_NO_PROGRESS},
    {"checks-inline", no_argument, 0, O_CHECKS_INLINE},
    {"schedule-only", no_argument, 0, O_SCHEDULE_ONLY},
    {"repeats", no_argument, 0, O_REPEATS},
    {0, 0, 0, 0},
};

// Stores one option's value in o. Returns -1 to go on, or the exit status (--help, --version).
// --trace-window A:B (cycles, B may be empty: to the end of the run).
static void trace_window_option(CliOptions &o, const char *arg) {
  char *end;
  errno = 0;
  long long from = strtoll(arg, &end, 10), to = -1;
  bool ok = end != arg && *end == ':' && from >= 0 && errno == 0;
  if (ok && end[1]) {
    const char *b = end + 1;
    to = strtoll(b, &end, 10);
    ok = end != b && !*end && to > from && errno == 0;
  }
  if (!ok)
    usage_error((std::string("--trace-window takes FROM:TO cycles (0 <= FROM < TO, TO may be empty), "
                             "not '") + arg + "'").c_str());
  o.trace_from = (double)from;
  o.trace_to = (double)to;
}

static int apply_option(CliOptions &o, int c, const char *name, const char *arg) {
  switch (c) {
  case O_ARCH: o.arch = arg; break;
  case O_SET: o.sets.push_back(arg); break;
  case O_DESCRIBE: o.describe = true; break;
  case O_JSON: o.json = true; break;
  case O_CSV: o.csv = true; break;
  case O_CONFIG_DOC: o.config_doc = true; break;
  case O_DISASM: o.disasm = arg; break;
  case O_EMIT: o.emit = arg; break;
  case O_ISA_DOC: o.isa_doc = true; break;
  case O_VERSION: printf("gtsim %s\n", cli_version()); return 0;
  case 'h': fputs(usage_text, stdout); return 0;
  case 'o': o.output = arg; break;
  case O_STATS: o.stats = true; break;
  case O_BATCH:
    if ((o.batch = cli_parse_batch(arg)) < 1)
      usage_error((std::string("--batch needs an integer >= 1, not '") + arg + "'").c_str());
    break;
  case O_DTYPE: {
    GsDtype t;
    if (arch_dtype_parse(arg, &t) != 0 || (t != DT_FP16 && t != DT_BF16 && t != DT_INT8 && t != DT_FP32))
      usage_error((std::string("--dtype needs fp16, bf16, int8 or fp32, not '") + arg + "'").c_str());
    o.dtype = (int)t;
    break;
  }
  case O_CONVERT: o.convert = arg; break;
  case O_SCHED: o.sched = sched_option(arg); break;
  case O_DUMP_AFTER: o.dump_after = arg; break;
  case O_DUMP_SCHEDULE: o.dump_schedule = true; break;
  case O_GT_OPT:
    if (cli_gt_option(o, name, arg) != 0) return GS_EXIT_INPUT;
    break;
  case O_TRACE: o.trace = arg; break;
  case O_PERFETTO: o.perfetto = arg; break;
  case O_TIMING: o.timing = true; break;
  case O_COMPARE: o.compare = arg; break;
  case O_BPC:
    if (!strcmp(arg, "auto")) o.batch_per_cluster_auto = true;
    else if ((o.batch_per_cluster = cli_parse_batch(arg)) < 1)
      usage_error((std::string("--batch-per-cluster needs an integer >= 1 or auto, not '") + arg + "'").c_str());
    break;
  case O_OBJECTIVE:
    if (strcmp(arg, "throughput") && strcmp(arg, "latency"))
      usage_error((std::string("--objective takes throughput or latency, not '") + arg + "'").c_str());
    o.objective_latency = !strcmp(arg, "latency");
    break;
  case O_TRACE_DETAIL:
    if (strcmp(arg, "kernel") != 0 && strcmp(arg, "instruction") != 0)
      usage_error((std::string("--trace-detail takes kernel or instruction, not '") + arg + "'").c_str());
    o.trace_instructions = !strcmp(arg, "instruction");
    break;
  case O_TRACE_WINDOW: trace_window_option(o, arg); break;
  case O_PROGRESS: o.progress = 1; break;
  case O_NO_PROGRESS: o.progress = -1; break;
  case O_CHECKS_INLINE: o.checks_inline = true; break;
  case O_SCHEDULE_ONLY: o.schedule_only = true; break;
  case O_REPEATS: o.repeats = true; break;
  default: die("option code %d has no case", c);
  }
  return -1;
}

// Parses argv into o (recording every option's name in o.given). Returns -1 to go on, or the
// exit status when parsing already finished the run.
static int parse_options(CliOptions &o, int argc, char **argv) {
  opterr = 0;
  int c, li = -1;
  while ((c = getopt_long(argc, argv, ":ho:", longopts, &li)) != -1) {
    if (c == ':') usage_error((std::string("option needs a value: ") + argv[optind - 1]).c_str());
    if (c == '?') usage_error((std::string("unknown option: ") + argv[optind - 1]).c_str());
    const char *name = c == 'o' ? "o" : c == 'h' ? "help" : longopts[li].name;
    bool valued = c == 'o' || (c != 'h' && longopts[li].has_arg == required_argument);
    if (valued && strcmp(name, "set") != 0 && cli_given(o, name))  // which one would win?
      usage_error(((c == 'o' ? std::string("-o") : "--" + std::string(name)) +
                   " is given twice: give it once").c_str());
    o.given.push_back(name);
    int rc = apply_option(o, c, name, optarg);
    if (rc >= 0) return rc;
    li = -1;
  }
  for (int i = optind; i < argc; i++) o.inputs.push_back(argv[i]);
  return -1;
}

bool cli_given(const CliOptions &o, const char *name) {
  for (const std::string &g : o.given)
    if (g == name) return true;
  return false;
}

// A mode of the command line: how messages name it, the options it reads (any other option
// given is an error: an input that is not used is never dropped silently), how many input
// files it takes, and what runs it. The graphturbo options are checked where the strategies
// are known (sim/cli_run.cpp).
struct Mode {
  const char *name;
  const char *uses;   // long option names, space-separated ("o" is -o)
  size_t inputs;
  int (*run)(const CliOptions &);
};

#define GT_GRAPH_OPTS " gt-lb-scope gt-lb-bytes gt-init gt-max-recompute gt-order gt-footprint"
#define GT_KERNEL_OPTS " gt-level gt-spill gt-stitch gt-prefetch gt-prefetch-gb gt-cols"

static int run_config_doc(const CliOptions &o) {
  return cli_write_output(o.output, [](FILE *f) { arch_write_config_doc(f); });
}
static int run_isa_doc(const CliOptions &o) {
  return cli_write_output(o.output, [](FILE *f) { isa_write_doc(f); });
}
static int run_describe(const CliOptions &o) {
  GsArch *a = cli_load_arch(o);
  int rc = cli_write_output(o.output, [&](FILE *f) { arch_describe(a, f, o.json); });
  arch_free(a);
  return rc;
}
static int run_lower_dump(const CliOptions &o) {
  LowerStep step;
  if (lower_step_parse(o.dump_after, &step) != 0) die("not a lowering step: %s", o.dump_after);
  return cli_lower_dump(o, step);
}

static const Mode MODE_CONFIG_DOC{"--config-doc", "config-doc o", 0, run_config_doc};
static const Mode MODE_ISA_DOC{"--isa-doc", "isa-doc o", 0, run_isa_doc};
static const Mode MODE_STATS{"--stats", "stats batch dtype json csv o", 1, cli_stats};
static const Mode MODE_CONVERT{"--convert", "convert batch dtype o", 0, cli_convert};
static const Mode MODE_GT_DUMP{"--dump-after PASS and --dump-schedule",
                               "dump-after dump-schedule arch set batch dtype sched json o gt-time" GT_GRAPH_OPTS,
                               1, cli_gt_dump};
static const Mode MODE_LOWER_DUMP{"--dump-after STEP",
                                  "dump-after arch set batch dtype sched batch-per-cluster o"
                                  " compare json csv" /* read to say why not */ GT_GRAPH_OPTS
                                  GT_KERNEL_OPTS, 1, run_lower_dump};
static const Mode MODE_DISASM{"--disasm", "disasm arch set o", 0, cmd_disasm};
static const Mode MODE_EMIT_PROGRAM{"--emit of a program file", "emit arch set", 1, cmd_emit_program};
static const Mode MODE_RUN_PROGRAM{"a program run",
                                   "arch set json csv o trace perfetto trace-detail trace-window progress no-progress"
                                   " checks-inline timing", 1,
                                   cmd_run_program};
static const Mode MODE_DESCRIBE{"--describe", "describe arch set json o", 0, run_describe};
static const Mode MODE_SCHEDULE_ONLY{"--schedule-only",
                                     "schedule-only arch set batch dtype sched batch-per-cluster emit timing"
                                     " progress no-progress repeats" GT_GRAPH_OPTS GT_KERNEL_OPTS,
                                     1, cli_schedule_only};
static const Mode MODE_RUN_MODEL{"a model run",
                                 "arch set batch dtype sched compare batch-per-cluster json csv o trace "
                                 "perfetto trace-detail trace-window emit timing objective progress no-progress"
                                 " checks-inline" GT_GRAPH_OPTS
                                 GT_KERNEL_OPTS,
                                 1, cli_run_model};

// The mode the options ask for (the first that applies, in this order), or null when none does.
static const Mode *select_mode(const CliOptions &o) {
  LowerStep step;
  bool program = !o.inputs.empty() && is_program_file(o.inputs[0]);
  if (o.config_doc) return &MODE_CONFIG_DOC;
  if (o.isa_doc) return &MODE_ISA_DOC;
  if (o.stats) return &MODE_STATS;
  if (o.convert) return &MODE_CONVERT;
  if (o.dump_after && !o.dump_schedule && lower_step_parse(o.dump_after, &step) == 0)
    return &MODE_LOWER_DUMP;
  if (o.dump_after || o.dump_schedule) return &MODE_GT_DUMP;
  if (o.disasm) return &MODE_DISASM;
  if (o.describe) return &MODE_DESCRIBE;
  if (o.schedule_only && !program) return &MODE_SCHEDULE_ONLY;  /* a program's modes refuse it */
  if (program) return o.emit ? &MODE_EMIT_PROGRAM : &MODE_RUN_PROGRAM;
  if (!o.inputs.empty()) return &MODE_RUN_MODEL;
  return nullptr;
}

// Exits 1 naming the first option or input file that mode m does not use.
static void check_used(const CliOptions &o, const Mode &m) {
  std::string uses = std::string(" ") + m.uses + " ";
  for (const std::string &g : o.given)
    if (uses.find(" " + g + " ") == std::string::npos)
      usage_error(((g == "o" ? std::string("-o") : "--" + g) + " is not used by " + m.name).c_str());
  if (o.inputs.size() > m.inputs)
    usage_error((std::string("'") + o.inputs[m.inputs] + "' is not used by " + m.name +
                 (m.inputs ? " (it takes one input file)" : " (it takes no input file)")).c_str());
  if (!o.sets.empty() && !o.arch) usage_error("--set overrides a key of --arch: give --arch NAME");
  if (cli_given(o, "trace-detail") && !o.perfetto)
    usage_error("--trace-detail is not used without --perfetto (the .gtt trace is per instruction)");
  if (cli_given(o, "trace-window") && !o.perfetto && !o.trace)
    usage_error("--trace-window is not used without --trace or --perfetto");
  if (cli_given(o, "progress") && cli_given(o, "no-progress"))
    usage_error("--progress and --no-progress exclude each other");
}

// Resolves --arch and the model names through the search path (sim/cli_find.cpp).
static void resolve_names(CliOptions &o, const Mode &m) {
  if (o.arch) o.arch = o.owned.emplace_back(cli_find(CLI_FIND_ARCH, o.arch, "--arch")).c_str();
  bool models = &m == &MODE_STATS || &m == &MODE_GT_DUMP || &m == &MODE_LOWER_DUMP ||
                &m == &MODE_RUN_MODEL || &m == &MODE_SCHEDULE_ONLY;
  if (models && o.inputs.size() == 1)
    o.inputs[0] = o.owned.emplace_back(cli_find(CLI_FIND_MODEL, o.inputs[0], "")).c_str();
  if (o.convert) o.convert = o.owned.emplace_back(cli_find(CLI_FIND_MODEL, o.convert, "--convert")).c_str();
}

int cli_main(int argc, char **argv) {
  if (argc == 1) {
    fputs(usage_text, stderr);
    return GS_EXIT_INPUT;
  }
  CliOptions o;
  int rc = parse_options(o, argc, argv);
  if (rc >= 0) return rc;
  const Mode *m = select_mode(o);
  if (!m)
    usage_error("no input file and no mode: give a model or a program to run, or one of --describe, "
                "--stats, --convert, --disasm, --config-doc, --isa-doc");
  check_used(o, *m);
  resolve_names(o, *m);
  if (int bad = cli_check_outputs(o)) return bad;
  cli_progress_setup(o.progress);
  return m->run(o);
}

// GTSIM_CHUNK_BYTES, when set, overrides the config's chip.chunk_bytes like a --set before
// the command line's own (which win); reports name where the chunk size came from.
const char *cli_chunk_env() {
  const char *env = getenv("GTSIM_CHUNK_BYTES");
  if (!env) return nullptr;
  char *end;
  errno = 0;
  long long v = strtoll(env, &end, 10);
  if (errno || end == env || *end || v <= 0 || v > (1LL << 30)) {
    fprintf(stderr, "gtsim: error: GTSIM_CHUNK_BYTES must be a positive integer, not '%s' (at most %lld)\n",
            env, 1LL << 30);
    exit(GS_EXIT_INPUT);
  }
  return env;
}

GsArch *cli_load_arch(const CliOptions &o) {
  GsDiag d;
  diag_init(&d);
  d.max_errors = 20;
  std::string chunk;
  std::vector<const char *> sets;
  if (const char *env = cli_chunk_env()) {
    chunk = std::string("chip.chunk_bytes=") + env;
    sets.push_back(chunk.c_str());
  }
  sets.insert(sets.end(), o.sets.begin(), o.sets.end());
  GsArch *a = arch_load(o.arch, sets.data(), (int)sets.size(), &d);
  if (!a) exit(GS_EXIT_INPUT);
  bool set_chunk = !chunk.empty();
  for (const char *s : o.sets) set_chunk |= strncmp(s, "chip.chunk_bytes=", 17) == 0;
  if (set_chunk && a->transfer_model == XFER_FLOW) {  // a chunk size flows do not use: no guess
    fprintf(stderr, "gtsim: error: a chunk size is set (%s) but chip.transfer_model is flow, "
            "which moves every transfer as one flow: drop it, or use chip.transfer_model=chunk\n",
            chunk.empty() ? "--set chip.chunk_bytes" : "GTSIM_CHUNK_BYTES");
    exit(GS_EXIT_INPUT);
  }
  return a;
}

// What a mode printed to stdout reached it: a write error (a full disk, `> /dev/full`, a closed
// pipe) turns a successful run into exit 1, never a silent truncation.
static int check_stdout(int rc) {
  if (fflush(stdout) == 0 && !ferror(stdout)) return rc;
  fprintf(stderr, "gtsim: error: cannot write the standard output: %s\n", strerror(errno ? errno : EIO));
  return rc == GS_EXIT_OK ? GS_EXIT_INPUT : rc;
}

// Out of memory anywhere (a C++ allocation, or SystemC failing to set up a thread's stack) is
// exit 3 with a message, as on the C side (die), never SystemC's generic exit 1; any other
// exception escaping the simulator is an internal error too.
int sc_main(int argc, char **argv) {
  try {
    return check_stdout(cli_main(argc, argv));
  } catch (const std::bad_alloc &) {
    fprintf(stderr, "gtsim: internal error: out of memory\n");
  } catch (const sc_core::sc_report &r) {
    bool oom = strstr(r.what(), "allocate") || strstr(r.what(), "memory");
    fprintf(stderr, "gtsim: internal error: %s%s\n", oom ? "out of memory: " : "", r.what());
  } catch (const std::exception &e) {
    fprintf(stderr, "gtsim: internal error: %s\n", e.what());
  }
  return GS_EXIT_INTERNAL;
}

// glibc gives the top of the heap back to the kernel whenever 128 KiB of it is free: the race
// checks' access logs, dropped at every chip barrier and grown again, made that a cycle of
// brk calls and page faults, 10-12% of simulating ResNet-50 on stcp920 (docs/speed.md,
// "Where the time goes"). Keeping up to 256 MiB freed and growing in 16 MiB steps costs no peak
// memory: the peak is what was in use, not what was kept.
static void tune_malloc() {
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  mallopt(M_TOP_PAD, 16 << 20);
}

int main(int argc, char **argv) {
  tune_malloc();
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
  return sc_core::sc_elab_and_sim(argc, argv);
}
