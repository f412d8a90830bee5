/* lower_wkeep.c — weights kept in the GB across iterations (tvm, astitch): a run of several
 * iterations repeats every kernel, and a kernel whose weights go through its cluster's GB
 * (GsKernel.w_via_gb) stages them DDR -> GB again in each one. A deployed per-layer compiler
 * keeps the weights of a layer on chip when the buffer holds them next to what each iteration
 * needs; so does this plan (docs/schedulers.md, "Weights kept in the GB across iterations").
 *
 * Contract of lower_fill_weights_kept(l):
 *   requires: the plan after tiling (kernels' w_via_gb, w_chunks, w_gb_off; tvm/astitch
 *             placement) and l->iterations.
 *   decides (first call, l->w_kept NULL): when the run has more than one iteration,
 *             l->w_kept[op] for every op: the offset, in each cluster's GB, of the block that
 *             holds the op's weights from the first kernel that stages them to the end of the
 *             run, or -1 (staged per kernel, as before). Candidates are the kernels that stage
 *             their weights whole at the weight area's bottom (w_via_gb, no chunks, no planned
 *             offset). Greedy by DDR bytes saved per GB byte (the kernel's clusters that stage
 *             it x (iterations - 1)), then by bytes (larger first), then by kernel order; a
 *             candidate is kept when its block fits:
 *               - at the top of the weight area, [w0, w1) of lower_gb_weight_area, above the
 *                 staging room [w0, w0 + the largest weights still staged per kernel), or else
 *               - below w0, above every GB tensor of the plan (astitch's kernel outputs).
 *             Blocks are 64-byte aligned, disjoint, and never overlap the per-kernel staging
 *             or a GB tensor at any time: nothing overflows the GB.
 *   keeps (later calls: a re-plan of a smaller last iteration): the blocks stay where they are
 *             (the weights are already there); a kept kernel reads them through the GB
 *             (w_via_gb = 1); a kernel staged per kernel whose weights no longer fit the
 *             staging room reads them from DDR (w_via_gb = 0). lower_place_astitch keeps that
 *             re-plan's GB tensors below the kept blocks (lower_weights_kept_floor).
 * The emitter sees only "these weights live in the GB at OFF from the first staging on"
 * (emit.c, weights_begin); lower_check (tiling) checks the blocks.
 */
#include "lower.h"

#include <stdlib.h>

static int64_t align64(int64_t x) { return (x + 63) / 64 * 64; }

/* Kernel k stages its weights whole at the bottom of the weight area (the staging a kept block
 * replaces). */
static int stages_whole(const GsLowered *l, const GsKernel *k) {
  return k->w_via_gb && k->w_chunks == 0 && k->w_gb_off < 0 &&
         lower_op_kind(l->graph, k->head) == LK_GEMM &&
         lower_op_weight_bytes(l->graph, k->head) > 0;
}

int64_t lower_gb_tensor_top(const GsLowered *l) {
  const GsGraph *g = l->graph;
  int64_t top = 0;
  for (int t = 0; t < g->ntensors; t++)
    if (l->place[t].level == LVL_GB && l->place[t].alias_of < 0)
      top = max64(top, l->place[t].gb_offset + lower_gb_tensor_bytes(l, t));
  return align64(top);
}

int64_t lower_weights_kept_floor(const GsLowered *l) {
  int64_t lo = INT64_MAX;
  for (int op = 0; l->w_kept && op < l->graph->nops; op++)
    if (l->w_kept[op] >= 0) lo = min64(lo, l->w_kept[op]);
  return lo;
}

typedef struct {
  int ki;
  int64_t bytes;     /* the block: the weights rounded up to 64 */
  double gain;       /* DDR bytes saved per GB byte */
} Cand;

static int cand_cmp(const void *pa, const void *pb) {
  const Cand *a = pa, *b = pb;
  if (a->gain != b->gain) return a->gain > b->gain ? -1 : 1;
  if (a->bytes != b->bytes) return a->bytes > b->bytes ? -1 : 1;
  return a->ki - b->ki;
}

/* The largest block among candidates cs[0..n) not kept, cs[skip] left out. */
static int64_t largest_staged(const Cand *cs, const int *kept, int n, int skip) {
  int64_t m = 0;
  for (int i = 0; i < n; i++)
    if (i != skip && !kept[i]) m = max64(m, cs[i].bytes);
  return m;
}

/* The first plan: the greedy choice of the contract above. */
static void decide(GsLowered *l) {
  const GsGraph *g = l->graph;
  Cand *cs = calloc((size_t)l->nkernels + 1, sizeof *cs);
  int *kept = calloc((size_t)l->nkernels + 1, sizeof *kept);
  if (!cs || !kept) die("out of memory");
  int n = 0;
  for (int ki = 0; ki < l->nkernels; ki++) {
    const GsKernel *k = &l->kernels[ki];
    if (!stages_whole(l, k)) continue;
    int clusters = k->split_clusters ? l->arch->nclusters : 1;
    cs[n++] = (Cand){ki, align64(lower_op_weight_bytes(g, k->head)),
                     (double)clusters * (l->iterations - 1)};
  }
  qsort(cs, (size_t)n, sizeof *cs, cand_cmp);
  int64_t w0, w1;
  lower_gb_weight_area(l, &w0, &w1);
  int64_t top = w1, bot = lower_gb_tensor_top(l); /* the next block ends at top / starts at bot */
  for (int i = 0; i < n; i++) {
    int64_t b = cs[i].bytes, off;
    if (top - b >= w0 + largest_staged(cs, kept, n, i)) {
      top -= b;
      off = top;
    } else if (bot + b <= w0) {
      off = bot;
      bot += b;
    } else {
      continue;
    }
    kept[i] = 1;
    l->w_kept[l->kernels[cs[i].ki].head] = off;
  }
  free(cs);
  free(kept);
}

/* A re-plan: the kept blocks stay; kernels read kept weights through the GB, and stage the
 * others only where the staging room below the lowest kept block above w0 holds them. */
static void keep(GsLowered *l) {
  const GsGraph *g = l->graph;
  int64_t w0, w1, room;
  lower_gb_weight_area(l, &w0, &w1);
  room = w1 - w0;
  for (int op = 0; op < g->nops; op++) {
    int64_t off = l->w_kept[op];
    if (off < 0) continue;
    if (off + lower_op_weight_bytes(g, op) > w0) room = min64(room, max64(off - w0, 0));
  }
  for (int ki = 0; ki < l->nkernels; ki++) {
    GsKernel *k = &l->kernels[ki];
    if (lower_op_weight_bytes(g, k->head) <= 0 || lower_op_kind(g, k->head) != LK_GEMM) continue;
    if (l->w_kept[k->head] >= 0) k->w_via_gb = 1;
    else if (stages_whole(l, k) && lower_op_weight_bytes(g, k->head) > room) k->w_via_gb = 0;
  }
}

void lower_fill_weights_kept(GsLowered *l) {
  if (l->w_kept) {
    keep(l);
    return;
  }
  if (l->iterations <= 1 || l->arch->gb_bytes <= 0) return;
  l->w_kept = malloc(sizeof(int64_t) * (size_t)l->graph->nops);
  if (!l->w_kept) die("out of memory");
  for (int op = 0; op < l->graph->nops; op++) l->w_kept[op] = -1;
  decide(l);
}
