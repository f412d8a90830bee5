/* ivl.h — the allocator of the bytes [lo, cap) of one buffer (DDR, a cluster's GB, a core's
 * LB): blocks with lifetimes, first fit, a high-water mark. One implementation, two ways to
 * use it:
 *
 *   Lifetimes known in advance (the planners): each block lives over a range of steps [t0, t1]
 *   (kernel indices, inclusive), and two blocks may share bytes only when their step ranges are
 *   disjoint (ivl_alloc, ivl_place). Users: astitch's GB tensors (lower_astitch.c,
 *   lower_place_astitch), GraphTurbo's LB/GB slices, staged weights, drains and loads
 * (lower_gt.c).
 *
 *   Program order (the emitter): a block taken with ivl_take is alive at every step until
 *   ivl_remove frees it, so first fit sees exactly the blocks taken and not yet freed. With no
 *   free in between, bottom-up first fit puts each block at the aligned end of the one before
 *   (the layout of a bump pointer); after frees it reuses the lowest gap that holds the block.
 *   Users: DDR (emit.c, emit_slices.c: weights, graph inputs and outputs for the whole
 *   run, each iteration's intermediates until its end) and each core's tile regions
 *   (emit.c, emit_lb_region: until the next kernel's start).
 *
 * Policy: first fit among the blocks alive at some step of [t0, t1], in address order from the
 * bottom (IVL_BOTTOM_UP: the lowest offset that fits) or from the top (IVL_TOP_DOWN: the
 * highest). Offsets are multiples of `align` and block sizes are rounded up to it (a size of 0
 * counts as 1). Top-down keeps the low end of a core's LB free in one piece for a kernel's tile
 * buffers; ivl_lowest says how much of it is free at a step. n is small (hundreds of blocks
 * alive at once), so a call is quadratic in them.
 *
 * Peak: ivl_peak is the high-water mark, the end of the highest block placed since ivl_init
 * (removed blocks included): [lo, peak) held every block the buffer ever held, so it is the
 * size the buffer must have (the program's DDR footprint, GsEmitTally.ddr_peak_bytes). The peak
 * sum of the bytes alive at once is not kept: it depends on the lifetimes only, not on the
 * layout, and no user needs it (it bounds the high-water mark from below; the difference is
 * fragmentation).
 */
#ifndef GS_IVL_H
#define GS_IVL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { IVL_BOTTOM_UP, IVL_TOP_DOWN } GsIvlPolicy;

typedef struct {
  int64_t off, bytes;
  int t0, t1;               /* lifetime in steps, inclusive */
  int id;                   /* the caller's name for the block */
} GsIvlBlock;

typedef struct {
  int64_t lo, cap;          /* blocks lie in [lo, cap) */
  int64_t align;
  GsIvlPolicy policy;       /* may change between calls (one buffer, blocks of two kinds) */
  int64_t peak;             /* high-water mark (ivl_peak) */
  int n, room;
  GsIvlBlock *b;            /* the blocks placed and not removed, in placement order (heap) */
} GsIvl;

void ivl_init(GsIvl *v, int64_t lo, int64_t cap, int64_t align, GsIvlPolicy policy);
/* Frees the blocks' storage: v holds no block after it; ivl_init may start it again. */
void ivl_free(GsIvl *v);
/* Offset of a new block of `bytes` alive over steps [t0, t1], named id; -1 when no gap holds
 * it (nothing is placed then). */
int64_t ivl_alloc(GsIvl *v, int64_t bytes, int t0, int t1, int id);
/* Puts a block at a known offset (one ivl_alloc gave before, replayed into a new allocator);
 * it must fit (an internal error otherwise). */
void ivl_place(GsIvl *v, int64_t off, int64_t bytes, int t0, int t1, int id);
/* Program order: the offset of a new block of `bytes` named id, alive at every step until
 * ivl_remove (-1 when no gap holds it). */
int64_t ivl_take(GsIvl *v, int64_t bytes, int id);
/* Removes the first-placed block named id, freeing its bytes at every step (the peak keeps
 * it); 0, or -1 when there is none. */
int ivl_remove(GsIvl *v, int id);
/* The high-water mark: the highest end (offset + rounded size) of any block placed since
 * ivl_init, lo when none. */
int64_t ivl_peak(const GsIvl *v);
/* The lowest offset of any block alive at step t (cap when none): [lo, that) is free at t. */
int64_t ivl_lowest(const GsIvl *v, int t);

#ifdef __cplusplus
}
#endif
#endif
