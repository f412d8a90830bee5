// cli.h — options shared by the modes of the gtsim command line (sim/main.cpp).
#ifndef GT_CLI_H
#define GT_CLI_H
#include <string>
#include <vector>

extern "C" {
#include "arch.h"
}

struct CliOptions {
  const char *arch = nullptr;
  std::vector<const char *> sets;
  std::vector<const char *> inputs;
  const char *output = nullptr;   // -o
  bool describe = false, json = false, csv = false, config_doc = false;
  bool stats = false;             // --stats (sim/cli_stats.cpp)
  long long batch = 0;            // --batch B; 0 = the model file's own batch
  const char *disasm = nullptr;   // --disasm PROG: print PROG as .gtasm
  const char *emit = nullptr;     // --emit OUT.gtp|OUT.gtasm: write the program
  bool isa_doc = false;           // --isa-doc: print docs/isa.md
};

// Loads --arch with --set overrides; exits 1 with the parser's messages on error.
GtArch *cli_load_arch(const CliOptions &o);
int gtsim_cli(int argc, char **argv);
// --stats mode (sim/cli_stats.cpp); returns the exit status.
int cli_stats(const CliOptions &o);
// Parses a --batch value: an integer in 1..2^40, or -1.
long long cli_parse_batch(const char *s);
#endif
