/* prog.c — the Program in memory (prog.h): queues (their encoded instructions: prog_code.c), region and
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

static void names_free(GsNameMap *m) {
  for (size_t i = 0; i < m->cap; i++) free(m->names[i]);
  free(m->ids);
  free(m->names);
}

void prog_free(GsProgram *p) {
  if (!p) return;
  prog_copy_free(p);
  for (int i = 0; i < p->nqueues; i++) prog_queue_code_free(&p->queues[i]);
  free(p->queues);
  names_free(&p->names[0]);
  names_free(&p->names[1]);
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
  q->run = prog_check_takes(p->nqueues - 1) ? p->run : NULL; /* prog_check_attach */
  if (q->run) prog_queue_code_begin(q); /* the check's thread finds the code by its place */
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
  for (int i = 0; i < p->nqueues; i++) n += p->queues[i].ninsts;
  return n;
}

/* ---- names: open addressing on id + 1, linear probing, at most half full ---- */

static size_t names_slot(const GsNameMap *m, uint32_t id) {
  size_t i = (size_t)(id * 2654435761u) & (m->cap - 1);
  while (m->ids[i] && m->ids[i] != id + 1) i = (i + 1) & (m->cap - 1);
  return i;
}

static void names_grow(GsNameMap *m) {
  GsNameMap old = *m;
  m->cap = old.cap ? 2 * old.cap : 16;
  m->ids = calloc(m->cap, sizeof *m->ids);
  m->names = calloc(m->cap, sizeof *m->names);
  if (!m->ids || !m->names) die("out of memory");
  for (size_t i = 0; i < old.cap; i++)
    if (old.ids[i]) {
      size_t j = names_slot(m, old.ids[i] - 1);
      m->ids[j] = old.ids[i];
      m->names[j] = old.names[i];
    }
  free(old.ids);
  free(old.names);
}

const char *prog_name(const GsProgram *p, int is_tile, uint32_t id) {
  const GsNameMap *m = &p->names[is_tile ? 1 : 0];
  if (!m->n) return NULL;
  size_t i = names_slot(m, id);
  return m->ids[i] ? m->names[i] : NULL;
}

/* Removal keeps the probe chains whole: the entries after the hole move back if their home
 * slot allows (the classic backward-shift deletion). */
static void names_remove(GsNameMap *m, size_t i) {
  free(m->names[i]);
  m->ids[i] = 0;
  m->names[i] = NULL;
  m->n--;
  for (size_t j = (i + 1) & (m->cap - 1); m->ids[j]; j = (j + 1) & (m->cap - 1)) {
    size_t home = (size_t)((m->ids[j] - 1) * 2654435761u) & (m->cap - 1);
    if (((j - home) & (m->cap - 1)) >= ((j - i) & (m->cap - 1))) {
      m->ids[i] = m->ids[j];
      m->names[i] = m->names[j];
      m->ids[j] = 0;
      m->names[j] = NULL;
      i = j;
    }
  }
}

void prog_set_name(GsProgram *p, int is_tile, uint32_t id, const char *name) {
  GsNameMap *m = &p->names[is_tile ? 1 : 0];
  gs_assert(id < (is_tile ? p->ntiles : p->nregions));
  if (!name) {
    if (m->n) {
      size_t i = names_slot(m, id);
      if (m->ids[i]) names_remove(m, i);
    }
    return;
  }
  if (2 * (m->n + 1) > m->cap) names_grow(m);
  size_t i = names_slot(m, id);
  char *d = strdup(name);
  if (!d) die("out of memory");
  if (m->ids[i]) free(m->names[i]);
  else m->n++;
  m->ids[i] = id + 1;
  m->names[i] = d;
}

void prog_reserve_ids(GsProgram *p, uint32_t nregions, uint32_t ntiles) {
  if (nregions > p->nregions) p->nregions = nregions;
  if (ntiles > p->ntiles) p->ntiles = ntiles;
}

uint32_t prog_new_region(GsProgram *p, const char *name) {
  uint32_t id = p->nregions++;
  if (name) prog_set_name(p, 0, id, name);
  return id;
}

uint32_t prog_new_tile(GsProgram *p, const char *name) {
  uint32_t id = p->ntiles++;
  if (name) prog_set_name(p, 1, id, name);
  return id;
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
