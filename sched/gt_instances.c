/* gt_instances.c — split every group into instances by its BestSplit and build the pruned
 * instance DAG (paper §3.3, Fig. 6).
 *
 * Instance k of a group with split (d, f) computes [k*E/f, (k+1)*E/f) of dimension d of the
 * group's output (E its extent); a group no split fits in LB is one instance whose output
 * lives in GB. Inherited ("gray") edges join every producer instance to every consumer
 * instance; an edge p -> q is kept only when the part of the tensor q reads — found by
 * propagating q's output slice back through q's ops (gt_group_reqs) — overlaps what p
 * produced: ranges on the same dimension must intersect, a read of the whole tensor or a
 * range on another dimension always overlaps. The kept edge records the part q reads.
 * Invariant: instances of a group are contiguous ids tiling its output; edges go from an
 * earlier group to a later one.
 */
#include "gt.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  int n, cap;
  GtEdge *v;
} EdgeVec;

/* Edges grow on the heap (realloc moves a large block's pages instead of copying them) and
 * the arena adopts the array at the end: doubling inside the arena zeroed and copied every
 * size on the way, twice the final size, and even one copy into it zeroed and wrote 36 MB of
 * new pages on ViT-B/16 (1.1 M edges on stcp920), a third of the pass. */
static void push_edge(EdgeVec *ev, GtEdge e) {
  if (ev->n == ev->cap) {
    ev->cap = ev->cap ? 2 * ev->cap : 256;
    ev->v = realloc(ev->v, sizeof *ev->v * (size_t)ev->cap);
    if (!ev->v) die("out of memory");
    util_advise_huge(ev->v, sizeof *ev->v * (size_t)ev->cap);
  }
  ev->v[ev->n++] = e;
}

/* The range producer instance p wrote of tensor t: 1 with [*lo, *hi) on *dim, or 0 for all. */
static int produced_range(const GtSchedule *s, const GtInstance *p, int t, int *dim, int64_t *lo,
                          int64_t *hi) {
  const GsTensor *tt = &s->g->tensors[t], *po = &s->g->tensors[s->groups[p->group].out];
  if (p->dim < 0 || p->dim >= tt->ndim || tt->dim[p->dim] != po->dim[p->dim]) return 0;
  *dim = p->dim;
  *lo = p->lo;
  *hi = p->hi;
  return 1;
}

static void add_edges(GtSchedule *s, EdgeVec *ev, int qi) {
  const GtInstance *q = &s->insts[qi];
  const GtGroup *gq = &s->groups[q->group];
  const GsGraph *g = s->g;
  int nt = gt_group_reqs(s, gq, q->dim, q->lo, q->hi, s->req, s->touched);
  for (int i = 0; i < nt; i++) {
    int t = s->touched[i], pop = g->tensors[t].producer;
    GtReq r = s->req[t];
    if (pop < 0 || s->group_of_op[pop] == q->group || r.kind == GT_REQ_NONE) continue;
    int pg = s->group_of_op[pop];
    int64_t f = s->groups[pg].best.split ? s->groups[pg].best.factor : 1;
    int64_t k0 = 0, k1 = f; /* producer instances whose slices can overlap the read */
    const GtInstance *p0 = &s->insts[s->first_inst[pg]];
    int pd0;
    int64_t plo0, phi0;
    if (r.kind == GT_REQ_RANGE && produced_range(s, p0, t, &pd0, &plo0, &phi0) && r.dim == pd0) {
      int64_t len = phi0 - plo0;
      k0 = r.lo / len;
      k1 = min64(f, (r.hi - 1) / len + 1);
    }
    for (int64_t k = k0; k < k1; k++) {
      int pi = s->first_inst[pg] + (int)k;
      GtEdge e = {pi, qi, t, -1, 0, 0};
      int pd;
      int64_t plo, phi;
      int has = produced_range(s, &s->insts[pi], t, &pd, &plo, &phi);
      if (r.kind == GT_REQ_RANGE && has && r.dim == pd) {
        e.dim = pd;
        e.lo = max64(r.lo, plo);
        e.hi = min64(r.hi, phi);
        if (e.lo >= e.hi) continue; /* redundant: q reads nothing p wrote */
      } else if (has) {
        e.dim = pd;
        e.lo = plo;
        e.hi = phi;
      } else if (r.kind == GT_REQ_RANGE) {
        e.dim = r.dim;
        e.lo = r.lo;
        e.hi = r.hi;
      }
      push_edge(ev, e);
    }
  }
  for (int i = 0; i < nt; i++) s->req[s->touched[i]].kind = GT_REQ_NONE;
}

/* Every instance's lists of producer and consumer edges, in edge order, cut from one array
 * each (one list per instance was 25 k allocations on ViT-B/16). */
static void link_edges(GtSchedule *s) {
  int n = s->ninsts;
  int *prod = arena_alloc(s->arena, sizeof(int) * ((size_t)s->nedges + (size_t)n));
  int *cons = arena_alloc(s->arena, sizeof(int) * ((size_t)s->nedges + (size_t)n));
  int *np = arena_alloc(s->arena, sizeof(int) * (size_t)(n + 1));
  int *nc = arena_alloc(s->arena, sizeof(int) * (size_t)(n + 1));
  for (int e = 0; e < s->nedges; e++) np[s->edges[e].to]++, nc[s->edges[e].from]++;
  for (int i = 0; i < n; i++) { /* one spare entry each, as the lists had */
    s->insts[i].prod = prod;
    s->insts[i].cons = cons;
    prod += np[i] + 1;
    cons += nc[i] + 1;
  }
  for (int e = 0; e < s->nedges; e++) {
    GtInstance *a = &s->insts[s->edges[e].from], *b = &s->insts[s->edges[e].to];
    b->prod[b->nprod++] = e;
    a->cons[a->ncons++] = e;
  }
}

/* At least the number of edges add_edges can make: an instance of a group reads each tensor
 * from outside the group from at most every instance of its producer group (the gray edges,
 * on most of the zoo; at most 10x the kept ones). */
static int64_t edge_bound(const GtSchedule *s) {
  const GsGraph *g = s->g;
  int64_t n = 0;
  for (int o = 0; o < g->nops; o++) {
    const GtGroup *gq = &s->groups[s->group_of_op[o]];
    for (int i = 0; i < g->ops[o].nin; i++) {
      int pop = g->tensors[g->ops[o].in[i]].producer;
      if (pop < 0 || s->group_of_op[pop] == s->group_of_op[o]) continue;
      const GtGroup *gp = &s->groups[s->group_of_op[pop]];
      n += (gq->best.split ? gq->best.factor : 1) * (gp->best.split ? gp->best.factor : 1);
    }
  }
  return n;
}

/* requires: gt_group_subgraphs; maintains: instances of each live group (contiguous ids, in
 * topological group order), pruned edges with per-instance producer/consumer lists. */
void gt_split_instances(GtSchedule *s) {
  const GsGraph *g = s->g;
  s->first_inst = arena_alloc(s->arena, sizeof(int) * (size_t)s->ngroups);
  int n = 0;
  for (int i = 0; i < s->nlive; i++) {
    const GtGroup *gr = &s->groups[s->live[i]];
    s->first_inst[s->live[i]] = n;
    n += gr->best.split ? (int)gr->best.factor : 1;
  }
  s->ninsts = n;
  s->insts = arena_alloc(s->arena, sizeof(GtInstance) * (size_t)(n + 1));
  for (int i = 0; i < s->nlive; i++) {
    int gid = s->live[i];
    const GtGroup *gr = &s->groups[gid];
    const GsTensor *out = &g->tensors[gr->out];
    int64_t f = gr->best.split ? gr->best.factor : 1;
    int64_t ext = gr->best.split ? out->dim[gr->best.dim] : 1;
    int64_t out_bytes = 0;
    for (int k = 0; k < gr->nouts; k++) out_bytes += graph_tensor_bytes(&g->tensors[gr->outs[k]]);
    for (int k = 0; k < f; k++) {
      GtInstance *in = &s->insts[s->first_inst[gid] + k];
      in->group = gid;
      in->index = k;
      in->dim = gr->best.split ? gr->best.dim : -1;
      in->lo = k * (ext / f);
      in->hi = (k + 1) * (ext / f);
      in->out_bytes = out_bytes / f;
      in->footprint = ceil_div64(gr->peak, f);
      in->scope = gr->best.split ? GT_SCOPE_LB : GT_SCOPE_GB;
    }
  }
  /* The edges' array is reserved at once: its pages are touched only as edges are written,
   * where each doubling remapped all of them, slow to touch again here (ViT-B/16: 45 ms of the
   * pass's 220). At most 4 M edges (128 MiB of address space) ahead; past that it grows. */
  EdgeVec ev = {0, (int)min64(max64(edge_bound(s), 1), 1 << 22), NULL};
  ev.v = malloc(sizeof *ev.v * (size_t)ev.cap);
  if (!ev.v) die("out of memory");
  util_advise_huge(ev.v, sizeof *ev.v * (size_t)ev.cap);
  int *seen = arena_alloc(s->arena, sizeof(int) * (size_t)s->ngroups);
  for (int qi = 0; qi < n; qi++) {
    int e0 = ev.n;
    add_edges(s, &ev, qi);
    /* gray edges: every instance of every producer group */
    for (int e = e0; e < ev.n; e++) {
      int pg = s->insts[ev.v[e].from].group;
      if (seen[pg] == qi + 1) continue;
      seen[pg] = qi + 1;
      s->gray_edges += s->groups[pg].best.split ? s->groups[pg].best.factor : 1;
    }
  }
  s->nedges = ev.n;
  s->edges = arena_adopt(s->arena, ev.v);
  link_edges(s);
}
