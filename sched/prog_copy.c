/* prog_copy.c — copied runs (prog.h, prog_copy_run): a queue holding, among its own
 * instructions, runs of another queue's instructions with their ids moved by a map.
 *
 * Why: a later cluster runs the streams of cluster 0 over other samples, with other regions
 * and tiles of its own; held as runs over cluster 0's records, its instructions are neither
 * encoded nor kept twice (docs/speed.md, "The speed targets").
 *
 * Contract:
 * - A run is (at, n, from, source, map): the queue's instructions [at, at + n) are the
 *   source's [from, from + n) under the map. Runs are appended in queue order, take the
 *   source's instructions in order, and all of a queue's runs read one source, which holds no
 *   runs itself; so a cursor reads a run's source with one reader of its own (GsCursor.src)
 *   that only moves forward, decoding the source's records as a cursor of the source would.
 * - The source's records are read when a copy is read, never before: what holds is the
 *   source as it is then (its staged last instruction included). Readers come after the
 *   emission (prog.h: no reading while a check's thread encodes).
 * - Nothing here checks a map against the program: prog_check does (prog_check.c,
 *   check_copies), as it checks every other operand a scheduler wrote.
 */
#include "prog.h"

#include <stdlib.h>
#include <string.h>

static GsIdSpan *spans_dup(const GsIdSpan *s, int n) {
  if (n <= 0) return NULL;
  GsIdSpan *d = malloc((size_t)n * sizeof *d);
  if (!d) die("out of memory");
  memcpy(d, s, (size_t)n * sizeof *d);
  return d;
}

const GsIdMap *prog_new_map(GsProgram *p, int cluster, const GsIdSpan *regs, int nregs,
                            const GsIdSpan *tiles, int ntiles) {
  GsIdMap *m = malloc(sizeof *m);
  if (!m) die("out of memory");
  m->cluster = cluster;
  m->nregs = nregs > 0 ? nregs : 0;
  m->ntiles = ntiles > 0 ? ntiles : 0;
  m->regs = spans_dup(regs, nregs);
  m->tiles = spans_dup(tiles, ntiles);
  if (p->nmaps == p->mapscap) {
    int cap = p->mapscap ? 2 * p->mapscap : 16;
    GsIdMap **nm = realloc(p->maps, (size_t)cap * sizeof *nm);
    if (!nm) die("out of memory");
    p->maps = nm;
    p->mapscap = cap;
  }
  p->maps[p->nmaps++] = m;
  return m;
}

void prog_copy_run(GsProgram *p, int qi, int src_qi, int64_t from, int64_t n, const GsIdMap *m) {
  gs_assert(qi >= 0 && qi < p->nqueues && src_qi >= 0 && src_qi < p->nqueues && qi != src_qi);
  GsQueue *q = &p->queues[qi];
  const GsQueue *src = &p->queues[src_qi];
  gs_assert(n > 0 && from >= 0 && from + n <= src->ninsts && !src->copies && src->code && m);
  GsQueueCopies *cp = q->copies;
  if (!cp) {
    cp = q->copies = calloc(1, sizeof *cp);
    if (!cp) die("out of memory");
  }
  if (cp->n > 0) {
    const GsCopyRun *last = &cp->run[cp->n - 1];
    gs_assert(last->src_qi == src_qi && from >= last->from + last->n);
  }
  if (cp->n == cp->cap) {
    int cap = cp->cap ? 2 * cp->cap : 8;
    GsCopyRun *nr = realloc(cp->run, (size_t)cap * sizeof *nr);
    if (!nr) die("out of memory");
    cp->run = nr;
    cp->cap = cap;
  }
  cp->run[cp->n++] = (GsCopyRun){.at = q->ninsts, .n = n, .from = from, .src_qi = src_qi,
                               .src = src->code, .map = m};
  q->ninsts += n;
  q->ncopied += n;
}

/* The span of s[0..n) holding id, or NULL. A map has a few spans (about four in the zoo's
 * programs), sorted by lo: the one that may hold id is the last starting at or below it, and
 * most ids are the core loop's, the last span. */
static const GsIdSpan *span_of(const GsIdSpan *s, int n, uint32_t id) {
  int k = n - 1;
  if (n > 8) { /* a kernel of many tensors: the last span starting at or below id */
    int lo = 0, hi = n;
    while (lo < hi) {
      int mid = (lo + hi) / 2;
      if (s[mid].lo <= id) lo = mid + 1;
      else hi = mid;
    }
    k = lo - 1;
  } else {
    while (k >= 0 && s[k].lo > id) k--;
  }
  return k >= 0 && id < s[k].hi ? &s[k] : NULL;
}

/* The n[] index of the offset into region operand k of in, -1: none (isa.def). */
static int offset_slot(const GsInst *in, int k) {
  if (in->op == I_MOV) return k == 0 ? 1 : k == 1 ? 2 : -1; /* dst_off, src_off */
  if (in->op == I_VEC) return k == 0 ? 4 : -1;               /* dst_off */
  return -1;
}

void prog_map_apply(const GsIdMap *m, GsInst *in) {
  for (int k = 0; k < 3; k++) {
    const GsIdSpan *s = in->r[k] ? span_of(m->regs, m->nregs, in->r[k]) : NULL;
    if (!s) continue;
    in->r[k] = (uint32_t)((int64_t)in->r[k] + s->delta);
    int at = s->shift ? offset_slot(in, k) : -1;
    if (at >= 0) in->n[at] += s->shift;
  }
  for (int k = 0; k < 3; k++) {
    const GsIdSpan *s = in->t[k] ? span_of(m->tiles, m->ntiles, in->t[k]) : NULL;
    if (s) in->t[k] = (uint32_t)((int64_t)in->t[k] + s->delta);
  }
  if (in->op == I_ALLOC) inst_alloc_set_cluster(in, m->cluster);
}

void prog_copy_each(const GsCopyRun *r, void (*f)(void *ctx, const GsInst *in, int64_t i),
                    void *ctx) {
  GsCursor *s = malloc(sizeof *s);
  if (!s) die("out of memory");
  prog_code_read_begin(s, r->src);
  for (int64_t i = r->from; i < r->from + r->n; i++) {
    GsInst in = *prog_code_read(s, r->src, i);
    prog_map_apply(r->map, &in);
    f(ctx, &in, i);
  }
  free(s);
}

size_t prog_copy_bytes(const GsProgram *p) {
  size_t n = 0;
  for (int i = 0; i < p->nmaps; i++)
    n += sizeof *p->maps[i] + (size_t)(p->maps[i]->nregs + p->maps[i]->ntiles) * sizeof(GsIdSpan);
  for (int i = 0; i < p->nqueues; i++) {
    const GsQueueCopies *cp = p->queues[i].copies;
    if (cp) n += sizeof *cp + (size_t)cp->cap * sizeof *cp->run;
  }
  return n;
}

void prog_copy_free(GsProgram *p) {
  for (int i = 0; i < p->nmaps; i++) {
    free(p->maps[i]->regs);
    free(p->maps[i]->tiles);
    free(p->maps[i]);
  }
  free(p->maps);
  for (int i = 0; i < p->nqueues; i++) {
    GsQueueCopies *cp = p->queues[i].copies;
    if (!cp) continue;
    free(cp->run);
    free(cp);
  }
}
