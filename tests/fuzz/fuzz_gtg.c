/* fuzz_gtg.c — libFuzzer target for the .gtg reader (`make fuzz`).
 * Each input is parsed (with shape inference at the file's batch); when it parses, the graph
 * is re-bound to another batch, its stats printed (text and JSON), and it is written and
 * parsed back: the round trip must succeed and write the same text again, otherwise the
 * target aborts (a writer/parser disagreement is a bug, like a crash). Bad input must only
 * ever take the error paths. Crashes found are kept in tests/fuzz/regress/ and replayed by
 * tests/unit/test_gtg_fuzz_regress.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *write_mem(const GsGraph *g) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) abort();
  gtg_write(f, g);
  fclose(f);
  return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static FILE *null;
  if (!null) null = fopen("/dev/null", "w");
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = 0;
  GsDiag d;
  diag_init(&d);
  d.out = null;
  GsGraph *g = gtg_parse("fuzz.gtg", text, &d);
  free(text);
  if (!g) return 0;
  char *t1 = write_mem(g);
  GsGraph *h = gtg_parse("written.gtg", t1, &d);
  if (!h) {
    fprintf(stderr, "written graph does not parse:\n%s\n", t1);
    abort();
  }
  char *t2 = write_mem(h);
  if (strcmp(t1, t2) != 0) {
    fprintf(stderr, "round trip changed the text:\n%s\n---\n%s\n", t1, t2);
    abort();
  }
  graph_print_stats(null, g, 0);
  graph_print_stats(null, g, 1);
  if (graph_infer(g, g->default_batch + 1, &d) == 0) graph_print_stats(null, g, 1);
  free(t1);
  free(t2);
  graph_free(h);
  graph_free(g);
  return 0;
}
