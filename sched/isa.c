/* isa.c — static facts from isa.def, dtype names, and building Programs in memory.
 * Everything here is derived from the two X-macro tables (isa.def, GT_DTYPES); nothing is
 * listed twice. */
#include "prog.h"

#include <stdlib.h>
#include <string.h>

static const struct {
  const char *name;
  int bytes;
} dtypes[DT_COUNT] = {
#define X(e, n, b) {n, b},
    GT_DTYPES(X)
#undef X
};

const char *dtype_name(GtDtype t) { return (unsigned)t < DT_COUNT ? dtypes[t].name : "?"; }
int dtype_bytes(GtDtype t) { return (unsigned)t < DT_COUNT ? dtypes[t].bytes : 0; }
int dtype_parse(const char *s, GtDtype *out) {
  for (int i = 0; i < DT_COUNT; i++)
    if (strcmp(s, dtypes[i].name) == 0) {
      *out = (GtDtype)i;
      return 0;
    }
  return -1;
}

static const struct {
  const char *mnemonic;
  GtEngine engine;
  const char *operands;
} isa[I_COUNT] = {
#define ISA(e, m, eng, ops, d) {m, eng, ops},
#define VOP(...)
#include "isa.def"
#undef ISA
#undef VOP
};

static const struct {
  const char *name;
  int inputs;
  int passes[VC_COUNT];
} vops[V_COUNT] = {
#define ISA(...)
#define VOP(e, n, in, s, m, d, t, r, desc) {n, in, {s, m, d, t, r}},
#include "isa.def"
#undef ISA
#undef VOP
};

const char *isa_mnemonic(GtOpcode op) { return op < I_COUNT ? isa[op].mnemonic : "?"; }
GtEngine isa_engine(GtOpcode op) { return op < I_COUNT ? isa[op].engine : E_ANY; }
const char *isa_operands(GtOpcode op) { return op < I_COUNT ? isa[op].operands : ""; }
const char *vop_name(GtVop v) { return v < V_COUNT ? vops[v].name : "?"; }
int vop_inputs(GtVop v) { return v < V_COUNT ? vops[v].inputs : 0; }
int vop_passes(GtVop v, GtVClass c) {
  return v < V_COUNT && (unsigned)c < VC_COUNT ? vops[v].passes[c] : 0;
}

GtProgram *program_new(void) {
  GtProgram *p = calloc(1, sizeof *p);
  if (!p) die("out of memory");
  p->nregions = 1; /* id 0 means "none" */
  p->ntiles = 1;
  return p;
}

void program_free(GtProgram *p) {
  if (!p) return;
  for (int i = 0; i < p->nqueues; i++) vec_free(&p->queues[i].insts);
  free(p->queues);
  if (p->tile_names)
    for (uint32_t i = 0; i < p->ntiles; i++) free(p->tile_names[i]);
  if (p->region_names)
    for (uint32_t i = 0; i < p->nregions; i++) free(p->region_names[i]);
  free(p->tile_names);
  free(p->region_names);
  free(p);
}

/* Linear search: a program has at most a few thousand queues and this runs once per
 * queue switch in an emitter, not per instruction. */
GtQueue *program_queue(GtProgram *p, int cluster, int core, int index) {
  for (int i = 0; i < p->nqueues; i++) {
    GtQueue *q = &p->queues[i];
    if (q->cluster == cluster && q->core == core && q->index == index) return q;
  }
  GtQueue *nq = realloc(p->queues, (size_t)(p->nqueues + 1) * sizeof *nq);
  if (!nq) die("out of memory");
  p->queues = nq;
  GtQueue *q = &p->queues[p->nqueues++];
  memset(q, 0, sizeof *q);
  q->cluster = cluster;
  q->core = core;
  q->index = index;
  vec_init(&q->insts, sizeof(GtInst));
  return q;
}

GtInst *program_emit(GtQueue *q) { return vec_push(&q->insts); }

static char *dup_or_null(const char *s) {
  if (!s) return NULL;
  char *d = strdup(s);
  if (!d) die("out of memory");
  return d;
}

static uint32_t add_named(char ***names, uint32_t *count, const char *name) {
  uint32_t id = (*count)++;
  /* grow by powers of two: realloc when the count crosses one */
  if ((id & (id - 1)) == 0 || id == 1) {
    uint32_t cap = id < 2 ? 2 : id * 2;
    char **nn = realloc(*names, cap * sizeof *nn);
    if (!nn) die("out of memory");
    for (uint32_t i = (*names ? id : 0); i < cap; i++) nn[i] = NULL;
    *names = nn;
  }
  (*names)[id] = dup_or_null(name);
  return id;
}

uint32_t program_new_region(GtProgram *p, const char *name) {
  return add_named(&p->region_names, &p->nregions, name);
}

uint32_t program_new_tile(GtProgram *p, const char *name) {
  return add_named(&p->tile_names, &p->ntiles, name);
}
