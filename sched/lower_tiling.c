/* lower_tiling.c — lower_fill_tiling: the partition of every kernel over a cluster's cores (its
 * rows; a gemm with fewer rows than cores may split its columns too, when the estimate says so:
 * choose_partition, docs/schedulers.md "Columns split over cores") and its tile sizes and loop
 * order: for every k depth and column width, the most rows whose double-buffered tile fits
 * the core's budget, keeping the choice with the shortest estimated time of the busiest core —
 * the longest of its DDR share (whole bursts, as the simulator counts them), GB-port share, DMA
 * queues (a set-up per transfer) and head unit (docs/schedulers.md, "Partition, tiling, double
 * buffering"; the formulas are the simulator's, sched/unit_timing.h).
 *
 * Invariant after it: every kernel's worst-case tile (tile_bytes over interior and whole-segment
 * tiles; lower_tile_need, which lower_check.c compares) fits its lower_kernel_tile_budget; an
 * op whose smallest tile does not is a user error naming the kernel and both sizes. The answer
 * and the error are the same whether the kernels are tiled on one thread or two (tile_kernels).
 */
#include "lower.h"
#include "unit_timing.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static int64_t cluster_share_samples(const GsLowered *l) {
  int64_t b = l->graph->batch, d = l->arch->nclusters;
  return (b + d - 1) / d;
}


/* All int64_t: tile_bytes takes the field-wise maximum over candidate tiles. */
typedef struct {
  int64_t a, w, r, o, fixed; /* worst-case bytes of one A set, W, R set, O; resident bytes */
  /* worst-case memory-side cost of loading one A set, W, R set and storing O: DDR bytes
   * charged in whole bursts as the simulator charges them (ddr_span_cost), so a tile that cuts
   * channels-last rows into short pieces is seen to waste bandwidth; GB bytes; bytes over the
   * core's link */
  int64_t da, dw, dr, dout;
  int64_t ga, gw, gr, gout;
  int64_t na, nr;             /* transfers per A set, per R set */
  int64_t xa, xw, xr, xo;     /* bytes of one A set, W, R set, O as moved (not LB-expanded) */
} TileBytes;

static int64_t align64(int64_t x) { return (x + 63) / 64 * 64; }

/* DDR bytes one access of span s costs: the simulator's burst rounding (unit_timing.h,
 * timing_ddr_bytes_bound) at the worst start the span's offsets allow, since a tile is priced
 * before addresses exist (DDR tensors start on 256-byte boundaries: emit.c). */
static int64_t ddr_span_cost(const GsSpan *s, int burst) {
  GsAccess a = {s->off, s->row_bytes, s->rows, s->stride, s->planes, s->pstride};
  return timing_ddr_bytes_bound(&a, burst);
}

/* Adds the cost of moving span s of tensor t to *ddr (burst-rounded) or *gb (where t lives;
 * before placement, graphturbo's choice of partitions, in DDR). */
static void mem_cost(const GsLowered *l, int t, const GsSpan *s, int64_t *ddr, int64_t *gb) {
  if (t >= 0 && l->place && l->place[t].level != LVL_DDR) *gb += span_bytes(s);
  else *ddr += ddr_span_cost(s, l->arch->ddr_burst_bytes);
}

/* The bytes of tile t of kernel k, whose operands are ko (the emitter's classification):
 * its A set, W and R set as the regions the emitter sizes them (at least what the unit reads:
 * lower_tile_operand_bytes), O at the tail's compute dtype, and (when `costs`) what moving each
 * costs. */
static TileBytes tile_one(const GsLowered *l, const GsKernel *k, const GsKernelOperands *ko,
                          const GsTile *t, int costs) {
  const GsGraph *g = l->graph;
  const GsOp *h = &g->ops[k->head];
  TileBytes b;
  memset(&b, 0, sizeof b);
  GsSpan s;
  GsOperandBytes ob = lower_tile_operand_bytes(g, k->head, t, k->packed_k, k->cdt_head);
  int first = 1;
  for (int ai = 0; ai < ko->na; ai++) {
    int i = ko->apart[ai];
    if (!lower_tile_input_span(g, k->head, i, t, &s)) continue;
    int64_t x = span_bytes(&s);
    if (first && h->kind != OP_EMBEDDING) x = max64(x, ob.a);
    b.a += align64(x);
    if (costs) mem_cost(l, h->in[i], &s, &b.da, &b.ga);
    b.xa += span_bytes(&s);
    b.na++;
    first = 0;
  }
  if (ko->has_w && lower_tile_weight_span(g, k->head, t, &s)) {
    b.w = align64(max64(span_bytes(&s), h->kind == OP_EMBEDDING ? ob.a : ob.b));
    b.xw = span_bytes(&s);
    if (k->w_via_gb) b.gw = span_bytes(&s);
    else if (costs) b.dw = ddr_span_cost(&s, l->arch->ddr_burst_bytes);
  }
  lower_tile_output_span(g, k->head, t, &s);
  if (costs) mem_cost(l, g->ops[k->ops[k->nops - 1]].out[0], &s, &b.dout, &b.gout);
  b.xo = span_bytes(&s);
  int64_t o = max64(span_bytes(&s), ob.o);
  o = max64(o, span_bytes(&s) / arch_dtype_bytes(g->tensors[h->out[0]].dtype) * arch_dtype_bytes(k->cdt_tail));
  b.o = align64(o);
  for (int i = 0; i < ko->nr; i++) {
    b.r += align64(o);
    if (costs) mem_cost(l, ko->rin[i], &s, &b.dr, &b.gr);
    b.xr += span_bytes(&s);
    b.nr++;
  }
  return b;
}

/* Worst-case bytes of one tile of kernel k (operands ko) with tile sizes (tr, tc, tk): the
 * largest of a tile inside a segment at each end of the columns and k, and (when tiles span
 * segments) of whole segments; plus the resident operands, a 64-byte region each as the emitter
 * allocates them. The DDR and GB costs (da..dout, ga..gout) only when `costs`: the search for the
 * most rows that fit needs only the sizes, and pricing the DDR bursts was a fifth of planning
 * BERT-128 under graphturbo on stcp920. */
static TileBytes tile_bytes(const GsLowered *l, const GsKernel *k, const GsKernelOperands *ko,
                            const GsGeom *gm, int64_t tr, int64_t tc, int64_t tk, int costs) {
  GsTile cand[4];
  int nc = 0;
  int64_t part = min64(tr, gm->seg_rows);
  int64_t mid = (gm->seg_rows - part) / 2;
  cand[nc++] = (GsTile){mid, mid + part, 0, tc, 0, tk};
  cand[nc++] = (GsTile){mid, mid + part, gm->cols - tc, gm->cols, gm->k - tk, gm->k};
  /* one row short of a segment, the middle is its top, where the padding clips the halo: the
   * bottom too (a core whose rows start one row into a segment has that tile) */
  if (part == gm->seg_rows - 1 && part > 0)
    cand[nc++] = (GsTile){1, gm->seg_rows, gm->cols - tc, gm->cols, gm->k - tk, gm->k};
  if (tr >= gm->seg_rows && gm->rows >= gm->seg_rows) {
    int64_t ns = min64(tr / gm->seg_rows, gm->rows / gm->seg_rows);
    cand[nc++] = (GsTile){0, ns * gm->seg_rows, gm->cols - tc, gm->cols, gm->k - tk, gm->k};
  }
  TileBytes tb;
  memset(&tb, 0, sizeof tb);
  for (int c = 0; c < nc; c++) {
    TileBytes b = tile_one(l, k, ko, &cand[c], costs);
    int64_t *dst = &tb.a, *src = &b.a;
    for (size_t i = 0; i < sizeof tb / sizeof(int64_t); i++) dst[i] = max64(dst[i], src[i]);
  }
  tb.fixed = 0;
  for (int i = 0; i < ko->nf; i++) tb.fixed += align64(lower_resident_bytes(l->graph, ko, i));
  return tb;
}

/* Cycles of one step of kernel k with tile sizes (tr, tc, tk) on the head unit (*head) and of
 * the fused tail on the tail unit after the step's last k chunk (*tail): the simulator's own
 * formulas (unit_timing.h) over the instructions emit_tiles.c emits for that tile. */
static void step_compute_cycles(const GsLowered *l, const GsKernel *k, const GsGeom *gm,
                                int64_t tr, int64_t tc, int64_t tk, double *head, double *tail) {
  const GsArch *a = l->arch;
  const GsGraph *g = l->graph;
  *head = *tail = 0;
  if (k->unit_head < Q_UNIT0) return;
  const GsUnitKind *u = lower_kernel_unit(a, k, k->unit_head);
  GsTile t = {0, min64(tr, gm->rows), 0, min64(tc, gm->cols), 0, min64(tk, gm->k)};
  GsComputeStep cs[GS_MAX_STEPS];
  int n = lower_tile_compute(g, k->head, &t, k->packed_k, cs, GS_MAX_STEPS);
  for (int i = 0; i < n; i++) {
    int64_t c = cs[i].is_gemm ? timing_matrix(u, cs[i].m, cs[i].n, cs[i].k, k->cdt_head)
                              : timing_vector(u, cs[i].vop, cs[i].elems, k->cdt_head);
    *head += (double)max64(c, 0);
  }
  if (k->nops < 2) return;
  const GsUnitKind *ut = lower_kernel_unit(a, k, k->unit_tail);
  GsSpan os;
  lower_tile_output_span(g, k->head, &t, &os);
  int64_t oelems = span_bytes(&os) / arch_dtype_bytes(g->tensors[g->ops[k->head].out[0]].dtype);
  for (int j = 1; j < k->nops; j++) {
    GsComputeStep ts = lower_tail_step(g, k->ops[j], oelems);
    *tail += (double)max64(timing_vector(ut, ts.vop, ts.elems, k->cdt_tail), 0);
  }
}

static int64_t tile_need(const TileBytes *tb, int w_resident) {
  return 2 * tb->a + (w_resident ? 1 : 2) * tb->w + 2 * tb->r + 2 * tb->o + tb->fixed;
}

/* The rows of the cluster with the most rows, and its per-core share. */
static int64_t cluster_rows(const GsLowered *l, const GsKernel *k, const GsGeom *gm) {
  if (k->s1 > 0 && gm->rows_per_sample > 0) return (k->s1 - k->s0) * gm->rows_per_sample;
  if (!k->split_clusters) return gm->rows;
  return cluster_share_samples(l) * gm->rows_per_sample;
}

/* The GB bytes [w0, w1) of each cluster that hold a kernel's staged weights: the whole GB under
 * tvm (it keeps nothing else there); under astitch what the kernel outputs leave (the lower
 * gb_tensor_bytes, lower_fill_placement); the top quarter is kept for the tiles of cores without LB
 * when the config has any. graphturbo splits the GB as astitch does. */
void lower_gb_weight_area(const GsLowered *l, int64_t *w0, int64_t *w1) {
  const GsArch *a = l->arch;
  int lbless = 0;
  for (int i = 0; i < a->ncore_kinds; i++)
    if (a->core_kinds[i].lb_bytes <= 0) lbless = 1;
  *w1 = lbless ? a->gb_bytes / 4 * 3 : a->gb_bytes;
  *w0 = l->opt.sched != SCHED_TVM ? l->gb_tensor_bytes : 0;
}

/* The cores of kernel k's kind a cluster may use. */
static int kernel_cores_max(const GsLowered *l, const GsKernel *k) {
  return l->active_cores[k->core_kind] ? l->active_cores[k->core_kind]
                                       : l->arch->core_kinds[k->core_kind].count;
}

/* The partition of kernel k over its cluster's cores with its columns split pc ways: the most
 * row parts the cores and rows allow. With pc = 1 and channels-last storage each core's share of
 * the output is one contiguous byte range; with pc > 1 a view of rows x channels (lower.h). */
static void partition(const GsLowered *l, GsKernel *k, const GsGeom *gm, int pc) {
  int P = kernel_cores_max(l, k) / pc;
  int64_t R = cluster_rows(l, k, gm);
  k->pr = P > R ? (int)R : P;
  if (k->pr < 1) k->pr = 1;
  k->pc = pc;
}

/* The head unit of kernel k is a weight- or input-stationary systolic array: every core that
 * runs all of the columns loads every fold of the weights, however few its rows. */
static int head_stationary(const GsLowered *l, const GsKernel *k) {
  if (k->unit_head < Q_UNIT0) return 0;
  const GsUnitKind *u = lower_kernel_unit(l->arch, k, k->unit_head);
  return (u->caps & CAP_MATRIX) && u->shape != MAT_CUBE && u->dataflow != DF_OUTPUT_STATIONARY;
}

/* The column splits worth pricing for kernel k (*n of them into pcs, 1 first): only 1 unless
 * rows are too few to give every core one (cluster_rows below the cores) or the head is a
 * stationary array (head_stationary: a core's share of rows does not shorten its folds), and the
 * kernel is a gemm whose columns cores may share — its output channels, each core then reading
 * only its columns' weights (not grouped convs, whose column tiles are whole groups; not a tail
 * that reduces over whole rows). Then every power of two up to the cores that leaves every part
 * at least one column-alignment unit. */
static int column_splits(const GsLowered *l, const GsKernel *k, const GsGeom *gm, int *pcs) {
  int n = 0, P = kernel_cores_max(l, k);
  pcs[n++] = 1;
  if ((cluster_rows(l, k, gm) >= P && !head_stationary(l, k)) ||
      lower_op_kind(l->graph, k->head) != LK_GEMM ||
      !gm->split_cols || gm->col_strict || k->row_reduce)
    return n;
  for (int pc = 2; pc <= P && pc <= gm->cols && n < 16; pc *= 2) pcs[n++] = pc;
  return n;
}

/* The tile bytes one search has asked for, by (tr, tc, tk): it asks for the same tiles again
 * and again (most_rows' bisection for each width, with the weights resident and not, then the
 * overlap's and the staging's searches): BERT-128 under graphturbo on stcp920 asked 1.5 M
 * times for 0.57 M tiles. Direct-mapped; a slot is valid in the generation that wrote it, and
 * each search (one kernel's partition, whose tile bytes do not change while it runs) is a new
 * generation. With 512 slots a third of the asks hit; with 16384 (3 MiB, one per plan) most
 * tiles asked again are found (planning BERT-128 graphturbo: 0.75x the instructions of 512). */
enum { TILE_MEMO_SLOTS = 16384 };
typedef struct {
  uint32_t gen;
  int costs; /* b has the costs too */
  int64_t tr, tc, tk;
  TileBytes b;
} TileMemoSlot;
struct TileMemo {
  uint32_t gen;
  TileMemoSlot slot[TILE_MEMO_SLOTS];
};

/* What the tile search holds fixed for one kernel. */
typedef struct {
  const GsLowered *l;
  const GsKernel *k;
  const GsGeom *gm;
  GsKernelOperands ko; /* k's operands (lower_kernel_operands) */
  int64_t core_rows, core_cols;
  double ddr_cores, gb_bw, noc, lat0;
  int overlap; /* price the pipeline's fill and drain (graphturbo full: tiles sized for overlap) */
  struct TileMemo *memo; /* NULL: none */
} TileSearch;

/* tile_bytes(tr, tc, tk) of the search's kernel (with its costs when `costs`), through its
 * memo. */
static TileBytes search_bytes(const TileSearch *ts, int64_t tr, int64_t tc, int64_t tk,
                              int costs) {
  if (!ts->memo) return tile_bytes(ts->l, ts->k, &ts->ko, ts->gm, tr, tc, tk, costs);
  uint64_t h = (uint64_t)tr * 0x9e3779b97f4a7c15u ^ (uint64_t)tc * 0xc2b2ae3d27d4eb4fu ^
               (uint64_t)tk * 0x165667b19e3779f9u;
  struct TileMemo *m = ts->memo;
  TileMemoSlot *s = &m->slot[(h >> 32) % TILE_MEMO_SLOTS];
  if (s->gen != m->gen || s->tr != tr || s->tc != tc || s->tk != tk || s->costs < costs) {
    s->b = tile_bytes(ts->l, ts->k, &ts->ko, ts->gm, tr, tc, tk, costs);
    s->gen = m->gen, s->tr = tr, s->tc = tc, s->tk = tk, s->costs = costs;
  }
  return s->b;
}

/* A candidate tiling and its estimate. */
typedef struct {
  int64_t tr, tc, tk;
  int wres, order;
  double cost, ddr, compute;
} TileChoice;

/* Estimated cycles of the busiest core for tiles (tr, tc, tk) in loop order `order` (0: rows
 * outer, columns, k inner; 1: columns outer): the longest of the DDR's share (burst bytes of all
 * cores at the chip's bandwidth), the GB ports' share, the dma_in and dma_out queues (a set-up
 * latency per transfer, serial in the queue, plus the bytes over the core's link) and the units;
 * plus the total bytes at a tiny weight to prefer less traffic among equal times. With
 * ts->overlap the units run concurrently (the tail of one tile under the head of the next) and
 * the pipeline's fill (the first step's loads) and drain (the last tile's tail and store) are
 * added, which is what makes smaller tiles pay. */
static TileChoice tile_cost(const TileSearch *ts, int64_t tr, int64_t tc, int64_t tk, int order,
                            int wres) {
  const GsLowered *l = ts->l;
  const GsArch *a = l->arch;
  const GsKernel *k = ts->k;
  const GsGraph *g = l->graph;
  int64_t ntr = ceil_div64(ts->core_rows, tr), nct = ceil_div64(ts->core_cols, tc);
  int64_t nkt = ceil_div64(ts->gm->k, tk);
  TileBytes tb = search_bytes(ts, tr, tc, tk, 1);
  GsOpKind hk = g->ops[k->head].kind;
  int a_cols = lower_a_follows_cols(g, k->head, ts->gm);
  int w_rows = hk == OP_MATMUL || hk == OP_EMBEDDING;
  double steps = (double)(ntr * nct * nkt), nout = (double)(ntr * nct);
  double head, tail;
  step_compute_cycles(l, k, ts->gm, tr, tc, tk, &head, &tail);
  /* loads of A and W: a buffer reloads when its key changes (A: rows, k, and columns for
   * a_cols; W: columns, k, and rows for w_rows) */
  double la, lw;
  if (order == 0) {
    la = nkt > 1 || a_cols ? steps : (double)ntr;
    lw = nct == 1 && nkt == 1 ? (w_rows ? (double)ntr : 1) : steps;
  } else {
    la = ntr == 1 && nkt == 1 ? (a_cols ? (double)nct : 1) : steps;
    lw = nkt > 1 || w_rows ? steps : (double)nct;
  }
  double ddr = (double)tb.da * la + (double)tb.dw * lw + (double)(tb.dout + tb.dr) * nout;
  double gb = (double)tb.ga * la + (double)tb.gw * lw + (double)(tb.gout + tb.gr) * nout;
  double lat_a = ts->lat0 + (tb.da > 0 ? a->ddr_latency_cycles : a->gb_latency_cycles);
  double lat_w = ts->lat0 + (tb.dw > 0 ? a->ddr_latency_cycles : a->gb_latency_cycles);
  double lat_o = ts->lat0 + (tb.dout > 0 ? a->ddr_latency_cycles : a->gb_latency_cycles);
  double in_a = (double)tb.na * lat_a + (double)tb.xa / ts->noc;
  double in_w = tb.xw > 0 ? lat_w + (double)tb.xw / ts->noc : 0;
  double in_r = (double)tb.nr * lat_o + (double)tb.xr / ts->noc;
  double out1 = lat_o + (double)tb.xo / ts->noc;
  double t_in = la * in_a + lw * in_w + nout * in_r, t_out = nout * out1;
  double t_ddr = ddr * ts->ddr_cores / a->ddr_bytes_per_cycle;
  double t_gb = ts->gb_bw > 0 ? gb * k->pr * k->pc / ts->gb_bw : 0;
  double t_c = steps * head;
  if (ts->overlap) {
    double t_tail = nout * tail;
    t_c = k->unit_tail == k->unit_head ? t_c + t_tail : fmax(t_c, t_tail);
  }
  double cost = fmax(fmax(fmax(t_ddr, t_gb), fmax(t_in, t_out)), t_c);
  if (ts->overlap) cost += in_a + in_w + in_r + tail + out1;
  TileChoice ch = {tr, tc, tk, wres, order, cost + 1e-6 * (ddr + gb), t_ddr, t_c};
  return ch;
}

/* The most rows of tiles (tc, tk) whose double-buffered tile fits the budget, whole segments
 * when more than one (0 when not even one row fits). */
static int64_t most_rows(const TileSearch *ts, int64_t tc, int64_t tk, int wres, int64_t budget) {
  int64_t lo = 0, hi = ts->core_rows, seg = ts->gm->seg_rows;
  while (lo < hi) { /* tile bytes grow with rows */
    int64_t mid = (lo + hi + 1) / 2;
    int64_t trm = mid > seg ? mid / seg * seg : mid;
    TileBytes tb = search_bytes(ts, trm, tc, tk, 0);
    if (tile_need(&tb, wres) <= budget) lo = mid;
    else hi = mid - 1;
  }
  return lo > seg ? lo / seg * seg : lo;
}

/* ... and only when the estimate falls below this fraction of the larger tiles' (a gain the
 * estimate's error cannot fake; smaller gains measured as losses as often as gains). */
#define TILE_OVERLAP_GAIN 0.9

static int hk_conv_dense(GsOpKind hk) {
  return hk == OP_CONV2D || hk == OP_CONV1D || hk == OP_DENSE;
}

/* Graphturbo full, weights staged in GB at the kernel's start: staged whole, the cores wait
 * for all of it, so the kernel takes the staging plus its tiles. Staged in chunks of whole
 * column tiles (contiguous bytes of the [cout, k] weights) with the columns outer, the cores
 * start on the first chunk while the rest arrive: about the longer of the two (the staging
 * shares the DDR with the kernel's own traffic and with the `ahead` cycles of later kernels'
 * stagings the plan put under it) plus the first chunk's copy. Tries column widths down to
 * GT_STAGE_CHUNKS tiles at the depths that fit and keeps the chunked choice when its estimate is
 * below TILE_OVERLAP_GAIN of the whole staging's; sets *chunks (0: staged whole). */
static TileChoice tile_streamed(const TileSearch *ts, TileChoice best, int64_t budget, double ahead,
                                int *chunks) {
  const GsLowered *l = ts->l;
  const GsGeom *gm = ts->gm;
  double stage = (double)lower_op_weight_bytes(l->graph, ts->k->head) * l->arch->nclusters /
                 l->arch->ddr_bytes_per_cycle;
  double keep = fmax(best.cost, best.ddr + ahead) + stage;
  TileChoice pick = best;
  *chunks = 0;
  if (ts->k->pc > 1) return best; /* chunks are column tiles from column 0 (emit_stage_chunk) */
  for (int64_t tc = ceil_div64(ts->core_cols, 2); tc >= 1; tc = ceil_div64(tc, 2)) {
    if (gm->col_align > 1 && tc > gm->col_align) tc = ceil_div64(tc, gm->col_align) * gm->col_align;
    int64_t nct = ceil_div64(ts->core_cols, tc);
    if (nct > GT_STAGE_CHUNKS || !gm->split_cols || ts->k->row_reduce) break;
    for (int64_t tk = gm->k;; tk = ceil_div64(tk, 2)) {
      int64_t tr = most_rows(ts, tc, tk, 0, budget);
      if (tr >= 1) {
        TileChoice ch = tile_cost(ts, tr, tc, tk, 1, 0);
        double est = fmax(ch.cost, stage + ch.ddr + ahead) + stage / (double)nct;
        if (est < keep * TILE_OVERLAP_GAIN) {
          keep = est;
          pick = ch;
          *chunks = (int)nct;
        }
      }
      if (tk <= 1 || !gm->split_k || gm->col_strict) break;
    }
    if (tc <= 1 || tc <= gm->col_align) break; /* col_strict: never below */
  }
  return pick;
}

/* Weights stay resident when one tile holds all of the core's (conv, dense); a matmul's b and
 * an embedding's rows change with the rows. */
static int tile_wres(const TileSearch *ts, int64_t tc, int64_t tk) {
  GsOpKind hk = ts->l->graph->ops[ts->k->head].kind;
  return ceil_div64(ts->core_cols, tc) == 1 && ceil_div64(ts->gm->k, tk) == 1 && hk_conv_dense(hk);
}

/* Graphturbo full (tiles sized for overlap): the tiles again with the pipeline's fill (the
 * first step's loads) and drain (the last tile's tail and store) priced and the head and tail
 * units overlapped (tile_cost with overlap): the same tiles, half their rows, and every column
 * width and depth in either loop order at the most rows that fit. A kernel of one tile per
 * core runs its loads, compute and store one after another; several tiles pipeline them. A
 * candidate replaces the first choice only below TILE_OVERLAP_GAIN of its estimate. */
static TileChoice tile_overlapped(TileSearch *ts, TileChoice best, int64_t budget) {
  ts->overlap = 1;
  TileChoice keep = tile_cost(ts, best.tr, best.tc, best.tk, best.order, best.wres);
  double bar = keep.cost * TILE_OVERLAP_GAIN;
  int64_t tr = best.tr / 2;
  if (tr > ts->gm->seg_rows) tr = tr / ts->gm->seg_rows * ts->gm->seg_rows;
  if (tr >= 1) {
    TileChoice ch = tile_cost(ts, tr, best.tc, best.tk, best.order, best.wres);
    if (ch.cost < bar && ch.cost < keep.cost) keep = ch;
  }
  const GsGeom *gm = ts->gm;
  for (int64_t tk = gm->k;; tk = ceil_div64(tk, 2)) {
    for (int64_t tc = ts->core_cols;; tc = ceil_div64(tc, 2)) {
      if (tc < ts->core_cols && gm->col_align > 1 && tc > gm->col_align)
        tc = ceil_div64(tc, gm->col_align) * gm->col_align;
      int wres = tile_wres(ts, tc, tk);
      int64_t rows = most_rows(ts, tc, tk, wres, budget);
      for (int order = 0; rows >= 1 && order < 2; order++) {
        TileChoice ch = tile_cost(ts, rows, tc, tk, order, wres);
        if (ch.cost < bar && ch.cost < keep.cost) keep = ch;
      }
      if (tc <= 1 || !gm->split_cols || ts->k->row_reduce || tc <= gm->col_align) break; /* col_strict: never below */
    }
    if (tk <= 1 || !gm->split_k || gm->col_strict) break;
  }
  return keep;
}

/* The clusters kernel k has rows in: all of them split by samples, as many as the batch fills
 * (batch 1 on four clusters: one), or cluster 0 alone. Partitions are compared with it; the
 * tile search itself keeps counting every cluster's cores on the DDR when the kernel is split
 * over clusters (with it, batch 1's tiles moved more DDR bytes: BERT-128 under tvm on stcp920
 * took 12 % longer). */
static int busy_clusters(const GsLowered *l, const GsKernel *k) {
  if (!k->split_clusters) return 1;
  return (int)ceil_div64(l->graph->batch, cluster_share_samples(l));
}

/* The tile search's fixed part for kernel k at its partition (k->pr, k->pc), and whether its
 * weights go through the GB: staged once per cluster DDR -> GB when more than one core reads
 * them (more than one row part: the column parts read disjoint weights) and they fit the GB's
 * weight area (lower_gb_weight_area). */
static void tile_search_init(const GsLowered *l, GsKernel *k, const GsGeom *gm, TileSearch *ts) {
  const GsArch *a = l->arch;
  int64_t wb = lower_op_weight_bytes(l->graph, k->head), w0, w1, c0, c1;
  lower_gb_weight_area(l, &w0, &w1);
  k->w_via_gb = lower_op_kind(l->graph, k->head) == LK_GEMM && wb > 0 && a->dma_engines > 0 &&
                k->pr > 1 && wb <= w1 - w0;
  lower_core_cols(gm, k, 0, &c0, &c1); /* the first column part is the widest */
  *ts = (TileSearch){.l = l, .k = k, .gm = gm, .core_cols = c1 - c0};
  ts->core_rows = ceil_div64(cluster_rows(l, k, gm), k->pr);
  lower_kernel_operands(l->graph, k, &ts->ko);
  /* the resources every core of the kernel shares: the chip's DDR (all clusters' cores when
   * the kernel is split over clusters) and its cluster's GB ports */
  ts->ddr_cores = (double)k->pr * k->pc * (k->split_clusters ? a->nclusters : 1);
  ts->gb_bw = (double)a->gb_ports * a->gb_port_bytes_per_cycle;
  ts->noc = a->noc_link_bytes_per_cycle > 0 ? a->noc_link_bytes_per_cycle : 1;
  ts->lat0 = (double)(a->dma_latency_cycles + a->noc_latency_cycles) +
             a->core_kinds[k->core_kind].lb_latency_cycles;
}

/* The column width the search tries after tc: half of it; below one alignment unit of a
 * grouped conv (col_strict: tried only while no tile fits) the next divisor of the group's
 * width, so a tile never straddles two groups and reads only its group's input channels. */
static int64_t next_cols(const GsGeom *gm, int64_t tc) {
  int64_t h = ceil_div64(tc, 2);
  if (!gm->col_strict || h >= gm->col_align) return h;
  while (h > 1 && gm->col_align % h) h--;
  return h;
}

/* A tile of tc columns and k depth tk is legal: a grouped conv's k is cut only inside one
 * group (whole groups read all of each group's input channels). */
static int tile_in_groups(const GsGeom *gm, int64_t tc, int64_t tk) {
  return !gm->col_strict || tk >= gm->k || tc <= gm->col_align;
}

/* Tiles at the kernel's partition: every k depth and column width, for each the most rows
 * that fit, the shortest estimated time kept; then graphturbo full's overlap and chunked
 * staging (*chunks). tr < 1: not even one row fits. */
static TileChoice search_tiles(TileSearch *ts, int64_t budget, const double *ahead, int *chunks) {
  const GsLowered *l = ts->l;
  const GsKernel *k = ts->k;
  const GsGeom *gm = ts->gm;
  TileChoice best = {0, 0, 0, 0, 0, -1, 0, 0};
  for (int64_t tk = gm->k;; tk = ceil_div64(tk, 2)) {
    for (int64_t tc = ts->core_cols;; tc = next_cols(gm, tc)) {
      if (tc < ts->core_cols && gm->col_align > 1 && tc > gm->col_align)
        tc = ceil_div64(tc, gm->col_align) * gm->col_align;
      int wres = tile_wres(ts, tc, tk);
      int64_t tr = tile_in_groups(gm, tc, tk) ? most_rows(ts, tc, tk, wres, budget) : 0;
      for (int order = 0; tr >= 1 && order < 2; order++) {
        TileChoice ch = tile_cost(ts, tr, tc, tk, order, wres);
        if (best.cost < 0 || ch.cost < best.cost) best = ch;
      }
      if (tc <= 1 || !gm->split_cols || k->row_reduce || (tc <= gm->col_align && best.tr >= 1)) break;
    }
    /* a grouped conv cuts k only when no tile of whole k fits */
    if (tk <= 1 || !gm->split_k || (gm->col_strict && best.tr >= 1)) break;
  }
  if (best.tr >= 1 && l->opt.sched == SCHED_GRAPHTURBO && l->opt.gt_level == GTL_FULL)
    best = tile_overlapped(ts, best, budget);
  *chunks = 0;
  if (best.tr >= 1 && ahead) best = tile_streamed(ts, best, budget, *ahead, chunks);
  return best;
}

/* The cycles a partition's weight staging adds before its tiles start (tvm, astitch: the cores
 * wait for the whole copy, every cluster's at once on the DDR); 0 when the weights are not
 * staged. Only partitions are compared by it: it is the same for every tile of one. */
static double staging_cycles(const GsLowered *l, const GsKernel *k) {
  if (!k->w_via_gb) return 0;
  return (double)lower_op_weight_bytes(l->graph, k->head) * busy_clusters(l, k) /
         l->arch->ddr_bytes_per_cycle;
}

/* The partition of kernel k (k->pr, k->pc, k->w_via_gb) and its best tiles (*chunks: its
 * weights' staging chunks): for every column split worth pricing (column_splits; only the
 * kernel's own pc when `fixed`) the best tiles, a split of the columns kept when its estimate is
 * below TILE_OVERLAP_GAIN of the rows-only partition's. Partitions are compared by their tiles'
 * estimate with the pipeline's fill and drain priced (tile_cost with overlap: with few rows a
 * core has few tiles, and one tile's loads, compute and store run one after another) plus the
 * weight staging the cores wait for. tr < 1: no tile fits (the partition is rows only). */
static TileChoice choose_partition(GsLowered *l, GsKernel *k, const GsGeom *gm, int fixed,
                                   const double *ahead, int *chunks, int w) {
  int64_t budget = lower_kernel_tile_budget(l, k);
  int pcs[16], npc = fixed ? 1 : column_splits(l, k, gm, pcs), bpc = 1, ch_chunks = 0;
  if (fixed) pcs[0] = k->pc > 0 ? k->pc : 1;
  TileChoice best = {0, 0, 0, 0, 0, -1, 0, 0}, rows_only = best;
  double bcost = 0;
  TileSearch ts;
  *chunks = 0;
  if (!l->tile_memo[w] && !(l->tile_memo[w] = calloc(1, sizeof *l->tile_memo[w])))
    die("out of memory");
  for (int i = 0; i < npc; i++) {
    partition(l, k, gm, pcs[i]);
    tile_search_init(l, k, gm, &ts);
    ts.memo = l->tile_memo[w];
    ts.memo->gen++; /* a new search: k's partition and w_via_gb are set */
    TileChoice ch = search_tiles(&ts, budget, ahead, &ch_chunks);
    if (ch.tr < 1) continue;
    TileChoice cmp = ch;
    if (npc > 1) { /* partitions compared with the pipeline's fill and drain priced, the DDR
                      shared by the clusters that have rows */
      ts.overlap = 1;
      ts.ddr_cores = (double)k->pr * k->pc * busy_clusters(l, k);
      cmp = tile_cost(&ts, ch.tr, ch.tc, ch.tk, ch.order, ch.wres);
      cmp.cost += staging_cycles(l, k);
    }
    if (pcs[i] == 1) rows_only = cmp;
    int beats = best.tr < 1 || cmp.cost < bcost;
    if (pcs[i] > 1 && rows_only.tr >= 1)
      beats = beats && cmp.cost < rows_only.cost * TILE_OVERLAP_GAIN;
    if (beats) {
      best = ch;
      bcost = cmp.cost;
      bpc = pcs[i];
      *chunks = ch_chunks;
    }
  }
  partition(l, k, gm, best.tr >= 1 ? bpc : pcs[0]);
  tile_search_init(l, k, gm, &ts);
  return best;
}

int lower_choose_partition(GsLowered *l, GsKernel *k) {
  GsGeom gm;
  lower_fill_geom(l->graph, k->head, l->arch, &gm);
  int chunks;
  choose_partition(l, k, &gm, 0, NULL, &chunks, 0);
  return k->pc;
}

/* Packing a conv's taps into k can only pay when the unit's time for it is shorter: compared
 * on one full-width tile of the layer's output rows (an array whose rows or cube depth exceed the
 * input channels idles in every per-tap gemm; a cube one element deep never gains). */
static int packing_may_pay(const GsLowered *l, const GsKernel *k, const GsGeom *gm) {
  if (k->unit_head < Q_UNIT0 || !lower_conv_packable(l->graph, k->head)) return 0;
  const GsUnitKind *u = lower_kernel_unit(l->arch, k, k->unit_head);
  GsTile t = {0, min64(gm->rows, 64), 0, gm->cols, 0, gm->k};
  int64_t c[2] = {0, 0};
  for (int packed = 0; packed < 2; packed++) {
    GsComputeStep cs[GS_MAX_STEPS];
    int n = lower_tile_compute(l->graph, k->head, &t, packed, cs, GS_MAX_STEPS);
    for (int i = 0; i < n; i++)
      if (cs[i].is_gemm) c[packed] += timing_matrix(u, cs[i].m, cs[i].n, cs[i].k, k->cdt_head);
  }
  return c[1] < c[0];
}

/* The partition and tiles of kernel k with its conv's form (k->packed_k): its taps packed into
 * k when that may pay and its tiles' estimate is lower — fewer, fuller folds against the im2col
 * form's LB room, which leaves fewer rows per tile — or equal with less compute (a kernel bound
 * by its loads still runs its gemms between them); else one gemm per tap. */
static TileChoice choose_form(GsLowered *l, GsKernel *k, const GsGeom *gm, const double *ahead,
                              int w) {
  int fixed = lower_keeps_slices(l);
  k->packed_k = 0;
  TileChoice taps = choose_partition(l, k, gm, fixed, ahead, &k->w_chunks, w);
  if (!packing_may_pay(l, k, gm)) return taps;
  GsKernel per_tap = *k; /* the partition and staging choose_partition left: kept if packing loses */
  k->packed_k = 1;
  TileChoice packed = choose_partition(l, k, gm, fixed, ahead, &k->w_chunks, w);
  int better = taps.tr < 1 || packed.cost < taps.cost ||
               (packed.cost <= taps.cost * (1 + 1e-9) && packed.compute < taps.compute);
  if (packed.tr >= 1 && better) return packed;
  *k = per_tap;
  return taps;
}

/* A kernel's tiling is asked for again with the same inputs: graphturbo tiles the whole plan
 * once per LB share it tries for slices (place_and_tile, lower_gt.c), and most kernels' budgets
 * and operand levels do not move between tries (four tilings of every kernel on stcp920). So each answer is kept under a key of everything the search
 * reads besides the graph's ops and the arch, which a lowering does not change: the bound batch
 * (shapes), the GB split, the cores its kind may use, whether slices fix the partition (then
 * that partition), the kernel's ops, units, dtypes, samples, budget, the staging ahead, and the
 * level of every tensor its ops read or write. A key is compared whole, not by its hash. */
typedef struct {
  uint64_t hash;
  size_t at, n; /* its key: words [at, at + n) of TilingMemo.keys */
  int pr, pc, w_via_gb, packed_k, w_chunks, w_resident, cols_outer;
  int64_t tr, tc, tk;
  double est_ddr, est_compute;
} TilingAnswer;
struct TilingMemo {
  int64_t *keys, *key; /* the keys, one after another; the key being built */
  size_t nkeys, capkeys, nkey, capkey;
  TilingAnswer *a;
  size_t n, cap;
  int32_t *slot; /* open addressing by hash: an answer's index, -1 empty; at most half full */
  size_t nslots;
  int64_t hits;
};

static void key_put(struct TilingMemo *m, int64_t v) {
  if (m->nkey == m->capkey) {
    m->capkey = m->capkey ? 2 * m->capkey : 64;
    if (!(m->key = realloc(m->key, m->capkey * sizeof *m->key))) die("out of memory");
  }
  m->key[m->nkey++] = v;
}

/* Builds k's key into m->key and returns its hash. */
static uint64_t tiling_key(const GsLowered *l, const GsKernel *k, const double *ahead,
                           struct TilingMemo *m) {
  const GsGraph *g = l->graph;
  int64_t ah = 0;
  if (ahead) memcpy(&ah, ahead, sizeof ah);
  int64_t fixed[] = {g->batch, l->gb_tensor_bytes, l->active_cores[k->core_kind],
                     lower_keeps_slices(l) ? k->pc : -1, ahead != NULL, ah, k->budget, k->s0,
                     k->s1, k->split_clusters, k->row_reduce, k->core_kind, k->unit_head,
                     k->unit_tail, k->cdt_head, k->cdt_tail, l->place != NULL, k->nops};
  m->nkey = 0;
  for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) key_put(m, fixed[i]);
  for (int i = 0; i < k->nops; i++) {
    const GsOp *o = &g->ops[k->ops[i]];
    key_put(m, k->ops[i]);
    for (int j = 0; l->place && j < o->nin; j++)
      key_put(m, o->in[j] >= 0 ? l->place[o->in[j]].level : -2);
    for (int j = 0; l->place && j < o->nout; j++) key_put(m, l->place[o->out[j]].level);
  }
  uint64_t h = 0xcbf29ce484222325u;
  for (size_t i = 0; i < m->nkey; i++) h = (h ^ (uint64_t)m->key[i]) * 0x100000001b3u;
  return h;
}

/* The slot of the answer under hash h whose key is the one just built, else the empty slot
 * where it would go (nslots > 0). */
static size_t tiling_slot(const struct TilingMemo *m, uint64_t h) {
  size_t i = (size_t)h & (m->nslots - 1);
  for (; m->slot[i] >= 0; i = (i + 1) & (m->nslots - 1)) {
    const TilingAnswer *a = &m->a[m->slot[i]];
    if (a->hash == h && a->n == m->nkey &&
        !memcmp(m->keys + a->at, m->key, m->nkey * sizeof *m->key))
      break;
  }
  return i;
}

/* The answer kept for the key just built, or NULL. */
static const TilingAnswer *tiling_find(const struct TilingMemo *m, uint64_t h) {
  if (!m->nslots) return NULL;
  int32_t at = m->slot[tiling_slot(m, h)];
  return at >= 0 ? &m->a[at] : NULL;
}

/* Room for one more answer in the index: doubled (and every answer put again) at half full. */
static void tiling_index_grow(struct TilingMemo *m) {
  if (2 * (m->n + 1) <= m->nslots) return;
  free(m->slot);
  m->nslots = m->nslots ? 2 * m->nslots : 256;
  if (!(m->slot = malloc(m->nslots * sizeof *m->slot))) die("out of memory");
  memset(m->slot, -1, m->nslots * sizeof *m->slot);
  for (size_t i = 0; i < m->n; i++) {
    size_t j = (size_t)m->a[i].hash & (m->nslots - 1);
    while (m->slot[j] >= 0) j = (j + 1) & (m->nslots - 1);
    m->slot[j] = (int32_t)i;
  }
}

/* Keeps k's tiling under the key just built. */
static void tiling_keep(struct TilingMemo *m, uint64_t h, const GsKernel *k) {
  if (m->nkeys + m->nkey > m->capkeys) {
    m->capkeys = 2 * (m->nkeys + m->nkey);
    if (!(m->keys = realloc(m->keys, m->capkeys * sizeof *m->keys))) die("out of memory");
  }
  if (m->n == m->cap) {
    m->cap = m->cap ? 2 * m->cap : 64;
    if (!(m->a = realloc(m->a, m->cap * sizeof *m->a))) die("out of memory");
  }
  tiling_index_grow(m);
  memcpy(m->keys + m->nkeys, m->key, m->nkey * sizeof *m->key);
  m->slot[tiling_slot(m, h)] = (int32_t)m->n;
  m->a[m->n++] = (TilingAnswer){h, m->nkeys, m->nkey, k->pr, k->pc, k->w_via_gb, k->packed_k,
                                k->w_chunks, k->w_resident, k->cols_outer, k->tr, k->tc, k->tk,
                                k->est_ddr_cycles, k->est_compute_cycles};
  m->nkeys += m->nkey;
}

static void tiling_take(GsKernel *k, const TilingAnswer *a) {
  k->pr = a->pr, k->pc = a->pc, k->w_via_gb = a->w_via_gb, k->packed_k = a->packed_k;
  k->w_chunks = a->w_chunks, k->w_resident = a->w_resident, k->cols_outer = a->cols_outer;
  k->tr = a->tr, k->tc = a->tc, k->tk = a->tk;
  k->est_ddr_cycles = a->est_ddr, k->est_compute_cycles = a->est_compute;
}

int64_t lower_tiling_memo_hits(const GsLowered *l) {
  int64_t hits = 0;
  for (int w = 0; w < LOWER_TILING_THREADS; w++)
    hits += l->tiling_memo[w] ? l->tiling_memo[w]->hits : 0;
  return hits;
}

void lower_tiling_memo_free(GsLowered *l) {
  for (int w = 0; w < LOWER_TILING_THREADS; w++) {
    struct TilingMemo *m = l->tiling_memo[w];
    if (m) {
      free(m->keys);
      free(m->key);
      free(m->a);
      free(m->slot);
      free(m);
    }
    l->tiling_memo[w] = NULL;
    free(l->tile_memo[w]);
    l->tile_memo[w] = NULL;
  }
}

/* The memo that holds the key hashing to h: the same for every kernel with that key whatever
 * the threads, so that its lookups come in the kernels' order and a memo hit is the same hit on
 * one thread or two. On two threads, memo w's kernels are thread w's (tile_kernels). */
static int key_memo(uint64_t h) {
  return (int)(((h ^ (h >> 29)) * 0x9e3779b97f4a7c15u >> 32) % LOWER_TILING_THREADS);
}

static struct TilingMemo *tiling_memo(GsLowered *l, int w) {
  if (!l->tiling_memo[w] && !(l->tiling_memo[w] = calloc(1, sizeof *l->tiling_memo[w])))
    die("out of memory");
  return l->tiling_memo[w];
}

/* The partition and tiles of a gemm/vector kernel (choose_form; graphturbo keeps the
 * partition its slices were made for, lower_gt.c), by tiling thread w. */
static int fill_tiling_gemmvec(GsLowered *l, GsKernel *k, const double *ahead, GsDiag *d, int w) {
  const GsArch *a = l->arch;
  const GsGraph *g = l->graph;
  struct TilingMemo *own = tiling_memo(l, w);
  uint64_t h = tiling_key(l, k, ahead, own); /* built in the thread's own memo */
  struct TilingMemo *m = tiling_memo(l, key_memo(h));
  if (m != own) { /* one thread: the key into the memo that holds it */
    m->nkey = 0;
    for (size_t i = 0; i < own->nkey; i++) key_put(m, own->key[i]);
  }
  const TilingAnswer *kept = l->opt.tiling_afresh ? NULL : tiling_find(m, h);
  if (kept) {
    tiling_take(k, kept);
    m->hits++;
    return 0;
  }
  GsGeom gm;
  lower_fill_geom(g, k->head, a, &gm);
  TileChoice best = choose_form(l, k, &gm, ahead, w);
  if (best.tr < 1) {
    const GsOp *o = &g->ops[k->head];
    TileSearch ts;
    tile_search_init(l, k, &gm, &ts);
    TileBytes tb = tile_bytes(l, k, &ts.ko, &gm, 1,
                              gm.split_cols && !k->row_reduce ? 1 : ts.core_cols,
                              gm.split_k ? 1 : gm.k, 0);
    diag_error(d, g->file ? g->file : g->name, o->line, o->col, NULL,
               "kernel '%s' (%s) cannot be tiled: its smallest double-buffered tile needs %lld "
               "bytes, a '%s' core has %lld for tiles",
               k->name, graph_opkind_name(o->kind), (long long)tile_need(&tb, 0),
               a->core_kinds[k->core_kind].name, (long long)lower_kernel_tile_budget(l, k));
    return -1;
  }
  k->tr = best.tr;
  k->tc = best.tc;
  k->tk = best.tk;
  k->w_resident = best.wres;
  k->cols_outer = best.order;
  k->est_ddr_cycles = best.ddr;
  k->est_compute_cycles = best.compute;
  tiling_keep(m, h, k);
  return 0;
}

static int fill_tiling_copy(GsLowered *l, GsKernel *k) {
  k->pr = kernel_cores_max(l, k);
  k->pc = 1;
  k->tr = k->tc = k->tk = 1; /* copy kernels size their chunks at emission (emit.c) */
  return 0;
}

/* Copies and single-row gathers: DMA only, no tiles of their own. */
static int is_copy_kernel(const GsLowered *l, const GsKernel *k) {
  GsLowerKind lk = lower_op_kind(l->graph, k->head);
  return lk == LK_COPY || (lk == LK_GATHER && l->graph->ops[k->head].at.bag <= 1);
}

/* One tiling thread's share of a list of kernels: kis[i] with the staging ahead aheads[i] (NULL:
 * none) where owner[i] is w (owner NULL: all of them). */
typedef struct {
  GsLowered *l;
  const int *kis;
  const double *aheads;
  const unsigned char *owner;
  int n, w;
  GsDiag *d;
  int failed; /* the first i whose kernel could not be tiled, n: none */
} TilingShare;

static void *tile_share(void *arg) {
  TilingShare *t = arg;
  t->failed = t->n;
  for (int i = 0; i < t->n; i++) {
    if (t->owner && t->owner[i] != t->w) continue;
    GsKernel *k = &t->l->kernels[t->kis[i]];
    const double *ahead = t->aheads ? &t->aheads[i] : NULL;
    int rc = is_copy_kernel(t->l, k) ? fill_tiling_copy(t->l, k)
                                     : fill_tiling_gemmvec(t->l, k, ahead, t->d, t->w);
    if (rc < 0) {
      t->failed = i;
      break;
    }
  }
  return NULL;
}

/* Which thread tiles each of kernels kis[0..n): its key's (key_memo), the copy kernels thread
 * 0. Found before either starts, so that a thread reads and writes only its own kernels. */
static unsigned char *tiling_owners(GsLowered *l, const int *kis, const double *aheads, int n) {
  unsigned char *owner = malloc((size_t)n + 1);
  if (!owner) die("out of memory");
  for (int i = 0; i < n; i++) {
    const GsKernel *k = &l->kernels[kis[i]];
    owner[i] = is_copy_kernel(l, k) ? 0
               : (unsigned char)key_memo(tiling_key(l, k, aheads ? &aheads[i] : NULL,
                                                    tiling_memo(l, 0)));
  }
  return owner;
}

/* Tiles kernels kis[0..n): on two threads when there are at least LOWER_TILING_SPLIT_MIN and
 * the process may use two cores (GsLowerOptions.tiling_threads), each tiling the kernels whose
 * memo keys are its own (what a kernel's tiling reads is its key: it does not depend on the
 * other kernels' tilings, nor on which thread finds it). Graphturbo tiles a plan five times
 * (once per LB share it tries for slices, then with chunked staging) while the second core
 * waits for the first instruction to check: about a tenth of scheduling BERT-128 and
 * MobileNet-v2 on stcp920 (docs/speed.md, "Scheduling"). A kernel that cannot be tiled is
 * reported as one thread reports it: the first in the list, tiled again alone for its
 * message. */
static int tile_kernels(GsLowered *l, const int *kis, const double *aheads, int n, GsDiag *d) {
  int asked = l->opt.tiling_threads;
  if (n < LOWER_TILING_SPLIT_MIN || asked == 1 || (asked != 2 && !util_two_cores())) {
    TilingShare one = {l, kis, aheads, NULL, n, 0, d, n};
    tile_share(&one);
    return one.failed == n ? 0 : -1;
  }
  GsDiag quiet;
  diag_init(&quiet);
  quiet.nerrors = quiet.max_errors;
  unsigned char *owner = tiling_owners(l, kis, aheads, n);
  _Static_assert(LOWER_TILING_THREADS == 2, "tile_kernels starts one thread");
  TilingShare t[2] = {{l, kis, aheads, owner, n, 0, &quiet, n},
                      {l, kis, aheads, owner, n, 1, &quiet, n}};
  pthread_t th;
  int started = pthread_create(&th, NULL, tile_share, &t[1]) == 0;
  tile_share(&t[0]);
  if (started) pthread_join(th, NULL);
  else tile_share(&t[1]);
  free(owner);
  int failed = t[1].failed < t[0].failed ? t[1].failed : t[0].failed;
  if (failed == n) return 0;
  TilingShare again = {l, kis + failed, aheads ? aheads + failed : NULL, NULL, 1, 0, d, 1};
  tile_share(&again);
  gs_assert(again.failed == 0);
  return -1;
}

/* requires: placement; fills each kernel's partition and tile sizes. */
int lower_fill_tiling(GsLowered *l, GsDiag *d) {
  int *kis = malloc(sizeof *kis * (size_t)(l->nkernels + 1));
  if (!kis) die("out of memory");
  for (int ki = 0; ki < l->nkernels; ki++) {
    GsKernel *k = &l->kernels[ki];
    k->w_gb_off = -1; /* graphturbo full plans them after tiling (lower_gt.c) */
    k->w_from = ki;
    kis[ki] = ki;
  }
  int rc = tile_kernels(l, kis, NULL, l->nkernels, d);
  free(kis);
  return rc;
}

/* Graphturbo full, after the GB plan: the kernels whose weights are staged at their own start
 * (not during an earlier kernel) are tiled again with chunked staging allowed (tile_streamed),
 * their DDR shared with the stagings of later kernels the plan put under them; the ones staged
 * ahead keep their tiles, as nothing waits for their staging. Which kernels, and the staging
 * under each, are read before any is tiled again, as one pass in order read them: a kernel's own
 * state and the later kernels', none of which that pass had tiled again yet (tiling a kernel
 * writes that kernel alone). */
void lower_fill_tiling_streams(GsLowered *l) {
  const GsArch *a = l->arch;
  int *kis = malloc(sizeof *kis * (size_t)(l->nkernels + 1)), n = 0;
  double *aheads = malloc(sizeof *aheads * (size_t)(l->nkernels + 1));
  if (!kis || !aheads) die("out of memory");
  for (int ki = 0; ki < l->nkernels; ki++) {
    GsKernel *k = &l->kernels[ki];
    GsOpKind hk = l->graph->ops[k->head].kind;
    if (!k->w_via_gb || k->w_from != ki || !hk_conv_dense(hk)) continue;
    double ahead = 0;
    for (int j = ki + 1; j <= ki + GT_AHEAD_MAX && j < l->nkernels; j++)
      if (l->kernels[j].w_via_gb && l->kernels[j].w_from == ki)
        ahead += (double)lower_op_weight_bytes(l->graph, l->kernels[j].head) * a->nclusters /
                 a->ddr_bytes_per_cycle;
    kis[n] = ki;
    aheads[n++] = ahead;
  }
  GsDiag quiet; /* each was tiled before: this cannot fail */
  diag_init(&quiet);
  quiet.nerrors = quiet.max_errors;
  gs_assert(tile_kernels(l, kis, aheads, n, &quiet) == 0);
  free(kis);
  free(aheads);
}

int64_t lower_tile_need(const GsLowered *l, const GsKernel *k) {
  if (is_copy_kernel(l, k)) return 0;
  GsGeom gm;
  lower_fill_geom(l->graph, k->head, l->arch, &gm);
  GsKernelOperands ko;
  lower_kernel_operands(l->graph, k, &ko);
  TileBytes tb = tile_bytes(l, k, &ko, &gm, k->tr, k->tc, k->tk, 0);
  return tile_need(&tb, k->w_resident);
}
