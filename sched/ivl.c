/* ivl.c — the allocator (ivl.h): first fit against the blocks alive at some step of the new
 * block's range; a taken block (program order) is one alive at every step. */
#include "ivl.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

void ivl_init(GsIvl *v, int64_t lo, int64_t cap, int64_t align, GsIvlPolicy policy) {
  memset(v, 0, sizeof *v);
  v->lo = lo;
  v->cap = cap;
  v->align = align > 0 ? align : 1;
  v->policy = policy;
  v->peak = lo;
}

void ivl_free(GsIvl *v) {
  free(v->b);
  v->b = NULL;
  v->n = v->room = 0;
}

static int fits(const GsIvlBlock *c, int nc, int64_t off, int64_t bytes) {
  for (int i = 0; i < nc; i++)
    if (off < c[i].off + c[i].bytes && c[i].off < off + bytes) return 0;
  return 1;
}

static void push(GsIvl *v, GsIvlBlock b) {
  if (v->n == v->room) {
    v->room = v->room ? 2 * v->room : 16;
    v->b = realloc(v->b, sizeof(GsIvlBlock) * (size_t)v->room);
    if (!v->b) die("out of memory");
  }
  v->b[v->n++] = b;
  v->peak = max64(v->peak, b.off + b.bytes);
}

/* Candidate offsets: the buffer's ends and the edges of the blocks alive over [t0, t1]; the
 * policy takes the lowest (bottom-up) or highest (top-down) one where the block fits. */
int64_t ivl_alloc(GsIvl *v, int64_t bytes, int t0, int t1, int id) {
  bytes = ceil_div64(bytes > 0 ? bytes : 1, v->align) * v->align;
  GsIvlBlock *c = malloc(sizeof(GsIvlBlock) * (size_t)(v->n + 1));
  if (!c) die("out of memory");
  int nc = 0;
  for (int i = 0; i < v->n; i++)
    if (v->b[i].t0 <= t1 && t0 <= v->b[i].t1) c[nc++] = v->b[i];
  int up = v->policy == IVL_BOTTOM_UP;
  int64_t best = -1;
  for (int i = -1; i < nc; i++) {
    int64_t off;
    if (up) off = ceil_div64(i < 0 ? v->lo : c[i].off + c[i].bytes, v->align) * v->align;
    else off = ((i < 0 ? v->cap : c[i].off) - bytes) / v->align * v->align;
    if (off < v->lo || off + bytes > v->cap || !fits(c, nc, off, bytes)) continue;
    if (best < 0 || (up ? off < best : off > best)) best = off;
  }
  free(c);
  if (best < 0) return -1;
  push(v, (GsIvlBlock){best, bytes, t0, t1, id});
  return best;
}

int64_t ivl_take(GsIvl *v, int64_t bytes, int id) {
  return ivl_alloc(v, bytes, INT_MIN, INT_MAX, id);
}

void ivl_place(GsIvl *v, int64_t off, int64_t bytes, int t0, int t1, int id) {
  bytes = ceil_div64(bytes > 0 ? bytes : 1, v->align) * v->align;
  gs_assert(off >= v->lo && off + bytes <= v->cap && off % v->align == 0);
  for (int i = 0; i < v->n; i++)
    gs_assert(!(v->b[i].t0 <= t1 && t0 <= v->b[i].t1 && off < v->b[i].off + v->b[i].bytes &&
                v->b[i].off < off + bytes));
  push(v, (GsIvlBlock){off, bytes, t0, t1, id});
}

int ivl_remove(GsIvl *v, int id) {
  for (int i = 0; i < v->n; i++)
    if (v->b[i].id == id) {
      memmove(&v->b[i], &v->b[i + 1], sizeof(GsIvlBlock) * (size_t)(v->n - i - 1));
      v->n--;
      return 0;
    }
  return -1;
}

int64_t ivl_lowest(const GsIvl *v, int t) {
  int64_t low = v->cap;
  for (int i = 0; i < v->n; i++)
    if (v->b[i].t0 <= t && t <= v->b[i].t1) low = min64(low, v->b[i].off);
  return low;
}

int64_t ivl_peak(const GsIvl *v) { return v->peak; }
