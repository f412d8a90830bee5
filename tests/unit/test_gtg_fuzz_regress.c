/* test_gtg_fuzz_regress.c — replays every .gtg file in tests/fuzz/regress/ (crashes and overflows
 * the fuzzer or review found, kept after their fix) through the same steps as
 * tests/fuzz/fuzz_gtg.c, one TAP test per file. Each must take a clean path: either the parse
 * fails with exactly one reported error, or the graph parses, round-trips through the writer
 * and prints its stats. Run under `make asan` this also checks memory and UB. */
#include <glob.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "graph.h"

static char *write_mem(const GsGraph *g) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_non_null(f);
  gtg_write(f, g);
  fclose(f);
  return buf;
}

static void test_replay(void **st) {
  const char *path = *st;
  FILE *null = fopen("/dev/null", "w");
  assert_non_null(null);
  GsDiag d;
  diag_init(&d);
  d.out = null;
  size_t len;
  char *text = util_read_file(path, &len);
  assert_non_null(text);
  GsGraph *g = gtg_parse(path, text, &d); /* bytes after a NUL are ignored, as in the target */
  free(text);
  if (!g) {
    assert_int_equal(d.nerrors, 1);
  } else {
    assert_int_equal(d.nerrors, 0);
    char *t1 = write_mem(g);
    GsGraph *h = gtg_parse("written.gtg", t1, &d);
    assert_non_null(h);
    char *t2 = write_mem(h);
    assert_string_equal(t1, t2);
    graph_print_stats(null, g, 0);
    graph_print_stats(null, g, 1);
    free(t1);
    free(t2);
    graph_free(h);
    graph_free(g);
  }
  fclose(null);
}

int main(void) {
  glob_t gl;
  memset(&gl, 0, sizeof gl);
  glob("tests/fuzz/regress/*.gtg", 0, NULL, &gl);
  size_t n = gl.gl_pathc;
  if (n == 0) {
    fprintf(stderr, "no inputs tests/fuzz/regress/*.gtg (run from the repository root)\n");
    return 1;
  }
  struct CMUnitTest *tests = calloc(n, sizeof *tests);
  for (size_t i = 0; i < n; i++)
    tests[i] = (struct CMUnitTest){gl.gl_pathv[i], test_replay, NULL, NULL, gl.gl_pathv[i]};
  int r = _cmocka_run_group_tests("fuzz regressions", tests, n, NULL, NULL);
  free(tests);
  globfree(&gl);
  return r;
}
