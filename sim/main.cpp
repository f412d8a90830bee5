// main.cpp — the gtsim command line: parses options, then runs one mode.
// Modes: --describe (config), --config-doc, --isa-doc, --disasm, --emit of a program file,
// and (added by later modules) --stats, --convert, program runs and scheduled model runs.
// Exit codes: DESIGN.md §7.
#include <getopt.h>
#include <systemc>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cli.h"

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
    "Programs (docs/isa.md):\n"
    "  --disasm PROG          print PROG (.gtp or .gtasm) as .gtasm; --arch gives unit names\n"
    "  --emit OUT             write the program to OUT (.gtp or .gtasm); with a .gtasm/.gtp\n"
    "                         input this assembles/converts it (checked against --arch if given)\n"
    "  --isa-doc              print docs/isa.md (generated from sched/isa.def)\n"
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
  exit(GT_EXIT_INPUT);
}

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n > k && strcmp(s + n - k, suffix) == 0;
}

static bool is_program_file(const char *path) {
  return ends_with(path, ".gtasm") || ends_with(path, ".gtp");
}

// Loads a .gtasm/.gtp program (assembled against a, which may be null); exits 1 on error.
static GtProgram *load_program_or_exit(const char *path, const GtArch *a) {
  GtDiag d;
  diag_init(&d);
  d.max_errors = 20;
  if (!is_program_file(path)) usage_error((std::string("not a program file (.gtasm or .gtp): ") + path).c_str());
  GtProgram *p = program_load(path, a, &d);
  if (!p) exit(GT_EXIT_INPUT);
  return p;
}

// --disasm PROG: the program as .gtasm on stdout (or -o FILE). No static checks: a program
// that fails them is exactly what one wants to read.
static int cmd_disasm(const CliOptions &o) {
  GtArch *a = o.arch ? cli_load_arch(o) : nullptr;
  GtProgram *p = load_program_or_exit(o.disasm, a);
  int rc = GT_EXIT_OK;
  if (o.output) {
    if (program_save(o.output, a, p) != 0) {
      fprintf(stderr, "%s: error: cannot write: %s\n", o.output, strerror(errno));
      rc = GT_EXIT_INPUT;
    }
  } else if (gtasm_write(stdout, a, p) != 0) {
    rc = GT_EXIT_INPUT;
  }
  program_free(p);
  if (a) arch_free(a);
  return rc;
}

// PROG.gtasm|PROG.gtp --emit OUT.gtp|OUT.gtasm: assemble or convert; with --arch the program
// must pass program_check first, so a written .gtp is one the simulator accepts statically.
static int cmd_emit_program(const CliOptions &o) {
  if (!ends_with(o.emit, ".gtp") && !ends_with(o.emit, ".gtasm"))
    usage_error((std::string("--emit: output must end in .gtp or .gtasm: ") + o.emit).c_str());
  GtArch *a = o.arch ? cli_load_arch(o) : nullptr;
  GtProgram *p = load_program_or_exit(o.inputs[0], a);
  GtDiag d;
  diag_init(&d);
  d.max_errors = 20;
  int rc = GT_EXIT_OK;
  if (a && program_check(p, a, &d, o.inputs[0]) != 0) {
    rc = GT_EXIT_INPUT;
  } else if (program_save(o.emit, a, p) != 0) {
    fprintf(stderr, "%s: error: cannot write: %s\n", o.emit, strerror(errno));
    rc = GT_EXIT_INPUT;
  }
  program_free(p);
  if (a) arch_free(a);
  return rc;
}

int gtsim_cli(int argc, char **argv) {
  CliOptions o;
  enum {
    O_ARCH = 256, O_SET, O_DESCRIBE, O_JSON, O_CSV, O_VERSION, O_CONFIG_DOC,
    O_DISASM, O_EMIT, O_ISA_DOC,
  };
  enum { O_STATS = 320, O_BATCH };
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
      {0, 0, 0, 0},
  };
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, ":ho:", longopts, NULL)) != -1) {
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
  if (o.isa_doc) {
    isa_write_doc(stdout);
    return 0;
  }
  if (o.disasm) return cmd_disasm(o);
  if (o.emit && o.inputs.size() == 1 && is_program_file(o.inputs[0])) return cmd_emit_program(o);
  if (o.describe) {
    if (!o.arch) usage_error("--describe needs --arch FILE");
    GtArch *a = cli_load_arch(o);
    arch_describe(a, stdout, o.json);
    arch_free(a);
    return 0;
  }
  if (argc == 1) {
    fputs(usage_text, stderr);
    return GT_EXIT_INPUT;
  }
  usage_error("nothing to do: give --describe or an input file");
  return GT_EXIT_INPUT;
}

GtArch *cli_load_arch(const CliOptions &o) {
  GtDiag d;
  diag_init(&d);
  d.max_errors = 20;
  std::vector<const char *> sets(o.sets.begin(), o.sets.end());
  GtArch *a = arch_load(o.arch, sets.data(), (int)sets.size(), &d);
  if (!a) exit(GT_EXIT_INPUT);
  return a;
}

int sc_main(int argc, char **argv) { return gtsim_cli(argc, argv); }

int main(int argc, char **argv) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
  return sc_core::sc_elab_and_sim(argc, argv);
}
