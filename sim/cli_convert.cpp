// cli_convert.cpp — the `gtsim --convert MODEL -o OUT.gtg [--batch B]` mode: load any model
// model_load() reads (.onnx or .gtg), set its default batch to B if given, check it at its
// default batch, and write it as .gtg text (docs/gtg.md)
// atomically to OUT (util_write_file_atomic: a failed run leaves no partial file), or to stdout for
// `-o -`. Needs no --arch. Exit 1 on any user error (docs/onnx.md).
#include <cstdio>
#include <cstring>

#include "cli.h"

extern "C" {
#include "graph.h"
#include "util.h"
}

int cli_convert(const CliOptions &o) {
  if (!o.output || !*o.output) {
    fprintf(stderr, "gtsim: --convert needs -o OUT.gtg (or -o - for stdout)\n"
                    "(try 'gtsim --help')\n");
    return GS_EXIT_INPUT;
  }
  if (strcmp(o.output, "-") != 0 && !util_has_ext(o.output, ".gtg")) {
    fprintf(stderr, "gtsim: --convert writes .gtg text; name the output OUT.gtg, not '%s'\n",
            o.output);
    return GS_EXIT_INPUT;
  }
  if (!o.inputs.empty()) {
    fprintf(stderr, "gtsim: --convert takes one model; unexpected '%s'\n", o.inputs[0]);
    return GS_EXIT_INPUT;
  }
  GsDiag d;
  diag_init(&d);
  GsGraph *g = cli_load_model(o, o.convert, &d);
  if (!g) return GS_EXIT_INPUT;
  if (o.batch > 0) g->default_batch = o.batch; /* --batch B: the header's batch=B */
  if (graph_infer(g, g->default_batch, &d) != 0) {
    graph_free(g);
    return GS_EXIT_INPUT;
  }
  const char *out = strcmp(o.output, "-") == 0 ? nullptr : o.output; /* -o -: stdout */
  int rc = cli_write_output(out, [&](FILE *f) { gtg_write(f, g); });
  graph_free(g);
  return rc;
}
