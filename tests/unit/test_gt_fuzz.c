/* test_gt_fuzz.c — random graphs through every GraphTurbo pass (give bugs a
 * chance). A fixed-seed generator builds DAGs of convolutions (strided, depthwise), pools,
 * elementwise ops, residual adds, channel concats and splits (several outputs), global
 * pooling and dense heads through the real graph builder and graph_infer; each is scheduled
 * on a random machine (1 to 9 cores, LB from 256 B to 4 MiB, both LB readings, all three
 * initial groupings, both footprint readings) with the invariant checker on, and scheduled twice to compare the JSON.
 * The oracle is the checker itself (it dies, exit 3, on any broken invariant) plus
 * determinism and a few whole-schedule identities checked here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gt.h"

static uint64_t rng;
static uint32_t rnd(uint32_t n) { /* xorshift64*, deterministic */
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return (uint32_t)((rng * 2685821657736338717u) >> 33) % n;
}

static FILE *devnull;
static int quiet_infer(GsGraph *g, int64_t n) { /* the generator's own mistakes are silent */
  GsDiag d;
  diag_init(&d);
  d.out = devnull;
  return graph_infer(g, n, &d);
}

static char *name(GsGraph *g) { return arena_printf(g->arena, "t%d", g->ntensors); }

/* A random 4-D activation of the graph built so far. */
static int pick(const GsGraph *g) {
  for (;;) {
    int t = (int)rnd((uint32_t)g->ntensors);
    if (g->tensors[t].ndim == 4) return t;
  }
}

static int add_op(GsGraph *g, GsOpKind k, const int *in, int nin, const GsAttrs *at) {
  const char *out = name(g);
  return graph_add_op(g, k, in, nin, &out, 1, at);
}

static GsGraph *random_graph(int64_t n) {
  GsGraph *g = graph_new("fuzz");
  int64_t d[4] = {GS_DIM_N, 4 << rnd(3), 4 + rnd(13), 0};
  d[3] = d[2];
  graph_add_input(g, "x", 4, d, DT_FP16);
  if (quiet_infer(g, n) != 0) return g; /* shapes of the input for pick() */
  int nops = 4 + (int)rnd(30);
  for (int i = 0; i < nops; i++) {
    if (quiet_infer(g, n) != 0) break; /* keep dims current for the choices */
    int x = pick(g);
    const GsTensor *t = &g->tensors[x];
    GsAttrs at;
    graph_attrs_default(&at);
    switch (rnd(9)) {
    case 0: add_op(g, rnd(2) ? OP_RELU : OP_BATCHNORM, &x, 1, NULL); break;
    case 1:
    case 2: {
      int k = rnd(2) ? 3 : 1, s = t->dim[2] >= 4 && rnd(3) == 0 ? 2 : 1;
      at.kernel[0] = at.kernel[1] = k;
      at.stride[0] = at.stride[1] = s;
      for (int j = 0; j < 4; j++) at.pad[j] = k / 2;
      at.units = rnd(3) == 0 ? t->dim[1] : 4 << rnd(3);
      if (at.units == t->dim[1] && rnd(2)) at.groups = (int)at.units; /* depthwise */
      at.bias = 0;
      add_op(g, OP_CONV2D, &x, 1, &at);
      break;
    }
    case 3:
      if (t->dim[2] < 2) break;
      at.kernel[0] = at.kernel[1] = 2;
      at.stride[0] = at.stride[1] = 2;
      add_op(g, OP_MAXPOOL, &x, 1, &at);
      break;
    case 4:
    case 5: { /* residual add with a same-shaped tensor (or itself) */
      int y = x;
      for (int tries = 0; tries < 20; tries++) {
        int c = pick(g);
        if (memcmp(g->tensors[c].dim, t->dim, sizeof t->dim) == 0 && c != x) y = c;
      }
      int in[2] = {x, y};
      add_op(g, OP_ADD, in, 2, NULL);
      break;
    }
    case 6: { /* channel concat with a tensor of the same N, H, W */
      for (int tries = 0; tries < 20; tries++) {
        int c = pick(g);
        const GsTensor *u = &g->tensors[c];
        if (c != x && u->dim[0] == t->dim[0] && u->dim[2] == t->dim[2] && u->dim[3] == t->dim[3]) {
          int in[2] = {x, c};
          at.axis = 1;
          add_op(g, OP_CONCAT, in, 2, &at);
          break;
        }
      }
      break;
    }
    case 7: { /* split channels in two halves: two outputs */
      if (t->dim[1] % 2) break;
      at.axis = 1;
      at.nsizes = 2;
      at.sizes[0] = at.sizes[1] = t->dim[1] / 2;
      const char *outs[2] = {name(g), arena_printf(g->arena, "t%d_b", g->ntensors)};
      graph_add_op(g, OP_SPLIT, &x, 1, outs, 2, &at);
      break;
    }
    default: add_op(g, OP_SIGMOID, &x, 1, NULL); break;
    }
  }
  if (rnd(2)) { /* a classifier head */
    int x = pick(g);
    int gp = add_op(g, OP_GAVGPOOL, &x, 1, NULL);
    GsAttrs at;
    graph_attrs_default(&at);
    at.nshape = 2;
    at.shape[0] = GS_DIM_N;
    at.shape[1] = -2;
    int r = add_op(g, OP_RESHAPE, &g->ops[gp].out[0], 1, &at);
    graph_attrs_default(&at);
    at.units = 10;
    add_op(g, OP_DENSE, &g->ops[r].out[0], 1, &at);
  }
  return g;
}

static char *json_of(const GsGraph *g, const GsArch *a, const GtOptions *o, size_t *len,
                     int *ninsts) {
  GtSchedule *s = gt_schedule(g, a, o, GT_NPASSES - 1);
  /* identities: instances = sum of the live groups' factors; every instance bound */
  int64_t want = 0;
  for (int i = 0; i < s->nlive; i++) {
    const GtGroup *gr = &s->groups[s->live[i]];
    want += gr->best.split ? gr->best.factor : 1;
  }
  assert_int_equal(s->ninsts, want);
  *ninsts = s->ninsts;
  char *buf;
  FILE *f = open_memstream(&buf, len);
  gt_dump_json(f, s);
  fclose(f);
  gt_free(s);
  return buf;
}

static void random_graphs(void **state) {
  (void)state;
  int scheduled = 0, split = 0, total_ops = 0;
  int nseeds = getenv("GT_FUZZ_SEEDS") ? atoi(getenv("GT_FUZZ_SEEDS")) : 300;
  devnull = fopen("/dev/null", "w");
  assert_non_null(devnull);
  for (int seed = 1; seed <= nseeds; seed++) {
    rng = 0x9E3779B97F4A7C15u * (uint64_t)seed;
    int64_t n = 1 + rnd(8);
    GsGraph *g = random_graph(n);
    if (g->nops == 0 || quiet_infer(g, n) != 0) {
      graph_free(g);
      continue;
    }
    static const int cores[] = {1, 2, 3, 8, 9};
    GsArch a;
    memset(&a, 0, sizeof a);
    a.name = "fuzz";
    a.nclusters = 1;
    a.ncore_kinds = 1;
    a.core_kinds[0].count = cores[rnd(5)];
    a.core_kinds[0].lb_bytes = (int64_t)256 << rnd(15);
    a.cores_per_cluster = a.core_kinds[0].count;
    GtOptions o;
    gt_options_default(&o);
    o.check = 1;
    o.lb_scope = rnd(2) ? GT_LB_CORE : GT_LB_CLUSTER;
    o.init = (GtInitGroups)rnd(3);
    o.footprint = rnd(2) ? GT_FOOT_LIVE : GT_FOOT_OP;
    size_t l1, l2;
    int i1, i2;
    char *j1 = json_of(g, &a, &o, &l1, &i1), *j2 = json_of(g, &a, &o, &l2, &i2);
    assert_int_equal(l1, l2);
    assert_memory_equal(j1, j2, l1);
    free(j1);
    free(j2);
    scheduled++;
    split += i1 > 1;
    total_ops += g->nops;
    if (getenv("GT_FUZZ_VERBOSE")) fprintf(stderr, "seed %d: %d ops, %d instances\n", seed, g->nops, i1);
    graph_free(g);
  }
  fclose(devnull);
  /* the generator must mostly produce valid graphs, and the machines must split some */
  assert_true(scheduled >= 200);
  assert_true(split >= 50);
  assert_true(total_ops >= 8 * scheduled); /* not only trivial graphs */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(random_graphs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
