/* test_gt_order.c — the instance orders of sched/gt_order*.c on small DAGs given directly
 * (GtOrderDag): footprint's tie rules, a DAG where both BFS and DFS are worse than the
 * optimum, one where running a chain back to back loses, all with orders and peaks derived
 * by hand below; then random DAGs (fixed seeds) where the DP must equal a brute-force
 * enumeration of every topological order, and the ILP the DP.
 *
 * The peak model (docs/graphturbo.md, "Orders"): when x runs, foot(x) plus the output of
 * every u already run that some instance not yet run reads and x does not read. The
 * brute force below computes it from that sentence, not from the library's evaluator.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "gt.h"
#include "rng_testlib.h"

enum { MAXN = 16 };

/* A DAG of up to MAXN nodes: adj[u][v] = 1 for an edge u -> v (u < v), with its CSR. */
typedef struct {
  int n;
  char adj[MAXN][MAXN];
  int64_t foot[MAXN], out[MAXN];
  int pstart[MAXN + 1], p[MAXN * MAXN], cstart[MAXN + 1], c[MAXN * MAXN];
  GtOrderDag d;
} Dag;

static void dag_finish(Dag *g) {
  int np = 0, nc = 0;
  for (int v = 0; v < g->n; v++) {
    g->pstart[v] = np;
    g->cstart[v] = nc;
    for (int u = 0; u < g->n; u++) {
      if (g->adj[u][v]) g->p[np++] = u;
      if (g->adj[v][u]) g->c[nc++] = u;
    }
  }
  g->pstart[g->n] = np;
  g->cstart[g->n] = nc;
  g->d = (GtOrderDag){g->n, g->foot, g->out, g->pstart, g->p, g->cstart, g->c};
}

/* ---- the oracle: every topological order, its peak from the definition ---- */

/* readers(u) as a bit mask */
static unsigned readers(const Dag *g, int u) {
  unsigned m = 0;
  for (int r = 0; r < g->n; r++) m |= (unsigned)g->adj[u][r] << r;
  return m;
}

static int64_t step_cost(const Dag *g, const char *done, int x) {
  unsigned notdone = 0;
  for (int v = 0; v < g->n; v++) notdone |= (unsigned)!done[v] << v;
  int64_t cost = g->foot[x];
  for (int u = 0; u < g->n; u++)
    if (done[u] && !g->adj[u][x] && (readers(g, u) & notdone)) cost += g->out[u];
  return cost;
}

static int64_t peak_of(const Dag *g, const int *order) {
  char done[MAXN] = {0};
  int64_t peak = 0;
  for (int k = 0; k < g->n; k++) {
    int64_t c = step_cost(g, done, order[k]);
    peak = c > peak ? c : peak;
    done[order[k]] = 1;
  }
  return peak;
}

static int is_topological(const Dag *g, const int *order) {
  int pos[MAXN], seen[MAXN] = {0};
  for (int k = 0; k < g->n; k++) {
    if (order[k] < 0 || order[k] >= g->n || seen[order[k]]++) return 0;
    pos[order[k]] = k;
  }
  for (int u = 0; u < g->n; u++)
    for (int v = 0; v < g->n; v++)
      if (g->adj[u][v] && pos[u] >= pos[v]) return 0;
  return 1;
}

/* The least peak over all topological orders (and how many there are). */
static void brute(const Dag *g, char *done, int k, int64_t sofar, int64_t *best, long *count) {
  if (k == g->n) {
    ++*count;
    if (sofar < *best) *best = sofar;
    return;
  }
  for (int x = 0; x < g->n; x++) {
    if (done[x]) continue;
    int ready = 1;
    for (int u = 0; u < g->n; u++) ready &= !g->adj[u][x] || done[u];
    if (!ready) continue;
    int64_t c = step_cost(g, done, x);
    done[x] = 1;
    brute(g, done, k + 1, c > sofar ? c : sofar, best, count);
    done[x] = 0;
  }
}

static int64_t brute_best(const Dag *g, long *count) {
  char done[MAXN] = {0};
  int64_t best = INT64_MAX;
  *count = 0;
  brute(g, done, 0, 0, &best, count);
  return best;
}

/* ---- hand-derived cases ---- */

/* n nodes with their footprints and outputs, no edge yet */
static Dag dag_new(int n, const int64_t *foot, const int64_t *out) {
  Dag g;
  memset(&g, 0, sizeof g);
  g.n = n;
  memcpy(g.foot, foot, sizeof(int64_t) * (size_t)n);
  memcpy(g.out, out, sizeof(int64_t) * (size_t)n);
  return g;
}

static void edge(Dag *g, int u, int v) { g->adj[u][v] = 1; }

/* Two branches a0 -> b0, a1 -> b1 joined by c; ids in BFS order: a0 a1 b0 b1 c. Every a and
 * b has footprint 10, a's output is 4; b0's output is small (1), b1's large (8); c reads
 * both (footprint 9).
 *   BFS a0 a1 b0 b1 c: a1 runs with a0 live (10 + 4), b0 with a1 live (10 + 4): 14.
 *   DFS (Alg. 3) runs the last ready source first and follows it: a1 b1 a0 b0 c; a0 and b0
 *     run with b1's 8 live (b0 also holds a0's 4 as its own input): 18.
 *   Best: the small branch first, a0 b0 a1 b1 c: a1 and b1 hold only b0's 1: 11. Starting
 *     with a1 costs 14 at the second step (a1's 4 live under a0, or b1's 8); a0 a1 ... costs
 *     14; so a0 b0 a1 b1 c is the only order with peak 11. */
static void two_branches(Dag *g) {
  int64_t foot[] = {10, 10, 10, 10, 9}, out[] = {4, 4, 1, 8, 0};
  *g = dag_new(5, foot, out);
  edge(g, 0, 2), edge(g, 1, 3), edge(g, 2, 4), edge(g, 3, 4);
  dag_finish(g); /* g->d points into *g: finished where it stays */
}

static void bfs_dfs_both_worse(void **state) {
  (void)state;
  Dag g;
  two_branches(&g);
  GsArena *a = arena_new();
  int bfs[] = {0, 1, 2, 3, 4}, dfs[5], opt[5];
  gt_order_dfs(&g.d, a, dfs);
  int want_dfs[] = {1, 3, 0, 2, 4}, want_opt[] = {0, 2, 1, 3, 4};
  assert_memory_equal(dfs, want_dfs, sizeof want_dfs);
  assert_int_equal(gt_order_peak(&g.d, bfs, a), 14);
  assert_int_equal(gt_order_peak(&g.d, dfs, a), 18);
  GtOrderSearch r = gt_order_dp(&g.d, a, 14, 1000, opt);
  assert_int_equal(r.status, GT_ORDER_PROVEN);
  assert_true(r.improved);
  assert_int_equal(r.peak, 11);
  assert_memory_equal(opt, want_opt, sizeof want_opt);
  r = gt_order_ilp(&g.d, a, bfs, 14, 60, 100000, opt);
  assert_int_equal(r.status, GT_ORDER_PROVEN);
  assert_int_equal(r.peak, 11);
  assert_int_equal(r.bound, 11);
  assert_memory_equal(opt, want_opt, sizeof want_opt);
  /* the whole search from the better greedy order (BFS, 14): the DP settles it */
  GtOrderResult o = gt_order_optimal(&g.d, a, bfs, 60, opt);
  assert_string_equal(o.method, "dp");
  assert_int_equal(o.peak, 11);
  assert_int_equal(o.bound, 11);
  assert_int_equal(o.greedy_peak, 14);
  assert_memory_equal(opt, want_opt, sizeof want_opt);
  arena_free(a);
}

/* Footprint first: ids 0 u0 (foot 8, out 2), 1 u1 (foot 8, out 5), 2 x (foot 6, a source),
 * 3 v0 (reads u0), 4 v1 (reads u1), v's foot 6. Ready {u0, u1, x}: u0 and u1 are heaviest,
 * tie on freed bytes (none) -> lowest id u0, then u1. Ready {x, v0, v1}, all 6: v1 frees u1's
 * 5, v0 frees u0's 2, x nothing -> v1, v0, x. */
static void footprint_ties(void **state) {
  (void)state;
  int64_t foot[] = {8, 8, 6, 6, 6}, out[] = {2, 5, 0, 0, 0};
  Dag g = dag_new(5, foot, out);
  edge(&g, 0, 3), edge(&g, 1, 4);
  dag_finish(&g);
  GsArena *a = arena_new();
  int order[5], want[] = {0, 1, 4, 3, 2};
  gt_order_footprint(&g.d, a, order);
  assert_memory_equal(order, want, sizeof want);
  arena_free(a);
}

/* Chains that must not run back to back: 0 feeds 1 and 2; 1 -> 3 and 2 -> 4 are chains (the
 * only reader of 1 is 3, 3's only producer is 1; the same for 2, 4). foot 5 7 7 9 10, out of
 * 0, 1, 2: 3, 1, 4. 0 runs first (5); 0's output stays live until both 1 and 2 have run.
 *   0 1 3 2 4 (chains together): 3 runs with 0's 3 live: 9 + 3 = 12.
 *   0 2 4 1 3: 4 runs with 0's 3 live: 10 + 3 = 13.
 *   0 1 2 4 3: 2 = 7 + 1 (1's output), 4 = 10 + 1 = 11, 3 = 9: peak 11, the optimum (the
 *   other orders: 0 1 2 3 4 and 0 2 1 3 4 reach 13 at 3 (9 + 4); 0 2 1 4 3 is 11 too). */
static void chain_split_wins(void **state) {
  (void)state;
  int64_t foot[] = {5, 7, 7, 9, 10}, out[] = {3, 1, 4, 0, 0};
  Dag g = dag_new(5, foot, out);
  edge(&g, 0, 1), edge(&g, 0, 2), edge(&g, 1, 3), edge(&g, 2, 4);
  dag_finish(&g);
  GsArena *a = arena_new();
  int together[] = {0, 1, 3, 2, 4}, order[5];
  assert_int_equal(gt_order_peak(&g.d, together, a), 12);
  GtOrderSearch r = gt_order_dp(&g.d, a, INT64_MAX, 1000, order);
  assert_int_equal(r.peak, 11);
  int want[] = {0, 1, 2, 4, 3}; /* cheapest child first, ties to the lowest id */
  assert_memory_equal(order, want, sizeof want);
  arena_free(a);
}

/* The lower bound: a join x of p (foot 6, out 5) and q (foot 4, out 3), x foot 9. The last of
 * p, q runs with the other's output live: q last: 4 + 5 = 9; p last: 6 + 3 = 9; so >= 9, and
 * the footprints give >= 9: the bound is 9, and every order (p q x or q p x) peaks at 9. */
static void lower_bound_of_a_join(void **state) {
  (void)state;
  int64_t foot[] = {6, 4, 9}, out[] = {5, 3, 0};
  Dag g = dag_new(3, foot, out);
  edge(&g, 0, 2), edge(&g, 1, 2);
  dag_finish(&g);
  GsArena *a = arena_new();
  assert_int_equal(gt_order_lower_bound(&g.d, a), 9);
  g.foot[2] = 1; /* now only the join term: min(4 + 5, 6 + 3) = 9 */
  assert_int_equal(gt_order_lower_bound(&g.d, a), 9);
  int order[] = {0, 1, 2};
  assert_int_equal(gt_order_peak(&g.d, order, a), 9);
  arena_free(a);
}

/* ---- random DAGs ---- */

static int rnd_int(Rng *r, int lo, int hi) { return lo + (int)(rnd(r) % (uint64_t)(hi - lo + 1)); }

/* The number of topological orders, by counting over the subsets run so far (2^n <= 4096). */
static long count_orders(const Dag *g) {
  static long ways[1 << 12];
  unsigned full = (1u << g->n) - 1;
  memset(ways, 0, sizeof(long) * ((size_t)full + 1));
  ways[0] = 1;
  for (unsigned m = 0; m < full; m++) {
    if (!ways[m]) continue;
    for (int x = 0; x < g->n; x++) {
      unsigned need = 0;
      for (int u = 0; u < g->n; u++) need |= (unsigned)g->adj[u][x] << u;
      if (!(m >> x & 1u) && (need & ~m) == 0) ways[m | 1u << x] += ways[m];
    }
  }
  return ways[full];
}

/* n <= 12 nodes, edges forward with a random density, some twins (a node copying the
 * producers, readers and sizes of the node before it); at most 5000 topological orders so
 * the brute force stays quick (denser DAGs are drawn until one fits). */
static void random_dag(Rng *r, Dag *g, long *count, int64_t *best) {
  for (;;) {
    memset(g, 0, sizeof *g);
    g->n = rnd_int(r, 1, 12);
    int density = rnd_int(r, 15, 60);
    for (int v = 0; v < g->n; v++) {
      g->out[v] = rnd_int(r, 1, 8);
      g->foot[v] = rnd_int(r, 1, 12);
      for (int u = 0; u < v; u++) g->adj[u][v] = rnd_int(r, 1, 100) <= density;
    }
    for (int v = 1; v < g->n; v++)
      if (rnd_int(r, 1, 5) == 1) { /* v becomes a twin of v - 1 */
        g->foot[v] = g->foot[v - 1], g->out[v] = g->out[v - 1];
        for (int u = 0; u < g->n; u++) g->adj[u][v] = u < v - 1 && g->adj[u][v - 1];
        for (int w = v + 1; w < g->n; w++) g->adj[v][w] = g->adj[v - 1][w];
        g->adj[v - 1][v] = 0;
      }
    dag_finish(g);
    long ways = count_orders(g);
    if (ways > 5000) continue;
    *best = brute_best(g, count);
    assert_int_equal(*count, ways); /* the enumeration saw every order */
    return;
  }
}

static void random_dp_equals_brute_force(void **state) {
  (void)state;
  Rng r = {0x9e3779b97f4a7c15u};
  int large = 0;
  for (int i = 0; i < 300; i++) {
    Dag g;
    long count;
    int64_t best;
    random_dag(&r, &g, &count, &best);
    GsArena *a = arena_new();
    int order[MAXN];
    GtOrderSearch res = gt_order_dp(&g.d, a, INT64_MAX, 1000000, order);
    assert_int_equal(res.status, GT_ORDER_PROVEN);
    assert_int_equal(res.peak, best);
    assert_true(is_topological(&g, order));
    assert_int_equal(peak_of(&g, order), best);
    assert_int_equal(gt_order_peak(&g.d, order, a), best); /* the library's evaluator agrees */
    /* with the optimum as the bound to beat: proven, nothing better */
    res = gt_order_dp(&g.d, a, best, 1000000, order);
    assert_int_equal(res.status, GT_ORDER_PROVEN);
    assert_false(res.improved);
    assert_true(gt_order_lower_bound(&g.d, a) <= best);
    large += g.n >= 10;
    arena_free(a);
  }
  assert_true(large >= 30); /* the draw reaches the larger DAGs, not only tiny ones */
}

static void random_ilp_equals_dp(void **state) {
  (void)state;
  Rng r = {0x2545f4914f6cdd1du};
  for (int i = 0; i < 200; i++) {
    Dag g;
    long count;
    int64_t best;
    random_dag(&r, &g, &count, &best);
    GsArena *a = arena_new();
    int dp[MAXN], ilp[MAXN], ids[MAXN];
    for (int v = 0; v < g.n; v++) ids[v] = v; /* BFS: ids are topological here */
    GtOrderSearch d = gt_order_dp(&g.d, a, INT64_MAX, 1000000, dp);
    int64_t warm = peak_of(&g, ids);
    GtOrderSearch s = gt_order_ilp(&g.d, a, ids, warm, 60, 1000000, ilp);
    assert_int_equal(s.status, GT_ORDER_PROVEN);
    assert_int_equal(s.improved ? s.peak : warm, d.peak);
    assert_int_equal(s.bound, d.peak);
    if (s.improved) {
      assert_true(is_topological(&g, ilp));
      assert_int_equal(peak_of(&g, ilp), d.peak);
    }
    /* the whole search: never worse than its start, optimal when it says proven */
    GtOrderResult o = gt_order_optimal(&g.d, a, ids, 60, ilp);
    assert_true(o.peak <= warm);
    assert_int_equal(o.status, GT_ORDER_PROVEN);
    assert_int_equal(o.peak, best);
    assert_int_equal(peak_of(&g, ilp), best);
    arena_free(a);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(bfs_dfs_both_worse),
      cmocka_unit_test(footprint_ties),
      cmocka_unit_test(chain_split_wins),
      cmocka_unit_test(lower_bound_of_a_join),
      cmocka_unit_test(random_dp_equals_brute_force),
      cmocka_unit_test(random_ilp_equals_dp),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
