/* test_gtg_roundtrip.c — parse -> write -> parse gives an identical IR, and writing again
 * gives identical text, for every .gtg file in tests/cases/gtg/ and workloads/ (the zoo),
 * one TAP test per file (run from the repository root, as tests/run.sh does); given
 * arguments, it checks those files instead (`build/tests/test_gtg_roundtrip a.gtg b.gtg`).
 * The comparison is structural, field by field: names, declared and inferred shapes, dtypes,
 * producers, op kinds, operands, outputs and every attribute. */
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

static void attrs_equal(const GsAttrs *a, const GsAttrs *b, int op) {
#define EQ(f)                                                                        \
  do {                                                                               \
    if (a->f != b->f) {                                                              \
      print_error("op %d: attribute %s differs: %lld vs %lld\n", op, #f, (long long)a->f, \
                  (long long)b->f);                                                  \
      fail();                                                                        \
    }                                                                                \
  } while (0)
  EQ(units);
  for (int i = 0; i < 2; i++) {
    EQ(kernel[i]);
    EQ(stride[i]);
    EQ(dilation[i]);
  }
  for (int i = 0; i < 4; i++) EQ(pad[i]);
  EQ(groups);
  EQ(bias);
  EQ(axis);
  EQ(nsizes);
  for (int i = 0; i < a->nsizes; i++) EQ(sizes[i]);
  EQ(nperm);
  for (int i = 0; i < a->nperm; i++) EQ(perm[i]);
  EQ(nshape);
  for (int i = 0; i < a->nshape; i++) EQ(shape[i]);
  EQ(vocab);
  EQ(dim);
  EQ(bag);
  EQ(self_interaction);
  EQ(pad_interaction);
  EQ(ceil_mode);
#undef EQ
}

static void graphs_equal(const GsGraph *a, const GsGraph *b) {
  assert_string_equal(a->name, b->name);
  assert_int_equal(a->default_batch, b->default_batch);
  assert_int_equal(a->batch, b->batch);
  assert_int_equal(a->dtype, b->dtype);
  assert_int_equal(a->ntensors, b->ntensors);
  assert_int_equal(a->nops, b->nops);
  assert_int_equal(a->ninputs, b->ninputs);
  assert_int_equal(a->noutputs, b->noutputs);
  for (int i = 0; i < a->ninputs; i++) assert_int_equal(a->inputs[i], b->inputs[i]);
  for (int i = 0; i < a->noutputs; i++) assert_int_equal(a->outputs[i], b->outputs[i]);
  for (int t = 0; t < a->ntensors; t++) {
    const GsTensor *x = &a->tensors[t], *y = &b->tensors[t];
    assert_string_equal(x->name, y->name);
    assert_int_equal(x->ndim, y->ndim);
    assert_int_equal(x->dtype, y->dtype);
    assert_int_equal(x->producer, y->producer);
    for (int k = 0; k < x->ndim; k++) {
      assert_int_equal(x->decl[k], y->decl[k]);
      assert_int_equal(x->dim[k], y->dim[k]);
    }
  }
  for (int o = 0; o < a->nops; o++) {
    const GsOp *p = &a->ops[o], *q = &b->ops[o];
    assert_int_equal(p->kind, q->kind);
    assert_int_equal(p->nin, q->nin);
    assert_int_equal(p->nout, q->nout);
    for (int i = 0; i < p->nin; i++) assert_int_equal(p->in[i], q->in[i]);
    for (int i = 0; i < p->nout; i++) assert_int_equal(p->out[i], q->out[i]);
    attrs_equal(&p->at, &q->at, o);
  }
}

static char *write_mem(const GsGraph *g) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_non_null(f);
  gtg_write(f, g);
  fclose(f);
  return buf;
}

static void test_file(void **st) {
  const char *path = *st;
  GsDiag d;
  diag_init(&d);
  GsGraph *a = gtg_load(path, &d);
  assert_non_null(a);
  char *t1 = write_mem(a);
  GsGraph *b = gtg_parse("written.gtg", t1, &d);
  if (!b) print_error("written text of %s does not parse:\n%s\n", path, t1);
  assert_non_null(b);
  graphs_equal(a, b);
  char *t2 = write_mem(b);
  assert_string_equal(t1, t2);
  free(t1);
  free(t2);
  graph_free(a);
  graph_free(b);
}

/* A graph built through the API with names no .gtg file could hold (as ONNX importers
 * produce) is written with sanitized unique names and reads back with the same structure. */
static void test_invalid_names(void **st) {
  (void)st;
  GsGraph *g = graph_new("torch-jit export");
  int x = graph_add_input(g, "input.1", 2, (int64_t[]){GS_DIM_N, 8}, DT_FP16);
  int y = graph_add_input(g, "0bad", 2, (int64_t[]){GS_DIM_N, 8}, DT_FP16);
  const char *n1 = "/layer/Add_output_0", *n2 = "__layer_Add_output_0_2";
  int in[2] = {x, y};
  assert_true(graph_add_op(g, OP_ADD, in, 2, &n1, 1, NULL) >= 0);
  int z = g->ntensors - 1;
  assert_true(graph_add_op(g, OP_RELU, &z, 1, &n2, 1, NULL) >= 0);
  GsDiag d;
  diag_init(&d);
  assert_int_equal(graph_infer(g, 1, &d), 0);
  graph_fill_outputs(g);
  char *t = write_mem(g);
  GsGraph *b = gtg_parse("w.gtg", t, &d);
  if (!b) print_error("%s\n", t);
  assert_non_null(b);
  assert_int_equal(b->nops, 2);
  assert_string_equal(b->name, "torch-jit_export");
  assert_string_equal(b->tensors[0].name, "input.1");
  assert_string_equal(b->tensors[1].name, "_0bad_1");
  /* "/layer/Add_output_0" (id 2) sanitizes to "__layer_Add_output_0_2", which is the valid
   * name of tensor 3, so it gets one more leading '_'. */
  assert_string_equal(b->tensors[2].name, "___layer_Add_output_0_2");
  assert_string_equal(b->tensors[3].name, "__layer_Add_output_0_2");
  assert_int_equal(b->ops[1].in[0], 2);
  free(t);
  graph_free(b);
  graph_free(g);
}

int main(int argc, char **argv) {
  glob_t gl;
  memset(&gl, 0, sizeof gl);
  glob("tests/cases/gtg/*.gtg", 0, NULL, &gl);
  glob("workloads/*.gtg", GLOB_APPEND, NULL, &gl);
  size_t n = argc > 1 ? (size_t)argc - 1 : gl.gl_pathc;
  char **files = argc > 1 ? argv + 1 : gl.gl_pathv;
  struct CMUnitTest *tests = calloc(n + 1, sizeof *tests);
  tests[0] = (struct CMUnitTest){"invalid names are sanitized", test_invalid_names, NULL, NULL, NULL};
  for (size_t i = 0; i < n; i++)
    tests[i + 1] = (struct CMUnitTest){files[i], test_file, NULL, NULL, files[i]};
  int r = _cmocka_run_group_tests("gtg round trip", tests, n + 1, NULL, NULL);
  free(tests);
  globfree(&gl);
  return r;
}
