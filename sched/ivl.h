/* ivl.h — an interval allocator over the bytes [lo, cap) of one buffer (a core's LB, a
 * cluster's GB) for blocks whose lifetimes are known in advance: each block lives over a range
 * of steps [t0, t1] (kernel indices, inclusive), and two blocks may share bytes only when their
 * step ranges are disjoint. The lowerings place the tensors they keep on chip with it
 * (astitch's GB tensors in lower_common.c, GraphTurbo's LB/GB tensors in lower_gt.c).
 *
 * Policy: first fit among the blocks alive at some step of [t0, t1], in address order from the
 * bottom (IVL_BOTTOM_UP: the lowest offset that fits) or from the top (IVL_TOP_DOWN: the
 * highest). Block sizes are rounded up to `align`. Top-down keeps the low end of a core's LB
 * free in one piece for a kernel's tile buffers; ivl_lowest says how much of it is free at a
 * step. n is small (hundreds of blocks alive at once), so a call is quadratic in them.
 */
#ifndef GT_IVL_H
#define GT_IVL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { IVL_BOTTOM_UP, IVL_TOP_DOWN } GtIvlPolicy;

typedef struct {
  int64_t off, bytes;
  int t0, t1;               /* lifetime in steps, inclusive */
  int id;                   /* the caller's name for the block */
} GtIvlBlock;

typedef struct {
  int64_t lo, cap;          /* blocks lie in [lo, cap) */
  int64_t align;
  GtIvlPolicy policy;       /* may change between calls (one buffer, blocks of two kinds) */
  int n, room;
  GtIvlBlock *b;            /* every block ever placed, in placement order (heap) */
} GtIvl;

void ivl_init(GtIvl *v, int64_t lo, int64_t cap, int64_t align, GtIvlPolicy policy);
void ivl_free(GtIvl *v);
/* Offset of a new block of `bytes` alive over steps [t0, t1], named id; -1 when no gap holds
 * it (nothing is placed then). */
int64_t ivl_alloc(GtIvl *v, int64_t bytes, int t0, int t1, int id);
/* Puts a block at a known offset (one ivl_alloc gave before, replayed into a new allocator);
 * it must fit (an internal error otherwise). */
void ivl_place(GtIvl *v, int64_t off, int64_t bytes, int t0, int t1, int id);
/* Removes the block named id (as if it had never been placed); 0, or -1 when there is none. */
int ivl_remove(GtIvl *v, int id);
/* The lowest offset of any block alive at step t (cap when none): [lo, that) is free at t. */
int64_t ivl_lowest(const GtIvl *v, int t);

#ifdef __cplusplus
}
#endif
#endif
