/* gt_order_dp.c — the exact minimum-peak order of a small instance DAG: a dynamic program
 * over downsets (the sets S of instances already run, closed under producers), memoised and
 * pruned by branch and bound.
 *
 * f(S) = the least peak with which the instances outside S can still run once S has run:
 * f(all) = 0 and f(S) = min over ready x of max(cost(S, x), f(S + x)), where cost(S, x) =
 * foot(x) + live(S) - in(x) is gt_order.c's peak model (live(S): outputs of S that a node
 * outside S still reads; in(x): the outputs x reads, all live). The optimum is f({}).
 * Each call carries a bound B, the best peak known (at first the caller's ub): a child whose
 * cost reaches B is not entered, and a state that finds nothing below B is memoised as
 * "f(S) >= B", which stays true when B falls later. Children are tried cheapest first (ties:
 * lowest id), so good orders come early, and a state stops as soon as it meets the largest
 * footprint still to run (no continuation can beat that).
 * Twins (same producers, same consumers, same footprint and output size) are interchangeable
 * in any order without changing a cost, so twins run in id order: a node is ready only
 * once its previous twin has run. The instance DAGs are full of them (the slices of a group
 * that read the same producers), and each class of k twins divides the states by up to k!.
 * Invariant: an entry marked exact holds f(S) and the first node of a continuation reaching
 * it, so the order is read back by following the choices from {}.
 * The table holds at most max_states entries (it doubles as it fills, so a small search
 * stays small); past that the search stops (GT_ORDER_BUDGET) and claims nothing.
 * Where n is small: GT_ORDER_DP_NODES nodes at most (4 words a state).
 */
#include "gt.h"

#include <string.h>

enum { GT_ORDER_DP_NODES = 256 };

enum { SLOT_EMPTY, SLOT_EXACT, SLOT_AT_LEAST };

typedef struct {
  const GtOrderDag *d;
  GsArena *a;
  int n, w;                 /* nodes, 64-bit words per state */
  uint64_t *pmask, *cmask;  /* per node: what it waits for (its producers and its previous
                               twin), its consumers (w words each) */
  int64_t *in;              /* per node: bytes of the outputs it reads */
  size_t cap, used, max_states; /* the memo: open addressing over cap slots (a power of 2) */
  uint64_t *key;            /* cap * w words */
  int64_t *val;
  int *choice;
  unsigned char *kind;      /* SLOT_* */
  int overflow;
  uint64_t *stack;          /* the state at each recursion depth ((n + 1) * w words) */
  int *cand;                /* per depth, its ready nodes sorted by cost (n each) */
  int64_t *cost;
} Dp;

static int has(const uint64_t *S, int v) { return (int)((S[v >> 6] >> (v & 63)) & 1u); }

static int subset(const uint64_t *a, const uint64_t *b, int w) {
  for (int i = 0; i < w; i++)
    if (a[i] & ~b[i]) return 0;
  return 1;
}

static size_t slot_of(const Dp *dp, const uint64_t *S) {
  uint64_t h = util_hash_words(S, (size_t)dp->w);
  size_t mask = dp->cap - 1, i = (size_t)h & mask, bytes = sizeof(uint64_t) * (size_t)dp->w;
  while (dp->kind[i] != SLOT_EMPTY && memcmp(dp->key + i * (size_t)dp->w, S, bytes)) i = (i + 1) & mask;
  return i;
}

/* Ready nodes of S sorted by (cost, id) into cand/cost; returns their count and sets *rem to
 * the largest footprint outside S. */
static int ready_sorted(const Dp *dp, const uint64_t *S, int64_t live, int *cand, int64_t *cost,
                        int64_t *rem) {
  int nc = 0;
  *rem = 0;
  for (int v = 0; v < dp->n; v++) {
    if (has(S, v)) continue;
    *rem = max64(*rem, dp->d->foot[v]);
    if (!subset(dp->pmask + (size_t)v * (size_t)dp->w, S, dp->w)) continue;
    int64_t c = dp->d->foot[v] + live - dp->in[v];
    int k = nc++;
    for (; k > 0 && cost[k - 1] > c; k--) { /* stable: equal costs keep id order */
      cand[k] = cand[k - 1];
      cost[k] = cost[k - 1];
    }
    cand[k] = v;
    cost[k] = c;
  }
  return nc;
}

/* live(S + x) from live(S): x's output joins when something reads it; each producer of x
 * leaves once all its consumers are in S + x. */
static int64_t live_after(const Dp *dp, const uint64_t *Sx, int64_t live, int x) {
  const GtOrderDag *d = dp->d;
  if (d->cstart[x + 1] > d->cstart[x]) live += d->out[x];
  for (int j = d->pstart[x]; j < d->pstart[x + 1]; j++)
    if (subset(dp->cmask + (size_t)d->p[j] * (size_t)dp->w, Sx, dp->w)) live -= d->out[d->p[j]];
  return live;
}

static void table_alloc(Dp *dp, size_t cap) {
  dp->cap = cap;
  dp->key = arena_alloc(dp->a, sizeof(uint64_t) * cap * (size_t)dp->w);
  dp->val = arena_alloc(dp->a, sizeof(int64_t) * cap);
  dp->choice = arena_alloc(dp->a, sizeof(int) * cap);
  dp->kind = arena_alloc(dp->a, cap);
}

/* Twice the slots, every entry rehashed (the old arrays stay in the arena: at most as much
 * again as the final table). */
static void grow(Dp *dp) {
  Dp old = *dp;
  size_t w = (size_t)dp->w;
  table_alloc(dp, old.cap * 2);
  for (size_t i = 0; i < old.cap; i++) {
    if (old.kind[i] == SLOT_EMPTY) continue;
    size_t j = slot_of(dp, old.key + i * w);
    memcpy(dp->key + j * w, old.key + i * w, sizeof(uint64_t) * w);
    dp->kind[j] = old.kind[i];
    dp->val[j] = old.val[i];
    dp->choice[j] = old.choice[i];
  }
}

/* f(S) for S = the state at `depth` when f(S) < bound, else a value >= bound. */
static int64_t solve(Dp *dp, int depth, int64_t live, int64_t bound) {
  if (depth == dp->n) return 0;
  int w = dp->w;
  const uint64_t *S = dp->stack + (size_t)depth * (size_t)w;
  size_t slot = slot_of(dp, S);
  if (dp->kind[slot] == SLOT_EXACT || (dp->kind[slot] == SLOT_AT_LEAST && dp->val[slot] >= bound))
    return dp->val[slot];
  int *cand = dp->cand + (size_t)depth * (size_t)dp->n;
  int64_t *cost = dp->cost + (size_t)depth * (size_t)dp->n, rem, best = INT64_MAX;
  int nc = ready_sorted(dp, S, live, cand, cost, &rem), choice = -1;
  uint64_t *Sx = dp->stack + (size_t)(depth + 1) * (size_t)w;
  for (int i = 0; i < nc && rem < bound; i++) {
    int64_t lim = min64(bound, best);
    if (cost[i] >= lim) break; /* sorted: every later child costs as much */
    int x = cand[i];
    memcpy(Sx, S, sizeof(uint64_t) * (size_t)w);
    Sx[x >> 6] |= (uint64_t)1 << (x & 63);
    int64_t r = solve(dp, depth + 1, live_after(dp, Sx, live, x), lim);
    if (dp->overflow) return bound;
    if (max64(cost[i], r) < best) {
      best = max64(cost[i], r);
      choice = x;
      if (best <= rem) break; /* meets the largest footprint left: optimal */
    }
  }
  slot = slot_of(dp, S); /* the recursion may have filled the slot found above */
  if (dp->kind[slot] == SLOT_EMPTY) {
    if (dp->used >= dp->max_states) {
      dp->overflow = 1;
      return bound;
    }
    if (2 * (dp->used + 1) > dp->cap) {
      grow(dp);
      slot = slot_of(dp, S);
    }
    dp->used++;
  }
  memcpy(dp->key + slot * (size_t)w, S, sizeof(uint64_t) * (size_t)w);
  dp->kind[slot] = best < bound ? SLOT_EXACT : SLOT_AT_LEAST;
  dp->val[slot] = best < bound ? best : max64(bound, rem);
  dp->choice[slot] = choice;
  return dp->val[slot];
}

static int same_list(const int *a, int na, const int *b, int nb) {
  return na == nb && memcmp(a, b, sizeof(int) * (size_t)na) == 0;
}

/* The previous twin of v (the largest u < v with v's producers, consumers, footprint and
 * output size), or -1. Lists are compared as listed: two twins listed in different orders
 * are missed, which costs states, never exactness. */
static int previous_twin(const GtOrderDag *d, int v) {
  for (int u = v - 1; u >= 0; u--)
    if (d->foot[u] == d->foot[v] && d->out[u] == d->out[v] &&
        same_list(d->p + d->pstart[u], d->pstart[u + 1] - d->pstart[u], d->p + d->pstart[v],
                  d->pstart[v + 1] - d->pstart[v]) &&
        same_list(d->c + d->cstart[u], d->cstart[u + 1] - d->cstart[u], d->c + d->cstart[v],
                  d->cstart[v + 1] - d->cstart[v]))
      return u;
  return -1;
}

static void dp_init(Dp *dp, const GtOrderDag *d, GsArena *a, long max_states) {
  int n = d->n, w = (n + 63) / 64;
  memset(dp, 0, sizeof *dp);
  dp->d = d;
  dp->n = n;
  dp->w = w;
  dp->a = a;
  dp->max_states = (size_t)max_states;
  size_t nw = (size_t)n * (size_t)w + 1;
  dp->pmask = arena_alloc(a, sizeof(uint64_t) * nw);
  dp->cmask = arena_alloc(a, sizeof(uint64_t) * nw);
  dp->in = arena_alloc(a, sizeof(int64_t) * ((size_t)n + 1));
  for (int v = 0; v < n; v++)
    for (int j = d->pstart[v]; j < d->pstart[v + 1]; j++) {
      int p = d->p[j];
      dp->pmask[(size_t)v * (size_t)w + (size_t)(p >> 6)] |= (uint64_t)1 << (p & 63);
      dp->cmask[(size_t)p * (size_t)w + (size_t)(v >> 6)] |= (uint64_t)1 << (v & 63);
      dp->in[v] += d->out[p];
    }
  for (int v = 0; v < n; v++) {
    int u = previous_twin(d, v);
    if (u >= 0) dp->pmask[(size_t)v * (size_t)w + (size_t)(u >> 6)] |= (uint64_t)1 << (u & 63);
  }
  table_alloc(dp, 64);
  dp->stack = arena_alloc(a, sizeof(uint64_t) * ((size_t)n + 1) * (size_t)w);
  dp->cand = arena_alloc(a, sizeof(int) * ((size_t)n + 1) * ((size_t)n + 1));
  dp->cost = arena_alloc(a, sizeof(int64_t) * ((size_t)n + 1) * ((size_t)n + 1));
}

GtOrderSearch gt_order_dp(const GtOrderDag *d, GsArena *a, int64_t ub, long max_states, int *order) {
  GtOrderSearch r = {GT_ORDER_TOO_LARGE, 0, ub, 0, 0};
  if (d->n > GT_ORDER_DP_NODES) return r;
  Dp dp;
  dp_init(&dp, d, a, max_states);
  int64_t f = solve(&dp, 0, 0, ub);
  r.work = (long)dp.used;
  if (dp.overflow) {
    r.status = GT_ORDER_BUDGET;
    return r;
  }
  r.status = GT_ORDER_PROVEN;
  r.bound = r.peak = min64(f, ub);
  if (f >= ub) return r; /* proved: no order beats ub */
  uint64_t *S = dp.stack; /* depth 0: all zero, never written by the search */
  for (int k = 0; k < d->n; k++) {
    size_t slot = slot_of(&dp, S);
    gs_assert(dp.kind[slot] == SLOT_EXACT && dp.choice[slot] >= 0);
    order[k] = dp.choice[slot];
    S[order[k] >> 6] |= (uint64_t)1 << (order[k] & 63);
  }
  r.improved = 1;
  return r;
}
