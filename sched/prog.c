/* prog.c — the Program in memory (prog.h): queues and their instruction vectors, region and
 * tile ids with their optional names, and loading and saving a Program by file extension
 * (.gtasm text: gtasm.c; .gtp binary: gtp.c). Schedulers build Programs with prog_queue,
 * prog_emit, prog_new_region and prog_new_tile; the simulator only reads them.
 */
#include "prog.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

GsProgram *prog_new(void) {
  GsProgram *p = calloc(1, sizeof *p);
  if (!p) die("out of memory");
  p->nregions = 1; /* id 0 means "none" */
  p->ntiles = 1;
  return p;
}

void prog_free(GsProgram *p) {
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
GsQueue *prog_queue(GsProgram *p, int cluster, int core, int index) {
  for (int i = 0; i < p->nqueues; i++) {
    GsQueue *q = &p->queues[i];
    if (q->cluster == cluster && q->core == core && q->index == index) return q;
  }
  GsQueue *nq = realloc(p->queues, (size_t)(p->nqueues + 1) * sizeof *nq);
  if (!nq) die("out of memory");
  p->queues = nq;
  GsQueue *q = &p->queues[p->nqueues++];
  memset(q, 0, sizeof *q);
  q->cluster = cluster;
  q->core = core;
  q->index = index;
  vec_init(&q->insts, sizeof(GsInst));
  return q;
}

int prog_find_queue(const GsProgram *p, int cluster, int core, int index) {
  for (int i = 0; i < p->nqueues; i++) {
    const GsQueue *q = &p->queues[i];
    if (q->cluster == cluster && q->core == core && q->index == index) return i;
  }
  return -1;
}

int64_t prog_ninsts(const GsProgram *p) {
  int64_t n = 0;
  for (int i = 0; i < p->nqueues; i++) n += (int64_t)p->queues[i].insts.len;
  return n;
}

GsInst *prog_emit(GsQueue *q) { return vec_push(&q->insts); }

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

/* Names arrays keep the capacity add_named relies on: the smallest power of two >= count
 * (at least 2). */
static void grow_named(char ***names, uint32_t *count, uint32_t want) {
  if (want < *count) want = *count;
  if (*names && want == *count) return;
  size_t cap = 2;
  while (cap < want) cap *= 2;
  char **nn = realloc(*names, cap * sizeof *nn);
  if (!nn) die("out of memory");
  for (size_t i = *names ? *count : 0; i < cap; i++) nn[i] = NULL;
  *names = nn;
  *count = want;
}

void prog_reserve_ids(GsProgram *p, uint32_t nregions, uint32_t ntiles) {
  grow_named(&p->region_names, &p->nregions, nregions);
  grow_named(&p->tile_names, &p->ntiles, ntiles);
}

void prog_set_name(GsProgram *p, int is_tile, uint32_t id, const char *name) {
  char ***names = is_tile ? &p->tile_names : &p->region_names;
  uint32_t *count = is_tile ? &p->ntiles : &p->nregions;
  gs_assert(id < *count);
  grow_named(names, count, *count); /* allocates the array if it does not exist yet */
  free((*names)[id]);
  (*names)[id] = dup_or_null(name);
}

uint32_t prog_new_region(GsProgram *p, const char *name) {
  return add_named(&p->region_names, &p->nregions, name);
}

uint32_t prog_new_tile(GsProgram *p, const char *name) {
  return add_named(&p->tile_names, &p->ntiles, name);
}

/* ---- load and save, by file extension ---- */

GsProgram *prog_load(const char *path, const GsArch *a, GsDiag *d) {
  if (util_has_ext(path, ".gtp")) return gtp_read(path, d);
  if (!util_has_ext(path, ".gtasm")) {
    diag_error(d, path, 0, 0, NULL, "unknown program file type (expected .gtasm or .gtp)");
    return NULL;
  }
  size_t len;
  char *text = util_read_file(path, &len);
  if (!text) {
    diag_error(d, path, 0, 0, NULL, "cannot read: %s", strerror(errno));
    return NULL;
  }
  size_t nul = strlen(text);
  if (nul != len) { /* the parser stops at a NUL: say so instead of ignoring the rest */
    int line = 1, col = 1;
    for (size_t i = 0; i < nul; i++) col = text[i] == '\n' ? (line++, 1) : col + 1;
    diag_error(d, path, line, col, text, "NUL byte in a text file");
    free(text);
    return NULL;
  }
  GsProgram *p = gtasm_parse(path, text, a, d);
  free(text);
  return p;
}

int prog_save(const char *path, const GsArch *a, const GsProgram *p) {
  if (util_has_ext(path, ".gtp")) return gtp_write(path, p);
  if (!util_has_ext(path, ".gtasm")) {
    errno = EINVAL;
    return -1;
  }
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  if (!m) return -1;
  int r = gtasm_write(m, a, p);
  if (fclose(m) != 0) r = -1;
  if (r == 0) r = util_write_file_atomic(path, buf, len);
  free(buf);
  return r;
}
