/* gt_concat.c — concat insertion with copy and redistribute (paper §3.5, Figs. 8-9).
 *
 * For every instance q (in schedule order) and every tensor it reads from two or more
 * producer instances, a concat joins the producers' output slices along the producers'
 * split dimension, right before q runs. The concat's scope is LB when any part is in LB
 * (GB otherwise); a part in the other scope first gets copy(from -> to); the concat's
 * parts must share one binding, the per-dimension minimum of the parts' bindings, and a part
 * bound otherwise first gets redistribute(that binding). The parts sit on disjoint cores, so
 * when n parts of that binding need more than the cluster's c cores its factors are halved,
 * innermost dimension first, until they fit. The concat's own binding is that tuple with the
 * concat dimension multiplied by n (Fig. 9: two [2,2] parts give [4,2]).
 * A tensor read from a single producer instance whose output is in LB but bound otherwise
 * than the consumer infers (Alg. 4's infer_binding) gets a redistribute; one in GB is read
 * from GB by every core and needs nothing.
 * An extra op identical to one already inserted (same kind, inputs, binding, scope) is not
 * built again: the later consumer is added to its users (a tensor read whole by every
 * instance of a consumer group is concatenated once, not once per instance).
 * Invariant: an extra op only reads instances and earlier extra ops.
 */
#include "gt.h"

#include <string.h>

static uint64_t xop_key(const GtXop *x) {
  uint64_t h = 1469598103934665603u;
#define MIX(v) (h = (h ^ (uint64_t)(v)) * 1099511628211u)
  MIX(x->kind);
  MIX(x->tensor);
  MIX(x->scope);
  MIX(x->from_scope);
  for (int k = 0; k < x->nin; k++) {
    MIX(x->in[k].is_xop);
    MIX(x->in[k].id);
  }
  for (int k = 0; k < GS_MAX_DIMS; k++) MIX(x->bind[k]);
#undef MIX
  return h;
}

static int same_xop(const GtXop *a, const GtXop *b) {
  if (a->kind != b->kind || a->tensor != b->tensor || a->nin != b->nin || a->scope != b->scope ||
      a->from_scope != b->from_scope || memcmp(a->bind, b->bind, sizeof a->bind) != 0)
    return 0;
  for (int k = 0; k < a->nin; k++)
    if (a->in[k].is_xop != b->in[k].is_xop || a->in[k].id != b->in[k].id) return 0;
  return 1;
}

static void hash_insert(GtSchedule *s, int id) {
  size_t mask = (size_t)s->cap_hash - 1, i = (size_t)xop_key(&s->xops[id]) & mask;
  while (s->xop_hash[i] >= 0) i = (i + 1) & mask;
  s->xop_hash[i] = id;
}

static void add_user(GtSchedule *s, GtXop *x, int q) {
  if (x->nusers && x->users[x->nusers - 1] == q) return;
  if (x->nusers == x->cap_users) {
    int cap = x->cap_users ? 2 * x->cap_users : 4;
    int *u = arena_alloc(s->arena, sizeof(int) * (size_t)cap);
    if (x->nusers) memcpy(u, x->users, sizeof(int) * (size_t)x->nusers);
    x->users = u;
    x->cap_users = cap;
  }
  x->users[x->nusers++] = q;
}

/* Returns the id of an identical extra op (adding q to its users) or of x, added now. */
static int add_xop(GtSchedule *s, const GtXop *x, int q) {
  if (s->cap_hash) {
    size_t mask = (size_t)s->cap_hash - 1, i = (size_t)xop_key(x) & mask;
    for (; s->xop_hash[i] >= 0; i = (i + 1) & mask)
      if (same_xop(&s->xops[s->xop_hash[i]], x)) {
        add_user(s, &s->xops[s->xop_hash[i]], q);
        return s->xop_hash[i];
      }
  }
  if (s->nxops == s->cap_xops) {
    int cap = s->cap_xops ? 2 * s->cap_xops : 64;
    GtXop *n = arena_alloc(s->arena, sizeof *n * (size_t)cap);
    if (s->nxops) memcpy(n, s->xops, sizeof *n * (size_t)s->nxops);
    s->xops = n;
    s->cap_xops = cap;
  }
  int id = s->nxops++;
  s->xops[id] = *x;
  s->xops[id].consumer = q;
  s->xops[id].nusers = s->xops[id].cap_users = 0;
  add_user(s, &s->xops[id], q);
  if (2 * s->nxops > s->cap_hash) { /* grow the table to 4x and rehash */
    s->cap_hash = s->cap_hash ? 4 * s->cap_hash : 256;
    s->xop_hash = arena_alloc(s->arena, sizeof(int) * (size_t)s->cap_hash);
    for (int i = 0; i < s->cap_hash; i++) s->xop_hash[i] = -1;
    for (int i = 0; i < s->nxops; i++) hash_insert(s, i);
  } else {
    hash_insert(s, id);
  }
  return id;
}

static void slice_shape(const GtSchedule *s, const GtInstance *p, int *ndim, int64_t *shape) {
  const GsTensor *t = &s->g->tensors[s->groups[p->group].out];
  *ndim = t->ndim;
  for (int k = 0; k < GS_MAX_DIMS; k++) shape[k] = k < t->ndim ? t->dim[k] : 1;
  if (p->dim >= 0) shape[p->dim] = p->hi - p->lo;
}

static GtXop unary(const GtSchedule *s, GtXopKind kind, int consumer, int tensor, const GtInstance *p,
                   GtRef in, GtRef *slot) {
  GtXop x;
  memset(&x, 0, sizeof x);
  x.kind = kind;
  x.consumer = consumer;
  x.tensor = tensor;
  x.nin = 1;
  x.in = slot;
  x.in[0] = in;
  x.dim = p->dim;
  slice_shape(s, p, &x.ndim, x.shape);
  memcpy(x.bind, p->bind, sizeof x.bind);
  x.scope = x.from_scope = p->scope;
  return x;
}

static int64_t cores_of(const int64_t *b) {
  int64_t c = 1;
  for (int k = 0; k < GS_MAX_DIMS; k++) c *= b[k];
  return c;
}

static void concat_parts(GtSchedule *s, int q, int tensor, const int *parts, int n) {
  GtBufScope cscope = GT_SCOPE_GB;
  int64_t target[GS_MAX_DIMS];
  for (int k = 0; k < GS_MAX_DIMS; k++) target[k] = INT64_MAX;
  for (int i = 0; i < n; i++) {
    const GtInstance *p = &s->insts[parts[i]];
    if (p->scope == GT_SCOPE_LB) cscope = GT_SCOPE_LB;
    for (int k = 0; k < GS_MAX_DIMS; k++) target[k] = min64(target[k], p->bind[k]);
  }
  /* the n parts must sit on disjoint cores: n * cores(target) <= c */
  for (int k = GS_MAX_DIMS - 1; n * cores_of(target) > s->cores && cores_of(target) > 1;
       k = k > 0 ? k - 1 : GS_MAX_DIMS - 1)
    if (target[k] > 1) target[k] = target[k] % 2 == 0 ? target[k] / 2 : 1;
  GtXop c;
  memset(&c, 0, sizeof c);
  c.kind = GT_XOP_CONCAT;
  c.consumer = q;
  c.tensor = tensor;
  c.nin = c.ninst = n;
  c.in = arena_alloc(s->arena, sizeof(GtRef) * (size_t)n);
  c.inst = arena_alloc(s->arena, sizeof(int) * (size_t)n);
  c.dim = s->insts[parts[0]].dim;
  c.scope = c.from_scope = cscope;
  slice_shape(s, &s->insts[parts[0]], &c.ndim, c.shape);
  if (c.dim >= 0) {
    c.shape[c.dim] = 0;
    for (int i = 0; i < n; i++) c.shape[c.dim] += s->insts[parts[i]].hi - s->insts[parts[i]].lo;
  }
  for (int i = 0; i < n; i++) {
    const GtInstance *p = &s->insts[parts[i]];
    GtRef ref = {0, parts[i]};
    GtBufScope sc = p->scope;
    if (sc != cscope) {
      GtXop x = unary(s, GT_XOP_COPY, q, tensor, p, ref, arena_alloc(s->arena, sizeof(GtRef)));
      x.scope = cscope;
      ref = (GtRef){1, add_xop(s, &x, q)};
      sc = cscope;
    }
    if (memcmp(p->bind, target, sizeof target) != 0) {
      GtXop x = unary(s, GT_XOP_REDISTRIBUTE, q, tensor, p, ref, arena_alloc(s->arena, sizeof(GtRef)));
      memcpy(x.bind, target, sizeof target);
      x.scope = x.from_scope = sc;
      ref = (GtRef){1, add_xop(s, &x, q)};
    }
    c.in[i] = ref;
    c.inst[i] = parts[i];
  }
  memcpy(c.bind, target, sizeof target);
  if (c.dim >= 0) c.bind[c.dim] *= n;
  while (c.dim >= 0 && cores_of(c.bind) > s->cores) /* more parts than cores */
    c.bind[c.dim] = c.bind[c.dim] % 2 == 0 ? c.bind[c.dim] / 2 : 1;
  gs_assert(cores_of(c.bind) <= s->cores);
  add_xop(s, &c, q);
}

/* requires: gt_bind_instances; maintains: xops (concat/copy/redistribute), each placed right
 * before its consumer instance, parts of a concat in increasing slice order. */
void gt_insert_concats(GtSchedule *s) {
  int *parts = arena_alloc(s->arena, sizeof(int) * (size_t)(s->ninsts + 1));
  int *done = arena_alloc(s->arena, sizeof(int) * (size_t)(s->g->ntensors + 1)); /* stamp */
  for (int v = 0; v < s->ninsts; v++) {
    int q = s->order[v];
    const GtInstance *in = &s->insts[q];
    for (int j = 0; j < in->nprod; j++) {
      const GtEdge *e = &s->edges[in->prod[j]];
      if (done[e->tensor] == v + 1) continue; /* this tensor's parts are handled */
      done[e->tensor] = v + 1;
      int n = 0;
      for (int i = j; i < in->nprod; i++)
        if (s->edges[in->prod[i]].tensor == e->tensor) parts[n++] = s->edges[in->prod[i]].from;
      if (n >= 2) {
        concat_parts(s, q, e->tensor, parts, n);
        continue;
      }
      const GtInstance *p = &s->insts[parts[0]];
      int64_t want[GS_MAX_DIMS];
      if (p->scope != GT_SCOPE_LB || !gt_infer_binding(s, in, in->bind, p, e->tensor, want)) continue;
      if (memcmp(want, p->bind, sizeof want) == 0) continue;
      GtXop x = unary(s, GT_XOP_REDISTRIBUTE, q, e->tensor, p, (GtRef){0, parts[0]},
                      arena_alloc(s->arena, sizeof(GtRef)));
      memcpy(x.bind, want, sizeof want);
      add_xop(s, &x, q);
    }
  }
}
