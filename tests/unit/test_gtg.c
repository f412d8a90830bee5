/* test_gtg.c — the .gtg parser: accepted syntax, and every class of user error reported as
 * `file:line:col: error:` with the source line and a caret under the column. The expected
 * line:col of each error case is counted by hand in the case's text (columns from 1). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "graph.h"

static char msg[8192];

/* Parses text as "t.gtg", capturing the diagnostics in msg. */
static GsGraph *parse(const char *text) {
  GsDiag d;
  diag_init(&d);
  FILE *f = fmemopen(msg, sizeof msg, "w");
  d.out = f;
  GsGraph *g = gtg_parse("t.gtg", text, &d);
  fclose(f);
  return g;
}

#define HDR "gtg 1\nmodel m batch=2 dtype=fp16\ninput x: fp16[N, 4, 8, 8]\n"

static void test_minimal_and_comments(void **st) {
  (void)st;
  GsGraph *g = parse("# leading comment\n\n  gtg 1   # version\nmodel res-net.v1 batch=3\n"
                     "input x: fp32[N,4]  # no spaces needed\n"
                     "y = relu(x)\n\n\tz=dense(y)units=2 bias=0\n");
  assert_non_null(g);
  assert_string_equal(g->name, "res-net.v1");
  assert_int_equal(g->default_batch, 3);
  assert_int_equal(g->batch, 3);
  assert_int_equal(g->dtype, DT_FP16); /* default when dtype= is absent */
  assert_int_equal(g->nops, 2);
  assert_int_equal(g->ninputs, 1);
  assert_int_equal(g->tensors[g->inputs[0]].dtype, DT_FP32);
  assert_int_equal(g->tensors[g->inputs[0]].decl[0], GS_DIM_N);
  const GsOp *z = &g->ops[1];
  assert_int_equal(z->kind, OP_DENSE);
  assert_int_equal(z->at.units, 2);
  assert_int_equal(z->at.bias, 0);
  assert_int_equal(z->line, 8);
  assert_int_equal(z->col, 4); /* "\tz=dense": tab is column 1, 'd' is column 4 */
  assert_int_equal(g->tensors[z->out[0]].dim[0], 3);
  assert_int_equal(g->noutputs, 1);
  assert_string_equal(g->tensors[g->outputs[0]].name, "z");
  graph_free(g);
}

static void test_attribute_spellings(void **st) {
  (void)st;
  GsGraph *g = parse(HDR "a = conv2d(x) units=8 kernel=3 stride=2 pad=1\n"
                         "b = conv2d(x) units=8 kernel=1,3 stride=1,2 pad=0,1 dilation=1,2\n"
                         "c = conv2d(x) units=8 kernel=2 pad=1,0,0,1 groups=4 bias=0\n"
                         "r = reshape(x) shape=N,-1,16\n"
                         "input s: fp16[N, 4, 10]\n"
                         "d = conv1d(s) units=4 kernel=1,3 pad=0,2,0,0 groups=4\n"
                         "input, out2 = split(s) axis=-1 sizes=4, 6\n");
  assert_non_null(g);
  const GsAttrs *a = &g->ops[0].at, *b = &g->ops[1].at, *c = &g->ops[2].at;
  assert_int_equal(a->kernel[0], 3);
  assert_int_equal(a->kernel[1], 3);
  assert_int_equal(a->pad[0] + a->pad[1] + a->pad[2] + a->pad[3], 4);
  assert_int_equal(b->kernel[0], 1);
  assert_int_equal(b->kernel[1], 3);
  assert_int_equal(b->stride[1], 2);
  assert_int_equal(b->pad[0], 0);
  assert_int_equal(b->pad[1], 1);
  assert_int_equal(b->pad[2], 0);
  assert_int_equal(b->pad[3], 1);
  assert_int_equal(b->dilation[1], 2);
  assert_int_equal(c->pad[0], 1);
  assert_int_equal(c->pad[1], 0);
  assert_int_equal(c->pad[2], 0);
  assert_int_equal(c->pad[3], 1);
  assert_int_equal(c->groups, 4);
  const GsAttrs *r = &g->ops[3].at;
  assert_int_equal(r->nshape, 3);
  assert_int_equal(r->shape[0], GS_DIM_N);
  assert_int_equal(r->shape[1], -2); /* "-1" in the text: the inferred dim */
  const GsTensor *rt = &g->tensors[g->ops[3].out[0]];
  assert_int_equal(rt->dim[1], 4 * 8 * 8 / 16);
  const GsAttrs *d = &g->ops[4].at;
  assert_int_equal(d->kernel[1], 3); /* 1-D windows live in index 1 */
  assert_int_equal(d->pad[1], 2);
  assert_int_equal(d->pad[3], 0);
  const GsTensor *dt = &g->tensors[g->ops[4].out[0]];
  assert_int_equal(dt->dim[2], 10 + 2 - 3 + 1); /* L + pl + pr - k + 1 */
  assert_int_equal(g->ops[5].nout, 2); /* "input" may name a tensor when followed by ',' */
  assert_string_equal(g->tensors[g->ops[5].out[0]].name, "input");
  graph_free(g);
}

typedef struct {
  const char *name;
  const char *text;
  int line, col;
  const char *needle;
} ErrCase;

static const ErrCase cases[] = {
    {"empty file", "", 1, 1, "expected the header 'gtg 1'"},
    {"missing header", "model m\n", 1, 1, "expected the header"},
    {"bad version", "gtg 2\nmodel m\n", 1, 5, "unsupported .gtg format version 2"},
    {"missing model", "gtg 1\ninput x: fp16[4]\n", 2, 1, "expected 'model NAME"},
    {"unknown model attribute", "gtg 1\nmodel m seq=4\n", 2, 9, "unknown model attribute 'seq'"},
    {"bad dtype", "gtg 1\nmodel m dtype=fp8\n", 2, 15, "unknown dtype 'fp8'"},
    {"bad batch", "gtg 1\nmodel m batch=0\n", 2, 15, "batch must be an integer >= 1"},
    {"unknown op", HDR "y = conv3d(x) units=4\n", 4, 5, "unknown op 'conv3d'"},
    {"unknown attribute", HDR "y = relu(x) alpha=1\n", 4, 13, "unknown attribute 'alpha' for relu"},
    {"attribute of another op", HDR "y = conv2d(x) units=4 axis=1\n", 4, 23,
     "accepted: units, kernel, stride, pad, dilation, groups, bias"},
    {"bad attribute value", HDR "y = conv2d(x) units=4 stride=0\n", 4, 30,
     "bad value '0' for 'stride'"},
    {"word as attribute value", HDR "y = conv2d(x) units=four\n", 4, 21, "bad value 'four'"},
    {"too many values", HDR "y = conv2d(x) units=4 kernel=1,2,3\n", 4, 34, "at most 2 values"},
    {"three pads", HDR "y = conv2d(x) units=4 pad=1,2,3\n", 4, 27, "'pad' of conv2d: takes 1 value"},
    {"attribute twice", HDR "y = conv2d(x) units=4 units=5\n", 4, 23, "'units' given twice"},
    {"missing required attribute", HDR "y = conv2d(x) kernel=3\n", 4, 5,
     "conv2d needs the attribute 'units'"},
    {"pool needs kernel", HDR "y = maxpool(x) stride=2\n", 4, 5, "maxpool needs the attribute 'kernel'"},
    {"too few operands", HDR "y = add(x)\n", 4, 10, "add takes 2 operands, got 1"},
    {"too many operands", HDR "y = relu(x, x)\n", 4, 14, "relu takes 1 operand, got 2"},
    {"no operands", HDR "y = relu()\n", 4, 10, "relu takes 1 operand, got 0"},
    {"two outputs of relu", HDR "y, z = relu(x)\n", 4, 4, "relu has one output, got 2"},
    {"undefined name", HDR "y = relu(q)\n", 4, 10, "undefined name 'q'"},
    {"use before definition", HDR "y = add(x, z)\nz = relu(y)\n", 4, 12,
     "'z' is used before its definition at line 5"},
    {"self reference", HDR "y = add(x, y)\n", 4, 12, "'y' is used in its own definition (a cycle)"},
    {"redefined name", HDR "y = relu(x)\ny = relu(x)\n", 5, 1,
     "redefinition of 'y' (first defined at line 4)"},
    {"redefined input", HDR "input x: fp16[3]\n", 4, 7, "redefinition of 'x' (first defined at line 3)"},
    {"same output twice", HDR "a, a = split(x) axis=1\n", 4, 4, "output 'a' named twice"},
    {"shape mismatch", HDR "input w: fp16[N, 5, 8, 8]\ny = add(x, w)\n", 5, 5,
     "shapes [2, 4, 8, 8] and [2, 5, 8, 8] do not broadcast"},
    {"matmul mismatch", HDR "input w: fp16[7, 3]\ny = matmul(x, w)\n", 5, 5,
     "inner dimensions differ: [2, 4, 8, 8] · [7, 3]"},
    {"reshape count", HDR "y = reshape(x) shape=N,100\n", 4, 5,
     "cannot reshape [2, 4, 8, 8] (512 elements) to [2, 100] (200 elements)"},
    {"two inferred dims", HDR "y = reshape(x) shape=-1,-1\n", 4, 25, "only one -1"},
    {"split sizes vs outputs", HDR "a, b = split(x) axis=1 sizes=1,1,2\n", 4, 8, "2 outputs but 3 sizes"},
    {"groups do not divide", HDR "y = conv2d(x) units=6 groups=4\n", 4, 5,
     "groups=4 must divide input channels 4"},
    {"bad character", HDR "y = relu(x) @\n", 4, 13, "unexpected character '@'"},
    {"trailing junk after input", "gtg 1\nmodel m\ninput x: fp16[4] extra\n", 3, 18,
     "unexpected 'extra' at end of statement"},
    {"bad input dim", "gtg 1\nmodel m\ninput x: fp16[N, 0]\n", 3, 18, "expected a dim"},
    {"unclosed shape", "gtg 1\nmodel m\ninput x: fp16[N, 4\n", 3, 19, "expected ',' or ']'"},
    {"missing equals", HDR "y relu(x)\n", 4, 3, "expected ',' or '=' after an output name"},
    {"huge integer", HDR "y = dense(x) units=99999999999999999999\n", 4, 20, "integer too large"},
    {"just above 2^56", HDR "y = dense(x) units=72057594037927937\n", 4, 20, "integer too large"},
    {"2^56 lexes, out of range", HDR "y = dense(x) units=72057594037927936\n", 4, 20,
     "bad value '72057594037927936' for 'units': expected an integer in 1..1099511627776"},
    {"conv1d 2-D kernel", "gtg 1\nmodel m\ninput s: fp16[N, 4, 10]\ny = conv1d(s) units=4 kernel=3,5\n",
     4, 5, "a 1-D window has no height"},
    {"float embedding ids", HDR "y = embedding(x) vocab=10 dim=4\n", 4, 5,
     "ids 'x' must have an integer dtype (int8, int16, int32), not fp16"},
    {"kernel does not fit", HDR "y = conv2d(x) units=4 kernel=9\n", 4, 5, "does not fit input [2, 4, 8, 8]"},
};

/* One cmocka test per case (the case is the test's state), so TAP names each one. */
static void test_error_case(void **st) {
  const ErrCase *c = *st;
  GsGraph *g = parse(c->text);
  char where[64];
  snprintf(where, sizeof where, "t.gtg:%d:%d: error: ", c->line, c->col);
  if (g || strncmp(msg, where, strlen(where)) != 0 || !strstr(msg, c->needle)) {
    print_error("case '%s': expected \"%s...%s\", got:\n%s\n", c->name, where, c->needle,
                g ? "(parsed)" : msg);
    graph_free(g);
    fail();
  }
  /* The source line follows, then a caret under the column (2-space indent). */
  const char *caret = strstr(msg, "^\n");
  assert_non_null(caret);
  const char *bol = caret;
  while (bol > msg && bol[-1] != '\n') bol--;
  assert_int_equal((int)(caret - bol), 2 + c->col - 1);
}

static void test_load_errors(void **st) {
  (void)st;
  GsDiag d;
  diag_init(&d);
  FILE *f = fmemopen(msg, sizeof msg, "w");
  d.out = f;
  GsGraph *g = gtg_load("tests/cases/gtg/does-not-exist.gtg", &d);
  fclose(f);
  assert_null(g);
  assert_non_null(strstr(msg, "does-not-exist.gtg: error: cannot read"));
}

static void test_every_op_kind_parses(void **st) {
  (void)st;
  GsDiag d;
  diag_init(&d);
  GsGraph *g = gtg_load("tests/cases/gtg/all_ops.gtg", &d);
  assert_non_null(g);
  int seen[OP_COUNT] = {0};
  for (int o = 0; o < g->nops; o++) seen[g->ops[o].kind]++;
  for (int k = 0; k < OP_COUNT; k++) {
    if (!seen[k])
      print_error("op kind %s missing from all_ops.gtg\n", graph_opkind_name((GsOpKind)k));
    assert_true(seen[k] > 0);
  }
  graph_free(g);
}

enum { NCASES = sizeof cases / sizeof cases[0] };

int main(void) {
  struct CMUnitTest tests[4 + NCASES] = {
      cmocka_unit_test(test_minimal_and_comments),
      cmocka_unit_test(test_attribute_spellings),
      cmocka_unit_test(test_load_errors),
      cmocka_unit_test(test_every_op_kind_parses),
  };
  for (int i = 0; i < NCASES; i++) {
    struct CMUnitTest t = {cases[i].name, test_error_case, NULL, NULL, (void *)&cases[i]};
    tests[4 + i] = t;
  }
  return cmocka_run_group_tests_name("gtg parser", tests, NULL, NULL);
}
