/* gt_order_ilp.c — the minimum-peak order as an integer linear program, solved by GLPK's
 * branch and bound within a node budget and a time limit (--gt-order optimal past the DP).
 *
 * In the spirit of OLLA / MODeL (Steiner et al., ICML'23): time-indexed binaries inside each
 * node's window, memory at every step bounded by the peak P, minimise P. Step t in [0, n)
 * runs exactly one node. Node v's window is [e(v), l(v)] with e = its number of ancestors and
 * l = n - 1 - its number of descendants (exact: every topological order places v there).
 *   Z(v,t) = 1 when v has run at a step <= t: a binary for t in [e, l), 0 before, 1 after;
 *   X(v,t) = Z(v,t) - Z(v,t-1), v runs at t.
 *   Z(v,t-1) <= Z(v,t); sum_v Z(v,t) = t + 1; Z(v,t) <= Z(u,t-1) for each edge u -> v.
 *   y(u,t) in [0,1] for u that has readers: its output is live at t and not read at t,
 *     y(u,t) >= Z(u,t-1) - Z(c,t) - sum_{c' reads u} X(c',t) for each reader c.
 *   P >= sum_v foot(v) X(v,t) + sum_u out(u) y(u,t) at every t.
 * This is gt_order.c's peak model exactly, so the LP bound is a bound on every order. Sizes
 * are in units of the largest power of two dividing all of them, so P is integral and a node
 * bound within 1 unit of the incumbent proves it optimal.
 * No chain is collapsed: running a single-reader chain back to back is not always optimal
 * under this model (docs/graphturbo.md gives a case), and the zoo's instance DAGs have
 * almost no chains; the windows are the exact reduction instead.
 * The best greedy order is given to GLPK as its first incumbent (warm start). Budgets: at
 * most GT_ORDER_ILP_COLS columns and GT_ORDER_ILP_NZ nonzeros (else not attempted),
 * max_nodes subproblems (deterministic), time_limit seconds (a run it stops is discarded).
 */
#include "gt.h"

#include <glpk.h>
#include <math.h>
#include <string.h>

enum { GT_ORDER_ILP_NODES_MAX = 2000, GT_ORDER_ILP_COLS = 20000, GT_ORDER_ILP_NZ = 1000000 };

typedef struct {
  const GtOrderDag *d;
  int n;
  int *e, *l;               /* window of each node */
  int *zcol;                /* column of Z(v,t) is zcol[v] + t - e[v], t in [e, l) */
  int *ycol, *ylo, *yhi;    /* column of y(u,t) is ycol[u] + t - ylo[u], t in [ylo, yhi] */
  int ncols, pcol;          /* columns (1-based, as GLPK), the peak's */
  double unit;              /* bytes per unit */
  glp_prob *lp;
  double *acc, cst;         /* the row being built: coefficient per column, constant */
  int *touched, ntouched, *idx;
  double *val;
} Ilp;

/* ---- windows and sizes ---- */

/* Ancestor counts in `cnt` (desc = 0) or descendant counts (desc = 1), by bitsets along a
 * topological order. */
static void count_closure(const GtOrderDag *d, GsArena *a, const int *topo, int desc, int *cnt) {
  int n = d->n, w = (n + 63) / 64;
  uint64_t *bits = arena_alloc(a, sizeof(uint64_t) * ((size_t)n * (size_t)w + 1));
  for (int k = 0; k < n; k++) {
    int v = topo[desc ? n - 1 - k : k];
    uint64_t *bv = bits + (size_t)v * (size_t)w;
    int lo = desc ? d->cstart[v] : d->pstart[v], hi = desc ? d->cstart[v + 1] : d->pstart[v + 1];
    for (int j = lo; j < hi; j++) {
      int u = desc ? d->c[j] : d->p[j];
      const uint64_t *bu = bits + (size_t)u * (size_t)w;
      for (int i = 0; i < w; i++) bv[i] |= bu[i];
      bv[u >> 6] |= (uint64_t)1 << (u & 63);
    }
    cnt[v] = 0;
    for (int i = 0; i < w; i++) cnt[v] += __builtin_popcountll(bv[i]);
  }
}

/* Windows, column layout and the size of the model; 0 when it is over the caps. */
static int layout(Ilp *I, GsArena *a, const int *topo) {
  const GtOrderDag *d = I->d;
  int n = I->n;
  size_t sz = sizeof(int) * ((size_t)n + 1);
  I->e = arena_alloc(a, sz), I->l = arena_alloc(a, sz), I->zcol = arena_alloc(a, sz);
  I->ycol = arena_alloc(a, sz), I->ylo = arena_alloc(a, sz), I->yhi = arena_alloc(a, sz);
  count_closure(d, a, topo, 0, I->e);
  count_closure(d, a, topo, 1, I->l);
  for (int v = 0; v < n; v++) I->l[v] = n - 1 - I->l[v];
  long cols = 1, nz = 0;
  for (int v = 0; v < n; v++) {
    I->zcol[v] = (int)cols;
    cols += I->l[v] - I->e[v];
    nz += 2L * n + 3L * (I->l[v] - I->e[v]); /* count and peak rows, monotone rows */
  }
  for (int u = 0; u < n; u++) {
    int lc = -1, nc = d->cstart[u + 1] - d->cstart[u];
    for (int j = d->cstart[u]; j < d->cstart[u + 1]; j++) lc = lc > I->l[d->c[j]] ? lc : I->l[d->c[j]];
    I->ycol[u] = (int)cols;
    I->ylo[u] = I->e[u] + 1;
    I->yhi[u] = lc - 1;
    if (nc == 0 || I->yhi[u] < I->ylo[u]) I->yhi[u] = I->ylo[u] - 1; /* never live */
    cols += I->yhi[u] - I->ylo[u] + 1;
    nz += (long)(I->yhi[u] - I->ylo[u] + 1) * (long)nc * (4L + 2L * nc) + 2L * nc * n;
    for (int j = d->cstart[u]; j < d->cstart[u + 1]; j++) nz += 2L * (I->l[u] - I->e[d->c[j]] + 1);
  }
  I->pcol = (int)cols;
  I->ncols = (int)cols;
  return cols <= GT_ORDER_ILP_COLS && nz <= GT_ORDER_ILP_NZ;
}

/* ---- rows ---- */

static void add_col(Ilp *I, int col, double coef) {
  if (I->acc[col] == 0) I->touched[I->ntouched++] = col;
  I->acc[col] += coef;
}

static void add_z(Ilp *I, int v, int t, double coef) {
  if (t < I->e[v]) return;
  if (t >= I->l[v]) I->cst += coef;
  else add_col(I, I->zcol[v] + t - I->e[v], coef);
}

static void add_x(Ilp *I, int v, int t, double coef) {
  add_z(I, v, t, coef);
  add_z(I, v, t - 1, -coef);
}

/* Emits "built row + constant" with bounds [lo, hi] (GLP_LO, GLP_UP or GLP_FX) and clears the
 * builder; a row without columns is dropped (it holds for every order by construction). */
static void emit(Ilp *I, int type, double lo, double hi) {
  int k = 0;
  for (int i = 0; i < I->ntouched; i++) {
    int col = I->touched[i];
    if (fabs(I->acc[col]) > 1e-12) {
      I->idx[k + 1] = col;
      I->val[k + 1] = I->acc[col];
      k++;
    }
    I->acc[col] = 0;
  }
  I->ntouched = 0;
  if (k > 0) {
    int row = glp_add_rows(I->lp, 1);
    glp_set_row_bnds(I->lp, row, type, lo - I->cst, hi - I->cst);
    glp_set_mat_row(I->lp, row, k, I->idx, I->val);
  }
  I->cst = 0;
}

static void order_rows(Ilp *I) {
  const GtOrderDag *d = I->d;
  for (int v = 0; v < I->n; v++) /* monotone */
    for (int t = I->e[v] + 1; t < I->l[v]; t++) {
      add_z(I, v, t - 1, 1);
      add_z(I, v, t, -1);
      emit(I, GLP_UP, 0, 0);
    }
  for (int t = 0; t < I->n; t++) { /* one node per step */
    for (int v = 0; v < I->n; v++) add_z(I, v, t, 1);
    emit(I, GLP_FX, t + 1, t + 1);
  }
  for (int v = 0; v < I->n; v++) /* precedence */
    for (int j = d->pstart[v]; j < d->pstart[v + 1]; j++)
      for (int t = I->e[v], u = d->p[j]; t <= I->l[u]; t++) {
        add_z(I, v, t, 1);
        add_z(I, u, t - 1, -1);
        emit(I, GLP_UP, 0, 0);
      }
}

static void memory_rows(Ilp *I) {
  const GtOrderDag *d = I->d;
  for (int u = 0; u < I->n; u++) /* y: live and not read now */
    for (int j = d->cstart[u]; j < d->cstart[u + 1]; j++)
      for (int t = I->ylo[u], c = d->c[j]; t <= I->yhi[u] && t < I->l[c]; t++) {
        add_col(I, I->ycol[u] + t - I->ylo[u], 1);
        add_z(I, u, t - 1, -1);
        add_z(I, c, t, 1);
        for (int k = d->cstart[u]; k < d->cstart[u + 1]; k++) add_x(I, d->c[k], t, 1);
        emit(I, GLP_LO, 0, 0);
      }
  for (int t = 0; t < I->n; t++) { /* peak */
    add_col(I, I->pcol, 1);
    for (int v = 0; v < I->n; v++) add_x(I, v, t, -(double)d->foot[v] / I->unit);
    for (int u = 0; u < I->n; u++)
      if (t >= I->ylo[u] && t <= I->yhi[u])
        add_col(I, I->ycol[u] + t - I->ylo[u], -(double)d->out[u] / I->unit);
    emit(I, GLP_LO, 0, 0);
  }
}

static void build(Ilp *I, GsArena *a, int64_t lb) {
  I->lp = glp_create_prob();
  glp_set_obj_dir(I->lp, GLP_MIN);
  glp_add_cols(I->lp, I->ncols);
  for (int col = 1; col < I->pcol; col++) {
    glp_set_col_kind(I->lp, col, GLP_CV);
    glp_set_col_bnds(I->lp, col, GLP_DB, 0, 1);
  }
  for (int v = 0; v < I->n; v++)
    for (int t = I->e[v]; t < I->l[v]; t++) glp_set_col_kind(I->lp, I->zcol[v] + t - I->e[v], GLP_BV);
  glp_set_col_bnds(I->lp, I->pcol, GLP_LO, (double)lb / I->unit, 0);
  glp_set_obj_coef(I->lp, I->pcol, 1);
  size_t sz = (size_t)I->ncols + 2;
  I->acc = arena_alloc(a, sizeof(double) * sz);
  I->val = arena_alloc(a, sizeof(double) * sz);
  I->touched = arena_alloc(a, sizeof(int) * sz);
  I->idx = arena_alloc(a, sizeof(int) * sz);
  order_rows(I);
  memory_rows(I);
}

/* ---- warm start, solve, read back ---- */

/* The column values of a topological order (1-based, as glp_ios_heur_sol takes them). */
static double *values_of(const Ilp *I, GsArena *a, const int *order, int64_t peak) {
  const GtOrderDag *d = I->d;
  int n = I->n, *pos = arena_alloc(a, sizeof(int) * ((size_t)n + 1));
  double *x = arena_alloc(a, sizeof(double) * ((size_t)I->ncols + 2));
  for (int k = 0; k < n; k++) pos[order[k]] = k;
  for (int v = 0; v < n; v++)
    for (int t = I->e[v]; t < I->l[v]; t++) x[I->zcol[v] + t - I->e[v]] = pos[v] <= t;
  for (int u = 0; u < n; u++) {
    int last = -1;
    for (int j = d->cstart[u]; j < d->cstart[u + 1]; j++) last = last > pos[d->c[j]] ? last : pos[d->c[j]];
    for (int t = I->ylo[u]; t <= I->yhi[u]; t++) {
      int reads = 0, now = order[t];
      for (int j = d->pstart[now]; j < d->pstart[now + 1]; j++) reads |= d->p[j] == u;
      x[I->ycol[u] + t - I->ylo[u]] = pos[u] < t && t < last && !reads;
    }
  }
  x[I->pcol] = (double)peak / I->unit;
  return x;
}

typedef struct {
  const double *warm;
  int warm_given, proven, stopped;
  long nodes, max_nodes;
  double bound;             /* best node bound seen, in units */
} Search;

static void on_event(glp_tree *T, void *info) {
  Search *s = info;
  int reason = glp_ios_reason(T);
  if (reason == GLP_IHEUR && !s->warm_given) {
    s->warm_given = 1;
    glp_ios_heur_sol(T, s->warm);
  }
  if (reason != GLP_ISELECT) return;
  int best = glp_ios_best_node(T);
  if (best) s->bound = fmax(s->bound, glp_ios_node_bound(T, best));
  glp_prob *p = glp_ios_get_prob(T);
  if (glp_mip_status(p) == GLP_FEAS && ceil(s->bound - 1e-6) >= glp_mip_obj_val(p) - 1e-6) {
    s->proven = 1; /* P is integral: no subproblem left can beat the incumbent */
    glp_ios_terminate(T);
  } else if (++s->nodes > s->max_nodes) {
    s->stopped = 1;
    glp_ios_terminate(T);
  }
}

/* The order the incumbent encodes: v runs at the first t with Z(v,t) = 1. */
static void read_order(const Ilp *I, int *order) {
  for (int t = 0; t < I->n; t++) order[t] = -1;
  for (int v = 0; v < I->n; v++) {
    int t = I->e[v];
    while (t < I->l[v] && glp_mip_col_val(I->lp, I->zcol[v] + t - I->e[v]) < 0.5) t++;
    gs_assert(order[t] < 0); /* the count rows give each step one node */
    order[t] = v;
  }
}

static int64_t unit_of(const GtOrderDag *d) {
  int64_t all = 0;
  for (int v = 0; v < d->n; v++) all |= d->foot[v] | d->out[v];
  return all ? all & -all : 1; /* the lowest set bit: the largest power of two dividing all */
}

/* GLPK's run: root LP, then branch and bound; returns the GLPK code of the first failure. */
static int run_glpk(Ilp *I, Search *s, double time_limit) {
  double t0 = glp_time(), ms = time_limit * 1e3;
  glp_smcp sm;
  glp_init_smcp(&sm);
  sm.msg_lev = GLP_MSG_OFF;
  sm.tm_lim = (int)ms;
  int rc = glp_simplex(I->lp, &sm);
  if (rc || glp_get_status(I->lp) != GLP_OPT) return rc ? rc : GLP_EFAIL;
  glp_iocp io;
  glp_init_iocp(&io);
  io.msg_lev = GLP_MSG_OFF;
  io.presolve = GLP_OFF; /* the callback's columns are the model's own */
  io.tm_lim = (int)fmax(1, ms - (glp_time() - t0));
  io.cb_func = on_event;
  io.cb_info = s;
  return glp_intopt(I->lp, &io);
}

GtOrderSearch gt_order_ilp(const GtOrderDag *d, GsArena *a, const int *warm, int64_t ub,
                           double time_limit, long max_nodes, int *order) {
  GtOrderSearch r = {GT_ORDER_TOO_LARGE, 0, ub, 0, 0};
  Ilp I;
  memset(&I, 0, sizeof I);
  I.d = d;
  I.n = d->n;
  I.unit = (double)unit_of(d);
  if (d->n > GT_ORDER_ILP_NODES_MAX || !layout(&I, a, warm)) return r;
  int64_t lb = gt_order_lower_bound(d, a);
  int out = glp_term_out(GLP_OFF);
  build(&I, a, lb);
  Search s = {values_of(&I, a, warm, ub), 0, 0, 0, 0, max_nodes, (double)lb / I.unit};
  int rc = run_glpk(&I, &s, time_limit);
  r.work = s.nodes;
  r.status = rc == GLP_ETMLIM ? GT_ORDER_TIME_LIMIT : rc == 0 || s.proven ? GT_ORDER_PROVEN
           : s.stopped ? GT_ORDER_BUDGET : GT_ORDER_FAILED;
  if ((r.status == GT_ORDER_PROVEN || r.status == GT_ORDER_BUDGET) &&
      (glp_mip_status(I.lp) == GLP_OPT || glp_mip_status(I.lp) == GLP_FEAS)) {
    read_order(&I, order);
    int64_t peak = gt_order_peak(d, order, a);
    if (peak < ub) r.improved = 1, r.peak = peak;
    if (rc == 0) s.bound = fmax(s.bound, glp_mip_obj_val(I.lp));
    int64_t proven = (int64_t)ceil(s.bound - 1e-6) * (int64_t)I.unit;
    r.bound = r.status == GT_ORDER_PROVEN ? r.peak : min64(r.peak, proven);
  } else if (r.status != GT_ORDER_TIME_LIMIT) {
    r.status = GT_ORDER_FAILED;
  }
  glp_delete_prob(I.lp);
  glp_term_out(out);
  return r;
}
