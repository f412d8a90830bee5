/* gt_order.c — BFS and DFS (Algorithm 3) orders of the instances; keep the one with the
 * lower peak on-chip memory (paper §3.3, Fig. 7).
 *
 * BFS is group by group, instances by index (a1..a8 b1..b4 ...). DFS is Alg. 3: instances of
 * in-degree 0 enter `ready` in BFS order; the LAST ready entry of in-degree 0 runs; each
 * consumer of the instance that ran loses one in-degree and is pushed to the end of ready
 * (moved there if it already is in ready) before its in-degree reaches 0. Degrees count the
 * distinct producers of the pruned DAG.
 * Peak memory of an order: when instance x runs, its working set (footprint) plus every
 * output slice already produced that a later instance still reads and x itself does not
 * read (x's own inputs are inside its footprint); the maximum over the order.
 * Invariant: both orders are topological orders of the instance DAG.
 */
#include "gt.h"

/* Distinct producer / consumer instances, in edge order (CSR built here). */
typedef struct {
  int *pstart, *p, *cstart, *c;
} Adj;

/* seen[v] == stamp marks v as already listed for the current instance */
static int distinct_into(const GtSchedule *s, const int *edges, int n, int want_from, int *out,
                         int *seen, int stamp) {
  int m = 0;
  for (int i = 0; i < n; i++) {
    int v = want_from ? s->edges[edges[i]].from : s->edges[edges[i]].to;
    if (seen[v] == stamp) continue;
    seen[v] = stamp;
    out[m++] = v;
  }
  return m;
}

static Adj build_adj(GtSchedule *s) {
  Adj a;
  int n = s->ninsts;
  a.pstart = arena_alloc(s->arena, sizeof(int) * (size_t)(n + 1));
  a.cstart = arena_alloc(s->arena, sizeof(int) * (size_t)(n + 1));
  a.p = arena_alloc(s->arena, sizeof(int) * (size_t)(s->nedges + 1));
  a.c = arena_alloc(s->arena, sizeof(int) * (size_t)(s->nedges + 1));
  int *seen = arena_alloc(s->arena, sizeof(int) * ((size_t)n + 1));
  for (int i = 0; i < n; i++) {
    const GtInstance *in = &s->insts[i];
    a.pstart[i + 1] = a.pstart[i] + distinct_into(s, in->prod, in->nprod, 1, a.p + a.pstart[i], seen, 2 * i + 1);
    a.cstart[i + 1] = a.cstart[i] + distinct_into(s, in->cons, in->ncons, 0, a.c + a.cstart[i], seen, 2 * i + 2);
  }
  return a;
}

/* `ready` is a doubly linked list over instance ids (prev/next, -1 ends), so that removing
 * an entry and pushing one to the end are O(1). */
typedef struct {
  int *prev, *next, head, tail;
  char *in;
} Ready;

static void ready_remove(Ready *r, int x) {
  if (r->prev[x] >= 0) r->next[r->prev[x]] = r->next[x];
  else r->head = r->next[x];
  if (r->next[x] >= 0) r->prev[r->next[x]] = r->prev[x];
  else r->tail = r->prev[x];
  r->in[x] = 0;
}

static void ready_push(Ready *r, int x) { /* to the end; moves x there if already in */
  if (r->in[x]) ready_remove(r, x);
  r->prev[x] = r->tail;
  r->next[x] = -1;
  if (r->tail >= 0) r->next[r->tail] = x;
  else r->head = x;
  r->tail = x;
  r->in[x] = 1;
}

static void order_dfs(GtSchedule *s, const Adj *a, int *order) {
  int n = s->ninsts, norder = 0;
  size_t sz = sizeof(int) * ((size_t)n + 1);
  int *indeg = arena_alloc(s->arena, sz);
  char *in_visit = arena_alloc(s->arena, (size_t)n + 1);
  Ready r = {arena_alloc(s->arena, sz), arena_alloc(s->arena, sz), -1, -1,
             arena_alloc(s->arena, (size_t)n + 1)};
  for (int i = 0; i < n; i++) {
    indeg[i] = a->pstart[i + 1] - a->pstart[i];
    in_visit[i] = 1;
  }
  while (norder < n) {
    for (int i = 0; i < n; i++) /* visit is in BFS order: instance ids */
      if (in_visit[i] && indeg[i] == 0) {
        ready_push(&r, i);
        in_visit[i] = 0;
      }
    while (r.head >= 0) {
      int x = r.tail; /* the last ready entry of in-degree 0 */
      while (x >= 0 && indeg[x] != 0) x = r.prev[x];
      if (x < 0) break; /* every ready entry waits on a producer still in visit */
      ready_remove(&r, x);
      order[norder++] = x;
      for (int j = a->cstart[x]; j < a->cstart[x + 1]; j++) {
        int c = a->c[j];
        indeg[c]--;
        gs_assert(in_visit[c] || r.in[c]);
        ready_push(&r, c);
        in_visit[c] = 0;
      }
    }
  }
}

static int64_t order_peak(const GtSchedule *s, const Adj *a, const int *order) {
  int n = s->ninsts;
  int *left = arena_alloc(s->arena, sizeof(int) * ((size_t)n + 1));
  for (int i = 0; i < n; i++) left[i] = a->cstart[i + 1] - a->cstart[i];
  int64_t live = 0, peak = 0;
  for (int k = 0; k < n; k++) {
    int x = order[k];
    int64_t own_inputs = 0;
    for (int j = a->pstart[x]; j < a->pstart[x + 1]; j++) own_inputs += s->insts[a->p[j]].out_bytes;
    peak = max64(peak, s->insts[x].footprint + live - own_inputs);
    for (int j = a->pstart[x]; j < a->pstart[x + 1]; j++)
      if (--left[a->p[j]] == 0) live -= s->insts[a->p[j]].out_bytes;
    if (left[x] > 0) live += s->insts[x].out_bytes;
  }
  return peak;
}

/* requires: gt_split_instances; maintains: order_bfs, order_dfs, their peaks, and order =
 * the chosen one (opt.order, or the lower peak with ties going to DFS). */
void gt_order_instances(GtSchedule *s) {
  int n = s->ninsts;
  Adj a = build_adj(s);
  s->order_bfs = arena_alloc(s->arena, sizeof(int) * (size_t)(n + 1));
  s->order_dfs = arena_alloc(s->arena, sizeof(int) * (size_t)(n + 1));
  for (int i = 0; i < n; i++) s->order_bfs[i] = i;
  order_dfs(s, &a, s->order_dfs);
  s->peak_bfs = order_peak(s, &a, s->order_bfs);
  s->peak_dfs = order_peak(s, &a, s->order_dfs);
  int dfs = s->opt.order == GT_ORDER_DFS ||
            (s->opt.order == GT_ORDER_AUTO && s->peak_dfs <= s->peak_bfs);
  s->order = dfs ? s->order_dfs : s->order_bfs;
  s->order_name = dfs ? "dfs" : "bfs";
}
