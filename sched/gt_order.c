/* gt_order.c — the instance orders (paper §3.3, Fig. 7) and the choice among them.
 *
 * BFS is group by group, instances by index (a1..a8 b1..b4 ...). DFS is Alg. 3: instances of
 * in-degree 0 enter `ready` in BFS order; the LAST ready entry of in-degree 0 runs; each
 * consumer of the instance that ran loses one in-degree and is pushed to the end of ready
 * (moved there if it already is in ready) before its in-degree reaches 0. Degrees count the
 * distinct producers of the pruned DAG. Footprint is the heuristic the paper announces
 * (§3.3, "higher priority to instances with heavier memory footprints"): among the ready
 * instances (every producer has run) the one with the largest footprint runs; ties go to
 * the one whose run frees the most bytes (outputs it is the last reader of), then to the
 * lowest instance id. `optimal` searches for the least peak (gt_order_opt.c).
 * Peak memory of an order: when instance x runs, its working set (footprint) plus every
 * output slice already produced that a later instance still reads and x itself does not
 * read (x's own inputs are inside its footprint); the maximum over the order.
 * requires: gt_split_instances; maintains: order_bfs, order_dfs, order_foot and their peaks,
 * order_opt (optimal only), order = the chosen one and peak its peak.
 * Invariant: every order is a topological order of the instance DAG.
 */
#include "gt.h"

#include <inttypes.h>


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

/* The DAG of distinct producer / consumer instances, in edge order (CSR built here). */
static GtOrderDag build_dag(GtSchedule *s) {
  int n = s->ninsts;
  size_t sz = sizeof(int) * (size_t)(n + 1), esz = sizeof(int) * (size_t)(s->nedges + 1);
  int *pstart = arena_alloc(s->arena, sz), *cstart = arena_alloc(s->arena, sz);
  int *p = arena_alloc(s->arena, esz), *c = arena_alloc(s->arena, esz);
  int64_t *foot = arena_alloc(s->arena, sizeof(int64_t) * (size_t)(n + 1));
  int64_t *out = arena_alloc(s->arena, sizeof(int64_t) * (size_t)(n + 1));
  int *seen = arena_alloc(s->arena, sz);
  for (int i = 0; i < n; i++) {
    const GtInstance *in = &s->insts[i];
    pstart[i + 1] = pstart[i] + distinct_into(s, in->prod, in->nprod, 1, p + pstart[i], seen, 2 * i + 1);
    cstart[i + 1] = cstart[i] + distinct_into(s, in->cons, in->ncons, 0, c + cstart[i], seen, 2 * i + 2);
    foot[i] = in->footprint;
    out[i] = in->out_bytes;
  }
  return (GtOrderDag){n, foot, out, pstart, p, cstart, c};
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

void gt_order_dfs(const GtOrderDag *a, GsArena *arena, int *order) {
  int n = a->n, norder = 0;
  size_t sz = sizeof(int) * ((size_t)n + 1);
  int *indeg = arena_alloc(arena, sz);
  char *in_visit = arena_alloc(arena, (size_t)n + 1);
  Ready r = {arena_alloc(arena, sz), arena_alloc(arena, sz), -1, -1,
             arena_alloc(arena, (size_t)n + 1)};
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

int64_t gt_order_peak(const GtOrderDag *d, const int *order, GsArena *arena) {
  int n = d->n;
  int *left = arena_alloc(arena, sizeof(int) * ((size_t)n + 1));
  for (int i = 0; i < n; i++) left[i] = d->cstart[i + 1] - d->cstart[i];
  int64_t live = 0, peak = 0;
  for (int k = 0; k < n; k++) {
    int x = order[k];
    int64_t own_inputs = 0;
    for (int j = d->pstart[x]; j < d->pstart[x + 1]; j++) own_inputs += d->out[d->p[j]];
    peak = max64(peak, d->foot[x] + live - own_inputs);
    for (int j = d->pstart[x]; j < d->pstart[x + 1]; j++)
      if (--left[d->p[j]] == 0) live -= d->out[d->p[j]];
    if (left[x] > 0) live += d->out[x];
  }
  return peak;
}

/* freed[c] += out[p] once c is the only consumer of p still to run. */
static void note_last_reader(const GtOrderDag *d, const char *done, int p, int64_t *freed) {
  for (int j = d->cstart[p]; j < d->cstart[p + 1]; j++)
    if (!done[d->c[j]]) {
      freed[d->c[j]] += d->out[p];
      return;
    }
}

void gt_order_footprint(const GtOrderDag *d, GsArena *arena, int *order) {
  int n = d->n, nready = 0;
  size_t sz = sizeof(int) * ((size_t)n + 1);
  int *indeg = arena_alloc(arena, sz), *left = arena_alloc(arena, sz);
  int *ready = arena_alloc(arena, sz);
  int64_t *freed = arena_alloc(arena, sizeof(int64_t) * ((size_t)n + 1));
  char *done = arena_alloc(arena, (size_t)n + 1);
  for (int v = 0; v < n; v++) {
    indeg[v] = d->pstart[v + 1] - d->pstart[v];
    left[v] = d->cstart[v + 1] - d->cstart[v];
    if (left[v] == 1) note_last_reader(d, done, v, freed);
    if (indeg[v] == 0) ready[nready++] = v;
  }
  for (int k = 0; k < n; k++) {
    gs_assert(nready > 0);
    int best = 0;
    for (int i = 1; i < nready; i++) { /* heaviest footprint, most freed, lowest id */
      int x = ready[i], b = ready[best];
      if (d->foot[x] != d->foot[b] ? d->foot[x] > d->foot[b]
          : freed[x] != freed[b]   ? freed[x] > freed[b]
                                   : x < b)
        best = i;
    }
    int x = ready[best];
    ready[best] = ready[--nready];
    order[k] = x;
    done[x] = 1;
    for (int j = d->pstart[x]; j < d->pstart[x + 1]; j++)
      if (--left[d->p[j]] == 1) note_last_reader(d, done, d->p[j], freed);
    for (int j = d->cstart[x]; j < d->cstart[x + 1]; j++)
      if (--indeg[d->c[j]] == 0) ready[nready++] = d->c[j];
  }
}

static const char *const order_names[] = {"auto", "bfs", "dfs", "footprint", "optimal"};

/* The best greedy order (ties: DFS, BFS, footprint) and the optimal search from it. */
static void run_optimal(GtSchedule *s, const GtOrderDag *d) {
  const int *greedy = s->order_dfs;
  int64_t best = s->peak_dfs;
  if (s->peak_bfs < best) greedy = s->order_bfs, best = s->peak_bfs;
  if (s->peak_foot < best) greedy = s->order_foot;
  s->order_opt = arena_alloc(s->arena, sizeof(int) * (size_t)(s->ninsts + 1));
  s->optimal = gt_order_optimal(d, s->arena, greedy, s->opt.order_time_limit, s->order_opt);
}

static const char *summary(const GtSchedule *s) {
  const char *head = arena_printf(s->arena, "%s, peak %" PRId64 " B (bfs %" PRId64 ", dfs %" PRId64
                                  ", footprint %" PRId64 "), lower bound %" PRId64 ", gap %s",
                                  s->order_name, s->peak, s->peak_bfs, s->peak_dfs, s->peak_foot,
                                  s->peak_bound, gt_order_gap_text(s->arena, s->peak, s->peak_bound));
  if (!s->order_opt) return head;
  return arena_printf(s->arena, "%s by %s (%s)", head, s->optimal.method,
                      gt_order_status_name(s->optimal.status));
}

void gt_order_instances(GtSchedule *s) {
  int n = s->ninsts;
  GtOrderDag d = build_dag(s);
  size_t sz = sizeof(int) * (size_t)(n + 1);
  s->order_bfs = arena_alloc(s->arena, sz);
  s->order_dfs = arena_alloc(s->arena, sz);
  s->order_foot = arena_alloc(s->arena, sz);
  for (int i = 0; i < n; i++) s->order_bfs[i] = i;
  gt_order_dfs(&d, s->arena, s->order_dfs);
  gt_order_footprint(&d, s->arena, s->order_foot);
  s->peak_bfs = gt_order_peak(&d, s->order_bfs, s->arena);
  s->peak_dfs = gt_order_peak(&d, s->order_dfs, s->arena);
  s->peak_foot = gt_order_peak(&d, s->order_foot, s->arena);
  GtOrderChoice ch = s->opt.order;
  if (ch == GT_ORDER_AUTO) ch = s->peak_dfs <= s->peak_bfs ? GT_ORDER_DFS : GT_ORDER_BFS;
  if (ch == GT_ORDER_OPTIMAL) run_optimal(s, &d);
  s->order = ch == GT_ORDER_BFS ? s->order_bfs : ch == GT_ORDER_DFS ? s->order_dfs
           : ch == GT_ORDER_FOOTPRINT ? s->order_foot : s->order_opt;
  s->peak = ch == GT_ORDER_BFS ? s->peak_bfs : ch == GT_ORDER_DFS ? s->peak_dfs
          : ch == GT_ORDER_FOOTPRINT ? s->peak_foot : s->optimal.peak;
  s->peak_bound = s->order_opt ? s->optimal.bound : min64(gt_order_lower_bound(&d, s->arena), s->peak);
  s->order_name = order_names[ch];
  s->order_summary = summary(s);
}
