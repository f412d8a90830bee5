/* test_graph_random.c — random graphs built through the API (as an importer would), with
 * random op kinds, operands and attributes: whatever graph_infer() accepts must pass
 * graph_check(), be written by gtg_write() and parse back to the same structure and shapes,
 * with text that writes identically, at two batch sizes. A fixed-seed xorshift generator
 * keeps the test deterministic; each test case is one seed.
 * Oracle: the API graph itself (the round trip must reproduce it field by field). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "graph.h"
#include "rng_testlib.h"

enum { MAX_STEPS = 24, TRIES = 60 };

static int pick(Rng *r, int n) { return (int)(rnd(r) % (uint64_t)n); }

/* One op to add: kind, operand ids, output count, attributes. */
typedef struct {
  GsOpKind kind;
  int in[GS_MAX_OPERANDS], nin, nout;
  GsAttrs at;
} Step;

static GsGraph *build(const Step *steps, int n) {
  GsGraph *g = graph_new("random");
  g->default_batch = 2; /* the batch the candidates are inferred at, written in the header */
  int64_t a[] = {GS_DIM_N, 4, 6, 6}, b[] = {GS_DIM_N, 6, 8}, c[] = {GS_DIM_N, 3};
  assert_int_equal(graph_add_input(g, "img", 4, a, DT_FP16), 0);
  assert_int_equal(graph_add_input(g, "seq", 3, b, DT_FP16), 1);
  assert_int_equal(graph_add_input(g, "ids", 2, c, DT_INT32), 2);
  for (int s = 0; s < n; s++) {
    char names[GS_MAX_OPERANDS][16];
    const char *outs[GS_MAX_OPERANDS];
    for (int j = 0; j < steps[s].nout; j++) {
      snprintf(names[j], sizeof names[j], "t%d_%d", s, j);
      outs[j] = names[j];
    }
    int o = graph_add_op(g, steps[s].kind, steps[s].in, steps[s].nin, outs, steps[s].nout,
                         &steps[s].at);
    assert_true(o >= 0);
  }
  graph_fill_outputs(g);
  return g;
}

/* A random operand: usually one of the rank the kind wants (conv2d/pool 4, conv1d and
 * interaction 3), preferring recent tensors so chains get long; operands may repeat. */
static int pick_operand(Rng *r, const GsGraph *g, GsOpKind k) {
  int want = k == OP_CONV2D || k == OP_MAXPOOL || k == OP_AVGPOOL || k == OP_GAVGPOOL ? 4
             : k == OP_CONV1D || k == OP_INTERACTION                                 ? 3
                                                                                     : 0;
  if (want && pick(r, 4))
    for (int t = g->ntensors - 1 - pick(r, 3); t >= 0; t--)
      if (g->tensors[t].ndim == want) return t;
  int n = g->ntensors;
  return pick(r, 3) ? n - 1 - pick(r, n < 4 ? n : 4) : pick(r, n);
}

static void random_step(Rng *r, const GsGraph *g, Step *st) {
  memset(st, 0, sizeof *st);
  st->kind = (GsOpKind)pick(r, OP_COUNT);
  int lo = graph_opkind_min_inputs(st->kind), hi = graph_opkind_max_inputs(st->kind);
  st->nin = lo + pick(r, hi - lo + 1 > 3 ? 3 : hi - lo + 1);
  for (int i = 0; i < st->nin; i++) st->in[i] = pick_operand(r, g, st->kind);
  st->nout = st->kind == OP_SPLIT ? 1 + pick(r, 3) : 1;
  GsAttrs *at = &st->at;
  graph_attrs_default(at);
  static const int small[] = {1, 1, 2, 3, 4, 6};
  at->units = small[pick(r, 6)] * (1 + pick(r, 2));
  at->kernel[0] = small[pick(r, 6)];
  at->kernel[1] = pick(r, 2) ? at->kernel[0] : small[pick(r, 6)];
  at->stride[0] = at->stride[1] = 1 + pick(r, 2);
  at->dilation[0] = at->dilation[1] = 1 + (pick(r, 4) == 0);
  for (int i = 0; i < 4; i++) at->pad[i] = pick(r, 2);
  if (pick(r, 2)) at->pad[2] = at->pad[0], at->pad[3] = at->pad[1];
  at->groups = pick(r, 2) ? 1 : small[pick(r, 6)];
  at->bias = pick(r, 2);
  at->axis = pick(r, 7) - 3;
  at->ceil_mode = pick(r, 2);
  if (st->kind == OP_SPLIT && st->nout > 1 && pick(r, 2)) {
    at->nsizes = st->nout;
    for (int j = 0; j < st->nout; j++) at->sizes[j] = 1 + pick(r, 4);
  }
  at->nperm = 1 + pick(r, 4);
  for (int i = 0; i < at->nperm; i++) at->perm[i] = i;
  for (int i = at->nperm - 1; i > 0; i--) {
    int j = pick(r, i + 1), t = at->perm[i];
    at->perm[i] = at->perm[j];
    at->perm[j] = t;
  }
  at->nshape = 1 + pick(r, 3);
  for (int i = 0; i < at->nshape; i++) at->shape[i] = small[pick(r, 6)];
  at->shape[pick(r, at->nshape)] = pick(r, 2) ? GS_DIM_N : -2;
  at->vocab = 10 + pick(r, 50);
  at->dim = small[pick(r, 6)];
  at->bag = pick(r, 3) ? 1 : 3;
  at->self_interaction = pick(r, 2);
  at->pad_interaction = pick(r, 2);
}

/* The attributes that .gtg can carry for this kind must survive the round trip. */
static void same_attrs(const GsOp *p, const GsOp *q) {
  const GsAttrs *a = &p->at, *b = &q->at;
  switch (p->kind) {
  case OP_CONV2D:
  case OP_CONV1D:
  case OP_MAXPOOL:
  case OP_AVGPOOL:
    assert_memory_equal(a->kernel, b->kernel, sizeof a->kernel);
    assert_memory_equal(a->stride, b->stride, sizeof a->stride);
    assert_memory_equal(a->dilation, b->dilation, sizeof a->dilation);
    assert_memory_equal(a->pad, b->pad, sizeof a->pad);
    if (p->kind == OP_MAXPOOL || p->kind == OP_AVGPOOL) {
      assert_int_equal(a->ceil_mode, b->ceil_mode);
      break;
    }
    assert_int_equal(a->groups, b->groups);
    /* fallthrough */
  case OP_DENSE:
    assert_int_equal(a->units, b->units);
    assert_int_equal(a->bias, b->bias);
    break;
  case OP_SOFTMAX:
  case OP_CONCAT:
  case OP_GLU: assert_int_equal(a->axis, b->axis); break;
  case OP_SPLIT:
    assert_int_equal(a->axis, b->axis);
    assert_int_equal(a->nsizes, b->nsizes);
    assert_memory_equal(a->sizes, b->sizes, (size_t)a->nsizes * sizeof a->sizes[0]);
    break;
  case OP_TRANSPOSE:
    assert_int_equal(a->nperm, b->nperm);
    assert_memory_equal(a->perm, b->perm, (size_t)a->nperm * sizeof a->perm[0]);
    break;
  case OP_RESHAPE:
    assert_int_equal(a->nshape, b->nshape);
    assert_memory_equal(a->shape, b->shape, (size_t)a->nshape * sizeof a->shape[0]);
    break;
  case OP_EMBEDDING:
    assert_int_equal(a->vocab, b->vocab);
    assert_int_equal(a->dim, b->dim);
    assert_int_equal(a->bag, b->bag);
    break;
  case OP_INTERACTION:
    assert_int_equal(a->self_interaction, b->self_interaction);
    assert_int_equal(a->pad_interaction, b->pad_interaction);
    break;
  default: break;
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

static void test_seed(void **state) {
  uint64_t seed = (uint64_t)(uintptr_t)*state;
  Rng r = {seed * 0x9E3779B97F4A7C15ull + 1};
  Step steps[MAX_STEPS];
  int n = 0;
  FILE *null = fopen("/dev/null", "w");
  GsDiag d;
  diag_init(&d);
  d.out = null;
  /* Grow the graph one accepted op at a time; a candidate graph_infer rejects is dropped. */
  for (int t = 0; t < TRIES && n < MAX_STEPS; t++) {
    GsGraph *g = build(steps, n);
    assert_int_equal(graph_infer(g, 2, &d), 0); /* ranks for pick_operand */
    random_step(&r, g, &steps[n]);
    graph_free(g);
    g = build(steps, n + 1);
    if (graph_infer(g, 2, &d) == 0) n++;
    graph_free(g);
  }
  GsGraph *g = build(steps, n);
  assert_int_equal(graph_infer(g, 2, &d), 0);
  assert_null(graph_check(g));
  char *t1 = write_mem(g);
  GsGraph *h = gtg_parse("random.gtg", t1, &d);
  if (!h) print_error("seed %llu: written graph does not parse:\n%s\n", (unsigned long long)seed, t1);
  assert_non_null(h);
  assert_int_equal(h->ntensors, g->ntensors);
  assert_int_equal(h->nops, g->nops);
  for (int o = 0; o < g->nops; o++) {
    const GsOp *p = &g->ops[o], *q = &h->ops[o];
    assert_int_equal(p->kind, q->kind);
    assert_int_equal(p->nin, q->nin);
    assert_int_equal(p->nout, q->nout);
    assert_memory_equal(p->in, q->in, (size_t)p->nin * sizeof p->in[0]);
    assert_memory_equal(p->out, q->out, (size_t)p->nout * sizeof p->out[0]);
    same_attrs(p, q);
  }
  /* Same shapes and costs at the file's batch (2) and after re-binding both to 5. */
  for (int b = 0; b < 2; b++) {
    int64_t batch = b ? 5 : 2;
    if (graph_infer(g, batch, &d) != 0) continue; /* a hard-coded reshape may not fit */
    assert_int_equal(graph_infer(h, batch, &d), 0);
    for (int t = 0; t < g->ntensors; t++) {
      assert_int_equal(g->tensors[t].ndim, h->tensors[t].ndim);
      assert_int_equal(g->tensors[t].dtype, h->tensors[t].dtype);
      assert_memory_equal(g->tensors[t].dim, h->tensors[t].dim,
                          (size_t)g->tensors[t].ndim * sizeof(int64_t));
    }
    for (int o = 0; o < g->nops; o++) {
      GsOpCost x = graph_op_cost(g, o), y = graph_op_cost(h, o);
      assert_memory_equal(&x, &y, sizeof x);
      assert_true(x.flops >= 2 * x.macs);
    }
  }
  char *t2 = write_mem(h);
  assert_string_equal(t1, t2);
  free(t1);
  free(t2);
  graph_free(g);
  graph_free(h);
  fclose(null);
}

enum { NSEEDS = 40 };

int main(void) {
  struct CMUnitTest tests[NSEEDS];
  static char names[NSEEDS][24];
  for (int i = 0; i < NSEEDS; i++) {
    snprintf(names[i], sizeof names[i], "random graph seed %d", i + 1);
    tests[i] = (struct CMUnitTest){names[i], test_seed, NULL, NULL, (void *)(uintptr_t)(i + 1)};
  }
  return cmocka_run_group_tests_name("random graphs", tests, NULL, NULL);
}
