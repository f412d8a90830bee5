/* test_gt_paper.c — the GraphTurbo paper's worked examples (OSDI'23 §3), reproduced.
 *
 * Expected numbers are derived by hand in the comments next to them, from the tensor sizes
 * of ResNet-50 v1.5 (fp16, NCHW) and the footprint model of docs/graphturbo.md:
 *   peak(group) = the largest (operands + result) of one op; no in-place reuse.
 * Unit used throughout: U = one image of a [64, 56, 56] fp16 tensor = 64*56*56*2 = 401408 B.
 * Per image: stage-1 output [256,56,56] = 4U, stage-2 [512,28,28] = 2U, stage-3 [1024,14,14]
 * = 1U, stage-4 [2048,7,7] = U/2. The residual add reads two stage outputs and writes a third,
 * so a stage's peak is 3 x its output: 12U, 6U, 3U, 1.5U per image (every other op is
 * smaller: e.g. the stage-2 conv block's first 1x1 conv reads 4U and writes 2U = 6U; the
 * stem's batchnorm on [64,112,112] reads and writes 4U each = 8U < 12U).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gt_testgraph.h"

static const int64_t U = 64 * 56 * 56 * 2;

static int group_has(const GtSchedule *s, int gid, const char *op) {
  int id = tg_op_id(s->g, op);
  assert_true(id >= 0);
  for (int i = 0; i < s->groups[gid].nops; i++)
    if (s->groups[gid].ops[i] == id) return 1;
  return 0;
}

/* The id of the group an initial sub-graph or merge result that holds exactly ops named by
 * the prefixes (every op of the graph whose name starts with one of them). */
static int holds_exactly(const GtSchedule *s, int gid, const char *const *prefixes, int np) {
  int want = 0;
  for (int op = 0; op < s->g->nops; op++) {
    int in = 0;
    for (int k = 0; k < np; k++) in |= strncmp(s->g->ops[op].name, prefixes[k], strlen(prefixes[k])) == 0;
    if (!in) continue;
    want++;
    if (!group_has(s, gid, s->g->ops[op].name)) return 0;
  }
  return want == s->groups[gid].nops;
}

/* ---- Fig. 5: a ResNet conv block followed by an identity block ---- */

/* Sub-graph labels of Fig. 5, as op-name prefixes of the graph built below. */
static const char *const SG1[] = {"cb.a.", "cb.b.", "cb.c."}; /* conv block main path */
static const char *const SG2[] = {"cb.s."};                    /* shortcut conv layer */
static const char *const SG3[] = {"cb.add", "cb.out"};         /* add + relu */
static const char *const SG4[] = {"ib.a.", "ib.b.", "ib.c."}; /* identity block main path */
static const char *const SG5[] = {"ib.add", "ib.out"};

static void fig5(void **state) {
  (void)state;
  /* stage-1 blocks at n = 8 on x = [8, 64, 56, 56] */
  GsGraph *g = tg_new("fig5", 8);
  int x = tg_input(g, "x", 4, (int64_t)8, (int64_t)64, (int64_t)56, (int64_t)56);
  x = tg_bottleneck(g, "cb", x, 64, 1, 1);
  tg_bottleneck(g, "ib", x, 64, 1, 0);
  /* LB of 16U per cluster (8 cores x 2U). Factors (Alg. 1 on N, the
   * first of the tied dims; candidates 1, 2, 4, 8):
   *   SG1: largest op = c.bn reading and writing 4U/image: 8 x 8U = 64U -> 64U/4 <= 16U: f=4
   *   SG2: s.bn the same: 64U -> f=4;  SG4: 64U -> f=4
   *   SG3, SG5: add 3 x 4U x 8 = 96U -> 96U/8 = 12U <= 16U, 96U/4 = 24U > 16U: f=8 */
  GsArch a = tg_arch(4, 8, 2 * U, 0);
  GtSchedule *s = gt_schedule(g, &a, NULL, GT_PASS_GROUP);
  /* the initial chains are exactly Fig. 5's five sub-graphs */
  assert_int_equal(s->ninit, 5);
  assert_true(holds_exactly(s, 0, SG1, 3));
  assert_true(holds_exactly(s, 1, SG2, 1));
  assert_true(holds_exactly(s, 2, SG3, 2));
  assert_true(holds_exactly(s, 3, SG4, 3));
  assert_true(holds_exactly(s, 4, SG5, 2));
  int64_t f[5] = {4, 4, 8, 4, 8};
  for (int i = 0; i < 5; i++) {
    assert_int_equal(s->groups[i].best.factor, f[i]);
    assert_int_equal(s->groups[i].best.dim, 0);
  }
  /* iteration 1: no straight pair (3 has two producers and two consumers), no diamond
   * (the entry x is a graph input); branch: 3's producers are 1 and 2, the later is 2
   * (f(3)=8 >= f(2)=4, merged f=8 <= 8); 5's are {2,3} and 4 -> {4,5}. Iteration 2: straight
   * 1 -> {2,3} (f 8 >= 4) then {1,2,3} -> {4,5} (8 >= 8). Iteration 3 merges nothing. */
  assert_int_equal(s->nmerges, 4);
  assert_int_equal(s->iterations, 3);
  const GtMerge *m = s->merges;
  assert_int_equal(m[0].kind, GT_MERGE_BRANCH);
  assert_int_equal(m[0].iteration, 1);
  const char *const s23[] = {"cb.s.", "cb.add", "cb.out"};
  assert_true(holds_exactly(s, m[0].result, s23, 3));
  assert_int_equal(m[1].kind, GT_MERGE_BRANCH);
  assert_int_equal(m[1].iteration, 1);
  const char *const s45[] = {"ib."};
  assert_true(holds_exactly(s, m[1].result, s45, 1));
  assert_int_equal(m[2].kind, GT_MERGE_STRAIGHT);
  assert_int_equal(m[2].iteration, 2);
  const char *const s123[] = {"cb."};
  assert_true(holds_exactly(s, m[2].result, s123, 1));
  assert_int_equal(m[3].kind, GT_MERGE_STRAIGHT);
  const char *const all[] = {"cb.", "ib."};
  assert_true(holds_exactly(s, m[3].result, all, 2));
  assert_int_equal(s->nlive, 1);
  gt_free(s);
  tg_free(g);
}

/* ---- the running example: ResNet-50 at n = 8, LB sized so the stages split 8/4/2/1 ---- */

/* Stage peaks at 8 images: 96U, 48U, 24U, 12U. An LB of 16U per cluster (2U per core) gives
 * the smallest factor in {1,2,4,8} with peak/f <= 16U: 96/8=12 (96/4=24 > 16) -> 8;
 * 48/4=12 -> 4; 24/2=12 -> 2; 12/1 -> 1: the paper's 8, 4, 2, 1. */
static GtSchedule *running_example(GsGraph **gp) {
  *gp = tg_resnet50(8);
  static GsArch a;
  a = tg_arch(4, 8, 2 * U, 8 << 20);
  return gt_schedule(*gp, &a, NULL, GT_NPASSES - 1);
}

static void resnet50_running_example_groups(void **state) {
  (void)state;
  GsGraph *g;
  GtSchedule *s = running_example(&g);
  assert_int_equal(s->nlive, 4);
  /* the stem's largest op (its batchnorm, 8U/image = 64U) has f=4 <= 8, so rule (i) lets
   * it join stage 1; the head (global pool, flatten, fc: at most 0.5U/image) has f=1 like
   * stage 4 and joins it. Op counts: stem 4 + stage 1 (3 blocks of 10 + 2 shortcut) = 36;
   * stage 2: 4*10+2 = 42; stage 3: 6*10+2 = 62; stage 4: 3*10+2 + head 3 = 35. */
  int nops[4] = {36, 42, 62, 35};
  int64_t factor[4] = {8, 4, 2, 1};
  int64_t peak[4] = {96 * U, 48 * U, 24 * U, 12 * U};
  for (int i = 0; i < 4; i++) {
    const GtGroup *gr = &s->groups[s->live[i]];
    assert_int_equal(gr->nops, nops[i]);
    assert_int_equal(gr->peak, peak[i]);
    assert_int_equal(gr->best.factor, factor[i]);
    assert_int_equal(gr->best.dim, 0);
  }
  assert_true(group_has(s, s->live[0], "stem.conv"));
  assert_true(group_has(s, s->live[0], "s1.b3.out"));
  assert_true(group_has(s, s->live[1], "s2.b1.a.conv"));
  assert_true(group_has(s, s->live[3], "head.fc"));
  gt_free(s);
  tg_free(g);
}

/* labels a1..a8 = instances 0..7, b1..b4 = 8..11, c1, c2 = 12, 13, d1 = 14 */
static int lab(const char *l) {
  int k = atoi(l + 1);
  switch (l[0]) {
  case 'a': return k - 1;
  case 'b': return 8 + k - 1;
  case 'c': return 12 + k - 1;
  default: return 14;
  }
}

static void resnet50_running_example_dag_and_order(void **state) {
  (void)state;
  GsGraph *g;
  GtSchedule *s = running_example(&g);
  assert_int_equal(s->ninsts, 15);
  /* gray edges: 8*4 + 4*2 + 2*1 = 42; kept: the tree, 8 + 4 + 2 = 14 */
  assert_int_equal(s->gray_edges, 42);
  assert_int_equal(s->nedges, 14);
  /* b_k reads images [2k-2, 2k): a_(2k-1), a_(2k); c1 = images 0-3 <- b1, b2; ... */
  static const char *const tree[][3] = {
      {"b1", "a1", "a2"}, {"b2", "a3", "a4"}, {"b3", "a5", "a6"}, {"b4", "a7", "a8"},
      {"c1", "b1", "b2"}, {"c2", "b3", "b4"}, {"d1", "c1", "c2"}};
  for (int i = 0; i < 7; i++) {
    const GtInstance *q = &s->insts[lab(tree[i][0])];
    assert_int_equal(q->nprod, 2);
    assert_int_equal(s->edges[q->prod[0]].from, lab(tree[i][1]));
    assert_int_equal(s->edges[q->prod[1]].from, lab(tree[i][2]));
  }
  for (int i = 0; i < 8; i++) assert_int_equal(s->insts[i].nprod, 0);
  /* Algorithm 3 (Fig. 7f, the timestamps of Fig. 3b) */
  static const char *const dfs[] = {"a8", "a7", "b4", "a6", "a5", "b3", "c2", "a4",
                                    "a3", "b2", "a2", "a1", "b1", "c1", "d1"};
  for (int i = 0; i < 15; i++) assert_int_equal(s->order_dfs[i], lab(dfs[i]));
  for (int i = 0; i < 15; i++) assert_int_equal(s->order_bfs[i], i);
  /* Peaks. Every instance's footprint is its group's peak over its factor: 96U/8 = 48U/4 =
   * 24U/2 = 12U/1 = 12U. Output slices: a = 1 image of 4U; b = 2 x 2U; c = 4 x 1U; all 4U.
   * BFS: when a8 runs, a1..a7 wait for stage 2: 7*4U + 12U = 40U (the maximum; b1 then
   * holds a3..a8 = 24U + 12U = 36U, and it only falls from there).
   * DFS: the maximum is at a1: c2, b2 and a2 are live (3*4U) + 12U = 24U. */
  assert_int_equal(s->peak_bfs, 40 * U);
  assert_int_equal(s->peak_dfs, 24 * U);
  assert_ptr_equal(s->order, s->order_dfs);
  gt_free(s);
  tg_free(g);
}

/* --gt-order footprint and optimal on the running example. Footprint: every footprint is 12U,
 * so the tie rules decide: a ready b_k frees its two a's (8U), a ready c_k its two b's (8U),
 * an a frees nothing, so a b or c runs as soon as it is ready and otherwise the lowest a:
 * a1 a2 b1 a3 a4 b2 c1 a5 a6 b3 a7 a8 b4 c2 d1 (Alg. 3's order mirrored). Its peak is at a8:
 * c1, b3 and a7 live (3 x 4U) + 12U = 24U.
 * Optimal: no order beats 24U. When the last a runs, its sibling a (same b) has run and
 * waits for b: 4U. The other b of that c has either run (its 4U waits for c) or not (then
 * both its a's have run and wait: 8U). The other c likewise has run (4U) or not (each of its
 * b's, or their a's, wait: >= 8U). So >= 3 x 4U are live next to the a's 12U: >= 24U, and
 * DFS reaches 24U: the optimum is 24U, proven by the DP. */
static void resnet50_running_example_footprint_and_optimal(void **state) {
  (void)state;
  GsGraph *g = tg_resnet50(8);
  GsArch a = tg_arch(4, 8, 2 * U, 8 << 20);
  GtOptions o;
  gt_options_default(&o);
  o.order = GT_ORDER_OPTIMAL;
  GtSchedule *s = gt_schedule(g, &a, &o, GT_NPASSES - 1);
  static const char *const foot[] = {"a1", "a2", "b1", "a3", "a4", "b2", "c1", "a5",
                                     "a6", "b3", "a7", "a8", "b4", "c2", "d1"};
  for (int i = 0; i < 15; i++) assert_int_equal(s->order_foot[i], lab(foot[i]));
  assert_int_equal(s->peak_foot, 24 * U);
  assert_ptr_equal(s->order, s->order_opt);
  assert_int_equal(s->peak, 24 * U);
  assert_true(s->peak <= s->peak_dfs);
  assert_int_equal(s->optimal.bound, 24 * U);
  assert_string_equal(s->optimal.method, "dp");
  assert_int_equal(s->optimal.status, GT_ORDER_PROVEN);
  int pos[15];
  for (int i = 0; i < 15; i++) pos[s->order[i]] = i;
  for (int e = 0; e < s->nedges; e++) assert_true(pos[s->edges[e].from] < pos[s->edges[e].to]);
  gt_free(s);
  tg_free(g);
}

static void resnet50_running_example_bind_concat(void **state) {
  (void)state;
  GsGraph *g;
  GtSchedule *s = running_example(&g);
  /* plain_binding, outermost first, trying 8, 4, 2, 1 of the cores left:
   *   a [1,256,56,56]: 1 -> 1, 256 -> 8          = [1,8,1,1]
   *   b [2,512,28,28]: 2 -> 2, 512 -> 4 (left)   = [2,4,1,1]  (the paper's bind=[2,4])
   *   c [4,1024,14,14]: 4, then 2                = [4,2,1,1]
   *   d [8,1000]: 8                              = [8,1]
   * Inference from consumers carries nothing back: the batch factor shrinks to 1 on a
   * smaller producer slice (2 images over 2 producers), channels do not cross a conv. */
  static const int64_t want[4][4] = {{1, 8, 1, 1}, {2, 4, 1, 1}, {4, 2, 1, 1}, {8, 1, 1, 1}};
  for (int i = 0; i < 15; i++) {
    const GtInstance *in = &s->insts[i];
    int st = s->groups[in->group].topo;
    for (int k = 0; k < (st == 3 ? 2 : 4); k++) assert_int_equal(in->bind[k], want[st][k]);
    assert_int_equal(in->scope, GT_SCOPE_LB);
  }
  assert_int_equal(s->nbind_mismatch, 0);
  /* §3.5: one concat per consumer with two producers: 4 + 2 + 1 = 7. Parts of b's concat
   * are bound [1,8] each; two of them must share the 8 cores: min per dim [1,8], halved
   * innermost first to [1,4] -> a redistribute per part, concat [2,4]. c: [2,4] -> [2,2]
   * (Fig. 9's redistribute([2,2])) -> concat [4,2]. d: [4,2] -> [4,1] -> concat [8,1].
   * So 7 concats and 14 redistributes, no copies (all in LB). */
  int nconcat = 0, nredist = 0, ncopy = 0;
  for (int x = 0; x < s->nxops; x++) {
    const GtXop *op = &s->xops[x];
    if (op->kind == GT_XOP_CONCAT) {
      nconcat++;
      assert_int_equal(op->nin, 2);
      int st = s->groups[s->insts[op->consumer].group].topo;
      int64_t want0[4] = {0, 2, 4, 8}, want1[4] = {0, 4, 2, 1}; /* by consumer stage */
      assert_int_equal(op->bind[0], want0[st]);
      assert_int_equal(op->bind[1], want1[st]);
      assert_int_equal(op->scope, GT_SCOPE_LB);
      assert_true(op->in[0].is_xop && op->in[1].is_xop);
    } else if (op->kind == GT_XOP_REDISTRIBUTE) {
      nredist++;
    } else {
      ncopy++;
    }
  }
  assert_int_equal(nconcat, 7);
  assert_int_equal(nredist, 14);
  assert_int_equal(ncopy, 0);
  gt_free(s);
  tg_free(g);
}

/* ---- ResNet-50 on STCP920 ---- */

static void resnet50_stcp920_hw_lb(void **state) {
  (void)state;
  /* STCP920's hardware LB: 1.5 MiB per core, read per cluster (default): 8 x 1.5 MiB =
   * 12 MiB = 12582912 B = 31.35U. At the paper's batch 64 over 4 clusters, n = 16:
   * stage peaks 192U, 96U, 48U, 24U; candidates on N are 1, 2, 4, 8, 16:
   *   192/8 = 24 <= 31.35 (192/4 = 48 > 31.35) -> 8;  96/4 = 24 -> 4;  48/2 = 24 -> 2;  24 -> 1.
   * H ties on the factor and loses on the depth, so all split N: 8, 4, 2, 1 instances. */
  GsGraph *g = tg_resnet50(16);
  GsArch a = tg_arch(4, 8, 1536 * 1024, 8 << 20);
  GtSchedule *s = gt_schedule(g, &a, NULL, GT_NPASSES - 1);
  assert_int_equal(s->nlive, 4);
  int64_t f[4] = {8, 4, 2, 1};
  for (int i = 0; i < 4; i++) assert_int_equal(s->groups[s->live[i]].best.factor, f[i]);
  assert_int_equal(s->ninsts, 15);
  gt_free(s);
  tg_free(g);
  /* At n = 8 (batch 32) the same LB gives 96/4 = 24 -> 4, 48/2 -> 2, 24/1 -> 1, 12 -> 1:
   * stages 3 and 4 both fit whole, rule (i) holds (1 >= 1) and they merge: three groups
   * with 4, 2, 1 instances. */
  g = tg_resnet50(8);
  s = gt_schedule(g, &a, NULL, GT_NPASSES - 1);
  assert_int_equal(s->nlive, 3);
  int64_t f8[3] = {4, 2, 1};
  for (int i = 0; i < 3; i++) assert_int_equal(s->groups[s->live[i]].best.factor, f8[i]);
  assert_true(group_has(s, s->live[2], "s3.b1.a.conv"));
  assert_true(group_has(s, s->live[2], "s4.b3.out"));
  gt_free(s);
  tg_free(g);
}

static void resnet50_stcp920_paper_lb(void **state) {
  (void)state;
  /* The paper's 64 KB L1 per core: 512 KiB per cluster = 524288 B = 1.306U. A residual add
   * reads two stage outputs and writes a third: 1.5U per image even in stage 4, so no group
   * holding an add can be split by images (the largest batch factor is 8 = one image), and
   * no stage forms one group. What does split by images: a stage-4 identity block's main
   * path, whose largest op is its last batchnorm (reads and writes [2048,7,7] = 0.5U each:
   * 1U per image, 8U at n = 8): 8U/8 = 1U <= 1.306U, 8U/4 = 2U > 1.306U -> f = 8 on N. */
  GsGraph *g = tg_resnet50(8);
  GsArch a = tg_arch(4, 8, 64 * 1024, 8 << 20);
  GtSchedule *s = gt_schedule(g, &a, NULL, GT_NPASSES - 1);
  assert_true(s->nlive > 4);
  for (int i = 0; i < s->nlive; i++) {
    const GtGroup *gr = &s->groups[s->live[i]];
    int has_add = 0;
    for (int k = 0; k < gr->nops; k++) has_add |= g->ops[gr->ops[k]].kind == OP_ADD;
    if (has_add) assert_true(!gr->best.split || gr->best.dim != 0);
    if (!gr->best.split) assert_int_equal(s->insts[s->first_inst[s->live[i]]].scope, GT_SCOPE_GB);
  }
  int gid = s->group_of_op[tg_op_id(g, "s4.b2.c.bn")];
  assert_int_equal(s->groups[gid].peak, 8 * U);
  assert_int_equal(s->groups[gid].best.dim, 0);
  assert_int_equal(s->groups[gid].best.factor, 8);
  gt_free(s);
  tg_free(g);
}

/* ---- Fig. 9: copy and redistribute before a concat ---- */

static void fig9_copy_redistribute(void **state) {
  (void)state;
  /* x [4,512,28,28] -> relu (A) -> global pool (B), one op per initial sub-graph.
   * T = 4*512*28*28*2 = 3211264 B. peak(A) = 2T (read + write), peak(B) = T + 4*512*2.
   * LB = T + 4096: A needs f=2 (2T/2 = T fits, 2T does not), B fits whole (f=1); rule (i)
   * f(B)=1 >= f(A)=2 fails, so A's two instances [2,512,28,28] feed B's single one. */
  GsGraph *g = tg_new("fig9", 4);
  int x = tg_input(g, "x", 4, (int64_t)4, (int64_t)512, (int64_t)28, (int64_t)28);
  int r = tg_unary(g, OP_RELU, "A", x);
  tg_gap(g, "B", r);
  int64_t T = 4 * 512 * 28 * 28 * 2;
  GsArch a = tg_arch(1, 8, 0, 0);
  GtOptions o;
  gt_options_default(&o);
  o.init = GT_INIT_OP;
  o.lb_bytes = T + 4096;
  GtSchedule *s = gt_schedule(g, &a, &o, GT_PASS_BIND);
  assert_int_equal(s->nlive, 2);
  assert_int_equal(s->ninsts, 3);
  assert_int_equal(s->insts[0].hi - s->insts[0].lo, 2);
  /* Fig. 9's inputs: one in GB bound [2,2], one in LB bound [2,4] */
  s->insts[0].scope = GT_SCOPE_GB;
  int64_t b0[4] = {2, 2, 1, 1}, b1[4] = {2, 4, 1, 1};
  memcpy(s->insts[0].bind, b0, sizeof b0);
  memcpy(s->insts[1].bind, b1, sizeof b1);
  s->insts[1].scope = GT_SCOPE_LB;
  gt_insert_concats(s);
  gt_check(s, GT_PASS_CONCAT);
  /* expected: copy(GB -> LB) of part 0; redistribute([2,2]) (per-dim minimum of [2,2] and
   * [2,4]) of part 1; concat [4,512,28,28] in LB bound [2+2, 2] = [4,2] (8 cores). */
  assert_int_equal(s->nxops, 3);
  const GtXop *cp = &s->xops[0], *rd = &s->xops[1], *cc = &s->xops[2];
  assert_int_equal(cp->kind, GT_XOP_COPY);
  assert_int_equal(cp->from_scope, GT_SCOPE_GB);
  assert_int_equal(cp->scope, GT_SCOPE_LB);
  assert_false(cp->in[0].is_xop);
  assert_int_equal(cp->in[0].id, 0);
  assert_int_equal(rd->kind, GT_XOP_REDISTRIBUTE);
  assert_int_equal(rd->in[0].id, 1);
  assert_int_equal(rd->bind[0], 2);
  assert_int_equal(rd->bind[1], 2);
  assert_int_equal(cc->kind, GT_XOP_CONCAT);
  assert_int_equal(cc->in[0].is_xop, 1);
  assert_int_equal(cc->in[0].id, 0);
  assert_int_equal(cc->in[1].id, 1);
  int64_t shape[4] = {4, 512, 28, 28}, bind[4] = {4, 2, 1, 1};
  for (int k = 0; k < 4; k++) {
    assert_int_equal(cc->shape[k], shape[k]);
    assert_int_equal(cc->bind[k], bind[k]);
  }
  assert_int_equal(cc->scope, GT_SCOPE_LB);
  assert_int_equal(cc->consumer, 2);
  gt_free(s);
  tg_free(g);
}

static void plain_binding_example(void **state) {
  (void)state;
  /* §3.4's example: an output [2,28,28,512] on 8 cores is bound [2,4]: 2 divides 2 (8 and
   * 4 do not), then 4 cores are left and 4 divides 28. A 4-image relu split in two. */
  GsGraph *g = tg_new("bind", 4);
  int x = tg_input(g, "x", 4, (int64_t)4, (int64_t)28, (int64_t)28, (int64_t)512);
  tg_unary(g, OP_RELU, "r", x);
  GsArch a = tg_arch(1, 8, 0, 0);
  GtOptions o;
  gt_options_default(&o);
  o.lb_bytes = 4 * 28 * 28 * 512 * 2; /* 2T / 2 = T fits: f = 2 */
  GtSchedule *s = gt_schedule(g, &a, &o, GT_NPASSES - 1);
  assert_int_equal(s->ninsts, 2);
  int64_t want[4] = {2, 4, 1, 1};
  for (int i = 0; i < 2; i++)
    for (int k = 0; k < 4; k++) assert_int_equal(s->insts[i].bind[k], want[k]);
  gt_free(s);
  tg_free(g);
}

static void deterministic_json(void **state) {
  (void)state;
  char *buf[2];
  size_t len[2];
  for (int r = 0; r < 2; r++) {
    GsGraph *g;
    GtSchedule *s = running_example(&g);
    FILE *f = open_memstream(&buf[r], &len[r]);
    gt_dump_json(f, s);
    gt_dump(f, s, GT_PASS_CONCAT);
    fclose(f);
    gt_free(s);
    tg_free(g);
  }
  assert_true(len[0] > 1000);
  assert_int_equal(len[0], len[1]);
  assert_memory_equal(buf[0], buf[1], len[0]);
  free(buf[0]);
  free(buf[1]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(fig5),
      cmocka_unit_test(resnet50_running_example_groups),
      cmocka_unit_test(resnet50_running_example_dag_and_order),
      cmocka_unit_test(resnet50_running_example_footprint_and_optimal),
      cmocka_unit_test(resnet50_running_example_bind_concat),
      cmocka_unit_test(resnet50_stcp920_hw_lb),
      cmocka_unit_test(resnet50_stcp920_paper_lb),
      cmocka_unit_test(fig9_copy_redistribute),
      cmocka_unit_test(plain_binding_example),
      cmocka_unit_test(deterministic_json),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
