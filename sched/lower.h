/* lower.h — lowering a DNN graph to an instruction Program under three strategies: the
 * GraphTurbo paper's two baselines, `tvm` (a kernel per layer, everything through DDR) and
 * `astitch` (memory-intensive ops stitched into kernels of their own, compute-intensive ops
 * alone; tensors between kernels in GB where they fit, else spilled to DDR), and
 * `graphturbo` (the schedule's sub-graph instances as layer kernels whose outputs stay in
 * LB/GB, lower_gt.c; docs/graphturbo.md).
 *
 * Pipeline (lower_run in lower_common.c), one call per line:
 *   1. lower_group_kernels_tvm / _astitch   ops -> kernels (head op + fused/stitched tail)
 *   2. lower_fill_kernel_units              which core kind and units run each kernel
 *   3. lower_fill_placement                 where every kernel output lives (DDR, GB)
 *   4. lower_fill_tiling                    per-cluster/per-core partition, tile sizes;
 *      lower_fill_weights_kept              with several iterations: the weights kept in the
 *                                           GB across them (lower_wkeep.c)
 *   5. emit_iteration (emit.h)              per-queue instruction streams (emit.c,
 *                                           emit_tiles.c)
 * graphturbo replaces steps 1-4 by gt_plan (lower_gt.c), which calls 2-4 itself.
 * Steps 1–4 only decide (they write the plan); step 5 is the only one that writes the Program,
 * and it does not write the plan (its counts go to l->tally).
 * After every step the checker (lower_check.c) verifies the step's invariants; a violation is
 * a scheduler bug (exit 3). `--dump-after STEP` prints the plan after a step (lower_dump.c).
 * docs/schedulers.md describes every decision and the report's columns.
 *
 * Ids: kernels are numbered in execution order; a kernel's ops are graph op ids in topological
 * order (head first). The plan lives in one GsArena per lowering; the emitter has its own.
 */
#ifndef GS_LOWER_H
#define GS_LOWER_H

#include <stdint.h>
#include <stdio.h>

#include "arch.h"
#include "emit.h"
#include "graph.h"
#include "gt.h"
#include "prog.h"
#include "util.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { SCHED_TVM, SCHED_ASTITCH, SCHED_GRAPHTURBO, SCHED_COUNT } GsSchedKind;
const char *lower_sched_name(GsSchedKind k);
int lower_sched_parse(const char *s, GsSchedKind *out); /* 0 ok, -1 unknown */

/* How an op becomes instructions (lower_ops.c). */
typedef enum {
  LK_GEMM,    /* conv (groups < channels), dense, matmul: gemm on a matrix unit */
  LK_VEC,     /* elementwise, norms, softmax, pooling, depthwise conv, interaction, transpose */
  LK_COPY,    /* concat, split: DMA copies through the local buffer, no compute */
  LK_GATHER,  /* embedding: DMA row gathers (+ a vector sum when bag > 1) */
  LK_ALIAS    /* reshape: no data movement, the output aliases the input's storage */
} GsLowerKind;

/* Memory-intensive ops (the astitch classification): elementwise, normalisation, softmax,
 * reductions, pooling. Compute-intensive: conv, dense, matmul, interaction. */
int lower_op_is_memory_intensive(GsOpKind k);
/* Elementwise ops that tvm fuses into an anchor's tail (relu.., batchnorm, add/sub/mul/div). */
int lower_op_is_tvm_tail(GsOpKind k);
GsLowerKind lower_op_kind(const GsGraph *g, int op);

typedef enum { LVL_NONE = -1 } GsLevelExtra;

/* A kernel: a head op and the ops fused after it. `out` are the tensors the kernel makes
 * visible to later kernels (stored to `level`); fused intermediates stay in LB. */
typedef struct {
  int nops;
  int *ops;                  /* graph op ids, head first */
  int head;                  /* = ops[0] */
  int core_kind;             /* which cores run it (all cores of this kind in each cluster) */
  int unit_head, unit_tail;  /* queue index (Q_UNIT0 + i) of the head's and the tail's unit;
                                -1 when the kernel has no compute (copies) */
  GsDtype cdt_head, cdt_tail; /* compute dtypes on the units (lower_fill_kernel_units: the tensor's
                                dtype; lower_check_dtypes refuses one no unit computes) */
  int row_reduce;            /* the tail reduces over the output's last axis: tiles keep whole rows */
  /* partition and tiling (lower_fill_tiling) */
  int split_clusters;        /* 1: batch split over clusters; 0: the whole op on cluster 0 */
  int pr, pc;                /* cores per cluster used along rows and along columns */
  int64_t tr, tc, tk;        /* tile rows, tile columns, tile reduction depth */
  int w_resident;            /* weights loaded once per core (one column tile, one k tile) */
  int cols_outer;            /* loop order: column tiles outside row tiles (weights stream once) */
  int packed_k;              /* a conv's taps packed into k: one im2col gemm per tile, not one per
                                tap (lower_conv_packable; chosen by the tiler's estimate) */
  int w_via_gb;              /* weights staged DDR -> GB once per cluster, cores read GB */
  int64_t w_gb_off;          /* graphturbo full (plan_gb_full): the GB offset its staged weights
                                take, -1: not planned (the weight area's ends, emit.c) */
  int w_from;                /* ... staged at the start of that kernel (its own, or an earlier one) */
  int w_chunks;              /* graphturbo full: staged in this many chunks of whole column tiles,
                                each posted to the cores as it lands (0: in one piece) */
  double est_ddr_cycles;     /* the tiler's estimate for the chosen tiles: the chip's DDR time */
  double est_compute_cycles; /* and the head unit's (0 for copy kernels) */
  /* graphturbo (lower_gt.c): the instance this layer kernel belongs to, the samples of each
   * cluster's share it runs on, the LB bytes left for its tiles, its output slices */
  int inst;                  /* -1 under tvm/astitch */
  int64_t s0, s1;            /* samples [s0, s1) of each cluster's share; s1 = 0: all of it */
  int64_t budget;            /* > 0: tile budget per core (else arch_core_tile_budget) */
  int slice0, nslices;       /* its output slices: l->slices[slice0 .. slice0 + nslices) */
  GsScope end_scope;         /* the barrier after it (lower_fill_barriers) */
  int64_t flops;             /* graph_op_cost flops of its ops, per iteration */
  int64_t macs;
  const char *name;
} GsKernel;

/* Where a tensor lives between kernels. */
typedef struct {
  int level;                 /* LVL_DDR, LVL_GB, LVL_LB (fused intermediate), or LVL_NONE */
  int want;                  /* where the plan meant it to live (astitch: LVL_GB for a tensor
                                between kernels); level < want: spilled */
  int alias_of;              /* reshape outputs: the tensor whose storage they share, else -1 */
  int kernel;                /* producing kernel, -1 for graph inputs */
  int last_kernel;           /* last consuming kernel */
  int64_t gb_offset;         /* LVL_GB: offset in each cluster's GB */
} GsTensorPlace;

/* GraphTurbo's ablation ladder (the paper's Fig. 15), each level on top of the one before:
 * gb = one kernel per group, outputs kept in GB; lb = kept in LB; instances = groups split into
 * instances and ordered; full = + across-layer scheduling (the next layer's weights staged in GB
 * while this one computes, emit.c). */
typedef enum { GTL_GB, GTL_LB, GTL_INSTANCES, GTL_FULL, GTL_COUNT } GtLadder;
/* Level full stages a layer's weights at most --gt-prefetch kernels ahead (default, limit). */
enum { GT_PREFETCH_DEFAULT = 2, GT_AHEAD_MAX = 8 };
/* ... and in at most this many chunks (GsKernel.w_chunks). */
enum { GT_STAGE_CHUNKS = 16 };
/* lower_fill_tiling tiles the kernels of a plan with at least LOWER_TILING_SPLIT_MIN of them on
 * this many threads when the process may use two cores (lower_tiling.c). */
enum { LOWER_TILING_THREADS = 2, LOWER_TILING_SPLIT_MIN = 64 };
const char *gt_ladder_name(GtLadder v);
int gt_ladder_parse(const char *s, GtLadder *out); /* 0 ok, -1 unknown */
/* Which tensor leaves a full buffer first: the longest-lived one, counted in kernels (the
 * paper's §4.3 rule), or the largest (prior work's). */
typedef enum { GT_SPILL_LONGEST, GT_SPILL_LARGEST } GtSpillRule;

typedef struct {
  GsSchedKind sched;
  int64_t batch;             /* --batch (0: the graph's default) */
  int64_t batch_per_cluster; /* --batch-per-cluster (0: the whole share if it fits) */
  /* graphturbo */
  GtOptions gt;              /* the graph-level passes (gt.h) */
  GtLadder gt_level;         /* --gt-level (default full) */
  GtSpillRule gt_spill;      /* --gt-spill (default longest) */
  double gt_stitch;          /* --gt-stitch: fraction of each LB for kept tensors (0.75) */
  int gt_stitch_fixed;       /* --gt-stitch given: reduced only when tiles do not fit, not by
                                the tiler's estimate (lower_gt.c, place_and_tile) */
  int gt_prefetch;           /* --gt-prefetch: level full stages a layer's weights up to this
                                many kernels ahead (GT_PREFETCH_DEFAULT, at most GT_AHEAD_MAX) */
  double gt_prefetch_gb;     /* --gt-prefetch-gb: fraction of the GB weights staged ahead may
                                hold at once (1) */
  int gt_cols;               /* --gt-cols split (1): a layer with fewer rows than cores may split
                                its columns over them (lower_choose_partition); rows (0, the
                                default): rows only */
  int tiling_afresh;         /* 1: every kernel's tiles searched again, none taken from the
                                lowering's memo of tilings (lower_tiling.c; tests compare) */
  int tiling_threads;        /* lower_fill_tiling's threads: 0 (the default) two when the
                                process may use two cores, else 1 or 2 (tests compare) */
  int copies_off;            /* 1: every cluster's instructions emitted one by one, none
                                copied from cluster 0's (emit_copy.c; the same program, tests
                                compare) */
  GsCheckRun *check;         /* when set, lower_run attaches its program to this check, whose
                                thread then encodes half its queues, publishes it after every
                                kernel (prog.h prog_check_begin) and halts it when it fails; the
                                caller ends it (the GsLowered does not keep it) before it reads
                                the program */
} GsLowerOptions;
void lower_options_default(GsLowerOptions *o);

/* A part of a tensor that one kernel produces and later kernels read (graphturbo): its place
 * between kernels. Per cluster: every cluster keeps its own samples' slice at the same offsets. */
typedef struct {
  int tensor, kernel;        /* the (root) tensor and the kernel that writes the slice */
  int last;                  /* the last kernel that reads it (= kernel when none does) */
  int want, level;           /* where it was meant to live, where it lives (LVL_LB/GB/DDR) */
  int64_t bytes;             /* bytes per cluster (the largest cluster share) */
  int64_t gb_off;            /* LVL_GB: offset in the GB */
  int core0, ncores;         /* the kernel's cores: core0 .. core0 + ncores - 1 of a cluster */
  int64_t *lb_off;           /* LVL_LB: offset in the LB of each of those cores */
  int64_t *lb_bytes;         /* bytes on each of those cores (cluster 0's share) */
  int first;                 /* the first kernel that reads it (-1: none) */
  /* level full, a DDR slice written through the GB (plan_drains): the writer stores into a GB
   * block at drain_off and a cluster DMA queue copies it to DDR while kernels drain_end and
   * before run; drain_end = -1: written to DDR directly */
  int drain_end;
  int64_t drain_off;
  /* level full, a DDR slice loaded ahead (plan_loads): a cluster DMA queue copies it to a GB
   * block at ahead_off from the start of kernel ahead_from; its readers up to ahead_until read
   * that copy; ahead_from = -1: none */
  int ahead_from, ahead_until;
  int64_t ahead_off;
} GtSlice;

/* An instance as run (graphturbo): a group restricted to samples of each cluster's share. */
typedef struct {
  int group, index;          /* the schedule's group (topological position) and instance */
  int64_t s0, s1;            /* samples [s0, s1); s1 = 0: the whole share */
  int k0, k1;                /* its kernels [k0, k1) */
} GtRunInst;

/* The whole result: the plan (for the report) and the program. */
typedef struct GsLowered {
  GsArena *arena;
  const GsArch *arch;
  GsGraph *graph;            /* borrowed; bound to the per-iteration batch of the last iteration */
  GsLowerOptions opt;
  int64_t batch;             /* samples in the whole run */
  int64_t per_cluster;       /* samples per cluster per iteration */
  int iterations;
  int nkernels;              /* kernels per iteration */
  GsKernel *kernels;
  GsTensorPlace *place;      /* [graph->ntensors] */
  GsProgram *prog;
  GsEmitTally tally;         /* what the emitter counted (emit.h) */
  int dma_by_sem;            /* the clusters' DMA queues (staging, drains, loads ahead) are
                                ordered by semaphores alone and join no barrier (graphturbo) */
  /* Table-3 accounting: op outputs (not aliases) by level */
  int outputs_ddr, outputs_gb, outputs_lb;
  /* roofline inputs (whole run) */
  int64_t total_flops;
  double peak_flops;         /* FLOP/s of every matrix and vector unit at the compute dtypes used */
  int64_t compulsory_ddr_bytes; /* graph inputs + weights (gathered rows for embeddings) + outputs */
  int64_t ddr_read, ddr_write;  /* bytes the program moves from/to DDR (all kernels) */
  int64_t gb_tensor_bytes;    /* astitch: GB bytes [0, this) of each cluster for kernel outputs */
  int64_t *w_kept;           /* [graph->nops], or NULL: the offset in each cluster's GB where an
                                op's weights stay from their first staging to the run's end, -1:
                                staged per kernel (lower_fill_weights_kept; malloc'ed, not in the
                                arena: a re-plan of a smaller last iteration keeps it) */
  /* per tiling thread (lower_fill_tiling: kernels over LOWER_TILING_THREADS threads) */
  struct TileMemo *tile_memo[LOWER_TILING_THREADS]; /* the tile search's memo of tile sizes
                                (lower_tiling.c; NULL until the first search, freed by
                                lower_free) */
  struct TilingMemo *tiling_memo[LOWER_TILING_THREADS]; /* each kernel's tiling by what its
                                search reads, for the placements tried again (lower_tiling.c;
                                freed by lower_free) */
  int active_cores[GS_MAX_CORE_KINDS]; /* cores per cluster of each kind that kernels may use:
                                the most the first iteration's plan uses (0: all of them); a
                                re-plan for a smaller last iteration partitions over these */
  /* graphturbo (lower_gt.c) */
  int nslices;
  GtSlice *slices;
  int ninsts;
  GtRunInst *insts;
  int64_t spills, spill_bytes; /* slices not kept where they were meant to, their bytes (whole
                                  run: all clusters and iterations) */
  int nnotes;
  const char **notes;        /* groups run differently from the schedule, and why */
  const char *gt_order;      /* the instance order and its peaks (GtSchedule.order_summary), or "group" */
  int *op_group;             /* op -> the schedule's group (planning only) */
} GsLowered;

/* The run as the report sees it (summary.h), in l's arena. */
struct GsSchedSummary;
const struct GsSchedSummary *lower_summary(const GsLowered *l);

/* Lower `g` for `a`. Re-binds g's batch (graph_infer). User errors (op that cannot be tiled,
 * dtype no unit supports, DDR too small) go to d with the op's position; returns NULL. */
GsLowered *lower_run(GsGraph *g, const GsArch *a, const GsLowerOptions *o, GsDiag *d);
void lower_free(GsLowered *l); /* frees the program and the arena, not the graph */

/* The planning steps, in the order they run; each is followed by its checker. tvm and astitch
 * run kernels, units, placement, tiling; graphturbo all six (docs/schedulers.md, "Lowering
 * steps"). The names are what --dump-after takes besides the graph passes' (gt.h). */
typedef enum {
  LOWER_KERNELS,   /* ops grouped into kernels (graphturbo: into layers) */
  LOWER_UNITS,     /* core kind, units and compute dtypes of every kernel */
  LOWER_SLICES,    /* graphturbo: instances as run, a kernel per (instance, layer), slices */
  LOWER_PLACEMENT, /* where every tensor (graphturbo: every slice) lives */
  LOWER_TILING,    /* per-core partition and tile sizes */
  LOWER_STAGING,   /* graphturbo: weights staged ahead, drains, loads ahead (level full) */
  LOWER_NSTEPS
} LowerStep;
const char *lower_step_name(LowerStep s);
int lower_step_parse(const char *s, LowerStep *out); /* 0 ok, -1 unknown */
int lower_step_runs(GsSchedKind k, LowerStep s);     /* 1 when strategy k has step s */
LowerStep lower_last_step(GsSchedKind k);           /* the last step strategy k runs */
/* lower_run's iteration sizing, then the plan of the first iteration up to and including step
 * `stop` (one the strategy runs; its last: the sizing's plan, as lower_run keeps it), no
 * program: the state --dump-after prints. Errors as
 * lower_run's. */
GsLowered *lower_plan(GsGraph *g, const GsArch *a, const GsLowerOptions *o, LowerStep stop,
                      GsDiag *d);
/* The invariants of step `after` (lower_check.c lists them): 0, or -1 with one error in d
 * naming the step and the kernel, tensor or slice. Reads the plan only; linear in ops,
 * tensors and kernels, except graphturbo's staging check (every pair of live buffers). */
int lower_check(const GsLowered *l, LowerStep after, GsDiag *d);
/* lower_check on stderr; a violation is a scheduler bug: die() (exit 3) naming the step. */
void lower_check_step(const GsLowered *l, LowerStep after);
/* The plan after step `after` as text, one line per kernel (docs/schedulers.md). */
void lower_dump(FILE *out, const GsLowered *l, LowerStep after);

/* ---- internals shared by lower_*.c (not for other modules) ---- */

/* Row/column geometry of an op's output (lower_ops.c). Rows are split over cores and tiled;
 * a tile covers rows inside one segment or whole segments. Columns (matrix ops only) may be
 * split over cores and tiled; k is the reduction depth a gemm tile may cut. */
typedef struct {
  int64_t rows, seg_rows;    /* rows = segments * seg_rows */
  int64_t rows_per_sample;   /* rows / batch, or 0 when rows are not a multiple of the batch */
  int64_t cols;              /* output channels (LK_GEMM), 1 otherwise */
  int64_t k;                 /* reduction depth in "k units" (input channels for conv) */
  int64_t k_elems;           /* elements of one k unit (kh*kw for conv, 1 otherwise) */
  int64_t col_align;         /* preferred column tile multiple (matrix unit n0); with
                                col_strict, the only multiples column tiles may have */
  int col_strict;            /* grouped convs: a column tile is whole groups */
  int split_cols, split_k;   /* columns / k may be cut (grouped convs: columns by groups) */
  int64_t in_row_bytes;      /* bytes of input 0 per output row (whole k), for tile sizing */
  int64_t out_row_bytes;     /* bytes of output per row per column */
  int64_t halo_bytes;        /* extra input bytes a tile inside a segment reads (conv, pool) */
  int64_t w_col_bytes;       /* weight bytes per column per k unit (LK_GEMM), incl. matmul b */
  int64_t w_fixed_bytes;     /* weights a core holds whole (bn/ln parameters, broadcast inputs) */
} GsGeom;

/* One piece of a tensor: offset and a ≤3-D byte pattern (planes × rows × row_bytes). */
typedef struct {
  int64_t off, row_bytes, rows, stride, planes, pstride;
} GsSpan;
static inline int64_t span_bytes(const GsSpan *s) { return s->row_bytes * s->rows * s->planes; }
static inline int64_t span_extent(const GsSpan *s) {
  return (s->planes - 1) * s->pstride + (s->rows - 1) * s->stride + s->row_bytes;
}

/* A view of a tensor (bytes of one iteration's tensor): its rows [lo, hi) of `pitch` bytes
 * each (lo and hi multiples of pitch), and of every such row the bytes [b0, b1). b0 = 0,
 * b1 = pitch is the contiguous range [lo, hi); a narrower one is the channel range of those rows
 * of a channels-last tensor. As a mov pattern (view_span): offset lo + b0, (hi - lo) / pitch
 * rows of b1 - b0 bytes at a row stride of pitch. Views are rectangles so that containment and
 * the cut of a reader's span at their edges are arithmetic (docs/schedulers.md, "Views"). */
typedef struct {
  int64_t lo, hi, pitch, b0, b1;
} GsView;
static inline int view_whole(const GsView *v) { return v->b0 == 0 && v->b1 == v->pitch; }
static inline int64_t view_bytes(const GsView *v) {
  return (v->hi - v->lo) / v->pitch * (v->b1 - v->b0);
}
static inline int view_has(const GsView *v, int64_t x) {
  int64_t b = x >= v->lo ? (x - v->lo) % v->pitch : -1;
  return x >= v->lo && x < v->hi && b >= v->b0 && b < v->b1;
}
static inline GsSpan view_span(const GsView *v) {
  GsSpan s = {v->lo + v->b0, v->b1 - v->b0, (v->hi - v->lo) / v->pitch, v->pitch, 1, v->hi - v->lo};
  return s;
}

/* A tile of an op: rows [r0, r1), columns [c0, c1), k units [k0, k1). */
typedef struct {
  int64_t r0, r1, c0, c1, k0, k1;
} GsTile;

void lower_fill_geom(const GsGraph *g, int op, const GsArch *a, GsGeom *out);

/* Whether op's input tile depends on its column tile (gm: its geometry), so a tile's A is
 * loaded again when only the columns change: a vector op's channel columns, and a grouped
 * conv's columns, which read their own groups' input channels (lower_ops.c). */
int lower_a_follows_cols(const GsGraph *g, int op, const GsGeom *gm);
/* Input `i` of op (activation operand) needed by tile t; returns 0 if the op does not read
 * that operand per tile (broadcast operands are loaded whole: see lower_ops.c). */
int lower_tile_input_span(const GsGraph *g, int op, int i, const GsTile *t, GsSpan *s);
/* Weights needed by tile t (in the op's DDR weight region); 0 when the op has none. */
int lower_tile_weight_span(const GsGraph *g, int op, const GsTile *t, GsSpan *s);
/* Output `j` written by tile t. */
void lower_tile_output_span(const GsGraph *g, int op, const GsTile *t, GsSpan *s);
/* Bytes of the op's weight region in DDR (0 if none); its layout is described in lower_ops.c. */
int64_t lower_op_weight_bytes(const GsGraph *g, int op);
/* Weight bytes a run must read at least once (embedding: min(table, gathered rows)). */
int64_t lower_op_compulsory_weight_bytes(const GsGraph *g, int op);

/* Compute instructions of tile t of op (lower_tile_compute): its steps. lower_ops.c knows the
 * formulas; emit_tiles.c the queues. A conv on a matrix unit is one gemm per filter tap over the
 * raw input tile, k = the tile's input channels, or with packed_k (the kernel's plan,
 * lower_tiling.c) one gemm over its im2col form, k = channels x taps. */
typedef struct {
  int is_gemm;
  GsVop vop;
  int64_t m, n, k;          /* gemm */
  int64_t elems, param;     /* vec */
  int uses_b;               /* vec: reads a second operand region (bnorm/lnorm: their weights) */
  int64_t dst_off;          /* vec: where its result goes in the tile's output, in elements (the
                               steps of an interaction fill one output side by side) */
  int a_tile;               /* vec: reads all of its A tile and no more (elems counts outputs of
                               a copy that reads inputs again: nearest up-sampling); windowed
                               ops (isa_vop_windowed) read their A tile too. gemm: reads its
                               m x k operand as im2col windows of the raw A tile (packed taps) */
} GsComputeStep;
enum { GS_MAX_STEPS = 128 };
int lower_tile_compute(const GsGraph *g, int op, const GsTile *t, int packed_k,
                       GsComputeStep *steps, int max_steps);
/* Op's conv has taps a plan may pack into k: a conv on the matrix unit with overlapping windows
 * and more than one tap (a 1x1 conv, or windows that do not overlap, is one gemm anyway). */
int lower_conv_packable(const GsGraph *g, int op);
/* Bytes the unit reads/writes for tile t at compute dtype cdt (the simulator's view: a gemm
 * reads m·k and k·n elements and writes m·n; a vector op reads `elems`). A tile's LB regions
 * hold at least this much: the DMA writes operands in the layout the unit reads (window-
 * expanded for pooling and depthwise convs, as Ascend's load3d does for img2col). */
typedef struct {
  int64_t a, b, o;
} GsOperandBytes;
GsOperandBytes lower_tile_operand_bytes(const GsGraph *g, int op, const GsTile *t, int packed_k,
                                        GsDtype cdt);
/* The same from a tile's steps (lower_tile_compute's n steps st), for a caller that has them. */
GsOperandBytes lower_steps_operand_bytes(const GsComputeStep *st, int n, GsDtype cdt);
/* The vector step of a fused tail op over `elems` elements of the kernel's output tile
 * (param: the normalised/softmaxed group length). */
GsComputeStep lower_tail_step(const GsGraph *g, int op, int64_t elems);
/* Input i of op is read whole by every tile (a broadcast operand), not sliced per tile. */
int lower_op_input_whole(const GsGraph *g, int op, int i);
/* A kernel's operands by how they reach its units — the one classification that the tiler's
 * budget (lower_tiling.c) and the emitter's buffers (emit_tiles.c) both use: the head's
 * activation inputs sliced per tile (A: head input indices), the weights loaded per tile (W,
 * has_w), the tail operands of the head output's size loaded per output tile (R: tail op
 * position j in k->ops and operand tensor), and the operands a core loads whole once (F: op
 * and operand tensor, or -1 for the op's weights: bn/ln parameters, broadcast inputs). */
typedef struct {
  int apart[GS_MAX_OPERANDS], na;
  int rop[GS_MAX_OPERANDS], rin[GS_MAX_OPERANDS], nr;
  int fop[GS_MAX_OPERANDS * 2], fin[GS_MAX_OPERANDS * 2], nf;
  int has_w;
  int is_conv;               /* the head is a conv (a vector one: depthwise) */
} GsKernelOperands;
void lower_kernel_operands(const GsGraph *g, const GsKernel *k, GsKernelOperands *p);
/* Bytes of resident operand i of p: its tensor, or its op's weights. */
int64_t lower_resident_bytes(const GsGraph *g, const GsKernelOperands *p, int i);

/* The partition of a kernel's rows (lower_partition.c): its rows and rows per sample (0: the
 * kernel runs on cluster 0 only); core i's rows [a0, a1) in cluster c; the first row of the
 * tile after the one starting at r in a core's rows [.., rb) with tiles of tr rows and
 * segments of seg rows. */
void lower_kernel_rows(const GsGraph *g, const GsArch *a, const GsKernel *k, int64_t *rows,
                       int64_t *rps);
void lower_core_rows(const GsGraph *g, const GsArch *a, const GsKernel *k, int64_t rows,
                     int64_t rps, int c, int i, int64_t *a0, int64_t *a1);
int64_t lower_next_row(int64_t r, int64_t rb, int64_t tr, int64_t seg);
/* Columns [c0, c1) of column part j (of the kernel's pc): whole column-alignment units
 * (GsGeom.col_align) as evenly as possible, the first parts taking one more. */
void lower_core_cols(const GsGeom *gm, const GsKernel *k, int j, int64_t *c0, int64_t *c1);
/* A kernel's partition over a cluster's cores: core i * pc + j (of the kernel's core kind) has
 * rows part i and column part j. lower_kernel_part fills it; lower_core_view gives the view of
 * output tensor t that core writes in cluster c (an empty view, lo = hi, when it has no rows). */
typedef struct {
  int64_t rows, rps;
  GsGeom gm;
} GsKernelPart;
void lower_kernel_part(const GsGraph *g, const GsArch *a, const GsKernel *k, GsKernelPart *kp);
GsView lower_core_view(const GsGraph *g, const GsArch *a, const GsKernel *k,
                       const GsKernelPart *kp, int t, int c, int core);
/* A copy kernel's parts: bytes [pre, pre + inner) of each of `outer` rows of src go to dst. */
typedef struct {
  int src, dst;             /* tensors */
  int64_t outer, src_inner, dst_inner, src_pre, dst_pre; /* bytes */
  int gather;               /* embedding: src = indices; rows come from the table */
} GsCopyPart;
int lower_copy_parts(const GsGraph *g, const GsKernel *k, GsCopyPart *pp);

/* Strategy policies (lower_tvm.c, lower_astitch.c): fill l->kernels/nkernels through
 * lower_group_kernels, which grows a tail from every head while fuse(l, head, op) allows. */
typedef int (*GsFuseRule)(const GsLowered *l, int head, int op);
void lower_group_kernels(GsLowered *l, GsFuseRule fuse);
void lower_group_kernels_tvm(GsLowered *l);
void lower_group_kernels_astitch(GsLowered *l);
/* astitch's placement (lower_fill_placement calls it after the common levels): kernel outputs
 * into the GB where they fit, else they stay in DDR (kof: op -> kernel). */
void lower_place_astitch(GsLowered *l, const int *kof);
/* GraphTurbo: the schedule's instances as layer kernels, slices placed with spills (lower_gt.c),
 * up to and including step `stop`. */
int gt_plan(GsLowered *l, LowerStep stop, GsDiag *d);
/* The §4.3 spill rule, exposed for tests: the victim among slices cand[0..n), and one pass
 * over steps [0, nsteps) that moves slices at `level` down to `down` until the bytes alive at
 * every step fit `cap` on each of nres resources (a cluster's cores for LB; 1 for GB). */
int gt_spill_victim(const GtSlice *sl, const int *cand, int n, GtSpillRule rule);
void gt_spill_pass(GtSlice *sl, int nsl, int nsteps, int level, int nres, int64_t cap,
                   GtSpillRule rule, int down);
/* The tile budget of kernel k on one core (its budget, else arch_core_tile_budget). */
int64_t lower_kernel_tile_budget(const GsLowered *l, const GsKernel *k);
/* Bytes of kernel k's worst-case double-buffered tile at its chosen tiles (lower_fill_tiling's own
 * measure; 0 for copy kernels, which size their chunks at emission). */
int64_t lower_tile_need(const GsLowered *l, const GsKernel *k);
/* The unit capability (CAP_MATRIX, CAP_VECTOR, or 0) a kernel headed by op needs. */
unsigned lower_head_need(const GsGraph *g, int op);

/* Pick the core kind and units of every kernel; may split a kernel whose tail has no unit on
 * the head's core kind. Returns 0 or -1 with an error in d. */
int lower_fill_kernel_units(GsLowered *l, GsDiag *d);

/* The unit kind behind queue q (k->unit_head or k->unit_tail, >= Q_UNIT0) of kernel k's cores. */
const GsUnitKind *lower_kernel_unit(const GsArch *a, const GsKernel *k, int q);
/* Every op's dtype has a unit of the kind it needs on some core kind of a; else one error to d
 * that suggests --dtype (lower_dtype.c), -1. */
int lower_check_dtypes(const GsGraph *g, const GsArch *a, GsDiag *d);
int lower_fill_placement(GsLowered *l);
/* The kernel runs on every cluster, each on its samples (else on cluster 0 alone). */
int lower_kernel_split_clusters(const GsLowered *l, const GsKernel *k);
/* l->gb_tensor_bytes: the GB bytes below the staged-weight area, for kernel outputs. */
void lower_fill_gb_split(GsLowered *l);
/* Every kernel's partition and tile sizes; the same on one thread or two (each kernel's answer
 * depends on its own inputs alone). */
int lower_fill_tiling(GsLowered *l, GsDiag *d);
/* The partition of kernel k over its cluster's cores (k->pr, k->pc), chosen by the tiler's
 * estimate (lower_fill_tiling's own rule, docs/schedulers.md "Columns split over cores"); returns
 * k->pc. graphturbo fixes it when it makes the slices, which are sized per core. */
int lower_choose_partition(GsLowered *l, GsKernel *k);
/* graphturbo full, after the GB plan: weights staged at their kernel's start in chunks where
 * that is estimated faster (GsKernel.w_chunks, loop order columns outer). */
void lower_fill_tiling_streams(GsLowered *l);
void lower_tiling_memo_free(GsLowered *l);
/* Kernel tilings the lowering took from its memo so far (lower_tiling.c). */
int64_t lower_tiling_memo_hits(const GsLowered *l);

/* The plan places kernel outputs as slices (l->slices: graphturbo) rather than per tensor
 * (l->place); the emitter follows whichever the plan has. */
static inline int lower_keeps_slices(const GsLowered *l) { return l->nslices > 0; }
/* The barrier after every kernel (GsKernel.end_scope): a chip barrier, or, where the plan runs
 * clusters independently (dma_by_sem), a cluster barrier when neither the kernel nor the next
 * one shares data across clusters. */
void lower_fill_barriers(GsLowered *l);
/* GB bytes [w0, w1) of each cluster for a kernel's staged weights. */
void lower_gb_weight_area(const GsLowered *l, int64_t *w0, int64_t *w1);
/* Bytes of GB tensor t in each cluster's GB: its share of the samples (tvm/astitch);
 * lower_gb_tensor_top: the end of the plan's highest GB tensor block, 64-aligned (0: none). */
int64_t lower_gb_tensor_bytes(const GsLowered *l, int t);
int64_t lower_gb_tensor_top(const GsLowered *l);
/* tvm, astitch, a run of several iterations: the weights kept in the GB across iterations
 * (l->w_kept), greedy by DDR bytes saved per GB byte within what the plan leaves free; on a
 * re-plan of a smaller last iteration, the kept blocks stay and the kernels adapt to them
 * (lower_wkeep.c states the contract). lower_weights_kept_floor: the lowest kept byte
 * (INT64_MAX: none), under which a re-plan keeps its GB tensors. */
void lower_fill_weights_kept(GsLowered *l);
int64_t lower_weights_kept_floor(const GsLowered *l);

#ifdef __cplusplus
}
#endif
#endif
