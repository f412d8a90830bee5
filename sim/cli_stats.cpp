// cli_stats.cpp — the `gtsim --stats MODEL [--batch B] [--json|--csv] [-o FILE]` mode: load
// the model, bind the batch (the file's own unless --batch), print graph_print_stats() to
// stdout or atomically to -o FILE. Needs no --arch. Exit 1 on any user error (docs/gtg.md).
// Also cli_load_model(), every mode's model loader (model_load + the --dtype cast).
#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "cli.h"

extern "C" {
#include "graph.h"
#include "util.h"
}

long long cli_parse_batch(const char *s) {
  if (!s || !*s) return -1;
  char *end = nullptr;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || *end || v < 1 || v > (1LL << 40)) return -1;
  return v;
}

GsGraph *cli_load_model(const CliOptions &o, const char *path, GsDiag *d) {
  GsGraph *g = model_load(path, d);
  if (g && o.dtype >= 0 && graph_cast(g, (GsDtype)o.dtype, d) != 0) {
    graph_free(g);
    return nullptr;
  }
  return g;
}

static void print(FILE *out, const GsGraph *g, const CliOptions &o) {
  if (o.csv) graph_print_stats_csv(out, g);
  else graph_print_stats(out, g, o.json);
}

int cli_stats(const CliOptions &o) {
  if (o.csv && o.json) {
    fprintf(stderr, "gtsim: --json and --csv exclude each other\n(try 'gtsim --help')\n");
    return GS_EXIT_INPUT;
  }
  if (o.inputs.size() != 1) {
    fprintf(stderr, "gtsim: --stats needs exactly one model file\n(try 'gtsim --help')\n");
    return GS_EXIT_INPUT;
  }
  GsDiag d;
  diag_init(&d);
  GsGraph *g = cli_load_model(o, o.inputs[0], &d);
  if (!g) return GS_EXIT_INPUT;
  int64_t batch = o.batch > 0 ? o.batch : g->default_batch;
  if (batch != g->batch && graph_infer(g, batch, &d) != 0) {
    graph_free(g);
    return GS_EXIT_INPUT;
  }
  int rc = cli_write_output(o.output, [&](FILE *f) { print(f, g, o); });
  graph_free(g);
  return rc;
}
