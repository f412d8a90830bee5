// main.cpp — the gtsim command line: parses options, then runs one mode.
// Modes: --describe (config), --config-doc, --isa-doc, --disasm, --emit of a program file,
// and (added by later modules) --stats, --convert, program runs and scheduled model runs.
// Exit codes: README.md, "Exit status".
#include <getopt.h>
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

#ifndef GTSIM_VERSION
#define GTSIM_VERSION "0.1.0"
#endif

static const char *usage_text =
    "usage: gtsim --arch CFG [options] [MODEL.gtg|MODEL.onnx|PROG.gtasm|PROG.gtp]\n"
    "       gtsim --arch CFG --describe [--json]\n"
    "\n"
    "Architecture:\n"
    "  --arch FILE            architecture config (.cfg, docs/config.md)\n"
    "  --set SEC.KEY=VALUE    override one config key (repeatable), validated like the file\n"
    "  --describe             print the resolved config and derived peak figures\n"
    "  --config-doc           print docs/config.md (generated from the schema table)\n"
    "Model:\n"
    "  --stats                per-op-kind counts, MACs, FLOPs, parameters, activation bytes\n"
    "                         and the largest live activation of MODEL (no --arch needed;\n"
    "                         --json or --csv for machine-readable output)\n"
    "  --batch B              bind the symbolic batch N to B (default: the file's batch=)\n"
    "  --convert MODEL -o OUT.gtg\n"
    "                         write MODEL (.onnx or .gtg) as .gtg text (docs/onnx.md);\n"
    "                         with --batch B the file's default batch becomes B\n"
    "Scheduling (docs/graphturbo.md):\n"
    "  --sched NAME           graphturbo (default), tvm or astitch (docs/schedulers.md);\n"
    "                         graphturbo:LEVEL sets --gt-level\n"
    "  --batch-per-cluster P  samples per cluster per iteration (default: the whole share)\n"
    "  --compare A,B          run each strategy and print one table, a row per strategy;\n"
    "                         graphturbo:LEVEL runs graphturbo at a ladder level\n"
    "  --timing               print scheduling and simulation wall time to stderr\n"
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
    "  --gt-stitch F          fraction of each LB for tensors kept between kernels (0.75)\n"
    "  --gt-prefetch N        level full: stage a layer's weights in GB up to N layers\n"
    "                         ahead (0-8, default 2; 0: at the layer's own start)\n"
    "  --gt-prefetch-gb F     level full: fraction of the GB that weights staged ahead may\n"
    "                         hold at once (0-1, default 1)\n"
    "Programs (docs/isa.md):\n"
    "  --disasm PROG          print PROG (.gtp or .gtasm) as .gtasm; --arch gives unit names\n"
    "  --emit OUT             write the program to OUT (.gtp or .gtasm): with a model, the\n"
    "                         scheduled program (it is also simulated); with a .gtasm/.gtp\n"
    "                         input this assembles/converts it (checked against --arch if given)\n"
    "  --isa-doc              print docs/isa.md (generated from sched/isa.def)\n"
    "Simulation (docs/timing.md):\n"
    "  PROG.gtasm|PROG.gtp    run a program on --arch and print its stats (text, --json, --csv)\n"
    "  --trace FILE.gtt.gz    buffer occupancy and unit activity over time (traces/README.md)\n"
    "  --perfetto FILE.json   the same as Chrome trace-event JSON for ui.perfetto.dev\n"
    "                         (env GTSIM_CHUNK_BYTES: transfer chunk size, default 2048)\n"
    "Output:\n"
    "  --json                 JSON instead of text\n"
    "  --csv                  CSV instead of text (reports)\n"
    "Other:\n"
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
  GsProgram *p = load_program_or_exit(o.inputs[0], a);
  int rc;
  {
    Simulator sim(a);
    SimOptions so;
    so.trace_path = o.trace;
    so.perfetto_path = o.perfetto;
    so.program_name = o.inputs[0];
    SimResult r;
    rc = sim.run(p, so, &r);
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
enum { O_STATS = 320, O_BATCH };
enum { O_CONVERT = 330 };
enum { O_SCHED = 384, O_DUMP_AFTER, O_DUMP_SCHEDULE, O_GT_OPT };
enum { O_TRACE = 340, O_PERFETTO };
enum { O_COMPARE = 400, O_BPC, O_TIMING };
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
    {"trace", required_argument, 0, O_TRACE},
    {"perfetto", required_argument, 0, O_PERFETTO},
    {"compare", required_argument, 0, O_COMPARE},
    {"batch-per-cluster", required_argument, 0, O_BPC},
    {"timing", no_argument, 0, O_TIMING},
    {0, 0, 0, 0},
};

int cli_main(int argc, char **argv) {
  CliOptions o;
  opterr = 0;
  int c;
  int li = -1;
  while ((c = getopt_long(argc, argv, ":ho:", longopts, &li)) != -1) {
    switch (c) {
    case O_ARCH: o.arch = optarg; break;
    case O_SET: o.sets.push_back(optarg); break;
    case O_DESCRIBE: o.describe = true; break;
    case O_JSON: o.json = true; break;
    case O_CSV: o.csv = true; break;
    case O_CONFIG_DOC: o.config_doc = true; break;
    case O_DISASM: o.disasm = optarg; break;
    case O_EMIT: o.emit = optarg; break;
    case O_ISA_DOC: o.isa_doc = true; break;
    case O_VERSION: printf("gtsim %s\n", GTSIM_VERSION); return 0;
    case 'h': fputs(usage_text, stdout); return 0;
    case 'o': o.output = optarg; break;
    case O_STATS: o.stats = true; break;
    case O_BATCH:
      if ((o.batch = cli_parse_batch(optarg)) < 1)
        usage_error((std::string("--batch needs an integer >= 1, not '") + optarg + "'").c_str());
      break;
    case O_CONVERT: o.convert = optarg; break;
    case O_SCHED: o.sched = sched_option(optarg); break;
    case O_DUMP_AFTER: o.dump_after = optarg; break;
    case O_DUMP_SCHEDULE: o.dump_schedule = true; break;
    case O_GT_OPT:
      if (cli_gt_option(o, longopts[li].name, optarg) != 0) return GS_EXIT_INPUT;
      break;
    case O_TRACE: o.trace = optarg; break;
    case O_PERFETTO: o.perfetto = optarg; break;
    case O_TIMING: o.timing = true; break;
    case O_COMPARE: o.compare = optarg; break;
    case O_BPC:
      if ((o.batch_per_cluster = cli_parse_batch(optarg)) < 1)
        usage_error((std::string("--batch-per-cluster needs an integer >= 1, not '") + optarg + "'").c_str());
      break;
    case ':': usage_error((std::string("option needs a value: ") + argv[optind - 1]).c_str());
    default: usage_error((std::string("unknown option: ") + argv[optind - 1]).c_str());
    }
  }
  for (int i = optind; i < argc; i++) o.inputs.push_back(argv[i]);

  if (o.config_doc) {
    arch_write_config_doc(stdout);
    return 0;
  }
  if (o.stats) return cli_stats(o);
  if (o.convert) return cli_convert(o);
  if (o.dump_after || o.dump_schedule) return cli_gt_dump(o);
  if (o.isa_doc) {
    isa_write_doc(stdout);
    return 0;
  }
  if (o.disasm) return cmd_disasm(o);
  if (o.emit && o.inputs.size() == 1 && is_program_file(o.inputs[0])) return cmd_emit_program(o);
  if (!o.emit && o.inputs.size() == 1 && is_program_file(o.inputs[0])) return cmd_run_program(o);
  if (o.describe) {
    if (!o.arch) usage_error("--describe needs --arch FILE");
    GsArch *a = cli_load_arch(o);
    arch_describe(a, stdout, o.json);
    arch_free(a);
    return 0;
  }
  if (o.inputs.size() == 1 && (util_has_ext(o.inputs[0], ".gtg") || util_has_ext(o.inputs[0], ".onnx")))
    return cli_run_model(o);
  if (argc == 1) {
    fputs(usage_text, stderr);
    return GS_EXIT_INPUT;
  }
  usage_error("nothing to do: give --describe or an input file");
  return GS_EXIT_INPUT;
}

GsArch *cli_load_arch(const CliOptions &o) {
  GsDiag d;
  diag_init(&d);
  d.max_errors = 20;
  std::vector<const char *> sets(o.sets.begin(), o.sets.end());
  GsArch *a = arch_load(o.arch, sets.data(), (int)sets.size(), &d);
  if (!a) exit(GS_EXIT_INPUT);
  return a;
}

// Out of memory anywhere (a C++ allocation, or SystemC failing to set up a thread's stack) is
// exit 3 with a message, as on the C side (die), never SystemC's generic exit 1; any other
// exception escaping the simulator is an internal error too.
int sc_main(int argc, char **argv) {
  try {
    return cli_main(argc, argv);
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

int main(int argc, char **argv) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
  return sc_core::sc_elab_and_sim(argc, argv);
}
