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
  const char *disasm = nullptr;   // --disasm PROG: print PROG as .gtasm
  const char *emit = nullptr;     // --emit OUT.gtp|OUT.gtasm: write the program
  bool isa_doc = false;           // --isa-doc: print docs/isa.md
};

// Loads --arch with --set overrides; exits 1 with the parser's messages on error.
GtArch *cli_load_arch(const CliOptions &o);
int gtsim_cli(int argc, char **argv);
#endif
