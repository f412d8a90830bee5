/* prog_repeat.c — how much of a program the later clusters repeat (prog_repeats): the
 * instructions of clusters 1, 2, ... that lie in runs which are, in order, a run of cluster 0's
 * queue of the same core and index but for their regions, tiles and offsets.
 *
 * Why: a kernel's streams are the same on every cluster but for the rows they work on, so a
 * program whose later clusters were segments over cluster 0's records (cluster 0's instructions
 * with a map of regions, one of tiles and a shift of the offsets into each region) would need
 * emitting, encoding and checking a quarter of what it does on four clusters. This measures what
 * such segments would cover in a real schedule (docs/speed.md, "The speed targets").
 *
 * Contract:
 * - A queue of cluster c > 0 is compared with the queue of cluster 0 of the same core and index;
 *   one without such a queue counts as its own (not covered).
 * - A run from a[i] and b[j] repeats while b[j + n] is a[i + n] with: the same opcode and every
 *   other field equal, but for the regions (r[]) and tiles (t[]), which go through one
 *   one-to-one map each (both start empty at the run's start, and id 0, none, maps to itself
 *   only), the offsets into a region (a mov's dst_off and src_off, a vec's dst_off, an alloc's
 *   offset), whose difference must be one constant per region of the map, and an alloc's cluster,
 *   which is not compared.
 * - The runs are taken in order along both queues: b's instructions from the first on, each
 *   starting a run where one of at least GS_REPEAT_MIN starts at one of the next GS_REPEAT_TRIES
 *   instructions of a after the last run that have its shape (its opcode, the fields that are
 *   neither ids nor offsets, and which ids are given), the first that does; the run then goes on
 *   as far as it repeats. An instruction that starts none is b's own.
 * - scripts/cluster_streams.py --segments counts the same on a program's assembly (the test
 *   compares them).
 */
#include "prog.h"

#include <stdlib.h>
#include <string.h>

/* ---- the fields ---- */

/* What each n[] slot of each opcode is to a comparison, from isa.def's operands: an offset into
 * a region (an operand named REG_off, or an alloc's `offset`: where its region lies), as the
 * r[] index of that region + 1; not compared (an alloc's `cluster`: each cluster allocates in its
 * own buffer), -1; else 0, compared as it is. Row I_COUNT (an opcode isa.def does not have) is
 * all 0. */
typedef struct {
  signed char at[I_COUNT + 1][GS_INST_NUM];
} Roles;

static int reg_named(GsOpcode op, const char *name, size_t len) {
  for (int i = 0; i < isa_operand_count(op); i++) {
    const GsOperand *o = isa_operand(op, i);
    if (o->field == OPF_REGION && strlen(o->name) == len && !strncmp(o->name, name, len))
      return o->index;
  }
  return -1;
}

static void roles_init(Roles *roles) {
  memset(roles, 0, sizeof *roles);
  for (int op = 0; op < I_COUNT; op++)
    for (int i = 0; i < isa_operand_count((GsOpcode)op); i++) {
      const GsOperand *o = isa_operand((GsOpcode)op, i);
      if (o->field != OPF_NUM) continue;
      size_t n = strlen(o->name);
      int reg = -1;
      if (op == I_ALLOC && !strcmp(o->name, "cluster")) roles->at[op][o->index] = -1;
      else if (op == I_ALLOC && !strcmp(o->name, "offset")) reg = reg_named(I_ALLOC, "region", 6);
      else if (n > 4 && !strcmp(o->name + n - 4, "_off")) reg = reg_named((GsOpcode)op, o->name, n - 4);
      if (reg >= 0) roles->at[op][o->index] = (signed char)(reg + 1);
    }
}

static const signed char *roles_of(const Roles *roles, uint8_t op) {
  return roles->at[op < I_COUNT ? op : I_COUNT];
}

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

/* in's shape: what a run's first instruction must share with a's, as a hash. */
static uint64_t shape(const Roles *roles, const GsInst *in) {
  const signed char *role = roles_of(roles, in->op);
  uint64_t h = mix(in->op, (uint64_t)in->sub << 8 | (uint64_t)in->dtype << 16 | (uint64_t)in->flags << 24);
  h = mix(h, isa_inst_sync(in));
  for (int i = 0; i < 3; i++) h = mix(h, (uint64_t)(in->r[i] != 0) | (uint64_t)(in->t[i] != 0) << 1);
  for (int k = 0; k < GS_INST_NUM; k++) h = mix(h, role[k] ? 0 : (uint64_t)in->n[k]);
  return h;
}

/* ---- the maps of a run: id -> id both ways, and a shift per region ---- */

typedef struct {
  uint32_t *key, *val, *stamp;
  int64_t *shift;               /* regions: the offset shift, valid when has[slot] */
  unsigned char *has;
  size_t cap, n;
  uint32_t now;                 /* entries of another stamp are empty: a run's start clears */
} IdMap;

static void map_grow(IdMap *m);

static size_t map_slot(const IdMap *m, uint32_t k) {
  size_t i = (size_t)(k * 0x9e3779b1u) & (m->cap - 1);
  while (m->stamp[i] == m->now && m->key[i] != k) i = (i + 1) & (m->cap - 1);
  return i;
}

/* The slot of key k, made (value val) when it had none; *fresh says which. */
static size_t map_put(IdMap *m, uint32_t k, uint32_t val, int *fresh) {
  if (2 * (m->n + 1) > m->cap) map_grow(m);
  size_t i = map_slot(m, k);
  *fresh = m->stamp[i] != m->now;
  if (*fresh) {
    m->stamp[i] = m->now;
    m->key[i] = k;
    m->val[i] = val;
    m->has[i] = 0;
    m->n++;
  }
  return i;
}

static void map_alloc(IdMap *m, size_t cap) {
  m->cap = cap;
  m->key = calloc(cap, sizeof *m->key);
  m->val = calloc(cap, sizeof *m->val);
  m->stamp = calloc(cap, sizeof *m->stamp);
  m->shift = calloc(cap, sizeof *m->shift);
  m->has = calloc(cap, 1);
  if (!m->key || !m->val || !m->stamp || !m->shift || !m->has) die("out of memory");
}

static void map_free(IdMap *m) {
  free(m->key), free(m->val), free(m->stamp), free(m->shift), free(m->has);
}

static void map_grow(IdMap *m) {
  IdMap old = *m;
  map_alloc(m, old.cap * 2);
  m->now = 1;
  m->n = 0;
  for (size_t i = 0; i < old.cap; i++) {
    if (old.stamp[i] != old.now) continue;
    int fresh;
    size_t j = map_put(m, old.key[i], old.val[i], &fresh);
    m->has[j] = old.has[i];
    m->shift[j] = old.shift[i];
  }
  map_free(&old);
}

static void map_clear(IdMap *m) {
  m->n = 0;
  if (++m->now == 0) { /* the stamps wrapped: really empty them */
    memset(m->stamp, 0, m->cap * sizeof *m->stamp);
    m->now = 1;
  }
}

typedef struct {
  IdMap reg[2], tile[2];        /* [0]: a -> b, [1]: b -> a */
  Roles roles;                  /* the n[] slots (roles_init) */
} Maps;

/* Whether ids x (of a) and y (of b) correspond under fwd/back, making them so when neither is
 * mapped yet; the slot of x in fwd into *at. */
static int ids_pair(IdMap *fwd, IdMap *back, uint32_t x, uint32_t y, size_t *at) {
  if (!x || !y) return x == y;
  int fresh_f, fresh_b;
  size_t i = map_put(fwd, x, y, &fresh_f), j = map_put(back, y, x, &fresh_b);
  if (at) *at = i;
  return fwd->val[i] == y && back->val[j] == x;
}

/* Whether b is a under the maps, which it extends. */
static int same_under(Maps *m, const GsInst *a, const GsInst *b) {
  if (a->op != b->op || a->sub != b->sub || a->dtype != b->dtype || a->flags != b->flags ||
      isa_inst_sync(a) != isa_inst_sync(b))
    return 0;
  size_t slot[3] = {0, 0, 0};
  for (int i = 0; i < 3; i++)
    if (!ids_pair(&m->reg[0], &m->reg[1], a->r[i], b->r[i], &slot[i]) ||
        !ids_pair(&m->tile[0], &m->tile[1], a->t[i], b->t[i], NULL))
      return 0;
  const signed char *roles = roles_of(&m->roles, a->op);
  for (int k = 0; k < GS_INST_NUM; k++) {
    int role = roles[k];
    if (role < 0) continue;
    if (role == 0) {
      if (a->n[k] != b->n[k]) return 0;
      continue;
    }
    if (!a->r[role - 1]) { /* an offset into no region: compared as it is */
      if (a->n[k] != b->n[k]) return 0;
      continue;
    }
    IdMap *f = &m->reg[0];
    size_t s = slot[role - 1];
    int64_t d = (int64_t)((uint64_t)b->n[k] - (uint64_t)a->n[k]);
    if (!f->has[s]) f->has[s] = 1, f->shift[s] = d;
    else if (f->shift[s] != d) return 0;
  }
  return 1;
}

/* How many of b from j repeat a from i, at most `limit` (0: no limit), the maps started empty. */
static int64_t run_length(Maps *m, const GsInst *a, int64_t na, int64_t i, const GsInst *b,
                          int64_t nb, int64_t j, int64_t limit) {
  for (int s = 0; s < 2; s++) map_clear(&m->reg[s]), map_clear(&m->tile[s]);
  int64_t n = 0;
  while (i + n < na && j + n < nb && (!limit || n < limit) && same_under(m, &a[i + n], &b[j + n]))
    n++;
  return n;
}

/* ---- one pair of queues ---- */

typedef struct {
  uint64_t shape;
  int64_t pos;
} Shaped;

static int shaped_cmp(const void *x, const void *y) {
  const Shaped *p = x, *q = y;
  if (p->shape != q->shape) return p->shape < q->shape ? -1 : 1;
  return (p->pos > q->pos) - (p->pos < q->pos);
}

/* The first entry of idx[0, n) not before (s, pos). */
static size_t shaped_lower(const Shaped *idx, size_t n, uint64_t s, int64_t pos) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (idx[mid].shape < s || (idx[mid].shape == s && idx[mid].pos < pos)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static void pair_count(Maps *m, const GsQueue *qa, const GsQueue *qb, GsRepeats *out) {
  int64_t na = qa->ninsts, nb = qb->ninsts;
  GsInst *a = prog_queue_array(qa), *b = prog_queue_array(qb);
  Shaped *idx = malloc(((size_t)na + 1) * sizeof *idx);
  if (!idx) die("out of memory");
  for (int64_t p = 0; p < na; p++) idx[p] = (Shaped){shape(&m->roles, &a[p]), p};
  qsort(idx, (size_t)na, sizeof *idx, shaped_cmp);
  int64_t i = 0, j = 0;
  while (j < nb) {
    uint64_t s = shape(&m->roles, &b[j]);
    int64_t start = -1;
    size_t k = shaped_lower(idx, (size_t)na, s, i);
    for (int t = 0; t < GS_REPEAT_TRIES && k < (size_t)na && idx[k].shape == s; t++, k++)
      if (run_length(m, a, na, idx[k].pos, b, nb, j, GS_REPEAT_MIN) >= GS_REPEAT_MIN) {
        start = idx[k].pos;
        break;
      }
    if (start < 0) {
      j++;
      continue;
    }
    int64_t n = run_length(m, a, na, start, b, nb, j, 0);
    out->covered += n;
    out->runs++;
    i = start + n;
    j += n;
  }
  free(idx);
  free(a);
  free(b);
}

GsRepeats prog_repeats(const GsProgram *p) {
  GsRepeats r = {0, 0, 0, 0};
  Maps m;
  roles_init(&m.roles);
  for (int s = 0; s < 2; s++) {
    map_alloc(&m.reg[s], 1024), map_alloc(&m.tile[s], 1024);
    m.reg[s].now = m.tile[s].now = 1;
  }
  for (int qi = 0; qi < p->nqueues; qi++) {
    const GsQueue *qb = &p->queues[qi];
    r.insts += qb->ninsts;
    if (qb->cluster == 0) continue;
    r.later += qb->ninsts;
    int qa = prog_find_queue(p, 0, qb->core, qb->index);
    if (qa >= 0 && p->queues[qa].ninsts && qb->ninsts) pair_count(&m, &p->queues[qa], qb, &r);
  }
  for (int s = 0; s < 2; s++) map_free(&m.reg[s]), map_free(&m.tile[s]);
  return r;
}
